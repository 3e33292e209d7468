"""A binary file object over a ``.blp`` container, like :class:`gzip.GzipFile`.

:class:`BloscFile` plugs into the :mod:`io` stack (it is an :class:`io.BufferedIOBase`), so
``shutil.copyfileobj``, ``io.TextIOWrapper``, ``numpy.save`` and ``numpy.load`` work on it.

Reading (``"rb"``) is random access: a position is mapped to the chunk holding it (by
arithmetic when the header has offsets and uniform chunk sizes, otherwise through a table built
by walking the chunk headers once), and only that chunk is read, checksum-verified and
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

import bisect
import contextlib
import functools
import io
import mmap
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import IO, Any

from ... import engine
from ...blosc.header import BLOSC1_HEADER_SIZE, BLOSC2_HEADER_SIZE, EXTENDED_MARK, ChunkHeader
from ...errors import (
    ArgumentError,
    BloscpackError,
    ChecksumMismatch,
    ChunkError,
    IntegrityError,
    TruncatedError,
)
from ...io.paths import PathLike, is_stream
from ...io.sources import ByteSource
from ...io.staging import atomic_write
from ...journal import recover
from ...remote.upload import local_output
from ..target import check_user_metadata
from .append import append_fp
from .args import (
    DEFAULT_CHECKSUM,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_CLEVEL,
    DEFAULT_SHUFFLE,
    DEFAULT_TYPESIZE,
    BloscArgs,
    BloscpackArgs,
    MetadataArgs,
    calculate_nchunks,
    handle_max_app_chunks,
    parse_chunk_size,
)
from .checksums import check_valid_checksum
from .header import (
    BLOSCPACK_HEADER_LENGTH,
    METADATA_HEADER_LENGTH,
    BloscpackHeader,
    MetadataHeader,
    header_typesize,
    sniff,
)
from .preamble import Preamble, encode_metadata_section, metadata_section_length
from .reader import BloscpackReader, reading
from .writer import (
    BloscpackWriter,
    check_blosc_args,
    compress_chunk,
    file_chunks,
    pack,
    pack_npy_file,
    seekable,
    write_file,
)

Buffer = Any  # any object exporting the buffer protocol

_MODES = {"r": "rb", "rb": "rb", "w": "wb", "wb": "wb", "a": "ab", "ab": "ab"}
_SPOOL_IN_MEMORY = 32 << 20  # compressed chunks (or appended bytes) kept in memory up to this
_STREAM_PIECE = 1 << 20  # a size read from a stream is trusted only as far as bytes arrive

_BLOSC_OPTIONS = (
    "typesize", "clevel", "shuffle", "cname", "blosc_version", "filters", "filters_meta",
    "use_dict", "blocksize",
)  # fmt: skip
_BLOSCPACK_OPTIONS = ("checksum", "offsets", "max_app_chunks")


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
        self._reader: _Reader | None = None
        self._writer: _ContainerSink | _AppendSink | None = None
        if mode not in _MODES:
            raise ArgumentError(f"invalid mode {mode!r}: expected 'rb', 'wb' or 'ab'")
        self.mode = _MODES[mode]
        unknown = set(options) - {*_BLOSC_OPTIONS, *_BLOSCPACK_OPTIONS, "codec"}
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
        write = _WriteOptions(
            chunk_size, blosc_args, bloscpack_args, metadata, metadata_args, given
        )
        if self.mode == "ab" and self._appends_to_existing():
            write.check_append()
            self._writer = _AppendSink(self._path, self._fp, write, self.name)
        else:
            self._writer = _ContainerSink(self._path, self._fp, write, self.name)

    # --- opening ---------------------------------------------------------------------------

    def _open_reader(self) -> _Reader:
        if self._path is not None:
            recover(self._path)
            return _RandomReader(BloscpackReader(self._path))
        fp = self._fp
        assert fp is not None
        source = _file_object_source(fp, self.name)
        if source is None:
            return _StreamReader(fp, self.name)
        try:
            return _RandomReader(BloscpackReader(source))
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
        return isinstance(self._reader, _RandomReader)

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
        if not isinstance(self._reader, _RandomReader):
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


# --- read side ----------------------------------------------------------------------------


class _Reader:
    """Chunks of a container as one stream of bytes, with one decoded chunk cached."""

    name: str
    metadata: Any

    def __init__(self) -> None:
        self._cache = bytearray()
        self._cache_index = -1
        self._cache_start = 0
        self._cache_len = 0

    def remaining(self, position: int) -> int | None:
        """Bytes from ``position`` to the end (None if not known yet)."""
        raise NotImplementedError

    def _find(self, position: int) -> tuple[int, int, int] | None:
        """``(index, start, nbytes)`` of the chunk holding ``position``, None past the end."""
        raise NotImplementedError

    def _decode(self, index: int, out: memoryview) -> None:
        """Decompress chunk ``index`` into ``out`` (exactly its size)."""
        raise NotImplementedError

    def checked_remaining(self, position: int) -> int:
        """:meth:`remaining`, after every chunk's size is checked against the header."""
        raise NotImplementedError

    def _check_chunk(self, index: int, nbytes: int) -> None:
        """Refuse chunk ``index`` if it does not hold ``nbytes`` (before a buffer is made)."""

    def _cache_chunk(self, index: int, start: int, nbytes: int) -> None:
        if self._cache_index == index:
            return
        self._check_chunk(index, nbytes)
        if len(self._cache) < nbytes:
            self._cache = _allocate(nbytes, self.name)
        self._cache_index = -1
        self._decode(index, memoryview(self._cache)[:nbytes])
        self._cache_index, self._cache_start, self._cache_len = index, start, nbytes

    def piece(self, position: int, limit: int = -1, line: bool = False) -> memoryview:
        """Decoded bytes from ``position`` within its chunk: at most ``limit`` (all if
        negative), up to and including a newline if ``line``; empty at the end."""
        found = self._find(position)
        if found is None:
            return memoryview(b"")
        self._cache_chunk(*found)
        offset = position - self._cache_start
        end = self._cache_len if limit < 0 else min(self._cache_len, offset + limit)
        if line:
            newline = self._cache.find(b"\n", offset, end)
            end = end if newline < 0 else newline + 1
        return memoryview(self._cache)[offset:end]

    def readinto(self, position: int, out: memoryview, single_chunk: bool = False) -> int:
        """Decode bytes from ``position`` into ``out``; return how many."""
        filled = 0
        while filled < len(out):
            found = self._find(position + filled)
            if found is None:
                break
            index, start, nbytes = found
            offset = position + filled - start
            n = min(nbytes - offset, len(out) - filled)
            if offset == 0 and n == nbytes and index != self._cache_index:
                self._decode(index, out[filled : filled + n])  # no copy
            else:
                self._cache_chunk(index, start, nbytes)
                out[filled : filled + n] = memoryview(self._cache)[offset : offset + n]
            filled += n
            if single_chunk:
                break
        return filled

    def close(self) -> None:
        self._cache = bytearray()
        self._cache_index = -1


