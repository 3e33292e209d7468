"""Dask arrays over any container (the optional extra ``dask``).

A graph holds the container's path, never an open file nor any data: each task reopens the
container in the process that runs it (kept open per process, reopened when the file changes),
so graphs pickle small and run on ``distributed`` workers in other processes or machines.
Every task reads only the chunks (and blocks) its slice touches, through the lazy arrays of
:func:`bloscpack.open`, which many threads may share.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..array import BloscArray
from ..errors import ArgumentError, UnsupportedError
from ..io import PathLike
from .reopen import ContainerSlices, identity


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
        version = identity(name)
        arrays = {}
        for column in parts:
            part = lazy if column is None else lazy[column]
            source = ContainerSlices(name, column, part.shape, part.dtype)
            arrays[column] = da.from_array(
                source, chunks=storage_chunks(part) if chunks is None else chunks,
                name=f"bloscpack-{tokenize(name, column, version, chunks)}",
                lock=False, asarray=False, fancy=False,
                meta=np.empty((0,) * part.ndim, part.dtype),
            )  # fmt: skip
    return arrays[None] if names is None else arrays


__all__ = ["storage_chunks", "to_dask"]
