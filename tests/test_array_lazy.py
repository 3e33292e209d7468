"""BloscArray reads lazily: counted decodes (every call into the C engine, with the bytes it
produced) and counted reads (byte ranges of the input, chunk numbers, chunk files) show that a
selection reads only the chunks it touches and, in a chunk, decodes only the blocks it needs."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bloscpack
from bloscpack import engine
from bloscpack.blosc.layout import check_header
from bloscpack.containers.b2nd import save_b2nd
from bloscpack.containers.bcolz import reader as bcolz_reader
from bloscpack.containers.bcolz import save_bcolz
from bloscpack.containers.bloscpack import BloscpackReader, save_blp
from bloscpack.containers.bloscpack.order import FOOTER
from bloscpack.containers.frame import FrameBase
from bloscpack.containers.frame.api import Frame
from bloscpack.containers.schunk.contiguous import ContiguousFrame
from bloscpack.errors import BloscpackError, ChunkError
from bloscpack.io.sources import ByteSource

N = 100_000  # float64 items: 100 chunks of 1000 items, blocks of 128 items
CHUNK, BLOCK = 1000, 128
VALUES = np.arange(N, dtype=np.float64) * 0.5


class Decodes(list):
    """Every decode: ("all", bytes) for whole chunks, ("items", bytes) for item ranges."""

    def total(self) -> int:
        return sum(n for _, n in self)


@pytest.fixture
def decodes(monkeypatch) -> Decodes:
    calls = Decodes()
    whole, items = engine.decompress_into, engine.getitem_into

    def decompress_into(chunk, out, **kwargs):
        n = whole(chunk, out, **kwargs)
        calls.append(("all", n))
        return n

    def getitem_into(chunk, start, nitems, out, **kwargs):
        n = items(chunk, start, nitems, out, **kwargs)
        calls.append(("items", n))
        return n

    monkeypatch.setattr(engine, "decompress_into", decompress_into)
    monkeypatch.setattr(engine, "getitem_into", getitem_into)
    return calls


@pytest.fixture
def reads(monkeypatch) -> list[tuple[int, int]]:
    """Byte ranges ``(offset, n)`` read through any ByteSource (files are memory-mapped)."""
    ranges: list[tuple[int, int]] = []
    read, read_upto = ByteSource.read, ByteSource.read_upto

    def counted_read(self, offset, n, what="data"):
        ranges.append((offset, n))
        return read(self, offset, n, what)

    def counted_read_upto(self, offset, n):
        ranges.append((offset, n))
        return read_upto(self, offset, n)

    monkeypatch.setattr(ByteSource, "read", counted_read)
    monkeypatch.setattr(ByteSource, "read_upto", counted_read_upto)
    return ranges


@pytest.fixture(scope="module")
def blp_path(tmp_path_factory) -> Path:
    """Blosc2 chunks, whose block size can be chosen."""
    path = tmp_path_factory.mktemp("lazy") / "values.blp"
    save_blp(VALUES, path, chunk_size=CHUNK * 8, blocksize=BLOCK * 8, blosc_version=2)
    return path


@pytest.fixture(scope="module", params=[1, 2])
def any_blp_path(request, tmp_path_factory) -> Path:
    """Blosc1 (C-Blosc 1.x picks the block size) or Blosc2 chunks."""
    path = tmp_path_factory.mktemp("lazy") / "values.blp"
    save_blp(VALUES, path, chunk_size=CHUNK * 8, blocksize=BLOCK * 8, blosc_version=request.param)
    return path


def chunk_areas(path: Path) -> list[tuple[int, int]]:
    with BloscpackReader(path) as reader:
        return [(loc.offset, loc.end) for loc in reader.locations()]


def order_probes(path: Path) -> set[tuple[int, int]]:
    """The read a verified chunk read makes once per open to look for an order record (the
    footer its end would hold: :mod:`bloscpack.containers.bloscpack.order`)."""
    size = path.stat().st_size
    return {(size - FOOTER.size, FOOTER.size)}


def touched_chunks(ranges: list[tuple[int, int]], areas: list[tuple[int, int]],
                   probes: set[tuple[int, int]] = frozenset()) -> set[int]:  # fmt: skip
    """The chunks whose stored bytes (chunk and digest) the ranges fall in, but for the
    ``probes`` (each read at most once); fails for a range outside every chunk."""
    assert all(ranges.count(probe) <= 1 for probe in probes)
    ranges = [r for r in ranges if r not in probes]
    found = set()
    for offset, n in ranges:
        hits = [c for c, (lo, hi) in enumerate(areas) if lo <= offset and offset + n <= hi]
        assert hits, f"read of {n} bytes at {offset} outside the chunks"
        found.update(hits)
    return found


def test_blp_item_decodes_one_item_of_one_chunk(any_blp_path, decodes, reads):
    areas = chunk_areas(any_blp_path)
    with bloscpack.open(any_blp_path) as array:
        assert decodes == []  # opening reads header, metadata and offsets: no chunk
        reads.clear()
        assert array[54_321] == VALUES[54_321]
        assert decodes == [("items", 8)]  # one item decoded: C decodes only its block
        assert touched_chunks(reads, areas, order_probes(any_blp_path)) == {54}
        decodes.clear(), reads.clear()
        assert array[-1] == VALUES[-1]
        assert decodes == [("items", 8)]
        assert touched_chunks(reads, areas, order_probes(any_blp_path)) == {99}


def test_blp_slice_reads_only_touched_chunks(any_blp_path, decodes, reads):
    areas = chunk_areas(any_blp_path)
    with bloscpack.open(any_blp_path) as array:
        reads.clear()
        np.testing.assert_array_equal(array[3_500:5_200], VALUES[3_500:5_200])
        # chunk 3 from item 500, chunk 4 whole (straight into the result), chunk 5 up to 200
        assert decodes == [("items", 500 * 8), ("all", CHUNK * 8), ("items", 200 * 8)]
        assert touched_chunks(reads, areas, order_probes(any_blp_path)) == {3, 4, 5}


def test_blp_strided_selection_decodes_only_needed_blocks(blp_path, decodes):
    with bloscpack.open(blp_path) as array:
        np.testing.assert_array_equal(array[70_000:70_900:300], VALUES[70_000:70_900:300])
        # items 0, 300, 600 of chunk 70 lie in blocks 0, 2 and 4: three decodes inside one
        # block each (blocks 0 and 2 whole, block 4 up to item 600)
        assert decodes == [("items", BLOCK * 8), ("items", BLOCK * 8), ("items", 89 * 8)]
        decodes.clear()
        np.testing.assert_array_equal(array[::CHUNK], VALUES[::CHUNK])
        assert decodes == [("items", 8)] * 100  # the first item of each of 100 chunks
        decodes.clear()
        np.testing.assert_array_equal(array[20_999:19_999:-1], VALUES[20_999:19_999:-1])
        assert decodes == [("all", CHUNK * 8)]  # a reversed whole chunk: one decode


def test_blp_verify_off_reads_no_whole_chunk(blp_path, reads):
    areas = chunk_areas(blp_path)
    with bloscpack.open(blp_path, verify=False) as array:
        reads.clear()
        assert array[12_345] == VALUES[12_345]
        assert touched_chunks(reads, areas) == {12}
        with bloscpack.open(blp_path) as checked:
            reads.clear()
            checked[12_345]
            assert any(n >= areas[12][1] - areas[12][0] - 4 - 32 for _, n in reads)


@pytest.fixture
def frame_chunks(monkeypatch) -> list[int]:
    """Chunk numbers read from any Blosc2 frame (contiguous or sparse): whole, or items of a
    contiguous frame's chunk decoded in one pass."""
    numbers: list[int] = []
    chunk_at, decode_items = FrameBase.chunk_at, ContiguousFrame.decode_chunk_items

    def counted(self, i, entry):
        numbers.append(i)
        return chunk_at(self, i, entry)

    def counted_items(self, i, lo, hi, nbytes, dest):
        done = decode_items(self, i, lo, hi, nbytes, dest)
        if done:
            numbers.append(i)
        return done

    monkeypatch.setattr(FrameBase, "chunk_at", counted)
    monkeypatch.setattr(ContiguousFrame, "decode_chunk_items", counted_items)
    return numbers


