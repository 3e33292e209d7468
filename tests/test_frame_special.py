"""Special chunks in frames against python-blosc2: the chunks C-Blosc2 synthesizes for index
markers, ``fill_special`` / ``update_special``, and appends of special chunks, byte for byte."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import blosc2
import numpy as np
import pytest

from bloscpack import Frame
from bloscpack.blosc.header import ChunkHeader, Special
from bloscpack.blosc.special import nan_chunk, uninit_chunk, value_chunk, zeros_chunk
from bloscpack.containers.schunk import edit, records
from bloscpack.errors import BloscpackError

blosc2.set_nthreads(1)
KINDS = {"zeros": blosc2.SpecialValue.ZERO, "nan": blosc2.SpecialValue.NAN,
         "uninit": blosc2.SpecialValue.UNINIT}  # fmt: skip
CODECS = {"zstd": blosc2.Codec.ZSTD, "lz4hc": blosc2.Codec.LZ4HC, "blosclz": blosc2.Codec.BLOSCLZ}
# (codec, clevel, typesize, blocksize, chunksize)
SETTINGS = [
    ("zstd", 5, 4, 0, 4000),
    ("lz4hc", 9, 4, 0, 1 << 20),
    ("blosclz", 1, 8, 0, 1 << 20),
    ("zstd", 5, 4, 1001, 40_000),
    ("zstd", 3, 2, 0, 6000),
]


def snapshot(path: Path) -> dict[str, bytes]:
    if path.is_dir():
        return {name: (path / name).read_bytes() for name in sorted(os.listdir(path))}
    return {"": path.read_bytes()}


def pair(tmp_path: Path, sparse: bool, setting: tuple, **extra: object) -> tuple:
    """A python-blosc2 SChunk and a Frame made with the same parameters."""
    codec, clevel, ts, blocksize, chunksize = setting
    theirs, ours = tmp_path / "theirs.b2frame", tmp_path / "ours.b2frame"
    for path in (theirs, ours):
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    cp = blosc2.CParams(typesize=ts, codec=CODECS[codec], clevel=clevel, blocksize=blocksize,
                        nthreads=1)  # fmt: skip
    s = blosc2.SChunk(chunksize=chunksize, urlpath=str(theirs), contiguous=not sparse, cparams=cp,
                      **extra)  # fmt: skip
    f = Frame(ours, "w", sparse=sparse, typesize=ts, codec=codec, clevel=clevel,
              blocksize=blocksize, chunksize=chunksize, **extra)  # fmt: skip
    return s, f, theirs, ours


def compare(f: Frame, ours: Path, s: blosc2.SChunk, theirs: Path, chunks: bool = True) -> None:
    f.flush()
    assert snapshot(ours) == snapshot(theirs)
    assert f.nchunks == s.nchunks
    for i in range(s.nchunks if chunks else 0):
        assert f.read_chunk(i) == s.get_chunk(i)


@pytest.mark.parametrize("sparse", [False, True], ids=["contiguous", "sparse"])
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s[0]}{s[1]}-ts{s[2]}-bs{s[3]}")
@pytest.mark.parametrize("kind", ["zeros", "nan", "uninit"])
def test_fill_special_markers_equal_blosc2(tmp_path: Path, sparse: bool, setting: tuple,
                                           kind: str) -> None:  # fmt: skip
    ts, chunksize = setting[2], setting[4]
    nitems = (3 * chunksize) // ts + 100
    s, f, theirs, ours = pair(tmp_path, sparse, setting, meta={"m": [1, 2]})
    assert f.fill_special(nitems, kind) == s.fill_special(nitems, KINDS[kind]) == 4
    compare(f, ours, s, theirs)
    index = f.info()["index"]
    marker = records.SPECIAL_MARKERS[edit.SPECIAL_KINDS[kind]]
    assert index == [f"0x{marker & (2**64 - 1):016x}"] * 4
    assert f.cbytes == 0 and f.nbytes == nitems * ts
    sample = records.forced_blocksize(chunksize, ts, setting[3], **f._core.cparams.stune())
    assert f.header["blocksize"] == sample and f.cparams["blocksize"] == setting[3]
    chunk = blosc2.compress2(np.arange(chunksize // ts, dtype=f"<u{ts}"), cparams=s.cparams)
    f.append_chunk(chunk)
    s.append_chunk(chunk)
    compare(f, ours, s, theirs, chunks=False)
    assert f.chunksize == 0  # after a short chunk, as in C-Blosc2
    f.close()
    with Frame(ours) as g:
        assert g.read_chunk(4) == s.get_chunk(4)
        assert g.cparams["blocksize"] == sample  # reopened: the header's, as python-blosc2
        # neither can give a marker's chunk once the chunk size is variable
        with pytest.raises(BloscpackError, match="variable-chunksize frame"):
            g.read_chunk(0)
        with pytest.raises(RuntimeError):
            s.get_chunk(0)


@pytest.mark.parametrize("sparse", [False, True], ids=["contiguous", "sparse"])
@pytest.mark.parametrize("value", [np.int32(-7), 3, 2.5, b"\x01\x02\x03\x04"], ids=repr)
def test_fill_special_value_equals_blosc2(tmp_path: Path, sparse: bool, value: object) -> None:
    s, f, theirs, ours = pair(tmp_path, sparse, ("lz4hc", 9, 4, 0, 1 << 20))
    nitems = 300_000
    blosc2_value = np.frombuffer(value, np.int32)[0] if isinstance(value, bytes) else value
    assert f.fill_special(nitems, value) == s.fill_special(nitems, blosc2.SpecialValue.VALUE,
                                                           value=blosc2_value) == 2  # fmt: skip
    compare(f, ours, s, theirs)
    assert np.array_equal(
        np.frombuffer(f.read_all(), np.int32 if not isinstance(value, float) else np.float32),
        np.frombuffer(s[:], np.int32 if not isinstance(value, float) else np.float32),
    )
    f.close()


def test_data_after_fill_special_compressed_like_the_live_schunk(tmp_path: Path) -> None:
    """fill_special sets the header blocksize (16 KiB for blosclz/1, typesize 32) but new
    chunks of the same session keep the automatic blocksize: a 20 000-byte chunk is one
    block.  Reopened, the header's blocksize applies (two blocks)."""
    data = np.arange(20_000, dtype=np.uint8)
    for reopen in (False, True):
        s, f, theirs, ours = pair(tmp_path, False, ("blosclz", 1, 32, 0, 1 << 20))
        f.fill_special(40_000, "zeros")
        s.fill_special(40_000, blosc2.SpecialValue.ZERO)
        if reopen:
            f.close()
            del s
            s, f = blosc2.open(str(theirs), mode="a"), Frame(ours, "a")
        assert f.header["blocksize"] == 16384
        assert f.cparams["blocksize"] == (16384 if reopen else 0)
        f.append_data(data)
        s.append_data(data)
        compare(f, ours, s, theirs, chunks=False)
        assert ChunkHeader.parse(f.read_chunk(2)).blocksize == (16384 if reopen else 20_000)
        f.close()
        del s


