"""Containers read by path from other processes (dask tasks, xarray backends): each process
opens a container once and keeps it open, and opens it anew when the file changes, so what
travels between processes is a path, never an open file nor any data."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from ..array import BloscArray
from ..array import open as open_container
from ..errors import ArgumentError
from ..io.sources import file_identity
from ..url import is_url

#: Containers kept open per process, least recently used first.
_OPEN: OrderedDict[tuple[str, str | None], tuple[tuple[int, ...], BloscArray]] = OrderedDict()
_OPEN_LOCK = threading.Lock()
_KEEP_OPEN = 32


def identity(path: str) -> tuple[int, ...]:
    """What tells a changed container from the one opened (a directory: its metadata; a URL:
    nothing here, its reads name the object's identity and fail if it changed)."""
    return () if is_url(path) else file_identity(os.stat(path))


def opened(path: str, column: str | None, storage_options: Any = None) -> BloscArray:
    """The lazy array of ``path`` (``column``: that column of a table, or the array of that key
    of a store; a URL read with ``storage_options``), opened once per process.  Arrays
    replaced in the cache (the file changed, or too many are open) are not closed here: tasks
    may still be reading them; they close when the last of those lets them go."""
    key = (path, column)
    version = identity(path)
    with _OPEN_LOCK:
        found = _OPEN.get(key)
        if found is not None and found[0] == version:
            _OPEN.move_to_end(key)
            return found[1]
    array = open_container(path, storage_options=storage_options)
    lazy = array if column is None else array[column]
    if not isinstance(lazy, BloscArray):
        raise ArgumentError(f"{path}: a store of many arrays: name one of its keys")
    with _OPEN_LOCK:
        found = _OPEN.get(key)
        if found is not None and found[0] == version:  # another thread was first
            return found[1]
        _OPEN[key] = (version, lazy)
        _OPEN.move_to_end(key)
        while len(_OPEN) > _KEEP_OPEN:
            _OPEN.popitem(last=False)
    return lazy


class ContainerSlices:
    """What a dask graph or an xarray variable reads: the container at ``path`` (or one
    column of a table, or one array of a store), by path alone: it pickles as its path, shape
    and dtype, and opens the container on first read in each process."""

    def __init__(self, path: str, column: str | None, shape: tuple[int, ...],
                 dtype: np.dtype, storage_options: Any = None) -> None:  # fmt: skip
        self.path = path
        self.storage_options = storage_options
        self.column = column
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)

    def __getitem__(self, index: Any) -> np.ndarray:
        return np.asarray(opened(self.path, self.column, self.storage_options)[index])

    def __reduce__(self) -> tuple[Any, ...]:
        return (ContainerSlices, (self.path, self.column, self.shape, self.dtype,
                                  self.storage_options))  # fmt: skip


__all__ = ["ContainerSlices", "identity", "opened"]
