"""Orthogonal (``a.oindex``), point (``a.vindex``) and numpy (``a[...]``) selections with index
arrays, boolean masks, ``None`` and ``...`` give numpy's results on every format, read only the
chunks (and blocks) holding selected items, and say what to do for what they do not take."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from test_array import check_index, same

import bloscpack
from bloscpack import engine
from bloscpack.containers.b2nd import B2ndArray
from bloscpack.containers.registry import FORMATS
from bloscpack.containers.schunk.reader import CoreChunks
from bloscpack.containers.stores import base as stores_base
from bloscpack.containers.stores.flat import FlatStore
from bloscpack.errors import BloscpackError, SelectionError

# --- writing an array in every format, with a chosen chunking ---------------------------------

#: Every writable format of the registry, plus the variants whose reading differs: an F-order
#: .blp (its layout is the transpose's) and a b2nd array in a sparse directory.
VARIANTS = [*FORMATS, "blp-fortran", "b2nd-sparse"]


def save(fmt: str, a: np.ndarray, path: Path, chunk_rows: int, block: int) -> Path:
    """``a`` saved in ``fmt`` (a :data:`VARIANTS` name) with chunks of about ``chunk_rows``
    rows (flat formats: that many items of a row, so chunks may cut rows) and blocks of
    ``block`` items where the format takes a block size."""
    base = fmt.split("-")[0]
    path = path / f"a.{FORMATS[base].extension.lstrip('.')}"
    item = a.dtype.itemsize
    row = int(np.prod(a.shape[1:], dtype=np.int64)) or 1
    if base == "b2nd":
        chunks = tuple(max(1, min(n, chunk_rows if k == 0 else -(-n // 2)))
                       for k, n in enumerate(a.shape))  # fmt: skip
        blocks = tuple(max(1, -(-c // 2)) for c in chunks)
        bloscpack.save(a, path, format="b2nd", chunks=chunks, blocks=blocks,
                       sparse=fmt == "b2nd-sparse")  # fmt: skip
    elif base == "bcolz":
        bloscpack.save(a, path, format="bcolz", chunks=max(1, chunk_rows))
    else:
        options: dict[str, Any] = {"blosc_version": 2} if base == "blp" else {}
        stored = np.asfortranarray(a) if fmt == "blp-fortran" else a
        bloscpack.save(stored, path, format=base, chunk_size=max(1, chunk_rows * row // 2) * item,
                       blocksize=block * item, **options)  # fmt: skip
    return path


# --- references: what each selection gives, computed by numpy -----------------------------


def oindex_reference(a: np.ndarray, index: tuple) -> np.ndarray:
    """``a.oindex[index]`` computed with numpy: each axis selected on its own."""
    explicit = sum(1 for i in index if i is not None and i is not Ellipsis)
    ellipsis = any(i is Ellipsis for i in index)
    items: list[Any] = []
    for i in index:
        items.extend([slice(None)] * (a.ndim - explicit) if i is Ellipsis else [i])
    if not ellipsis:
        items.extend([slice(None)] * (a.ndim - explicit))
    per_axis, shape = [], []
    axis = 0
    for i in items:
        if i is None:
            shape.append(1)
            continue
        n = a.shape[axis]
        if isinstance(i, slice):
            chosen = np.arange(n)[i]
            shape.append(len(chosen))
        elif isinstance(i, int):
            if not -n <= i < n:
                raise IndexError("an integer out of bounds")
            chosen = np.array([i % n])
        else:
            chosen = np.asarray(i) if len(i) else np.zeros(0, np.intp)
            if chosen.dtype == bool and len(chosen) != n:
                raise IndexError("a mask of the wrong length")
            if chosen.dtype != bool and np.any((chosen < -n) | (chosen >= n)):
                raise IndexError("an index array out of bounds")
            chosen = np.flatnonzero(chosen) if chosen.dtype == bool else chosen % n
            shape.append(len(chosen))
        per_axis.append(chosen)
        axis += 1
    result = a[np.ix_(*per_axis)].reshape(shape) if per_axis else a.reshape(shape)
    return result[()] if result.ndim == 0 and not ellipsis else result


# --- random selections --------------------------------------------------------------------


def axis_entry(n: int, arrays: bool) -> st.SearchStrategy:
    """One axis's entry: an integer, a slice (negative steps too) or, with ``arrays``, an
    integer list (repeats, any order, negatives) or a boolean mask."""
    bound = st.none() | st.integers(-n - 2, n + 2)
    basic = st.one_of(
        st.integers(-n, n - 1) if n else st.nothing(),
        st.builds(slice, bound, bound, st.none() | st.integers(-3, 3).filter(bool)),
    )
    if not arrays:
        return basic
    indices = st.lists(st.integers(-n, n - 1), max_size=6) if n else st.just([])
    masks = st.lists(st.booleans(), min_size=n, max_size=n).map(np.array)
    return st.one_of(basic, indices, indices.map(lambda v: np.array(v, dtype=np.intp)), masks)


@st.composite
def oindex_index(draw, shape: tuple[int, ...]) -> tuple:
    items = [draw(axis_entry(n, True)) for n in shape[: draw(st.integers(0, len(shape)))]]
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return tuple(items)


@st.composite
def numpy_index(draw, shape: tuple[int, ...]) -> Any:
    """An index with at most one array (an integer array of 1 or 2 dimensions, or a mask):
    numpy's result is then one a[...] gives."""
    items = list(draw(oindex_index(shape)))
    arrays = [k for k, i in enumerate(items) if isinstance(i, (list, np.ndarray))]
    for k in arrays[1:]:
        items[k] = slice(None)
    if arrays and draw(st.booleans()) and not isinstance(items[arrays[0]], np.ndarray):
        flat = np.asarray(items[arrays[0]], dtype=np.intp)
        items[arrays[0]] = np.resize(flat, (2, 3)) if flat.size else flat.reshape(2, 0)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


