"""Format-independent entry points: recognise a container by its bytes and layout, then hand the
work to that format's module."""

from __future__ import annotations

import os
from typing import Any, TypeVar

import numpy as np

from .array import BloscArray
from .containers import registry
from .containers.registry import detect
from .errors import ArgumentError, OutputExistsError
from .io import PathLike, sized_input
from .journal import in_one_state

T = TypeVar("T")

FORMATS = tuple(registry.FORMATS)


def save(
    array: Any, path: PathLike, format: str | None = None, *, overwrite: bool = True,
    **options: Any,
) -> None:  # fmt: skip
    """Save a numpy array to ``path``.  The format is ``format`` (``blp``, ``b2frame``,
    ``b2nd``, ``sframe`` or ``bcolz``), else the one the suffix of ``path`` names (``.blp``,
    ``.b2frame``, ``.b2nd``, ``.b2sframe``, ``.bcolz``), else ``blp``.  An existing ``path`` is
    replaced atomically, as ``numpy.save`` replaces; ``overwrite=False`` refuses it with
    ``OutputExistsError``.  ``options``: ``codec``, ``clevel``, ``filters`` and ``chunks`` mean
    the same in every format; the others are the format's own (see the README's tables)."""
    fmt = registry.output_format(path, format).name
    array = np.asanyarray(array)
    if not overwrite and os.path.lexists(path):
        raise OutputExistsError(f"{os.fspath(path)}: already exists (overwrite=False)")
    if fmt in ("blp", "b2nd", "bcolz"):  # the others write through convert, which does this
        options = registry.writer_options(fmt, options, array.dtype, array.shape)
    if fmt == "blp":
        from .api import save_blp

        _check_options(fmt, options, save_blp)
        save_blp(array, path, **options)
    elif fmt == "b2nd":
        from .containers.b2nd import save_b2nd

        _check_options(fmt, options, save_b2nd)
        save_b2nd(array, path, **options)
    elif fmt == "bcolz":
        from .containers.bcolz.writer import save_bcolz

        _check_options(fmt, options, save_bcolz, exclude="overwrite")
        save_bcolz(array, path, overwrite=True, **options)
    else:
        from .convert import write_array

        write_array(array, path, fmt, **options)


def _check_options(fmt: str, options: dict[str, Any], writer: Any, exclude: str = "") -> None:
    known = [name for name in registry.keyword_options(writer, 2) if name != exclude]
    registry.check_options(fmt, options, known)


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


def compress_file(src: PathLike, dst: PathLike, format: str = "blp", *, dtype: Any = None,
                  shape: Any = None, **options: Any) -> None:  # fmt: skip
    """Compress the file ``src`` into ``dst`` in ``format``.  ``.blp`` streams chunk by chunk;
    a ``.npy`` input is stored as an array (dtype and shape kept) in the array formats, and so
    is a raw input given a ``dtype`` (and a ``shape``, default 1-d)."""
    from . import ndarray as nd

    format = registry.get(format).name
    npy = os.fspath(src).endswith(".npy")
    if npy and dtype is not None:
        raise ArgumentError(f"{os.fspath(src)}: a .npy file has its own dtype; drop dtype=")
    if shape is not None and dtype is None:
        raise ArgumentError("shape= needs dtype= (the item type of the raw input)")
    if format == "blp" and dtype is None:
        from .api import pack_file_to_file

        pack_file_to_file(src, dst, **options)
        return
    with sized_input(src) as sized:
        if npy:
            array = np.load(sized, mmap_mode="r", allow_pickle=False)
        elif dtype is not None:
            array = nd.raw_array(sized, dtype, shape)
        else:
            array = np.fromfile(sized, dtype=np.uint8)
        if format == "blp":
            save(array, dst, format=format, **options)
            return
        if format in ("b2frame", "sframe"):
            from .convert import write_array

            write_array(array, dst, format, raw=not npy and dtype is None, **options)
        else:
            save(array, dst, format=format, **options)