@pytest.mark.parametrize("sparse", [False, True])
def test_b2nd_reads_chunks_and_blocks_a_selection_touches(tmp_path, decodes, frame_chunks, sparse):
    a = np.arange(200 * 300, dtype=np.float64).reshape(200, 300)
    path = tmp_path / "a.b2nd"
    save_b2nd(a, path, chunks=(50, 60), blocks=(10, 20), sparse=sparse)
    block_nbytes = 10 * 20 * 8  # chunks of 24000 bytes: 5 x 3 blocks
    with bloscpack.open(path) as array:
        assert decodes == []  # the frame index is decoded when used
        assert array[123, 234] == a[123, 234]
        assert frame_chunks == [2 * 5 + 3]  # chunk (2, 3) of the 4 x 5 grid
        # the chunk's index entry (the index block holding it), then the one block holding
        # the item
        assert decodes == [("items", 8), ("items", 8)]
        decodes.clear(), frame_chunks.clear()
        assert array[0, 0] == a[0, 0]  # a second chunk: the whole index is decoded
        assert decodes == [("items", 8 * 20), ("items", 8)]
        decodes.clear(), frame_chunks.clear()
        np.testing.assert_array_equal(array[45:55, 7], a[45:55, 7])
        assert frame_chunks == [0, 5]  # chunks (0, 0) and (1, 0)
        # rows 45..49 lie in block row 4 of chunk (0, 0), rows 50..54 in block row 0 of
        # chunk (1, 0), column 7 in block column 0: a range inside one block in each chunk
        assert [kind for kind, _ in decodes] == ["items", "items"]
        assert all(n <= block_nbytes for _, n in decodes)
        decodes.clear(), frame_chunks.clear()
        np.testing.assert_array_equal(array[199, ::-1], a[199, ::-1])
        assert frame_chunks == [15, 16, 17, 18, 19]
        # the last block row of each chunk: 3 of its 15 blocks, in one run
        assert [kind for kind, _ in decodes] == ["items"] * 5
        assert decodes.total() <= 5 * 3 * block_nbytes
        decodes.clear(), frame_chunks.clear()
        np.testing.assert_array_equal(array[30:80, 50:130:2], a[30:80, 50:130:2])  # box by box
        assert sorted(set(frame_chunks)) == [0, 1, 2, 5, 6, 7]
        decodes.clear(), frame_chunks.clear()
        np.testing.assert_array_equal(array[::-1, 250], a[::-1, 250])
        assert sorted(frame_chunks) == [4, 9, 14, 19]
        assert decodes.total() <= 4 * 5 * block_nbytes  # one block column of each chunk