@st.composite
def vindex_index(draw, shape: tuple[int, ...]) -> Any:
    if draw(st.booleans()):
        return draw(hnp.arrays(bool, shape))
    size = draw(st.sampled_from([(), (3,), (2, 3), (1, 3)]))
    items = []
    for n in shape:
        if not size:
            items.append(draw(st.integers(-n, n - 1)))
        else:
            items.append(draw(hnp.arrays(np.int64, draw(st.sampled_from([size, size[-1:]])),
                                         elements=st.integers(-n, n - 1))))  # fmt: skip
    if all(isinstance(i, int) for i in items) and items:
        items[0] = np.array([items[0]])
    return tuple(items)


shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=7)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.parametrize("fmt", VARIANTS)
@given(shape=shapes, chunk_rows=st.integers(1, 4), block=st.integers(1, 8), data=st.data())
def test_selections_match_numpy(tmp_path_factory, fmt, shape, chunk_rows, block, data):
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) * 7 - 50
    path = save(fmt, a, tmp_path_factory.mktemp("sel"), chunk_rows, block)
    with bloscpack.open(path) as lazy:
        assert lazy.shape == a.shape
        for _ in range(4):
            check_index(lazy, a, data.draw(numpy_index(shape), label="a[...]"))
            index = data.draw(oindex_index(shape), label="oindex")
            try:
                expected = oindex_reference(a, index)
            except IndexError:
                with pytest.raises(SelectionError):
                    lazy.oindex[index]
            else:
                same(lazy.oindex[index], expected)
            index = data.draw(vindex_index(shape), label="vindex")
            same(lazy.vindex[index], a[index])


def test_single_chunk_and_ctable(tmp_path):
    """A lone Blosc chunk (read-only: its bytes) and a bcolz ctable's rows and columns."""
    values = np.arange(5000, dtype="<u4") * 7919 % 2003
    chunk = bytes(engine.compress_blosc2(values, typesize=4, blocksize=1024))
    raw = values.view(np.uint8)
    with bloscpack.open(chunk) as lazy:
        same(lazy[[19_999, 3, 3, 1000]], raw[[19_999, 3, 3, 1000]])
        same(lazy.vindex[np.array([[5, 6], [7, 8]])], raw[[[5, 6], [7, 8]]])
    table = np.zeros(300, dtype=[("a", "<i4"), ("b", "<f8"), ("d", "<i2", (2,))])
    table["a"] = np.arange(300)
    table["d"][:, 1] = -np.arange(300)
    bloscpack.save(table, tmp_path / "t.bcolz", chunks=32)
    with bloscpack.open(tmp_path / "t.bcolz") as lazy:
        mask = table["a"] % 7 == 3
        same(lazy[mask], table[mask])
        same(lazy.oindex[[299, 0, 150]], table[[299, 0, 150]])
        same(lazy.vindex[np.array([[1, 2], [33, 299]])], table[[[1, 2], [33, 299]]])
        same(lazy["d"].oindex[[5, 250], [1]], table["d"][[5, 250]][:, [1]])
        same(lazy["d"][None, 7, ::-1], table["d"][None, 7, ::-1])


