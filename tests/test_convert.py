"""bloscpack.convert: every pair of formats, dtypes and shapes, chunk copies without
recompression (stored bytes compared), metadata kept or reported, outputs read by the real
tools (python-blosc2, bcolz, bloscpack 0.16), and failures that leave nothing behind."""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path

import blosc2
import numpy as np
import pytest

import bloscpack
from bloscpack import api, engine
from bloscpack.blosc.header import FILTER_IDS, ChunkHeader
from bloscpack.containers import registry
from bloscpack.containers.bloscpack import BloscpackReader, read_metadata_section
from bloscpack.containers.frame.api import Frame
from bloscpack.convert import convert
from bloscpack.dispatch import compress_file, detect, save
from bloscpack.errors import (
    ArgumentError,
    BloscpackError,
    ChecksumMismatch,
    FileNotFound,
    OutputExistsError,
    UnsupportedError,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    bcolz = pytest.importorskip("bcolz")

FORMATS = ["blp", "b2frame", "sframe", "b2nd", "b2nd-sparse", "bcolz"]


def _format_options(fmt: str) -> tuple[str, dict]:
    """(format, options) for a test format name (``b2nd-sparse`` = b2nd with sparse=True)."""
    if fmt == "b2nd-sparse":
        return "b2nd", {"sparse": True}
    if fmt == "bcolz":
        return "bcolz", {"durable": False}
    return fmt, {}


def make_source(array: np.ndarray, fmt: str, path: Path) -> Path:
    """Write ``array`` in ``fmt`` with the format's own writer (frames via python-blosc2)."""
    if fmt in ("b2frame", "sframe"):
        schunk = blosc2.SChunk(
            chunksize=max(array.dtype.itemsize, 1) * 1000, data=nbytes_of(array),
            urlpath=str(path), contiguous=fmt == "b2frame", mode="w",
            cparams=blosc2.CParams(typesize=max(array.dtype.itemsize, 1), nthreads=1),
        )  # fmt: skip
        for key, value in bloscpack_numpy_metadata(array).items():
            schunk.vlmeta[key] = value
        del schunk
    elif fmt == "b2nd-sparse":
        save(array, path, format="b2nd", sparse=True)
    elif fmt == "bcolz":
        save(array, path, format="bcolz", durable=False)
    else:
        save(array, path, format=fmt)
    return path


def bloscpack_numpy_metadata(array: np.ndarray) -> dict:
    from bloscpack import ndarray as nd

    return nd.encode_metadata(array)


def nbytes_of(array: np.ndarray) -> bytes:
    """The array's bytes in its memory order (what flat formats store)."""
    return np.asarray(array).tobytes(order="F" if is_fortran(array) else "C")


def is_fortran(array: np.ndarray) -> bool:
    return array.flags.f_contiguous and not array.flags.c_contiguous


def read_back(path: Path) -> np.ndarray:
    """The array at ``path`` through bloscpack's own reader."""
    with bloscpack.open(path) as arr:
        return np.asarray(arr)


def schunk_bytes(path: Path) -> bytes:
    """The data of a frame as python-blosc2 decompresses it, chunk by chunk (its slicing
    crashes on frames of variable-size chunks)."""
    schunk = blosc2.open(str(path))
    return b"".join(bytes(schunk.decompress_chunk(i)) for i in range(schunk.nchunks))


def read_with_real_tool(path: Path, fmt: str) -> tuple[np.ndarray | bytes, dict]:
    """(data, user metadata) as python-blosc2 or bcolz reads them."""
    if fmt in ("b2frame", "sframe"):
        schunk = blosc2.open(str(path))
        return schunk_bytes(path), dict(schunk.vlmeta.getall())
    if fmt.startswith("b2nd"):
        arr = blosc2.open(str(path))
        return arr[()] if arr.ndim == 0 else arr[:], dict(arr.schunk.vlmeta.getall())
    table = bcolz.open(str(path), mode="r")
    return table[:], dict(table.attrs.attrs)


def assert_same_array(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(expected).tobytes()


def assert_real_tool_reads(path: Path, fmt: str, expected: np.ndarray) -> None:
    """python-blosc2 or bcolz read ``expected`` (``.blp`` outputs: bloscpack 0.16, batched)."""
    if fmt == "blp":
        return
    data, _ = read_with_real_tool(path, fmt)
    if fmt in ("b2frame", "sframe"):
        assert data == nbytes_of(expected)
    else:
        assert_same_array(np.asarray(data), expected)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def leftovers(directory: Path, keep: set[str]) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name not in keep)


@pytest.fixture(autouse=True)
def one_thread():
    previous = engine.set_nthreads(1)
    yield
    engine.set_nthreads(previous)


# --- every pair of formats ----------------------------------------------------------------

PAIR_ARRAY = np.arange(6000, dtype="<i4").reshape(1500, 4) * 3


@pytest.mark.parametrize("target", FORMATS)
@pytest.mark.parametrize("source", FORMATS)
def test_every_pair_of_formats(tmp_path, source, target):
    src = make_source(PAIR_ARRAY, source, tmp_path / "src")
    fmt, options = _format_options(target)
    report = convert(src, tmp_path / "out", format=fmt, **options)
    assert report["format"] == fmt
    assert report["source_format"] == detect(src)
    assert report["dropped"] == []
    assert report["copied_chunks"] + report["recompressed_chunks"] >= 1
    assert detect(tmp_path / "out") == ("b2nd" if target == "b2nd-sparse" else fmt)
    assert_same_array(read_back(tmp_path / "out"), PAIR_ARRAY)
    assert_real_tool_reads(tmp_path / "out", target, PAIR_ARRAY)
    assert leftovers(tmp_path, {"src", "out"}) == []


def test_every_format_to_blp_is_read_by_bloscpack_016(bloscpack016, tmp_path):
    expected = {}
    for source in FORMATS:
        src = make_source(PAIR_ARRAY, source, tmp_path / f"{source}.src")
        convert(src, tmp_path / f"{source}.blp")
        expected[str(tmp_path / f"{source}.blp")] = PAIR_ARRAY
    assert_016_reads(bloscpack016, expected)


ORACLE_READ = """
import json, sys, hashlib, numpy
out = {}
for path in sys.argv[1:]:
    a = bloscpack.unpack_ndarray_from_file(path)
    out[path] = [a.dtype.str if a.dtype.fields is None else str(a.dtype.descr), list(a.shape),
                 bool(numpy.isfortran(a)),
                 hashlib.sha256(numpy.ascontiguousarray(a).tobytes()).hexdigest()]
print(json.dumps(out))
"""


def assert_016_reads(bloscpack016, expected: dict[str, np.ndarray]) -> None:
    result = json.loads(bloscpack016.run(ORACLE_READ, *expected).stdout)
    for path, array in expected.items():
        dtype = array.dtype.str if array.dtype.fields is None else str(array.dtype.descr)
        assert result[path] == [
            dtype, list(array.shape), bool(np.isfortran(array)),
            sha(np.ascontiguousarray(array).tobytes()),
        ], path  # fmt: skip


# --- dtypes and shapes --------------------------------------------------------------------


def _arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    struct = np.zeros(700, dtype=[("a", "<i4"), ("b", "<f8"), ("c", "S3")])
    struct["a"] = np.arange(700)
    struct["b"] = rng.random(700)
    struct["c"] = [str(i % 97).encode() for i in range(700)]
    nested = np.zeros(300, dtype=[("x", "<u2"), ("v", "<f4", (3,))])
    nested["x"] = np.arange(300)
    nested["v"] = rng.random((300, 3))
    return {
        "i4_1d": np.arange(10001, dtype="<i4"),
        "f8_2d": rng.random((120, 70)),
        "f4_fortran": np.asfortranarray(rng.random((50, 41)).astype("<f4")),
        "u1_3d": rng.integers(0, 255, (7, 8, 9), dtype=np.uint8),
        "zero_d": np.array(3.5),
        "empty_1d": np.empty(0, dtype="<f8"),
        "empty_rows": np.empty((3, 0), dtype="<i2"),
        "big_endian": np.arange(1000, dtype=">i4"),
        "bytes_S5": np.array([b"ab", b"cdefg", b""] * 100, dtype="S5"),
        "unicode_U3": np.array(["x", "yz", "\u00e9\u00e8\u00ea"] * 100, dtype="<U3"),
        "bool": rng.random(999) > 0.5,
        "datetime": np.arange(0, 5000, 7, dtype="datetime64[ns]"),
        "complex": (rng.random(300) + 1j * rng.random(300)).astype("<c16"),
        "structured": struct,
        "nested": nested,
    }


ARRAYS = _arrays()
# what bcolz cannot hold: a 0-d array and rows of no bytes
BCOLZ_REFUSES = {"zero_d", "empty_rows"}


@pytest.mark.parametrize("target", FORMATS)
@pytest.mark.parametrize("name", list(ARRAYS))
def test_dtypes_and_shapes(tmp_path, name, target):
    array = ARRAYS[name]
    src = tmp_path / "src.blp"
    save(array, src)
    fmt, options = _format_options(target)
    out = tmp_path / "out"
    if target == "bcolz" and name in BCOLZ_REFUSES:
        with pytest.raises(ArgumentError):
            convert(src, out, format=fmt, **options)
        assert leftovers(tmp_path, {"src.blp"}) == []
        return
    report = convert(src, out, format=fmt, **options)
    back = read_back(out)
    assert_same_array(back, array)
    keeps_order = fmt in ("blp", "b2frame", "sframe")
    if is_fortran(array) and array.ndim > 1:
        assert is_fortran(back) == keeps_order
        assert report["dropped"] == ([] if keeps_order else [
            f"Fortran order: {fmt} arrays are C-ordered (values are kept)"
        ])  # fmt: skip
    else:
        assert report["dropped"] == []
    if target == "bcolz" and array.dtype.names:
        assert sorted(os.listdir(out)) == sorted([*array.dtype.names, "__attrs__", "__rootdirs__"])
        table = bcolz.open(str(out), mode="r")
        for field in array.dtype.names:
            np.testing.assert_array_equal(table.cols[field][:], array[field])
    elif target in ("b2frame", "sframe") or target.startswith("b2nd") or target == "bcolz":
        assert_real_tool_reads(out, target, array)


def test_dtypes_and_shapes_to_blp_are_read_by_bloscpack_016(bloscpack016, tmp_path):
    expected = {}
    for name, array in ARRAYS.items():
        for source in ("b2nd", "b2frame"):
            src = tmp_path / f"{name}.{source}"
            save(array, tmp_path / f"{name}.blp")
            convert(tmp_path / f"{name}.blp", src, format=source)
            out = tmp_path / f"{name}.{source}.blp"
            convert(src, out)
            expected[str(out)] = (
                array if source == "b2frame" else np.require(array, requirements="C")
            )
    assert_016_reads(bloscpack016, expected)


def test_ctable_to_every_format_and_back(tmp_path):
    array = ARRAYS["structured"]
    bcolz.ctable(array, rootdir=str(tmp_path / "t.bcolz"))
    for target in FORMATS:
        fmt, options = _format_options(target)
        convert(tmp_path / "t.bcolz", tmp_path / target, format=fmt, **options)
        assert_same_array(read_back(tmp_path / target), array)
        convert(tmp_path / target, tmp_path / f"{target}.bcolz", format="bcolz", durable=False)
        table = bcolz.open(str(tmp_path / f"{target}.bcolz"), mode="r")
        assert table.names == ["a", "b", "c"]
        assert_same_array(table[:], array)


def test_raw_bytes_keep_their_metadata_through_a_frame(tmp_path):
    payload = bytes(range(256)) * 1000
    api.pack_bytes_to_file(payload, tmp_path / "raw.blp", metadata={"name": "x", "n": [1, 2]})
    report = convert(tmp_path / "raw.blp", tmp_path / "raw.b2frame")
    assert report["dropped"] == []
    schunk = blosc2.open(str(tmp_path / "raw.b2frame"))
    assert bytes(schunk[:]) == payload
    assert schunk.vlmeta.getall() == {"name": "x", "n": [1, 2]}  # no numpy keys: raw bytes
    convert(tmp_path / "raw.b2frame", tmp_path / "back.blp")
    assert api.unpack_bytes_from_file(tmp_path / "back.blp") == (
        payload,
        {"name": "x", "n": [1, 2]},
    )


def test_raw_bytes_with_list_metadata(tmp_path):
    api.pack_bytes_to_file(b"abc" * 100, tmp_path / "raw.blp", metadata=[1, "two"])
    convert(tmp_path / "raw.blp", tmp_path / "copy.blp")
    assert api.unpack_bytes_from_file(tmp_path / "copy.blp") == (b"abc" * 100, [1, "two"])
    report = convert(tmp_path / "raw.blp", tmp_path / "raw.b2nd")
    assert report["dropped"] == [
        "metadata [1, 'two']: only the .blp format holds metadata that is not a mapping"
    ]
    np.testing.assert_array_equal(blosc2.open(str(tmp_path / "raw.b2nd"))[:],
                                  np.frombuffer(b"abc" * 100, np.uint8))  # fmt: skip


def test_single_chunk_file_source(tmp_path):
    data = np.arange(5000, dtype="<i8").tobytes()
    (tmp_path / "c.chunk").write_bytes(bytes(blosc2.compress2(data, typesize=8)))
    report = convert(tmp_path / "c.chunk", tmp_path / "c.b2frame")
    assert report == {"format": "b2frame", "source_format": "chunk", "copied_chunks": 1,
                      "recompressed_chunks": 0, "dropped": []}  # fmt: skip
    assert bytes(blosc2.open(str(tmp_path / "c.b2frame"))[:]) == data


# --- copies without recompression ---------------------------------------------------------


def blp_chunks(path: Path) -> list[bytes]:
    with BloscpackReader(path) as reader:
        return [bytes(reader.read_chunk(i)) for i in range(reader.nchunks)]


def bcolz_chunks(path: Path) -> list[bytes]:
    files = sorted(os.listdir(path / "data"), key=lambda n: int(n[2:-4]))
    return [(path / "data" / name).read_bytes()[16:] for name in files]


def frame_chunks(path: Path) -> list[bytes]:
    with Frame(path) as frame:
        return [frame.read_chunk(i) for i in range(frame.nchunks)]


def test_blp_to_bcolz_copies_chunks_and_back(tmp_path, bloscpack016):
    array = np.arange(100000, dtype="<i4")
    api.save_blp(array, tmp_path / "a.blp", chunk_size=40000, cname="lz4")
    report = convert(tmp_path / "a.blp", tmp_path / "a.bcolz", durable=False)
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (10, 0)
    assert bcolz_chunks(tmp_path / "a.bcolz") == blp_chunks(tmp_path / "a.blp")
    carray = bcolz.open(str(tmp_path / "a.bcolz"), mode="r")
    assert carray.chunklen == 10000
    np.testing.assert_array_equal(carray[:], array)
    np.testing.assert_array_equal(carray[12345:23456], array[12345:23456])
    report = convert(tmp_path / "a.bcolz", tmp_path / "b.blp")
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (10, 0)
    assert blp_chunks(tmp_path / "b.blp") == blp_chunks(tmp_path / "a.blp")
    assert_016_reads(bloscpack016, {str(tmp_path / "b.blp"): array})


def test_bcolz_leftover_chunk_is_copied_when_it_holds_exactly_the_rows(tmp_path):
    array = np.arange(25000, dtype="<f8")
    bcolz.carray(array, rootdir=str(tmp_path / "a.bcolz"), chunklen=4000)
    report = convert(tmp_path / "a.bcolz", tmp_path / "a.blp")
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (7, 0)
    assert blp_chunks(tmp_path / "a.blp") == bcolz_chunks(tmp_path / "a.bcolz")
    with BloscpackReader(tmp_path / "a.blp") as reader:
        assert (reader.header.chunk_size, reader.header.last_chunk) == (32000, 8000)
    assert_same_array(api.load_blp(tmp_path / "a.blp"), array)


def test_stale_leftover_longer_than_needed_is_recompressed(tmp_path):
    carray = bcolz.carray(np.arange(12, dtype="<i4"), rootdir=str(tmp_path / "a.bcolz"),
                          chunklen=5)  # fmt: skip
    carray.resize(7)  # leftover file __1.blp may hold more rows than the 2 that count
    carray.flush()
    del carray
    report = convert(tmp_path / "a.bcolz", tmp_path / "a.blp")
    assert_same_array(api.load_blp(tmp_path / "a.blp"), np.arange(7, dtype="<i4"))
    assert report["copied_chunks"] + report["recompressed_chunks"] == 2


def test_bcolz_typesize_rule_decides_copies(tmp_path):
    # .blp stores U3 with typesize 12, bcolz reads parts of chunks in units of its typesize 4
    array = np.array(["ab", "cde", "f"] * 2000, dtype="<U3")
    api.save_blp(array, tmp_path / "u.blp", chunk_size=12 * 1000)
    report = convert(tmp_path / "u.blp", tmp_path / "u.bcolz", durable=False)
    assert report["copied_chunks"] == 0
    carray = bcolz.open(str(tmp_path / "u.bcolz"), mode="r")
    assert list(carray[1003:1007]) == list(array[1003:1007])


def test_b2nd_contiguous_sparse_round_trip_copies_every_chunk(tmp_path):
    array = np.arange(12 * 10, dtype="<f8").reshape(12, 10)
    save(array, tmp_path / "a.b2nd", format="b2nd", chunks=(5, 4), blocks=(2, 3))
    report = convert(tmp_path / "a.b2nd", tmp_path / "s.b2nd", sparse=True)
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (9, 0)
    assert os.path.isdir(tmp_path / "s.b2nd")
    assert frame_chunks(tmp_path / "s.b2nd") == frame_chunks(tmp_path / "a.b2nd")
    arr = blosc2.open(str(tmp_path / "s.b2nd"))
    assert (arr.chunks, arr.blocks) == ((5, 4), (2, 3))
    np.testing.assert_array_equal(arr[:], array)
    report = convert(tmp_path / "s.b2nd", tmp_path / "c.b2nd")
    assert report["copied_chunks"] == 9
    assert (tmp_path / "c.b2nd").read_bytes() == (tmp_path / "a.b2nd").read_bytes()


def test_b2nd_row_chunks_to_frame_and_back_copy_chunks(tmp_path):
    array = np.arange(1000 * 6, dtype="<i4").reshape(1000, 6)
    save(array, tmp_path / "a.b2nd", format="b2nd", chunks=(200, 6), blocks=(50, 6))
    report = convert(tmp_path / "a.b2nd", tmp_path / "a.b2frame")
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (5, 0)
    assert frame_chunks(tmp_path / "a.b2frame") == frame_chunks(tmp_path / "a.b2nd")
    report = convert(tmp_path / "a.b2frame", tmp_path / "b.b2nd")
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (5, 0)
    arr = blosc2.open(str(tmp_path / "b.b2nd"))
    assert (arr.chunks, arr.blocks) == ((200, 6), (50, 6))
    np.testing.assert_array_equal(arr[123:456, 2:5], array[123:456, 2:5])


def test_b2nd_padded_edge_chunk_is_recompressed_for_flat_targets(tmp_path):
    array = np.arange(1100, dtype="<i8")
    save(array, tmp_path / "a.b2nd", format="b2nd", chunks=(300,), blocks=(100,))
    report = convert(tmp_path / "a.b2nd", tmp_path / "a.b2frame")
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (3, 1)
    assert frame_chunks(tmp_path / "a.b2frame")[:3] == frame_chunks(tmp_path / "a.b2nd")[:3]
    assert bytes(blosc2.open(str(tmp_path / "a.b2frame"))[:]) == array.tobytes()
    report = convert(tmp_path / "a.b2frame", tmp_path / "b.b2nd")
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (3, 1)
    assert frame_chunks(tmp_path / "b.b2nd") == frame_chunks(tmp_path / "a.b2nd")


def test_blosc2_blp_and_frames_copy_both_ways(tmp_path):
    array = np.linspace(0, 1, 50000)
    api.save_blp(array, tmp_path / "a.blp", blosc_version=2, chunk_size=80000, codec="zstd")
    report = convert(tmp_path / "a.blp", tmp_path / "a.sframe", format="sframe")
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (5, 0)
    assert frame_chunks(tmp_path / "a.sframe") == blp_chunks(tmp_path / "a.blp")
    assert bytes(blosc2.open(str(tmp_path / "a.sframe"))[:]) == array.tobytes()
    # a 0.16-readable .blp needs Blosc1 chunks: recompressed by default
    report = convert(tmp_path / "a.sframe", tmp_path / "v1.blp")
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (0, 1)
    assert {engine_version(c) for c in blp_chunks(tmp_path / "v1.blp")} == {1}
    report = convert(tmp_path / "a.sframe", tmp_path / "v2.blp", blosc_version=2)
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (5, 0)
    assert blp_chunks(tmp_path / "v2.blp") == blp_chunks(tmp_path / "a.blp")


def engine_version(chunk: bytes) -> int:
    from bloscpack.blosc.header import ChunkHeader

    return ChunkHeader.parse(chunk).blosc_version


def test_blosc1_chunks_are_never_stored_in_frames(tmp_path):
    api.save_blp(np.arange(30000, dtype="<i4"), tmp_path / "a.blp", chunk_size=40000)
    report = convert(tmp_path / "a.blp", tmp_path / "a.b2frame")
    assert report["copied_chunks"] == 0
    assert {engine_version(c) for c in frame_chunks(tmp_path / "a.b2frame")} == {2}
    np.testing.assert_array_equal(
        np.frombuffer(blosc2.open(str(tmp_path / "a.b2frame"))[:], "<i4"), np.arange(30000)
    )


def test_special_chunks_stay_special_between_frames(tmp_path):
    schunk = blosc2.SChunk(chunksize=4000, urlpath=str(tmp_path / "z.b2frame"), mode="w",
                           cparams=blosc2.CParams(typesize=4, nthreads=1))  # fmt: skip
    schunk.fill_special(3000, blosc2.SpecialValue.ZERO)
    del schunk
    report = convert(tmp_path / "z.b2frame", tmp_path / "z.sframe", format="sframe")
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (3, 0)
    assert os.listdir(tmp_path / "z.sframe") == ["chunks.b2frame"]  # zeros are index markers
    assert bytes(blosc2.open(str(tmp_path / "z.sframe"))[:]) == bytes(12000)


def test_copy_chunks_false_recompresses_with_the_options(tmp_path):
    array = np.arange(100000, dtype="<i4")
    api.save_blp(array, tmp_path / "a.blp", chunk_size=40000)
    report = convert(tmp_path / "a.blp", tmp_path / "b.blp", copy_chunks=False, cname="zstd",
                     clevel=9)  # fmt: skip
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (0, 1)
    with BloscpackReader(tmp_path / "b.blp") as reader:
        assert reader.header.chunk_size == 400000  # the .blp default (1 MiB) covers it all
        assert {r.nbytes for r in reader.locations()} == {400000}
    from bloscpack.blosc.header import ChunkHeader

    assert {ChunkHeader.parse(c).codec for c in blp_chunks(tmp_path / "b.blp")} == {"zstd"}
    assert_same_array(api.load_blp(tmp_path / "b.blp"), array)


def test_given_chunk_size_recompresses(tmp_path):
    array = np.arange(100000, dtype="<i4")
    api.save_blp(array, tmp_path / "a.blp", chunk_size=40000)
    report = convert(tmp_path / "a.blp", tmp_path / "b.blp", chunk_size=100000)
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (0, 4)
    report = convert(tmp_path / "a.blp", tmp_path / "c.bcolz", chunklen=10000, durable=False)
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (10, 0)
    report = convert(tmp_path / "a.blp", tmp_path / "d.bcolz", chunklen=7000, durable=False)
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (0, 15)
    np.testing.assert_array_equal(bcolz.open(str(tmp_path / "d.bcolz"), mode="r")[:], array)


# --- metadata -----------------------------------------------------------------------------


def test_user_metadata_travels_and_drops_are_reported(tmp_path, bloscpack016):
    array = np.arange(100.0)
    arr = blosc2.asarray(array, urlpath=str(tmp_path / "a.b2nd"), mode="w")
    arr.vlmeta["unit"] = "m"
    arr.vlmeta["scale"] = 2.5
    arr.vlmeta["tags"] = ["a", "b"]
    arr.vlmeta["blob"] = b"\x00\x01"
    del arr
    report = convert(tmp_path / "a.b2nd", tmp_path / "a.blp")
    assert report["dropped"] == [
        "vlmetalayer 'blob': the .blp metadata (JSON) cannot hold it (Object of type bytes is"
        " not JSON serializable)"
    ]
    assert read_metadata_section(tmp_path / "a.blp") == {
        "dtype": "'<f8'", "shape": [100], "order": "C", "container": "numpy",
        "unit": "m", "scale": 2.5, "tags": ["a", "b"],
    }  # fmt: skip
    assert_016_reads(bloscpack016, {str(tmp_path / "a.blp"): array})
    report = convert(tmp_path / "a.blp", tmp_path / "a.bcolz", durable=False)
    assert report["dropped"] == []
    assert bcolz.open(str(tmp_path / "a.bcolz"), mode="r").attrs.attrs == {
        "unit": "m", "scale": 2.5, "tags": ["a", "b"]
    }  # fmt: skip
    report = convert(tmp_path / "a.bcolz", tmp_path / "a.b2frame")
    schunk = blosc2.open(str(tmp_path / "a.b2frame"))
    assert schunk.vlmeta.getall() == {
        "dtype": "'<f8'", "shape": [100], "order": "C", "container": "numpy",
        "unit": "m", "scale": 2.5, "tags": ["a", "b"],
    }  # fmt: skip
    # every vlmetalayer of a frame source is kept by a frame target, bytes and all
    report = convert(tmp_path / "a.b2nd", tmp_path / "b.b2nd", sparse=True)
    assert report["dropped"] == []
    assert blosc2.open(str(tmp_path / "b.b2nd")).schunk.vlmeta.getall() == {
        "unit": "m", "scale": 2.5, "tags": ["a", "b"], "blob": b"\x00\x01"
    }  # fmt: skip


def test_metalayers_kept_by_frames_dropped_elsewhere(tmp_path):
    schunk = blosc2.SChunk(chunksize=800, data=np.arange(1000, dtype="<i8"),
                           urlpath=str(tmp_path / "m.b2frame"), mode="w", meta={"m": [1, 2]},
                           cparams=blosc2.CParams(typesize=8, nthreads=1))  # fmt: skip
    del schunk
    convert(tmp_path / "m.b2frame", tmp_path / "m.b2nd")
    arr = blosc2.open(str(tmp_path / "m.b2nd"))
    assert arr.schunk.meta["m"] == [1, 2]
    assert arr.dtype == np.dtype("<u8")  # a raw frame holds bytes, of its typesize
    convert(tmp_path / "m.b2frame", tmp_path / "m.sframe", format="sframe")
    assert blosc2.open(str(tmp_path / "m.sframe")).meta["m"] == [1, 2]
    for fmt in ("blp", "bcolz"):
        report = convert(tmp_path / "m.b2frame", tmp_path / f"m.{fmt}")
        assert report["dropped"] == ["metalayer 'm': the target format has no metalayers"]


def test_frames_hold_at_most_16_vlmetalayers_of_31_bytes(tmp_path):
    metadata = {f"k{i:02d}": i for i in range(14)}
    metadata["x" * 32] = "long"
    save(np.arange(10), tmp_path / "a.blp")
    from bloscpack.containers.bloscpack import rewrite_metadata

    rewrite_metadata(tmp_path / "a.blp", {**read_metadata_section(tmp_path / "a.blp"), **metadata})
    report = convert(tmp_path / "a.blp", tmp_path / "a.b2frame")
    assert report["dropped"] == [
        "metadata key 'k12': a frame holds at most 12 user vlmetalayers here",
        "metadata key 'k13': a frame holds at most 12 user vlmetalayers here",
        f"metadata key {'x' * 32!r}: frame vlmetalayer names hold at most 31 bytes",
    ]
    assert len(blosc2.open(str(tmp_path / "a.b2frame")).vlmeta.getall()) == 16


def test_ctable_column_attributes_are_reported(tmp_path):
    table = bcolz.ctable(ARRAYS["structured"], rootdir=str(tmp_path / "t.bcolz"))
    table.attrs["table"] = 1
    table.cols["a"].attrs["unit"] = "s"
    del table
    report = convert(tmp_path / "t.bcolz", tmp_path / "t.blp")
    assert report["dropped"] == ["attributes of column 'a' (only table attributes are kept)"]
    assert read_metadata_section(tmp_path / "t.blp")["table"] == 1


def test_user_key_named_like_numpy_metadata_is_dropped(tmp_path):
    carray = bcolz.carray(np.arange(10), rootdir=str(tmp_path / "a.bcolz"))
    carray.attrs["shape"] = "mine"
    carray.attrs["ok"] = True
    del carray
    for fmt in ("blp", "b2frame"):
        report = convert(tmp_path / "a.bcolz", tmp_path / f"a.{fmt}")
        assert report["dropped"] == ["attribute 'shape': the name is taken by the numpy metadata"]
    assert read_metadata_section(tmp_path / "a.blp")["ok"] is True


# --- output handling and failures ---------------------------------------------------------


def test_format_from_extension_and_errors(tmp_path):
    save(np.arange(10), tmp_path / "a.blp")
    assert convert(tmp_path / "a.blp", tmp_path / "x.b2nd")["format"] == "b2nd"
    # no known suffix: blp, as save() and blpk c do
    assert convert(tmp_path / "a.blp", tmp_path / "x.dat")["format"] == "blp"
    assert detect(tmp_path / "x.dat") == "blp"
    assert convert(tmp_path / "a.blp", tmp_path / "x.b2sframe")["format"] == "sframe"
    with pytest.raises(ArgumentError, match="format 'b2nd' was asked, but the suffix .blp names"):
        convert(tmp_path / "a.blp", tmp_path / "c.blp", format="b2nd")
    with pytest.raises(UnsupportedError, match=r"\.npy is the suffix of another format .*numpy"):
        convert(tmp_path / "a.blp", tmp_path / "c.npy")
    with pytest.raises(ArgumentError, match="unknown format 'zarr'"):
        convert(tmp_path / "a.blp", tmp_path / "x", format="zarr")
    with pytest.raises(ArgumentError, match="unknown option.* for format 'b2nd': chunklen"):
        convert(tmp_path / "a.blp", tmp_path / "y.b2nd", chunklen=10)
    with pytest.raises(FileNotFound):
        convert(tmp_path / "missing.blp", tmp_path / "z.blp")
    assert leftovers(tmp_path, {"a.blp", "x.b2nd", "x.dat", "x.b2sframe"}) == []


def test_existing_output_needs_overwrite(tmp_path):
    save(np.arange(10), tmp_path / "a.blp")
    (tmp_path / "b.blp").write_bytes(b"keep")
    with pytest.raises(OutputExistsError, match="already exists"):
        convert(tmp_path / "a.blp", tmp_path / "b.blp", overwrite=False)
    assert (tmp_path / "b.blp").read_bytes() == b"keep"
    convert(tmp_path / "a.blp", tmp_path / "b.blp")  # replaced, as save() replaces
    assert_same_array(api.load_blp(tmp_path / "b.blp"), np.arange(10))
    # a directory container is replaced by a file and the other way round
    (tmp_path / "b.blp").rename(tmp_path / "b.out")
    convert(tmp_path / "a.blp", tmp_path / "b.out", format="bcolz", overwrite=True, durable=False)
    assert detect(tmp_path / "b.out") == "bcolz"
    convert(tmp_path / "b.out", tmp_path / "b.out", format="b2nd", overwrite=True)
    assert detect(tmp_path / "b.out") == "b2nd"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "x.txt").write_text("mine")
    with pytest.raises(OutputExistsError, match="is a directory that is not a Blosc container"):
        convert(tmp_path / "a.blp", tmp_path / "notes", format="sframe", overwrite=True)
    assert (tmp_path / "notes" / "x.txt").read_text() == "mine"
    assert leftovers(tmp_path, {"a.blp", "b.out", "notes"}) == []


