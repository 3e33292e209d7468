"""Special-value chunks and C-Blosc2's block sizing (stune), against C-Blosc2 and the corpus."""

from __future__ import annotations

import random
import struct

import blosc2
import numpy as np
import pytest
from conftest import DATA

from bloscpack.blosc.header import ChunkHeader, Special
from bloscpack.blosc.layout import validate_chunk
from bloscpack.blosc.special import (
    nan_chunk,
    special_chunk,
    split_block,
    stune_blocksize,
    uninit_chunk,
    value_chunk,
    zeros_chunk,
)
from bloscpack.chunks import decompress_chunk, decompress_chunk_items
from bloscpack.errors import ArgumentError, ChunkError

CODECS = {"blosclz": blosc2.Codec.BLOSCLZ, "lz4": blosc2.Codec.LZ4, "lz4hc": blosc2.Codec.LZ4HC,
          "zlib": blosc2.Codec.ZLIB, "zstd": blosc2.Codec.ZSTD}  # fmt: skip
MODES = {"always": blosc2.SplitMode.ALWAYS_SPLIT, "never": blosc2.SplitMode.NEVER_SPLIT,
         "auto": blosc2.SplitMode.AUTO_SPLIT,
         "forward_compat": blosc2.SplitMode.FORWARD_COMPAT_SPLIT}  # fmt: skip
FILTERS = ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 2], [0, 0, 0, 0, 3, 1])


def _cases(n: int) -> list[tuple]:
    rng = random.Random(20240601)
    cases = []
    while len(cases) < n:
        ts = rng.choice([1, 2, 3, 4, 8, 12, 16, 17, 32, 300])
        nbytes = rng.choice([rng.randint(32, 40_000), rng.randint(40_000, 3_000_000)])
        nbytes -= nbytes % ts
        if nbytes >= 32:
            cases.append((rng.choice(list(CODECS)), rng.choice(list(MODES)), ts, nbytes,
                          rng.randint(1, 9), rng.choice(FILTERS),
                          rng.choice([0, 0, 0, rng.randint(1, 70_000)])))  # fmt: skip
    return cases


@pytest.mark.parametrize(("codec", "mode", "ts", "nbytes", "clevel", "filters", "blocksize"),
                         _cases(150))  # fmt: skip
def test_stune_and_split_match_c_blosc2(codec: str, mode: str, ts: int, nbytes: int, clevel: int,
                                        filters: list[int], blocksize: int) -> None:  # fmt: skip
    chunk = blosc2.compress2(np.zeros(nbytes, np.uint8), typesize=ts, clevel=clevel,
                             codec=CODECS[codec], filters=filters, splitmode=MODES[mode],
                             blocksize=blocksize, nthreads=1)  # fmt: skip
    h = ChunkHeader.parse(chunk)
    assert stune_blocksize(nbytes, ts, clevel, codec, filters, mode, blocksize) == h.blocksize
    assert split_block(codec, clevel, min(ts, 255) if ts <= 255 else 1, h.blocksize, filters,
                       mode) == h.split  # fmt: skip


def test_stune_examples() -> None:
    mib = 1 << 20
    assert [stune_blocksize(mib, ts) for ts in (8, 4, 2)] == [524288, 262144, 131072]
    assert stune_blocksize(7, 8) == 1
    assert stune_blocksize(4000, 4) == 4000
    assert stune_blocksize(300_000, 300) == 130800
    assert stune_blocksize(600_000, 300, codec="zstd") == 261900


@pytest.mark.parametrize(("name", "build"), [
    ("special_zeros.chunk", lambda: zeros_chunk(4000, 4)),
    ("special_nan_f32.chunk", lambda: nan_chunk(4000, 4)),
    ("special_nan_f64.chunk", lambda: nan_chunk(4000, 8)),
    ("special_uninit.chunk", lambda: uninit_chunk(4000, 4)),
    ("special_value_i32.chunk", lambda: value_chunk(np.int32(-123456), 4000)),
    ("special_value_f64.chunk", lambda: value_chunk(np.float64(3.25), 4000)),
])  # fmt: skip
def test_builders_match_the_corpus(name: str, build: object) -> None:
    want = (DATA / "blosc2" / "chunks" / name).read_bytes()
    got = build()  # type: ignore[operator]
    if name.startswith("special_value"):  # the corpus value is whatever python-blosc2 was given
        got = value_chunk(want[32:], 4000)
    assert got == want