def test_raw_frame_reads_one_chunk(tmp_path, decodes, frame_chunks):
    data = np.arange(40_000, dtype=np.uint8) * 7
    with Frame(tmp_path / "f.b2frame", "w", typesize=1, blocksize=256, chunksize=4000) as frame:
        for k in range(0, 40_000, 4000):
            frame.append_data(data[k : k + 4000])
    with bloscpack.open(tmp_path / "f.b2frame") as array:
        decodes.clear()
        assert array[26_001] == data[26_001]
        # the chunk's index entry, then the block holding the item
        assert frame_chunks == [6] and decodes == [("items", 8), ("items", 1)]


@pytest.fixture
def chunk_files(monkeypatch) -> list[str]:
    """The bcolz chunk files opened, as paths relative to nothing (absolute)."""
    opened: list[str] = []
    open_chunk = bcolz_reader.open_chunk_file

    def counted(path):
        opened.append(path)
        return open_chunk(path)

    monkeypatch.setattr(bcolz_reader, "open_chunk_file", counted)
    return opened


def test_bcolz_reads_one_chunk_file(tmp_path, decodes, chunk_files):
    save_bcolz(VALUES, tmp_path / "v.bcolz", chunklen=CHUNK)
    with bloscpack.open(tmp_path / "v.bcolz") as array:
        assert array[54_321] == VALUES[54_321]
        assert [os.path.basename(p) for p in chunk_files] == ["__54.blp"]
        assert decodes == [("items", 8)]


def test_ctable_reads_only_selected_columns(tmp_path, decodes, chunk_files):
    table = np.zeros(5000, dtype=[("a", "<i8"), ("b", "<f4"), ("c", "S3")])
    table["a"] = np.arange(5000)
    save_bcolz(table, tmp_path / "t.bcolz", chunklen=500)
    with bloscpack.open(tmp_path / "t.bcolz") as array:
        column = array["b"]
        assert chunk_files == [] and decodes == []
        np.testing.assert_array_equal(column[1200:2600], table["b"][1200:2600])
        assert {os.path.relpath(p, tmp_path / "t.bcolz") for p in chunk_files} == {
            os.path.join("b", "data", f"__{i}.blp") for i in (2, 3, 4, 5)
        }
        chunk_files.clear()
        assert array[4999]["a"] == 4999
        assert sorted(os.path.basename(os.path.dirname(os.path.dirname(p)))
                      for p in chunk_files) == ["a", "b", "c"]  # fmt: skip


