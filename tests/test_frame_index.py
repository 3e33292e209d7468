"""The frame index is decoded when it is used: opening a frame checks the index chunk's header
only, the first chunk read decodes its own entry alone (the index block holding it), later
reads decode the whole index once.  Every entry is checked before it is used, and a damaged
index raises BloscpackError subclasses when the entries it damages are read."""

from __future__ import annotations

import struct
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bloscpack
from bloscpack import engine
from bloscpack.containers.b2nd import B2ndArray, save_b2nd
from bloscpack.containers.frame import ContiguousFrame
from bloscpack.errors import BloscpackError, ChunkError, FormatError, TruncatedError

ARRAY = np.arange(200 * 300, dtype=np.float64).reshape(200, 300)
# chunks (50, 60) make a 4 x 5 grid: chunk 13 is grid chunk (2, 3), holding item (123, 234)
ITEM, ITEM_CHUNK = (123, 234), 13


@pytest.fixture
def b2nd_path(tmp_path: Path) -> Path:
    path = tmp_path / "a.b2nd"
    save_b2nd(ARRAY, path, chunks=(50, 60), blocks=(10, 20))
    return path


def index_span(path: Path) -> tuple[int, int]:
    """(file offset, length) of the index chunk of the frame at ``path``."""
    frame = ContiguousFrame(path)
    try:
        at = frame.header.header_len + frame.header.cbytes
        return at, frame._trailer_at - at
    finally:
        frame.close()


def set_entry(path: Path, i: int, entry: int) -> None:
    """Rewrite the index of the frame at ``path`` with entry ``i`` replaced."""
    frame = ContiguousFrame(path, writable=True)
    try:
        offsets = frame.offsets.copy()
        offsets[i] = entry
        h = frame.header
        frame._commit(offsets, h.nbytes, h.cbytes, h.chunksize, False)
    finally:
        frame.close()


