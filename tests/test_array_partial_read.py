"""A single item of a large b2nd chunk is read with positioned reads of the chunk's header,
its bstarts and the one block holding the item, never the rest of the chunk."""

from __future__ import annotations

import os
import re
import struct
from typing import Any

import blosc2
import numpy as np
import pytest

import bloscpack
from bloscpack.containers.b2nd import B2ndArray
from bloscpack.containers.schunk.contiguous import CHUNK_HEAD_READ
from bloscpack.errors import BloscpackError

CHUNK, BLOCK = 65536, 4096  # items: 512 KiB chunks of 32 KiB blocks


@pytest.fixture(scope="module")
def b2nd_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, np.ndarray]:
    data = np.random.default_rng(5).standard_normal(4 * CHUNK)
    path = str(tmp_path_factory.mktemp("partial") / "a.b2nd")
    blosc2.asarray(data, urlpath=path, mode="w", chunks=(CHUNK,), blocks=(BLOCK,),
                   cparams={"codec": blosc2.Codec.LZ4, "clevel": 1})  # fmt: skip
    return path, data


def _chunk_layout(path: str, c: int) -> tuple[int, int, np.ndarray]:
    """(file offset of chunk c, its bstarts end, its bstarts)."""
    with B2ndArray(path) as array:
        frame = array.frame
        pos = frame.header.header_len + int(frame.offsets[c])
        chunk = bytes(frame.read_chunk(c))
    (nbytes, blocksize, cbytes) = struct.unpack_from("<iii", chunk, 4)
    nblocks = -(-nbytes // blocksize)
    starts = np.frombuffer(chunk, "<i4", nblocks, 32).astype(np.int64)
    return pos, 32 + 4 * nblocks, starts


class ReadLog:
    """Records the (offset, size) of every positioned read of the file."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads: list[tuple[int, int]] = []
        pread, preadv = os.pread, os.preadv

        def logged_pread(fd: int, n: int, offset: int) -> bytes:
            self.reads.append((offset, n))
            return pread(fd, n, offset)

        def logged_preadv(fd: int, buffers: list, offset: int) -> int:
            self.reads.append((offset, sum(memoryview(b).nbytes for b in buffers)))
            return preadv(fd, buffers, offset)

        monkeypatch.setattr(os, "pread", logged_pread)
        monkeypatch.setattr(os, "preadv", logged_preadv)


@pytest.mark.parametrize("i", [0, 5, CHUNK + 3 * BLOCK + 17, 4 * CHUNK - 1])
def test_single_item_reads_header_bstarts_and_one_block(
    b2nd_file: tuple[str, np.ndarray], monkeypatch: pytest.MonkeyPatch, i: int
) -> None:
    path, data = b2nd_file
    c, b = i // CHUNK, i % CHUNK // BLOCK
    pos, bstarts_end, starts = _chunk_layout(path, c)
    # blocks are stored in the order the compressing threads finished them: a block's
    # streams end where the next stored block starts (or the chunk ends)
    later = starts[starts > starts[b]]
    block_end = int(later.min()) if len(later) else None
    with bloscpack.open(path) as array:
        log = ReadLog(monkeypatch)
        assert array[i] == data[i]
        source = array._store.array.frame._storage.source  # noqa: SLF001
        assert source._mmap is None  # noqa: SLF001 (the file was never mapped)
    block_at = pos + int(starts[b])
    block_stop = pos + (block_end if block_end is not None else int(starts[b]) + 2 * BLOCK * 8)
    # the chunk's first bytes (its header and bstarts, in one read), then the block up to
    # where the next one starts (or the chunk ends)
    assert bstarts_end <= CHUNK_HEAD_READ
    assert log.reads[:-1] == [(pos, CHUNK_HEAD_READ)]
    at, n = log.reads[-1]
    assert at == block_at and at + n <= block_stop
    if block_end is not None:
        assert at + n == pos + block_end


def test_small_range_reads_only_its_blocks(
    b2nd_file: tuple[str, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, data = b2nd_file
    lo, hi = 2 * CHUNK + BLOCK - 3, 2 * CHUNK + BLOCK + 3  # blocks 0 and 1 of chunk 2
    pos, bstarts_end, starts = _chunk_layout(path, 2)
    with bloscpack.open(path) as array:
        log = ReadLog(monkeypatch)
        np.testing.assert_array_equal(array[lo:hi], data[lo:hi])
    wanted = starts[:2]
    later = starts[starts > wanted.max()]
    span_end = int(later.min()) if len(later) else None
    assert log.reads[:-1] == [(pos, CHUNK_HEAD_READ)]
    assert log.reads[-1][0] == pos + int(wanted.min())
    if span_end is not None:
        assert log.reads[-1][1] == span_end - int(wanted.min())


def _corrupt_block(path: str, tmp_path: os.PathLike[str], c: int, b: int) -> str:
    pos, _, starts = _chunk_layout(path, c)
    with open(path, "rb") as fh:
        raw = bytearray(fh.read())
    at = pos + int(starts[b])
    raw[at : at + 4] = struct.pack("<i", 1 << 30)  # a stream size far past the chunk
    out = os.path.join(tmp_path, "bad.b2nd")
    with open(out, "wb") as fh:
        fh.write(raw)
    return out


def test_damaged_block_is_reported_and_other_blocks_still_read(
    b2nd_file: tuple[str, np.ndarray], tmp_path: os.PathLike[str]
) -> None:
    path, data = b2nd_file
    bad = _corrupt_block(path, tmp_path, 1, 2)
    with bloscpack.open(bad) as array:
        assert array[CHUNK + 3 * BLOCK] == data[CHUNK + 3 * BLOCK]
        with pytest.raises(BloscpackError, match="block 2 stream 0"):
            array[CHUNK + 2 * BLOCK + 1]
    with bloscpack.open(bad) as array, pytest.raises(BloscpackError, match="block 2 stream 0"):
        np.asarray(array)


def test_opening_a_file_opens_it_once(
    b2nd_file: tuple[str, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file is opened (and locked while it is opened) through its one source: no second
    descriptor for a lock around the opening."""
    path, data = b2nd_file
    opened = []
    real_open = os.open

    def counting(name: object, *args: object, **kwargs: object) -> int:
        opened.append(os.fspath(name) if isinstance(name, (str, os.PathLike)) else name)
        return real_open(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting)
    with bloscpack.open(path) as array:
        assert array[5] == data[5]
    assert path not in opened


def test_a_chunk_layout_is_checked_once(
    b2nd_file: tuple[str, np.ndarray], monkeypatch: pytest.MonkeyPatch, tmp_path: os.PathLike[str]
) -> None:
    """Box reads check the layout of the blocks they decode, each block when first touched in
    a contiguous frame file, at every read in the chunk files of a sparse frame (once: by the
    walk that finds where the streams read end, not again by the decoder); whole reads check
    whole chunks."""
    from bloscpack import engine
    from bloscpack.blosc import partial
    from bloscpack.containers.b2nd import reader

    path, data = b2nd_file
    sparse = os.path.join(tmp_path, "a.b2nd.d")
    blosc2.asarray(data, urlpath=sparse, mode="w", contiguous=False, chunks=(CHUNK,),
                   blocks=(BLOCK,), cparams={"codec": blosc2.Codec.LZ4, "clevel": 1})  # fmt: skip
    checked = []
    real_chunk, real_runs = reader.validate_chunk, reader.validate_block_runs

    def whole(chunk: object) -> object:
        checked.append("whole")
        return real_chunk(chunk)

    def runs(chunk: object, runs: list[tuple[int, int]], header: object = None) -> object:
        checked.append(list(runs))
        return real_runs(chunk, runs, header)

    real_ends = partial.run_ends

    def ends(header: Any, chunk: memoryview, runs: list[tuple[int, int]]) -> list[int] | None:
        checked.append(list(runs))
        return real_ends(header, chunk, runs)

    monkeypatch.setattr(reader, "validate_chunk", whole)
    monkeypatch.setattr(reader, "validate_block_runs", runs)
    # a sparse frame's blocks are read alone from their chunk file and checked as they are
    # read; the decoder does not check them again
    monkeypatch.setattr(partial, "run_ends", ends)
    monkeypatch.setattr(engine, "validate_block_runs", runs)
    for where, rounds in ((path, 1), (sparse, 3)):
        checked.clear()
        with B2ndArray(where) as array:
            for _ in range(3):  # the last block of chunk 0, the first three of chunk 1
                assert np.array_equal(
                    array[CHUNK - 1 : CHUNK + 9000], data[CHUNK - 1 : CHUNK + 9000]
                )
            assert checked == [[(15, 1)], [(0, 3)]] * rounds, where
            checked.clear()
            np.asarray(array)  # the whole chunks
            assert checked == ["whole"] * 4, where


@pytest.fixture(scope="module")
def sparse_dir(b2nd_file: tuple[str, np.ndarray], tmp_path_factory: pytest.TempPathFactory) -> str:
    """The data of ``b2nd_file`` as a sparse b2nd directory with the same chunks."""
    _, data = b2nd_file
    path = str(tmp_path_factory.mktemp("partial_sparse") / "a.b2nd.d")
    blosc2.asarray(data, urlpath=path, mode="w", contiguous=False, chunks=(CHUNK,),
                   blocks=(BLOCK,), cparams={"codec": blosc2.Codec.LZ4, "clevel": 1})  # fmt: skip
    return path


def _chunk_file_starts(path: str) -> tuple[int, np.ndarray]:
    """(bstarts end, bstarts) of the chunk file ``path``."""
    with open(path, "rb") as fh:
        chunk = fh.read()
    (nbytes, blocksize) = struct.unpack_from("<ii", chunk, 4)
    nblocks = -(-nbytes // blocksize)
    return 32 + 4 * nblocks, np.frombuffer(chunk, "<i4", nblocks, 32).astype(np.int64)


@pytest.mark.parametrize("i", [5, CHUNK + 3 * BLOCK + 17])
def test_single_item_of_a_sparse_frame_reads_one_block_of_its_chunk_file(
    b2nd_file: tuple[str, np.ndarray], sparse_dir: str, monkeypatch: pytest.MonkeyPatch, i: int
) -> None:
    """In a sparse b2nd directory too, an item is read with the chunk file's first bytes and
    the one block holding it, never the rest of the file."""
    _, data = b2nd_file
    c, b = i // CHUNK, i % CHUNK // BLOCK
    with bloscpack.open(sparse_dir) as array:
        entry = int(array._store.array.frame.offsets[c])  # noqa: SLF001
        bstarts_end, starts = _chunk_file_starts(os.path.join(sparse_dir, f"{entry:08X}.chunk"))
        later = starts[starts > starts[b]]
        log = ReadLog(monkeypatch)
        assert array[i] == data[i]
    assert bstarts_end <= CHUNK_HEAD_READ
    assert log.reads[0] == (0, CHUNK_HEAD_READ)
    assert len(log.reads) == 2
    at, n = log.reads[1]
    assert at == int(starts[b])
    if len(later):
        assert at + n == int(later.min())


def _damage_block_2_of_chunk_1(sparse_dir: str, bad: str, patch: bytes) -> Any:
    """Copy the sparse b2nd ``sparse_dir`` to ``bad`` and write ``patch`` at the start of
    block 2 of its chunk 1's file; returns that file's block starts."""
    import shutil

    shutil.copytree(sparse_dir, bad)
    with bloscpack.open(bad) as array:
        entry = int(array._store.array.frame.offsets[1])  # noqa: SLF001
    member = os.path.join(bad, f"{entry:08X}.chunk")
    _, starts = _chunk_file_starts(member)
    with open(member, "r+b") as fh:
        fh.seek(int(starts[2]))
        fh.write(patch)
    return starts


def test_damaged_block_of_a_sparse_chunk_file_is_reported(
    b2nd_file: tuple[str, np.ndarray], sparse_dir: str, tmp_path: os.PathLike[str]
) -> None:
    _, data = b2nd_file
    bad = os.path.join(tmp_path, "bad.b2nd.d")
    # a stream size far past the chunk
    _damage_block_2_of_chunk_1(sparse_dir, bad, struct.pack("<i", 1 << 30))
    with bloscpack.open(bad) as array:
        assert array[CHUNK + 3 * BLOCK] == data[CHUNK + 3 * BLOCK]
        with pytest.raises(BloscpackError, match="block 2 stream 0"):
            array[CHUNK + 2 * BLOCK + 1]
        with pytest.raises(BloscpackError, match="block 2 stream 0"):  # a box (by blocks)
            array[CHUNK + BLOCK : CHUNK + 3 * BLOCK]


def test_malformed_run_of_a_sparse_chunk_file_block_is_named(
    b2nd_file: tuple[str, np.ndarray], sparse_dir: str, tmp_path: os.PathLike[str]
) -> None:
    """A block read alone whose stream is a run with a bad token byte (its streams stay inside
    the bytes read) is named as the whole chunk's check names it, by a box and by an item."""
    _, data = b2nd_file
    bad = os.path.join(tmp_path, "run.b2nd.d")
    # a run of 7s whose token byte is 9, not 1
    starts = _damage_block_2_of_chunk_1(sparse_dir, bad, struct.pack("<ib", -7, 9))
    message = f"block 2 stream 0: run token 9 at {int(starts[2]) + 4} (only token 1 exists)"
    with bloscpack.open(bad) as array:
        assert array[CHUNK + 3 * BLOCK] == data[CHUNK + 3 * BLOCK]
        with pytest.raises(BloscpackError, match=re.escape(message)):
            array[CHUNK + BLOCK : CHUNK + 3 * BLOCK]
        with pytest.raises(BloscpackError, match=re.escape(message)):
            array[CHUNK + 2 * BLOCK + 1]


def test_box_of_a_sparse_frame_reads_only_its_blocks_of_the_chunk_file(
    b2nd_file: tuple[str, np.ndarray], sparse_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A box read (more items than are read one by one) of a sparse b2nd directory reads the
    chunk file's first bytes and the streams of the blocks it touches, not the whole file."""
    _, data = b2nd_file
    lo, hi = CHUNK + 10, CHUNK + 2 * BLOCK + 900  # blocks 0 to 2 of chunk 1
    with bloscpack.open(sparse_dir) as array:
        entry = int(array._store.array.frame.offsets[1])  # noqa: SLF001
        member = os.path.join(sparse_dir, f"{entry:08X}.chunk")
        _, starts = _chunk_file_starts(member)
        log = ReadLog(monkeypatch)
        np.testing.assert_array_equal(array[lo:hi], data[lo:hi])
    later = starts[starts > starts[:3].max()]
    assert log.reads[0] == (0, CHUNK_HEAD_READ)
    assert len(log.reads) == 2
    at, n = log.reads[1]
    assert at == int(starts[:3].min())
    assert at + n == (int(later.min()) if len(later) else os.path.getsize(member))
