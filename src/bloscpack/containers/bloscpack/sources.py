"""Byte sources over a binary file object a :class:`~.file.BloscFile` reads: a memory map of a
regular file, positioned reads of another seekable object."""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import stat
from collections.abc import Iterator
from typing import IO

from ...errors import TruncatedError
from ...io.sources import ByteSource
from .writer import seekable


class _FileObjectSource(ByteSource):
    """Positioned reads from a seekable binary file object, which stays open.

    It overrides every public method of :class:`ByteSource` (a test checks this), since the
    base class's methods read its memory view, which this source does not have.
    """

    remote = False

    def __init__(self, fp: IO[bytes], name: str) -> None:
        self._fp = fp
        self.name = name
        self._start = fp.tell()
        self._size = max(0, fp.seek(0, io.SEEK_END) - self._start)
        self._file, self._mmap = None, None
        self._view = memoryview(b"")

    def size(self) -> int:
        return self._size

    @contextlib.contextmanager
    def consistent(self) -> Iterator[None]:
        """Nothing: a file object the caller gave is not locked."""
        yield

    def read(self, offset: int, n: int, what: str = "data") -> memoryview:
        if offset < 0 or n < 0 or offset + n > self._size:
            raise TruncatedError(
                f"{self.name}: {what} at offset {offset} needs {n} bytes,"
                f" but the input has {self._size}"
            )
        return self._read(offset, n, what)

    def read_upto(self, offset: int, n: int) -> memoryview:
        offset = max(0, min(offset, self._size))
        return self._read(offset, max(0, min(n, self._size - offset)), "data")

    def read_into(self, offset: int, dest: memoryview, what: str = "data") -> None:
        dest[:] = self.read(offset, dest.nbytes, what)

    def peek(self, offset: int, n: int) -> bytes:
        return bytes(self.read_upto(offset, n))

    def release(self, offset: int, n: int) -> None:
        pass  # nothing is mapped

    def prefetch(self, ranges: list[tuple[int, int]]) -> None:
        pass  # read when asked

    def _read(self, offset: int, n: int, what: str) -> memoryview:
        self._fp.seek(self._start + offset)
        data = bytearray(n)
        got = 0
        while got < n:
            piece = self._fp.readinto(memoryview(data)[got:])  # type: ignore[attr-defined]
            if not piece:
                raise TruncatedError(
                    f"{self.name}: {what} at offset {offset}: the file ended after"
                    f" {got} of {n} bytes (did it change?)"
                )
            got += piece
        return memoryview(data)

    def close(self) -> None:
        pass  # the caller owns the file object


def file_object_source(fp: IO[bytes], name: str) -> ByteSource | None:
    """Random access to a file object: a memory map of a regular file, positioned reads of
    another seekable object, or None for a stream."""
    if not seekable(fp):
        return None
    try:
        fd = fp.fileno()
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        regular = False
    if not regular:
        return _FileObjectSource(fp, name)
    start = fp.tell()
    size = os.fstat(fd).st_size
    if size <= start:
        return ByteSource(b"", name=name)
    mapping = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
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