class _RandomReader(_Reader):
    """Random access through a :class:`BloscpackReader`."""

    def __init__(self, reader: BloscpackReader) -> None:
        super().__init__()
        self.reader = reader
        self.name = reader.name
        header = reader.header
        self._uniform = (
            header.offsets
            and header.nchunks > 0
            and header.chunk_size > 0
            and 0 <= header.last_chunk <= header.chunk_size
        )
        self._starts: list[int] | None = None
        self._sizes: list[int] = []
        if self._uniform:
            self.size = header.chunk_size * (header.nchunks - 1) + header.last_chunk
        else:
            self.size = -1  # known after the chunk headers are walked

    @property
    def metadata(self) -> Any:
        return self.reader.metadata

    def _table(self) -> list[int]:
        """Start positions of the chunks, from one walk over their headers."""
        if self._starts is None:
            total = self.reader.check_sizes()
            self._sizes = [loc.nbytes for loc in self.reader.locations()]
            starts, position = [], 0
            for nbytes in self._sizes:
                starts.append(position)
                position += nbytes
            self._starts, self.size = starts, total
        return self._starts

    def remaining(self, position: int) -> int:
        if self.size < 0:
            self._table()
        return max(0, self.size - position)

    def checked_remaining(self, position: int) -> int:
        self._table()
        return self.remaining(position)

    def _find(self, position: int) -> tuple[int, int, int] | None:
        if self._uniform:
            if position >= self.size:
                return None
            header = self.reader.header
            index = position // header.chunk_size
            last = index == header.nchunks - 1
            return (
                index,
                index * header.chunk_size,
                header.last_chunk if last else header.chunk_size,
            )
        starts = self._table()
        if position >= self.size:
            return None
        index = bisect.bisect_right(starts, position) - 1
        while self._sizes[index] == 0:  # empty chunks hold no position
            index += 1
        return index, starts[index], self._sizes[index]

    def _check_chunk(self, index: int, nbytes: int) -> None:
        location = self.reader.locate(index)
        if location.nbytes != nbytes:
            raise IntegrityError(
                f"{self.name}: chunk {index} holds {location.nbytes} bytes, the header prescribes"
                f" {nbytes} (chunk_size {self.reader.header.chunk_size},"
                f" last_chunk {self.reader.header.last_chunk})"
            )

    def _decode(self, index: int, out: memoryview) -> None:
        self._check_chunk(index, len(out))
        self.reader.decompress_chunk_into(index, out)

    def close(self) -> None:
        super().close()
        self.reader.close()


