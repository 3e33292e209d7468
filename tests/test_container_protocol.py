"""Every format's reader implements the container protocol (``bloscpack.containers.base``):
the same attributes and chunk reads, checked over every format with one parametrized test
each, against numpy and against python-blosc2's own chunk decoding."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import blosc2
import numpy as np
import pytest

import bloscpack
from bloscpack.containers import registry
from bloscpack.containers.base import ArrayDescription
from bloscpack.errors import ArgumentError, BloscpackError

ROOT = Path(__file__).resolve().parents[1]
ARRAY = np.arange(1_200_000, dtype="<f8").reshape(3000, 400)
#: Formats whose chunks hold the array's bytes in order (b2nd chunks are padded boxes).
FLAT = ["blp", "b2frame", "sframe", "bcolz"]


def written(tmp_path: Path, fmt: str) -> Path:
    path = tmp_path / f"a{registry.FORMATS[fmt].extension}"
    options = {"chunks": (700, 240), "blocks": (100, 40)} if fmt == "b2nd" else {}
    bloscpack.save(ARRAY, path, **options)
    return path


def opened(path: Path, **options):
    return registry.open_reader(str(path), registry.detect(path), **options)


@pytest.mark.parametrize("fmt", FLAT)
def test_flat_chunks_hold_the_array_bytes(tmp_path, fmt):
    with opened(written(tmp_path, fmt)) as reader:
        assert reader.format == fmt
        assert (reader.description.dtype, reader.description.shape) == (ARRAY.dtype, ARRAY.shape)
        assert reader.description.order == "C"
        assert reader.sizes.total == ARRAY.nbytes and reader.nchunks > 1
        assert reader.grid is None and reader.columns is None
        parts = [bytes(reader.read_chunk(i)) for i in range(reader.nchunks)]
        sizes = [reader.sizes.of(i, reader.nchunks) for i in range(reader.nchunks)]
        assert [len(p) for p in parts] == sizes
        assert b"".join(parts) == ARRAY.tobytes()
        last = reader.nchunks - 1
        out = np.zeros(sizes[-1], np.uint8)
        assert reader.read_chunk(last, out) is out and out.tobytes() == parts[-1]
        assert reader.metadata() is not None


def test_b2nd_chunks_are_what_python_blosc2_decodes(tmp_path):
    path = written(tmp_path, "b2nd")
    theirs = blosc2.open(str(path))
    with opened(path) as reader:
        assert reader.format == "b2nd"
        assert reader.description == ArrayDescription(
            ARRAY.dtype, ARRAY.shape, "C", (700, 240), (100, 40)
        )
        assert reader.grid is not None and reader.nchunks == theirs.schunk.nchunks == 10
        for i in range(reader.nchunks):
            assert bytes(reader.read_chunk(i)) == theirs.schunk.decompress_chunk(i)
            assert bytes(reader.stored_chunk(i)) == theirs.schunk.get_chunk(i)


def test_a_chunk_file_is_a_container_of_one_chunk(tmp_path):
    path = tmp_path / "one.chunk"
    path.write_bytes(blosc2.compress2(ARRAY[:25].tobytes(), typesize=8))
    with opened(path) as reader:
        assert (reader.format, reader.nchunks, reader.sizes.total) == ("chunk", 1, 80_000)
        assert reader.description == ArrayDescription(np.dtype(np.uint8), (80_000,))
        assert bytes(reader.read_chunk(0)) == ARRAY[:25].tobytes()
        assert reader.metadata() is None


def test_a_table_reads_column_by_column(tmp_path):
    table = np.zeros(5000, dtype=[("a", "<i4"), ("b", "<f8", (2,))])
    table["a"] = np.arange(5000)
    table["b"][:, 1] = 0.5
    path = tmp_path / "t.bcolz"
    bloscpack.save(table, path)
    with opened(path) as reader:
        assert reader.columns == ["a", "b"] and reader.grid is None
        column = reader.column("b")
        assert column.description.shape == (5000, 2) and column.description.dtype == "<f8"
        data = b"".join(bytes(column.read_chunk(i)) for i in range(column.nchunks))
        assert data == table["b"].tobytes()
    with opened(path, columns=["b"]) as reader:
        assert reader.columns == ["b"]
    with pytest.raises(ArgumentError, match="no column 'c'; columns: a, b"):
        opened(path, columns=["c"])


@pytest.mark.parametrize("fmt", [*FLAT, "b2nd"])
def test_columns_only_for_tables(tmp_path, fmt):
    path = written(tmp_path, fmt)
    with pytest.raises(ArgumentError, match="columns"):
        opened(path, columns=["a"])


@pytest.mark.parametrize("fmt", [*FLAT, "b2nd"])
def test_one_reader_serves_many_threads(tmp_path, fmt):
    with opened(written(tmp_path, fmt)) as reader:
        expected = [bytes(reader.read_chunk(i)) for i in range(reader.nchunks)]
        failures: list[str] = []

        def work(seed: int) -> None:
            order = np.random.default_rng(seed).integers(0, reader.nchunks, 40)
            for i in order:
                if bytes(reader.read_chunk(int(i))) != expected[i]:
                    failures.append(f"chunk {i}")

        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []


@pytest.mark.parametrize("fmt", FLAT)
def test_a_chunk_of_the_wrong_size_is_refused(tmp_path, fmt, monkeypatch):
    with opened(written(tmp_path, fmt)) as reader:
        monkeypatch.setattr(reader, "sizes", type(reader.sizes).listed(
            [reader.sizes.of(i, reader.nchunks) + 8 for i in range(reader.nchunks)]
        ))  # fmt: skip
        with pytest.raises(BloscpackError, match="chunk 0 holds .* bytes, the layout needs"):
            reader.read_chunk(0)


#: The modules above the formats: the lazy arrays, conversions, the streams, the integrations
#: and the command line (but ``cli/options.py``, which takes the ``.blp`` option defaults and
#: checksums until one table holds every format's options: issue 22).
ABOVE_THE_FORMATS = [
    "array.py", "convert.py", "dispatch.py", "streaming.py",
    *(f"{p.parent.name}/{p.name}" for p in sorted((ROOT / "src" / "bloscpack").glob("*/*.py"))
      if p.parent.name in ("cli", "integrations") and p.name != "options.py"),
]  # fmt: skip


@pytest.mark.parametrize("module", ABOVE_THE_FORMATS)
def test_above_the_formats_no_format_is_named(module):
    """The lazy arrays and conversions work through the protocol and the registry: no format
    name, no format module."""
    tree = ast.parse((ROOT / "src" / "bloscpack" / module).read_text())
    names = {*registry.FORMATS, "frame", "chunk"}
    allowed = (
        "containers", "containers.base", "containers.options", "containers.registry",
        "containers.target",
    )  # fmt: skip
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            assert node.value not in names, f"{module}:{node.lineno} names {node.value!r}"
        if isinstance(node, ast.ImportFrom) and node.module:
            assert not node.module.startswith("containers") or node.module in allowed, (
                f"{module}:{node.lineno} imports {node.module}"
            )
