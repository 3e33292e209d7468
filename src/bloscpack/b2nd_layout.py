"""Geometry of python-blosc2 NDArrays: the chunk grid, the block order inside a chunk, default
chunk and block shapes, and fast copies between a numpy array and chunk buffers.

Pure code on shapes and numpy buffers; no file I/O and no compression.

Per dimension ``i``: ``ext_chunk[i] = ceil(chunks[i] / blocks[i]) * blocks[i]`` (the chunk padded
to whole blocks), ``grid[i] = ceil(shape[i] / chunks[i])`` chunks, ``bgrid[i] = ext_chunk[i] /
blocks[i]`` blocks per chunk.  Chunk ``n`` is the C-order index over ``grid`` and covers
``[c*chunks[i], min((c+1)*chunks[i], shape[i]))``.  Every uncompressed chunk, edge chunks included,
is ``prod(ext_chunk)`` items: its blocks in C order over ``bgrid``, each block's items in C order;
positions outside the chunk's valid region are padding (written as zeros, ignored on read).
"""

from __future__ import annotations

import itertools
import math
import platform
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .b2nd_meta import MAX_BLOCK_NBYTES, MAX_CHUNK_NBYTES, check_geometry
from .errors import ArgumentError
from .selection import normalize_index as selection_index

Shape = tuple[int, ...]