def test_in_place_conversion(tmp_path):
    array = np.arange(5000, dtype="<i8")
    save(array, tmp_path / "a.blp")
    convert(tmp_path / "a.blp", tmp_path / "a.blp", overwrite=True, cname="zstd", clevel=9)
    assert_same_array(api.load_blp(tmp_path / "a.blp"), array)
    assert leftovers(tmp_path, {"a.blp"}) == []


def corrupt_last_chunk(path: Path) -> None:
    with BloscpackReader(path) as reader:
        loc = reader.locate(reader.nchunks - 1)
    data = bytearray(path.read_bytes())
    data[loc.offset + loc.cbytes - 1] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("target", FORMATS)
def test_failed_conversion_leaves_nothing(tmp_path, target):
    api.save_blp(np.arange(50000, dtype="<i4"), tmp_path / "a.blp", chunk_size=40000)
    corrupt_last_chunk(tmp_path / "a.blp")
    fmt, options = _format_options(target)
    with pytest.raises(ChecksumMismatch):
        convert(tmp_path / "a.blp", tmp_path / "out", format=fmt, **options)
    assert leftovers(tmp_path, {"a.blp"}) == []
    # an existing output survives a failed replacement untouched
    (tmp_path / "out").write_bytes(b"old")
    with pytest.raises(ChecksumMismatch):
        convert(tmp_path / "a.blp", tmp_path / "out", format=fmt, overwrite=True, **options)
    assert (tmp_path / "out").read_bytes() == b"old"
    assert leftovers(tmp_path, {"a.blp", "out"}) == []


