"""NDArray frames (.b2nd): the golden corpus, python-blosc2 both ways, selections, hostile
metalayers and atomic writes."""

from __future__ import annotations

import hashlib
import json
import math
import os
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import blosc2
import numpy as np
import pytest
from conftest import DATA, load_manifest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bloscpack import Frame, dispatch, engine
from bloscpack.blosc.header import ChunkHeader
from bloscpack.containers import b2nd
from bloscpack.containers.b2nd import (
    B2ndArray,
    load_b2nd,
    read_b2nd_metalayer,
    read_b2nd_selection,
    save_b2nd,
    sniff_b2nd,
)
from bloscpack.containers.b2nd.meta import pack_metalayer
from bloscpack.containers.frame import ContiguousFrame, FrameWriter
from bloscpack.containers.grid import ChunkGrid, array_to_chunk
from bloscpack.errors import (
    BloscpackError,
    FormatError,
    NotAContainer,
    ObjectNumpyArrayRejection,
)
from bloscpack.io.sources import ByteSource

B2ND = load_manifest("b2nd")["files"]
BLOSC2_ND = [e for e in load_manifest("blosc2")["entries"] if e["kind"] == "b2nd"]
CP1 = blosc2.CParams(nthreads=1)


def digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.require(array, requirements="C").tobytes()).hexdigest()


def blosc2_read(path) -> np.ndarray:
    arr = blosc2.open(os.fspath(path))
    return arr[()] if arr.ndim == 0 else arr[:]