class _StreamReader(_Reader):
    """Sequential reading from a non-seekable binary stream (a pipe)."""

    def __init__(self, fp: IO[bytes], name: str) -> None:
        super().__init__()
        self.fp, self.name = fp, name
        self.reader = BloscpackReader(ByteSource(_read_preamble(fp, name), name=name))
        self.nchunks = self.reader.header.nchunks
        self._next_index = 0
        self._short_chunk: int | None = None  # a chunk shorter than chunk_size (nchunks -1)
        self._short_nbytes = 0
        self._end = 0  # position after the last chunk read
        self._eof = False
        self._current: tuple[int, int, int] | None = None  # (index, start, nbytes)
        self._raw: memoryview | None = None  # the current chunk, until it is decoded

    @property
    def metadata(self) -> Any:
        return self.reader.metadata

    def remaining(self, position: int) -> None:
        return None

    def _find(self, position: int) -> tuple[int, int, int] | None:
        current = self._current
        if current is not None and position < current[1] + current[2]:
            if position < current[1]:
                raise io.UnsupportedOperation(f"{self.name}: cannot go back in a stream")
            return current
        while not self._eof:
            chunk = self._next_chunk()
            if chunk is None:
                break
            header, self._raw = chunk
            index, start = self._next_index, self._end
            self._next_index += 1
            self._end += header.nbytes
            if header.nbytes and position < self._end:
                self._current = (index, start, header.nbytes)
                return self._current
        return None

    def _decode(self, index: int, out: memoryview) -> None:
        if self._raw is None or self._current is None or self._current[0] != index:
            raise io.UnsupportedOperation(f"{self.name}: cannot go back in a stream")
        try:
            n = engine.decompress_into(self._raw, out)
        except BloscpackError as exc:
            raise type(exc)(f"{self.name}: chunk {index}: {exc}") from None
        if n != len(out):
            raise IntegrityError(f"{self.name}: chunk {index} decoded to {n} bytes, not {len(out)}")
        self._raw = None

    def _next_chunk(self) -> tuple[ChunkHeader, memoryview] | None:
        index = self._next_index
        if index == self.nchunks:
            self._eof = True
            return None
        head = _read_stream(self.fp, BLOSC1_HEADER_SIZE, self.name, f"chunk {index}", eof_ok=True)
        if not head:
            if self.nchunks != -1:
                raise TruncatedError(
                    f"{self.name}: the stream ended after {index} of {self.nchunks} chunks"
                )
            self._eof = True
            return None
        if head[0] >= 3 and head[2] & EXTENDED_MARK == EXTENDED_MARK:
            head += _read_stream(self.fp, BLOSC2_HEADER_SIZE - len(head), self.name, "chunk")
        try:
            header = ChunkHeader.parse(head)
        except BloscpackError as exc:
            raise type(exc)(f"{self.name}: chunk {index}: {exc}") from None
        if header.cbytes < len(head):
            raise ChunkError(
                f"{self.name}: chunk {index}: cbytes {header.cbytes} is smaller than its header"
            )
        self._check_nbytes(index, header.nbytes)
        what = f"the rest of chunk {index} ({header.cbytes} bytes)"
        head += _read_stream(self.fp, header.cbytes - len(head), self.name, what)
        checksum = self.reader.checksum
        digest = _read_stream(self.fp, checksum.size, self.name, f"chunk {index} digest")
        if checksum.size and checksum(head) != digest:
            raise ChecksumMismatch(
                f"{self.name}: Checksum mismatch detected in chunk {index} ({checksum.name}),"
                f" expected: {bytes(digest)!r}, received: {checksum(head)!r}"
            )
        return header, memoryview(head)

    def _check_nbytes(self, index: int, nbytes: int) -> None:
        """The header's sizes; in a stream of unknown length only the last chunk may be
        shorter than ``chunk_size``."""
        header = self.reader.header
        if self.nchunks != -1:
            expected = self.reader.expected_nbytes(index, self.nchunks)
        elif self._short_chunk is not None:  # a chunk follows a short one
            index, nbytes, expected = self._short_chunk, self._short_nbytes, header.chunk_size
        else:
            expected = None
        too_big = header.chunk_size != -1 and nbytes > header.chunk_size
        if too_big or (expected is not None and nbytes != expected):
            raise IntegrityError(
                f"{self.name}: chunk {index} holds {nbytes} bytes, the header prescribes"
                f" {expected if expected is not None else header.chunk_size}"
                f" (chunk_size {header.chunk_size}, last_chunk {header.last_chunk})"
            )
        if self.nchunks == -1 and nbytes != header.chunk_size:
            self._short_chunk, self._short_nbytes = index, nbytes

    def close(self) -> None:
        super().close()
        self.reader.close()


