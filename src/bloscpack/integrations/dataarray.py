"""xarray DataArrays given to :func:`bloscpack.save`: their values, with their attributes and
dimension names as metadata that the xarray backend (:mod:`.xarray`) reads back.  Nothing here
imports xarray."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

#: The metadata entry that holds the dimension names (zarr's name for them).
DIMENSIONS = "_ARRAY_DIMENSIONS"


def dataarray_values(array: Any, metadata: Mapping[str, Any] | None
                     ) -> tuple[np.ndarray, dict[str, Any]]:  # fmt: skip
    """A ``DataArray``'s values, and its attributes and dimension names as metadata (added to
    ``metadata``) that :func:`open_container` reads back."""
    attrs = {key: value.tolist() if hasattr(value, "tolist") else value
             for key, value in array.attrs.items()}  # fmt: skip
    return np.asarray(array.values), {**attrs, **(metadata or {}), DIMENSIONS: list(array.dims)}


def is_dataarray(value: Any) -> bool:
    """Whether ``value`` is an xarray DataArray (xarray is not imported to tell)."""
    kind = type(value)
    return kind.__name__ == "DataArray" and kind.__module__.startswith("xarray")


__all__ = ["DIMENSIONS", "dataarray_values", "is_dataarray"]
