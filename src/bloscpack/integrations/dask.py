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
from ..errors import ArgumentError
from ..io import PathLike
from ..url import is_url
from . import optional
from .pandas import table_columns
from .reopen import ContainerSlices, identity, opened


def storage_chunks(lazy: BloscArray) -> tuple[int, ...]:
    """Dask chunks matching the container's stored chunks: their box, or whole rows of about
    a stored chunk's bytes where stored chunks do not cut the array into boxes."""
    if lazy.chunks is not None:
        return tuple(max(1, c) for c in lazy.chunks)
    if not lazy.shape:
        return ()
    row = max(1, lazy.dtype.itemsize * int(np.prod(lazy.shape[1:], dtype=np.int64)))
    return (max(1, lazy.chunk_nbytes // row), *lazy.shape[1:])


def to_dask(path: PathLike, chunks: Any = None, *, columns: Any = None,
            storage_options: Any = None) -> Any:  # fmt: skip
    """The container at ``path`` (a path, or a URL read with ``storage_options``) as a
    ``dask.array.Array`` (a ctable: a dict of one array per column, ``columns`` picking
    them).  ``chunks`` default to the stored chunks (see
    :func:`storage_chunks`); ``"auto"`` gives dask's chunk size in whole stored chunks; any
    other dask ``chunks`` value is accepted, and chunks that split stored chunks read those
    stored chunks (or their blocks) once per dask chunk."""
    da = optional("dask.array", "dask")
    tokenize = optional("dask.base", "dask").tokenize
    name = os.fspath(path) if is_url(path) else os.path.abspath(os.fspath(path))
    with BloscArray(name, storage_options=storage_options) as lazy:
        names = lazy.columns
        if names is None and columns is not None:
            raise ArgumentError(f"{name}: only a table (a bcolz ctable) has columns")
        parts = [None] if names is None else list(names if columns is None else columns)
        for column in parts:
            if column is not None and column not in (names or ()):
                raise ArgumentError(f"{name}: no column {column!r}; the table has"
                                    f" {', '.join(names or ())}")  # fmt: skip
        version = identity(name)
        arrays = {}
        for column in parts:
            part = lazy if column is None else lazy[column]
            source = ContainerSlices(name, column, part.shape, part.dtype, storage_options)
            stored = storage_chunks(part)
            wanted = stored if chunks is None else chunks
            if wanted == "auto":  # dask's size, in whole stored chunks
                wanted = da.core.normalize_chunks("auto", part.shape, dtype=part.dtype,
                                                  previous_chunks=stored)  # fmt: skip
            arrays[column] = da.from_array(
                source, chunks=wanted,
                name=f"bloscpack-{tokenize(name, column, version, chunks)}",
                lock=False, asarray=False, fancy=False,
                meta=np.empty((0,) * part.ndim, part.dtype),
            )  # fmt: skip
    return arrays[None] if names is None else arrays


def _table_rows(part: tuple[str, tuple[str, ...], int, int]) -> Any:
    """Rows ``[start, stop)`` of the table at ``path`` as a DataFrame (index: the row numbers)."""
    pd = optional("pandas", "pandas")
    path, names, start, stop = part
    data = {name: opened(path, name)[start:stop] for name in names}
    return pd.DataFrame(data, index=pd.RangeIndex(start, stop))


def to_dask_dataframe(path: PathLike, columns: Any = None, rows: int | None = None) -> Any:
    """The table at ``path`` (a bcolz ctable) as a ``dask.dataframe.DataFrame`` of its columns
    (``columns`` picks them, and only those are read), one partition per stored chunk of rows
    (or per ``rows`` rows); the index is the row number, so partitions know their divisions."""
    dd = optional("dask.dataframe", "dask")
    pd = optional("pandas", "pandas")
    name = os.path.abspath(os.fspath(path))
    with BloscArray(name) as lazy:
        if lazy.columns is None:
            raise ArgumentError(f"{name}: only a table (a bcolz ctable) is read as a DataFrame")
        names = tuple(table_columns(lazy, columns, name))
        empty = {column: np.empty(0, lazy.dtype[column]) for column in names}
        meta = pd.DataFrame(empty, index=pd.RangeIndex(0, 0))
        length = lazy.shape[0]
        step = rows or storage_chunks(lazy[names[0]])[0]
    starts = list(range(0, length, step)) or [0]
    parts = [(name, names, s, min(s + step, length)) for s in starts]
    return dd.from_map(_table_rows, parts, meta=meta, divisions=(*starts, max(length - 1, 0)))


__all__ = ["storage_chunks", "to_dask", "to_dask_dataframe"]