def test_fill_special_small_and_large_index(tmp_path: Path) -> None:
    for nchunks in (1, 3000):
        s, f, theirs, ours = pair(tmp_path, False, ("zstd", 5, 4, 0, 40), meta={"m": 1})
        s.vlmeta["v"] = 5
        f.vlmeta["v"] = 5
        f.fill_special(10 * nchunks, "uninit")
        s.fill_special(10 * nchunks, blosc2.SpecialValue.UNINIT)
        compare(f, ours, s, theirs)
        f.close()
        with Frame(ours) as g:
            assert g.nchunks == nchunks and g.vlmeta["v"] == 5


def test_fill_special_in_memory_frame() -> None:
    s = blosc2.SChunk(chunksize=8000, contiguous=True, cparams=blosc2.CParams(typesize=8))
    s.fill_special(2500, blosc2.SpecialValue.NAN)
    with Frame(None, "w", typesize=8, chunksize=8000, nthreads=s.cparams.nthreads) as f:
        f.fill_special(2500, "nan")
        assert f.to_bytes() == s.to_cframe()
        assert np.isnan(np.frombuffer(f.read_all(), np.float64)).all()


def test_fill_special_arguments(tmp_path: Path) -> None:
    with Frame(None, "w", typesize=4) as f:
        with pytest.raises(ValueError, match="fill_special needs a chunk size"):
            f.fill_special(10)
        with pytest.raises(ValueError, match="special kind must be one of zeros, nan, uninit"):
            f.fill_special(10, "ones", chunksize=400)
        with pytest.raises(ValueError, match="value has 2 bytes, the frame's typesize is 4"):
            f.fill_special(10, b"ab", chunksize=400)
        with pytest.raises(ValueError, match="multiple of typesize 4"):
            f.fill_special(10, chunksize=402)
        assert f.fill_special(0, chunksize=400) == 0 and f.nchunks == 0
        with pytest.raises(ValueError, match=r"fill_special of 10000000 chunks: at most 8388608"):
            f.fill_special(10**9, chunksize=400)
        assert f.fill_special(250, chunksize=400) == 3
        assert f.chunksize == 400 and f.nbytes == 1000
        with pytest.raises(ValueError, match="fill_special needs an empty frame"):
            f.fill_special(10)
    with (
        Frame(None, "w", typesize=4, chunksize=400) as f,
        pytest.raises(ValueError, match="chunksize 800 differs from the frame's 400"),
    ):
        f.fill_special(10, chunksize=800)
    frame = Frame(tmp_path / "ro.b2frame", "w", typesize=4, chunksize=400)
    frame.close()
    with Frame(tmp_path / "ro.b2frame") as f, pytest.raises(PermissionError, match="read-only"):
        f.fill_special(10)