def test_refusals_happen_before_anything_is_written(tmp_path):
    save(np.array(1.5), tmp_path / "scalar.blp")
    with pytest.raises(ArgumentError, match="bcolz stores arrays of at least one dimension"):
        convert(tmp_path / "scalar.blp", tmp_path / "s.bcolz")
    save(np.zeros((2, 3), dtype=[("a", "<i4")]), tmp_path / "s2d.blp")
    with pytest.raises(ArgumentError, match="ctable and must be 1-D"):
        convert(tmp_path / "s2d.blp", tmp_path / "t.bcolz")
    save(np.zeros(3, dtype=[("class", "<i4")]), tmp_path / "kw.blp")
    with pytest.raises(ArgumentError, match="column name 'class'"):
        convert(tmp_path / "kw.blp", tmp_path / "kw.bcolz")
    with pytest.raises(BloscpackError):
        convert(tmp_path / "scalar.blp", tmp_path / "x.blp", cname="nope")
    assert leftovers(tmp_path, {"scalar.blp", "s2d.blp", "kw.blp"}) == []


def test_report_is_json(tmp_path):
    save(np.arange(10), tmp_path / "a.blp")
    report = convert(tmp_path / "a.blp", tmp_path / "a.bcolz", durable=False)
    assert json.loads(json.dumps(report)) == report
    assert set(report) == {"format", "source_format", "copied_chunks", "recompressed_chunks",
                           "dropped"}  # fmt: skip