def test_examples(tmp_path):
    a = np.arange(20 * 30 * 4, dtype=np.float32).reshape(20, 30, 4)
    bloscpack.save(a, tmp_path / "a.b2nd", chunks=(6, 7, 4), blocks=(3, 3, 2))
    mask = np.arange(30) % 4 == 1
    with bloscpack.open(tmp_path / "a.b2nd") as lazy:
        same(lazy[[1, 5, 9], :], a[[1, 5, 9], :])
        same(lazy[:, mask], a[:, mask])
        same(lazy[0, :, [3, 1]], a[0, :, [3, 1]])  # numpy puts the array's axis first
        same(lazy[np.newaxis, ..., ::-2], a[np.newaxis, ..., ::-2])
        same(lazy[[[0, 1], [2, 19]], 3], a[[[0, 1], [2, 19]], 3])
        same(lazy.oindex[[1, 5, 9], mask, 2], a[[1, 5, 9]][:, mask, 2])
        same(lazy.oindex[[19, 0], ::-1, [3, 0]], a[np.ix_([19, 0], range(29, -1, -1), [3, 0])])
        same(lazy.vindex[[1, 5, 9], [0, 2, 29], [3, 3, 0]], a[[1, 5, 9], [0, 2, 29], [3, 3, 0]])
        same(lazy.vindex[a > 2000], a[a > 2000])
        same(lazy[a > 2000], a[a > 2000])  # a mask of the array's shape: numpy's points
        same(lazy.vindex[3, [4], 1], a[3, [4], 1])


# --- what is not taken: errors that say what to do -------------------------------------------


@pytest.fixture(scope="module")
def cube(tmp_path_factory):
    a = np.arange(5 * 6 * 7).reshape(5, 6, 7)
    path = tmp_path_factory.mktemp("cube") / "c.blp"
    bloscpack.save(a, path, chunk_size=40 * 8)
    with bloscpack.open(path) as lazy:
        yield lazy