def test_iteration_reads_each_chunk_once(blp_path, decodes):
    with bloscpack.open(blp_path) as array:
        total = sum(1 for _ in array)
    assert total == N
    assert decodes == [("all", CHUNK * 8)] * 100


def test_a_damaged_block_spoils_only_reads_that_need_it(tmp_path):
    """An item read validates (and decodes) only the blocks it needs: a damaged stream size in
    another block of the same chunk does not stop it, reading that block raises ChunkError."""
    path = tmp_path / "d.blp"
    save_blp(VALUES[: 2 * CHUNK], path, chunk_size=CHUNK * 8, blocksize=BLOCK * 8,
             blosc_version=2, checksum="None")  # fmt: skip
    with BloscpackReader(path) as reader:
        offset = reader.locate(0).offset
    data = bytearray(path.read_bytes())
    (block5,) = struct.unpack_from("<i", data, offset + 32 + 4 * 5)
    struct.pack_into("<i", data, offset + block5, 2**30)  # the first stream of block 5
    path.write_bytes(data)
    with bloscpack.open(path) as array:
        assert array[3] == VALUES[3] and array[5 * BLOCK - 1] == VALUES[5 * BLOCK - 1]
        np.testing.assert_array_equal(array[6 * BLOCK : 1500], VALUES[6 * BLOCK : 1500])
        with pytest.raises(ChunkError, match="block 5 stream 0: csize 1073741824 at"):
            array[5 * BLOCK + 2]
        with pytest.raises(ChunkError, match="block 5 stream 0"):
            np.asarray(array)


def _fuzz_chunks() -> list[bytes]:
    data = (np.arange(3000, dtype=np.int32) * 7919 % 2003).view(np.uint8)
    return [
        bytes(engine.compress_blosc2(data, typesize=4, blocksize=1024)),
        bytes(engine.compress_blosc2(data, typesize=4, blocksize=512, splitmode="always")),
        bytes(engine.compress_blosc2(data, typesize=4, blocksize=768, codec="lz4")),
        engine.compress_blosc1(data, typesize=4, blocksize=1024, clevel=5),
    ]


FUZZ_CHUNKS = _fuzz_chunks()


@settings(max_examples=300, deadline=None)
@given(
    which=st.integers(0, len(FUZZ_CHUNKS) - 1),
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), min_size=1,
                   max_size=3),
    start=st.integers(0, 10**6),
    nitems=st.integers(1, 600),
)  # fmt: skip
def test_item_reads_of_mutated_chunks_raise_only_bloscpack_errors(which, flips, start, nitems):
    """Validating only the blocks an item range needs still keeps bad bytes away from C."""
    chunk = bytearray(FUZZ_CHUNKS[which])
    for pos, xor in flips:
        chunk[pos % len(chunk)] ^= xor
    try:
        header = check_header(chunk)
        total = header.nbytes // header.real_typesize
        if not total:
            return
        start %= total
        nitems = min(nitems, total - start)
        out = np.empty(nitems * header.real_typesize, np.uint8)
        engine.getitem_into(chunk, start, nitems, out)
    except BloscpackError:
        pass


def test_a_large_read_checks_the_chunk_sizes_before_allocating(tmp_path, monkeypatch):
    from bloscpack.containers.bloscpack.header import BloscpackHeader
    from bloscpack.containers.stores import base as stores_base

    raw = bytearray(bloscpack.pack_bytes_to_bytes(bytes(2000), chunk_size=1000))
    header = dict(BloscpackHeader.decode(bytes(raw[:32])))
    header.update(chunk_size=2**30, last_chunk=2**30)  # a damaged header: 2 GiB claimed
    raw[:32] = BloscpackHeader(**header).encode()
    path = tmp_path / "claims.blp"
    path.write_bytes(bytes(raw))
    allocations = []
    real = stores_base.allocate
    monkeypatch.setattr(
        stores_base, "allocate", lambda *a: (allocations.append(a[0]), real(*a))[1]
    )
    message = (
        f"{path}: chunk 0 holds 1000 bytes, the header prescribes 1073741824"
        " (chunk_size 1073741824, last_chunk 1073741824)"
    )  # as load says
    with bloscpack.open(path) as array:
        assert array.shape == (2**31,)
        with pytest.raises(bloscpack.IntegrityError) as info:
            array[5]  # a small read finds it in the chunk it decodes
        assert str(info.value) == message
        with pytest.raises(bloscpack.IntegrityError) as info:
            np.asarray(array)  # a large one before allocating
        assert str(info.value) == message
    assert allocations == [()]
