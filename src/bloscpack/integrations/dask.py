"""Dask arrays over any container (the optional extra ``dask``).

A graph holds the container's path, never an open file nor any data: each task reopens the
container in the process that runs it (kept open per process, reopened when the file changes),
so graphs pickle small and run on ``distributed`` workers in other processes or machines.
Every task reads only the chunks (and blocks) its slice touches, through the lazy arrays of
:func:`bloscpack.open`, which many threads may share.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from ..array import BloscArray
from ..errors import ArgumentError, UnsupportedError
from ..io import PathLike, file_identity

#: Containers kept open per process, least recently used first.
_OPEN: OrderedDict[tuple[str, str | None], tuple[tuple[int, ...], BloscArray]] = OrderedDict()
_OPEN_LOCK = threading.Lock()
_KEEP_OPEN = 32


def _identity(path: str) -> tuple[int, ...]:
    """What tells a changed container from the one opened (a directory: its metadata)."""
    return file_identity(os.stat(path))


def _opened(path: str, column: str | None) -> BloscArray:
    """The lazy array of ``path`` (``column`` of a table), opened once per process.  Arrays
    replaced in the cache (the file changed, or too many are open) are not closed here: tasks
    may still be reading them; they close when the last of those lets them go."""
    key = (path, column)
    identity = _identity(path)
    with _OPEN_LOCK:
        found = _OPEN.get(key)
        if found is not None and found[0] == identity:
            _OPEN.move_to_end(key)
            return found[1]
    array = BloscArray(path)
    lazy = array if column is None else array[column]
    with _OPEN_LOCK:
        found = _OPEN.get(key)
        if found is not None and found[0] == identity:  # another thread was first
            return found[1]
        _OPEN[key] = (identity, lazy)
        _OPEN.move_to_end(key)
        while len(_OPEN) > _KEEP_OPEN:
            _OPEN.popitem(last=False)
    return lazy


class ContainerSlices:
    """What a dask graph reads from: the container at ``path`` (or one column of a table), by
    path alone: it pickles as its path, shape and dtype, and opens the container on first
    read in each process."""

    def __init__(self, path: str, column: str | None, shape: tuple[int, ...],
                 dtype: np.dtype) -> None:  # fmt: skip
        self.path = path
        self.column = column
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)

    def __getitem__(self, index: Any) -> np.ndarray:
        return np.asarray(_opened(self.path, self.column)[index])

    def __reduce__(self) -> tuple[Any, ...]:
        return (ContainerSlices, (self.path, self.column, self.shape, self.dtype))


def storage_chunks(lazy: BloscArray) -> tuple[int, ...]:
    """Dask chunks matching the container's stored chunks: their box, or whole rows of about
    a stored chunk's bytes where stored chunks do not cut the array into boxes."""
    if lazy.chunks is not None:
        return tuple(max(1, c) for c in lazy.chunks)
    if not lazy.shape:
        return ()
    row = max(1, lazy.dtype.itemsize * int(np.prod(lazy.shape[1:], dtype=np.int64)))
    return (max(1, lazy.chunk_nbytes // row), *lazy.shape[1:])


def to_dask(path: PathLike, chunks: Any = None, *, columns: Any = None) -> Any:
    """The container at ``path`` as a ``dask.array.Array`` (a ctable: a dict of one array per
    column, ``columns`` picking them).  ``chunks`` default to the stored chunks (see
    :func:`storage_chunks`); any dask ``chunks`` value is accepted, and chunks that split
    stored chunks read those stored chunks (or their blocks) once per dask chunk."""
    try:
        import dask.array as da
        from dask.base import tokenize
    except ImportError:
        raise UnsupportedError(
            "to_dask needs dask: pip install 'bloscpack[dask]'"
        ) from None
    name = os.path.abspath(os.fspath(path))
    with BloscArray(name) as lazy:
        names = lazy.columns
        if names is None and columns is not None:
            raise ArgumentError(f"{name}: only a table (a bcolz ctable) has columns")
        parts = [None] if names is None else list(names if columns is None else columns)
        identity = _identity(name)
        arrays = {}
        for column in parts:
            part = lazy if column is None else lazy[column]
            source = ContainerSlices(name, column, part.shape, part.dtype)
            arrays[column] = da.from_array(
                source, chunks=storage_chunks(part) if chunks is None else chunks,
                name=f"bloscpack-{tokenize(name, column, identity, chunks)}",
                lock=False, asarray=False, fancy=False,
                meta=np.empty((0,) * part.ndim, part.dtype),
            )  # fmt: skip
    return arrays[None] if names is None else arrays


__all__ = ["ContainerSlices", "storage_chunks", "to_dask"]