ERRORS = [
    ("numpy", ([1, 2], [3, 4]), r"a[...] with 2 array indices: numpy would broadcast them"
     r" together; use a.oindex[...] to select along each axis on its own (every combination)"
     r" or a.vindex[...] for the points numpy's a[...] picks"),
    ("numpy", (np.ones((5, 6), bool),), "a 2-d boolean mask over some of the 3 axes is not"
     " supported: use a.vindex[mask] with a mask of the array's shape, or np.asarray(a)[...]"
     " to select in memory"),
    ("numpy", 1.5, "only integers, slices, '...', None (np.newaxis) and integer or boolean"
     " arrays are valid indices, got the float 1.5: use int(1.5)"),
    ("numpy", [0.0, 1.0], "an index array must hold integers or booleans, got dtype float64:"
     " convert it (x.astype(int)) or build a boolean mask"),
    ("numpy", (0, "x"), "only integers, slices, '...', None (np.newaxis) and integer or"
     " boolean arrays are valid indices, got the string 'x' (field names are taken only"
     " alone, as a[name])"),
    ("numpy", np.True_, "a boolean scalar (True) is not a valid index here: use None"
     " (np.newaxis) to add an axis, or a 1-d boolean mask to select along one"),
    ("numpy", [5], "index 5 is out of bounds for axis 0 with size 5"),
    ("numpy", (slice(None), [0, -7]), "index -7 is out of bounds for axis 1 with size 6"),
    ("numpy", (0, [True, False]), "boolean index did not match indexed array along axis 1;"
     " size of axis is 6 but size of corresponding boolean axis is 2"),
    ("numpy", (..., 0, ...), "an index can only have a single ellipsis ('...')"),
    ("numpy", (0, 0, [0], 0), "too many indices for array: array is 3-dimensional, but 4"
     " were indexed"),
    ("numpy", [[0, 1], [2]], "only integers, slices, '...', None (np.newaxis) and integer or"
     " boolean arrays are valid indices, got a ragged list: give one list per axis"),
    ("oindex", (np.zeros((2, 2), int),), "a.oindex[...] takes 1-d integer arrays or 1-d"
     " boolean masks, one per axis, got a 2-d array: use a.vindex[...] for points"),
    ("oindex", (0, 0, [7]), "index 7 is out of bounds for axis 2 with size 7"),
    ("vindex", ([0, 1], slice(None), 0), "a.vindex[...] takes one integer array (or integer)"
     " per axis, broadcast together, or one boolean mask of the array's shape, for"
     " oindex-like selections use a.oindex[...]; got array, slice, int"),
    ("vindex", ([0, 1], [0, 1, 2], 0), "shape mismatch: indexing arrays could not be"
     " broadcast together with shapes (2,) (3,)"),
    ("vindex", (np.ones((5, 6), bool),), "a.vindex[...] takes one integer array (or integer)"
     " per axis, broadcast together, or one boolean mask of the array's shape; got a 2-d mask"
     " for a 3-d array"),
    ("vindex", (np.ones((5, 6, 6), bool),), "boolean index did not match indexed array along"
     " axis 2; size of axis is 7 but size of corresponding boolean axis is 6"),
    ("vindex", ([0], [6], [0]), "index 6 is out of bounds for axis 1 with size 6"),
]  # fmt: skip


@pytest.mark.parametrize(("mode", "index", "message"), ERRORS)
def test_errors_say_what_to_do(cube, mode, index, message):
    where = {"numpy": cube, "oindex": cube.oindex, "vindex": cube.vindex}[mode]
    with pytest.raises(SelectionError, match=f"^{re.escape(message)}$") as info:
        where[index]
    assert isinstance(info.value, IndexError) and isinstance(info.value, BloscpackError)


def test_numpy_methods_are_not_pretended(cube):
    for name in ("astype", "T", "transpose", "sum", "mean", "reshape", "min", "tolist"):
        assert not hasattr(cube, name)
        with pytest.raises(AttributeError, match=(
            rf"^'BloscArray' object has no attribute '{name}': a lazy array computes nothing;"
            rf" read it into memory first \(np.asarray\(a\).{name}, or a selection such as"
            rf" a\[:100\].{name}\) or compute out of core with a.to_dask\(\).{name}$"
        )):  # fmt: skip
            getattr(cube, name)
    with pytest.raises(AttributeError, match=r"^'BloscArray' object has no attribute 'nope'$"):
        cube.nope  # noqa: B018
    values = np.arange(5 * 6 * 7).reshape(5, 6, 7)
    # numpy's functions read the array (through __array__) and give numpy's answers
    assert np.sum(cube) == values.sum() and np.mean(cube) == values.mean()
    same(np.transpose(cube), values.T)
    same(np.asarray(cube, dtype=np.float32), values.astype(np.float32))
    same(cube[...].T, values.T)


# --- only the chunks holding selected items are read --------------------------------------


