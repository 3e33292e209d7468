"""Appending rows to an NDArray in place (a ``.b2nd`` file or a sparse frame directory) along
its first axis, crash-safely: the chunks of the last, partial row of chunks are rebuilt with
the new rows after their own, further chunks follow, and the shape in the ``b2nd`` metalayer
grows, all in one change (:meth:`~bloscpack.containers.frame.edit.FrameBase.grow`)."""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from ...errors import NotAppendable
from ...io import PathLike
from ..frame.contiguous import ContiguousFrame
from ..grid import ChunkGrid, array_to_chunk
from ..sframe import SparseFrame
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
    start = meta.shape[0] - meta.shape[0] % meta.chunks[0]  # the first row of a partial chunk
    tail = rows if start == meta.shape[0] else np.concatenate([old[start:], rows])
    grown = dataclasses.replace(meta, shape=(meta.shape[0] + len(rows), *meta.shape[1:]))
    grown.check()
    grid = ChunkGrid(grown.shape, meta.chunks, meta.blocks, itemsize)
    tail_grid = ChunkGrid(tail.shape, meta.chunks, meta.blocks, itemsize)
    params = frame.cparams
    scratch = np.empty(grid.chunk_nbytes // itemsize, dtype=old.dtype)
    chunks = []
    for n in range(tail_grid.nchunks):
        array_to_chunk(tail, tail_grid, tail_grid.chunk_coords(n), scratch)
        chunks.append(params.compress(scratch.view(np.uint8)))
    frame.grow(grid.nchunks - tail_grid.nchunks, chunks,
               metalayers={METALAYER_NAME: grown.pack()})  # fmt: skip