@pytest.fixture
def index_decodes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """``(kind, first item, items)`` of every decode of a chunk of 8-byte items (the index;
    the array's chunks hold float64 too, so only its single-entry and whole reads are told
    apart by the caller)."""
    calls: list[tuple[str, int, int]] = []
    whole, items = engine.decompress_into, engine.getitem_into

    def decompress_into(chunk, out, **kwargs):  # type: ignore[no-untyped-def]
        n = whole(chunk, out, **kwargs)
        calls.append(("all", 0, n // 8))
        return n

    def getitem_into(chunk, start, nitems, out, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(("items", start, nitems))
        return items(chunk, start, nitems, out, **kwargs)

    monkeypatch.setattr(engine, "decompress_into", decompress_into)
    monkeypatch.setattr(engine, "getitem_into", getitem_into)
    return calls


def test_open_decodes_no_entry_and_the_first_read_only_its_own(
    b2nd_path: Path, index_decodes: list[tuple[str, int, int]]
) -> None:
    with bloscpack.open(b2nd_path) as array:
        assert index_decodes == []
        assert array[ITEM] == ARRAY[ITEM]
        # entry 13 of the index, then the block holding the item (200 items of its chunk)
        assert index_decodes[0] == ("items", ITEM_CHUNK, 1)
        assert len(index_decodes) == 2
        index_decodes.clear()
        assert array[0, 0] == ARRAY[0, 0]
        assert index_decodes[0] == ("items", 0, 20)  # now the whole index, once
        index_decodes.clear()
        assert array[199, 299] == ARRAY[199, 299]
        assert len(index_decodes) == 1  # the block only
        np.testing.assert_array_equal(np.asarray(array), ARRAY)


def test_frame_entry_matches_the_decoded_index(b2nd_path: Path) -> None:
    frame = ContiguousFrame(b2nd_path)
    try:
        first = frame.entry(-1)
        assert frame._offsets is None  # still not decoded whole
        assert first == int(frame.offsets[19])
        assert [frame.entry(i) for i in range(20)] == frame.offsets.tolist()
        with pytest.raises(IndexError):
            frame.entry(20)
    finally:
        frame.close()


def test_an_entry_past_the_chunks_section_raises_when_its_chunk_is_read(b2nd_path: Path) -> None:
    set_entry(b2nd_path, ITEM_CHUNK, 10**9)
    message = f"chunk {ITEM_CHUNK} at offset 1000000000 lies beyond the chunks section"
    with bloscpack.open(b2nd_path) as array, pytest.raises(FormatError, match=message):
        array[ITEM]
    with bloscpack.open(b2nd_path) as array:
        assert array[0, 0] == ARRAY[0, 0]  # its own entry only
        with pytest.raises(FormatError, match=message):
            array[199, 299]  # the whole index is decoded and checked
    with pytest.raises(FormatError, match=message):
        bloscpack.load(b2nd_path)


def test_an_unknown_marker_raises_when_its_chunk_is_read(b2nd_path: Path) -> None:
    set_entry(b2nd_path, ITEM_CHUNK, -(1 << 63) + (0x05 << 56))
    message = rf"index entry {ITEM_CHUNK} \(0x8500000000000000\) is not a special marker"
    with bloscpack.open(b2nd_path) as array, pytest.raises(FormatError, match=message):
        array[ITEM]
    with bloscpack.open(b2nd_path) as array:
        np.testing.assert_array_equal(array[:50, :60], ARRAY[:50, :60])
        with pytest.raises(FormatError, match=message):
            array[100:, 200:]


def test_a_damaged_index_stream_raises_when_an_entry_is_read(b2nd_path: Path) -> None:
    at, _ = index_span(b2nd_path)
    data = bytearray(b2nd_path.read_bytes())
    (nbytes, blocksize) = struct.unpack_from("<ii", data, at + 4)
    nblocks = -(-nbytes // blocksize)
    stream = at + 32 + 4 * nblocks  # the first block's first stream: its size
    struct.pack_into("<i", data, stream, 10**6)
    b2nd_path.write_bytes(data)
    with bloscpack.open(b2nd_path) as array, pytest.raises(ChunkError, match=": index: "):
        array[ITEM]
    with pytest.raises(ChunkError, match=": index: "):
        bloscpack.load(b2nd_path)  # the whole index


def test_an_index_longer_than_its_place_fails_on_open(b2nd_path: Path) -> None:
    at, length = index_span(b2nd_path)
    data = bytearray(b2nd_path.read_bytes())
    struct.pack_into("<i", data, at + 12, length + 1)  # the index chunk's cbytes
    b2nd_path.write_bytes(data)
    with pytest.raises(TruncatedError, match=f"index chunk of {length + 1} bytes, only {length}"):
        bloscpack.open(b2nd_path)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=4),
    item=st.tuples(st.integers(0, 199), st.integers(0, 299)),
    then=st.tuples(st.integers(0, 199), st.integers(0, 299)),
)
def test_damaged_index_bytes_raise_only_bloscpack_errors(
    tmp_path_factory: pytest.TempPathFactory, flips: list[tuple[int, int]],
    item: tuple[int, int], then: tuple[int, int],
) -> None:  # fmt: skip
    path = tmp_path_factory.mktemp("index") / "a.b2nd"
    save_b2nd(ARRAY, path, chunks=(50, 60), blocks=(10, 20))
    at, length = index_span(path)
    data = bytearray(path.read_bytes())
    for pos, value in flips:
        data[at + pos % length] = value
    path.write_bytes(data)
    try:
        with bloscpack.open(path) as array:
            array[item]  # the lazy single-entry read
            array[then]  # the whole index
    except BloscpackError:
        pass


def test_threads_reading_a_new_frame_get_the_right_entries(b2nd_path: Path) -> None:
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        for _ in range(20):
            frame = ContiguousFrame(b2nd_path)
            try:
                with ThreadPoolExecutor(8) as pool:
                    entries = list(pool.map(frame.entry, [i % 20 for i in range(64)]))
                assert entries == [int(frame.offsets[i % 20]) for i in range(64)]
            finally:
                frame.close()
        with bloscpack.open(b2nd_path) as array:
            np.testing.assert_array_equal(np.asarray(array), ARRAY)  # chunks read by threads
    finally:
        sys.setswitchinterval(interval)


@pytest.mark.parametrize("owns", [False, True])
def test_b2nd_array_closes_an_open_frame_it_is_given_to_own(b2nd_path: Path, owns: bool) -> None:
    frame = ContiguousFrame(b2nd_path)
    with B2ndArray(frame, owns_frame=owns) as array:
        assert array[ITEM] == ARRAY[ITEM]
    assert (frame._storage.source is None) == owns
    frame.close()