@pytest.mark.parametrize(("kind", "typesize"), [
    (kind, ts) for kind in (Special.ZEROS, Special.NAN, Special.UNINIT, Special.VALUE)
    for ts in (1, 2, 4, 8, 300) if kind != Special.NAN or ts in (4, 8)
])  # fmt: skip
def test_builders_match_synthesized_frame_chunks(kind: Special, typesize: int) -> None:
    """What an in-memory SChunk synthesises (python-blosc2's default cparams: zstd, auto)."""
    nitems = 3000
    schunk = blosc2.SChunk(chunksize=nitems * typesize, cparams=blosc2.CParams(typesize=typesize))
    value = bytes(range(1, typesize + 1)) if typesize < 256 else bytes(typesize)
    names = {Special.ZEROS: "ZERO", Special.NAN: "NAN", Special.UNINIT: "UNINIT",
             Special.VALUE: "VALUE"}  # fmt: skip
    special = getattr(blosc2.SpecialValue, names[kind])
    if kind == Special.VALUE:
        schunk.fill_special(nitems, special, value=np.frombuffer(value, f"V{typesize}")[0])
    else:
        schunk.fill_special(nitems, special)
    want = schunk.get_chunk(0)
    got = special_chunk(kind, nitems * typesize, typesize,
                        value=value if kind == Special.VALUE else None, codec="zstd",
                        splitmode="auto")  # fmt: skip
    assert got == want
    if kind != Special.UNINIT:
        assert bytes(decompress_chunk(got)) == blosc2.decompress2(want)
        items = decompress_chunk_items(got, 17, 5)
        size = ChunkHeader.parse(got).real_typesize  # typesize 300 is stored as 1 (not VALUE)
        assert bytes(items) == blosc2.decompress2(want)[17 * size : 22 * size]


def test_one_mib_zero_chunk() -> None:
    chunk = zeros_chunk(1 << 20, 8)
    assert chunk.hex() == "05010508" + "00001000" + "00000800" + "20000000" + "00" * 15 + "10"
    out = np.ones(1 << 17, np.float64)
    decompress_chunk(chunk, out)
    assert not out.any()


@pytest.mark.parametrize("nbytes", [101, 7, 1, 4095])
def test_zeros_chunk_of_partial_items_from_c_blosc2(nbytes: int) -> None:
    """C-Blosc2 compresses zero bytes that end in a partial item into a zeros chunk and decodes
    every byte of it (and items, the whole ones); so do we."""
    chunk = blosc2.compress2(bytes(nbytes), typesize=8)
    header = validate_chunk(chunk)
    if nbytes < 8:  # too short for zero detection: stored as an ordinary chunk
        assert header.special == Special.NONE
    else:
        assert (header.special, header.typesize, header.nbytes) == (Special.ZEROS, 8, nbytes)
    out = bytearray(b"\xaa" * nbytes)
    decompress_chunk(chunk, out)
    assert bytes(out) == bytes(nbytes) == blosc2.decompress2(chunk)
    whole = nbytes // 8
    if whole:
        assert bytes(decompress_chunk_items(chunk, 0, whole)) == bytes(8 * whole)
    with pytest.raises(ArgumentError, match=f"items \\[{whole}, {whole + 1}\\) out of range"):
        decompress_chunk_items(chunk, whole, 1)


def test_only_zeros_chunks_may_end_in_a_partial_item() -> None:
    """C-Blosc2 refuses to decode NaN, uninitialized and value chunks of partial items."""
    for kind, value in ((Special.NAN, b""), (Special.UNINIT, b""), (Special.VALUE, b"\x11" * 8)):
        chunk = bytearray(special_chunk(kind, 96, 8, value=value or None))
        struct.pack_into("<i", chunk, 4, 101)
        with pytest.raises(ChunkError, match="nbytes 101 not a multiple of"):
            validate_chunk(chunk)
    chunk = bytearray(zeros_chunk(96, 8))
    struct.pack_into("<i", chunk, 4, 101)
    assert bytes(decompress_chunk(chunk)) == bytes(101)


def test_builder_arguments() -> None:
    with pytest.raises(ArgumentError, match="NaN chunks need typesize 4 or 8, got 2"):
        nan_chunk(40, 2)
    with pytest.raises(ArgumentError, match="nbytes 10 is not a multiple of typesize 4"):
        zeros_chunk(10, 4)
    with pytest.raises(ArgumentError, match="needs a 4-byte value"):
        special_chunk(Special.VALUE, 40, 4, value=b"ab")
    with pytest.raises(ArgumentError, match="takes no value"):
        special_chunk(Special.ZEROS, 40, 4, value=b"abcd")
    with pytest.raises(ArgumentError, match="not NONE"):
        special_chunk(Special.NONE, 40, 4)
    assert ChunkHeader.parse(zeros_chunk(4096, 4, blocksize=1024)).blocksize == 1024
