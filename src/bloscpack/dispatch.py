"""Format-independent entry points: recognise a container by its bytes and layout, then hand the
work to that format's module."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import types
from collections.abc import Mapping
from typing import IO, Any, TypeVar

import numpy as np

from . import engine, lazyexpr
from .array import BloscArray
from .containers import registry
from .containers.base import ArrayDescription, write_array
from .containers.options import RAW_TYPESIZE
from .containers.registry import detect
from .convert import write_new_array
from .errors import (
    ArgumentError,
    BloscpackError,
    DataLossError,
    UnmodelledFeature,
    UnsupportedError,
)
from .group import Group
from .integrations.dask import is_dask_array, is_dask_dataframe, save_dask, sized
from .integrations.dataarray import dataarray_values, is_dataarray, refuse_dataset
from .integrations.pandas import is_dataframe, table_array
from .io.copies import sized_input
from .io.paths import PathLike, is_stream
from .journal import in_one_state
from .ndarray import holds_text
from .streaming import map_npy
from .url import is_url, local_output

T = TypeVar("T")

FORMATS = tuple(registry.FORMATS)


def save(
    array: Any, path: PathLike, format: str | None = None, *, overwrite: bool = True,
    metadata: Mapping[str, Any] | None = None,
    storage_options: Mapping[str, Any] | None = None, lossy: bool = False, **options: Any,
) -> None:  # fmt: skip
    """Save a numpy (or dask) array to ``path``.  The format is ``format`` (``blp``, ``b2frame``,
    ``b2nd``, ``sframe`` or ``bcolz``), else the one the suffix of ``path`` names (``.blp``,
    ``.b2frame``, ``.b2nd``, ``.b2sframe``, ``.bcolz``), else ``blp``.  An existing ``path`` (a
    file, an empty directory or a container) is replaced atomically, as ``numpy.save``
    replaces; ``overwrite=False`` refuses it with ``OutputExistsError``, and a directory of
    other files is never replaced.  A pandas DataFrame is saved as a structured array (a
    bcolz ctable: one column directory each; the index is not kept), an xarray DataArray as
    its values with its name, attributes and dimension names as metadata (its coordinates
    are refused with ``DataLossError`` unless ``lossy=True``, which saves it without them).
    Nothing is dropped silently: a masked array (``DataLossError``), an xarray Dataset, or
    an array the format cannot hold (Python objects, long doubles, ...) is refused naming
    ``path`` before anything is written.  ``metadata``: a JSON-able mapping stored with the
    array (every format holds it).  ``options``: the common ones (``codec``, ``clevel``,
    ``filters``, ``chunks``, ``chunk_size``, ``blocks``, ``nthreads``) mean the same in every
    format; the others are the format's own (see the manual's "Saving, loading and
    formats").  ``path`` may be a URL (``s3://bucket/key``,
    fsspec's; ``storage_options`` configure its file system): the container is built in a
    temporary local file or directory, then uploaded (see the manual, "Remote data").  A
    dask array is written in parallel on the active scheduler, the same bytes as the computed
    array gives, and a dask DataFrame as its pandas DataFrame gives
    (:func:`bloscpack.integrations.dask.save_dask`).  A mapping of keys to arrays
    (``{"x": a, "g/y": b}``) is saved as a python-blosc2 TreeStore (``.b2z``: a zip archive,
    ``.b2d``: a directory; ``metadata``: its attributes) or EmbedStore (``.b2e``), each array
    with ``options``."""
    found = registry.output_format(path, format)
    refuse_dataset(array, path)
    if found.group or isinstance(array, Mapping):
        _save_group(found, array, path, overwrite, metadata, storage_options, options)
        return
    fmt = found.name
    _refuse_masked(array, path)
    if is_dask_array(array) or is_dask_dataframe(array):
        array = sized(array, path)
        registry.check_array(fmt, array.dtype, array.shape, path)
        if array.size:
            save_dask(array, path, fmt, overwrite=overwrite, storage_options=storage_options,
                      metadata=metadata, **options)  # fmt: skip
            return
    if is_dataarray(array):
        array, metadata = dataarray_values(array, metadata, path, lossy)
    array = table_array(array, path=path) if is_dataframe(array) else np.asanyarray(array)
    _write_staged(array, path, fmt, overwrite, metadata, False, options, storage_options)


def _save_group(found: registry.ContainerFormat, arrays: Any, path: PathLike, overwrite: bool,
                metadata: Mapping[str, Any] | None, storage_options: Mapping[str, Any] | None,
                options: dict[str, Any]) -> None:  # fmt: skip
    """A mapping of keys to arrays into a new container of a format that holds groups of
    them (``found``), atomically; ``ArgumentError`` for one array to such a format, or a
    mapping to another."""
    name = os.fspath(path)
    groups = ", ".join(f.extension for f in registry.every_format() if f.group)
    if not isinstance(arrays, Mapping):
        raise ArgumentError(f"{name}: {found.description} holds arrays by key: save a dict"
                            " of them ({'x': a, 'g/y': b})")  # fmt: skip
    if not found.group:
        raise ArgumentError(f"{name}: a dict of arrays is saved to a store ({groups}), not to"
                            f" {found.description}")  # fmt: skip
    for value in arrays.values():
        _refuse_masked(value, path)
    nthreads = options.pop("nthreads", None)
    with (
        engine.threads(nthreads),
        registry.staged_container(path, overwrite, found.name, storage_options) as build,
    ):
        found.save_group(arrays, name, build, metadata=metadata, **options)


def _refuse_masked(array: Any, path: PathLike) -> None:
    """A masked array (numpy's, or a dask array of them) is refused: no container keeps a
    mask, and its data alone would read back as if nothing were masked.  (Until something
    imports ``numpy.ma``, no array is masked: the check does not import it, 6 ms.)"""
    ma = sys.modules.get("numpy.ma")
    if ma is not None and isinstance(
        getattr(array, "_meta", array) if is_dask_array(array) else array, ma.MaskedArray
    ):
        raise DataLossError(
            f"{os.fspath(path)}: a masked array would lose its mask, which no container keeps:"
            " save a.filled(fill_value) and np.ma.getmaskarray(a) as two arrays (or a.data,"
            " to drop the mask)"
        )


def _write_staged(array: np.ndarray, path: PathLike, fmt: str, overwrite: bool,
                  metadata: Mapping[str, Any] | None, raw: bool, options: dict[str, Any],
                  storage_options: Mapping[str, Any] | None = None) -> None:  # fmt: skip
    """``array`` to ``path`` in ``fmt`` through one staged output: through the format's own
    ``save`` where it has one (``save_options``: a faster path), else (or with user
    ``metadata``) its array writer (:func:`~bloscpack.containers.registry.open_writer`: the
    bytes do not depend on the number of threads), else (or for an array in Fortran order with
    ``metadata``, or ``raw`` bytes, stored without numpy metadata) through its conversion
    target.  An array ``fmt`` cannot hold is refused first
    (:func:`~bloscpack.containers.registry.check_array`)."""
    registry.check_array(fmt, array.dtype, array.shape, path)
    nthreads = options.pop("nthreads", None)
    found = registry.format_of(fmt)
    fast = found.save_options is not None
    fortran = array.ndim > 1 and array.flags.f_contiguous and not array.flags.c_contiguous
    use_writer = (not fast or metadata is not None) and not (metadata and fortran)
    if use_writer and not raw and found.writable:
        with (
            engine.threads(nthreads),
            registry.open_writer(path, fmt, array.dtype, array.shape, overwrite=overwrite,
                                 storage_options=storage_options, metadata=metadata,
                                 **options) as new,  # fmt: skip
        ):
            write_array(new, array)
        return
    if fast and metadata is None:
        options = registry.writer_options(fmt, options, array.dtype, array.shape)
        registry.check_options(fmt, options, found.save_options or ())
    with (
        engine.threads(nthreads),
        registry.staged_container(path, overwrite, fmt, storage_options) as build,
    ):
        if fast and metadata is None:
            found.save(array, build, **options)
        else:
            write_new_array(array, build, fmt, metadata=metadata, raw=raw, **options)


def append(path: PathLike, data: Any, **options: Any) -> int:
    """Append ``data`` to the container at ``path`` in place, crash-safely (an interrupted
    append leaves it as it was or completely appended), and return its new length along the
    first axis.  ``data``: rows of the array it holds (a numpy array of its dtype and
    trailing shape, or a sequence numpy converts to it), or bytes (whole rows, in C order; a
    container of raw bytes takes any).  Every format that can grow takes it (``.blp`` within
    the offset slots it reserved, frames, sparse frames, b2nd arrays along their first axis,
    bcolz carrays and ctables); others raise ``NotAppendable``.  ``options``: the format's
    own (``.blp``: ``blosc_args``, ``metadata``, as :func:`bloscpack.append.append` takes
    them)."""
    path = appendable_path(path)
    fmt, description = in_one_state(held_array, path)
    grow = registry.appender(fmt, path)
    registry.check_options(fmt, options, grow.append_options)
    rows = _rows_for(path, description, data)
    grow.append_rows(path, rows, **options)
    return description.shape[0] + len(rows)


def appendable_path(path: PathLike) -> str:
    """The local path of ``path`` to append to (a ``file://`` URL too); ``ArgumentError`` for
    any other URL and for a file that is not regular (a device or a FIFO cannot grow)."""
    path = local_output(path, "append to")
    if is_stream(path):
        raise ArgumentError(f"{os.fspath(path)}: not a regular file, cannot be appended to")
    return os.fspath(path)


class AppendModule(types.ModuleType):
    """The class of the module ``bloscpack.append``: bloscpack 0.16's module (``from
    bloscpack.append import append_fp``) that is also :func:`append` when called."""

    def __call__(self, path: PathLike, data: Any, **options: Any) -> int:
        """:func:`bloscpack.dispatch.append`."""
        return append(path, data, **options)


def held_array(path: str) -> tuple[str, ArrayDescription]:
    """The format of the container at ``path`` and the array it holds."""
    fmt = detect(path)
    reader = registry.open_reader(path, fmt, verify=False)
    try:
        return fmt, reader.description
    finally:
        reader.close()


def _rows_for(path: str, description: ArrayDescription, data: Any) -> np.ndarray:
    """``data`` as C-contiguous rows of the array ``description`` (bytes: whole rows);
    ``ArgumentError`` naming ``path`` when they do not fit it or it cannot grow."""
    dtype, shape = description.dtype, description.shape
    held = f"{path}: holds an array of dtype {dtype} and shape {shape}"
    if not shape:
        raise ArgumentError(f"{path}: holds a 0-d array, which cannot grow by appending rows")
    if description.order == "F" and len(shape) > 1:
        raise ArgumentError(
            f"{path}: holds a Fortran-order array, which cannot grow by appending rows"
        )
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = np.frombuffer(data, dtype=np.uint8)
        row = dtype.itemsize * math.prod(shape[1:])
        if row == 0 or raw.size % row:
            raise ArgumentError(
                f"{held}: the {raw.size} bytes to append are not whole rows of {row} bytes"
            )
        return raw.view(dtype).reshape(-1, *shape[1:])
    try:
        rows = data if isinstance(data, np.ndarray) else np.asarray(data, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ArgumentError(f"{held}: cannot append {type(data).__name__} to it: {exc}") from None
    if rows.dtype != dtype or rows.shape[1:] != shape[1:] or rows.ndim != len(shape):
        raise ArgumentError(
            f"{held}; rows of dtype {rows.dtype} and shape {rows.shape} do not fit it"
        )
    return np.ascontiguousarray(rows)


def _on_input(path: PathLike, storage_options: Mapping[str, Any] | None, cache: Any,
              whole: bool, work: Any) -> Any:  # fmt: skip
    """``work(input, format)`` on the container at ``path``: a path (in one state, a stream
    copied first) or a URL (fetched whole first when ``whole``)."""
    if is_url(path):
        with registry.opened_url(os.fspath(path), storage_options, cache=cache,
                                 whole=whole) as (fmt, opened):  # fmt: skip
            return work(opened, fmt)
    with sized_input(path) as sized:
        return in_one_state(work, sized)


def load(path: PathLike | bytes | bytearray | memoryview | IO[bytes], *,
         storage_options: Mapping[str, Any] | None = None, cache: Any = None,
         evaluate: bool = False) -> np.ndarray:  # fmt: skip
    """Load the array stored at ``path`` (a path or a URL, with ``storage_options`` and
    ``cache`` as for :func:`bloscpack.open`), whatever its format; or, as :func:`bloscpack.open`
    takes them, a single-file container held in bytes, a bytearray, a memoryview or a binary
    file object (read from its current position).  A container of many arrays (a
    python-blosc2 store) gives a dict of them by key.

    A python-blosc2 lazy expression file is refused (``UnmodelledFeature``) unless
    ``evaluate`` is true: then its expression is evaluated with numpy over its operands (see
    :mod:`bloscpack.lazyexpr`: a checked language of numpy operations, operands read only
    from files beside it, themselves evaluated when they are lazy expressions)."""
    if not isinstance(path, (str, os.PathLike)):
        with BloscArray(path) as lazy:
            return lazy[...]
    if evaluate:
        return _evaluated(path, storage_options, cache, ())
    return _on_input(path, storage_options, cache, True, _load)  # type: ignore[no-any-return]


def _evaluated(path: PathLike, storage_options: Mapping[str, Any] | None, cache: Any,
               chain: tuple[str, ...]) -> np.ndarray:  # fmt: skip
    """:func:`load` with ``evaluate``: a lazy expression evaluated (an operand of the
    expressions ``chain`` depends on, by real path)."""
    try:
        return _on_input(path, storage_options, cache, True, _load)  # type: ignore[no-any-return]
    except UnmodelledFeature as exc:
        if exc.lazy_expression is None:
            raise
        name = os.fspath(path)
        if is_url(name):
            raise UnmodelledFeature(f"{exc}; a lazy expression at a URL is not evaluated (its"
                                    " operands would be fetched from where it says)") from None
        if len(chain) >= lazyexpr.MAX_DEPTH:
            raise UnmodelledFeature(f"{name}: lazy expressions over lazy expressions nest"
                                    f" deeper than {lazyexpr.MAX_DEPTH}") from None
        chain = (*chain, os.path.realpath(name))

        def operand(path: str) -> np.ndarray:
            if path in chain:
                raise UnmodelledFeature(
                    f"{name}: the lazy expression cannot be evaluated: its operand"
                    f" {os.path.relpath(path, os.path.dirname(chain[-1]))!r} is itself or an"
                    " expression it depends on"
                )
            return _evaluated(path, None, None, chain)

        return lazyexpr.evaluate(exc.lazy_expression, name, operand, exc.array)


def _load(path: Any, fmt: str | None = None) -> np.ndarray:
    """The format's own ``load`` where it has one, else the whole lazy array (frames: raw
    bytes, or an array in their vlmetalayers; chunks)."""
    found = registry.format_of(fmt or detect(path))
    if found.group:  # a store: every array by key
        with Group(found.open_group(path), BloscArray) as group:
            return group.load()  # type: ignore[return-value]
    array = found.load(path)
    if array is not None:
        return array
    with BloscArray(path) as lazy:
        return lazy[...]


def info(path: PathLike, *, storage_options: Mapping[str, Any] | None = None,
         cache: Any = None) -> dict[str, Any]:  # fmt: skip
    """A JSON-able description of the container at ``path`` (format, header, metadata, chunks;
    a URL as for :func:`bloscpack.open`)."""
    return _on_input(path, storage_options, cache, False,  # type: ignore[no-any-return]
                     registry.describe)  # fmt: skip


def verify(path: PathLike, *, storage_options: Mapping[str, Any] | None = None,
           cache: Any = None, strict: bool = False) -> dict[str, Any]:  # fmt: skip
    """Check every checksum and decode every chunk of ``path`` (a URL as for
    :func:`bloscpack.open`); return a report ``{"format", "ok", "nchunks", "bad_chunks":
    [{"index", "error"}], "problems", "verifiable", "data_verified", "notes"}``.  ``ok``: no
    check found anything wrong; ``verifiable``: checksums stored in the file cover every chunk
    (else decoding found no error, but changed data would not be seen); ``data_verified``:
    they do and the file is ok; ``notes``: what is worth knowing but wrong with nothing (e.g.
    ignored stale bytes).  ``strict=True`` fails (``ok`` false) a file that is ok but whose
    data could not be verified or that has notes, each reason added to ``problems`` (the
    notes move there)."""
    report: dict[str, Any] = _on_input(path, storage_options, cache, True, _verify)
    return _strictly(report) if strict else report


def _verify(path: Any, fmt: str | None = None) -> dict[str, Any]:
    """The format's report of what it checked, with the verdict every format shares."""
    fmt = fmt or detect(path)
    found = registry.format_of(fmt)
    report = found.verify(path)
    report["format"] = fmt
    # a store's own verify opens and checks each of its arrays
    problem = _load_problem(path) if report["ok"] and not found.group else None
    if problem is not None:
        report.update(ok=False, problems=[*report.get("problems", ()), problem])
    report.setdefault("notes", [])
    report.setdefault("verifiable", False)  # a format that reports none stores no checksums
    report["data_verified"] = bool(report["verifiable"] and report["ok"])
    return report