def test_blosc1_chunks_decode_right_after_blosc2_unicode_chunks(tmp_path):
    # python-blosc2 shuffles unicode by 4-byte characters (filters_meta 4); a reused C-Blosc2
    # context applied that meta to the next Blosc1 chunk, a typesize-12 shuffle
    array = np.array(["x", "yz", "\u00e9\u00e8\u00ea"] * 100, dtype="<U3")
    save(array, tmp_path / "u.b2nd", format="b2nd")
    save(array, tmp_path / "u.blp")
    assert_same_array(read_back(tmp_path / "u.b2nd"), array)
    convert(tmp_path / "u.blp", tmp_path / "v.b2nd")
    assert_same_array(blosc2.open(str(tmp_path / "v.b2nd"))[:], array)


@pytest.mark.parametrize(
    ("fmt", "options"),
    [("blp", {"copy_chunks": False, "chunk_size": 1 << 19}), ("b2frame", {"chunksize": 1 << 19}),
     ("sframe", {"chunksize": 1 << 19}), ("b2nd", {"chunks": (1 << 16,), "blocks": (1 << 13,)}),
     ("bcolz", {"chunklen": 1 << 16, "durable": False})],
)  # fmt: skip
def test_memory_stays_bounded_by_a_few_chunks(tmp_path, fmt, options):
    import tracemalloc

    array = np.random.default_rng(3).random(1 << 20)  # 8 MiB, in chunks of 512 KiB
    api.save_blp(array, tmp_path / "a.blp", chunk_size=1 << 19)
    del array
    convert(tmp_path / "a.blp", tmp_path / "warm", format=fmt, **options)  # imports, contexts
    tracemalloc.start()
    try:
        convert(tmp_path / "a.blp", tmp_path / "out", format=fmt, **options)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 19, peak  # at most 4 chunks of 512 KiB, a sixteenth of the array