@pytest.mark.parametrize("sparse", [False, True], ids=["contiguous", "sparse"])
def test_update_special_equals_blosc2(tmp_path: Path, sparse: bool) -> None:
    s, f, theirs, ours = pair(tmp_path, sparse, ("zstd", 5, 4, 0, 4000))
    for k in range(4):
        data = (np.arange(1000 if k < 3 else 500, dtype=np.int32) * (k + 3)) % 101
        s.append_data(data)
        f.append_data(data)
    compare(f, ours, s, theirs)
    steps = [(1, "zeros", blosc2.SpecialValue.ZERO, None),
             (3, "nan", blosc2.SpecialValue.NAN, None),
             (0, "uninit", blosc2.SpecialValue.UNINIT, None),
             (2, np.int32(9), blosc2.SpecialValue.VALUE, np.int32(9)),
             (1, 5, blosc2.SpecialValue.VALUE, 5),  # after a marker: stored anew
             (3, "zeros", blosc2.SpecialValue.ZERO, None)]  # fmt: skip
    for pos, kind, theirs_kind, value in steps:
        assert f.update_special(pos, kind) == s.update_special(pos, theirs_kind, value=value)
        compare(f, ours, s, theirs)
    assert bytes(f.decompress_chunk(1)) == np.full(1000, 5, np.int32).tobytes()
    assert f.chunk_nbytes(3) == 2000
    f.close()


@pytest.mark.parametrize("sparse", [False, True], ids=["contiguous", "sparse"])
def test_special_chunks_appended_inserted_updated_as_markers(tmp_path: Path, sparse: bool) -> None:
    """C-Blosc2 stores zeros / NaN / uninit chunks as index markers and keeps repeated-value
    chunks (and chunks that merely hold zeros but are not marked special) as data."""
    s, f, theirs, ours = pair(tmp_path, sparse, ("zstd", 5, 4, 0, 4000))
    regular = blosc2.compress2(np.arange(1000, dtype=np.int32), typesize=4)
    chunks = [
        ("append", nan_chunk(4000, 4)),
        ("append", uninit_chunk(4000, 4)),
        ("append", zeros_chunk(4000, 4)),
        ("append", value_chunk(np.int32(3), 4000)),
        ("append", blosc2.compress2(np.zeros(1000, np.int32), typesize=4)),  # automatic zeros
        ("append", regular),
        ("insert", nan_chunk(4000, 4)),
        ("update", uninit_chunk(4000, 4)),
    ]
    for op, chunk in chunks:
        if op == "append":
            f.append_chunk(chunk)
            s.append_chunk(chunk)
        elif op == "insert":
            f.insert_chunk(2, chunk)
            s.insert_chunk(2, chunk)
        else:
            f.update_chunk(5, chunk)
            s.update_chunk(5, chunk)
        compare(f, ours, s, theirs)
    kinds = [ChunkHeader.parse(f.read_chunk(i)).special for i in range(f.nchunks)]
    assert kinds == [Special.NAN, Special.UNINIT, Special.NAN, Special.ZEROS, Special.VALUE,
                     Special.UNINIT, Special.NONE]  # fmt: skip
    assert [x < 0 for x in f.offsets] == [True] * 4 + [False, True, False]
    f.close()


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s[0]}{s[1]}-ts{s[2]}-bs{s[3]}")
def test_synthesized_chunks_use_c_default_cparams(tmp_path: Path, setting: tuple) -> None:
    """C-Blosc2 synthesizes a marker's chunk with its default cparams (blosclz, clevel 5) and
    the frame's typesize and blocksize field, whatever the frame's codec."""
    codec, clevel, ts, blocksize, chunksize = setting
    cp = blosc2.CParams(typesize=ts, codec=CODECS[codec], clevel=clevel, blocksize=blocksize,
                        nthreads=1)  # fmt: skip
    path = tmp_path / "theirs.b2frame"
    s = blosc2.SChunk(chunksize=chunksize, urlpath=str(path), contiguous=True, cparams=cp)
    s.append_chunk(blosc2.compress2(np.zeros(chunksize, np.uint8), cparams=cp))
    s.append_chunk(zeros_chunk(chunksize // 2 - (chunksize // 2) % ts, ts))
    with Frame(path) as f:
        assert [f.read_chunk(i) for i in range(2)] == [s.get_chunk(i) for i in range(2)]
    rounded = records.synthesized_chunk(Special.ZEROS, 4000, 4, 1001)
    assert ChunkHeader.parse(rounded).blocksize == 1000


def test_nan_markers_of_other_typesizes_read_like_c(tmp_path: Path) -> None:
    path = tmp_path / "nan2.b2frame"
    s = blosc2.SChunk(chunksize=4000, urlpath=str(path), contiguous=True,
                      cparams=blosc2.CParams(typesize=2))  # fmt: skip
    s.fill_special(2500, blosc2.SpecialValue.NAN)
    with Frame(path) as f:
        assert f.read_chunk(0) == s.get_chunk(0)
        with pytest.raises(BloscpackError, match="only 4 and 8 decode"):
            f.decompress_chunk(0)
    with Frame(None, "w", typesize=2, chunksize=4000) as f:
        f.fill_special(2500, "nan")
        assert f.read_chunk(1) == s.get_chunk(1)