class ChunkLog:
    """Chunk numbers read through every way a store reads chunks: a flat layout's chunk (or
    its first and last bytes), items of a frame's chunk decoded in one pass, and the blocks
    of a b2nd chunk."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.chunks: list[int] = []
        self.allocated: list[int] = []
        flat_chunk, b2nd_blocks = FlatStore._chunk, B2ndArray._chunk_blocks
        decode_items = CoreChunks.decode_chunk_items
        allocate = stores_base.allocate

        def counted_flat(store, c, lo=0, hi=0):
            self.chunks.append(c)
            return flat_chunk(store, c, lo, hi)

        def counted_blocks(array, nchunk, runs, ranged):
            self.chunks.append(nchunk)
            return b2nd_blocks(array, nchunk, runs, ranged)

        def counted_allocate(shape, dtype, name):
            self.allocated.append(int(np.prod(shape)))
            return allocate(shape, dtype, name)

        def counted_items(reader, c, lo, hi, dest):
            done = decode_items(reader, c, lo, hi, dest)
            if done:
                self.chunks.append(c)
            return done

        monkeypatch.setattr(FlatStore, "_chunk", counted_flat)
        monkeypatch.setattr(CoreChunks, "decode_chunk_items", counted_items)
        monkeypatch.setattr(B2ndArray, "_chunk_blocks", counted_blocks)
        monkeypatch.setattr(stores_base, "allocate", counted_allocate)

    def clear(self) -> None:
        self.chunks.clear(), self.allocated.clear()


ROWS = 1_000_000
CHUNK_ROWS = 10_000  # 100 chunks


@pytest.fixture(scope="module", params=VARIANTS[:5] + ["b2nd-sparse"])
def million(request, tmp_path_factory):
    """(format, a 1e6-row int16 column opened lazily, its values): chunks of 10,000 rows."""
    values = (np.arange(ROWS, dtype=np.int64) * 7919 % 30011).astype(np.int16)
    fmt = request.param
    path = tmp_path_factory.mktemp("million") / f"m.{fmt}"
    if fmt.startswith("b2nd"):
        bloscpack.save(values, path, format="b2nd", chunks=(CHUNK_ROWS,), blocks=(1000,),
                       sparse=fmt == "b2nd-sparse")  # fmt: skip
    elif fmt == "bcolz":
        bloscpack.save(values, path, format="bcolz", chunks=CHUNK_ROWS)
    else:
        bloscpack.save(values, path, format=fmt, chunk_size=CHUNK_ROWS * 2, blocksize=2000)
    with bloscpack.open(path) as lazy:
        yield fmt, lazy, values


def test_sparse_orthogonal_reads_two_chunks(million, monkeypatch):
    _, lazy, values = million
    log = ChunkLog(monkeypatch)
    same(lazy[[0, 999_999]], values[[0, 999_999]])
    assert sorted(set(log.chunks)) == [0, 99]
    assert max(log.allocated) <= 2  # never the box from the first to the last point
    for read in (lambda: lazy.oindex[[999_999, 0, 0]], lambda: lazy.vindex[[999_999, 0]]):
        log.clear()
        read()
        assert sorted(set(log.chunks)) == [0, 99] and max(log.allocated) <= 3


def test_index_arrays_read_only_the_chunks_they_touch(million, monkeypatch):
    _, lazy, values = million
    log = ChunkLog(monkeypatch)
    rng = np.random.default_rng(3)
    wanted = rng.choice(ROWS, 50, replace=False)
    same(lazy[wanted], values[wanted])
    assert sorted(set(log.chunks)) == sorted(set(wanted // CHUNK_ROWS))
    log.clear()
    mask = np.zeros(ROWS, bool)
    mask[250_000:250_100] = mask[730_017] = True
    same(lazy[mask], values[mask])
    assert sorted(set(log.chunks)) == [25, 73]
    log.clear()
    many = np.sort(rng.choice(np.arange(400_000, 430_000), 20_000, replace=False))[::-1]
    same(lazy.oindex[many], values[many])  # more points than are read one by one
    assert sorted(set(log.chunks)) == [40, 41, 42]
    assert max(log.allocated) <= 30_000  # dense points: at most the items they span
    log.clear()
    spread = np.sort(rng.choice(ROWS, 5_000, replace=False))
    same(lazy[spread], values[spread])
    assert max(log.allocated) <= 5_000  # sparse points: item by item, never their span


def test_point_reads_decode_only_blocks_holding_points(tmp_path, monkeypatch):
    """In a chunk, only the blocks holding points are decoded (chunks of 10 blocks)."""
    a = np.arange(100 * 100, dtype=np.float64).reshape(100, 100)
    decoded: list[int] = []
    getitem = engine.getitem_into

    def counted(chunk, start, nitems, out, **kwargs):
        decoded.append(nitems)
        return getitem(chunk, start, nitems, out, **kwargs)

    bloscpack.save(a, tmp_path / "a.b2nd", chunks=(50, 100), blocks=(5, 100))
    bloscpack.save(a, tmp_path / "a.blp", chunk_size=5000 * 8, blocksize=500 * 8,
                   blosc_version=2)  # fmt: skip
    for name in ("a.b2nd", "a.blp"):
        with bloscpack.open(tmp_path / name, verify=False) as lazy:
            lazy[0, 0]  # the b2nd frame index is read once
            monkeypatch.setattr(engine, "getitem_into", counted)
            decoded.clear()
            same(lazy.vindex[[3, 97, 61], [1, 50, 99]], a[[3, 97, 61], [1, 50, 99]])
            same(lazy.oindex[[3, 61], [1, 99]], a[np.ix_([3, 61], [1, 99])])
            # each point's block holds 500 items: never more than that is decoded per point
            assert len(decoded) <= 3 + 4 and sum(decoded) <= 7 * 500, decoded
            monkeypatch.setattr(engine, "getitem_into", getitem)


# --- threads ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["blp", "b2nd", "sframe", "bcolz"])
def test_threads_share_one_array(tmp_path, fmt):
    values = np.cumsum(np.random.default_rng(1).standard_normal(60_000)).reshape(3000, 20)
    path = save(fmt, values, tmp_path, 200, 64)
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)
    with bloscpack.open(path) as lazy:

        def worker(seed: int) -> None:
            rng = np.random.default_rng(seed)
            barrier.wait()
            try:
                for _ in range(40):
                    rows = rng.integers(0, 3000, 30)
                    cols = rng.integers(0, 20, 30)
                    mask = rng.random(20) < 0.5
                    np.testing.assert_array_equal(lazy.vindex[rows, cols], values[rows, cols])
                    np.testing.assert_array_equal(lazy.oindex[rows, mask],
                                                  values[rows][:, mask])  # fmt: skip
                    np.testing.assert_array_equal(lazy[rows[::-1]], values[rows[::-1]])
            except BaseException as exc:  # noqa: BLE001 (reported by the main thread)
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors[0]


# --- repr ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "clevel"), [("blp", "?"), ("b2frame", "3"), ("b2nd", "3"),
                                             ("sframe", "3"), ("bcolz", "3")])  # fmt: skip
def test_repr_has_the_same_fields_for_every_format(tmp_path, fmt, clevel):
    a = np.zeros((1000, 100))
    a[::7] = np.arange(100)
    path = tmp_path / f"x.{fmt}"
    bloscpack.save(a, path, format=fmt, chunks=(250, 100), codec="zstd", clevel=3)
    if FORMATS[fmt].directory:
        stored = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    else:
        stored = path.stat().st_size
    ratio = f"{a.nbytes / stored:.2f}"
    with bloscpack.open(path) as lazy:
        assert repr(lazy) == (
            f"<BloscArray {fmt} shape=(1000, 100) dtype=float64 chunks=(250, 100) codec=zstd"
            f" clevel={clevel} ratio={ratio} '{path}'>"
        )
        assert repr(lazy.oindex) == f"<oindex of {lazy!r}>"
    assert repr(lazy).endswith(f"ratio={ratio} '{path}' (closed)>")  # what was read stays
    with bloscpack.open(path) as lazy:
        pass
    assert repr(lazy).endswith(" codec=? clevel=? ratio=? " f"'{path}' (closed)>")


def test_repr_of_bytes_chunks_and_columns(tmp_path):
    values = np.arange(5000, dtype="<u4")
    chunk = bytes(engine.compress_blosc2(values, typesize=4, codec="lz4"))
    with bloscpack.open(chunk) as lazy:
        assert repr(lazy) == (
            f"<BloscArray chunk shape=(20000,) dtype=uint8 chunks=(20000,) codec=lz4 clevel=?"
            f" ratio={20000 / len(chunk):.2f} '<bytes>'>"
        )
    table = np.zeros(300, dtype=[("a", "<i4"), ("b", "<f8")])
    path = tmp_path / "t.bcolz"
    bloscpack.save(table, path, chunks=100, codec="blosclz", clevel=9)
    stored = sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    with bloscpack.open(path) as lazy:
        ratio = f"{table.nbytes / stored:.2f}"  # the container's, for a column too
        assert repr(lazy["b"]) == (
            f"<BloscArray bcolz shape=(300,) dtype=float64 chunks=(100,) codec=blosclz"
            f" clevel=9 ratio={ratio} '{path}'['b']>"
        )
