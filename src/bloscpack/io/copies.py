"""Copies of bytes: stream to file, file to file in the kernel, and temporary copies of
inputs that are streams."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import IO

from .paths import PathLike, is_stream

#: Bytes copied at a time from a stream into a temporary file.
COPY_PIECE = 1 << 20


def copy_stream(src: IO[bytes], dst: IO[bytes]) -> None:
    """Everything ``src`` still holds, written to ``dst``."""
    shutil.copyfileobj(src, dst, COPY_PIECE)


def append_file(dst: IO[bytes], path: str) -> int:
    """Append the bytes of the file ``path`` to the file ``dst`` (open for writing, at its
    end), copied by the kernel (``copy_file_range``; ``sendfile``, then a plain copy where the
    file systems do not allow it); returns their number."""
    dst.flush()
    out = dst.fileno()
    start = os.lseek(out, 0, os.SEEK_CUR)
    with open(path, "rb") as src:
        size = os.fstat(src.fileno()).st_size
        done = _kernel_copy(src.fileno(), out, size)
        if done < size:  # the kernel copied nothing: copy through this process
            os.lseek(out, start, os.SEEK_SET)
            src.seek(0)
            shutil.copyfileobj(src, dst, COPY_PIECE)
            dst.flush()
            return size
    dst.seek(start + size)  # a buffered ``dst`` learns where the kernel left the file
    return size


def _kernel_copy(src: int, dst: int, size: int) -> int:
    """Copy ``size`` bytes from the start of ``src`` to ``dst`` at its offset in the kernel;
    returns ``size``, or 0 if neither ``copy_file_range`` nor ``sendfile`` took them."""
    for name in ("copy_file_range", "sendfile"):
        done = 0
        try:
            while done < size:
                if name == "copy_file_range":
                    n = os.copy_file_range(src, dst, size - done, done)
                else:
                    n = os.sendfile(dst, src, done, size - done)
                if n == 0 and not done:  # nothing copied (some file systems): not here
                    break
                if n == 0:
                    raise OSError(errno.EIO, f"{name} stopped after {done} of {size} bytes")
                done += n
        except OSError as exc:
            if done or exc.errno not in _NO_KERNEL_COPY:
                raise
        if done == size:
            return size
    return 0


#: The errors of ``copy_file_range``/``sendfile`` that mean "not here, copy otherwise".
_NO_KERNEL_COPY = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF}


@contextlib.contextmanager
def sized_input(path: PathLike) -> Iterator[str]:
    """``path`` itself, or for a stream (:func:`is_stream`: a FIFO, a device, a ``/proc``
    file, a process substitution) a temporary copy of all its bytes, removed after the block:
    what a reader that opens a path several times, or needs its size, is given.  The copy
    keeps the suffix of ``path`` (``.npy``)."""
    path = os.fspath(path)
    if not is_stream(path):
        yield path
        return
    fd, copy = tempfile.mkstemp(prefix="blpk-", suffix=".input" + os.path.splitext(path)[1])
    try:
        with os.fdopen(fd, "wb") as out, open(path, "rb") as src:
            copy_stream(src, out)
        with named_copy(copy, path):
            yield copy
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(copy)


#: Temporary copies of inputs, and the names messages give them (see :func:`named_copy`).
COPY_NAMES: dict[str, str] = {}


@contextlib.contextmanager
def named_copy(copy: str, name: str) -> Iterator[None]:
    """While the block runs, a :class:`~.sources.ByteSource` of the temporary copy ``copy`` of an
    input is called ``name`` (the input's own name): messages never show a temporary file."""
    COPY_NAMES[copy] = name
    try:
        yield
    finally:
        COPY_NAMES.pop(copy, None)
