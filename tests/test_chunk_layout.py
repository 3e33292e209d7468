"""The chunk header and layout walker against the golden Blosc2 corpus and hand-made bad chunks."""

from __future__ import annotations

import struct

import blosc
import blosc2
import numpy as np
import pytest
from conftest import DATA, load_manifest

from bloscpack.blosc import layout
from bloscpack.blosc.header import ChunkHeader, Special
from bloscpack.blosc.layout import ChunkKind, chunk_layout, validate_chunk
from bloscpack.errors import ChunkError, LazyChunkError, TruncatedError

MANIFEST = load_manifest("blosc2")
CHUNKS = [e for e in MANIFEST["entries"] if e["kind"] == "chunk"]
SPECIAL_NAMES = {"ZERO": Special.ZEROS, "NAN": Special.NAN, "VALUE": Special.VALUE,
                 "UNINIT": Special.UNINIT}  # fmt: skip


def read(entry: dict) -> bytes:
    return (DATA / "blosc2" / entry["path"]).read_bytes()


def by_name(name: str) -> bytes:
    return (DATA / "blosc2" / "chunks" / name).read_bytes()


@pytest.mark.parametrize("entry", CHUNKS, ids=[e["path"] for e in CHUNKS])
def test_header_round_trip_and_fields(entry: dict) -> None:
    data = read(entry)
    h = ChunkHeader.parse(data)
    assert h.pack() == data[: h.size]
    want = entry["header"]
    assert (h.version, h.versionlz, h.flags, h.typesize) == (
        want["version"], want["versionlz"], want["flags"], want["typesize"],
    )  # fmt: skip
    assert (h.nbytes, h.blocksize, h.cbytes, h.size) == (
        want["nbytes"], want["blocksize"], want["cbytes"], want["header_len"],
    )  # fmt: skip
    assert h.memcpyed == want["memcpyed"]
    assert (not h.split) == want["dont_split"]
    assert h.codec_format == want["codec_format"]
    assert h.lazy == want["lazy"]
    assert h.vl_blocks == want["vlblocks"]
    assert h.dictionary == want["use_dict"]
    special = SPECIAL_NAMES[want["special"]] if want["special"] else Special.NONE
    assert h.special == special
    if h.extended:
        assert list(h.filters) == want["filters"]
        assert list(h.filters_meta) == want["filters_meta"]
        assert (h.udcodec, h.compcode_meta) == (want["udcodec"], want["compcode_meta"])
        assert (h.blosc2_flags2, h.blosc2_flags) == (want["blosc2_flags2"], want["blosc2_flags"])


@pytest.mark.parametrize("entry", CHUNKS, ids=[e["path"] for e in CHUNKS])
def test_layout_matches_manifest(entry: dict) -> None:
    got = chunk_layout(read(entry)).as_dict()
    want = entry["layout"]
    if want is None:
        assert got is None
        return
    assert got is not None
    for key, value in want.items():
        if key == "blocks":
            assert [{k: b[k] for k in ("nbytes", "nstreams", "csizes")} for b in got[key]] == value
        else:
            assert got[key] == value, key


@pytest.mark.parametrize("entry", CHUNKS, ids=[e["path"] for e in CHUNKS])
def test_validate_corpus(entry: dict) -> None:
    data = read(entry)
    if entry["header"]["lazy"]:
        with pytest.raises(LazyChunkError, match="read the chunk from its frame"):
            validate_chunk(data)
    else:
        assert validate_chunk(data) == ChunkHeader.parse(data)


def test_layout_kinds_per_block() -> None:
    got = chunk_layout(by_name("mixed_streams.chunk"))
    assert got.kind == ChunkKind.REGULAR
    assert [[k.value for k in b.kinds] for b in got.blocks] == [
        ["zero_run"] * 4, ["byte_run"] * 4, ["raw"] * 4, ["compressed"] * 4,
    ]  # fmt: skip
    assert got.blocks[0].stream_offsets() == (52, 56, 60, 64)


def test_lazy_layout_is_described() -> None:
    got = chunk_layout(by_name("lazy_chunk1.chunk"))
    assert got.kind == ChunkKind.LAZY
    assert got.lazy is not None and got.lazy.offset == 4595


