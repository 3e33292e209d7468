"""An xarray backend for every container (the optional extra ``xarray``):
``xr.open_dataset(path, engine="bloscpack")`` and ``xr.open_dataarray``.

Variables are lazy: xarray's indexing reaches the library's own, which reads only the chunks
and blocks a selection touches; ``chunks={}`` gives dask arrays chunked as stored.  Dimension
names come from the metadata entry ``_ARRAY_DIMENSIONS`` (the name zarr gives them for
xarray) and the variable's name from ``_ARRAY_NAME``, which :func:`bloscpack.save` writes for
a ``DataArray`` with its attributes; without them they are ``dim_0``, ``dim_1``, ... and the
file's name without its suffix.  A ctable's columns become variables sharing its one
dimension; a python-blosc2 store's arrays become variables named by their keys (``g/x``),
each with dimensions of its own (``g/x_dim_0``, ...) unless its metadata names them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np
from xarray import Dataset, Variable
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from ..array import BloscArray
from ..array import open as open_container_at
from ..containers.registry import by_extension, detect
from ..errors import ArgumentError, BloscpackError
from ..group import Group
from ..url import is_url
from .dask import storage_chunks
from .dataarray import DIMENSIONS, NAME
from .reopen import ContainerSlices


class ContainerBackendArray(BackendArray):
    """One variable: the container at ``path`` (``column`` of a table), read by basic
    indexing in whichever process reads it."""

    def __init__(self, slices: ContainerSlices) -> None:
        self.slices = slices
        self.shape = slices.shape
        self.dtype = slices.dtype

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.BASIC, self.slices.__getitem__
        )


def _variable(path: str, column: str | None, lazy: BloscArray, dims: tuple[str, ...],
              attrs: dict[str, Any], storage_options: Any = None) -> Variable:  # fmt: skip
    slices = ContainerSlices(path, column, lazy.shape, lazy.dtype, storage_options)
    data = ContainerBackendArray(slices)
    chunks = storage_chunks(lazy)
    encoding = {"chunks": chunks, "preferred_chunks": dict(zip(dims, chunks, strict=True))}
    return Variable(dims, indexing.LazilyIndexedArray(data), attrs=attrs, encoding=encoding)


def _dimensions(attrs: dict[str, Any], ndim: int) -> tuple[str, ...]:
    """The dimension names the metadata gives (popped from ``attrs``), else ``dim_<i>``."""
    names = attrs.pop(DIMENSIONS, None)
    if names is None:
        return tuple(f"dim_{i}" for i in range(ndim))
    if not isinstance(names, list) or len(names) != ndim or not all(
        isinstance(n, str) for n in names
    ):
        raise ArgumentError(
            f"metadata {DIMENSIONS!r} must name the {ndim} dimensions, got {names!r}"
        )
    return tuple(names)


def open_container(path: str, drop_variables: Iterable[str] = (),
                   storage_options: Any = None) -> Dataset:  # fmt: skip
    """The container at ``path`` (a path, or a URL read with ``storage_options``) as a lazy
    :class:`xarray.Dataset`."""
    dropped = {drop_variables} if isinstance(drop_variables, str) else set(drop_variables)
    with open_container_at(path, storage_options=storage_options) as lazy:
        if isinstance(lazy, Group):
            return _store_dataset(path, lazy, dropped, storage_options)
        attrs = lazy.attrs
        name = attrs.pop(NAME, None)
        variables = {}
        if lazy.columns is not None:  # one variable per column, sharing the table's dimension
            dims = _dimensions(attrs, 1)
            for name in lazy.columns:
                if name not in dropped:
                    column = lazy[name]
                    extra = tuple(f"{name}_dim_{i}" for i in range(1, column.ndim))
                    variables[name] = _variable(path, name, column, dims + extra, {},
                                                storage_options)  # fmt: skip
            return Dataset(variables, attrs=attrs)
        if not isinstance(name, str):  # no name kept: the file's
            name = os.path.splitext(os.path.basename(path.rstrip("/")))[0]
        if name not in dropped:
            variables[name] = _variable(path, None, lazy, _dimensions(attrs, lazy.ndim), attrs,
                                        storage_options)  # fmt: skip
    return Dataset(variables)


def _store_dataset(path: str, group: Group, dropped: set[str],
                   storage_options: Any) -> Dataset:  # fmt: skip
    """A store's arrays as the variables of one dataset, named by their keys (``g/x``), with
    their own dimensions (``g/x_dim_0``, ...) unless their metadata names them."""
    variables = {}
    for key in group:
        name = key.lstrip("/")
        if name in dropped or key in dropped:
            continue
        with group[key] as lazy:
            attrs = lazy.attrs
            attrs.pop(NAME, None)
            dims = (_dimensions(attrs, lazy.ndim) if DIMENSIONS in attrs
                    else tuple(f"{name}_dim_{i}" for i in range(lazy.ndim)))  # fmt: skip
            variables[name] = _variable(path, key, lazy, dims, attrs, storage_options)
    return Dataset(variables, attrs=group.attrs)


class BloscpackBackendEntrypoint(BackendEntrypoint):
    """``engine="bloscpack"``: ``.blp`` files, Blosc2 frames and sparse frames, b2nd arrays and
    bcolz carrays and ctables."""

    description = "Blosc containers (.blp, .b2frame, .b2nd, sparse frames, bcolz) by bloscpack"
    url = "https://github.com/Blosc/bloscpack"
    open_dataset_parameters = ("filename_or_obj", "drop_variables", "storage_options")

    def open_dataset(self, filename_or_obj: Any, *,
                     drop_variables: str | Iterable[str] | None = None,
                     storage_options: Any = None) -> Dataset:  # fmt: skip
        if not isinstance(filename_or_obj, (str, os.PathLike)):
            raise ArgumentError("the bloscpack engine opens paths and URLs")
        path = os.fspath(filename_or_obj)
        if not is_url(path):
            path = os.path.abspath(path)
        return open_container(path, () if drop_variables is None else drop_variables,
                              storage_options)  # fmt: skip

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        if not isinstance(filename_or_obj, (str, os.PathLike)):
            return False
        if is_url(filename_or_obj):  # by its suffix: no requests to guess
            return by_extension(filename_or_obj) is not None
        try:
            detect(os.fspath(filename_or_obj))
        except (BloscpackError, OSError):
            return False
        return True


__all__ = ["BloscpackBackendEntrypoint", "ContainerBackendArray", "open_container"]
