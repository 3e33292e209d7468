"""Byte sources and sinks: byte-range reads over files and buffers, and atomic writes."""

from __future__ import annotations

import contextlib
import mmap
import os
import tempfile
from collections.abc import Iterator
from typing import IO, Any

from .errors import FileNotFound, TruncatedError

PathLike = str | os.PathLike[str]


class ByteSource:
    """Random access to the bytes of a local file or an in-memory buffer.

    ``read(offset, n)`` returns exactly ``n`` bytes or raises ``TruncatedError`` naming the
    source, so a size read from the input can never make the caller allocate more than the
    input holds.  Local files are memory-mapped, so reads are zero-copy views.
    """

    def __init__(self, source: PathLike | bytes | bytearray | memoryview, name: str | None = None):
        self._file: IO[bytes] | None = None
        self._mmap: mmap.mmap | None = None
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._view = memoryview(source).cast("B")
            self.name = name or "<bytes>"
        else:
            path = os.fspath(source)
            self.name = name or path
            try:
                self._file = open(path, "rb")
            except FileNotFoundError:
                raise FileNotFound(f"file {path!r} does not exist") from None
            except IsADirectoryError:
                raise FileNotFound(f"{path!r} is a directory, not a file") from None
            size = os.fstat(self._file.fileno()).st_size
            if size:
                self._mmap = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
                self._view = memoryview(self._mmap)
            else:
                self._view = memoryview(b"")

    def size(self) -> int:
        """Total number of bytes."""
        return len(self._view)

    def read(self, offset: int, n: int, what: str = "data") -> memoryview:
        """Exactly ``n`` bytes at ``offset`` (a view, not a copy)."""
        if offset < 0 or n < 0 or offset + n > len(self._view):
            raise TruncatedError(
                f"{self.name}: {what} at offset {offset} needs {n} bytes,"
                f" but the input has {len(self._view)}"
            )
        return self._view[offset : offset + n]

    def read_upto(self, offset: int, n: int) -> memoryview:
        """Up to ``n`` bytes at ``offset`` (fewer at the end of the input)."""
        offset = max(0, min(offset, len(self._view)))
        return self._view[offset : offset + max(0, n)]

    def peek(self, offset: int, n: int) -> bytes:
        """A copy of up to ``n`` bytes at ``offset``, read from a file without mapping its pages
        (a scan over every chunk header then leaves no pages behind in memory)."""
        offset = max(0, min(offset, len(self._view)))
        n = max(0, min(n, len(self._view) - offset))
        if self._mmap is None or self._file is None:
            return bytes(self._view[offset : offset + n])
        return os.pread(self._file.fileno(), n, offset)

    def release(self, offset: int, n: int) -> None:
        """Hint that bytes ``[offset, offset + n)`` will not be read again soon: their pages
        leave this process's resident memory (they stay in the page cache), so a sequential
        pass over a large file keeps its memory flat.  Reading them again still works."""
        if self._mmap is None or n <= 0 or not hasattr(mmap, "MADV_DONTNEED"):
            return
        start = max(0, offset) // mmap.PAGESIZE * mmap.PAGESIZE
        end = min(offset + n, len(self._mmap)) // mmap.PAGESIZE * mmap.PAGESIZE
        if end > start:
            self._mmap.madvise(mmap.MADV_DONTNEED, start, end - start)

    def close(self) -> None:
        """Release the mapping and the file."""
        self._view.release()
        if self._mmap is not None:
            with contextlib.suppress(BufferError):
                self._mmap.close()
            self._mmap = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> ByteSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "wb") -> Iterator[IO[Any]]:
    """Write ``path`` through a temporary file in the same directory, renamed over it only when
    the block completes: a failed or interrupted write leaves no partial output and never
    damages an existing file."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        os.chmod(tmp, _new_file_mode(path))
        with os.fdopen(fd, mode) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _new_file_mode(path: str) -> int:
    """The mode ``open(path, "w")`` would give: the existing file's, else 0o666 minus umask."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def fsync_directory(path: PathLike) -> None:
    """Make a rename or a new file in ``path`` durable."""
    with contextlib.suppress(OSError):
        fd = os.open(os.fspath(path), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
