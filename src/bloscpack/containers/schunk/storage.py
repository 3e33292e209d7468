"""The bytes of a contiguous frame: a file (read-only through a
:class:`~bloscpack.io.sources.ByteSource`, or read and written by offset under an exclusive lock)
or a ``bytearray``."""

from __future__ import annotations

import contextlib
import os
from typing import Any

from ...errors import FileNotFound, TruncatedError
from ...io.locks import FileLock
from ...io.sources import ByteSource


class FrameStorage:
    """Random access to the bytes of a contiguous frame: a file (read-only mmap, or read/write
    by offset) or a ``bytearray``."""

    def __init__(self, source: Any, offset: int, writable: bool, name: str) -> None:
        self.name = name
        self.offset = offset
        self.buffer: bytearray | None = None
        self.source: ByteSource | None = None
        self.fd: int | None = None
        self._edit_lock: FileLock | None = None
        if isinstance(source, bytearray) and writable:
            self.buffer = source
        elif writable:
            path = os.fspath(source)
            try:
                self.fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
            except FileNotFoundError:
                raise FileNotFound(f"file {path!r} does not exist") from None
            self._edit_lock = FileLock(self.fd, exclusive=True)
        else:
            self.source = (
                ByteSource(source, name=name) if not isinstance(source, ByteSource) else source
            )

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        if self.source is None:
            return contextlib.nullcontext()
        return self.source.consistent()

    def exclusive(self) -> contextlib.AbstractContextManager[None]:
        """An exclusive ``flock`` on a file changed in place."""
        if self._edit_lock is None:
            return contextlib.nullcontext()
        return self._edit_lock.held()

    def size(self) -> int:
        if self.buffer is not None:
            return len(self.buffer)
        if self.source is not None:  # fixed once the first read block has begun
            return self.source.size() - self.offset
        assert self.fd is not None
        return os.fstat(self.fd).st_size - self.offset

    def read(self, pos: int, n: int, what: str) -> memoryview | bytes:
        size = self.size()
        if pos < 0 or n < 0 or pos + n > size:
            raise TruncatedError(
                f"{self.name}: {what} at offset {pos} needs {n} bytes, the frame has {size}"
            )
        if self.buffer is not None:
            return bytes(self.buffer[pos : pos + n])  # a copy: the buffer may be resized later
        if self.source is not None:
            return self.source.read(self.offset + pos, n, what)
        assert self.fd is not None
        data = os.pread(self.fd, n, self.offset + pos)
        if len(data) != n:
            raise TruncatedError(f"{self.name}: short read of {what} at {pos}")
        return data

    def read_into(self, pos: int, dest: memoryview, what: str) -> None:
        """Fill ``dest`` with the bytes at ``pos`` (positioned reads of an unmapped file)."""
        if self.source is not None:
            if pos < 0 or pos + dest.nbytes > self.size():
                raise TruncatedError(
                    f"{self.name}: {what} at offset {pos} needs {dest.nbytes} bytes, the frame"
                    f" has {self.size()}"
                )
            self.source.read_into(self.offset + pos, dest, what)
        else:
            dest[:] = self.read(pos, dest.nbytes, what)

    def write(self, pos: int, data: Any) -> None:
        if self.buffer is not None:
            end = pos + len(data)
            if end > len(self.buffer):
                self.buffer.extend(bytes(end - len(self.buffer)))
            self.buffer[pos:end] = data
            return
        assert self.fd is not None
        mv = memoryview(data).cast("B")
        while mv:
            written = os.pwrite(self.fd, mv, self.offset + pos)
            mv = mv[written:]
            pos += written

    def truncate(self, length: int) -> None:
        if self.buffer is not None:
            del self.buffer[length:]
        else:
            assert self.fd is not None
            os.ftruncate(self.fd, self.offset + length)

    def close(self) -> None:
        if self.source is not None:
            self.source.close()
            self.source = None
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.fsync(fd)
            assert self._edit_lock is not None
            self._edit_lock.close(lambda: os.close(fd))
