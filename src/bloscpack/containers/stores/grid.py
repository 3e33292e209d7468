"""The store of an N-d chunk grid (a :class:`~bloscpack.containers.base.GridReader`: b2nd
arrays): small selections item by item through the flat layout of the chunks, larger boxes
through the reader's N-d ``array``, which decodes only the block runs a box touches."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np

from ...selection import Axis, AxisPoints, AxisSelection, result_shape
from ..base import ArrayDescription, GridReader
from . import base
from .base import DENSE_SPAN, box_span, full_selection
from .flat import FlatStore

#: Selections of at most this many items are read item by item (larger ones box by box).
SMALL_SELECTION_ITEMS = 4096


class GridStore:
    """An N-d array stored in a chunk grid (a python-blosc2 NDArray).  Small selections are
    read item by item: each item's place in its chunk (blocks in C order, items in C order
    inside a block) makes the frame a flat layout, read like the others, so only the blocks
    holding the items are decoded.  Larger boxes go to the reader's ``array``, which reads
    only the chunks, and in them the block runs, a box touches, and copies block by block."""

    def __init__(self, reader: GridReader) -> None:
        self.reader = reader
        self.array = array = reader.array
        self.name = reader.name
        self.shape = array.shape
        self.dtype = array.dtype
        self.chunks = array.chunks
        self.grid = grid = reader.grid
        self._frame_items: FlatStore | None = None
        if grid.nchunks and self.dtype.itemsize and self.shape:
            items = grid.nchunks * grid.chunk_nbytes // self.dtype.itemsize
            self._frame_items = FlatStore(reader, ArrayDescription(self.dtype, (items,)))

    def _axis_positions(self, indices: Sequence[np.ndarray]) -> Iterator[np.ndarray]:
        """Per axis, what each index along it adds to an item's number in the frame's chunks
        (chunks, then blocks in C order, then items in C order inside a block)."""
        for index, (chunk, block, per_chunk, per_block, per_item) in zip(
            indices, self.grid.item_steps, strict=True
        ):
            within = index % chunk
            yield (
                index // chunk * per_chunk + within // block * per_block + within % block * per_item
            )

    def _frame_positions(self, selection: tuple[Axis, ...]) -> np.ndarray:
        """Item numbers in the frame's chunks of the selected items (box shape, C order)."""
        ndim = len(self.shape)
        positions = np.zeros((1,) * ndim, dtype=np.int64)
        parts = self._axis_positions([s.indices() for s in selection])
        for axis, part in enumerate(parts):
            positions = positions + part.reshape([-1 if a == axis else 1 for a in range(ndim)])
        return positions

    def read_points(self, coords: tuple[np.ndarray, ...]) -> np.ndarray:
        """The items at ``coords`` as a new 1-d array: per chunk, the blocks holding them."""
        out = base.allocate((len(coords[0]),), self.dtype, self.name)
        if len(out) and self._frame_items is not None:
            positions = sum(self._axis_positions(coords), np.zeros(len(out), np.int64))
            self._frame_items.gather_items(positions, out)
        return out

    def read_item(self, coords: tuple[int, ...]) -> np.ndarray:
        """The item at ``coords`` (non-negative, in range) as a 0-d array."""
        if self._frame_items is None:
            return self.read(tuple(AxisSelection(k, k + 1, 1, True) for k in coords))
        position = self.grid.frame_item(coords)
        out = base.allocate((), self.dtype, self.name)
        self._frame_items.read_run(position, position + 1, out.reshape(-1).view(self.dtype))
        return out

    def read(self, selection: tuple[Axis, ...]) -> np.ndarray:
        """The selected items as a new array: item by item when few (or when index arrays
        pick under 1 / DENSE_SPAN of the box around their points), else box by box (with
        index arrays: a box per chunk they touch, around their points in it)."""
        if full_selection(selection, self.shape):
            return self.array.read(base.allocate(self.shape, self.dtype, self.name))
        count = math.prod(len(s) for s in selection)
        points = any(isinstance(s, AxisPoints) for s in selection)
        if (
            self._frame_items is not None
            and count > 0
            and (
                count <= SMALL_SELECTION_ITEMS
                or (points and DENSE_SPAN * count < math.prod(map(box_span, selection)))
            )
        ):  # few items, or index arrays whose points are sparse: item by item
            out = base.allocate(result_shape(selection), self.dtype, self.name)
            self._frame_items.gather_items(self._frame_positions(selection).reshape(-1), out)
            return out
        read = self._read_by_chunks if points else self._read_box
        box = read(selection)  # type: ignore[arg-type]  # (no index arrays: ranges only)
        return box[tuple(0 if s.drop else slice(None) for s in selection) + (Ellipsis,)]

    def _read_by_chunks(self, selection: tuple[Axis, ...]) -> np.ndarray:
        """The box of ``selection`` (dense index arrays: see :meth:`read`; dropped axes kept),
        where the points of each index array are read a chunk at a time: per chunk they
        touch, the box from its first to its last point there."""
        out = base.allocate(tuple(len(s) for s in selection), self.dtype, self.name)
        if not out.size:
            return out
        pieces: list[list[tuple[slice, Axis, np.ndarray | None]]] = []
        for axis, s in enumerate(selection):
            if not isinstance(s, AxisPoints):
                pieces.append([(slice(None), s, None)])
                continue
            points = s.points
            cuts = [0, *(np.flatnonzero(np.diff(points // self.chunks[axis])) + 1), len(points)]
            axis_pieces: list[tuple[slice, Axis, np.ndarray | None]] = []
            for a, b in zip(cuts[:-1], cuts[1:], strict=True):
                group = points[a:b]
                first, last = int(group[0]), int(group[-1])
                span = AxisSelection(first, last + 1, 1, False)
                axis_pieces.append((slice(a, b), span, None if last - first + 1 == len(group)
                                    else group - first))  # fmt: skip
            pieces.append(axis_pieces)
        for combo in itertools.product(*pieces):
            box = self._read_box(tuple(span for _, span, _ in combo))  # type: ignore[misc]
            for axis, (_, _, within) in enumerate(combo):
                if within is not None:
                    box = np.take(box, within, axis=axis)
            out[tuple(place for place, _, _ in combo)] = box
        return out

    def _read_box(self, selection: tuple[AxisSelection, ...]) -> np.ndarray:
        """The box of ``selection`` (ranges; dropped axes kept with length 1) as a new array:
        only the chunks, and in them the block runs, it touches."""
        boxes: list[slice] = []
        flips: list[slice] = []
        for s in selection:
            n = len(s)
            if n == 0:
                boxes.append(slice(0, 0, 1))
                flips.append(slice(None))
            elif s.step > 0:
                boxes.append(slice(s.start, s.start + (n - 1) * s.step + 1, s.step))
                flips.append(slice(None))
            else:  # read the same items in ascending order into a reversed view
                low = s.start + (n - 1) * s.step
                boxes.append(slice(low, s.start + 1, -s.step))
                flips.append(slice(None, None, -1))
        box_shape = tuple(len(s) for s in selection)
        out = base.allocate(box_shape, self.dtype, self.name)
        self.array.read_selection(tuple(boxes), out=out[tuple(flips)])
        return out

    def iter_chunks(self) -> Iterator[np.ndarray]:
        """Each chunk's region of the array (edge chunks are smaller), in frame order."""
        if not self.shape:
            yield self.array.read()
            return
        grid = self.array.grid
        for coords in self.array.iter_chunk_coords():
            yield self.array.read_selection(grid.chunk_region(coords))

    def close(self) -> None:
        """Release the array's frame."""
        self.reader.close()
