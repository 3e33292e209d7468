"""xarray objects given to :func:`bloscpack.save`: a DataArray's values, with its name,
attributes and dimension names as metadata that the xarray backend (:mod:`.xarray`) reads
back; what a container cannot keep (coordinates, a Dataset's several variables) is refused,
never dropped silently.  Nothing here imports xarray."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import ArgumentError, DataLossError
from ..io.paths import PathLike

#: The metadata entry that holds the dimension names (zarr's name for them).
DIMENSIONS = "_ARRAY_DIMENSIONS"
#: The metadata entry that holds the DataArray's name.
NAME = "_ARRAY_NAME"


def dataarray_values(array: Any, metadata: Mapping[str, Any] | None, path: PathLike,
                     lossy: bool = False) -> tuple[np.ndarray, dict[str, Any]]:  # fmt: skip
    """A ``DataArray``'s values, and its name, attributes and dimension names as metadata
    (added to ``metadata``) that :func:`~.xarray.open_container` reads back.  Coordinates,
    which no container keeps, are refused naming ``path`` unless ``lossy``."""
    where = os.fspath(path)
    coords = [str(name) for name in array.coords]
    if coords and not lossy:
        raise DataLossError(
            f"{where}: the DataArray has coordinates ({', '.join(coords)}), which a container"
            " does not keep: save each on its own (save(da[name].values, ...)), drop them"
            " (da.drop_vars(list(da.coords))) or pass lossy=True to save without them"
        )
    name = array.name
    if name is not None and not isinstance(name, str):
        raise ArgumentError(f"{where}: the DataArray's name {name!r} is not a string (the"
                            " metadata keeps names as strings): rename it (da.rename('...'))"
                            )  # fmt: skip
    attrs = {key: value.tolist() if hasattr(value, "tolist") else value
             for key, value in array.attrs.items()}  # fmt: skip
    ours = {DIMENSIONS: list(array.dims), **({} if name is None else {NAME: name})}
    given = [set(attrs), set(metadata or ()), set(ours)]
    clash = sorted({str(key) for i, keys in enumerate(given) for key in keys
                    if any(key in other for other in given[i + 1 :])})  # fmt: skip
    if clash:
        raise ArgumentError(f"{where}: {', '.join(clash)} given twice (the DataArray's"
                            f" attributes, metadata= and {NAME}, {DIMENSIONS} are stored"
                            " together); keep one")  # fmt: skip
    return np.asarray(array.values), {**attrs, **(metadata or {}), **ours}


def is_dataarray(value: Any) -> bool:
    """Whether ``value`` is an xarray DataArray (xarray is not imported to tell)."""
    kind = type(value)
    return kind.__name__ == "DataArray" and kind.__module__.startswith("xarray")


def refuse_dataset(value: Any, path: PathLike) -> None:
    """Refuse an xarray Dataset, naming ``path`` and saying what to do instead."""
    kind = type(value)
    if kind.__name__ == "Dataset" and kind.__module__.startswith("xarray"):
        raise ArgumentError(
            f"{os.fspath(path)}: an xarray Dataset holds several variables, a container one"
            " array: save each variable on its own (for name in ds.variables:"
            " save(ds[name].drop_vars(list(ds[name].coords)), f'{name}.b2nd')), then"
            " xr.merge(xr.open_dataset(p, engine='bloscpack') for p in paths).set_coords(...)"
            " gives it back"
        )


__all__ = ["DIMENSIONS", "NAME", "dataarray_values", "is_dataarray", "refuse_dataset"]
