"""Byte sources over a binary file object a :class:`~.file.BloscFile` reads: a memory map of a
regular file, positioned reads of another seekable object (or of a file too large to map)."""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import stat
from typing import IO

from ...io.sources import ByteSource, FileObjectSource
from .writer import seekable


def file_object_source(fp: IO[bytes], name: str) -> ByteSource | None:
    """Random access to a file object: a memory map of a regular file, positioned reads of
    another seekable object (or where the mapping fails), or None for a stream."""
    if not seekable(fp):
        return None
    try:
        fd = fp.fileno()
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        regular = False
    if not regular:
        return FileObjectSource(fp, name)
    start = fp.tell()
    size = os.fstat(fd).st_size
    if size <= start:
        return ByteSource(b"", name=name)
    try:
        mapping = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except OSError:  # no room in the address space for all of it: read what is asked
        return FileObjectSource(fp, name)
    return _MappedSource(mapping, start, name)


class _MappedSource(ByteSource):
    """A :class:`ByteSource` over a memory map this object owns."""

    def __init__(self, mapping: mmap.mmap, start: int, name: str) -> None:
        self._owned = mapping
        self._whole = memoryview(mapping)
        super().__init__(self._whole[start:], name=name)

    def close(self) -> None:
        super().close()
        self._whole.release()
        with contextlib.suppress(BufferError):
            self._owned.close()
