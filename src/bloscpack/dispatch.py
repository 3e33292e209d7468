"""Format-independent entry points: recognise a container by its bytes and layout, then hand the
work to that format's module."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, TypeVar

import numpy as np

from . import engine
from .array import BloscArray
from .containers import registry
from .containers.registry import detect
from .convert import write_new_array
from .errors import ArgumentError
from .io import PathLike, check_replaceable, sized_input, staged_output
from .journal import in_one_state

T = TypeVar("T")

FORMATS = tuple(registry.FORMATS)


def save(
    array: Any, path: PathLike, format: str | None = None, *, overwrite: bool = True,
    metadata: Mapping[str, Any] | None = None, **options: Any,
) -> None:  # fmt: skip
    """Save a numpy array to ``path``.  The format is ``format`` (``blp``, ``b2frame``,
    ``b2nd``, ``sframe`` or ``bcolz``), else the one the suffix of ``path`` names (``.blp``,
    ``.b2frame``, ``.b2nd``, ``.b2sframe``, ``.bcolz``), else ``blp``.  An existing ``path`` (a
    file, an empty directory or a container) is replaced atomically, as ``numpy.save``
    replaces; ``overwrite=False`` refuses it with ``OutputExistsError``, and a directory of
    other files is never replaced.  ``metadata``: a JSON-able mapping stored with the array
    (every format holds it).  ``options``: the common ones (``codec``, ``clevel``,
    ``filters``, ``chunks``, ``chunk_size``, ``blocks``, ``nthreads``) mean the same in every
    format; the others are the format's own (see the README's tables)."""
    fmt = registry.output_format(path, format).name
    _write_staged(np.asanyarray(array), path, fmt, overwrite, metadata, False, options)


def _write_staged(array: np.ndarray, path: PathLike, fmt: str, overwrite: bool,
                  metadata: Mapping[str, Any] | None, raw: bool,
                  options: dict[str, Any]) -> None:  # fmt: skip
    """``array`` to ``path`` in ``fmt`` through one staged output: through the format's own
    ``save`` where it has one (a faster path), else (or with user ``metadata``) through its
    conversion target (``raw`` bytes: stored without numpy metadata)."""
    nthreads = options.pop("nthreads", None)
    writer = getattr(registry.module(fmt), "save", None)
    if writer is not None and metadata is None:
        options = registry.writer_options(fmt, options, array.dtype, array.shape)
        registry.check_options(fmt, options, registry.keyword_options(writer, 2))
    with (
        engine.threads(nthreads),
        staged_output(path, overwrite=overwrite, replaces=registry.holds_container) as build,
    ):
        if writer is not None and metadata is None:
            writer(array, build, **options)
        else:
            write_new_array(array, build, fmt, metadata=metadata, raw=raw, **options)


def load(path: PathLike) -> np.ndarray:
    """Load the array stored at ``path``, whatever its format."""
    with sized_input(path) as sized:
        return in_one_state(_load, sized)


def _load(path: str) -> np.ndarray:
    """The format's own ``load`` where it has one, else the whole lazy array (frames: raw
    bytes, or an array in their vlmetalayers; chunks)."""
    load_whole = getattr(registry.module(detect(path)), "load", None)
    if load_whole is not None:
        array: np.ndarray = load_whole(path)
        return array
    with BloscArray(path) as lazy:
        return lazy[...]


def info(path: PathLike) -> dict[str, Any]:
    """A JSON-able description of the container at ``path`` (format, header, metadata, chunks)."""
    with sized_input(path) as sized:
        return in_one_state(registry.describe, sized)


def verify(path: PathLike) -> dict[str, Any]:
    """Check every checksum and decode every chunk of ``path``; return a report
    ``{"format", "ok", "nchunks", "bad_chunks": [{"index", "error"}], "problems"}``."""
    with sized_input(path) as sized:
        return in_one_state(_verify, sized)


def _verify(path: str) -> dict[str, Any]:
    fmt = detect(path)
    report: dict[str, Any] = registry.module(fmt).verify(path)
    report["format"] = fmt
    return report


def compress_file(src: PathLike, dst: PathLike, format: str | None = None, *, dtype: Any = None,
                  shape: Any = None, overwrite: bool = True,
                  metadata: Any = None, **options: Any) -> None:  # fmt: skip
    """Compress the file ``src`` into ``dst``, in ``format`` or the one the suffix of ``dst``
    names (as :func:`save` chooses).  A ``.npy`` input is stored as an array (its dtype and
    shape kept), and so is a raw input given a ``dtype`` (and a ``shape``, default 1-d); other
    input is stored as bytes (streamed chunk by chunk where the format has a way to).
    ``metadata`` and ``options`` as for :func:`save`."""
    from . import ndarray as nd

    fmt = registry.output_format(dst, format).name
    npy = os.fspath(src).endswith(".npy")
    if npy and dtype is not None:
        raise ArgumentError(f"{os.fspath(src)}: a .npy file has its own dtype; drop dtype=")
    if shape is not None and dtype is None:
        raise ArgumentError("shape= needs dtype= (the item type of the raw input)")
    raw = not npy and dtype is None
    stream = getattr(registry.module(fmt), "compress_file", None)
    if raw and stream is not None:
        check_replaceable(dst, overwrite=overwrite, replaces=registry.holds_container)
        with engine.threads(options.pop("nthreads", None)):
            stream(src, dst, metadata=metadata, **options)
        return
    with sized_input(src) as sized:
        if npy:
            array = np.load(sized, mmap_mode="r", allow_pickle=False)
        elif dtype is not None:
            array = nd.raw_array(sized, dtype, shape)
        else:
            array = np.fromfile(sized, dtype=np.uint8)
        _write_staged(array, dst, fmt, overwrite, metadata, raw, options)
