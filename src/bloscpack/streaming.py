"""Data moved chunk by chunk between containers and byte streams: what ``blpk`` uses for ``-``
(stdin/stdout), ``.npy`` outputs and decompression of every format with bounded memory.  No
format is named here: which formats write their data as it arrives (``.blp``), and how, is
asked of the registry (:mod:`bloscpack.containers.registry`).

* :class:`PrefixedReader` puts bytes already read (to recognise a format) back in front of a
  stream; :func:`read_head` reads them.
* :func:`write_array` writes any container opened with :func:`bloscpack.open` as raw C-order
  bytes or as a ``.npy`` file, a slab of rows at a time.
* :func:`spool` copies a stream into a temporary file, for formats that need random access.
* :func:`map_npy` opens a ``.npy`` input, refusing one that no container can hold.
"""

from __future__ import annotations

import io
import math
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from . import ndarray as nd
from .errors import FormatError, ObjectNumpyArrayRejection

#: Bytes of rows read, decoded and written at a time by :func:`write_array` (about).
SLAB_BYTES = 4 << 20
#: Bytes read from an input stream at a time when its chunk size is not known.
PIECE_BYTES = 1 << 20
#: Largest buffer allocated for a chunk size a stream's header claims (larger chunks are still
#: read, through the file object's own chunk buffer).
MAX_BUFFER_BYTES = 16 << 20

Progress = Callable[[int], None]


def _ignore(nbytes: int) -> None:
    pass


#: Pipe buffer asked for on stdin and stdout (Linux's default is 64 KiB; 1 MiB is the largest an
#: unprivileged process gets by default): reading 256 MiB from ``cat`` took 216 ms with 64 KiB,
#: 66 ms with 1 MiB.
PIPE_SIZE = 1024 * 1024


def widen_pipe(fp: IO[bytes]) -> None:
    """Enlarge the kernel buffer of ``fp`` if it is a pipe (and the system allows it)."""
    import fcntl

    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setpipe is None:
        return
    try:
        if stat.S_ISFIFO(os.fstat(fp.fileno()).st_mode):
            fcntl.fcntl(fp.fileno(), setpipe, PIPE_SIZE)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # not a real file descriptor, or the system refuses: keep the pipe as it is


def read_head(fp: IO[bytes], n: int) -> bytes:
    """Exactly ``n`` bytes from ``fp``, fewer only if the stream ends first."""
    parts, got = [], 0
    while got < n:
        piece = fp.read(n - got)
        if not piece:
            break
        parts.append(piece)
        got += len(piece)
    return b"".join(parts)


class PrefixedReader(io.RawIOBase):
    """A non-seekable binary stream: the bytes ``head``, then the rest of ``fp``."""

    def __init__(self, head: bytes, fp: IO[bytes], name: str) -> None:
        super().__init__()
        self.head = bytes(head)
        self._head = memoryview(self.head)
        self._fp = fp
        self.name = name

    def readable(self) -> bool:
        """Always true."""
        return True

    def readinto(self, b: Any) -> int:
        """Read into ``b`` (the prefix's bytes first, then the stream's); return the count."""
        with memoryview(b) as view, view.cast("B") as out:
            if self._head:
                n = min(len(out), len(self._head))
                out[:n] = self._head[:n]
                self._head = self._head[n:]
                return n
            reader = getattr(self._fp, "readinto", None)
            if reader is not None:
                return reader(out) or 0
            data = self._fp.read(len(out))
            out[: len(data)] = data
            return len(data)


def buffer_size(chunk_size: int) -> int:
    """Bytes to read a stream of chunks of ``chunk_size`` (0: unknown) at a time: one chunk, so
    that it is decoded straight into the buffer, within bounds."""
    return chunk_size if 0 < chunk_size <= MAX_BUFFER_BYTES else PIECE_BYTES


