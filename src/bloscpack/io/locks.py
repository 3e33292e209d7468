"""Advisory file locks (``flock``), shared by the threads of a process."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable, Iterator

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

from .paths import PathLike


def lock_file(fd: int, exclusive: bool) -> None:
    """Take an advisory ``flock`` on ``fd`` (shared or exclusive), waiting for it; nothing
    where there is no ``flock``."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)


def unlock_file(fd: int) -> None:
    """Release the ``flock`` on ``fd``."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)


class FileLock:
    """An advisory ``flock`` on an open file or directory, held by the threads of a process
    together: the first one into :meth:`held` takes it, the last one out releases it.

    Shared: readers in this and other processes hold it at once and an exclusive holder waits
    for them.  Exclusive: one thread at a time (the others wait on a reentrant lock), and the
    readers of other processes wait."""

    def __init__(self, fd: int, exclusive: bool = False) -> None:
        self.fd: int | None = fd
        self.exclusive = exclusive
        self._holders = 0
        self._mutex = threading.RLock()

    def held(self) -> contextlib.AbstractContextManager[None]:
        """The block during which this process holds the lock (the lock itself, entered)."""
        return self

    def __enter__(self) -> None:
        self.enter()

    def enter(self) -> bool:
        """Enter the block (as ``with``); True when this call took the ``flock``, False when
        a thread of this process already held it (nothing could change the file since)."""
        mutex = self._mutex
        mutex.acquire()  # an exclusive holder keeps it until it leaves
        try:
            first = not self._holders
            if first and self.fd is not None and fcntl is not None:
                fcntl.flock(self.fd, fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH)
            self._holders += 1
        except BaseException:
            mutex.release()
            raise
        if not self.exclusive:
            mutex.release()
        return first

    def __exit__(self, *exc: object) -> None:
        mutex = self._mutex
        if not self.exclusive:
            mutex.acquire()
        try:
            self._holders -= 1
            if not self._holders and self.fd is not None and fcntl is not None:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            mutex.release()

    def close(self, close: Callable[[], None]) -> None:
        """Run ``close`` (which closes the file, and so releases the lock) once no thread is
        taking or releasing the lock."""
        with self._mutex:
            self.fd = None
            close()


@contextlib.contextmanager
def shared_lock(path: PathLike) -> Iterator[None]:
    """A shared ``flock`` on the regular file or directory ``path`` for the block (nothing for
    other paths, which are never opened here: opening a FIFO would count as its reader, or
    one that cannot be opened: the read inside reports it)."""
    try:
        mode = os.stat(path).st_mode
        fd = os.open(path, os.O_RDONLY) if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else None
    except OSError:
        fd = None
    if fd is None:
        yield
        return
    try:
        lock_file(fd, exclusive=False)
        yield
    finally:
        os.close(fd)  # releases the lock
