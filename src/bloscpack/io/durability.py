"""Durability: early writeback of the pages of new files, ``fsync`` of directories and of
whole trees of files."""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any

from .paths import PathLike

#: Bytes written to a new file between two requests to start writing its pages to disk, so that
#: the disk works while the data is produced and the final ``fsync`` has little left to wait for.
WRITEBACK_STEP = 8 * 1024 * 1024


class _WritebackFile(io.FileIO):
    """A file opened for writing whose dirty pages start going to disk (``sync_file_range``,
    asynchronously) every :data:`WRITEBACK_STEP` bytes written: the bytes written since the
    last time, so that the kernel never walks the whole file again (pages written behind that
    range, after a seek, are left to the final ``fsync``).  The requests are made by a thread
    of their own (:func:`_handed_over`): the kernel blocks them while the disk's queue is full
    or the journal commits, and the writer goes on meanwhile; closing waits for them."""

    def __init__(self, fd: int) -> None:
        super().__init__(fd, "wb")
        self._unflushed = 0
        self._handed = 0  # the pages before this offset have been handed to the disk
        self._requested: Future[None] | None = None

    def write(self, data: Any) -> int:
        n = super().write(data) or 0
        self._unflushed += n
        if self._unflushed >= WRITEBACK_STEP:
            self._unflushed = 0
            end = self.tell()
            if end > self._handed:
                self._requested = _handed_over(self.fileno(), self._handed, end - self._handed)
                self._handed = end
        return n

    def close(self) -> None:
        if self._requested is not None:  # (requests run in order: the last one is the end)
            self._requested.result()
            self._requested = None
        super().close()


_requests: ThreadPoolExecutor | None = None
_requests_lock = threading.Lock()


def _handed_over(fd: int, offset: int, nbytes: int) -> Future[None]:
    """:func:`start_writeback` of the range, on the one thread making these requests."""
    global _requests
    with _requests_lock:
        if _requests is None:
            _requests = ThreadPoolExecutor(1, thread_name_prefix="bloscpack-writeback")
        return _requests.submit(start_writeback, fd, offset, nbytes)


def _libc_sync_file_range() -> Any:
    """Linux's ``sync_file_range`` (None elsewhere)."""
    try:
        function = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


_sync_file_range = _libc_sync_file_range()
_SYNC_FILE_RANGE_WRITE = 2


def start_writeback(fd: int, offset: int = 0, nbytes: int = 0) -> None:
    """Ask the kernel to start writing the dirty pages of ``fd`` (``nbytes`` from ``offset``;
    0: to the end of the file) to disk now, without waiting: a later ``fsync`` (or ``sync``)
    then finds little left to do, and the disk works while the caller goes on producing
    data."""
    if _sync_file_range is not None:
        _sync_file_range(fd, offset, nbytes, _SYNC_FILE_RANGE_WRITE)


def open_new(fd: int, mode: str) -> IO[Any]:
    """The file object for ``fd``, a new file: binary ones start writing back early."""
    if mode != "wb":
        return os.fdopen(fd, mode)
    return io.BufferedWriter(_WritebackFile(fd))


def fsync_directory(path: PathLike) -> None:
    """Make a rename or a new file in ``path`` durable."""
    with contextlib.suppress(OSError):
        fd = os.open(os.fspath(path), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


#: Files :func:`fsync_tree` flushes at once: the file system then commits its journal for many
#: of them together (100 new files of 600 KiB on ext4: 35 ms with 16 threads, 380 ms one
#: after the other).
FSYNC_THREADS = 16


def fsync_tree(root: PathLike) -> None:
    """Flush every file under the directory ``root`` to disk, then every directory (``root``
    too), several at once; the first error (of a file) is raised."""
    files: list[str] = []
    directories: list[str] = []
    for dirpath, _dirs, names in os.walk(root):
        directories.append(dirpath)
        files.extend(os.path.join(dirpath, name) for name in names)
    fsync_files(files)
    _each(fsync_directory, directories)


def fsync_files(paths: Sequence[str]) -> None:
    """Flush the files ``paths`` to disk, several at once; the first error is raised."""
    _each(_fsync_file, paths)


#: How :func:`_fsync_file` opens a file: Windows flushes only files open for writing.
_FSYNC_OPEN_FLAGS = os.O_RDWR | getattr(os, "O_BINARY", 0) if os.name == "nt" else os.O_RDONLY


def _fsync_file(path: str) -> None:
    fd = os.open(path, _FSYNC_OPEN_FLAGS)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _each(fn: Callable[[str], None], paths: Sequence[str]) -> None:
    """``fn(path)`` for each of ``paths``, up to :data:`FSYNC_THREADS` at once (one after the
    other when no thread can be started, as under a tight address-space limit)."""
    if len(paths) > 1:
        try:
            pool = ThreadPoolExecutor(min(FSYNC_THREADS, len(paths)), thread_name_prefix="fsync")
            with pool:
                futures = [pool.submit(fn, path) for path in paths]
        except RuntimeError:  # "can't start new thread": nothing is lost by doing it again
            pass
        else:
            for future in futures:
                future.result()
            return
    for path in paths:
        fn(path)