def _read_stream(
    fp: IO[bytes], n: int, name: str, what: str, *, eof_ok: bool = False, short_ok: bool = False
) -> bytearray:
    """Exactly ``n`` bytes from a stream, read in bounded pieces so that a size taken from the
    input costs no more memory than the input really has.  At the end of the stream: an empty
    result if ``eof_ok``, what arrived if ``short_ok``."""
    data = bytearray()
    while len(data) < n:
        piece = fp.read(min(n - len(data), _STREAM_PIECE))
        if not piece:
            if short_ok or (eof_ok and not data):
                return data
            raise TruncatedError(
                f"{name}: {what} needs {n} bytes, but the stream ended after {len(data)}"
            )
        data += piece
    return data


def _read_preamble(fp: IO[bytes], name: str) -> bytearray:
    """Header, metadata section and offsets section of a container read from a stream."""
    preamble = _read_stream(fp, BLOSCPACK_HEADER_LENGTH, name, "bloscpack header", short_ok=True)
    if len(preamble) < BLOSCPACK_HEADER_LENGTH or not sniff(bytes(preamble[:4])):
        Preamble(ByteSource(preamble, name=name))  # raises the reader's error
    try:
        header = BloscpackHeader.decode(preamble)
    except BloscpackError as exc:
        raise type(exc)(f"{name}: {exc}") from None
    if header.metadata:
        preamble += _read_stream(fp, METADATA_HEADER_LENGTH, name, "metadata header")
        try:
            meta_header = MetadataHeader.decode(preamble[BLOSCPACK_HEADER_LENGTH:])
        except BloscpackError as exc:
            raise type(exc)(f"{name}: {exc}") from None
        rest = metadata_section_length(meta_header) - METADATA_HEADER_LENGTH
        preamble += _read_stream(fp, rest, name, "metadata section")
    if header.offsets and header.nchunks >= 0:
        slots = header.nchunks + header.max_app_chunks
        preamble += _read_stream(fp, 8 * slots, name, "offsets section")
    return preamble


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


def _file_object_source(fp: IO[bytes], name: str) -> ByteSource | None:
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


#: A :meth:`BloscFile.read` larger than this first checks every chunk's size against the header
#: (cheap next to decoding that much), as a read of an array does.
_CHECKED_READ = 16 << 20


def _allocate(nbytes: int, name: str) -> bytearray:
    try:
        return bytearray(nbytes)
    except MemoryError:
        raise IntegrityError(f"{name}: cannot allocate the {nbytes} bytes a chunk claims") from None


# --- write side ---------------------------------------------------------------------------


