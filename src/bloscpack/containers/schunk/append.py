"""Appending to a frame in place (a ``.b2frame`` file or a sparse frame directory), crash-safely:
the data tops up the last chunk to the frame's chunk size, then new chunks follow, all in one
change (:meth:`~bloscpack.containers.schunk.edit.FrameBase.grow`); a frame holding a numpy
array (numpy metadata in its vlmetalayers) grows along its first axis."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ... import ndarray as nd
from ...io.paths import PathLike
from ..base import NUMPY_KEYS
from ..target import FRAME_CHUNK_NBYTES, numpy_metadata
from .contiguous import ContiguousFrame
from .edit import FrameBase
from .reader import vlmeta_items
from .records import pack_value


def append_to_frame(core: FrameBase, rows: np.ndarray) -> None:
    """Append ``rows`` (of the frame's dtype and trailing shape, checked by the caller; bytes
    as ``uint8``) to the writable frame ``core``."""
    with core.exclusive():
        core.refresh()
        data = np.ascontiguousarray(rows).reshape(-1).view(np.uint8)
        if not data.size:
            return
        vlmeta = None
        if {name for name, _ in core.vlmeta}.issuperset(NUMPY_KEYS):
            stored = {name: value for name, (_, value) in vlmeta_items(core).items()}
            spec = nd.decode_metadata({k: stored[k] for k in NUMPY_KEYS})
            shape = (spec.shape[0] + len(rows), *spec.shape[1:])
            grown = numpy_metadata(nd.ArraySpec(spec.dtype, shape, spec.order))
            vlmeta = {"shape": pack_value(grown["shape"])}
        header, n = core.header, core.nchunks
        size = header.chunksize
        if size <= 0:
            size = core.chunk_nbytes(0) if n else FRAME_CHUNK_NBYTES
        first, head = n, np.empty(0, dtype=np.uint8)
        if n and header.chunksize > 0 and core.chunk_nbytes(n - 1) < size:
            first = n - 1  # the last chunk is topped up
            head = np.frombuffer(core.decompress_chunk(n - 1), dtype=np.uint8)
        core.grow(first, _chunks(core, head, data, size), vlmeta=vlmeta)


def _chunks(core: FrameBase, head: np.ndarray, data: np.ndarray,
            size: int) -> Iterator[bytearray]:  # fmt: skip
    """``head`` then ``data`` compressed with the frame's parameters in chunks of ``size``
    bytes, one at a time (only the first chunk is copied together)."""
    params = core.cparams
    fill = min(size - head.size, data.size)
    if head.size:
        yield params.compress(np.concatenate([head, data[:fill]]))
        data = data[fill:]
    for i in range(0, data.size, size):
        yield params.compress(data[i : i + size])


def append_rows(path: PathLike, rows: np.ndarray) -> None:
    """:func:`bloscpack.append` for ``.b2frame`` files: ``rows`` (bytes as ``uint8``) after
    the frame's data."""
    frame = ContiguousFrame(path, writable=True)
    try:
        append_to_frame(frame, rows)
    finally:
        frame.close()
