"""Appending rows to an NDArray in place (a ``.b2nd`` file or a sparse frame directory) along
its first axis, crash-safely: the chunks of the last, partial row of chunks are rebuilt with
the new rows after their own, further chunks follow, and the shape in the ``b2nd`` metalayer
grows, all in one change (:meth:`~bloscpack.containers.schunk.edit.FrameBase.grow`)."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterator

import numpy as np

from ...errors import NotAppendable
from ...io.paths import PathLike
from ..grid import ChunkGrid, array_to_chunk
from ..schunk.contiguous import ContiguousFrame
from ..schunk.sparse import SparseFrame
from .meta import METALAYER_NAME
from .reader import B2ndArray


def append_rows(path: PathLike, rows: np.ndarray) -> None:
    """:func:`bloscpack.append` for NDArrays: ``rows`` (of the array's dtype and trailing
    shape, checked by the caller) after the array's rows."""
    path = os.fspath(path)
    frame = SparseFrame(path, writable=True) if os.path.isdir(path) else (
        ContiguousFrame(path, writable=True))  # fmt: skip
    try:
        with frame.exclusive():
            frame.refresh()
            _grow(frame, rows)
    finally:
        frame.close()


def _grow(frame: ContiguousFrame | SparseFrame, rows: np.ndarray) -> None:
    old = B2ndArray(frame)  # checks the frame against its metalayer
    meta, itemsize = old.b2nd, old.dtype.itemsize
    if 0 in meta.chunks:
        raise NotAppendable(
            f"{frame.name}: an NDArray with chunks {meta.chunks} (python-blosc2's for an empty"
            " array) cannot grow; save it again with chunks of at least one item on every axis"
        )
    if not len(rows):
        return
    c0 = meta.chunks[0]
    start = meta.shape[0] - meta.shape[0] % c0  # the first row of a partial row of chunks
    grown = dataclasses.replace(meta, shape=(meta.shape[0] + len(rows), *meta.shape[1:]))
    grown.check()
    per_row = math.prod(ChunkGrid(meta.shape, meta.chunks, meta.blocks, itemsize).grid[1:])
    frame.grow(start // c0 * per_row, _chunks(frame, old[start:], rows, meta.chunks, meta.blocks),
               metalayers={METALAYER_NAME: grown.pack()})  # fmt: skip


def _chunks(frame: ContiguousFrame | SparseFrame, partial: np.ndarray, rows: np.ndarray,
            chunks: tuple[int, ...], blocks: tuple[int, ...]) -> Iterator[bytearray]:  # fmt: skip
    """The compressed chunks of the rows ``partial`` (of a partial row of chunks) then
    ``rows``, one row of chunks at a time (only the first is copied together), with the
    frame's parameters and blocks of the NDArray's block shape."""
    c0 = chunks[0]
    params = dataclasses.replace(frame.cparams,
                                 blocksize=math.prod(blocks) * rows.dtype.itemsize)  # fmt: skip
    scratch = np.empty(0, dtype=rows.dtype)
    for at in range(-len(partial), len(rows), c0):
        slab = rows[max(at, 0) : at + c0]
        if at < 0:
            slab = np.concatenate([partial, slab])
        grid = ChunkGrid(slab.shape, chunks, blocks, rows.dtype.itemsize)
        if scratch.size * rows.dtype.itemsize != grid.chunk_nbytes:
            scratch = np.empty(grid.chunk_nbytes // rows.dtype.itemsize, dtype=rows.dtype)
        for n in range(grid.nchunks):
            array_to_chunk(slab, grid, grid.chunk_coords(n), scratch)
            yield params.compress(scratch.view(np.uint8))