class _WriteOptions:
    """The options of a write or append, checked before anything is written."""

    def __init__(
        self,
        chunk_size: int | str | None,
        blosc_args: BloscArgs | Mapping[str, Any] | None,
        bloscpack_args: BloscpackArgs | Mapping[str, Any] | None,
        metadata: Any,
        metadata_args: MetadataArgs | Mapping[str, Any] | None,
        given: dict[str, Any],
    ) -> None:
        given = dict(given)
        codec = given.pop("codec", None)
        if codec is not None:
            if given.get("cname", codec) != codec:
                raise ArgumentError(f"cname {given['cname']!r} and codec {codec!r} disagree")
            given["cname"] = codec
        self.given_chunk_size = chunk_size
        self.given_blosc = {k: v for k, v in dict(blosc_args or {}).items() if v is not None}
        self.given_blosc.update({k: given[k] for k in _BLOSC_OPTIONS if k in given})
        self.given_container = {k: given[k] for k in _BLOSCPACK_OPTIONS if k in given}
        self.bloscpack_args = bloscpack_args
        self.metadata = metadata
        self.metadata_args = metadata_args
        self.blosc_args = BloscArgs(**self.given_blosc)
        check_blosc_args(self.blosc_args)
        self.chunk_size = parse_chunk_size(DEFAULT_CHUNK_SIZE if chunk_size is None else chunk_size)
        container = dict(bloscpack_args or BloscpackArgs())
        container.update(self.given_container)
        self.container = BloscpackArgs(**container)
        check_valid_checksum(self.container.checksum)
        handle_max_app_chunks(bool(self.container.offsets), 1, self.container.max_app_chunks)
        self.metadata_args_object = (
            metadata_args
            if metadata_args is None or isinstance(metadata_args, MetadataArgs)
            else MetadataArgs(**dict(metadata_args))
        )
        if metadata is not None:
            encode_metadata_section(metadata, self.metadata_args_object)

    def check_append(self) -> None:
        """Raise if an option that an existing file fixes was given for an append."""
        fixed = [
            name
            for name, value in [
                ("chunk_size", self.given_chunk_size),
                ("bloscpack_args", self.bloscpack_args),
                ("metadata_args", self.metadata_args),
                *self.given_container.items(),
            ]
            if value is not None
        ]
        if fixed:
            raise ArgumentError(
                f"{', '.join(fixed)} cannot change when appending to an existing file"
            )


class _ContainerSink:
    """Compresses full chunks as they fill and writes a new container on :meth:`finish`."""

    def __init__(
        self, path: str | None, fp: IO[bytes] | None, options: _WriteOptions, name: str
    ) -> None:
        self.options = options
        self.name = name
        self._stack = contextlib.ExitStack()
        self._pending = bytearray()
        self._total = 0
        self._chunk_sizes: list[int] = []
        self._writer: BloscpackWriter | None = None
        self._spool: IO[bytes] | None = None
        try:
            self._open(path, fp)
        except BaseException:
            self._stack.__exit__(*sys.exc_info())
            raise

    def _open(self, path: str | None, fp: IO[bytes] | None) -> None:
        if path is None:
            assert fp is not None
            self._target = fp
        else:
            self._target = self._stack.enter_context(atomic_write(path))
        self._streaming = not seekable(self._target)
        self._start = 0 if self._streaming else self._target.tell()
        if self._streaming:
            self._writer = self._new_writer(
                chunk_size=self.options.chunk_size, last_chunk=-1, nchunks=-1, offsets=False
            )
        else:
            directory = None if path is None else os.path.dirname(os.path.abspath(path))
            self._spool = self._stack.enter_context(
                tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY, dir=directory)  # noqa: SIM115
            )

    def _new_writer(
        self, *, chunk_size: int, last_chunk: int, nchunks: int, offsets: bool
    ) -> BloscpackWriter:
        container = self.options.container
        return BloscpackWriter(
            self._target,
            chunk_size=chunk_size,
            last_chunk=last_chunk,
            nchunks=nchunks,
            typesize=header_typesize(self.options.blosc_args.typesize),
            checksum=container.checksum,
            offsets=offsets,
            max_app_chunks=container.max_app_chunks,
            metadata=self.options.metadata,
            metadata_args=self.options.metadata_args_object,
        )

    def write(self, data: memoryview) -> None:
        chunk_size = self.options.chunk_size
        if self._pending:
            take = min(chunk_size - len(self._pending), len(data))
            self._pending += data[:take]
            data = data[take:]
            if len(self._pending) == chunk_size:
                self._emit(self._pending)
                self._pending = bytearray()
        while len(data) >= chunk_size:
            self._emit(data[:chunk_size])
            data = data[chunk_size:]
        if len(data):
            self._pending += data

    def _emit(self, data: Buffer) -> None:
        chunk = compress_chunk(data, self.options.blosc_args)
        self._total += len(data)
        if self._writer is not None:
            self._writer.write_chunk(chunk)
        else:
            assert self._spool is not None
            self._spool.write(chunk)
            self._chunk_sizes.append(len(chunk))

    def flush(self) -> None:
        if self._streaming:
            self._target.flush()

    def finish(self) -> None:
        """Compress what is left and write the container; commit a path output."""
        try:
            if self._pending or not (self._chunk_sizes or self._total):
                self._emit(self._pending)
                self._pending = bytearray()
            if self._writer is None:
                self._write_container()
            else:
                self._writer.close()
            self._target.flush()
        except BaseException:
            self._stack.__exit__(*sys.exc_info())
            raise
        self._stack.close()

    def _write_container(self) -> None:
        assert self._spool is not None
        nchunks, chunk_size, last_chunk = calculate_nchunks(self._total, self.options.chunk_size)
        if nchunks != len(self._chunk_sizes):
            raise AssertionError(f"{len(self._chunk_sizes)} chunks written, {nchunks} expected")
        self._target.seek(self._start)
        writer = self._new_writer(
            chunk_size=chunk_size,
            last_chunk=last_chunk,
            nchunks=nchunks,
            offsets=self.options.container.offsets,
        )
        self._spool.seek(0)
        buffer = bytearray(max(self._chunk_sizes))
        for size in self._chunk_sizes:
            view = memoryview(buffer)[:size]
            if self._spool.readinto(view) != size:  # type: ignore[attr-defined]
                raise TruncatedError(f"{self.name}: the spooled chunks were cut short")
            writer.write_chunk(view)
        writer.close()

    def abort(self) -> None:
        """Discard everything: a path output is not created (an existing file is kept)."""
        try:
            raise _Aborted(f"{self.name}: writing was abandoned")
        except _Aborted:
            self._stack.__exit__(*sys.exc_info())


