"""A binary file object over a ``.blp`` container, like :class:`gzip.GzipFile`.

:class:`BloscFile` plugs into the :mod:`io` stack (it is an :class:`io.BufferedIOBase`), so
``shutil.copyfileobj``, ``io.TextIOWrapper``, ``numpy.save`` and ``numpy.load`` work on it.

Reading (``"rb"``) is random access through the format's reader
(:class:`~.reader.BlpReader`, as :func:`bloscpack.open` reads): a position is mapped to the
chunk holding it (by arithmetic when the header gives uniform chunk sizes, otherwise through
the sizes of the chunk headers), and only that chunk is read, checksum-verified (once) and
decompressed; the decoded chunk is kept until the position leaves it.  Reads that cover a
whole chunk decompress straight into the caller's buffer.  A non-seekable input (a pipe) is
read sequentially, chunk by chunk.

Writing (``"wb"``) compresses each ``chunk_size`` piece as soon as it is complete.  The chunks
are spooled until :meth:`BloscFile.close`, which writes header, metadata, offsets and chunks:
to a path through a temporary file renamed into place (an exception leaves nothing behind), to
a seekable file object at its position.  A non-seekable output (a pipe) gets a streaming
container: header with ``nchunks = -1`` and no offsets, each chunk written as it is compressed.

Appending (``"ab"``) collects the new bytes and hands them to the crash-safe
:func:`~bloscpack.containers.bloscpack.append.append_fp` in one journaled step when the file is
closed.
"""

from __future__ import annotations

import functools
import io
import os
import threading
from collections.abc import Mapping
from types import TracebackType
from typing import IO, Any

from ...errors import ArgumentError
from ...io.paths import PathLike
from ...journal import recover
from ...url import local_output
from .args import BloscArgs, BloscpackArgs, MetadataArgs
from .reader import BlpReader
from .sinks import BLOSC_OPTIONS, BLOSCPACK_OPTIONS, AppendSink, Buffer, ContainerSink, WriteOptions
from .sources import file_object_source
from .streams import RandomReader, Reader, StreamReader
from .writer import seekable

_MODES = {"r": "rb", "rb": "rb", "w": "wb", "wb": "wb", "a": "ab", "ab": "ab"}
#: A :meth:`BloscFile.read` larger than this first checks every chunk's size against the header
#: (cheap next to decoding that much), as a read of an array does.
_CHECKED_READ = 16 << 20