def sample(shape, dtype, seed=0) -> np.ndarray:
    """Deterministic values of any dtype (finite floats, valid strings)."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    if dt.kind in "fc":
        return (rng.integers(-1000, 1000, n) / 8).astype(dt).reshape(shape)
    if dt.kind == "b":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    if dt.kind == "U":
        words = np.array(["", "a", "xyz", "\u00e9t\u00e9", "long word"], dtype=dt)
        return words[rng.integers(0, 5, n)].reshape(shape)
    return np.frombuffer(rng.bytes(n * dt.itemsize), dtype=dt).reshape(shape).copy()


# --- the golden corpus --------------------------------------------------------------------


@pytest.mark.parametrize("entry", B2ND, ids=[e["file"] for e in B2ND])
def test_corpus_b2nd(entry):
    path = DATA / "b2nd" / entry["file"]
    array = load_b2nd(path)
    assert array.shape == tuple(entry["shape"])
    assert array.dtype.itemsize == entry["itemsize"]
    assert digest(array) == entry["sha256_c_order_array_bytes"]
    assert sniff_b2nd(path)
    with B2ndArray(path) as arr:
        assert (arr.chunks, arr.blocks) == (tuple(entry["chunks"]), tuple(entry["blocks"]))
        assert arr.metalayers["b2nd"].hex() == entry["metalayer_hex"]
        assert arr.b2nd.dtype_string == entry["b2nd_dtype_string"]
    assert b2nd.verify(path) == {"format": "b2nd", "ok": True, "nchunks": arr.grid.nchunks,
                                 "bad_chunks": [], "problems": []}  # fmt: skip
    json.dumps(b2nd.info(path))
    described = b2nd.info(path)["b2nd"]
    assert (
        described["shape"] == entry["shape"]
        and described["dtype_string"] == entry["b2nd_dtype_string"]
    )


@pytest.mark.parametrize("entry", BLOSC2_ND, ids=[e["path"] for e in BLOSC2_ND])
def test_blosc2_corpus_b2nd(entry):
    path = DATA / "blosc2" / entry["path"]
    nd = entry["ndarray"]
    array = load_b2nd(path)
    assert (array.shape, array.dtype.itemsize) == (tuple(nd["shape"]), nd["itemsize"])
    assert digest(array) == nd["sha256"]
    with Frame(path) as frame:
        shape, chunks, blocks, dtype = read_b2nd_metalayer(frame)
    assert (shape, chunks, blocks) == (tuple(nd["shape"]), tuple(nd["chunks"]), tuple(nd["blocks"]))
    assert dtype == array.dtype
    assert dispatch.detect(path) == "b2nd"


def test_plain_frames_are_not_ndarrays(tmp_path):
    path = tmp_path / "plain.b2frame"
    s = blosc2.SChunk(chunksize=64, urlpath=str(path), contiguous=True, cparams=CP1)
    s.append_data(np.arange(16, dtype=np.int32))
    del s
    assert not sniff_b2nd(path) and not sniff_b2nd(path.read_bytes())
    assert not sniff_b2nd(tmp_path / "missing") and not sniff_b2nd(b"\x00" * 100)
    with pytest.raises(NotAContainer, match="without a 'b2nd' metalayer"):
        load_b2nd(path)
    assert sniff_b2nd((DATA / "b2nd" / "f2d_float64.b2nd").read_bytes())


# --- python-blosc2 writes, we read --------------------------------------------------------

DTYPES = [
    "i1", "u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8", "<c8", "<c16",
    "?", "S5", "<U3", ">i4", ">f8", "<M8[ns]", "<m8[s]", [("a", "<i4"), ("b", "<f8")],
]  # fmt: skip
GEOMETRIES = [
    ((), None, None),
    ((17,), (5,), (2,)),
    ((9, 11), (4, 5), (3, 2)),
    ((5, 6, 7), (2, 4, 3), (1, 3, 2)),
    ((3, 4, 5, 6), (2, 3, 5, 4), (1, 2, 2, 4)),
    ((40, 30), None, None),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(("shape", "chunks", "blocks"), GEOMETRIES, ids=lambda g: str(g))
def test_python_blosc2_writes_we_read(tmp_path, dtype, shape, chunks, blocks):
    array = sample(shape, dtype)
    path = tmp_path / "a.b2nd"
    blosc2.asarray(array, urlpath=str(path), chunks=chunks, blocks=blocks, cparams=CP1)
    got = load_b2nd(path)
    assert got.dtype == blosc2.open(str(path)).dtype
    assert got.tobytes() == blosc2_read(path).tobytes() == np.ascontiguousarray(array).tobytes()


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: blosc2.zeros((7, 9), dtype="f8", **kw),
        lambda **kw: blosc2.empty((7, 9), dtype="i4", **kw),
        lambda **kw: blosc2.nans((7, 9), dtype="f4", **kw),
        lambda **kw: blosc2.nans((7, 9), dtype="f8", **kw),
        lambda **kw: blosc2.full((7, 9), 7.5, dtype="f8", **kw),
        lambda **kw: blosc2.full((7, 9), 0, dtype="u2", **kw),
        lambda **kw: blosc2.full((7, 9), b"ab", dtype="S3", **kw),
    ],
    ids=["zeros", "empty", "nans4", "nans8", "full", "full0", "fullS"],
)
def test_special_chunks(tmp_path, make, sparse):
    path = tmp_path / "s.b2nd"
    arr = make(chunks=(4, 5), blocks=(2, 3), urlpath=str(path), contiguous=not sparse)
    expected = arr[:]
    del arr
    got = load_b2nd(path)
    assert got.tobytes() == expected.tobytes()
    box = (slice(1, 6), slice(2, 9, 2))
    assert read_b2nd_selection(path, box).tobytes() == expected[box].tobytes()
    assert b2nd.verify(path)["ok"]


def test_uninit_chunks_read_as_zeros(tmp_path):
    path = tmp_path / "u.b2nd"
    arr = blosc2.uninit((7, 9), dtype="f8", chunks=(4, 5), blocks=(2, 3), urlpath=str(path))
    del arr
    assert not load_b2nd(path).any()


def test_meta_and_vlmeta_from_python_blosc2(tmp_path):
    path = tmp_path / "m.b2nd"
    arr = blosc2.asarray(
        np.arange(10), urlpath=str(path), meta={"m1": 1, "units": "m"}, cparams=CP1
    )
    arr.vlmeta["note"] = {"k": [1, 2]}
    arr.vlmeta["t"] = (1, 2)
    del arr
    with B2ndArray(path) as a:
        assert list(a.metalayers) == ["b2nd", "m1", "units"]
        assert a.meta == {"m1": 1, "units": "m"}
        assert a.vlmeta == {"note": {"k": [1, 2]}, "t": (1, 2)}


def test_partially_assigned_python_array(tmp_path):
    path = tmp_path / "p.b2nd"
    arr = blosc2.full((10, 10), 7.0, chunks=(4, 4), blocks=(2, 2), urlpath=str(path))
    arr[3:8, 1:9] = np.arange(40.0).reshape(5, 8)
    expected = arr[:]
    del arr
    assert np.array_equal(load_b2nd(path), expected)


def test_sixteen_dims_both_ways(tmp_path):
    shape = (2, 1, 3, 1, 2, 1, 1, 2, 1, 1, 1, 2, 1, 1, 1, 3)
    array = sample(shape, "<i4")
    theirs, ours = tmp_path / "theirs.b2nd", tmp_path / "ours.b2nd"
    blosc2.asarray(
        array, urlpath=str(theirs), chunks=(1,) * 15 + (2,), blocks=(1,) * 16, cparams=CP1
    )
    assert np.array_equal(load_b2nd(theirs), array)
    save_b2nd(array, ours, chunks=(2,) * 16, blocks=(1,) * 15 + (2,))
    assert np.array_equal(blosc2_read(ours), array)
    with B2ndArray(ours) as a:
        assert a.metalayers["b2nd"][3] == 0xA0


# --- we write, python-blosc2 reads --------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES + ["V5", "S300", "<U100"], ids=str)
@pytest.mark.parametrize(("shape", "chunks", "blocks"), GEOMETRIES, ids=lambda g: str(g))
def test_we_write_python_blosc2_reads(tmp_path, dtype, shape, chunks, blocks):
    array = sample(shape, dtype, seed=1)
    path = tmp_path / "a.b2nd"
    save_b2nd(array, path, chunks=chunks, blocks=blocks)
    ref = blosc2.open(str(path))
    assert ref.dtype == array.dtype and ref.shape == array.shape
    if chunks is not None:
        assert (ref.chunks, ref.blocks) == (chunks, blocks)
    assert blosc2_read(path).tobytes() == np.ascontiguousarray(array).tobytes()
    if array.ndim:
        box = tuple(slice(s // 3, s - s // 4) for s in shape)
        assert ref[box].tobytes() == np.ascontiguousarray(array[box]).tobytes()
    assert load_b2nd(path).tobytes() == np.ascontiguousarray(array).tobytes()


@pytest.mark.parametrize("codec", ["blosclz", "lz4", "lz4hc", "zlib", "zstd"])
@pytest.mark.parametrize("sparse", [False, True])
def test_codecs_sparse_meta_vlmeta(tmp_path, codec, sparse):
    array = sample((23, 17), "<f8")
    array[:8] = 0  # whole zero chunks become index markers
    path = tmp_path / "a.b2nd"
    save_b2nd(array, path, chunks=(8, 10), blocks=(4, 3), codec=codec, clevel=7, sparse=sparse,
              meta={"m1": 1, "units": "m"},
              vlmeta={"note": {"k": [1, 2]}, "t": (1, 2)})  # fmt: skip
    assert path.is_dir() == sparse
    ref = blosc2.open(str(path))
    assert np.array_equal(ref[:], array)
    assert ref.schunk.meta["m1"] == 1 and ref.schunk.meta["units"] == "m"
    assert ref.schunk.vlmeta["note"] == {"k": [1, 2]} and ref.schunk.vlmeta["t"] == (1, 2)
    assert ref.schunk.cparams.clevel == 7
    del ref
    with Frame(path) as frame:
        assert frame.offsets[0] == -(1 << 63) + (1 << 56)  # 0x81..: zeros marker
        assert frame.cparams["codec"] == engine.codec_code(codec)
    with B2ndArray(path) as a:
        assert a.vlmeta == {"note": {"k": [1, 2]}, "t": (1, 2)}
        assert a.meta == {"m1": 1, "units": "m"}
        assert np.array_equal(a.read(), array)
    assert b2nd.verify(path)["ok"]


def test_same_bytes_as_python_blosc2(tmp_path):
    array = (np.arange(12 * 10 * 7, dtype="<f8") * 0.5).reshape(12, 10, 7)
    for kwargs in ({"chunks": (5, 4, 7), "blocks": (2, 3, 7)}, {}):
        theirs, ours = tmp_path / "theirs.b2nd", tmp_path / "ours.b2nd"
        blosc2.asarray(array, urlpath=str(theirs), mode="w", cparams=CP1, **kwargs)
        previous = engine.set_nthreads(1)  # one C thread: blocks stored in order, as python's
        try:
            save_b2nd(array, ours, **kwargs)
        finally:
            engine.set_nthreads(previous)
        a, b = bytearray(theirs.read_bytes()), bytearray(ours.read_bytes())
        assert len(a) == len(b)
        a[65:68] = b[65:68]  # nthreads_decomp: python records its own thread count
        assert a == b


def test_unicode_filters_meta_like_python_blosc2(tmp_path):
    save_b2nd(np.array(["ab", "cde"]), tmp_path / "u.b2nd")
    with Frame(tmp_path / "u.b2nd") as frame:
        assert frame.cparams["filters_meta"] == [0, 0, 0, 0, 0, 4]


def test_zero_size_and_zero_d(tmp_path):
    cases = [(np.zeros((0, 5), "f4"), {}),
             (np.zeros((3, 0), "<i4"), {"chunks": (2, 2), "blocks": (1, 1)}),
             (np.array(3.5), {}), (np.array(7, ">i4"), {})]  # fmt: skip
    for array, kwargs in cases:
        path = tmp_path / "z.b2nd"
        save_b2nd(array, path, **kwargs)
        got = blosc2.open(str(path))
        assert got.shape == array.shape and got.dtype == array.dtype
        assert blosc2_read(path).tobytes() == array.tobytes()
        assert load_b2nd(path).tobytes() == array.tobytes() and load_b2nd(path).shape == array.shape
    with Frame(path) as frame:
        assert frame.nchunks == 1 and len(frame.read_chunk(0)) == 36  # a memcpy chunk of one item


def test_non_contiguous_input_and_out(tmp_path):
    base = sample((30, 40), "<i8")
    view = base[::2, ::-3].T
    path = tmp_path / "v.b2nd"
    save_b2nd(view, path, chunks=(6, 4), blocks=(3, 2))
    assert np.array_equal(blosc2_read(path), view)
    fortran = np.empty(view.shape, dtype="<i8", order="F")
    assert load_b2nd(path, out=fortran) is fortran and np.array_equal(fortran, view)
    dest = np.empty_like(view)
    assert load_b2nd(path, out=dest) is dest and np.array_equal(dest, view)
    with pytest.raises(ValueError, match="out must be a numpy array of shape"):
        load_b2nd(path, out=np.empty((3, 3)))
    with pytest.raises(ValueError, match="read-only"):
        ro = np.empty_like(view)
        ro.flags.writeable = False
        load_b2nd(path, out=ro)


def test_save_refuses(tmp_path):
    with pytest.raises(ObjectNumpyArrayRejection):
        save_b2nd(np.array([object()]), tmp_path / "o.b2nd")
    with pytest.raises(ValueError, match="cannot be greater than chunks"):
        save_b2nd(np.zeros(10), tmp_path / "x.b2nd", chunks=(4,), blocks=(5,))
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize("sparse", [False, True])
def test_failed_save_leaves_nothing(tmp_path, monkeypatch, sparse):
    path = tmp_path / "f.b2nd"
    calls = []
    real = engine.compress_blosc2_into

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "compress_blosc2_into", failing)
    with pytest.raises(OSError, match="disk full"):
        save_b2nd(sample((40, 40), "<f8"), path, chunks=(10, 10), blocks=(5, 5), sparse=sparse)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("error", [OSError("no space left on device"), KeyboardInterrupt()])
def test_failed_chunk_write_leaves_nothing(tmp_path, monkeypatch, error):
    """A write that fails or is interrupted while chunks are being compressed leaves nothing
    behind; the compressing threads stop, and the next save works."""
    calls = []
    real = FrameWriter.append_chunk

    def failing(self, chunk):
        calls.append(1)
        if len(calls) == 4:
            raise error
        return real(self, chunk)

    monkeypatch.setattr(FrameWriter, "append_chunk", failing)
    array = sample((40, 40), "<f8")
    with pytest.raises(type(error)):
        save_b2nd(array, tmp_path / "f.b2nd", chunks=(10, 10), blocks=(5, 5))
    assert os.listdir(tmp_path) == []
    save_b2nd(array, tmp_path / "f.b2nd", chunks=(10, 10), blocks=(5, 5))
    assert np.array_equal(blosc2_read(tmp_path / "f.b2nd"), array)


def test_thread_pools(tmp_path):
    array = sample((50, 37), "<f8")
    path = tmp_path / "t.b2nd"
    save_b2nd(array, path, chunks=(8, 10), blocks=(4, 3), nthreads=3)
    assert np.array_equal(blosc2_read(path), array)
    assert np.array_equal(load_b2nd(path, nthreads=3), array)
    with B2ndArray(path) as a:
        box = (slice(3, 40), slice(None, None, 2))
        assert np.array_equal(a.read_selection(box, nthreads=4), array[box])
        boxes = [(slice(i, i + 9), slice(i % 7, None, 3)) for i in range(30)]
        with ThreadPoolExecutor(4) as pool:
            for box, got in zip(boxes, pool.map(a.read_selection, boxes), strict=True):
                assert np.array_equal(got, array[box])


def test_array_larger_than_a_block_limit(tmp_path):
    # 600 MiB of zeros (a broadcast view: no memory): more than one chunk or block may hold
    array = np.broadcast_to(np.uint8(0), (600 * 2**20,))
    path = tmp_path / "big.b2nd"
    save_b2nd(array, path)
    assert path.stat().st_size < 1000  # every chunk is a zeros marker
    with B2ndArray(path) as a:
        assert a.grid.nchunks > 1 and a.grid.block_nbytes <= 2**29
        assert not a[10**8 : 10**8 + 5].any()


def test_overwrite_replaces_atomically(tmp_path):
    path = tmp_path / "o.b2nd"
    save_b2nd(np.arange(10), path)
    save_b2nd(np.arange(20.0), path)
    assert np.array_equal(load_b2nd(path), np.arange(20.0))
    save_b2nd(np.arange(5), tmp_path / "d.b2nd", sparse=True)
    save_b2nd(np.arange(7), tmp_path / "d.b2nd", sparse=True)
    assert np.array_equal(blosc2_read(tmp_path / "d.b2nd"), np.arange(7))


@st.composite
def arrays_and_geometry(draw):
    ndim = draw(st.integers(0, 4))
    shape = tuple(
        draw(st.integers(0 if draw(st.booleans()) and i == 0 else 1, 6)) for i in range(ndim)
    )
    dtype = np.dtype(draw(st.sampled_from(["u1", "<i4", ">f8", "?", "S3", "<U2", "V3"])))
    kwargs = {}
    if ndim and 0 not in shape and draw(st.booleans()):
        chunks = tuple(draw(st.integers(1, s + 2)) for s in shape)
        kwargs = {"chunks": chunks, "blocks": tuple(draw(st.integers(1, c)) for c in chunks)}
    return sample(shape, dtype, seed=draw(st.integers(0, 9))), kwargs


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(arrays_and_geometry(), st.booleans())
def test_round_trips(tmp_path, case, sparse):
    array, kwargs = case
    path = tmp_path / "h.b2nd"
    save_b2nd(array, path, sparse=sparse, **kwargs)
    assert load_b2nd(path).tobytes() == array.tobytes()
    assert blosc2_read(path).tobytes() == array.tobytes()


# --- selections ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def python_written(tmp_path_factory):
    """Arrays written by python-blosc2: blocks in C order, and not."""
    root = tmp_path_factory.mktemp("sel")
    out = {}
    for name, (shape, chunks, blocks) in {
        "in_order": ((50, 40), (12, 40), (3, 40)),
        "blocked": ((23, 19, 7), (8, 7, 4), (3, 2, 3)),
    }.items():
        array = sample(shape, "<i4", seed=5)
        path = root / f"{name}.b2nd"
        blosc2.asarray(array, urlpath=str(path), chunks=chunks, blocks=blocks, cparams=CP1)
        out[name] = (path, array)
    return out


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["in_order", "blocked"]), st.data())
def test_selection_matches_numpy(python_written, name, data):
    path, array = python_written[name]
    bound = st.integers(-60, 60) | st.none()
    box = tuple(
        slice(data.draw(bound), data.draw(bound), data.draw(st.integers(1, 5))) for _ in array.shape
    )
    assert np.array_equal(read_b2nd_selection(path, box), array[box])


def test_selection_reads_only_touched_chunks(python_written, monkeypatch):
    path, array = python_written["blocked"]
    read = []
    real = ContiguousFrame.chunk_at

    def counting(self, i, entry):
        read.append(i)
        return real(self, i, entry)

    monkeypatch.setattr(ContiguousFrame, "chunk_at", counting)
    with B2ndArray(path) as a:
        # chunks (8, 7, 4) make a 3 x 3 x 2 grid
        assert np.array_equal(a[1:5, 3:6, 0:3], array[1:5, 3:6, 0:3])
        assert read == [0]
        read.clear()
        assert np.array_equal(a[7:9, 13:, 3:5], array[7:9, 13:, 3:5])
        assert read == [2, 3, 4, 5, 8, 9, 10, 11]

    decoded = []
    real_blocks, real_whole = engine.decompress_blocks_into, engine.decompress_into

    def counting_blocks(chunk, out, runs, **kwargs):
        decoded.append(list(runs))
        return real_blocks(chunk, out, runs, **kwargs)

    def counting_whole(chunk, out, **kwargs):
        if ChunkHeader.parse(chunk).typesize == array.dtype.itemsize:  # not the (int64) index
            decoded.append("whole")
        return real_whole(chunk, out, **kwargs)

    monkeypatch.setattr(engine, "decompress_blocks_into", counting_blocks)
    monkeypatch.setattr(engine, "decompress_into", counting_whole)
    with B2ndArray(path) as a:
        # blocks (3, 2, 3) of int32: 18 items each, 3 x 4 x 2 blocks per chunk
        assert np.array_equal(a[0:1, 0:1, 0:1], array[0:1, 0:1, 0:1])
        assert decoded == [[(0, 1)]]  # one call decoding one block
        decoded.clear()
        assert np.array_equal(a[0:4, 1:3, 0:2], array[0:4, 1:3, 0:2])
        # blocks (0|1, 0|1, 0) of the 3 x 4 x 2 block grid: numbers 0, 2, 8, 10, in one call
        assert decoded == [[(0, 1), (2, 1), (8, 1), (10, 1)]]


def test_box_reads_of_new_arrays_reuse_a_scratch_buffer(python_written, monkeypatch):
    """The chunk-sized buffer a box read decodes into outlives its array: the next array of
    that chunk size takes it instead of a new one (whose pages would fault in again)."""
    from bloscpack.containers.b2nd import jobs

    path, array = python_written["blocked"]
    monkeypatch.setattr(jobs, "_kept", {})
    with B2ndArray(path) as a:
        assert np.array_equal(a[1:5, 3:6, 0:3], array[1:5, 3:6, 0:3])
    ((size, [kept]),) = jobs._kept.items()
    assert size == a.grid.chunk_nbytes
    with B2ndArray(path) as b:
        assert np.array_equal(b[7:9, 13:, 3:5], array[7:9, 13:, 3:5])
    assert list(jobs._kept) == [size] and len(jobs._kept[size]) == 1
    assert jobs._kept[size][0] is kept
    monkeypatch.setattr(jobs, "KEPT_SCRATCH_BYTES", size - 1)  # none kept beyond the bound
    monkeypatch.setattr(jobs, "_kept", {})
    with B2ndArray(path) as c:
        c[1:5, 3:6, 0:3]
    assert jobs._kept == {}


def test_chunk_regions(python_written):
    path, array = python_written["blocked"]
    with B2ndArray(path) as a:
        coords = list(a.iter_chunk_coords())
        assert len(coords) == 18 and coords[0] == (0, 0, 0) and coords[-1] == (2, 2, 1)
        for c in coords:
            region = a.grid.chunk_region(c)
            assert np.array_equal(a[region], array[region])


def test_integer_indices(python_written):
    path, array = python_written["blocked"]
    with B2ndArray(path) as a:
        assert np.array_equal(a[3, 2:9, -1], array[3, 2:9, -1])
        assert np.array_equal(a[..., 4], array[..., 4])
        assert a[3, 4, 5].shape == () and a[3, 4, 5] == array[3, 4, 5]
        with pytest.raises(IndexError, match="index 23 is out of bounds for axis 0 with size 23"):
            a[23]
        with pytest.raises(IndexError, match="only integers, slices"):
            a[[1, 2]]


def test_selection_errors(python_written):
    path, _ = python_written["in_order"]
    with B2ndArray(path) as a:
        with pytest.raises(IndexError, match="positive slice steps"):
            a[::-1]
        with pytest.raises(IndexError, match="too many indices"):
            a[:, :, :]
        assert a[5:5].shape == (0, 40)
        assert a[...].shape == (50, 40)


# --- hostile metalayers -------------------------------------------------------------------


def _with_metalayer(tmp_path, shape, chunks, blocks, dtype="<f8", array_shape=(10, 10)):
    """A python-blosc2 file whose b2nd metalayer is rewritten in place (same length)."""
    path = tmp_path / "bad.b2nd"
    source = np.arange(math.prod(array_shape), dtype="<f8").reshape(array_shape)
    blosc2.asarray(source, urlpath=str(path),
                   chunks=(5, 5), blocks=(5, 5), cparams=CP1)  # fmt: skip
    raw = bytearray(path.read_bytes())
    old = pack_metalayer(array_shape, (5, 5), (5, 5), "<f8")
    new = pack_metalayer(shape, chunks, blocks, dtype)
    assert len(new) == len(old)
    at = raw.index(old)
    raw[at : at + len(old)] = new
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize(
    ("shape", "chunks", "blocks", "error", "message"),
    [
        ((10, 11), (5, 5), (5, 5), FormatError, "frame holds 4 chunks, the b2nd shape .* needs 6"),
        ((2**62, 10), (5, 5), (5, 5), FormatError, "needs 1844674407370955162$"),
        ((2**40, 2**20), (2**20, 2**10), (1, 1), FormatError, "more than 2147483615"),
        ((10, 10), (5, 6), (5, 6), FormatError, "frame chunksize 200, the b2nd chunks"),
        ((10, 10), (5, 5), (5, 5), FormatError, "dtype .*itemsize 4, the frame typesize is 8"),
    ],
)
def test_inconsistent_metalayer(tmp_path, shape, chunks, blocks, error, message):
    dtype = "<i4" if "itemsize 4" in message else "<f8"
    path = _with_metalayer(tmp_path, shape, chunks, blocks, dtype)
    tracemalloc.start()
    try:
        with pytest.raises(error, match=message):
            load_b2nd(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # nothing near what the metalayer claims was allocated
    report = b2nd.verify(path)
    assert not report["ok"] and report["problems"]


def test_wrong_ndim_byte(tmp_path):
    path = _with_metalayer(tmp_path, (10, 10), (5, 5), (5, 5))
    raw = bytearray(path.read_bytes())
    at = raw.index(bytes.fromhex("970002"))
    for ndim, message in (
        (3, "shape array marker"),
        (1, "shape array marker at byte 3 is 0x92, expected 0x91"),
        (17, "ndim 17"),
    ):
        raw[at + 2] = ndim
        path.write_bytes(bytes(raw))
        with pytest.raises(FormatError, match=message):
            load_b2nd(path)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.integers(0, 52), st.integers(0, 255)), min_size=1, max_size=3))
def test_mutated_metalayer_raises_only_bloscpack_errors(tmp_path, flips):
    source = DATA / "b2nd" / "f2d_float64.b2nd"
    raw = bytearray(source.read_bytes())
    at = raw.index(bytes.fromhex("970002"))
    for offset, value in flips:
        raw[at + offset] = value
    try:
        array = load_b2nd(bytes(raw))
    except BloscpackError:
        return
    assert array.nbytes <= 12 * 10 * 8 * 2


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["f2d_float64.b2nd", "many_chunks_int32.b2nd", "zeros_f8.b2nd"]),
    st.lists(st.tuples(st.integers(0, 2**20), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_mutated_files_raise_only_bloscpack_errors(name, flips):
    raw = bytearray((DATA / "b2nd" / name).read_bytes())
    for offset, value in flips:
        raw[offset % len(raw)] = value
    try:
        with B2ndArray(bytes(raw)) as a:
            a.read()
            a[1:3, ::2]
    except BloscpackError:
        pass
    report = b2nd.verify(bytes(raw))
    assert set(report) == {"format", "ok", "nchunks", "bad_chunks", "problems"}


def test_verify_sparse_checks_chunk_files(tmp_path):
    path = tmp_path / "s.b2nd"
    save_b2nd(sample((20, 20), "<i4"), path, chunks=(10, 10), blocks=(5, 5), sparse=True)
    assert b2nd.verify(path)["ok"]
    with open(path / "00000001.chunk", "ab") as fh:
        fh.write(b"junk")
    report = b2nd.verify(path)
    assert not report["ok"] and "the header says cbytes" in report["problems"][0]
    os.unlink(path / "00000002.chunk")
    report = b2nd.verify(path)
    assert [bad["index"] for bad in report["bad_chunks"]] == [2]


def test_verify_names_the_bad_chunk(tmp_path):
    path = tmp_path / "v.b2nd"
    blosc2.asarray(sample((20, 20), "<i4"), urlpath=str(path), chunks=(10, 10), blocks=(5, 5),
                   cparams=CP1)  # fmt: skip
    raw = bytearray(path.read_bytes())
    with Frame(path) as frame:
        at = frame.header["header_len"] + frame.offsets[2]
    raw[at + 12 : at + 16] = (10**6).to_bytes(4, "little")  # chunk 2 claims a huge cbytes
    path.write_bytes(bytes(raw))
    report = b2nd.verify(path)
    assert not report["ok"] and [bad["index"] for bad in report["bad_chunks"]] == [2]
    with pytest.raises(BloscpackError, match="chunk 2"):
        load_b2nd(path)
    with B2ndArray(path) as a:  # the other chunks still read
        assert a[:10, :].shape == (10, 20)


def test_variable_chunksize_frame(tmp_path):
    """A frame with chunksize 0 (variable) holding the right chunks: python-blosc2 reads it."""
    array = sample((3, 4), "<f8")
    grid = ChunkGrid((3, 4), (2, 4), (1, 2), 8)
    path = tmp_path / "var.b2nd"
    layer = pack_metalayer((3, 4), (2, 4), (1, 2), "<f8")
    with Frame(path, "w", typesize=8, chunksize=0, raw_meta={"b2nd": layer}) as frame:
        for n in range(grid.nchunks):
            buf = np.empty(grid.chunk_nbytes // 8)
            array_to_chunk(array, grid, grid.chunk_coords(n), buf)
            frame.append_chunk(blosc2.compress2(buf, typesize=8, blocksize=grid.block_nbytes))
    with Frame(path) as frame:
        assert frame.chunksize == 0
    assert np.array_equal(blosc2_read(path), array)
    assert np.array_equal(load_b2nd(path), array)


def test_chunk_of_the_wrong_size(tmp_path):
    path = tmp_path / "w.b2nd"
    with Frame(
        path,
        "w",
        typesize=8,
        chunksize=0,
        raw_meta={"b2nd": pack_metalayer((4,), (2,), (2,), "<f8")},
    ) as f:
        f.append_data(np.arange(2.0))
        f.append_data(np.arange(3.0))
    with pytest.raises(FormatError):
        load_b2nd(path)
    assert not b2nd.verify(path)["ok"]


def test_bytes_source():
    raw = (DATA / "b2nd" / "struct.b2nd").read_bytes()
    with B2ndArray(raw) as a:
        assert a.dtype == np.dtype([("a", "<i4"), ("b", "<f8")]) and len(a) == 5
        assert a.frame.name == "<bytes>"


def test_a_lone_chunk_is_compressed_with_the_c_threads(tmp_path, monkeypatch):
    """One chunk: all C threads compress it (fewer chunks than threads share them; more: one
    thread each), and the bytes are those of one thread."""
    array = np.cumsum(np.random.default_rng(5).normal(size=(512, 1024)), axis=1)
    calls = []
    compress = engine.compress_blosc2_into

    def spy(data, dest, **settings):
        calls.append((memoryview(data).nbytes, settings.get("nthreads")))
        return compress(data, dest, **settings)

    monkeypatch.setattr(engine, "compress_blosc2_into", spy)
    written = {}
    for n in (1, 4):
        with engine.threads(n):
            save_b2nd(array, tmp_path / f"{n}.b2nd", chunks=array.shape, blocks=(8, 1024))
        frame = ContiguousFrame(tmp_path / f"{n}.b2nd")
        written[n] = bytes(frame.read_chunk(0))
        frame.close()
    assert [c for c in calls if c[0] == array.nbytes] == [(array.nbytes, 1), (array.nbytes, 4)]
    assert written[1] == written[4]
    assert np.array_equal(blosc2_read(tmp_path / "4.b2nd"), array)
    calls.clear()
    with engine.threads(4):
        save_b2nd(array, tmp_path / "2.b2nd", chunks=(256, 1024), blocks=(8, 1024))
    assert [c for c in calls if c[0] == array.nbytes // 2] == [(array.nbytes // 2, 2)] * 2
    calls.clear()
    with engine.threads(2):
        save_b2nd(array, tmp_path / "8.b2nd", chunks=(64, 1024), blocks=(8, 1024))
    assert [c for c in calls if c[0] == array.nbytes // 8] == [(array.nbytes // 8, 1)] * 8


@pytest.mark.parametrize("nthreads", [1, 3])
def test_whole_reads_raise_the_first_bad_chunks_error(tmp_path, nthreads):
    """Also with several chunks decoded at a time, the error is that of the first bad
    chunk."""
    path = tmp_path / "bad.b2nd"
    save_b2nd(sample((64, 16), "<i4"), path, chunks=(4, 16), blocks=(2, 16))
    raw = bytearray(path.read_bytes())
    with Frame(path) as frame:
        starts = [frame.header["header_len"] + frame.offsets[n] for n in (9, 5, 14)]
    for at in starts:
        raw[at + 12 : at + 16] = (10**6).to_bytes(4, "little")  # a huge cbytes
    path.write_bytes(bytes(raw))
    for _ in range(20):
        with engine.threads(2), pytest.raises(BloscpackError, match=r"\bchunk 5\b"):
            load_b2nd(path, nthreads=nthreads)


def test_whole_reads_release_the_mapped_chunks(tmp_path, monkeypatch):
    """A whole read of a file leaves none of its large chunks mapped in memory: each one's
    pages are released once decoded (they stay in the page cache); a second read reads them
    again."""
    array = np.random.default_rng(7).normal(size=(1024, 1024))
    path = tmp_path / "r.b2nd"
    save_b2nd(array, path, chunks=(256, 1024), blocks=(16, 1024), codec="lz4", clevel=1)
    released = []
    release = ByteSource.release

    def spy(self, at, n):
        released.append((at, n))
        release(self, at, n)

    monkeypatch.setattr(ByteSource, "release", spy)
    with B2ndArray(path) as a, Frame(path) as frame:
        assert np.array_equal(a.read(), array)
        spans = sorted(released)
        assert np.array_equal(a.read(), array)
        starts = [frame.header["header_len"] + int(at) for at in frame.offsets]
        chunks = [a.frame.read_chunk(n) for n in range(4)]
    assert spans == [(at, len(c)) for at, c in zip(starts, chunks, strict=True)]
    assert min(n for _, n in spans) >= ContiguousFrame.RELEASE_MIN