def _patch(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    b = bytearray(data)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


BAD = [
    ("m_zstd_shuffle.chunk", 3, "<B", 0, ChunkError, "typesize 0"),
    ("m_zstd_shuffle.chunk", 4, "<i", -5, ChunkError, "nbytes -5 out of range"),
    ("m_zstd_shuffle.chunk", 8, "<i", 0, ChunkError, "blocksize 0 out of range"),
    ("m_zstd_shuffle.chunk", 8, "<i", 16388, ChunkError, "blocksize 16388 larger than nbytes"),
    ("m_zstd_shuffle.chunk", 12, "<i", 20, ChunkError, "cbytes 20 smaller than its 32-byte header"),
    ("m_zstd_shuffle.chunk", 12, "<i", 99999, TruncatedError, "cbytes 99999, buffer has 4182"),
    ("m_zstd_shuffle.chunk", 0, "<B", 9, ChunkError, "header version 9"),
    ("m_zstd_shuffle.chunk", 2, "<B", 0xA5, ChunkError, "codec format 5"),
    ("m_zstd_shuffle.chunk", 31, "<B", 0x70, ChunkError, "special kind 7"),
    ("m_zstd_shuffle.chunk", 30, "<B", 0x01, ChunkError, "variable-length blocks need version 6"),
    ("m_zstd_shuffle.chunk", 32, "<i", 99999, ChunkError, r"bstarts\[0\] = 99999 beyond cbytes"),
    ("m_zstd_shuffle.chunk", 32, "<i", 20, ChunkError, r"bstarts\[0\] = 20 before the stream"),
    ("m_zstd_shuffle.chunk", 36, "<i", 5000, ChunkError, "stream 0: csize 5000 at 36 runs beyond"),
    ("m_zstd_shuffle.chunk", 36, "<i", -256, ChunkError, "run value 256 out of range"),
    ("clevel0_memcpy.chunk", 4, "<i", 3999, ChunkError, "cbytes 4032 != nbytes 3999"),
    ("special_zeros.chunk", 12, "<i", 36, ChunkError, "zeros chunk: cbytes 36, expected 32"),
    ("special_nan_f32.chunk", 4, "<i", 4002, ChunkError, "nbytes 4002 not a multiple of type"),
    ("special_uninit.chunk", 4, "<i", 4002, ChunkError, "nbytes 4002 not a multiple of type"),
    ("special_zeros.chunk", 2, "<B", 0x07, ChunkError, "also say memcpyed"),
    ("special_value_i32.chunk", 3, "<B", 2, ChunkError, "typesize 2 but a 4-byte value"),
    ("special_value_i32.chunk", 4, "<i", 4002, ChunkError, "not a multiple of the 4-byte value"),
    ("blosc1_lz4_noshuffle.chunk", 2, "<B", 0x25, ChunkError, "set both shuffle and bitshuffle"),
    ("dict_zstd.chunk", 64, "<i", 0, ChunkError, "dictionary size 0 out of range"),
    ("dict_zstd.chunk", 64, "<i", 200000, ChunkError, "dictionary size 200000 out of range"),
    ("dict_zstd.chunk", 64, "<i", 17000, ChunkError, "17000-byte dictionary at 68 runs beyond"),
    ("dict_zstd.chunk", 64, "<i", 4000, ChunkError, r"bstarts\[0\] = 3235 before the stream"),
    ("vlblocks.chunk", 36, "<i", 54, ChunkError, r"bstarts\[0\] = 52 leaves -2 bytes before 54"),
    ("vlblocks.chunk", 52, "<i", 100, ChunkError, "block 0 nbytes 100 with 433 stored bytes"),
    ("vlblocks.chunk", 52, "<i", 3001, ChunkError, "blocks hold 4803 bytes, nbytes says 4802"),
    ("vlblocks.chunk", 8, "<i", 99999, ChunkError, "bstarts up to byte 400028"),
    ("split_always.chunk", 40, "<i", 48, ChunkError, "block 0 .bytes 48..2113. overlaps block 2"),
    ("delta_only_lz4.chunk", 8, "<i", 1, ChunkError, "10000 blocks need bstarts"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "offset", "fmt", "value", "error", "message"), BAD,
                         ids=[b[5] for b in BAD])  # fmt: skip
def test_validate_names_the_field(name: str, offset: int, fmt: str, value: int,
                                  error: type, message: str) -> None:  # fmt: skip
    bad = _patch(by_name(name), offset, fmt, value)
    with pytest.raises(error, match=message):
        validate_chunk(bad)
    with pytest.raises(error, match=message):
        chunk_layout(bad)


def test_run_token_other_than_one_is_rejected() -> None:
    data = bytearray(by_name("run_byte7_ts1.chunk"))
    assert data[48] == 1  # block 0: csize -7 at 44, token at 48
    data[48] = 3
    with pytest.raises(ChunkError, match="block 0 stream 0: run token 3 at 48"):
        validate_chunk(bytes(data))


def test_truncated_lazy_chunk() -> None:
    with pytest.raises(TruncatedError, match="4 blocks need 76 bytes, buffer has 70"):
        validate_chunk(by_name("lazy_chunk1.chunk")[:70])


def test_short_buffers() -> None:
    with pytest.raises(TruncatedError, match="a header needs 16"):
        validate_chunk(b"\x05\x01")
    with pytest.raises(TruncatedError, match="its header needs 32"):
        validate_chunk(by_name("m_zstd_shuffle.chunk")[:20])


def _threaded_blosc1_chunk() -> bytes:
    """A multi-block Blosc1 chunk whose blocks are stored out of order, as threads write them."""
    data = np.arange(100_000, dtype=np.int64).tobytes()
    blosc.set_blocksize(8192)  # C-Blosc 1.x makes it 64 KiB
    nthreads = blosc.set_nthreads(1)
    try:
        chunk = blosc.compress(data, typesize=8, clevel=5, shuffle=blosc.SHUFFLE, cname="lz4")
    finally:
        blosc.set_blocksize(0)
        blosc.set_nthreads(nthreads)
    h = ChunkHeader.parse(chunk)
    assert h.nblocks == 13
    starts = list(struct.unpack_from(f"<{h.nblocks}i", chunk, 16))
    ends = [*starts[1:], h.cbytes]
    blocks = [chunk[s:e] for s, e in zip(starts, ends, strict=True)]
    order = list(range(h.nblocks))[::-1]  # store the blocks last to first
    body, new_starts, pos = b"", [0] * h.nblocks, 16 + 4 * h.nblocks
    for i in order:
        new_starts[i] = pos
        body += blocks[i]
        pos += len(blocks[i])
    return chunk[:16] + struct.pack(f"<{h.nblocks}i", *new_starts) + body


def test_blocks_in_any_order_are_accepted() -> None:
    chunk = _threaded_blosc1_chunk()
    validate_chunk(chunk)
    assert blosc.decompress(chunk) == np.arange(100_000, dtype=np.int64).tobytes()
    starts = chunk_layout(chunk).bstarts
    assert list(starts) == sorted(starts, reverse=True)


@pytest.mark.parametrize("threshold", [1, 10**9])
def test_vector_and_scalar_walks_agree(monkeypatch: pytest.MonkeyPatch, threshold: int) -> None:
    """Both stream walkers accept good chunks and name the same first problem in bad ones."""
    monkeypatch.setattr(layout, "_VECTOR_MIN_STREAMS", threshold)
    good = blosc2.compress2(np.arange(20000, dtype=np.int32), typesize=4, blocksize=1024,
                            splitmode=blosc2.SplitMode.ALWAYS_SPLIT)  # fmt: skip
    h = validate_chunk(good)
    assert h.nblocks == 79
    # block 40, stream 2: make its csize run past the end
    block40 = chunk_layout(good).blocks[40]
    offset = block40.stream_offsets()[2] - 4
    bad = _patch(bytes(good), offset, "<i", 10**6)
    with pytest.raises(ChunkError, match=f"block 40 stream 2: csize 1000000 at {offset} runs"):
        validate_chunk(bad)


@pytest.mark.parametrize("threshold", [1, 10**9])
def test_block_runs_check_only_their_blocks(
    monkeypatch: pytest.MonkeyPatch, threshold: int
) -> None:
    """validate_block_runs checks the streams of the runs' blocks (with either walker) and
    names a problem as validate_blocks does; blocks outside the runs are not read."""
    monkeypatch.setattr(layout, "_VECTOR_MIN_STREAMS", threshold)
    good = blosc2.compress2(np.arange(20000, dtype=np.int32), typesize=4, blocksize=1024,
                            splitmode=blosc2.SplitMode.ALWAYS_SPLIT)  # fmt: skip
    offset = chunk_layout(good).blocks[40].stream_offsets()[2] - 4
    bad = _patch(bytes(good), offset, "<i", 10**6)
    runs = [(0, 40), (41, 38)]  # the short last block (78) too
    assert layout.validate_block_runs(bad, runs).nblocks == 79
    with pytest.raises(ChunkError, match=f"block 40 stream 2: csize 1000000 at {offset} runs"):
        layout.validate_block_runs(bad, [(2, 3), (39, 2)])
    with pytest.raises(IndexError, match=r"blocks \[78, 80\) out of range for a chunk of 79"):
        layout.validate_block_runs(good, [(78, 2)])
