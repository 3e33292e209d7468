"""NDArray geometry: chunk buffers byte for byte as python-blosc2 builds them, default chunk
and block shapes (python-blosc2's, and bloscpack's for box reads), and selection
projections."""

from __future__ import annotations

import math
import platform

import blosc2
import numpy as np
import pytest
from blosc2 import blosc2_ext
from blosc2.core import compute_chunks_blocks
from hypothesis import given, settings
from hypothesis import strategies as st

from bloscpack.containers.b2nd.layout import (
    BLOCK_ROWS,
    CacheSizes,
    box_chunks_blocks,
    default_block_nbytes,
    default_chunks_blocks,
    nearest_divisor,
)
from bloscpack.containers.grid import (
    ChunkGrid,
    array_to_chunk,
    chunk_to_array,
    gather_into,
    normalize_index,
    project_selection,
    region_is_contiguous,
)
from bloscpack.errors import FormatError


def chunk_buffers(array: np.ndarray, grid: ChunkGrid) -> list[np.ndarray]:
    out = []
    for n in range(grid.nchunks):
        buf = np.empty(grid.chunk_nbytes // array.dtype.itemsize, dtype=array.dtype)
        array_to_chunk(array, grid, grid.chunk_coords(n), buf)
        out.append(buf)
    return out


def test_documented_one_dim_chunks():
    grid = ChunkGrid((10,), (4,), (3,), 4)
    assert (grid.ext_chunk, grid.grid, grid.bgrid, grid.nchunks) == ((6,), (3,), (2,), 3)
    bufs = chunk_buffers(np.arange(10, dtype="<i4"), grid)
    assert [b.tolist() for b in bufs] == [
        [0, 1, 2, 3, 0, 0],
        [4, 5, 6, 7, 0, 0],
        [8, 9, 0, 0, 0, 0],
    ]


def test_documented_interior_block_padding():
    grid = ChunkGrid((12, 10), (5, 4), (2, 3), 8)
    assert grid.ext_chunk == (6, 6) and grid.chunk_nbytes == 288 and grid.block_nbytes == 48
    (chunk0, *_) = chunk_buffers(np.arange(120.0).reshape(12, 10), grid)
    assert chunk0[6:12].tolist() == [3, 0, 0, 13, 0, 0]  # block (0, 1): one valid column


def test_zero_d_and_zero_size():
    grid = ChunkGrid((), (), (), 8)
    assert (grid.nchunks, grid.chunk_nbytes, grid.block_nbytes, grid.chunk_coords(0)) == (
        1,
        8,
        8,
        (),
    )
    out = np.zeros((), dtype="<f8")
    chunk_to_array(np.array([2.5]), grid, (), out)
    assert out[()] == 2.5
    assert ChunkGrid((0, 5), (0, 5), (0, 5), 4).nchunks == 0
    assert ChunkGrid((3, 0), (2, 2), (1, 1), 4).chunk_nbytes == 16


@pytest.mark.parametrize(
    ("shape", "chunks", "blocks"),
    [((10,), (4,), (3,)), ((12, 10), (5, 4), (2, 3)), ((7, 5, 6), (3, 5, 4), (2, 2, 3))],
)
def test_frame_item_is_the_item_position_in_the_chunks(shape, chunks, blocks):
    array = np.arange(math.prod(shape), dtype="<i4").reshape(shape)
    grid = ChunkGrid(shape, chunks, blocks, 4)
    items = np.concatenate(chunk_buffers(array, grid))
    for coords in np.ndindex(*shape):
        assert items[grid.frame_item(coords)] == array[coords]


def test_grid_checks_geometry():
    with pytest.raises(FormatError, match="chunks 0"):
        ChunkGrid((4,), (0,), (1,), 4)


def test_blocks_in_order():
    assert ChunkGrid((10000, 10000), (100, 10000), (2, 10000), 8).blocks_in_order
    assert ChunkGrid((9, 9), (9, 9), (1, 3), 8).blocks_in_order
    assert not ChunkGrid((9, 9), (9, 9), (3, 3), 8).blocks_in_order
    assert ChunkGrid((9, 9), (3, 9), (3, 9), 8).blocks_in_order


def test_chunk_is_array_bytes():
    grid = ChunkGrid((1000, 100), (300, 100), (20, 100), 8)
    assert grid.chunk_is_array_bytes((0, 0)) and grid.byte_offset((2, 0)) == 600 * 100 * 8
    assert not grid.chunk_is_array_bytes((3, 0))  # the edge chunk is padded
    assert not ChunkGrid((10, 10), (5, 5), (5, 5), 1).chunk_is_array_bytes((0, 0))
    assert region_is_contiguous((1, 1, 4, 10), (7, 5, 9, 10))
    assert not region_is_contiguous((2, 4, 10), (7, 9, 10))


SAMPLES = [
    ((10,), (4,), (3,), "<i4"),
    ((12, 10), (5, 4), (2, 3), "<f8"),
    ((3, 5, 7), (2, 5, 4), (1, 2, 4), "<i2"),
    ((7, 6, 5, 4), (3, 4, 2, 3), (2, 3, 1, 2), ">u2"),
    ((9, 8), (9, 8), (3, 4), "<c16"),
    ((6, 7), (4, 5), (4, 5), "|b1"),
    ((5, 3), (2, 2), (1, 2), "S5"),
    ((4, 4), (3, 3), (2, 2), [("a", "<i4"), ("b", "<f8")]),
]


@pytest.mark.parametrize(("shape", "chunks", "blocks", "dtype"), SAMPLES)
def test_chunks_equal_python_blosc2s(tmp_path, shape, chunks, blocks, dtype):
    rng = np.random.default_rng(7)
    array = np.frombuffer(
        rng.bytes(math.prod(shape) * np.dtype(dtype).itemsize), dtype=dtype
    ).reshape(shape)
    if np.dtype(dtype) == np.bool_:
        array = array.view(np.uint8) % 2 == 1
    ref = blosc2.asarray(array, urlpath=str(tmp_path / "a.b2nd"), chunks=chunks, blocks=blocks,
                         cparams=blosc2.CParams(nthreads=1))  # fmt: skip
    grid = ChunkGrid(shape, chunks, blocks, array.dtype.itemsize)
    assert ref.schunk.nchunks == grid.nchunks and ref.schunk.chunksize == grid.chunk_nbytes
    mine = chunk_buffers(array, grid)
    out = np.empty_like(array)
    for n in range(grid.nchunks):
        theirs = np.frombuffer(ref.schunk.decompress_chunk(n), dtype=array.dtype)
        assert theirs.tobytes() == mine[n].tobytes()
        chunk_to_array(theirs, grid, grid.chunk_coords(n), out)
    assert out.tobytes() == array.tobytes()


@st.composite
def geometries(draw):
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(1, 7)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, s + 2)) for s in shape)
    blocks = tuple(draw(st.integers(1, c)) for c in chunks)
    dtype = draw(st.sampled_from(["u1", "<i4", ">f8", "V3"]))
    return shape, chunks, blocks, np.dtype(dtype)