def _one_at_a_time(method: Any) -> Any:
    """``method`` of a :class:`BloscFile`, run by one thread at a time (its position and its
    decoded-chunk cache are shared), as Python's buffered files do."""

    @functools.wraps(method)
    def serialized(self: BloscFile, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return serialized


class BloscFile(io.BufferedIOBase):
    """A ``.blp`` container read or written as a stream of uncompressed bytes.

    Parameters
    ----------
    file : str, os.PathLike or binary file object
        A path, or an open binary file object.  A file object is neither closed nor truncated
        by :meth:`close`; in ``"rb"`` mode the container starts at its current position.
    mode : {"rb", "wb", "ab"}
        Read, write (a new container replacing any existing file) or append.  ``"r"``, ``"w"``,
        ``"a"`` are accepted as the same modes.
    chunk_size : int or str, default "1M"
        Uncompressed bytes per chunk (``"wb"``); a B/K/M/G/T suffix is accepted.
    blosc_args, bloscpack_args, metadata_args
        0.16's argument objects (or dicts), as for :func:`bloscpack.pack_bytes_to_file`.
    typesize, clevel, shuffle, cname (alias codec)
        Chunk compression, overriding ``blosc_args``; defaults are bloscpack 0.16's (typesize 8,
        clevel 7, byte shuffle, blosclz), in Blosc1 chunks that 0.16 reads.
    blosc_version, filters, filters_meta, use_dict, blocksize
        Blosc2 chunks (``blosc_version=2``) and their options, as in :class:`BloscArgs`.
    checksum, offsets, max_app_chunks
        Container options overriding ``bloscpack_args`` (adler32, offsets on, 10 × nchunks).
    metadata
        JSON-serializable metadata stored in the container (``"ab"``: replaces the file's).

    In ``"ab"`` mode only the compression options and ``metadata`` apply to an existing file
    (its chunk size, checksum and offsets are fixed); a missing file is created as with ``"wb"``.

    Examples
    --------
    >>> import bloscpack, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.blp")
    >>> with bloscpack.BloscFile(path, "wb", chunk_size="64K") as f:
    ...     f.write(b"hello " * 100_000)
    600000
    >>> with bloscpack.BloscFile(path) as f:
    ...     _ = f.seek(300_000)
    ...     f.read(11)
    b'hello hello'
    """

    def __init__(
        self,
        file: PathLike | IO[bytes],
        mode: str = "rb",
        *,
        chunk_size: int | str | None = None,
        blosc_args: BloscArgs | Mapping[str, Any] | None = None,
        bloscpack_args: BloscpackArgs | Mapping[str, Any] | None = None,
        metadata: Any = None,
        metadata_args: MetadataArgs | Mapping[str, Any] | None = None,
        **options: Any,
    ) -> None:
        self._lock = threading.RLock()
        self._reader: Reader | None = None
        self._writer: ContainerSink | AppendSink | None = None
        if mode not in _MODES:
            raise ArgumentError(f"invalid mode {mode!r}: expected 'rb', 'wb' or 'ab'")
        self.mode = _MODES[mode]
        unknown = set(options) - {*BLOSC_OPTIONS, *BLOSCPACK_OPTIONS, "codec"}
        if unknown:
            raise ArgumentError(f"unexpected option(s): {', '.join(sorted(unknown))}")
        self._path: str | None = None
        self._fp: IO[bytes] | None = None
        if isinstance(file, (str, os.PathLike)):
            self._path = os.fspath(file)
            if self.mode != "rb":  # a URL is written by save or compress_file, not in place
                self._path = local_output(self._path, "write" if self.mode == "wb" else "append to")
            self.name: str = self._path
        elif hasattr(file, "read" if self.mode == "rb" else "write"):
            self._fp = file
            name = getattr(file, "name", "<file object>")
            self.name = f"<fd {name}>" if isinstance(name, int) else str(name)
        else:
            raise ArgumentError(
                f"file must be a path or a binary file object, not {type(file).__name__}"
            )
        self._pos = 0
        self._failed = False
        given = {k: v for k, v in options.items() if v is not None or k == "checksum"}
        settings = [chunk_size, blosc_args, bloscpack_args, metadata, metadata_args, *given]
        if self.mode == "rb":
            if any(s is not None for s in settings):
                raise ArgumentError("compression and container options apply only when writing")
            self._reader = self._open_reader()
            return
        write = WriteOptions(chunk_size, blosc_args, bloscpack_args, metadata, metadata_args, given)
        if self.mode == "ab" and self._appends_to_existing():
            write.check_append()
            self._writer = AppendSink(self._path, self._fp, write, self.name)
        else:
            self._writer = ContainerSink(self._path, self._fp, write, self.name)

    # --- opening ---------------------------------------------------------------------------

    def _open_reader(self) -> Reader:
        if self._path is not None:
            recover(self._path)
            return RandomReader(BlpReader(self._path))
        fp = self._fp
        assert fp is not None
        source = file_object_source(fp, self.name)
        if source is None:
            return StreamReader(fp, self.name)
        try:
            return RandomReader(BlpReader(source))
        except BaseException:
            source.close()
            raise

    def _appends_to_existing(self) -> bool:
        if self._path is not None:
            return os.path.exists(self._path)
        fp = self._fp
        assert fp is not None
        if not (seekable(fp) and fp.readable()):
            raise ArgumentError(f"{self.name}: appending needs a readable, seekable file object")
        position = fp.tell()
        end = fp.seek(0, io.SEEK_END)
        fp.seek(position)
        return end > 0

    # --- io protocol -----------------------------------------------------------------------

    def readable(self) -> bool:
        """Whether the file was opened for reading."""
        self._check_open()
        return self.mode == "rb"

    def writable(self) -> bool:
        """Whether the file was opened for writing or appending."""
        self._check_open()
        return self.mode != "rb"

    def seekable(self) -> bool:
        """Whether :meth:`seek` can go to any position (a file read with random access)."""
        self._check_open()
        return isinstance(self._reader, RandomReader)

    def fileno(self) -> int:
        """Not supported: the bytes of this stream are not those of any file descriptor."""
        raise io.UnsupportedOperation(f"{self.name}: a BloscFile has no file descriptor")

    def tell(self) -> int:
        """Position in the uncompressed stream (bytes written so far when writing)."""
        self._check_open()
        return self._pos

    def _check_open(self) -> None:
        if self.closed:
            raise ValueError("I/O operation on closed file.")

    def _check_mode(self, reading: bool) -> None:
        self._check_open()
        if reading and self.mode != "rb":
            raise io.UnsupportedOperation(f"read() on a BloscFile opened with mode {self.mode!r}")
        if not reading and self.mode == "rb":
            raise io.UnsupportedOperation("write() on a BloscFile opened with mode 'rb'")

    @property
    def metadata(self) -> Any:
        """The container's metadata (read mode; None if it has none)."""
        self._check_mode(reading=True)
        assert self._reader is not None
        return self._reader.metadata

    # --- reading ---------------------------------------------------------------------------

    @_one_at_a_time
    def readinto(self, b: Buffer) -> int:
        """Read up to ``len(b)`` bytes into ``b``; whole chunks are decompressed in place."""
        self._check_mode(reading=True)
        assert self._reader is not None
        with memoryview(b) as view, view.cast("B") as out:
            n = self._reader.readinto(self._pos, out)
        self._pos += n
        return n

    @_one_at_a_time
    def readinto1(self, b: Buffer) -> int:
        """Like :meth:`readinto`, but at most to the end of the current chunk."""
        self._check_mode(reading=True)
        assert self._reader is not None
        with memoryview(b) as view, view.cast("B") as out:
            n = self._reader.readinto(self._pos, out, single_chunk=True)
        self._pos += n
        return n

    @_one_at_a_time
    def read(self, size: int | None = -1) -> bytes:
        """Up to ``size`` bytes (all that remain if ``size`` is negative or None)."""
        self._check_mode(reading=True)
        assert self._reader is not None
        remaining = self._reader.remaining(self._pos)
        if remaining is None:  # a stream: collect chunk pieces
            return self._read_pieces(-1 if size is None else size)
        if size is None or size < 0 or size > remaining:
            size = remaining
        if size > _CHECKED_READ:  # the header's claims, checked before they are allocated
            size = min(size, self._reader.checked_remaining(self._pos))
        buffer = bytearray(size)
        n = self.readinto(buffer)
        del buffer[n:]
        return bytes(buffer)

    def _read_pieces(self, size: int, line: bool = False) -> bytes:
        assert self._reader is not None
        parts = []
        left = size
        while left != 0:
            piece = self._reader.piece(self._pos, left, line)
            if not piece:
                break
            parts.append(bytes(piece))
            self._pos += len(piece)
            left = left - len(piece) if left > 0 else left
            if line and piece[-1] == 0x0A:
                break
        return b"".join(parts)

    @_one_at_a_time
    def readline(self, size: int | None = -1) -> bytes:
        """The bytes up to and including the next newline (at most ``size``)."""
        self._check_mode(reading=True)
        return self._read_pieces(-1 if size is None else size, line=True)

    @_one_at_a_time
    def read1(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes from the current chunk (at least one unless at the end)."""
        self._check_mode(reading=True)
        assert self._reader is not None
        piece = bytes(self._reader.piece(self._pos, -1 if size is None else size))
        self._pos += len(piece)
        return piece

    @_one_at_a_time
    def peek(self, size: int = 0) -> bytes:
        """Bytes from the position on (at least ``size`` or 8 KiB, when the current chunk has
        them), without moving."""
        self._check_mode(reading=True)
        assert self._reader is not None
        return bytes(self._reader.piece(self._pos, max(size, io.DEFAULT_BUFFER_SIZE)))

    @_one_at_a_time
    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move to ``offset`` (from the start, the current position or the end); a position
        past the end is allowed and reads nothing."""
        self._check_mode(reading=True)
        if not isinstance(self._reader, RandomReader):
            raise io.UnsupportedOperation(f"{self.name}: the input is not seekable")
        if whence == io.SEEK_SET:
            position = offset
        elif whence == io.SEEK_CUR:
            position = self._pos + offset
        elif whence == io.SEEK_END:
            position = self._reader.remaining(0) + offset
        else:
            raise ArgumentError(f"invalid whence ({whence}, should be 0, 1 or 2)")
        if position < 0:
            raise ArgumentError(f"negative seek position {position}")
        self._pos = position
        return position

    # --- writing ---------------------------------------------------------------------------

    def write(self, b: Buffer) -> int:
        """Append the bytes of ``b`` to the uncompressed stream; return their number."""
        self._check_mode(reading=False)
        assert self._writer is not None
        with memoryview(b) as view, view.cast("B") as data:
            try:
                self._writer.write(data)
            except BaseException:
                self._failed = True
                raise
            n = len(data)
        self._pos += n
        return n

    def flush(self) -> None:
        """Flush a streaming output (bytes short of a chunk stay buffered until close)."""
        self._check_open()
        if self._writer is not None:
            self._writer.flush()

    # --- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Finish the container (when writing) and release the input or output.  After a
        failed write nothing is committed."""
        if self.closed:
            return
        try:
            if self._writer is not None:
                if self._failed:
                    self._writer.abort()
                else:
                    self._writer.finish()
            elif self._reader is not None:
                self._reader.close()
        finally:
            self._writer = None
            self._reader = None
            super().close()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self._failed = True
        self.close()

    def __repr__(self) -> str:
        return f"<bloscpack.BloscFile {self.name!r} mode={self.mode!r}>"


def open_file(
    file: PathLike | IO[bytes],
    mode: str = "rb",
    *,
    encoding: str | None = None,
    errors: str | None = None,
    newline: str | None = None,
    **options: Any,
) -> BloscFile | io.TextIOWrapper:
    """Open a ``.blp`` container like :func:`gzip.open`: binary modes ``"rb"``, ``"wb"``,
    ``"ab"`` return a :class:`BloscFile`; text modes ``"rt"``, ``"wt"``, ``"at"`` wrap it in an
    :class:`io.TextIOWrapper` with ``encoding``, ``errors`` and ``newline``.  ``options`` are
    those of :class:`BloscFile`."""
    text = "t" in mode
    binary_mode = mode.replace("t", "")
    if text and "b" in mode:
        raise ArgumentError(f"invalid mode {mode!r}: both text and binary")
    if not text and (encoding is not None or errors is not None or newline is not None):
        raise ArgumentError("encoding, errors and newline apply only to text modes")
    binary = BloscFile(file, binary_mode, **options)
    if not text:
        return binary
    return io.TextIOWrapper(binary, encoding=encoding, errors=errors, newline=newline)


__all__ = ["BloscFile", "open_file"]
