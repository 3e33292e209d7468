"""pandas DataFrames to and from tables (the optional extra ``pandas``): a DataFrame is saved
as a structured array (a bcolz ctable: one column directory each, as bcolz's
``ctable.fromdataframe`` wrote), and :func:`read_table` reads a table's columns, only the ones
asked for, into a DataFrame (as bcolz's ``todataframe`` did)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..array import BloscArray
from ..errors import ArgumentError
from ..io.paths import PathLike
from . import optional


def is_dataframe(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (pandas is not imported to tell)."""
    kind = type(value)
    return kind.__name__ == "DataFrame" and kind.__module__.startswith("pandas")


def _column(name: Any, series: Any) -> np.ndarray:
    """The values of one DataFrame column as a numpy array a table column can hold: numbers,
    booleans and datetimes as they are, text as fixed-width unicode; missing values,
    timezone-aware datetimes, and categorical or other object columns, are refused naming the
    column and what to do."""
    pd = optional("pandas", "pandas")
    if not isinstance(name, str):
        raise ArgumentError(f"column {name!r}: table columns are named by strings")
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        raise ArgumentError(
            f"column {name!r} is categorical: store its codes and categories as columns of"
            " their own (series.cat.codes, series.cat.categories)"
        )
    if isinstance(dtype, pd.DatetimeTZDtype):
        raise ArgumentError(
            f"column {name!r} holds timezone-aware datetimes ({dtype}), which a table cannot"
            " hold: store them in UTC without a zone (series.dt.tz_convert(None)) or as int64"
            f" {series.dt.unit} since the epoch (series.astype('int64')), and the zone"
            f" ({dtype.tz}) as metadata"
        )
    holds_nan = isinstance(dtype, np.dtype) and dtype.kind in "fmM"  # NaN and NaT are values
    if not holds_nan and series.isna().any():
        raise ArgumentError(f"column {name!r} has missing values, which a table cannot hold")
    if pd.api.types.is_string_dtype(dtype):
        values = series.to_numpy(dtype=object)
        if not all(isinstance(v, str) for v in values):
            raise ArgumentError(
                f"column {name!r} holds Python objects that are not all strings ({dtype}):"
                " a table holds numbers, booleans, datetimes and strings"
            )
        return values.astype(str) if len(values) else np.empty(0, "<U1")
    try:
        numpy_dtype = np.dtype(getattr(dtype, "numpy_dtype", dtype))
    except TypeError:
        raise ArgumentError(
            f"column {name!r} holds pandas {dtype} values, which have no numpy dtype a table"
            " can hold: convert the column (series.astype(...)) first"
        ) from None
    if numpy_dtype.kind == "O":
        raise ArgumentError(f"column {name!r} holds Python objects ({dtype}), which a table"
                            " cannot hold")  # fmt: skip
    return series.to_numpy(dtype=numpy_dtype)


def table_array(frame: Any, dtype: Any = None, path: PathLike | None = None) -> np.ndarray:
    """The DataFrame ``frame`` as a 1-d structured array, one field per column (the index is
    not kept, as bcolz did not keep it), of ``dtype`` if given (a part of a larger table:
    text columns as wide as the widest of all parts, the others of the types they hold).
    Messages name ``path``, the container it is saved to."""
    try:
        columns = [_column(name, frame[name]) for name in frame.columns]
        if len(set(frame.columns)) != len(columns):
            raise ArgumentError("the DataFrame has columns of the same name")
    except ArgumentError as exc:
        if path is None:
            raise
        raise ArgumentError(f"{os.fspath(path)}: {exc}") from None
    if dtype is None:
        dtype = [(str(n), c.dtype) for n, c in zip(frame.columns, columns, strict=True)]
    out = np.empty(len(frame), dtype=dtype)
    for name, values in zip(frame.columns, columns, strict=True):
        wanted = out.dtype[name]
        if values.dtype != wanted and not (values.dtype.kind == wanted.kind == "U"):
            raise ArgumentError(f"column {name!r} holds {values.dtype} here, the table's type"
                                f" is {wanted}")  # fmt: skip
        out[name] = values
    return out


def table_columns(lazy: BloscArray, columns: Sequence[str] | None, path: PathLike) -> list[str]:
    """The columns ``columns`` (default: all, in order) of the table ``lazy`` (a ctable, or a
    1-d structured array), each checked to hold scalars."""
    available = lazy.dtype.names
    if not available or lazy.ndim != 1:
        raise ArgumentError(
            f"{os.fspath(path)}: holds a {lazy.dtype} array of shape {lazy.shape}, not a"
            " table: read it with bloscpack.load"
        )
    names = list(available if columns is None else columns)
    for name in names:
        if name not in available:
            raise ArgumentError(
                f"{os.fspath(path)}: no column {name!r}; the table has {', '.join(available)}"
            )
        shape = lazy.dtype[name].shape
        if shape:
            raise ArgumentError(
                f"column {name!r} holds items of shape {shape}: a DataFrame column holds"
                " scalars (read it with bloscpack.open(path)[name])"
            )
    return names


def read_table(path: PathLike, columns: Sequence[str] | None = None, *,
               storage_options: Any = None) -> Any:  # fmt: skip
    """The table at ``path`` (a bcolz ctable, or a 1-d structured array in any format; a path
    or a URL read with ``storage_options``) as a ``pandas.DataFrame``; ``columns`` picks and
    orders the columns (of a ctable, only those are read)."""
    pd = optional("pandas", "pandas")
    with BloscArray(path, storage_options=storage_options) as lazy:
        names = table_columns(lazy, columns, path)
        whole = None if lazy.columns is not None else lazy[...]  # a ctable reads by column
        data = {name: np.asarray(lazy[name] if whole is None else whole[name]) for name in names}
    return pd.DataFrame(data)


__all__ = ["is_dataframe", "read_table", "table_array", "table_columns"]
