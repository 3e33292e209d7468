"""What a bcolz directory holds (``info``: metadata only) and whether it reads (``verify``: every
chunk decoded and checked against the metadata)."""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np

from ... import engine
from ...errors import BloscpackError
from ...io.paths import PathLike
from ...io.sources import Directory
from .attrs import BcolzAttrs
from .layout import (
    _CHUNK_NAME,
    ATTRS_FILE,
    BLPK_HEADER_SIZE,
    DATA_DIR,
    SIZES_FILE,
    _is_int,
    _naming,
)
from .reader import CarrayReader, CtableReader, open_bcolz


def _json_safe(value: Any) -> Any:
    """``value`` with non-finite floats as strings, so that strict JSON can carry it."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    return value


def _dtype_info(dtype: np.dtype[Any]) -> Any:
    """``dtype.str``, or for a structured dtype its ``descr`` as JSON lists."""
    return json.loads(json.dumps(dtype.descr)) if dtype.names else dtype.str


def _carray_info(reader: CarrayReader) -> dict[str, Any]:
    used = [i for i in _chunk_indexes(reader) if i < reader.nchunks]
    directory = reader.directory
    files = sum(directory.size(f"{DATA_DIR}/__{i}.blp") for i in used)
    return {
        "kind": "carray",
        "path": reader.path,
        "shape": list(reader.shape),
        "dtype": _dtype_info(reader.dtype),
        "storage_dtype": reader.storage.dtype_text,
        "chunklen": reader.chunklen,
        "nchunks": reader.nchunks,
        "typesize": reader.typesize,
        "nbytes": reader.nbytes,
        "cbytes": files,
        "cparams": _json_safe(reader.storage.cparams_raw),
        "expectedlen": _json_safe(reader.storage.expectedlen),
        "dflt": _json_safe(reader.storage.dflt),
        "bcolz_can_open": not reader.storage.dtype.names,
    }


def info(path: PathLike) -> dict[str, Any]:
    """A JSON-able description of a carray or ctable directory (metadata only, no data read)."""
    reader = open_bcolz(path)
    if isinstance(reader, CtableReader):
        columns = [dict(_carray_info(reader.carray(name)), name=name) for name in reader.names]
        result: dict[str, Any] = {
            "format": "bcolz",
            "kind": "ctable",
            "path": reader.path,
            "shape": [len(reader)],
            "dtype": _dtype_info(reader.dtype),
            "names": list(reader.names),
            "nchunks": sum(c["nchunks"] for c in columns),
            "nbytes": sum(c["nbytes"] for c in columns),
            "cbytes": sum(c["cbytes"] for c in columns),
            "bcolz_can_open": all(c["bcolz_can_open"] for c in columns),
            "columns": columns,
        }
        attrs_of: Any = reader
    else:
        result = {"format": "bcolz", **_carray_info(reader)}
        attrs_of = reader
    try:
        result["attrs"] = _json_safe(attrs_of.attrs.to_dict())
    except BloscpackError as exc:
        result["attrs"] = None
        result["attrs_error"] = str(exc)
    return result


def _verify_carray(reader: CarrayReader, length: int, name: str | None,
                   report: dict[str, Any]) -> None:  # fmt: skip
    """Decode the chunks of the first ``length`` rows of a carray; add what is wrong to
    ``report`` (``bad_chunks`` and ``problems``: reads fail; ``warnings``: reads work)."""
    warnings = report["warnings"]
    if reader.is_object:
        warnings.append(f"{reader.path}: object carray: its values are pickles, never loaded")
    elif _is_int(reader.sizes_nbytes) and reader.sizes_nbytes != reader.nbytes:
        warnings.append(
            f"{os.path.join(reader.path, SIZES_FILE)}: nbytes {reader.sizes_nbytes}"
            f" != {len(reader)} rows x {reader.atomsize} bytes"
        )
    directory = reader.directory
    for what in (ATTRS_FILE, DATA_DIR):
        if not directory.exists(what):
            warnings.append(f"{directory.join(what)}: missing (bcolz cannot open it)")
    try:
        reader.cparams  # noqa: B018  (validates cparams)
    except BloscpackError as exc:
        warnings.append(f"{exc} (appending would fail)")
    nchunks = length if reader.is_object else -(-length // reader.chunklen)
    report["nchunks"] += nchunks
    present = _chunk_indexes(reader)
    checked = min(nchunks, max(present, default=-1) + 2)  # past the last file: all missing
    if checked < nchunks:
        report["problems"].append(
            f"{reader.chunk_path(checked)}: chunk files {checked} to {nchunks - 1} missing"
            f" ({os.path.join(reader.path, SIZES_FILE)} says {length} rows)"
        )
    reader.prefetch(0, checked - 1)
    for index in range(checked):
        path = reader.chunk_path(index)
        try:
            source, header = reader.chunk_source(index)
            try:
                with _naming(path):
                    chunk = source.read(BLPK_HEADER_SIZE, header.cbytes, "Blosc chunk")
                    if not reader.is_object:
                        reader._check_header(path, header, index)
                    engine.check_decodes(chunk)  # its layout first, then a piece at a time
                    del chunk
            finally:
                source.close()
        except BloscpackError as exc:
            entry: dict[str, Any] = {"index": index, "error": str(exc)}
            if name is not None:
                entry["column"] = name
            report["bad_chunks"].append(entry)
            continue
        if header.typesize != reader.typesize:
            warnings.append(
                f"{path}: Blosc typesize {header.typesize}, bcolz uses {reader.typesize}"
                f" for {reader.dtype}: its partial reads of this chunk would be wrong"
            )


def _chunk_indexes(reader: CarrayReader) -> set[int]:
    """Indexes of the ``data/__<i>.blp`` files present (at a URL that cannot be listed: the
    ones the metadata needs)."""
    try:
        names = reader.directory.listdir(DATA_DIR)
    except OSError:
        return set(range(reader.nchunks)) if reader.remote is not None else set()
    return {int(m.group(1)) for m in map(_CHUNK_NAME.fullmatch, names) if m}


def verify(path: PathLike) -> dict[str, Any]:
    """Decode every chunk of a carray or ctable directory and check it against the metadata.

    Returns ``{"format": "bcolz", "ok": bool, "nchunks": n, "bad_chunks": [{"index": i,
    "error": msg}, ...], "problems": [...], "warnings": [...]}``; ctable chunk entries also
    name their ``column``.  ``ok`` is false when a chunk or the metadata cannot be read;
    ``warnings`` list what bcolz would trip on although bloscpack reads the data.
    """
    report: dict[str, Any] = {"format": "bcolz", "ok": False, "nchunks": 0,
                              "bad_chunks": [], "problems": [], "warnings": []}  # fmt: skip
    try:
        reader = open_bcolz(path)
    except BloscpackError as exc:
        report["problems"].append(str(exc))
        return report
    carrays: list[tuple[CarrayReader, str | None]] = []
    if isinstance(reader, CtableReader):
        for column_name in reader.names:
            try:
                carrays.append((reader.carray(column_name), column_name))
            except BloscpackError as exc:
                report["problems"].append(str(exc))
        for column, label in carrays:
            if len(column) != len(reader):
                report["warnings"].append(
                    f"{column.path}: column {label!r} has {len(column)} rows, the table"
                    f" {len(reader)} (an interrupted append?)"
                )
    else:
        carrays.append((reader, None))
    for column, label in carrays:
        _verify_carray(column, len(reader), label, report)
    top = reader.remote or Directory(reader.path)
    for target in [top] + [c.directory for c, label in carrays if label is not None]:
        try:
            BcolzAttrs(target)
        except BloscpackError as exc:
            report["problems"].append(str(exc))
    if isinstance(reader, CtableReader) and not top.is_file(ATTRS_FILE):
        report["warnings"].append(f"{top.join(ATTRS_FILE)}: missing")
    report["ok"] = not report["bad_chunks"] and not report["problems"]
    return report
