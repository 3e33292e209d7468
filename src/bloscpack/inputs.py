"""What :func:`bloscpack.open` opens a container from: a path (a file's one
:class:`~bloscpack.io.ByteSource`, or a directory), bytes, or a binary file object
(memory-mapped when it is a real file)."""

from __future__ import annotations

import io
import mmap
import os
import stat
from typing import Any

from .containers.registry import detect_local_directory, detect_source
from .errors import FileNotFound
from .io.sources import ByteSource, FileObjectSource

Buffer = Any  # any object exporting the buffer protocol


def open_path(path: str) -> tuple[str | None, Any]:
    """(format, what to open it from) for a path: a directory's format and its path, or the
    one :class:`~bloscpack.io.ByteSource` a file's reader reads (format None: detected under
    :meth:`~bloscpack.io.ByteSource.consistent`, with the rest of the opening)."""
    if os.path.isdir(path):
        return detect_local_directory(path), path
    return None, ByteSource(path)


def open_file(path: str) -> tuple[None, ByteSource | None]:
    """:func:`open_path` of a file (format None), or ``(None, None)`` when ``path`` is no file
    (a directory, or missing: :func:`open_path` says which, under the directory's lock)."""
    try:
        return None, ByteSource(path)
    except FileNotFound:
        return None, None


def detect_buffer(data: Buffer) -> str:
    """The format of a single-file container held in memory: ``blp``, ``b2frame``, ``b2nd``
    or ``chunk`` (see :func:`bloscpack.dispatch.detect` for paths)."""
    return detect_source(ByteSource(data), whole=True)


def map_file(fileobj: Any) -> tuple[memoryview | ByteSource, Any]:
    """The bytes of a binary file object from its current position: memory-mapped when it is
    a real file (read with positioned reads where it cannot be mapped, a file too large for
    the address space), else read into memory.  Returns (view or source, the mapping or None)."""
    if isinstance(fileobj, io.TextIOBase):
        raise TypeError("open() needs a file object opened in binary mode")
    regular = False
    try:
        fd = fileobj.fileno()
        start = fileobj.tell()
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        mapping = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (AttributeError, OSError, ValueError):
        if regular:
            return FileObjectSource(fileobj, "<file object>"), None
        data = fileobj.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError("open() needs a file object opened in binary mode") from None
        return memoryview(data), None
    return memoryview(mapping)[start:], mapping
