"""The geometry of N-d arrays stored in chunks of blocks (python-blosc2's NDArray layout): the
chunk grid, the block order inside a chunk, fast copies between a numpy array and chunk
buffers, and the chunks and blocks a selection touches.

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
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np

from ..errors import FormatError
from ..selection import normalize_index as selection_index

Shape = tuple[int, ...]
MAX_DIM = 16
MAX_CHUNK_NBYTES = 2147483615  # BLOSC2_MAX_BUFFERSIZE: an uncompressed chunk must fit
MAX_BLOCK_NBYTES = 536866816  # BLOSC2_MAXBLOCKSIZE


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
    def decodes_in_c_order(self) -> bool:
        """A decoded chunk is its items in C order, nothing more: its blocks span every axis of
        the chunk but the first and divide the first."""
        first = not (self.blocks and self.blocks[0] and self.chunks[0] % self.blocks[0])
        return self.blocks[1:] == self.chunks[1:] and first

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


def check_geometry(
    shape: tuple[int, ...], chunks: tuple[int, ...], blocks: tuple[int, ...], itemsize: int
) -> None:
    """Raise :class:`FormatError` unless shape/chunks/blocks describe an array C-Blosc2 can hold."""
    ndim = len(shape)
    if ndim > MAX_DIM:
        raise FormatError(f"b2nd: ndim {ndim} exceeds the maximum of {MAX_DIM}")
    if len(chunks) != ndim or len(blocks) != ndim:
        raise FormatError(
            f"b2nd: shape {shape}, chunks {chunks} and blocks {blocks} differ in length"
        )
    if itemsize <= 0:
        raise FormatError(f"b2nd: itemsize {itemsize} must be positive")
    for i, (s, c, b) in enumerate(zip(shape, chunks, blocks, strict=True)):
        if s < 0 or c < 0 or b < 0:
            raise FormatError(f"b2nd: negative size in dim {i}: shape {s}, chunks {c}, blocks {b}")
        if s > 0 and (c == 0 or b == 0):
            raise FormatError(
                f"b2nd: dim {i} of size {s} has chunks {c} and blocks {b}; both must be > 0"
            )
    block_nbytes = math.prod(blocks) * itemsize
    if block_nbytes > MAX_BLOCK_NBYTES:
        raise FormatError(
            f"b2nd: blocks {blocks} hold {block_nbytes} bytes, more than {MAX_BLOCK_NBYTES}"
        )
    ext = [(-(-c // b) * b) if b else c for c, b in zip(chunks, blocks, strict=True)]
    chunk_nbytes = math.prod(ext) * itemsize
    if chunk_nbytes > MAX_CHUNK_NBYTES:
        raise FormatError(
            f"b2nd: chunks {chunks} padded to blocks {blocks} hold {chunk_nbytes} bytes,"
            f" more than {MAX_CHUNK_NBYTES}"
        )


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
    box_to_chunk(array[grid.chunk_region(coords)], grid, coords, chunk)


def box_to_chunk(
    region: np.ndarray, grid: ChunkGrid, coords: Sequence[int], chunk: np.ndarray
) -> None:
    """:func:`array_to_chunk` from ``region``, the box of the array chunk ``coords`` holds."""
    if grid.ndim == 0:
        chunk[0] = region[()]
        return
    valid = grid.chunk_valid(coords)
    if valid != grid.ext_chunk:
        chunk.view(np.uint8).fill(0)
    if grid.blocks_in_order:
        padded = chunk.reshape(grid.ext_chunk)
        np.copyto(padded[tuple(slice(0, v) for v in valid)], region, casting="no")
        return
    _copy_pieces(region, _blocked_view(chunk, grid), valid, grid, to_chunk=True)


# --- selections ---------------------------------------------------------------------------


class ChunkProjection(NamedTuple):
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


#: Projections of recent selections touching at most :data:`KEPT_PROJECTION_CHUNKS` chunks,
#: by grid and ranges (a box read again, or the same box of another array of that geometry,
#: is not planned again); emptied when it holds :data:`KEPT_PROJECTIONS`.
_projections: dict[tuple[ChunkGrid, tuple[tuple[int, int, int], ...]], list[ChunkProjection]] = {}
KEPT_PROJECTIONS = 256
KEPT_PROJECTION_CHUNKS = 64


def project_selection(grid: ChunkGrid, slices: tuple[slice, ...]) -> list[ChunkProjection]:
    """The chunks a normalized selection touches, in C order, each with its projection (the
    list is shared: not to be changed)."""
    key = (grid, tuple([(s.start, s.stop, s.step) for s in slices]))
    found = _projections.get(key)
    if found is None:
        found = _project(grid, slices)
        if len(found) <= KEPT_PROJECTION_CHUNKS:
            if len(_projections) >= KEPT_PROJECTIONS:
                _projections.clear()
            _projections[key] = found
    return found


def _project(grid: ChunkGrid, slices: tuple[slice, ...]) -> list[ChunkProjection]:
    """:func:`project_selection`, planned."""
    per_axis = [
        _axis_chunks(s, k, b, g)
        for s, k, b, g in zip(slices, grid.chunks, grid.blocks, grid.grid, strict=True)
    ]
    if not slices:
        return [ChunkProjection(0, (), (), (), ((0, 1),))]
    bgrid = grid.bgrid
    projections = []
    for combo in itertools.product(*per_axis):
        coords, chunk_index, out_index, first_blocks, end_blocks = zip(*combo, strict=True)
        projections.append(ChunkProjection(
            grid.chunk_number(coords), coords, chunk_index, out_index,
            _block_runs(first_blocks, end_blocks, bgrid),
        ))  # fmt: skip
    return projections


def _block_runs(firsts: Shape, ends: Shape, bgrid: Shape) -> tuple[tuple[int, int], ...]:
    """Runs ``(first, count)`` of consecutive block numbers covering the product of the
    per-axis block ranges ``[firsts[a], ends[a])`` (C order over ``bgrid``), adjacent runs
    merged."""
    bases = [0]  # the outer axes' block numbers, in C order
    for b0, b1, g in zip(firsts[:-1], ends[:-1], bgrid[:-1], strict=True):
        bases = [base * g + b for base in bases for b in range(b0, b1)]
    inner, start, count = bgrid[-1], firsts[-1], ends[-1] - firsts[-1]
    runs: list[tuple[int, int]] = []
    for base in bases:
        first = base * inner + start
        if runs and runs[-1][0] + runs[-1][1] == first:
            runs[-1] = (runs[-1][0], runs[-1][1] + count)
        else:
            runs.append((first, count))
    return tuple(runs)


def _block_pieces(s: slice, block: int) -> list[tuple[slice, tuple[int, int], slice, slice]]:
    """Split the items ``s`` (step 1) of a padded-chunk axis into at most three pieces, each
    ``(result items, (blocks, items per block), block slice, items in a block)``: the end of a
    first partial block, whole blocks, the start of a last partial block."""
    lo, hi = s.start, s.stop
    pieces = []
    done = 0
    if lo % block:
        end = min(hi, lo - lo % block + block)
        w = lo % block
        pieces.append((slice(0, end - lo), (1, end - lo), slice(lo // block, lo // block + 1),
                       slice(w, w + end - lo)))  # fmt: skip
        done = end - lo
    whole = (hi - lo - done) // block
    if whole:
        b = (lo + done) // block
        pieces.append((slice(done, done + whole * block), (whole, block), slice(b, b + whole),
                       slice(0, block)))  # fmt: skip
        done += whole * block
    if lo + done < hi:
        b, k = (lo + done) // block, hi - lo - done
        pieces.append((slice(done, done + k), (1, k), slice(b, b + 1), slice(0, k)))
    return pieces


def gather_into(
    chunk: np.ndarray, grid: ChunkGrid, index: tuple[slice, ...], dest: np.ndarray
) -> None:
    """Copy items ``index`` (slices in padded-chunk coordinates, as :class:`ChunkProjection`
    gives) of an uncompressed chunk (1-d, ``prod(ext_chunk)`` items) into ``dest`` (their
    shape, the chunk's dtype): one strided copy when the blocks are in C order; with unit
    steps, a copy per combination of the pieces (:func:`_block_pieces`) of each axis; else one
    fancy-indexed gather of just those items."""
    if grid.blocks_in_order:
        dest[...] = chunk.reshape(grid.ext_chunk)[index]
        return
    n = grid.ndim
    blocked = chunk.reshape(grid.bgrid + grid.blocks)
    if all([s.step == 1 for s in index]):
        per_axis = [_block_pieces(s, b) for s, b in zip(index, grid.blocks, strict=True)]
        order = [a for i in range(n) for a in (i, n + i)]  # (nb0, ..., k0, ...) to (nb0, k0, ...)
        for combo in itertools.product(*per_axis):
            places, shapes, blocks, within = zip(*combo, strict=True)
            part = dest[places].view()
            part.shape = sum(shapes, ())  # a view
            part[...] = blocked[blocks + within].transpose(order)
        return
    picks: list[np.ndarray] = []
    inner: list[np.ndarray] = []
    for axis, (s, b) in enumerate(zip(index, grid.blocks, strict=True)):
        pos = np.arange(s.start, s.stop, s.step)
        shape = [1] * n
        shape[axis] = pos.size
        picks.append((pos // b).reshape(shape))
        inner.append((pos % b).reshape(shape))
    dest[...] = blocked[tuple(picks + inner)]