@settings(max_examples=200, deadline=None)
@given(geometries(), st.booleans())
def test_round_trip_through_chunks(geometry, fortran):
    shape, chunks, blocks, dtype = geometry
    rng = np.random.default_rng(1)
    array = np.frombuffer(rng.bytes(math.prod(shape) * dtype.itemsize), dtype=dtype).reshape(shape)
    if fortran:
        array = np.asfortranarray(array)
    grid = ChunkGrid(shape, chunks, blocks, dtype.itemsize)
    out = np.empty(shape, dtype=dtype)
    for n, buf in enumerate(chunk_buffers(array, grid)):
        chunk_to_array(buf, grid, grid.chunk_coords(n), out)
        padded = np.empty(grid.ext_chunk, dtype=dtype)
        gather_into(buf, grid, tuple(slice(0, e, 1) for e in grid.ext_chunk), padded)
        assert padded.shape == grid.ext_chunk
        region = grid.chunk_region(grid.chunk_coords(n))
        valid = padded[tuple(slice(0, r.stop - r.start) for r in region)]
        assert valid.tobytes() == np.ascontiguousarray(array[region]).tobytes()
        # padding is zero bytes
        assert padded.view(np.uint8).sum() == valid.view(np.uint8).sum()
    assert out.tobytes() == np.ascontiguousarray(array).tobytes()