def _rows_per_slab(array: Any) -> int:
    """Rows read at a time: about :data:`SLAB_BYTES`, whole stored chunks along the first
    axis when the chunks are boxes."""
    rows = array.shape[0]
    row_nbytes = max(1, array.nbytes // rows) if rows else 1
    step = max(1, SLAB_BYTES // row_nbytes)
    chunks = array.chunks
    if chunks and chunks[0] > 0:
        step = max(chunks[0], step - step % chunks[0])
    return step


def npy_header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    """The header ``numpy.save`` writes for a C-ordered array of ``dtype`` and ``shape``."""
    from numpy.lib import format as npformat

    fields = {"descr": npformat.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    sink = io.BytesIO()
    try:
        npformat.write_array_header_1_0(sink, fields)
    except ValueError:  # too long for version 1.0
        sink = io.BytesIO()
        npformat.write_array_header_2_0(sink, fields)
    return sink.getvalue()


def map_npy(path: str, name: str) -> np.ndarray:
    """The array of the ``.npy`` file ``path`` (called ``name`` in messages), memory-mapped;
    one no container can hold (Python objects, a long double: see
    :func:`~bloscpack.ndarray.check_writable`) or no ``.npy`` file is refused naming ``name``."""
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        dtype = _npy_dtype(path)
        if dtype is not None and dtype.hasobject:
            raise ObjectNumpyArrayRejection(
                f"{name}: holds Python objects (dtype {dtype}), which cannot be stored without"
                " pickling; convert them to a fixed-size dtype (e.g. 'U' or 'S') first"
            ) from None
        raise FormatError(f"{name}: not a .npy file numpy can map ({exc})") from None
    nd.check_writable(array.dtype, name)
    return array


def _npy_dtype(path: str) -> np.dtype | None:
    """The dtype a ``.npy`` file's header declares, or None if it cannot be read."""
    from numpy.lib import format as npformat

    with open(path, "rb") as fh:
        try:
            version = npformat.read_magic(fh)
            read = {(1, 0): npformat.read_array_header_1_0,
                    (2, 0): npformat.read_array_header_2_0}.get(version)  # fmt: skip
            return None if read is None else read(fh, max_header_size=1 << 20)[2]
        except (ValueError, SyntaxError):
            return None


def write_array(array: Any, out: IO[bytes], *, npy: bool = False,
                progress: Progress | None = None) -> None:  # fmt: skip
    """Write the :class:`~bloscpack.BloscArray` ``array`` to ``out``: its items in C order, after
    a ``.npy`` header if ``npy``.  Rows are read a slab at a time, so memory stays bounded."""
    progress = progress or _ignore
    dtype, shape = array.dtype, tuple(array.shape)
    if npy:
        if dtype.hasobject:
            raise FormatError(f"{array.path}: arrays of Python objects cannot be written")
        out.write(npy_header(dtype, shape))
    if not shape:
        item = np.ascontiguousarray(array[...])
        out.write(nd.byte_view(item).data)
        progress(item.nbytes)
        return
    if math.prod(shape) == 0:
        return
    step = _rows_per_slab(array)
    for start in range(0, shape[0], step):
        slab = np.ascontiguousarray(array[start : start + step])
        out.write(nd.byte_view(slab).data)
        progress(slab.nbytes)


def spool(head: bytes, fp: IO[bytes], directory: str, name: str = "stdin") -> str:
    """Copy ``head`` and then the rest of ``fp`` into the new file ``directory/name``; return
    its path."""
    path = os.path.join(directory, name)
    with open(path, "wb") as out:
        out.write(head)
        shutil.copyfileobj(fp, out, PIECE_BYTES)
    return path


def temporary_directory() -> tempfile.TemporaryDirectory[str]:
    """A private temporary directory (removed with everything in it when closed)."""
    return tempfile.TemporaryDirectory(prefix="blpk-")


__all__ = [
    "PrefixedReader",
    "buffer_size",
    "npy_header",
    "read_head",
    "spool",
    "temporary_directory",
    "write_array",
]
