"""Appending to carray and ctable directories in place, as bcolz's ``append`` and ``flush`` do:
the leftover chunk file is rewritten, further chunk files are added, and ``meta/sizes`` is
replaced last, every file atomically, so an interrupted append leaves the rows that were there."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import engine
from ...errors import ArgumentError, ObjectNumpyArrayRejection, UnsupportedError
from ...io.paths import PathLike
from ...io.staging import atomic_write
from ...journal import Steps
from ...url import local_output
from .layout import (
    BLPK_HEADER,
    SIZES_FILE,
    STORAGE_FILE,
    Cparams,
    _chunk_cbytes,
    _chunk_file,
    _compress_chunk,
    _is_int,
    _read_meta_json,
    _sizes_blob,
)
from .reader import CarrayReader, open_bcolz


@dataclass(frozen=True)
class _AppendPlan:
    """One carray append: the chunk files to write from ``first`` on, then ``meta/sizes``."""

    reader: CarrayReader
    cparams: Cparams
    head: np.ndarray  # the old leftover rows, which lead the first chunk rewritten
    rows: np.ndarray  # the new rows (quantized when compressed)
    first: int  # index of the first chunk file written
    length: int  # rows after the append
    cbytes: int  # bcolz's ``cbytes`` before the append


def _plan_append(reader: CarrayReader, rows: np.ndarray, length: int) -> _AppendPlan:
    """Plan appending ``rows`` after the first ``length`` rows of a carray (nothing written)."""
    cparams = reader.cparams
    if cparams.cname not in engine.WRITABLE_CODECS:
        raise UnsupportedError(
            f"{os.path.join(reader.path, STORAGE_FILE)}: new chunks would use codec"
            f" {cparams.cname!r}, which cannot be written; bloscpack writes"
            f" {engine.WRITABLE_CODECS}"
        )
    nfull = length // reader.chunklen
    head = reader.read(nfull * reader.chunklen, length)
    old = _read_meta_json(os.path.join(reader.path, SIZES_FILE), "sizes")
    cbytes: Any = old.get("cbytes") if isinstance(old, dict) else None
    if len(reader) != length:  # a column an interrupted ctable append grew: count it again
        cbytes = reader.chunklen * reader.atomsize  # bcolz counts the leftover buffer
        cbytes += sum(_stored_cbytes(reader.path, i) for i in range(nfull))
    if not _is_int(cbytes):
        cbytes = reader.chunklen * reader.atomsize
    return _AppendPlan(reader, cparams, head, rows, nfull, length + len(rows), cbytes)


def _stored_cbytes(path: str, index: int) -> int:
    """The ``cbytes`` of chunk file ``index`` of the carray at ``path``."""
    with open(_chunk_file(path, index), "rb") as fh:
        fh.seek(len(BLPK_HEADER))
        return _chunk_cbytes(fh.read(16))


def _write_append_chunks(plan: _AppendPlan, steps: Steps) -> bytes:
    """Write the chunk files of ``plan``, each replaced atomically; return the new
    ``meta/sizes`` (``cbytes`` grows by every full chunk written, as in bcolz)."""
    reader, chunklen = plan.reader, plan.reader.chunklen
    cbytes = plan.cbytes
    fill = chunklen - len(plan.head) if len(plan.head) else 0
    pieces = [plan.rows[at : at + chunklen] for at in range(fill, len(plan.rows), chunklen)]
    if len(plan.head):  # only the first chunk is copied together
        pieces.insert(0, np.concatenate([plan.head, plan.rows[:fill]]))
    for i, rows in enumerate(pieces):
        chunk = _compress_chunk(rows, plan.cparams)
        if len(rows) == chunklen:
            cbytes += _chunk_cbytes(chunk)
        with atomic_write(_chunk_file(reader.path, plan.first + i)) as fh:
            fh.write(BLPK_HEADER)
            fh.write(chunk)
        steps.done()
    return _sizes_blob((plan.length,) + reader.shape[1:], reader.atomsize, cbytes)


def _coerce_rows(reader: CarrayReader, rows: Any) -> np.ndarray:
    """``rows`` as a C-contiguous array of the carray's dtype and row shape.  Arrays cast only
    within their kind (no float to int) and integers must fit; other values convert as numpy
    converts them."""
    try:
        if not isinstance(rows, np.ndarray):
            data = np.asarray(rows, dtype=reader.dtype)
        elif rows.dtype.hasobject:
            raise ObjectNumpyArrayRejection("object arrays are refused: bcolz would store pickles")
        else:
            data = rows.astype(reader.dtype, casting="same_kind", copy=False)
            if rows.dtype.kind in "iu" and reader.dtype.kind in "iu" and rows.size:
                limits = np.iinfo(reader.dtype)
                if rows.min() < limits.min or rows.max() > limits.max:
                    raise OverflowError(f"values outside {limits.min}..{limits.max}")
    except (TypeError, ValueError, OverflowError) as exc:
        kind = rows.dtype if isinstance(rows, np.ndarray) else type(rows).__name__
        raise ArgumentError(
            f"{reader.path}: cannot append {kind} rows to a {reader.dtype} carray: {exc}"
        ) from None
    row_shape = reader.shape[1:]
    if data.shape == row_shape:
        data = data.reshape((1,) + row_shape)
    if data.shape[1:] != row_shape:
        raise ArgumentError(
            f"{reader.path}: rows of shape {data.shape[1:]} do not match the carray's {row_shape}"
        )
    return np.ascontiguousarray(data)


def _prepare_appends(path: str, rows: Any) -> list[tuple[CarrayReader, np.ndarray, int]]:
    """Readers, converted rows and current table length for every carray an append touches."""
    reader = open_bcolz(path)
    if isinstance(reader, CarrayReader):
        reader.refuse_objects()
        return [(reader, _coerce_rows(reader, rows), len(reader))]
    length = len(reader)
    if isinstance(rows, Mapping):
        columns = {name: rows[name] for name in rows}
    else:
        data = np.asarray(rows)
        if data.dtype.names is None:
            raise ArgumentError(
                f"{reader.path}: append a structured array or a mapping of columns to a ctable"
            )
        columns = {name: data[name] for name in data.dtype.names}
    if set(columns) != set(reader.names):
        raise ArgumentError(
            f"{reader.path}: rows have columns {sorted(columns)},"
            f" the table has {sorted(reader.names)}"
        )
    work = []
    counts = set()
    for name in reader.names:
        column = reader.carray(name)
        column.refuse_objects()
        converted = _coerce_rows(column, columns[name])
        counts.add(len(converted))
        work.append((column, converted, length))
    if len(counts) > 1:
        raise ArgumentError(
            f"{reader.path}: columns to append have different lengths {sorted(counts)}"
        )
    return work


def append_rows(path: PathLike, rows: np.ndarray) -> None:
    """:func:`bloscpack.append` for bcolz directories: :func:`append_bcolz`."""
    append_bcolz(path, rows)


def append_bcolz(path: PathLike, rows: Any) -> int:
    """Append ``rows`` to a carray or ctable directory as bcolz does; return the new length.

    For a ctable, ``rows`` is a structured array or a mapping of column name to values.
    The leftover chunk is rewritten with the new rows after its own, further chunks are added,
    and ``meta/sizes`` is replaced last (for a ctable: the first column's last, since its
    length is the table's), every file atomically: if the append is interrupted, the
    directory still reads as before it started.
    """
    root: str = os.fspath(local_output(path, "append to"))
    plans = [
        _plan_append(reader, data, length) for reader, data, length in _prepare_appends(root, rows)
    ]
    steps = Steps()
    sizes = [_write_append_chunks(plan, steps) for plan in plans]
    # sizes last; the first column's (which gives a ctable's length) after all the others
    for plan, blob in reversed(list(zip(plans, sizes, strict=True))):
        with atomic_write(os.path.join(plan.reader.path, SIZES_FILE)) as fh:
            fh.write(blob)
        steps.done()
    return plans[0].length
