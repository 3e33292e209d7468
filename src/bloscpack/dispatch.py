"""Format-independent entry points: recognise a container by its bytes and layout, then hand the
work to that format's module."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from .errors import NotAContainer
from .io import ByteSource, PathLike, shared_lock, sized_input

T = TypeVar("T")

FORMATS = ("blp", "b2frame", "b2nd", "sframe", "bcolz")
FRAME_MAGIC = b"\xa8b2frame\x00"


def detect(path: PathLike) -> str:
    """Name of the format of ``path``: ``blp``, ``b2frame``, ``b2nd``, ``sframe``, ``bcolz`` or
    ``chunk`` (one raw Blosc chunk).  File names do not matter, only bytes and layout."""
    path = os.fspath(path)
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, "chunks.b2frame")):
            from .containers import b2nd

            return "b2nd" if b2nd.sniff_b2nd(path) else "sframe"
        from .containers import bcolz

        if bcolz.sniff_dir(path):
            return "bcolz"
        raise NotAContainer(f"{path}: directory is neither a Blosc2 sparse frame nor a bcolz dir")
    with ByteSource(path) as source:
        return detect_source(source)


def detect_source(source: ByteSource, *, whole_chunk: bool = False,
                  frame_kind: bool = True) -> str:  # fmt: skip
    """The format of the single-file container ``source`` holds, from its first bytes (a frame's
    metalayers tell ``b2nd`` from ``b2frame``): ``blp``, ``b2frame``, ``b2nd`` or ``chunk``.
    With ``whole_chunk`` a Blosc chunk must fill the source exactly; with ``frame_kind=False``
    a contiguous frame is ``frame``, its metalayers unread (for a caller that opens it)."""
    head = bytes(source.read_upto(0, 32))
    if head[:4] == b"blpk":
        return "blp"
    if head[1:10] == FRAME_MAGIC and not frame_kind:
        return "frame"
    if head[1:10] == FRAME_MAGIC:
        from .containers.b2nd import sniff_b2nd

        return "b2nd" if sniff_b2nd(source) else "b2frame"
    from .chunks import is_chunk

    if is_chunk(head, source.size() if whole_chunk else None):
        return "chunk"
    raise NotAContainer(f"{source.name}: not a Blosc container (first bytes {head[:16].hex(' ')})")


def _check_format(format: str) -> str:
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
    return format


def save(array: Any, path: PathLike, format: str = "blp", **options: Any) -> None:
    """Save a numpy array to ``path`` in ``format`` (blp, b2nd, b2frame, sframe or bcolz)."""
    format = _check_format(format)
    array = np.asanyarray(array)
    if format == "blp":
        from .api import save_blp

        save_blp(array, path, **options)
    elif format in ("b2nd", "b2frame", "sframe"):
        from .containers.b2nd import save_b2nd

        sparse = (format == "sframe") or options.pop("sparse", False)
        save_b2nd(array, path, sparse=sparse, **options)
    else:
        from .containers.bcolz import save_bcolz

        save_bcolz(array, path, **options)


def load(path: PathLike) -> np.ndarray:
    """Load the array stored at ``path``, whatever its format."""
    with sized_input(path) as sized:
        return in_one_state(_load, sized)


def _load(path: str) -> np.ndarray:
    fmt = detect(path)
    if fmt == "blp":
        from .api import load_blp

        return load_blp(path)
    if fmt == "b2nd":
        from .containers.b2nd import load_b2nd

        return load_b2nd(path)
    if fmt == "bcolz":
        from .containers.bcolz import load_bcolz

        return load_bcolz(path)
    from .array import BloscArray  # frames (raw bytes, or an array in their vlmetalayers), chunks

    with BloscArray(path) as array:
        return array[...]


_MODULES = {
    "blp": "bloscpack",
    "b2frame": "frame",
    "sframe": "sframe",
    "b2nd": "b2nd",
    "bcolz": "bcolz",
}


def in_one_state(read: Callable[[str], T], path: str) -> T:
    """``read(path)`` under a shared lock on the file (or directory) held from its first step
    to its last: appends and edits by this library wait, so every step sees the same state.
    An interrupted append is rolled back first."""
    from .append import needs_recovery, recover

    while True:
        recover(path)
        with shared_lock(path):
            if not needs_recovery(path):  # else an append died after the roll-back: again
                return read(path)


def _module(fmt: str) -> Any:
    """The container module of format ``fmt``."""
    return importlib.import_module(f".containers.{_MODULES[fmt]}", __package__)


def info(path: PathLike) -> dict[str, Any]:
    """A JSON-able description of the container at ``path`` (format, header, metadata, chunks)."""
    with sized_input(path) as sized:
        return in_one_state(_info, sized)


def _info(path: str) -> dict[str, Any]:
    fmt = detect(path)
    if fmt == "chunk":
        from .chunks import inspect_chunk

        with open(path, "rb") as fh:
            result = inspect_chunk(fh.read())
    else:
        result = _module(fmt).info(path)
    return {"format": fmt, **result}


def verify(path: PathLike) -> dict[str, Any]:
    """Check every checksum and decode every chunk of ``path``; return a report
    ``{"format", "ok", "nchunks", "bad_chunks": [{"index", "error"}], "problems"}``."""
    with sized_input(path) as sized:
        return in_one_state(_verify, sized)


def _verify(path: str) -> dict[str, Any]:
    fmt = detect(path)
    if fmt == "chunk":
        from .chunks import decompress_chunk
        from .errors import BloscpackError

        with open(path, "rb") as fh:
            data = fh.read()
        try:
            decompress_chunk(data)
        except BloscpackError as exc:
            return {"format": fmt, "ok": False, "nchunks": 1,
                    "bad_chunks": [{"index": 0, "error": str(exc)}], "problems": []}  # fmt: skip
        return {"format": fmt, "ok": True, "nchunks": 1, "bad_chunks": [], "problems": []}
    report: dict[str, Any] = _module(fmt).verify(path)
    report["format"] = fmt
    return report


def compress_file(src: PathLike, dst: PathLike, format: str = "blp", **options: Any) -> None:
    """Compress the file ``src`` into ``dst`` in ``format``.  ``.blp`` streams chunk by chunk;
    a ``.npy`` input is stored as an array (dtype and shape kept) in the array formats."""
    format = _check_format(format)
    if format == "blp":
        from .api import pack_file_to_file

        pack_file_to_file(src, dst, **options)
        return
    npy = os.fspath(src).endswith(".npy")
    with sized_input(src) as sized:
        if npy:
            array = np.load(sized, mmap_mode="r", allow_pickle=False)
        else:
            array = np.fromfile(sized, dtype=np.uint8)
        if format == "b2frame" and npy:
            _save_array_frame(array, dst, **options)
        elif format == "b2frame":
            from .containers.frame import save_bytes

            save_bytes(array, dst, **options)
        else:
            save(array, dst, format=format, **options)


def _save_array_frame(array: np.ndarray, dst: PathLike, chunksize: int = 4 << 20,
                      **cparams: Any) -> None:  # fmt: skip
    """``array`` in a contiguous frame of flat chunks (of whole items, in its memory order),
    with its numpy metadata in the vlmetalayers ``dtype``, ``shape``, ``order`` and
    ``container``, as :func:`bloscpack.convert` writes arrays to frames."""
    from . import ndarray as nd
    from .containers.frame import CParams, FrameWriter, pack_value

    array = nd.contiguous(array)
    nd.check_storable(array.dtype)
    itemsize = max(1, array.dtype.itemsize)
    cparams.setdefault("typesize", min(itemsize, 255))
    vlmeta = [(key, pack_value(value)) for key, value in nd.encode_metadata(array).items()]
    data = nd.byte_view(array)
    size = max(itemsize, int(chunksize) - int(chunksize) % itemsize)
    with FrameWriter(dst, CParams.make(**cparams), chunksize=size, vlmeta=vlmeta) as writer:
        for start in range(0, data.size, size):
            writer.append_data(data[start : start + size])
