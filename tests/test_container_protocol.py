"""Every format's reader implements the container protocol (``bloscpack.containers.base``):
the same attributes and chunk reads, checked over every format with one parametrized test
each, against numpy and against python-blosc2's own chunk decoding."""

from __future__ import annotations

import ast
import hashlib
import threading
from pathlib import Path

import blosc2
import numpy as np
import pytest
from conftest import DATA, load_manifest

import bloscpack
from bloscpack.containers import registry
from bloscpack.containers.base import ArrayDescription, GridReader, TableReader
from bloscpack.errors import ArgumentError, BloscpackError

ROOT = Path(__file__).resolve().parents[1]
ARRAY = np.arange(1_200_000, dtype="<f8").reshape(3000, 400)
#: Formats whose chunks hold the array's bytes in order (b2nd chunks are padded boxes).
FLAT = ["blp", "b2frame", "sframe", "bcolz"]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
        assert not isinstance(reader, (GridReader, TableReader))
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
        assert isinstance(reader, GridReader) and reader.nchunks == theirs.schunk.nchunks == 10
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
        assert isinstance(reader, TableReader) and reader.columns == ["a", "b"]
        column = reader.column("b")
        assert column.description.shape == (5000, 2) and column.description.dtype == "<f8"
        data = b"".join(bytes(column.read_chunk(i)) for i in range(column.nchunks))
        assert data == table["b"].tobytes()
    with opened(path, columns=["b"]) as reader:
        assert reader.columns == ["b"]
    with pytest.raises(ArgumentError, match="no column 'c'; columns: a, b"):
        opened(path, columns=["c"])


CTABLES = [case for case in load_manifest("bcolz")["cases"] if case["kind"] == "ctable"]


@pytest.mark.parametrize("case", CTABLES, ids=lambda case: case["name"])
def test_a_ctable_has_no_chunks_of_its_own_its_columns_do(case):
    """A ctable's columns may have chunks of different lengths, so the table is no sequence
    of chunks: its reader is a TableReader, not a ContainerReader, and each column's reader
    is a container whose chunks hold that column's bytes."""
    with opened(DATA / "bcolz" / case["name"]) as reader:
        assert isinstance(reader, TableReader) and not isinstance(reader, GridReader)
        assert [hasattr(reader, name) for name in ("nchunks", "sizes", "stored_chunk")] == [
            False, False, False]  # fmt: skip
        assert reader.columns == [column["name"] for column in case["columns"]]
        assert reader.description.shape == tuple(case["shape"])
        rows = reader.read_rows(0, case["shape"][0])
        assert sha256(rows.tobytes()) == case["sha256"]
        for name, expected in zip(reader.columns, case["columns"], strict=True):
            with reader.column(name) as column:
                assert column.sizes.total == rows[name].nbytes
                parts = [bytes(column.read_chunk(i)) for i in range(column.nchunks)]
                assert sha256(b"".join(parts)) == expected["sha256"]
                for i, part in enumerate(parts):  # (a leftover chunk may hold more rows)
                    stored = bytes(column.stored_chunk(i))
                    column.release()
                    assert blosc2.decompress(stored)[: len(part)] == part


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


#: The modules above the formats: the lazy arrays and what they read from (their inputs and
#: stores), conversions, the streams, the integrations and the command line.
ABOVE_THE_FORMATS = [
    "array.py", "inputs.py", "convert.py", "dispatch.py", "streaming.py",
    *(f"{p.parent.name}/{p.name}" for p in sorted((ROOT / "src" / "bloscpack").glob("*/*.py"))
      if p.parent.name in ("cli", "integrations")),
    *(f"containers/stores/{p.name}"
      for p in sorted((ROOT / "src" / "bloscpack" / "containers" / "stores").glob("*.py"))),
]  # fmt: skip


STORES = ("base", "flat", "grid", "table")


@pytest.mark.parametrize("module", ABOVE_THE_FORMATS)
def test_above_the_formats_no_format_is_named(module):
    """The lazy arrays and conversions work through the protocol and the registry: no format
    name, no format module."""
    tree = ast.parse((ROOT / "src" / "bloscpack" / module).read_text())
    names = {*registry.FORMATS, "frame", "chunk"}
    allowed = (
        "containers", "containers.base", "containers.options", "containers.registry",
        "containers.target", *(f"containers.stores.{kind}" for kind in STORES),
    )  # fmt: skip
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            assert node.value not in names, f"{module}:{node.lineno} names {node.value!r}"
        if isinstance(node, ast.ImportFrom) and node.module:
            assert not node.module.startswith("containers") or node.module in allowed, (
                f"{module}:{node.lineno} imports {node.module}"
            )
