"""Every way of writing a new ``.blp`` file goes through one writer: ``save`` (with and
without metadata), ``convert`` from another format, ``compress_file`` (of a ``.npy`` file and
of raw bytes) and the dask writer give the same header, metadata section and chunks for the
same array and options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import bloscpack
from bloscpack.containers.bloscpack.reader import BloscpackReader
from bloscpack.dispatch import compress_file

da = pytest.importorskip("dask.array")

ARRAY = np.cumsum(np.random.default_rng(7).normal(size=100_000))
#: Pinned so that the chunks never depend on the machine: a Blosc1 chunk of one block (its
#: bytes then do not depend on the number of threads either).
OPTIONS: dict[str, Any] = dict(
    chunk_size=32_000, blocksize=32_000, clevel=5, codec="lz4", checksum="sha256",
    max_app_chunks=3, order_record=True,
)  # fmt: skip
NUMPY = {"dtype": "'<f8'", "shape": [100_000], "order": "C", "container": "numpy"}


def _written(path: Path) -> dict[str, Any]:
    with BloscpackReader(path) as reader:
        return {
            "header": dict(reader.header),
            "metadata": reader.metadata,
            "metadata_header": dict(reader.metadata_header or {}),
            "chunks": [bytes(reader.read_chunk(i)) for i in range(reader.nchunks)],
            "digests": [reader.digest(i) for i in range(reader.nchunks)],
            "order_tags": reader.order_tags(),
        }


def _save(tmp: Path, out: Path, **options: Any) -> None:
    bloscpack.save(ARRAY, out, **options)


def _save_dask(tmp: Path, out: Path, **options: Any) -> None:
    bloscpack.save(da.from_array(ARRAY, chunks=30_000), out, **options)


def _convert(tmp: Path, out: Path, **options: Any) -> None:
    bloscpack.save(ARRAY, tmp / "src.b2nd")
    bloscpack.convert(tmp / "src.b2nd", out, **options)


def _compress_npy(tmp: Path, out: Path, **options: Any) -> None:
    np.save(tmp / "src.npy", ARRAY)
    compress_file(tmp / "src.npy", out, **options)


PATHS = {"save": _save, "dask": _save_dask, "convert": _convert, "compress_file": _compress_npy}


@pytest.mark.parametrize("write", PATHS.values(), ids=list(PATHS))
def test_every_write_path_writes_the_bytes_save_writes(tmp_path: Path, write: Any) -> None:
    _save(tmp_path, tmp_path / "saved.blp", **OPTIONS)
    write(tmp_path, tmp_path / "other.blp", **OPTIONS)
    saved, other = _written(tmp_path / "saved.blp"), _written(tmp_path / "other.blp")
    assert saved["header"]["nchunks"] == 25
    assert saved["metadata"] == NUMPY
    assert saved["order_tags"] is not None
    assert other == saved
    assert (tmp_path / "other.blp").read_bytes() == (tmp_path / "saved.blp").read_bytes()


def test_raw_bytes_and_user_metadata_change_only_the_metadata(tmp_path: Path) -> None:
    _save(tmp_path, tmp_path / "saved.blp", **OPTIONS)
    ARRAY.tofile(tmp_path / "raw.bin")
    compress_file(tmp_path / "raw.bin", tmp_path / "raw.blp", typesize=8, **OPTIONS)
    _save(tmp_path, tmp_path / "meta.blp", metadata={"k": 1}, **OPTIONS)
    saved = _written(tmp_path / "saved.blp")
    raw, meta = _written(tmp_path / "raw.blp"), _written(tmp_path / "meta.blp")
    assert raw["header"] == {**saved["header"], "metadata": False}
    assert raw["metadata"] is None
    assert meta["header"] == saved["header"]
    assert meta["metadata"] == {**NUMPY, "k": 1}
    for written in (raw, meta):
        assert written["chunks"] == saved["chunks"]
        assert written["digests"] == saved["digests"]
        assert written["order_tags"] == saved["order_tags"]


@pytest.mark.parametrize("write", [*PATHS.values(), _save], ids=[*PATHS, "save+metadata"])
def test_metadata_args_as_a_mapping_in_every_write_path(tmp_path: Path, write: Any) -> None:
    options = dict(chunk_size=32_000, metadata_args={"max_meta_size": 2000, "meta_level": 1})
    if write is _save:
        options["metadata"] = {"k": 1}
    write(tmp_path, tmp_path / "out.blp", **options)
    metadata_header = _written(tmp_path / "out.blp")["metadata_header"]
    assert (metadata_header["max_meta_size"], metadata_header["meta_level"]) == (2000, 1)


@pytest.mark.parametrize("metadata", [None, {"k": 1}])
def test_an_empty_array_is_one_empty_chunk(tmp_path: Path, metadata: Any) -> None:
    bloscpack.save(np.empty(0), tmp_path / "e.blp", metadata=metadata)
    written = _written(tmp_path / "e.blp")
    assert (written["header"]["nchunks"], written["header"]["chunk_size"]) == (1, 0)
    assert written["metadata"] == {**NUMPY, "shape": [0], **(metadata or {})}
    assert bloscpack.load(tmp_path / "e.blp").shape == (0,)


def test_converted_chunks_do_not_depend_on_the_threads(tmp_path: Path) -> None:
    # chunks of many blocks: C-Blosc 1.x threads would store them in the order they finish
    values = np.cumsum(np.random.default_rng(3).normal(size=1_000_000))
    options: dict[str, Any] = dict(chunk_size=1 << 22, blocksize=1 << 15, clevel=5, codec="zstd")
    bloscpack.save(values, tmp_path / "saved.blp", nthreads=1, **options)
    bloscpack.save(values, tmp_path / "src.b2nd")
    for _ in range(5):
        bloscpack.convert(tmp_path / "src.b2nd", tmp_path / "c.blp", nthreads=2, **options)
        assert (tmp_path / "c.blp").read_bytes() == (tmp_path / "saved.blp").read_bytes()
