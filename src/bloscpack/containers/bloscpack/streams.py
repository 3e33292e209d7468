"""The decoded bytes of a ``.blp`` container as one stream, for :class:`~.file.BloscFile`:
random access through the format's reader :class:`~.reader.BlpReader` (:class:`RandomReader`,
which maps positions to its chunks), or chunk by chunk from a stream that cannot seek
(:class:`StreamReader`), one decoded chunk cached.  Neither parses or checks anything itself:
the stream reads its preamble and chunks with the functions of :mod:`.preamble` and
:mod:`.reader`, so an input's defect has the message :func:`~.reader.load` gives (but for
where a stream ends)."""

from __future__ import annotations

import bisect
import io
import itertools
from typing import IO, Any

from ...blosc.header import BLOSC1_HEADER_SIZE, BLOSC2_HEADER_SIZE, EXTENDED_MARK
from ...errors import IntegrityError, TruncatedError
from ...io.sources import ByteSource
from .header import BLOSCPACK_HEADER_LENGTH, METADATA_HEADER_LENGTH, sniff
from .preamble import (
    Preamble,
    decode_header,
    decode_metadata_header,
    metadata_section_length,
)
from .reader import (
    BloscpackReader,
    BlpReader,
    ChunkLocation,
    check_chunk_nbytes,
    check_digest,
    decompress_exactly,
    parse_chunk_header,
)

_STREAM_PIECE = 1 << 20  # a size read from a stream is trusted only as far as bytes arrive


class Reader:
    """Chunks of a container as one stream of bytes, with one decoded chunk cached; its
    header, metadata and checks are those of ``reader``."""

    def __init__(self, reader: BloscpackReader) -> None:
        self.reader = reader
        self.name = reader.name
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

    @property
    def metadata(self) -> Any:
        """The container's metadata (None if it has none)."""
        return self.reader.metadata

    def close(self) -> None:
        self._cache = bytearray()
        self._cache_index = -1
        self.reader.close()


class RandomReader(Reader):
    """Random access through the format's reader, a :class:`~.reader.BlpReader`: its chunk
    sizes map a position to a chunk, its chunk reads check the location and the digest (once
    per chunk), as every other read of the file does."""

    def __init__(self, blp: BlpReader) -> None:
        super().__init__(blp.reader)
        self.blp = blp
        self.size = blp.sizes.total
        each = blp.sizes.each  # None for uniform sizes: a position's chunk is a division
        self._starts = [] if each is None else list(itertools.accumulate(each, initial=0))

    def remaining(self, position: int) -> int:
        return max(0, self.size - position)

    def checked_remaining(self, position: int) -> int:
        self.blp.check_sizes()
        return self.remaining(position)

    def _find(self, position: int) -> tuple[int, int, int] | None:
        if position >= self.size:
            return None
        sizes, nchunks = self.blp.sizes, self.blp.nchunks
        if sizes.every is not None:
            index = position // sizes.every
            return index, index * sizes.every, sizes.of(index, nchunks)
        index = bisect.bisect_right(self._starts, position) - 1
        while sizes.of(index, nchunks) == 0:  # empty chunks hold no position
            index += 1
        return index, self._starts[index], sizes.of(index, nchunks)

    def _check_chunk(self, index: int, nbytes: int) -> None:
        location = self.reader.locate(index)
        check_chunk_nbytes(self.name, self.reader.header, index, location.nbytes, nbytes)

    def _decode(self, index: int, out: memoryview) -> None:
        chunk = self.blp.stored_chunk(index)  # its size checked against the header
        decompress_exactly(chunk, out, self.reader.locate(index), self.name)


class StreamReader(Reader):
    """Sequential reading from a non-seekable binary stream (a pipe)."""

    def __init__(self, fp: IO[bytes], name: str) -> None:
        super().__init__(BloscpackReader(ByteSource(_read_preamble(fp, name), name=name)))
        _ = self.reader.metadata  # decoded now: a defect is refused as the other readers do
        self.fp = fp
        self.nchunks = self.reader.header.nchunks
        self._next_index = 0
        self._short_chunk: int | None = None  # a chunk shorter than chunk_size (nchunks -1)
        self._short_nbytes = 0
        self._end = 0  # position after the last chunk read
        self._offset = self.reader.chunks_start  # where the next chunk starts in the container
        self._eof = False
        self._current: tuple[int, int, int] | None = None  # (index, start, nbytes)
        self._pending: ChunkLocation | None = None  # the current chunk, until it is decoded
        self._pending_chunk = memoryview(b"")

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
            self._pending, self._pending_chunk = chunk
            start, nbytes = self._end, self._pending.nbytes
            self._next_index += 1
            self._end += nbytes
            if nbytes and position < self._end:
                self._current = (self._pending.index, start, nbytes)
                return self._current
        return None

    def _decode(self, index: int, out: memoryview) -> None:
        if self._pending is None or self._pending.index != index:
            raise io.UnsupportedOperation(f"{self.name}: cannot go back in a stream")
        decompress_exactly(self._pending_chunk, out, self._pending, self.name)
        self._pending, self._pending_chunk = None, memoryview(b"")

    def _next_chunk(self) -> tuple[ChunkLocation, memoryview] | None:
        """The next chunk's location and stored bytes (digest verified); None at the end."""
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
        header = parse_chunk_header(head, self.name, index, self._offset)
        self._check_nbytes(index, header.nbytes)
        what = f"the rest of chunk {index} ({header.cbytes} bytes)"
        head += _read_stream(self.fp, header.cbytes - len(head), self.name, what)
        checksum = self.reader.checksum
        digest = _read_stream(self.fp, checksum.size, self.name, f"chunk {index} digest")
        if checksum.size:
            check_digest(checksum, head, digest, self.name, index)
        location = ChunkLocation(index, self._offset, header.cbytes, header.nbytes, checksum.size)
        self._offset = location.end
        return location, memoryview(head)

    def _check_nbytes(self, index: int, nbytes: int) -> None:
        """The header's sizes; in a stream of unknown length only the last chunk may be
        shorter than ``chunk_size``."""
        header = self.reader.header
        if self.nchunks != -1:
            expected = header.expected_nbytes(index, self.nchunks)
        elif self._short_chunk is not None:  # a chunk follows a short one
            index, nbytes, expected = self._short_chunk, self._short_nbytes, header.chunk_size
        else:
            expected = None
        check_chunk_nbytes(self.name, header, index, nbytes, expected)
        if self.nchunks == -1 and nbytes != header.chunk_size:
            self._short_chunk, self._short_nbytes = index, nbytes


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
    header = decode_header(preamble, name)
    if header.metadata:
        preamble += _read_stream(fp, METADATA_HEADER_LENGTH, name, "metadata header")
        meta_header = decode_metadata_header(preamble[BLOSCPACK_HEADER_LENGTH:], name)
        rest = metadata_section_length(meta_header) - METADATA_HEADER_LENGTH
        preamble += _read_stream(fp, rest, name, "metadata section")
    if header.offsets and header.nchunks >= 0:
        slots = header.nchunks + header.max_app_chunks
        preamble += _read_stream(fp, 8 * slots, name, "offsets section")
    return preamble


def _allocate(nbytes: int, name: str) -> bytearray:
    try:
        return bytearray(nbytes)
    except MemoryError:
        raise IntegrityError(f"{name}: cannot allocate the {nbytes} bytes a chunk claims") from None