# --- the chunk grid -----------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkGrid:
    """Shape, chunks, blocks and itemsize of an NDArray, with the derived grid."""

    shape: Shape
    chunks: Shape
    blocks: Shape
    itemsize: int

    def __post_init__(self) -> None:
        check_geometry(self.shape, self.chunks, self.blocks, self.itemsize)

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @cached_property
    def ext_chunk(self) -> Shape:
        """Chunk shape padded up to whole blocks."""
        return tuple(
            -(-c // b) * b if b else c for c, b in zip(self.chunks, self.blocks, strict=True)
        )

    @cached_property
    def grid(self) -> Shape:
        """Number of chunks along each dimension."""
        return tuple(-(-s // c) if c else 0 for s, c in zip(self.shape, self.chunks, strict=True))

    @cached_property
    def bgrid(self) -> Shape:
        """Number of blocks along each dimension of a chunk."""
        return tuple(e // b if b else 0 for e, b in zip(self.ext_chunk, self.blocks, strict=True))

    @property
    def nitems(self) -> int:
        """Items of the array."""
        return math.prod(self.shape)

    @cached_property
    def nchunks(self) -> int:
        """Chunks in the frame: 0 for an array with a zero-size dimension."""
        return math.prod(self.grid) if self.nitems else 0

    @cached_property
    def chunk_nbytes(self) -> int:
        """Bytes of every uncompressed chunk (padding included)."""
        return math.prod(self.ext_chunk) * self.itemsize

    @cached_property
    def block_nbytes(self) -> int:
        """Bytes of one block: the blocksize of every chunk header."""
        return math.prod(self.blocks) * self.itemsize

    @cached_property
    def block_items(self) -> int:
        """Items of one block."""
        return math.prod(self.blocks)

    @cached_property
    def blocks_in_order(self) -> bool:
        """The block order inside a chunk equals the C order of the padded chunk: no dimension
        with more than one block per chunk comes after a dimension whose blocks are thicker than
        one item."""
        thick = False
        for nb, b in zip(self.bgrid, self.blocks, strict=True):
            if nb > 1 and thick:
                return False
            thick = thick or b > 1
        return True

    def chunk_coords(self, nchunk: int) -> Shape:
        """Grid coordinates of chunk number ``nchunk``."""
        if not 0 <= nchunk < max(self.nchunks, 1):
            raise IndexError(f"chunk {nchunk} out of range for {self.nchunks} chunks")
        coords = []
        for g in reversed(self.grid):
            nchunk, c = divmod(nchunk, g)
            coords.append(c)
        return tuple(reversed(coords))

    def chunk_number(self, coords: Sequence[int]) -> int:
        """Chunk number of grid coordinates ``coords`` (C order)."""
        n = 0
        for c, g in zip(coords, self.grid, strict=True):
            n = n * g + c
        return n

    def chunk_start(self, coords: Sequence[int]) -> Shape:
        """Index of the first item of the chunk at grid ``coords``."""
        return tuple(c * k for c, k in zip(coords, self.chunks, strict=True))

    def chunk_valid(self, coords: Sequence[int]) -> Shape:
        """Shape of the part of chunk ``coords`` that lies inside the array."""
        return tuple(
            min(k, s - c * k) for c, k, s in zip(coords, self.chunks, self.shape, strict=True)
        )

    def chunk_region(self, coords: Sequence[int]) -> tuple[slice, ...]:
        """The array region chunk ``coords`` holds."""
        return tuple(
            slice(c * k, min((c + 1) * k, s))
            for c, k, s in zip(coords, self.chunks, self.shape, strict=True)
        )

    def chunk_is_array_bytes(self, coords: Sequence[int]) -> bool:
        """The uncompressed chunk is exactly the C-order bytes of its region in a C-contiguous
        array: no padding, blocks in C order, and a region contiguous in memory."""
        if not self.blocks_in_order:
            return False
        valid = self.chunk_valid(coords)
        if valid != self.ext_chunk:
            return False
        return region_is_contiguous(valid, self.shape)

    @cached_property
    def item_steps(self) -> tuple[tuple[int, int, int, int, int], ...]:
        """Per axis: ``(chunk length, block length, and the steps in frame items of a chunk, of
        a block and of an item along it)``.  The frame items are the chunks' items one chunk
        after the other (each ``prod(ext_chunk)`` items: blocks in C order, items in C order
        inside a block)."""
        chunk_items = math.prod(self.ext_chunk)
        return tuple(
            (self.chunks[axis], self.blocks[axis],
             math.prod(self.grid[axis + 1 :]) * chunk_items,
             math.prod(self.bgrid[axis + 1 :]) * self.block_items,
             math.prod(self.blocks[axis + 1 :]))
            for axis in range(self.ndim)
        )  # fmt: skip

    def frame_item(self, coords: Sequence[int]) -> int:
        """The frame item number (see :attr:`item_steps`) of the array item at ``coords``
        (non-negative, in range)."""
        position = 0
        for k, (chunk, block, per_chunk, per_block, per_item) in zip(
            coords, self.item_steps, strict=True
        ):
            c, within = divmod(k, chunk)
            b, i = divmod(within, block)
            position += c * per_chunk + b * per_block + i * per_item
        return position

    def byte_offset(self, coords: Sequence[int]) -> int:
        """Offset in a C-contiguous array of the first item of chunk ``coords``."""
        offset = 0
        for start, s in zip(self.chunk_start(coords), self.shape, strict=True):
            offset = offset * s + start
        return offset * self.itemsize


def region_is_contiguous(extent: Sequence[int], shape: Sequence[int]) -> bool:
    """A box of ``extent`` inside a C-contiguous array of ``shape`` is one run of memory."""
    dims = list(zip(extent, shape, strict=True))
    while dims and dims[0][0] == 1:
        dims.pop(0)
    return all(e == s for e, s in dims[1:])


# --- copies between an array and block-ordered chunk buffers ------------------------------


def _axis_pieces(valid: int, block: int) -> list[tuple[int, int, int, int]]:
    """Split ``valid`` items of one chunk axis into at most two pieces:
    ``(array_lo, array_hi, blocks, items_per_block)`` of whole blocks, then the partial block."""
    whole, rest = divmod(valid, block)
    pieces = []
    if whole:
        pieces.append((0, whole * block, whole, block))
    if rest:
        pieces.append((whole * block, valid, 1, rest))
    return pieces


def _blocked_view(buf: np.ndarray, grid: ChunkGrid) -> np.ndarray:
    """The chunk buffer as a 2N-d view with axes (nb0, b0, nb1, b1, ...)."""
    n = grid.ndim
    view = buf.reshape(grid.bgrid + grid.blocks)
    return view.transpose([k for i in range(n) for k in (i, n + i)])


def _copy_pieces(
    array_region: np.ndarray, blocked: np.ndarray, valid: Shape, grid: ChunkGrid, to_chunk: bool
) -> None:
    """Copy between an array region and the 2N-d block view of a chunk, one box per
    combination of whole-block and partial-block pieces of each axis."""
    per_axis = [_axis_pieces(v, b) for v, b in zip(valid, grid.blocks, strict=True)]
    for combo in itertools.product(*per_axis):
        region_index = tuple(slice(lo, hi) for lo, hi, _, _ in combo)
        split_shape = tuple(k for _, _, nb, bi in combo for k in (nb, bi))
        block_index: list[slice] = []
        for (lo, _, nb, bi), b in zip(combo, grid.blocks, strict=True):
            block_index += [slice(lo // b, lo // b + nb), slice(0, bi)]
        part = array_region[region_index].view()
        part.shape = split_shape  # a view: splitting axes never needs a copy
        blocks = blocked[tuple(block_index)]
        if to_chunk:
            np.copyto(blocks, part, casting="no")
        else:
            np.copyto(part, blocks, casting="no")


def chunk_to_array(
    chunk: np.ndarray, grid: ChunkGrid, coords: Sequence[int], out: np.ndarray
) -> None:
    """Copy the valid region of the uncompressed chunk ``chunk`` (a 1-d array of
    ``prod(ext_chunk)`` items of ``out.dtype``) into its place in ``out``."""
    region = out[grid.chunk_region(coords)]
    if grid.ndim == 0:
        out[()] = chunk[0]
        return
    valid = grid.chunk_valid(coords)
    if grid.blocks_in_order:
        padded = chunk.reshape(grid.ext_chunk)
        np.copyto(region, padded[tuple(slice(0, v) for v in valid)], casting="no")
        return
    _copy_pieces(region, _blocked_view(chunk, grid), valid, grid, to_chunk=False)


def array_to_chunk(
    array: np.ndarray, grid: ChunkGrid, coords: Sequence[int], chunk: np.ndarray
) -> None:
    """Fill ``chunk`` (a writable 1-d array of ``prod(ext_chunk)`` items of ``array.dtype``)
    with chunk ``coords`` of ``array`` in block order, padding with zero bytes."""
    if grid.ndim == 0:
        chunk[0] = array[()]
        return
    valid = grid.chunk_valid(coords)
    region = array[grid.chunk_region(coords)]
    if valid != grid.ext_chunk:
        chunk.view(np.uint8).fill(0)
    if grid.blocks_in_order:
        padded = chunk.reshape(grid.ext_chunk)
        np.copyto(padded[tuple(slice(0, v) for v in valid)], region, casting="no")
        return
    _copy_pieces(region, _blocked_view(chunk, grid), valid, grid, to_chunk=True)


# --- selections ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkProjection:
    """What one chunk contributes to a selection: the chunk, the items of the padded chunk it
    gives (``chunk_index``, slices in chunk coordinates) and where they go in the result
    (``out_index``), plus the block-number runs of the chunk that hold them."""

    nchunk: int
    coords: Shape
    chunk_index: tuple[slice, ...]
    out_index: tuple[slice, ...]
    block_runs: tuple[tuple[int, int], ...]


def normalize_index(selection: Any, shape: Shape) -> tuple[tuple[slice, ...], tuple[int, ...]]:
    """Turn a basic index (integers, slices with positive steps, one ``Ellipsis``) into one
    slice per dimension, with non-negative start <= stop, and the axes integers drop (the
    rules of :func:`bloscpack.selection.normalize_index`)."""
    axes = selection_index(selection, shape)
    for axis, s in enumerate(axes):
        if s.step <= 0:
            raise IndexError(
                f"only positive slice steps are supported, got {s.step} on axis {axis}"
            )
    slices = tuple(slice(s.start, max(s.start, s.stop), s.step) for s in axes)
    return slices, tuple(axis for axis, s in enumerate(axes) if s.drop)


def _axis_chunks(
    sel: slice, chunk: int, block: int, nchunks: int
) -> list[tuple[int, slice, slice, int, int]]:
    """Per chunk touched on one axis: (chunk coordinate, slice inside the chunk, slice of the
    result, first block, end block)."""
    start, stop, step = sel.start, sel.stop, sel.step
    count = len(range(start, stop, step))
    if count == 0:
        return []
    last = start + (count - 1) * step
    out = []
    done = 0
    for c in range(start // chunk, min(last // chunk, nchunks - 1) + 1):
        lo, hi = c * chunk, (c + 1) * chunk
        first = start + -(-(lo - start) // step) * step if lo > start else start
        if first >= hi or first > last:
            continue
        n = len(range(first, min(hi, last + 1), step))
        local_first = first - lo
        local_last = local_first + (n - 1) * step
        out.append(
            (c, slice(local_first, local_last + 1, step), slice(done, done + n),
             local_first // block, local_last // block + 1)
        )  # fmt: skip
        done += n
    return out


def project_selection(grid: ChunkGrid, slices: tuple[slice, ...]) -> Iterator[ChunkProjection]:
    """The chunks a normalized selection touches, in C order, each with its projection."""
    per_axis = [
        _axis_chunks(s, k, b, g)
        for s, k, b, g in zip(slices, grid.chunks, grid.blocks, grid.grid, strict=True)
    ]
    for combo in itertools.product(*per_axis):
        coords = tuple(c for c, _, _, _, _ in combo)
        ranges = [range(b0, b1) for _, _, _, b0, b1 in combo]
        yield ChunkProjection(
            grid.chunk_number(coords),
            coords,
            tuple(cs for _, cs, _, _, _ in combo),
            tuple(os_ for _, _, os_, _, _ in combo),
            tuple(_block_runs(ranges, grid.bgrid)),
        )


def _block_runs(ranges: list[range], bgrid: Shape) -> Iterator[tuple[int, int]]:
    """Runs ``(first, count)`` of consecutive block numbers covering the product of
    per-axis block ranges (C order over ``bgrid``), adjacent runs merged."""
    if not ranges:
        yield (0, 1)
        return
    inner = ranges[-1]
    pending: tuple[int, int] | None = None
    for outer in itertools.product(*ranges[:-1]):
        base = 0
        for b, g in zip(outer, bgrid[:-1], strict=True):
            base = base * g + b
        first = base * bgrid[-1] + inner.start
        if pending and pending[0] + pending[1] == first:
            pending = (pending[0], pending[1] + len(inner))
            continue
        if pending:
            yield pending
        pending = (first, len(inner))
    if pending:
        yield pending


def gather(chunk: np.ndarray, grid: ChunkGrid, index: tuple[slice, ...]) -> np.ndarray:
    """Items ``index`` (slices in padded-chunk coordinates, as :class:`ChunkProjection` gives)
    of an uncompressed chunk (1-d, ``prod(ext_chunk)`` items): a strided view when the blocks
    are in C order, else one fancy-indexed gather of just those items."""
    if grid.blocks_in_order:
        return chunk.reshape(grid.ext_chunk)[index]
    n = grid.ndim
    blocked = chunk.reshape(grid.bgrid + grid.blocks)
    picks: list[np.ndarray] = []
    inner: list[np.ndarray] = []
    for axis, (s, b) in enumerate(zip(index, grid.blocks, strict=True)):
        pos = np.arange(s.start, s.stop, s.step)
        shape = [1] * n
        shape[axis] = pos.size
        picks.append((pos // b).reshape(shape))
        inner.append((pos % b).reshape(shape))
    return blocked[tuple(picks + inner)]


# --- default chunk and block shapes -------------------------------------------------------


@dataclass(frozen=True)
class CacheSizes:
    """The CPU facts python-blosc2 bases its default chunk and block shapes on."""

    l1_data: int | None
    l2: int | None
    l3: int | None
    machine: str  # platform.machine()
    system: str  # platform.system()

    @classmethod
    def current(cls) -> CacheSizes:
        """This machine, with the cache sizes python-blosc2 detected."""
        import blosc2

        info = blosc2.cpu_info
        return cls(
            info.get("l1_data_cache_size"), info.get("l2_cache_size"), info.get("l3_cache_size"),
            platform.machine(), platform.system(),
        )  # fmt: skip


L3_MINIMUM = 4 * 2**20
L3_MAXIMUM = 2**26
DEFAULT_BLOCK_NBYTES = 32 * 1024
CHUNK_REDUCTION = 4


def _min_block_nbytes(cache: CacheSizes) -> int:
    if cache.machine == "x86_64":
        l2 = cache.l2 or 0
        return (cache.l1_data or 0) * 4 if l2 >= 2**21 else l2 // 4
    if cache.system == "Darwin" and "arm" in cache.machine:
        return cache.l1_data or 0
    if isinstance(cache.l1_data, int):
        return cache.l1_data
    return DEFAULT_BLOCK_NBYTES


def default_chunk_nbytes(block_nbytes: int, cache: CacheSizes) -> int:
    """Target uncompressed chunk size for blocks of ``block_nbytes`` (python-blosc2's rule)."""
    size = block_nbytes * 32 if block_nbytes * 32 < L3_MAXIMUM else block_nbytes
    if cache.l3 is not None:
        if cache.l3 > 0 and cache.l2 is not None and cache.l3 > cache.l2:
            size = cache.l3
        size //= CHUNK_REDUCTION
    if cache.l2 is not None and cache.l2 > size:
        size = cache.l2 if cache.system == "Darwin" else max(cache.l2 // CHUNK_REDUCTION, size)
    size = min(max(size, L3_MINIMUM), MAX_CHUNK_NBYTES)
    return max(size, block_nbytes)


def nearest_divisor(a: int, b: int, strict: bool = False) -> int:
    """The divisor of ``a`` nearest to ``b``; searching only downwards from ``b`` when ``a`` is
    large or ``strict``.  Ties go to the first divisor met scanning ``i, a//i`` for
    ``i = 1, 2, ...`` (python-blosc2's compiled version)."""
    if a > 100_000 or strict:
        top = b
        while top > 0:
            cand = np.arange(top, max(top - 65536, 0), -1, dtype=np.int64)
            hits = np.flatnonzero(a % cand == 0)
            if hits.size:
                return int(cand[hits[0]])
            top -= 65536
        return 1
    closest, best = 1, a
    found = False
    i = 1
    while i * i <= a:
        if a % i == 0:
            for d in (i, a // i):
                if abs(d - b) < best:
                    best, closest, found = abs(d - b), d, True
        i += 1
    return closest if found else 1


def partition(
    nitems: int, maxshape: Sequence[int], minpart: Sequence[int] | None = None
) -> list[int]:
    """Split a budget of ``nitems`` items over ``maxshape``, from the last dimension: whole
    dimensions while the budget lasts, then the budget, snapped to a divisor of the dimension."""
    if 0 in maxshape:
        raise ArgumentError("shapes with 0 dims are not supported")
    if nitems == 0:
        raise ArgumentError("zero-sized partitions are not supported")
    minpart = list(minpart) if minpart is not None else [1] * len(maxshape)
    budget = nitems
    result = [1] * len(maxshape)
    for i in range(len(maxshape) - 1, -1, -1):
        if budget <= 1:
            break
        size, minsize = maxshape[i], minpart[i]
        part = max(size, minsize)
        if part <= budget:
            part = part if size % part == 0 else nearest_divisor(size, part)
        else:
            part = max(budget, minsize)
            snapped = part if size % part == 0 else nearest_divisor(size, part, strict=True)
            if part // 2 < snapped < part * 2:
                part = snapped
        result[i] = part
        budget //= part
    return result


def default_chunks_blocks(
    shape: Sequence[int],
    itemsize: int,
    chunks: Sequence[int] | None = None,
    blocks: Sequence[int] | None = None,
    cache: CacheSizes | None = None,
) -> tuple[Shape, Shape]:
    """Chunk and block shapes for an array, chosen as python-blosc2 ``compute_chunks_blocks``
    does for the general-purpose codecs (blosclz, lz4, lz4hc, zlib, zstd).  Given values are
    checked; ``blocks`` given without ``chunks`` only sets the block byte size."""
    shape = tuple(int(s) for s in shape)
    if 0 in shape and chunks is None and blocks is None:
        return shape, shape
    for name, given in (("blocks", blocks), ("chunks", chunks)):
        if given is None:
            continue
        if len(given) != len(shape):
            raise ArgumentError(f"{name} {tuple(given)} must have the same length as shape {shape}")
        for g, s in zip(given, shape, strict=True):
            if g < 0 or (g == 0 and s != 0):
                raise ArgumentError(
                    f"{name} {tuple(given)} cannot contain {g} for a dimension of size {s}"
                )
    if chunks is not None and blocks is not None:
        if any(b > c for b, c in zip(blocks, chunks, strict=True)):
            raise ArgumentError(
                f"blocks {tuple(blocks)} cannot be greater than chunks {tuple(chunks)}"
            )
        return tuple(int(c) for c in chunks), tuple(int(b) for b in blocks)
    cache = cache or CacheSizes.current()
    if blocks is None:
        block_nbytes = max(DEFAULT_BLOCK_NBYTES, _min_block_nbytes(cache), itemsize)
    else:
        block_nbytes = math.prod(blocks) * itemsize
    if block_nbytes > MAX_BLOCK_NBYTES:
        raise ArgumentError(
            f"blocksize {block_nbytes} exceeds the maximum of {MAX_BLOCK_NBYTES} bytes"
        )
    new_blocks = partition(block_nbytes // itemsize, shape if chunks is None else chunks)
    if chunks is not None:
        return tuple(int(c) for c in chunks), tuple(new_blocks)
    block_nbytes = math.prod(new_blocks) * itemsize
    chunk_nbytes = default_chunk_nbytes(block_nbytes, cache)
    chunk_nbytes -= chunk_nbytes % block_nbytes
    new_chunks = partition(chunk_nbytes // itemsize, shape, new_blocks)
    new_chunks = [
        min(s, -(-c // b) * b) for s, c, b in zip(shape, new_chunks, new_blocks, strict=True)
    ]
    return tuple(new_chunks), tuple(new_blocks)
