"""bloscpack.open() and BloscArray: numpy's results on every format, the array protocol,
iteration, chunks, metadata, pickling, file objects and errors."""

from __future__ import annotations

import io
import math
import os
import pickle
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import bloscpack
from bloscpack import dispatch
from bloscpack import ndarray as nd
from bloscpack.api import pack_bytes_to_file
from bloscpack.array import BloscArray
from bloscpack.containers.b2nd import save_b2nd
from bloscpack.containers.bcolz import save_bcolz
from bloscpack.containers.bloscpack import save_blp
from bloscpack.containers.frame.api import Frame
from bloscpack.engine import compress_blosc2
from bloscpack.errors import (
    ArgumentError,
    BloscpackError,
    IntegrityError,
    NotAContainer,
    SelectionError,
)

CHUNK_ITEMS = 96  # items per chunk of the flat layouts written here (many chunks)
BLOCK_ITEMS = 16  # items per block (several blocks per chunk)


# --- writing an array in every format ------------------------------------------------------


def _blp(a: np.ndarray, path: Path) -> None:
    item = max(a.dtype.itemsize, 1)
    save_blp(a, path, chunk_size=CHUNK_ITEMS * item, blocksize=BLOCK_ITEMS * item)


def _blp_straddle(a: np.ndarray, path: Path) -> None:
    """Chunks of a size that is no multiple of the itemsize: items straddle chunks."""
    c = a.copy(order="C")
    chunk = CHUNK_ITEMS * a.dtype.itemsize + 3
    data = c.reshape(-1).view(np.uint8) if c.size else b""
    pack_bytes_to_file(data, path, chunk_size=chunk, metadata=nd.encode_metadata(c))