class _AppendSink:
    """Collects bytes and appends them to an existing container in one crash-safe step."""

    def __init__(
        self, path: str | None, fp: IO[bytes] | None, options: _WriteOptions, name: str
    ) -> None:
        self.path, self.fp, self.options, self.name = path, fp, options, name
        target = fp if fp is not None else None
        if path is not None:
            recover(path)
            with BloscpackReader(path):  # fail now, not at close, if it is not a container
                pass
        elif target is not None:
            position = target.tell()
            head = target.read(4)
            target.seek(position)
            if not sniff(head):
                Preamble(ByteSource(head, name=name))  # raises the reader's error
        directory = os.path.dirname(os.path.abspath(path)) if path is not None else None
        # closed by finish() or abort()
        self._spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY, dir=directory)  # noqa: SIM115
        self._size = 0

    def write(self, data: memoryview) -> None:
        self._spool.write(data)
        self._size += len(data)

    def flush(self) -> None:
        pass

    def finish(self) -> None:
        """Append the collected bytes (and replace the metadata, if given)."""
        try:
            if self._size or self.options.metadata is not None:
                self._spool.seek(0)
                blosc_args = self.options.given_blosc or None
                metadata = self.options.metadata
                if self.fp is not None:
                    append_fp(self.fp, self._spool, self._size, blosc_args, metadata=metadata)
                else:
                    assert self.path is not None
                    with open(self.path, "r+b") as fp:
                        append_fp(fp, self._spool, self._size, blosc_args, metadata=metadata)
        finally:
            self._spool.close()

    def abort(self) -> None:
        """Discard the collected bytes; the file is left as it was."""
        self._spool.close()


class _Aborted(Exception):
    """Raised into an output's context to discard it."""


#: :func:`compress_file` reads a stream a whole chunk at a time (compressed straight from the
#: buffer) up to this chunk size, 1 MiB at a time above it.
_WHOLE_CHUNK_READS = 16 << 20


