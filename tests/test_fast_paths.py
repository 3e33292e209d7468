"""The properties the fast paths rely on: one open file per single-file container (detection and
reading share it), positioned reads for headers and metadata with the file mapped only for
chunk data, and the same results as the general paths."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import blosc2
import numpy as np
import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from test_chunk_fuzz import mutated

import bloscpack
from bloscpack.containers.b2nd import save_b2nd
from bloscpack.containers.bloscpack import save_blp
from bloscpack.containers.bloscpack.append import KILL_AFTER_ENV, journal_path
from bloscpack.containers.frame import save_bytes
from bloscpack.dispatch import detect
from bloscpack.errors import BloscpackError, FileNotFound, TruncatedError
from bloscpack.io import sources as bio

VALUES = np.arange(40_000, dtype=np.float64).reshape(200, 200) * 0.25


@pytest.fixture
def sources(monkeypatch) -> list[bio.ByteSource]:
    """Every ByteSource opened on a path."""
    opened: list[bio.ByteSource] = []
    init = bio.ByteSource.__init__

    def counted(self, source, name=None):  # type: ignore[no-untyped-def]
        init(self, source, name)
        if isinstance(source, (str, os.PathLike)):
            opened.append(self)

    monkeypatch.setattr(bio.ByteSource, "__init__", counted)
    return opened


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("fast")
    paths = {
        "blp": root / "a.blp", "b2nd": root / "a.b2nd", "b2frame": root / "a.b2frame",
        "chunk": root / "a.chunk",
    }  # fmt: skip
    save_blp(VALUES, paths["blp"], chunk_size=64 * 1024)
    save_b2nd(VALUES, paths["b2nd"], chunks=(50, 200), blocks=(10, 200))
    save_bytes(VALUES.reshape(-1).view(np.uint8), paths["b2frame"])
    paths["chunk"].write_bytes(blosc2.compress2(VALUES, typesize=8))
    return paths


@pytest.mark.parametrize("fmt", ["blp", "b2nd", "b2frame", "chunk"])
def test_open_reads_through_one_file(files, sources, fmt):
    path = files[fmt]
    with bloscpack.open(path) as array:
        assert array.format == fmt
        flat = VALUES.reshape(-1).view(np.uint8) if fmt in ("b2frame", "chunk") else VALUES
        index = (123,) if flat.ndim == 1 else (37, 101)
        assert array[index] == flat[index]
        assert len(sources) == 1
    assert sources[0]._file is None  # closed with the array
    assert detect(path) == fmt
    assert len(sources) == 2 and sources[1]._file is None


def test_metadata_reads_do_not_map_the_file(tmp_path):
    """Header, metalayers, trailer and index come from positioned reads; the file is mapped for
    the first read of a chunk larger than SMALL_READ."""
    noise = np.random.default_rng(5).random((400, 400))
    save_b2nd(noise, tmp_path / "noise.b2nd", chunks=(200, 400), blocks=(20, 400))
    with bloscpack.open(tmp_path / "noise.b2nd") as array:
        source = array._source
        assert source is not None and source._mmap is None
        np.testing.assert_array_equal(array[:, 7], noise[:, 7])
        assert source._mmap is not None


def test_small_reads_come_from_the_kept_head(tmp_path, monkeypatch):
    path = tmp_path / "data"
    data = bytes(range(256)) * 600
    path.write_bytes(data)
    preads: list[tuple[int, int]] = []
    pread = os.pread

    def counted(fd, n, offset):  # type: ignore[no-untyped-def]
        preads.append((n, offset))
        return pread(fd, n, offset)

    monkeypatch.setattr(bio.os, "pread", counted)
    with bio.ByteSource(path) as source:
        assert bytes(source.read(10, 20)) == data[10:30]
        assert bytes(source.read(4000, 96)) == data[4000:4096]
        assert preads == [(bio.HEAD_SIZE, 0)]
        assert bytes(source.read(5000, 100)) == data[5000:5100]
        assert preads[1:] == [(100, 5000)]
        assert source._mmap is None
        assert bytes(source.read(0, len(data))) == data  # larger than SMALL_READ: mapped
        assert source._mmap is not None
        assert bytes(source.read(5000, 100)) == data[5000:5100]
        assert len(preads) == 2
        with pytest.raises(TruncatedError, match="needs 2 bytes, but the input has 153600"):
            source.read(len(data) - 1, 2)
    source.close()  # closing twice is harmless


def test_a_file_that_shrank_is_a_truncation(tmp_path):
    path = tmp_path / "data"
    path.write_bytes(bytes(300_000))
    with bio.ByteSource(path) as source:
        os.truncate(path, 1000)
        with pytest.raises(TruncatedError, match="shrunk"):
            source.read(5000, 100)
        with pytest.raises(TruncatedError, match="shrunk"):
            source.read(0, 200_000)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFound, match="does not exist"):
        bloscpack.open(tmp_path / "missing.b2nd")
    with pytest.raises(FileNotFound, match="does not exist"):
        detect(tmp_path / "missing.b2nd")
    save_b2nd(VALUES, tmp_path / "sparse", sparse=True)
    with bloscpack.open(tmp_path / "sparse") as array:
        assert array.format == "b2nd" and array[3, 4] == VALUES[3, 4]


def test_open_rolls_back_an_interrupted_append_first(tmp_path):
    """A .blp is detected from its head, then recovered before its reader opens it."""
    corpus = DATA / "bloscpack"
    path = tmp_path / "x.blp"
    shutil.copy(corpus / "cli_checksum_adler32.blp", path)
    env = dict(os.environ, **{KILL_AFTER_ENV: "6"})
    proc = subprocess.run(
        [sys.executable, "-m", "bloscpack", "-n", "1", "append", str(path),
         str(corpus / "inputs" / "text_150000.txt")],
        env=env, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == -signal.SIGKILL
    assert Path(journal_path(path)).exists()
    expected = np.fromfile(corpus / "inputs" / "ints_200000.bin", dtype=np.uint8)
    with bloscpack.open(path) as array:
        np.testing.assert_array_equal(np.asarray(array), expected)
    assert path.read_bytes() == (corpus / "cli_checksum_adler32.blp").read_bytes()
    assert not Path(journal_path(path)).exists()


# --- b2nd metalayer: fixed-offset parse and cache -----------------------------------------


def _cursor_parse(raw: bytes, typesize: int | None) -> object:
    """The result of the marker-by-marker parser: a record, or the error type and message."""
    from bloscpack.containers.b2nd.meta import _parse

    try:
        return _parse(memoryview(raw), typesize)
    except BloscpackError as exc:
        return type(exc), str(exc)


def _fast_parse(raw: bytes, typesize: int | None) -> object:
    from bloscpack.containers.b2nd.meta import B2ndMeta

    try:
        return B2ndMeta.parse(raw, typesize)
    except BloscpackError as exc:
        return type(exc), str(exc)


@settings(max_examples=200, deadline=None)
@given(
    dims=st.lists(st.tuples(st.integers(0, 300), st.integers(1, 40), st.integers(1, 40)),
                  max_size=16),
    dtype=st.sampled_from(["<f8", "|u1", "<i4", ">i2", "|S7", "<U3", "<c16", "|b1"]),
    no_dtype=st.booleans(),
    flips=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), max_size=3),
    cut=st.integers(0, 8),
)  # fmt: skip
def test_metalayer_fast_parse_equals_the_cursor_parser(dims, dtype, no_dtype, flips, cut):
    from bloscpack.containers.b2nd.meta import pack_metalayer

    shape = tuple(d[0] for d in dims)
    chunks = tuple(min(d[1], max(d[0], 1)) for d in dims)
    blocks = tuple(min(d[2], c) for d, c in zip(dims, chunks, strict=True))
    raw = bytearray(pack_metalayer(shape, chunks, blocks, dtype))
    itemsize = np.dtype(dtype).itemsize
    if no_dtype:
        del raw[len(raw) - 6 - len(dtype) :]
    for at, value in flips:
        if at < len(raw):
            raw[at] = value
    if cut:
        del raw[len(raw) - cut :]
    for typesize in (itemsize, None, 3):
        assert _fast_parse(bytes(raw), typesize) == _cursor_parse(bytes(raw), typesize)


# --- chunk validation: the fast checks never accept what the named walk rejects ----------


def _named_verdict(check, *args) -> object:  # type: ignore[no-untyped-def]
    try:
        check(*args)
    except (BloscpackError, IndexError) as exc:
        return type(exc), str(exc)
    return "ok"


@pytest.mark.parametrize("vector_from", [1, 48, 10**9])
@settings(max_examples=300, deadline=None)
@given(chunk=mutated())
def test_fast_chunk_checks_agree_with_the_named_walk(vector_from, chunk):
    """The fast checks of regular chunks and of block ranges, with the vector walk from 1
    stream, at the usual threshold and never: a chunk they accept passes the named walk."""
    from bloscpack.blosc import layout

    try:
        h = layout.check_header(chunk)
    except BloscpackError:
        return
    if layout.chunk_kind(h) != layout.ChunkKind.REGULAR or h.cbytes > len(chunk):
        return
    mv = memoryview(chunk)
    saved, layout._VECTOR_MIN_STREAMS = layout._VECTOR_MIN_STREAMS, vector_from
    try:
        if layout._regular_ok(h, mv):
            assert _named_verdict(layout._check_regular_named, h, mv) == "ok"
        n = h.nblocks
        for first, stop in ((0, min(n, 1)), (n // 2, n // 2 + 1), (max(n - 1, 0), n)):
            if layout._blocks_ok(h, mv, first, stop):
                assert _named_verdict(_named_blocks, h, mv, first, stop) == "ok"
    finally:
        layout._VECTOR_MIN_STREAMS = saved


def _named_blocks(h, mv, first, stop) -> None:  # type: ignore[no-untyped-def]
    """validate_blocks without its fast checks."""
    from bloscpack.blosc import layout

    fast, layout._blocks_ok = layout._blocks_ok, lambda *args: False
    try:
        layout.validate_blocks(mv, first, stop, h)
    finally:
        layout._blocks_ok = fast


def test_header_cache_returns_equal_headers_for_equal_bytes():
    from bloscpack.blosc.header import ChunkHeader
    from bloscpack.blosc.layout import check_header

    chunk = blosc2.compress2(VALUES, typesize=8)
    first = ChunkHeader.parse(chunk)
    assert ChunkHeader.parse(bytearray(chunk)) is first  # cached by the 32 header bytes
    assert ChunkHeader.parse(np.frombuffer(chunk, np.uint8)) is first
    assert check_header(memoryview(chunk)) == first
    assert first.special == 0 and first.nblocks == -(-first.nbytes // first.blocksize)