@settings(max_examples=200, deadline=None)
@given(geometries(), st.data())
def test_projection_reads_exactly_the_selection(geometry, data):
    shape, chunks, blocks, dtype = geometry
    array = np.arange(math.prod(shape), dtype="<i8").reshape(shape)
    grid = ChunkGrid(shape, chunks, blocks, 8)
    bufs = chunk_buffers(array, grid)
    bound = st.integers(-max(shape) - 1, max(shape) + 1) | st.none()
    selection = tuple(
        slice(data.draw(bound), data.draw(bound), data.draw(st.integers(1, 4))) for _ in shape
    )  # fmt: skip
    slices, _ = normalize_index(selection, shape)
    expected = array[selection]
    out = np.full(expected.shape, -1, dtype="<i8")
    touched = set()
    for proj in project_selection(grid, slices):
        touched.add(proj.nchunk)
        gather_into(bufs[proj.nchunk], grid, proj.chunk_index, out[proj.out_index])
        # the block runs cover every selected item of the chunk
        blocknums = np.arange(math.prod(grid.bgrid)).reshape(grid.bgrid)
        per_item = np.kron(blocknums, np.ones(grid.blocks, dtype=int))
        need = set(np.unique(per_item[proj.chunk_index]).tolist())
        have = {b for first, count in proj.block_runs for b in range(first, first + count)}
        assert need <= have
    assert (out == expected).all()
    # only chunks holding selected items are touched
    owners = set()
    for n in range(grid.nchunks):
        mask = np.zeros(shape, dtype=bool)
        mask[grid.chunk_region(grid.chunk_coords(n))] = True
        if mask[selection].any():
            owners.add(n)
    assert touched == owners


def test_block_runs_of_a_corner():
    grid = ChunkGrid((8, 8), (8, 8), (2, 2), 1)
    (proj,) = project_selection(grid, normalize_index((slice(0, 3), slice(4, 8)), grid.shape)[0])
    assert proj.block_runs == ((2, 2), (6, 2))
    (proj,) = project_selection(grid, normalize_index((slice(2, 6), slice(None)), grid.shape)[0])
    assert proj.block_runs == ((4, 8),)


def test_normalize_index():
    assert normalize_index((Ellipsis, slice(1, None)), (4, 5)) == (
        (slice(0, 4, 1), slice(1, 5, 1)),
        (),
    )
    assert normalize_index(slice(-2, None), (4,)) == ((slice(2, 4, 1),), ())
    assert normalize_index((-1, slice(3, 1)), (4, 5)) == ((slice(3, 4, 1), slice(3, 3, 1)), (0,))
    with pytest.raises(IndexError, match="positive slice steps"):
        normalize_index(slice(None, None, -1), (4,))
    with pytest.raises(IndexError, match="too many indices"):
        normalize_index((slice(None),) * 2, (4,))
    with pytest.raises(IndexError, match="single ellipsis"):
        normalize_index((Ellipsis, Ellipsis), (4,))
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 4"):
        normalize_index(4, (4,))
    with pytest.raises(IndexError, match="only integers, slices"):
        normalize_index(1.5, (4,))


# --- defaults -----------------------------------------------------------------------------

FACTS_MACHINE = CacheSizes(32 * 1024, 2**20, 32 * 2**20, "x86_64", "Linux")


@pytest.mark.parametrize(
    ("shape", "dtype", "chunks", "blocks"),
    [
        ((10,), "f8", (10,), (10,)),
        ((10**6,), "f8", (10**6,), (31250,)),
        ((10**7,), "u1", (5 * 10**6,), (250000,)),
        ((1000, 1000), "f4", (1000, 1000), (50, 1000)),
        ((10000, 10000), "f8", (100, 10000), (2, 10000)),
        ((5000, 3000), "u1", (2500, 3000), (50, 3000)),
        ((100, 200, 300), "f8", (10, 200, 300), (1, 100, 300)),
        ((300, 400, 50), "f8", (50, 400, 50), (1, 400, 50)),
        ((), "f8", (), ()),
        ((0, 5), "f4", (0, 5), (0, 5)),
    ],
)
def test_documented_defaults(shape, dtype, chunks, blocks):
    assert default_chunks_blocks(shape, np.dtype(dtype).itemsize, cache=FACTS_MACHINE) == (
        chunks,
        blocks,
    )


def test_given_values():
    assert default_chunks_blocks((100, 200), 8, blocks=(10, 10), cache=FACTS_MACHINE)[1] == (1, 100)
    assert default_chunks_blocks((100, 200), 8, chunks=(7, 9), blocks=(3, 3)) == ((7, 9), (3, 3))
    with pytest.raises(ValueError, match="cannot be greater than chunks"):
        default_chunks_blocks((100, 200), 8, chunks=(7, 9), blocks=(8, 3))
    with pytest.raises(ValueError, match="same length"):
        default_chunks_blocks((100, 200), 8, chunks=(7,))