def compress_file(
    src: PathLike | IO[bytes],
    dst: PathLike | IO[bytes],
    *,
    chunk_size: str | int = DEFAULT_CHUNK_SIZE,
    typesize: int = DEFAULT_TYPESIZE,
    clevel: int = DEFAULT_CLEVEL,
    shuffle: bool | int = DEFAULT_SHUFFLE,
    cname: str | None = None,
    codec: str | None = None,
    checksum: str = DEFAULT_CHECKSUM,
    offsets: bool = True,
    max_app_chunks: Any = None,
    blosc_version: int = 1,
    filters: Any = None,
    filters_meta: Any = None,
    use_dict: bool = False,
    blocksize: int = 0,
    metadata: Any = None,
    metadata_args: MetadataArgs | Mapping[str, Any] | None = None,
) -> None:
    """The bytes of ``src`` into a new ``.blp`` container at ``dst``, compressed chunk by chunk
    as they are read (memory stays flat).  ``src`` is a path or a binary stream read to its
    end: a ``.npy`` file is stored as its array (0.16's numpy metadata, plus the ``metadata``
    mapping), a file of known size as bloscpack 0.16's ``pack_file_to_file`` writes it
    (offsets with room for appends), anything else as :class:`BloscFile` writes a stream.
    ``dst`` is a path (replaced atomically) or a binary stream written at its position (one
    that cannot seek gets no offsets section).  Every option is checked before anything is
    read; they mean what they mean for :func:`save_blp`, ``typesize`` being the item size of
    the bytes."""
    given = {
        "typesize": typesize, "clevel": clevel, "shuffle": shuffle, "cname": cname,
        "codec": codec, "checksum": checksum, "offsets": offsets,
        "max_app_chunks": max_app_chunks, "blosc_version": blosc_version, "filters": filters,
        "filters_meta": filters_meta, "use_dict": use_dict, "blocksize": blocksize,
    }  # fmt: skip
    given = {name: value for name, value in given.items() if value is not None}
    path = os.fspath(src) if isinstance(src, (str, os.PathLike)) else None
    npy = path is not None and path.endswith(".npy")
    user = check_user_metadata(metadata) if npy else None
    write = _WriteOptions(chunk_size, None, None, None if npy else metadata, metadata_args, given)
    container = BloscpackArgs(**dict(write.container))
    streamed = not isinstance(dst, (str, os.PathLike)) and not seekable(dst)
    container.offsets = container.offsets and not streamed
    if path is not None and npy:
        pack_npy_file(path, dst, chunk_size, write.blosc_args, container,
                      write.metadata_args_object, user)  # fmt: skip
        return
    if path is not None and not is_stream(path):
        with ByteSource(path) as probe:  # raises FileNotFound naming the path
            size = probe.size()
        with open(path, "rb") as fp:
            chunks = file_chunks(fp, path)
            write_file(dst, lambda out: pack(chunks, size, out, chunk_size, metadata,
                                             write.blosc_args, container,
                                             write.metadata_args_object))  # fmt: skip
        return
    with contextlib.ExitStack() as stack:
        stream: Any = src if path is None else stack.enter_context(open(path, "rb"))
        blp = stack.enter_context(BloscFile(dst, "wb", chunk_size=chunk_size, metadata=metadata,
                                            metadata_args=metadata_args, **given))  # fmt: skip
        piece = write.chunk_size if write.chunk_size <= _WHOLE_CHUNK_READS else 1 << 20
        buffer = memoryview(bytearray(piece))
        while n := stream.readinto(buffer):
            blp.write(buffer[:n])



def write_stored(source: Any, out: IO[bytes], progress: Any = None,
                 piece: int = 1 << 20) -> Any:  # fmt: skip
    """Write the decompressed data of a ``.blp`` container to ``out``, chunk by chunk, as
    stored; return its metadata.  ``source`` is a path or a readable binary stream (read in
    order, every chunk's checksum verified, ``piece`` bytes at a time); ``progress(n)`` is told
    the bytes written."""
    if isinstance(source, (str, os.PathLike)):
        with reading(source) as reader:
            for data in reader.iter_decompressed():
                out.write(data)
                if progress is not None:
                    progress(len(data))
            return reader.metadata
    with BloscFile(source, "rb") as blp:
        metadata = blp.metadata
        buffer = memoryview(bytearray(piece))
        while True:
            n = blp.readinto(buffer)
            if not n:
                return metadata
            out.write(buffer[:n])
            if progress is not None:
                progress(n)

__all__ = ["BloscFile", "compress_file", "open_file", "write_stored"]