def _b2nd(a: np.ndarray, path: Path, sparse: bool = False) -> None:
    chunks = tuple(max(1, -(-n // 3)) for n in a.shape)
    blocks = tuple(max(1, -(-c // 2)) for c in chunks)
    save_b2nd(a, path, chunks=chunks, blocks=blocks, sparse=sparse)


def _frame(a: np.ndarray, path: Path, sparse: bool = False, sizes: list[int] | None = None) -> None:
    """A raw Blosc2 frame holding the C-order bytes of ``a`` and its numpy metadata as
    vlmetalayers; ``sizes``: variable chunk sizes in bytes (cycled; typesize 1, and all-zero
    pieces stored uncompressed, as a variable-size frame cannot hold special chunks)."""
    c = a.copy(order="C")
    data = c.reshape(-1).view(np.uint8) if c.size else np.empty(0, np.uint8)
    item = 1 if sizes else max(a.dtype.itemsize, 1)
    chunk = CHUNK_ITEMS * item
    with Frame(path, "w", sparse=sparse, typesize=item, blocksize=BLOCK_ITEMS * item,
               chunksize=0 if sizes else chunk, vlmeta=nd.encode_metadata(c)) as frame:  # fmt: skip
        pos, k = 0, 0
        while pos < len(data):
            step = sizes[k % len(sizes)] if sizes else chunk
            piece = data[pos : pos + step]
            if sizes:
                level = 5 if piece.any() else 0
                frame.append_chunk(compress_blosc2(piece, typesize=1, clevel=level, blocksize=16))
            else:
                frame.append_data(piece)
            pos, k = pos + step, k + 1


def _bcolz(a: np.ndarray, path: Path) -> None:
    row = math.prod(a.shape[1:]) or 1
    save_bcolz(a, path, chunklen=max(1, CHUNK_ITEMS // row))


WRITERS: dict[str, Callable[[np.ndarray, Path], None]] = {
    "blp": _blp,
    "blp-fortran": lambda a, p: _blp(np.asfortranarray(a) if a.ndim else a, p),
    "blp-straddle": _blp_straddle,
    "b2nd": _b2nd,
    "b2nd-sparse": lambda a, p: _b2nd(a, p, sparse=True),
    "b2frame": _frame,
    "sframe": lambda a, p: _frame(a, p, sparse=True),
    "b2frame-varlen": lambda a, p: _frame(a, p, sizes=[101, 7, 333, 64]),
    "bcolz": _bcolz,
}
FORMAT_NAMES = {"blp": "blp", "b2nd": "b2nd", "b2frame": "b2frame", "sframe": "sframe",
                "bcolz": "bcolz"}  # fmt: skip


def write(fmt: str, a: np.ndarray, directory: Path) -> Path:
    """``a`` saved in ``fmt`` (a key of WRITERS) under ``directory``."""
    path = directory / f"{fmt}.data"
    WRITERS[fmt](a, path)
    return path


def expected_format(fmt: str) -> str:
    return FORMAT_NAMES[fmt.split("-")[0]]


def same(got: object, expected: object) -> None:
    """Numpy's result exactly: type (scalar or array), shape, dtype and bytes."""
    assert type(got) is type(expected), (type(got), type(expected))
    g, e = np.asarray(got), np.asarray(expected)
    assert g.shape == e.shape and g.dtype == e.dtype
    assert np.ascontiguousarray(g).tobytes() == np.ascontiguousarray(e).tobytes()


CUBE = np.arange(13 * 11 * 7, dtype=np.int32).reshape(13, 11, 7) * 7919 % 2003 - 1000


@pytest.fixture(scope="module", params=sorted(WRITERS))
def cube(request, tmp_path_factory):
    """(format, the 3-d test array opened lazily from that format)."""
    path = write(request.param, CUBE, tmp_path_factory.mktemp("cube"))
    with bloscpack.open(path) as array:
        yield request.param, array


# --- numpy's results ----------------------------------------------------------------------


def axis_index(n: int) -> st.SearchStrategy:
    bound = st.none() | st.integers(-n - 3, n + 3)
    return st.one_of(
        st.integers(-n - 1, n),
        st.builds(slice, bound, bound, st.none() | st.integers(-4, 4).filter(bool)),
    )


@st.composite
def indices(draw, shape: tuple[int, ...]):
    """A basic numpy index for ``shape``: one entry per axis or fewer, maybe an ellipsis."""
    count = draw(st.integers(0, len(shape)))
    items = [draw(axis_index(n)) for n in shape[:count]]
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return items[0] if len(items) == 1 and draw(st.booleans()) else tuple(items)


def check_index(array: BloscArray, reference: np.ndarray, index) -> None:
    try:
        expected = reference[index]
    except IndexError as exc:
        with pytest.raises(IndexError) as info:
            array[index]
        assert str(info.value) == str(exc)
        return
    same(array[index], expected)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_random_indices_match_numpy(cube, data):
    _, array = cube
    check_index(array, CUBE, data.draw(indices(CUBE.shape)))


@pytest.mark.parametrize(
    "index",
    [
        0,
        -1,
        12,
        (3, 4, 5),
        (-1, -1, -1),
        (3, 4),
        np.s_[2:9],
        np.s_[::-1],
        np.s_[::-3, 1],
        np.s_[..., 2],
        np.s_[1, ...],
        np.s_[1, 2, 3, ...],
        np.s_[...],
        (),
        np.s_[5:2],
        np.s_[:, ::-2, 1:6:2],
        np.s_[3, :, -2],
        np.s_[-100:100],
        np.s_[:, :, ::-1],
        (np.int64(3), np.uint8(2)),
        np.s_[12:13, 10:11, 6:7],
    ],  # fmt: skip
)
def test_fixed_indices_match_numpy(cube, index):
    _, array = cube
    check_index(array, CUBE, index)


def test_description(cube):
    fmt, array = cube
    assert array.shape == CUBE.shape and array.dtype == CUBE.dtype
    assert (array.ndim, array.size, array.nbytes) == (3, CUBE.size, CUBE.nbytes)
    assert len(array) == 13
    assert array.format == expected_format(fmt)
    assert re.fullmatch(
        rf"<BloscArray {array.format} shape=\(13, 11, 7\) dtype=int32"
        rf" chunks={re.escape(str(array.chunks))} codec=\w+ clevel=(\d|\?) ratio=\d+\.\d\d"
        rf" '{re.escape(os.fspath(array.path))}'>",
        repr(array),
    ), repr(array)


def test_whole_array_and_dtype_conversion(cube):
    _, array = cube
    same(np.asarray(array), CUBE)
    same(np.asarray(array, dtype=np.float64), CUBE.astype(np.float64))
    same(np.array(array), CUBE)
    with pytest.raises(ValueError, match="always makes a new array"):
        np.asarray(array, copy=False)


def test_iteration_over_first_axis(cube):
    _, array = cube
    rows = list(array)
    assert len(rows) == 13
    for row, expected in zip(rows, CUBE, strict=True):
        same(row, expected)


def test_iter_chunks_tile_the_array(cube):
    fmt, array = cube
    pieces = list(array.iter_chunks())
    if array.chunks is None:  # flat chunks that cut rows: items in storage order
        order = "F" if fmt == "blp-fortran" else "C"
        same(np.concatenate(pieces), CUBE.ravel(order=order))
        return
    assert pieces[0].shape == array.chunks
    rebuilt = np.zeros_like(CUBE)
    if fmt.startswith("b2nd"):  # chunks in C order over the chunk grid
        grid = [range(0, n, c) for n, c in zip(CUBE.shape, array.chunks, strict=True)]
        starts = [(i, j, k) for i in grid[0] for j in grid[1] for k in grid[2]]
    else:
        axis = 2 if fmt == "blp-fortran" else 0
        starts = [tuple(s if d == axis else 0 for d in range(3))
                  for s in range(0, CUBE.shape[axis], array.chunks[axis])]  # fmt: skip
    assert len(starts) == len(pieces)
    for start, piece in zip(starts, pieces, strict=True):
        region = tuple(slice(s, s + n) for s, n in zip(start, piece.shape, strict=True))
        rebuilt[region] = piece
    same(rebuilt, CUBE)


CHUNK_SHAPES = {
    "blp": None,  # 96 items per chunk, rows of 77 items: chunks cut rows
    "blp-fortran": None,
    "blp-straddle": None,
    "b2nd": (5, 4, 3),
    "b2nd-sparse": (5, 4, 3),
    "b2frame": None,
    "sframe": None,
    "b2frame-varlen": None,
    "bcolz": (1, 11, 7),  # chunklen 96 // 77 = 1 row
}


def test_chunks_attribute(cube):
    fmt, array = cube
    assert array.chunks == CHUNK_SHAPES[fmt]


def test_chunks_of_row_aligned_layouts(tmp_path):
    a = np.arange(40 * 6, dtype=np.int16).reshape(40, 6)
    save_blp(a, tmp_path / "c.blp", chunk_size=6 * 2 * 8)
    save_blp(np.asfortranarray(a), tmp_path / "f.blp", chunk_size=40 * 2 * 2)
    for name, chunks in (("c.blp", (8, 6)), ("f.blp", (40, 2))):
        with bloscpack.open(tmp_path / name) as array:
            assert array.chunks == chunks
            assert all(p.shape == chunks for p in array.iter_chunks())
            same(array[3:17, 1:5], a[3:17, 1:5])


# --- arrays of any shape and dtype ------------------------------------------------------------

DTYPES = [np.dtype(t) for t in ("i1", "<u2", ">i4", "<f8", "c8", "?", "S3", "<U2", "<M8[s]")]
DTYPES.append(np.dtype([("a", "<i2"), ("b", "S3")]))


@settings(max_examples=12, deadline=None)
@given(
    a=st.sampled_from(DTYPES).flatmap(lambda dt: hnp.arrays(
        dt, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=9))),
    fmt=st.sampled_from(sorted(WRITERS)),
    data=st.data(),
)  # fmt: skip
def test_any_array_in_any_format(tmp_path_factory, a, fmt, data):
    if fmt.startswith("b2nd") and a.ndim == 0 and fmt.endswith("sparse"):
        fmt = "b2nd"
    if fmt == "bcolz" and (a.ndim == 0 or 0 in a.shape[1:]):  # bcolz rows hold bytes
        fmt = "blp"
    if fmt == "bcolz" and a.dtype.names and a.ndim > 1:  # a ctable is a 1-d table
        fmt = "blp"
    path = write(fmt, a, tmp_path_factory.mktemp("any"))
    with bloscpack.open(path) as array:
        assert array.shape == a.shape and array.dtype == a.dtype
        same(np.asarray(array), a)
        for _ in range(5):
            check_index(array, a, data.draw(indices(a.shape)))


def test_zero_d(tmp_path):
    a = np.array(3.5)
    for fmt in ("blp", "b2nd", "b2frame"):
        path = write(fmt, a, tmp_path)
        with bloscpack.open(path) as array:
            assert array.shape == () and array.size == 1 and array.chunks == ()
            same(array[()], np.float64(3.5))
            same(array[...], np.array(3.5))
            with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
                len(array)
            with pytest.raises(TypeError, match="iteration over a 0-d array"):
                iter(array).__next__()
            same(list(array.iter_chunks())[0], np.array(3.5))


# --- raw bytes and metadata -----------------------------------------------------------------


def test_blp_without_metadata_is_bytes(tmp_path):
    data = bytes(range(256)) * 40
    pack_bytes_to_file(data, tmp_path / "raw.blp", chunk_size=1000, metadata={"user": [1, 2]})
    with bloscpack.open(tmp_path / "raw.blp") as array:
        assert (array.shape, array.dtype, array.chunks) == ((10240,), np.uint8, (1000,))
        assert array.metadata == {"user": [1, 2]}
        same(array[::-7], np.frombuffer(data, np.uint8)[::-7])
        same(array[5000], np.uint8(5000 % 256))


def test_frame_without_metadata_is_bytes_whatever_its_typesize(tmp_path):
    values = np.arange(3000, dtype="<i8")
    with Frame(tmp_path / "f.b2frame", "w", typesize=8, chunksize=8000) as frame:
        for k in range(0, 3000, 1000):
            frame.append_data(values[k : k + 1000])
        frame.vlmeta["unit"] = "m"
    with bloscpack.open(tmp_path / "f.b2frame") as array:
        assert (array.format, array.shape, array.dtype) == ("b2frame", (24000,), np.uint8)
        assert array.metadata == {"unit": "m"}
        same(array[8:16], values.view(np.uint8)[8:16])
        same(array[...], values.view(np.uint8))


def test_metadata_per_format(tmp_path):
    a = np.arange(10.0)
    save_b2nd(a, tmp_path / "a.b2nd", vlmeta={"author": "x"})
    save_bcolz(a, tmp_path / "a.bcolz", attrs={"k": 1})
    save_blp(a, tmp_path / "a.blp")
    for name, metadata in (("a.b2nd", {"author": "x"}), ("a.bcolz", {"k": 1}),
                           ("a.blp", nd.encode_metadata(a))):  # fmt: skip
        with bloscpack.open(tmp_path / name) as array:
            assert array.metadata == metadata


def test_single_chunk_files_and_bytes(tmp_path):
    values = np.arange(5000, dtype="<u4")
    chunk = bytes(compress_blosc2(values, typesize=4, blocksize=1024))
    (tmp_path / "c.chunk").write_bytes(chunk)
    for source in (tmp_path / "c.chunk", chunk):
        with bloscpack.open(source) as array:
            assert (array.format, array.shape, array.dtype) == ("chunk", (20000,), np.uint8)
            same(array[4:4000:3], values.view(np.uint8)[4:4000:3])
            assert array.info()["format"] == "chunk"


# --- bcolz ctables ------------------------------------------------------------------------

TABLE = np.array(
    [(i, i * 0.5, f"r{i}".encode(), (i, -i)) for i in range(500)],
    dtype=[("a", "<i4"), ("b", "<f8"), ("c", "S4"), ("d", "<i2", (2,))],
)


@pytest.fixture(scope="module")
def table_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("ctable") / "t.bcolz"
    save_bcolz(TABLE, path, chunklen=64)
    return path


def test_ctable_is_structured(table_path):
    with bloscpack.open(table_path) as table:
        assert (table.format, table.shape, table.dtype, table.chunks) == (
            "bcolz", (500,), TABLE.dtype, (64,))  # fmt: skip
        same(table[7], TABLE[7])
        same(table[-3:100:-41], TABLE[-3:100:-41])
        same(np.asarray(table), TABLE)
        same(list(table)[499], TABLE[499])
        same(np.concatenate(list(table.iter_chunks())), TABLE)


def test_ctable_columns_by_name(table_path):
    with bloscpack.open(table_path) as table:
        column = table["d"]
        assert isinstance(column, BloscArray)
        assert (column.shape, column.dtype, column.chunks) == ((500, 2), np.dtype("<i2"), (64, 2))
        same(column[10:20, 1], TABLE["d"][10:20, 1])
        same(table["a"][499], np.int32(499))
        pair = table[["c", "a"]]
        assert pair.dtype.names == ("c", "a")
        same(pair[3], np.array(TABLE[["c", "a"]][3].item(), dtype=pair.dtype)[()])
        with pytest.raises(ValueError, match="no field of name zz"):
            table["zz"]
    with bloscpack.open(table_path, columns=["b"]) as table:
        assert table.dtype == np.dtype([("b", "<f8")])
        same(table[4]["b"], np.float64(2.0))


def test_columns_option_only_for_ctables(tmp_path):
    save_blp(np.arange(3), tmp_path / "a.blp")
    with pytest.raises(
        ArgumentError, match="columns= selects ctable columns; this container is blp"
    ):
        bloscpack.open(tmp_path / "a.blp", columns=["x"])


def test_field_of_other_structured_arrays(tmp_path):
    save_blp(TABLE, tmp_path / "t.blp")
    with bloscpack.open(tmp_path / "t.blp") as array:
        same(array["b"], TABLE["b"])


# --- info, pickling, files, lifetime --------------------------------------------------------


def test_info_is_dispatch_info(tmp_path, table_path):
    path = write("b2nd", CUBE, tmp_path)
    with bloscpack.open(path) as array:
        assert array.info() == dispatch.info(path)
    with bloscpack.open(table_path) as table:
        assert table.info() == dispatch.info(table_path)
        assert table["a"].info() == dispatch.info(table_path)
    data = (tmp_path / "b2nd.data").read_bytes()
    with bloscpack.open(data) as array:
        assert array.info()["b2nd"] == dispatch.info(path)["b2nd"]


@pytest.mark.parametrize("fmt", ["blp", "b2nd-sparse", "bcolz", "b2frame"])
def test_pickle_reopens_the_path(tmp_path, fmt):
    path = write(fmt, CUBE, tmp_path)
    with bloscpack.open(path, verify=False) as array:
        clone = pickle.loads(pickle.dumps(array))
    with clone:
        assert clone.path == os.fspath(path) and clone._options == {"verify": False}
        same(clone[2, ::3], CUBE[2, ::3])


def test_pickle_ctable_column_and_bytes(tmp_path, table_path):
    with bloscpack.open(table_path) as table:
        column = pickle.loads(pickle.dumps(table["c"]))
    same(column[:], TABLE["c"])
    data = write("blp", CUBE, tmp_path).read_bytes()
    with bloscpack.open(data) as array, pickle.loads(pickle.dumps(array)) as clone:
        same(clone[1], CUBE[1])


def test_file_objects(tmp_path):
    path = write("blp", CUBE, tmp_path)
    data = path.read_bytes()
    with open(path, "rb") as fh, bloscpack.open(fh) as array:
        same(array[4, 5], CUBE[4, 5])
        with pytest.raises(TypeError, match="opened from a file object cannot be pickled"):
            pickle.dumps(array)
        assert array.path is None and "'<file object>'" in repr(array)
    embedded = tmp_path / "embedded.bin"
    embedded.write_bytes(b"x" * 100 + write("b2nd", CUBE, tmp_path).read_bytes())
    with open(embedded, "rb") as fh:
        fh.seek(100)
        with bloscpack.open(fh) as array:
            assert array.format == "b2nd"
            same(array[::-1, 3], CUBE[::-1, 3])
    with bloscpack.open(io.BytesIO(data)) as array:
        same(array[...], CUBE)
    with open(path) as text, pytest.raises(TypeError, match="opened in binary mode"):
        bloscpack.open(text)


def test_context_manager_and_close(tmp_path):
    path = write("blp", CUBE, tmp_path)
    with bloscpack.open(path) as array:
        same(array[0, 0, 0], CUBE[0, 0, 0])
    assert "(closed)" in repr(array)
    with pytest.raises(ValueError, match="I/O operation on a closed BloscArray"):
        array[0]
    with pytest.raises(ValueError, match="closed"):
        list(array.iter_chunks())
    array.close()  # closing twice is fine


def test_bad_indices(tmp_path):
    with bloscpack.open(write("b2nd", CUBE, tmp_path)) as array:
        for index, message in [
            (13, "index 13 is out of bounds for axis 0 with size 13"),
            ((0, 0, 0, 0), "too many indices for array: array is 3-dimensional, but 4 were"),
            (1.5, r"only integers, slices, '...', None \(np.newaxis\) and integer or boolean"
                  r" arrays are valid indices, got the float 1.5: use int\(1.5\)$"),
            (True, r"a boolean scalar \(True\) is not a valid index here: use None"),
            ([1, 20], "index 20 is out of bounds for axis 0 with size 13"),
            (([1, 2], [3, 4]), r"a\[...\] with 2 array indices: numpy would broadcast them"),
        ]:
            with pytest.raises(SelectionError, match=message):
                array[index]
        # None (np.newaxis) and an index array are numpy's
        same(array[None, 2], CUBE[None, 2])
        same(array[[1, 2]], CUBE[[1, 2]])


def test_not_a_container(tmp_path):
    (tmp_path / "x.bin").write_bytes(b"hello world, no blosc here")
    with pytest.raises(NotAContainer):
        bloscpack.open(tmp_path / "x.bin")
    with pytest.raises(NotAContainer, match="<bytes>: not a Blosc container"):
        bloscpack.open(b"hello world, no blosc here")
    with pytest.raises(TypeError, match="takes a path, a binary file object or bytes, not int"):
        bloscpack.open(3)


def test_shape_that_does_not_match_the_chunks(tmp_path):
    meta = nd.encode_metadata(np.zeros((5, 5), np.int32))
    pack_bytes_to_file(bytes(96), tmp_path / "lie.blp", metadata=meta)
    with pytest.raises(IntegrityError, match="needs 100 bytes, the chunks hold 96"):
        bloscpack.open(tmp_path / "lie.blp")


@settings(max_examples=60, deadline=None)
@given(
    fmt=st.sampled_from(["blp", "b2nd", "b2frame"]),
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), min_size=1,
                   max_size=4),
)  # fmt: skip
def test_mutated_bytes_raise_only_bloscpack_errors(tmp_path_factory, fmt, flips):
    data = bytearray(_SMALL.setdefault(fmt, _small_bytes(fmt, tmp_path_factory)))
    for pos, xor in flips:
        data[pos % len(data)] ^= xor
    try:
        with bloscpack.open(bytes(data), verify=False) as array:
            np.asarray(array)
            if array.ndim and array.size:
                array[tuple(slice(None, None, -2) for _ in array.shape)]
                array[(0,) * array.ndim]
    except BloscpackError:
        pass


_SMALL: dict[str, bytes] = {}


def _small_bytes(fmt: str, tmp_path_factory) -> bytes:
    a = np.arange(300, dtype=np.int16).reshape(20, 15)
    return write(fmt, a, tmp_path_factory.mktemp("small")).read_bytes()


def test_unaligned_ranges_one_block_long(tmp_path):
    """Item ranges exactly one block (or the short last block) long that start inside a block:
    C-Blosc2 3.x's getitem decodes them wrongly, the engine reads them in two parts."""
    a = np.arange(1000, dtype=np.int32) * 7919 % 2003
    save_blp(a, tmp_path / "w.blp", chunk_size=4000, blocksize=256, blosc_version=2)
    with bloscpack.open(tmp_path / "w.blp") as array:
        for n in (64, 40):  # blocks of 64 items; the last holds 4000 % 256 / 4 = 40
            for start in range(1, 1000 - n, 7):
                same(array[start : start + n], a[start : start + n])