@st.composite
def array_shapes(draw):
    ndim = draw(st.integers(0, 5))
    top = draw(st.sampled_from([30, 3000, 10 ** max(1, 9 // max(ndim, 1))]))
    return tuple(draw(st.integers(1, top)) for _ in range(ndim))


@settings(max_examples=400, deadline=None)
@given(
    array_shapes(),
    st.sampled_from(["u1", "i2", "f4", "f8", "c16", "S3", "U7", "V5", "S300", "U100"]),
)
def test_defaults_match_python_blosc2_here(shape, dtype):
    dt = np.dtype(dtype)
    expected = compute_chunks_blocks(shape, None, None, dt)
    assert default_chunks_blocks(shape, dt.itemsize) == (tuple(expected[0]), tuple(expected[1]))


@settings(max_examples=200, deadline=None)
@given(
    array_shapes().filter(lambda s: len(s) > 0), st.sampled_from(["u1", "f8", "S300"]), st.data()
)
def test_partial_defaults_match_python_blosc2(shape, dtype, data):
    dt = np.dtype(dtype)
    given_one = tuple(data.draw(st.integers(1, min(s, 64))) for s in shape)
    for kwargs in ({"chunks": given_one}, {"blocks": given_one}):
        try:
            expected = compute_chunks_blocks(shape, kwargs.get("chunks"), kwargs.get("blocks"), dt)
        except ValueError:
            with pytest.raises(ValueError):
                default_chunks_blocks(shape, dt.itemsize, **kwargs)
            continue
        assert default_chunks_blocks(shape, dt.itemsize, **kwargs) == (
            tuple(expected[0]),
            tuple(expected[1]),
        )


@pytest.mark.parametrize(
    ("l1", "l2", "l3"),
    [
        (32768, 262144, 1048576),
        (32768, 2**21, 2**25),
        (49152, 2**20, 2**25),
        (65536, 4 * 2**20, 0),
        (32768, 2**20, 2**19),
    ],
)
def test_defaults_follow_the_cache_sizes(monkeypatch, l1, l2, l3):
    monkeypatch.setitem(blosc2.cpu_info, "l1_data_cache_size", l1)
    monkeypatch.setitem(blosc2.cpu_info, "l2_cache_size", l2)
    monkeypatch.setitem(blosc2.cpu_info, "l3_cache_size", l3)
    cache = CacheSizes(l1, l2, l3, platform.machine(), platform.system())
    assert CacheSizes.current() == cache
    for shape in [
        (10,),
        (10**6,),
        (10**7,),
        (1000, 1000),
        (10000, 10000),
        (100, 200, 300),
        (7, 11, 13, 17),
    ]:
        for dtype in ["u1", "f4", "f8", "S300"]:
            expected = compute_chunks_blocks(shape, None, None, np.dtype(dtype))
            got = default_chunks_blocks(shape, np.dtype(dtype).itemsize, cache=cache)
            assert got == (tuple(expected[0]), tuple(expected[1]))


@pytest.mark.parametrize(
    ("machine", "system", "l1"),
    [
        ("arm64", "Darwin", 65536),
        ("aarch64", "Linux", 65536),
        ("AMD64", "Windows", None),
        ("x86_64", "Darwin", 32768),
    ],
)
def test_other_platforms(monkeypatch, machine, system, l1):
    monkeypatch.setattr(platform, "machine", lambda: machine)
    monkeypatch.setattr(platform, "system", lambda: system)
    monkeypatch.setitem(blosc2.cpu_info, "l1_data_cache_size", l1)
    monkeypatch.setitem(blosc2.cpu_info, "l2_cache_size", 2**22)
    monkeypatch.setitem(blosc2.cpu_info, "l3_cache_size", 2**24)
    cache = CacheSizes.current()
    assert cache == CacheSizes(l1, 2**22, 2**24, machine, system)
    for shape in [(2**20,), (10**6,), (1000, 1000), (100, 200, 300)]:
        expected = compute_chunks_blocks(shape, None, None, np.dtype("f8"))
        assert default_chunks_blocks(shape, 8, cache=cache) == (
            tuple(expected[0]),
            tuple(expected[1]),
        )


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 300000), st.integers(1, 600000), st.booleans())
def test_nearest_divisor_matches_python_blosc2(a, b, strict):
    assert nearest_divisor(a, b, strict) == blosc2_ext.nearest_divisor(a, b, strict)


# --- bloscpack's defaults: python-blosc2's sizes, shaped for box reads ---------------------


@pytest.mark.parametrize(
    ("shape", "dtype", "chunks", "blocks"),
    [
        ((4096, 16384), "f4", (1024, 2048), (32, 2048)),
        ((10000, 10000), "f8", (1000, 1000), (25, 1000)),
        ((1000, 1000), "f4", (1000, 1000), (50, 1000)),
        ((100, 200, 300), "f8", (100, 200, 30), (25, 25, 30)),
        ((3, 4096, 16384), "f4", (3, 1024, 512), (3, 32, 512)),
        ((10**6, 8), "f8", (100000, 8), (4000, 8)),
    ],
)
def test_documented_box_defaults(shape, dtype, chunks, blocks):
    assert box_chunks_blocks(shape, np.dtype(dtype).itemsize, cache=FACTS_MACHINE) == (
        chunks,
        blocks,
    )


@pytest.mark.parametrize(
    ("shape", "kwargs"),
    [((10**6,), {}), ((), {}), ((0, 5), {}), ((4096, 16384), {"chunks": (64, 64)}),
     ((4096, 16384), {"blocks": (8, 8)}), ((4096, 16384), {"chunks": (64, 64), "blocks": (8, 8)})],
)  # fmt: skip
def test_box_defaults_are_python_blosc2s_for_one_dim_and_given_shapes(shape, kwargs):
    assert box_chunks_blocks(shape, 4, cache=FACTS_MACHINE, **kwargs) == default_chunks_blocks(
        shape, 4, cache=FACTS_MACHINE, **kwargs
    )


def _box_bytes(chunks, blocks, box):
    """The bytes of the blocks a box read of a (4096, 16384) float32 array decodes."""
    grid = ChunkGrid((4096, 16384), chunks, blocks, 4)
    slices, _ = normalize_index(box, grid.shape)
    runs = [r for p in project_selection(grid, slices) for r in p.block_runs]
    return sum(count for _, count in runs) * grid.block_nbytes


def test_box_defaults_decode_a_box_not_whole_rows():
    box = (slice(700, 1212), slice(1500, 2012))  # 1 MiB
    old = _box_bytes(*default_chunks_blocks((4096, 16384), 4, cache=FACTS_MACHINE), box)
    new = _box_bytes(*box_chunks_blocks((4096, 16384), 4, cache=FACTS_MACHINE), box)
    assert old == 32 * 2**20  # python-blosc2's blocks: whole rows of 16384 items
    assert new == 17 * 2**18  # 17 blocks of 32 x 2048 items


@settings(max_examples=300, deadline=None)
@given(
    array_shapes().filter(lambda s: len(s) >= 2 and 0 not in s),
    st.sampled_from(["u1", "f4", "f8", "S300"]),
    st.sampled_from([FACTS_MACHINE, CacheSizes(48 * 1024, 2**21, 2**25, "x86_64", "Linux"),
                     CacheSizes(128 * 1024, 2**22, None, "arm64", "Darwin")]),
)  # fmt: skip
def test_box_defaults_keep_the_sizes_and_give_a_valid_grid(shape, dtype, cache):
    itemsize = np.dtype(dtype).itemsize
    chunks, blocks = box_chunks_blocks(shape, itemsize, cache=cache)
    budget = default_block_nbytes(itemsize, cache) // itemsize
    assert math.prod(blocks) <= budget  # python-blosc2's block size at most
    trailing = max(budget // min(BLOCK_ROWS, shape[0]), 1)
    assert math.prod(blocks[1:]) <= trailing  # room for the rows
    assert all(1 <= b <= c <= s for b, c, s in zip(blocks, chunks, shape, strict=True))
    assert all(c == s or c % b == 0 for b, c, s in zip(blocks, chunks, shape, strict=True))
    assert all(-(-s // b) * b - s < -(-s // b) for b, s in zip(blocks, shape, strict=True))
    ChunkGrid(shape, chunks, blocks, itemsize)  # a geometry the format accepts


def test_new_b2nd_files_take_the_box_defaults(tmp_path):
    import bloscpack

    data = np.arange(256 * 8192, dtype="f4").reshape(256, 8192)
    path = str(tmp_path / "a.b2nd")
    bloscpack.save(data, path)
    written = blosc2.open(path)
    assert (written.chunks, written.blocks) == box_chunks_blocks(data.shape, 4)
    np.testing.assert_array_equal(written[:], data)