# --- raw bytes keep the typesize and shuffle their chunks were compressed with ------------

RAW_FORMATS = [f.name for f in registry.FORMATS.values() if f.holds_bytes]


def stored_headers(path: Path) -> list[ChunkHeader]:
    """The headers of every stored chunk of the container at ``path``."""
    with registry.open_reader(str(path), detect(path)) as reader:
        return [ChunkHeader.parse(reader.stored_chunk(i)) for i in range(reader.nchunks)]


@pytest.mark.parametrize("filters", ["shuffle", "bitshuffle"])
@pytest.mark.parametrize("target", list(registry.FORMATS))
@pytest.mark.parametrize("fmt", RAW_FORMATS)
def test_raw_bytes_keep_their_typesize_and_shuffle(tmp_path, fmt, target, filters):
    payload = np.linspace(0, 100, 20_000).tobytes()
    (tmp_path / "raw.bin").write_bytes(payload)
    src = tmp_path / f"src.{fmt}"
    compress_file(tmp_path / "raw.bin", src, format=fmt, typesize=8, filters=[filters],
                  codec="zstd", clevel=5, chunk_size=64 * 1024)  # fmt: skip
    shuffle = int(FILTER_IDS[filters])
    assert {(h.typesize, h.shuffle) for h in stored_headers(src)} == {(8, shuffle)}
    dst = tmp_path / f"dst.{target}"
    for copy_chunks in (True, False):  # copied or compressed again
        convert(src, dst, target, copy_chunks=copy_chunks, **_format_options(target)[1])
        assert {(h.typesize, h.shuffle) for h in stored_headers(dst)} == {(8, shuffle)}
        back = bloscpack.load(dst)
        assert back.dtype == (np.dtype("<u8") if target in ("b2nd", "bcolz") else np.uint8)
        assert back.tobytes() == payload