def _load_problem(path: Any) -> str | None:
    """What :func:`load` would raise on ``path`` that its format's ``verify`` does not check:
    the checks of opening it (its array metadata), and of its text, if it holds any (None:
    nothing; a feature this installation does not read is no damage)."""
    try:
        with BloscArray(path) as lazy:
            if holds_text(lazy.dtype):
                for _ in lazy.iter_chunks():
                    pass
    except UnsupportedError:
        return None
    except BloscpackError as exc:
        return str(exc)
    return None


#: Why a file that is otherwise ok fails under ``strict``: no checksum covers its chunks.
NOT_VERIFIABLE = "strict: data not verifiable (no checksums stored for its chunks)"


def _strict_failures(report: Mapping[str, Any]) -> list[str]:
    """Why the :func:`verify` ``report`` of a file that passed every check fails under the
    strict rule: its data could not be verified, and each of its notes ([] if it passes, or if
    it failed anyway)."""
    if not report["ok"]:
        return []
    reasons = [] if report.get("data_verified") else [NOT_VERIFIABLE]
    return reasons + [f"strict: {note}" for note in report.get("notes") or ()]


def _strictly(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` under the strict rule: its :func:`_strict_failures` (its notes among them)
    become problems, and fail it."""
    reasons = _strict_failures(report)
    if reasons:
        report.update(ok=False, notes=[], problems=[*report.get("problems", ()), *reasons])
    return report


def compress_file(src: PathLike | IO[bytes], dst: PathLike | IO[bytes], format: str | None = None,
                  *, dtype: Any = None, shape: Any = None, overwrite: bool = True,
                  metadata: Any = None, storage_options: Mapping[str, Any] | None = None,
                  **options: Any) -> None:  # fmt: skip
    """Compress the file ``src`` into ``dst``, in ``format`` or the one the suffix of ``dst``
    names (as :func:`save` chooses).  A ``.npy`` input is stored as an array (its dtype and
    shape kept), and so is a raw input given a ``dtype`` (and a ``shape``, default 1-d).
    Other input is raw bytes, which ``typesize`` (default 8) tells the filters the item size
    of: formats that store bytes as such keep them so, chunk by chunk as they are read (then
    ``src`` and ``dst`` may also be binary streams), the others store them as unsigned ints of
    ``typesize`` bytes (default 1).  ``metadata``, ``options`` and a URL ``dst`` (with its
    ``storage_options``) as for :func:`save`."""
    from . import ndarray as nd

    src_path, dst_path = (os.fspath(x) if isinstance(x, (str, os.PathLike)) else None
                          for x in (src, dst))  # fmt: skip
    found = registry.output_format(dst_path or "", format)
    npy = src_path is not None and src_path.endswith(".npy")
    typesize = options.pop("typesize", None)
    for given, what in ((npy, "to .npy input: its dtype is used"),
                        (dtype is not None, "with dtype=: the item size is used")):  # fmt: skip
        if given and typesize is not None:
            raise ArgumentError(f"typesize does not apply {what}")
    if npy and dtype is not None:
        raise ArgumentError(f"{src_path}: a .npy file has its own dtype; drop dtype=")
    if shape is not None and dtype is None:
        raise ArgumentError("shape= needs dtype= (the item type of the raw input)")
    raw = not npy and dtype is None
    if raw and found.holds_bytes:  # stored as bytes, the filters told their item size
        options["typesize"] = RAW_TYPESIZE if typesize is None else typesize
        dtype = np.dtype(np.uint8)
        if found.streams:
            _own_path(src, dst, found.name, overwrite, metadata, options, dtype, (0,),
                      storage_options)
            return
    elif raw:
        dtype = _unsigned(found.name, typesize)
    own_path = found.compress_file_options is not None
    if npy and own_path and src_path is not None:  # the format reads the .npy its own way
        with sized_input(src_path) as sized:
            header = map_npy(sized, src_path)
            dtype, shape = header.dtype, header.shape
            del header
            registry.check_array(found.name, dtype, shape,
                                 dst_path or str(getattr(dst, "name", "the output")))  # fmt: skip
            _own_path(sized, dst, found.name, overwrite, metadata, options, dtype, shape,
                      storage_options)
        return
    if src_path is None or dst_path is None:
        raise ArgumentError(f"format {found.name!r} is written from a file to a file, not streams")
    with sized_input(src_path) as sized:
        array = map_npy(sized, src_path) if npy else nd.raw_array(sized, dtype, shape)
        _write_staged(array, dst_path, found.name, overwrite, metadata, raw, options,
                      storage_options)


def _own_path(src: Any, dst: Any, fmt: str, overwrite: bool, metadata: Any,
              options: dict[str, Any], dtype: np.dtype, shape: tuple[int, ...],
              storage_options: Mapping[str, Any] | None) -> None:  # fmt: skip
    """``src`` through the format's own ``compress_file`` (chunk by chunk as it is read)."""
    found = registry.format_of(fmt)
    nthreads = options.pop("nthreads", None)
    options = registry.writer_options(fmt, options, dtype, shape)
    registry.check_options(fmt, options, found.compress_file_options or ())
    with contextlib.ExitStack() as stack:
        stack.enter_context(engine.threads(nthreads))
        if isinstance(dst, (str, os.PathLike)):
            dst = stack.enter_context(
                registry.staged_container(dst, overwrite, fmt, storage_options)
            )
        found.compress_file(src, dst, metadata=metadata, **options)


def _unsigned(fmt: str, typesize: Any) -> np.dtype:
    """The dtype raw bytes get in a format that stores typed arrays only."""
    if typesize not in (None, 1, 2, 4, 8):
        raise ArgumentError(
            f"typesize {typesize!r}: format {fmt!r} stores raw bytes as unsigned ints of 1, 2, 4"
            " or 8 bytes"
        )
    return np.dtype(f"<u{typesize or 1}")
