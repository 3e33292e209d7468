"""Reading a ``.blp`` file: :class:`BloscpackReader` reads through a
:class:`~bloscpack.io.sources.ByteSource` (a memory map for files): every size and position is
checked against the input before it is used, chunks are located through the offsets when present,
and each chunk's digest is verified when it is read.  :class:`BlpReader` is the same file through
the container protocol.
"""

from __future__ import annotations

import contextlib
import operator
import os
from collections.abc import Iterator, Sequence
from itertools import repeat
from typing import Any, NamedTuple

import numpy as np

from ... import engine
from ... import ndarray as nd
from ...blosc import partial
from ...blosc.header import (
    BLOSC1_HEADER_SIZE,
    BLOSC2_HEADER_SIZE,
    BLOSC2_VL_VERSION,
    EXTENDED_MARK,
    MAX_BUFFERSIZE,
    ChunkHeader,
)
from ...blosc.layout import validate_chunk
from ...errors import (
    BloscpackError,
    ChecksumMismatch,
    ChunkError,
    FormatError,
    IntegrityError,
    TruncatedError,
)
from ...io.paths import PathLike
from ...io.sources import ByteSource, consistent_read
from ...journal import recover
from ..base import (
    ArrayDescription,
    ChunkSizes,
    ChunkSpan,
    Compression,
    ReaderBase,
    StoredMetadata,
)
from .checksums import Hash
from .header import BloscpackHeader
from .order import OrderRecord, read_record
from .preamble import OFFSET, Preamble, decode_metadata, outside_error

Buffer = Any  # any object exporting the buffer protocol
SourceLike = ByteSource | PathLike | bytes | bytearray | memoryview
CHUNK_HEADER_PEEK = 32  # enough for a Blosc1 (16 B) or Blosc2 (32 B) chunk header
_MIN_CHUNK = 16


#: The most a Blosc chunk adds to the bytes it holds (a Blosc2 header: its data memcpyed).
_MAX_OVERHEAD = 32
#: What is prefetched of a remote chunk whose size nothing bounds (``chunk_size`` -1); a
#: larger chunk is read on when located.
_PREFETCH_GUESS = 1 << 20


class ChunkLocation(NamedTuple):
    """Where chunk ``index`` is stored and what its Blosc header says."""

    index: int  # type: ignore[assignment]  # the field hides tuple.index
    offset: int  # position of the chunk's Blosc header
    cbytes: int  # stored (compressed) size, digest excluded
    nbytes: int  # uncompressed size
    digest_size: int

    @property
    def digest_offset(self) -> int:
        """Position of the chunk's digest."""
        return self.offset + self.cbytes

    @property
    def end(self) -> int:
        """Position right after the chunk's digest."""
        return self.offset + self.cbytes + self.digest_size


class BloscpackReader:
    """Random and sequential access to a ``.blp`` container.

    ``source`` is a path, a bytes-like object or a :class:`~bloscpack.io.sources.ByteSource`.
    Opening parses and checks the header, the metadata section (digest verified) and the
    offsets; chunks are located lazily.  Attributes: ``header``, ``metadata_header`` (or None),
    ``metadata_offset`` (32, or None), ``offsets_offset``, ``chunks_start``, ``offsets`` (the
    first ``nchunks`` entries; empty without an offsets section), ``checksum``, ``size``.
    Chunk locations are checked against the input before any chunk is read: one chunk's when
    it is located (:meth:`locate`), all of them at once by :meth:`locations`.
    """

    def __init__(self, source: SourceLike, *, verify_metadata: bool = True) -> None:
        self._owns_source = not isinstance(source, ByteSource)
        if not isinstance(source, (ByteSource, bytes, bytearray, memoryview)):
            recover(source)
        self.source = source if isinstance(source, ByteSource) else ByteSource(source)
        try:
            self._open(verify_metadata)
        except BaseException:
            self.close()
            raise

    @consistent_read
    def _open(self, verify_metadata: bool) -> None:
        preamble = Preamble(self.source, verify_metadata=verify_metadata)
        self.name, self.size = preamble.name, preamble.size
        self.header = preamble.header
        self.checksum: Hash = preamble.checksum
        self.metadata_header = preamble.metadata_header
        self.metadata_offset = preamble.metadata_offset
        self.metadata_digest_ok = preamble.metadata_digest_ok
        self._stored_metadata = preamble.stored_metadata
        self.offsets_offset = preamble.offsets_offset
        self._offsets = preamble.offsets
        self.slots = preamble.slots
        self.chunks_start = preamble.chunks_start
        self._locations: list[ChunkLocation] | None = None
        self._located: dict[int, ChunkLocation] = {}
        self._table: _ChunkTable | None = None
        self._order: list[bytes] | None | bool = False  # the order record's tags, once read
        #: Whether verified chunk reads check the order record: a local file's end is read
        #: with its head, a URL's would cost a request (``verify`` checks it everywhere).
        self.check_order = not self.source.remote

    @property
    def offsets(self) -> list[int]:
        """The first ``nchunks`` entries of the offsets section (empty without one), as read:
        each is checked when its chunk is located."""
        return self._offsets.tolist()  # type: ignore[no-any-return]

    # --- metadata --------------------------------------------------------------------------

    @property
    def metadata(self) -> Any:
        """The decoded metadata (None if the file has none)."""
        if self.metadata_header is None or self._stored_metadata is None:
            return None
        if not hasattr(self, "_metadata"):
            with self.source.consistent():
                stored = self._stored_metadata
                self._metadata = decode_metadata(self.metadata_header, stored, self.name)
        return self._metadata

    @consistent_read
    def unused_offsets(self) -> list[int]:
        """The preallocated offset slots after the first ``nchunks`` (normally all -1)."""
        start = self.offsets_offset + 8 * len(self._offsets)
        count = self.slots - len(self._offsets)
        return [v for (v,) in OFFSET.iter_unpack(self.source.read(start, 8 * count, "offsets"))]

    # --- chunk locations -------------------------------------------------------------------

    @property
    def nchunks(self) -> int:
        """Number of chunks (counted by walking the chunks when the header says -1)."""
        if self.header.nchunks != -1:
            self._check_nchunks_fit()
            return self.header.nchunks
        return len(self.locations())

    def _check_nchunks_fit(self) -> None:
        """Raise unless the chunks the header announces can fit in the input (each takes at
        least a Blosc header and a digest)."""
        nchunks = self.header.nchunks
        per_chunk = _MIN_CHUNK + self.checksum.size
        if nchunks > (self.size - self.chunks_start) // per_chunk:
            raise TruncatedError(
                f"{self.name}: the header announces {nchunks} chunks, but the"
                f" {self.size - self.chunks_start} bytes after offset {self.chunks_start}"
                f" hold at most {(self.size - self.chunks_start) // per_chunk}"
            )

    def _locate_at(self, index: int, offset: int) -> ChunkLocation:
        if not self.chunks_start <= offset <= self.size:
            raise outside_error(self.name, index, offset, self.chunks_start, self.size)
        if offset > self.size - _MIN_CHUNK:
            raise TruncatedError(
                f"{self.name}: chunk {index} at offset {offset}: the input ends at {self.size}"
            )
        raw = self.source.peek(offset, CHUNK_HEADER_PEEK)
        chunk_header = parse_chunk_header(raw, self.name, index, offset)
        cbytes = chunk_header.cbytes
        location = ChunkLocation(index, offset, cbytes, chunk_header.nbytes, self.checksum.size)
        if location.end > self.size:
            raise TruncatedError(
                f"{self.name}: chunk {index} at offset {offset} needs {cbytes} bytes plus a"
                f" {self.checksum.size}-byte digest, but the input has {self.size}"
            )
        if index + 1 < len(self._offsets) and location.end > self._offsets[index + 1]:
            raise FormatError(
                f"{self.name}: chunk {index} at offset {offset} ends at {location.end}, after"
                f" chunk {index + 1} begins (offset {int(self._offsets[index + 1])})"
            )
        return location

    def prefetch(self, indices: Sequence[int]) -> None:
        """Fetch chunks ``indices`` (with their digests) of a remote input at once: each from
        its offset to the next chunk's, at most as far as a chunk of ``chunk_size`` reaches
        (the last one's end is the size the server declares, which may be a lie); nothing for
        a local one or without offsets."""
        offsets = self._offsets
        if not self.source.remote or not len(offsets):
            return
        stored = np.unique(offsets)
        ends = np.append(stored[1:], self.size)
        chunk_size = self.header.chunk_size
        most = chunk_size + _MAX_OVERHEAD if chunk_size >= 0 else _PREFETCH_GUESS
        ranges = []
        for i in indices:
            if 0 <= i < len(offsets):
                at = int(offsets[i])
                end = int(ends[np.searchsorted(stored, at)])
                ranges.append((at, min(end - at, most + self.checksum.size)))
        self.source.prefetch(ranges)

    @consistent_read
    def locate(self, index: int, whole: bool = True) -> ChunkLocation:
        """The location of chunk ``index`` (through the offsets when present: only this
        chunk's header is read and checked; from a remote input, with the rest of the chunk
        unless not ``whole``)."""
        count = len(self._offsets)
        if count:
            if not 0 <= index < count:
                raise IndexError(f"chunk index {index} out of range for {count} chunks")
            if self._locations is None:
                index = operator.index(index)
                location = self._located.get(index)
                if location is None:
                    if whole:  # a remote chunk: its header with the rest
                        self.prefetch([index])
                    location = self._locate_at(index, int(self._offsets[index]))
                    self._located[index] = location
                return location
        locations = self.locations()
        if not 0 <= index < len(locations):
            raise IndexError(f"chunk index {index} out of range for {len(locations)} chunks")
        return locations[index]

    @consistent_read
    def locations(self) -> list[ChunkLocation]:
        """Locations of all chunks: from the offsets, else by walking the chunk headers
        (until ``nchunks`` or, when it is -1, the end of the input)."""
        if self._locations is None:
            self._locations = self._chunk_table().locations(self.checksum.size)
        return self._locations

    def _chunk_table(self) -> _ChunkTable:
        """Offsets and sizes of all chunks, every location checked against the input."""
        if self._table is None:
            table = self._scan_offsets() if len(self._offsets) else None
            if table is None:  # no offsets, or one is wrong: the per-chunk checks say how
                self._locations = (
                    [self._locate_at(i, o) for i, o in enumerate(self.offsets)]
                    if len(self._offsets)
                    else self._walk_chunks()
                )
                table = _ChunkTable.of(self._locations)
            self._table = table
        return self._table

    def _scan_offsets(self) -> _ChunkTable | None:
        """The locations of all chunks from the offsets, each checked as :meth:`_locate_at`
        checks it but all at once: only the 16 fixed bytes of each chunk's header are read (a
        Blosc2 header's other 16 hold nothing a location needs).  None if any check fails."""
        offsets, size = self._offsets, self.size
        if int(offsets.min()) < self.chunks_start or int(offsets.max()) > size - _MIN_CHUNK:
            return None
        read = self.source.read
        if self.source.remote:  # every chunk header at once
            self.source.prefetch([(o, CHUNK_HEADER_PEEK) for o in offsets.tolist()])
        try:
            raw = b"".join([read(o, _MIN_CHUNK, "chunk header") for o in offsets.tolist()])
        except BloscpackError:  # the file has changed since it was opened
            return None
        heads = np.frombuffer(raw, np.uint8).reshape(-1, _MIN_CHUNK)
        fields = heads.view("<i4")  # version/flags/typesize bytes, nbytes, blocksize, cbytes
        version, flags = heads[:, 0], heads[:, 2]
        nbytes, cbytes = fields[:, 1].astype(np.int64), fields[:, 3].astype(np.int64)
        extended = ((flags & EXTENDED_MARK) == EXTENDED_MARK) & (version >= 3)
        header_size = np.where(extended, BLOSC2_HEADER_SIZE, BLOSC1_HEADER_SIZE)
        valid = (
            (version >= 1) & (version <= BLOSC2_VL_VERSION)
            & (nbytes >= 0) & (nbytes <= MAX_BUFFERSIZE) & (cbytes >= header_size)
            & (offsets + cbytes <= size - self.checksum.size)
        )  # fmt: skip
        valid[:-1] &= offsets[:-1] + cbytes[:-1] + self.checksum.size <= offsets[1:]
        return _ChunkTable(offsets, cbytes, nbytes) if bool(valid.all()) else None

    def _walk_chunks(self) -> list[ChunkLocation]:
        nchunks = self.header.nchunks
        self._check_nchunks_fit()
        locations: list[ChunkLocation] = []
        pos = self.chunks_start
        while len(locations) != nchunks and (nchunks != -1 or pos < self.size):
            location = self._locate_at(len(locations), pos)
            locations.append(location)
            pos = location.end
        return locations

    @property
    def data_end(self) -> int:
        """Position right after the last chunk's digest (what follows is stale bytes)."""
        table = self._chunk_table()
        if not len(table.offsets):
            return self.chunks_start
        return int((table.offsets + table.cbytes).max()) + self.checksum.size

    @consistent_read
    def check_sizes(self) -> int:
        """Check every chunk's uncompressed size against the header; return the total."""
        nbytes = self._chunk_table().nbytes
        header = self.header
        wrong = np.zeros(len(nbytes), bool)
        if header.chunk_size != -1:
            wrong[:-1] = nbytes[:-1] != header.chunk_size
            wrong |= nbytes > header.chunk_size
        if len(nbytes) and header.nchunks != -1 and header.last_chunk != -1:
            wrong[-1] |= nbytes[-1] != header.last_chunk
        if not wrong.any():
            return int(nbytes.sum())
        return self._check_each_size()

    def _check_each_size(self) -> int:
        """:meth:`check_sizes` one chunk at a time: it names the first wrong chunk."""
        locations = self.locations()
        total = 0
        for loc in locations:
            expected = self.header.expected_nbytes(loc.index, len(locations))
            check_chunk_nbytes(self.name, self.header, loc.index, loc.nbytes, expected)
            total += loc.nbytes
        return total

    # --- chunk data ------------------------------------------------------------------------

    @consistent_read
    def digest(self, index: int) -> bytes:
        """The stored digest of chunk ``index`` (empty without checksums)."""
        loc = self.locate(index)
        return bytes(self.source.read(loc.digest_offset, loc.digest_size, f"chunk {index} digest"))

    @consistent_read
    def read_chunk(self, index: int, *, verify: bool = True) -> memoryview:
        """The stored Blosc chunk ``index`` (a view into the input), its size checked against
        the header and its digest verified."""
        return self._read_location(self._locate_sized(index), verify)

    def _locate_sized(self, index: int, whole: bool = True) -> ChunkLocation:
        """:meth:`locate`, and the chunk's uncompressed size checked against the header."""
        loc = self.locate(index, whole)
        expected = self.header.expected_nbytes(index, self.nchunks)
        check_chunk_nbytes(self.name, self.header, index, loc.nbytes, expected)
        return loc

    @consistent_read
    def read_chunk_items(self, index: int, lo: int, hi: int) -> memoryview:
        """Chunk ``index`` unverified (its size checked), or when decoding its bytes
        ``[lo, hi)`` needs only some of its blocks, a buffer of its size holding its header,
        bstarts and those blocks' streams (see :mod:`bloscpack.blosc.partial`): what a remote
        input reads."""
        loc = self._locate_sized(index, whole=False)
        part = partial.source_chunk_items(self.source, loc.offset, loc.cbytes, lo, hi,
                                          f"chunk {index}")  # fmt: skip
        return self._read_location(loc, False) if part is None else part

    def _read_location(self, loc: ChunkLocation, verify: bool) -> memoryview:
        chunk = self.source.read(loc.offset, loc.cbytes, f"chunk {loc.index}")
        if verify and loc.digest_size:
            stored = bytes(self.source.read(loc.digest_offset, loc.digest_size, "digest"))
            check_digest(self.checksum, chunk, stored, self.name, loc.index)
            tags = self.order_tags() if self.check_order else None
            if tags is not None and not stored.startswith(tags[loc.index]):
                raise IntegrityError(
                    f"{self.name}: chunk {loc.index} is not where it was written: its digest"
                    " differs from the order record after the last chunk (chunks swapped or"
                    " moved)"
                )
        return chunk

    def order_record(self) -> OrderRecord | None:
        """The order record (:mod:`.order`) at the end of the file, if there is one (and its
        end can be read: a server may claim more bytes than it holds)."""
        if not self.checksum.size:
            return None
        try:
            return read_record(self.source, self.size)
        except BloscpackError:
            return None

    def order_tags(self) -> list[bytes] | None:
        """The tags of the file's order record (each chunk's digest's first bytes), where it
        has an intact one of its current state."""
        if self._order is False:
            record = self.order_record()
            self._order = None
            if (
                record is not None
                and record.tags is not None
                and record.describes(self.nchunks, self.data_end, self.checksum.size)
            ):
                self._order = record.tags
        return self._order  # type: ignore[return-value]

    @consistent_read
    def iter_chunks(self) -> Iterator[tuple[ChunkLocation, memoryview]]:
        """Each chunk's location and verified stored bytes, in order (pages of a file are
        released from memory once the consumer moves on, so memory stays flat)."""
        for loc in self.locations():
            yield loc, self._read_location(loc, True)
            self.source.release(loc.offset, loc.end - loc.offset)

    @consistent_read
    def decompress_chunk_into(self, index: int, out: Buffer) -> int:
        """Decompress chunk ``index`` into the writable buffer ``out``; return bytes written."""
        loc = self.locate(index)
        return decompress_exactly(self._read_location(loc, True), out, loc, self.name)

    @consistent_read
    def read_into(self, out: Buffer) -> int:
        """Decompress the whole payload into ``out`` (exactly its size); return the size."""
        total = self.check_sizes()
        view = memoryview(out).cast("B")
        if view.nbytes != total:
            raise IntegrityError(
                f"{self.name}: the chunks hold {total} bytes, the destination {view.nbytes}"
            )
        locations = self.locations()
        workers = min(engine.get_nthreads(), len(locations))
        if workers <= 1:
            pos = 0
            for loc, chunk in self.iter_chunks():
                pos += decompress_exactly(chunk, view[pos : pos + loc.nbytes], loc, self.name)
            return pos
        self._read_in_parallel(locations, view, workers)
        return total

    def _read_in_parallel(self, locations: list[ChunkLocation], view: memoryview,
                          workers: int) -> None:  # fmt: skip
        """Decode the chunks into ``view`` with ``workers`` threads, each taking the next run
        of consecutive chunks (long runs first, shorter ones towards the end so that the
        threads finish together; long runs fault in new pages faster) and doing all of each
        chunk's work (digest check, validation, decoding with ``nthreads // workers`` C
        threads).  A chunk of the default size is a single Blosc block, which C threads cannot
        share; whole chunks per thread also fault in the new output's pages in parallel.  The
        error raised is that of the first bad chunk, as when reading in order."""
        starts = [0]
        for loc in locations:
            starts.append(starts[-1] + loc.nbytes)
        runs = iter(_runs(len(locations), locations[0].nbytes, workers))
        # Map the input once here, not concurrently in the workers.
        self.source.read(self.chunks_start, self.data_end - self.chunks_start, "chunks")
        c_threads = max(1, engine.get_nthreads() // workers)
        errors: dict[int, BaseException] = {}

        def work(_: int) -> None:
            for first, stop in runs:
                if errors and first > min(errors):
                    return
                # The checks of a whole run first (Python, holding the GIL), then its decoding
                # (C, GIL released): fewer hand-overs of the GIL between the threads.
                checked: list[tuple[ChunkLocation, Buffer]] = []
                problem: BaseException | None = None
                for loc in locations[first:stop]:
                    try:
                        chunk = self._read_location(loc, True)
                        try:
                            validate_chunk(chunk)
                        except BloscpackError as exc:
                            raise _located(exc, self.name, loc) from None
                    except BaseException as exc:
                        problem = exc
                        break
                    checked.append((loc, chunk))
                for loc, chunk in checked:
                    out = view[starts[loc.index] : starts[loc.index + 1]]
                    try:
                        decompress_exactly(chunk, out, loc, self.name, c_threads, validated=True)
                    except BaseException as exc:
                        errors[loc.index] = exc
                        return
                if problem is not None:
                    errors[first + len(checked)] = problem
                    return
                start, end = locations[first].offset, locations[first + len(checked) - 1].end
                if end - start >= _RELEASE_MIN:
                    self.source.release(start, end - start)

        engine.run_workers(work, workers)
        if errors:
            raise errors[min(errors)]

    @consistent_read
    def read_all(self) -> np.ndarray:
        """The whole payload as a new 1-D ``uint8`` array."""
        out = allocate(self.check_sizes(), self.name)
        self.read_into(out)
        return out

    @consistent_read
    def iter_decompressed(self) -> Iterator[memoryview]:
        """Each chunk decompressed, in order, into reused buffers (a view is valid until the
        next one is taken).  Several chunks are decoded at once (one per thread) while the
        consumer handles the one before."""
        self.check_sizes()
        locations = self.locations()
        workers = min(engine.get_nthreads(), len(locations))
        largest = max((loc.nbytes for loc in locations), default=0)
        in_flight = engine.IN_FLIGHT_PER_WORKER * workers if workers > 1 else 0
        buffers = [allocate(largest, self.name).data for _ in range(in_flight + 1)]
        c_threads = max(1, engine.get_nthreads() // max(workers, 1))

        def decode(loc: ChunkLocation) -> memoryview:
            out = buffers[loc.index % len(buffers)][: loc.nbytes]
            chunk = self._read_location(loc, True)
            decompress_exactly(chunk, out, loc, self.name, c_threads)
            self.source.release(loc.offset, loc.end - loc.offset)
            return out

        yield from engine.map_in_order(decode, locations, workers)

    # --- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Release the input (when the reader opened it)."""
        self._stored_metadata = None
        if self._owns_source and hasattr(self, "source"):
            self.source.close()

    def __enter__(self) -> BloscpackReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BlpReader(ReaderBase):
    """A ``.blp`` file through the container protocol: chunks located through its offsets,
    digests checked when a chunk is first read if ``verify`` is set."""

    format = "blp"

    def __init__(self, source: SourceLike, *, verify: bool = True) -> None:
        self.reader = reader = BloscpackReader(source)
        try:
            self.name = reader.name
            self.nchunks = n = reader.nchunks
            self.verify = verify
            self._verified: set[int] = set()
            header = reader.header
            uniform = (
                header.nchunks != -1 and header.chunk_size >= 0
                and 0 <= header.last_chunk <= header.chunk_size
                and (n == 1 or header.last_chunk > 0)
            )  # fmt: skip
            if uniform:
                total = (n - 1) * header.chunk_size + header.last_chunk if n else 0
                self.sizes = ChunkSizes.uniform(header.chunk_size, total)
            else:  # the chunk headers say, once checked against the header (as load does)
                reader.check_sizes()
                self.sizes = ChunkSizes.listed([loc.nbytes for loc in reader.locations()])
            self._metadata = reader.metadata
            self.description = ArrayDescription.from_metadata(self._metadata, self.sizes.total)
        except BaseException:
            reader.close()
            raise

    def check_sizes(self) -> None:
        self.reader.check_sizes()

    def compression(self) -> Compression:
        """The first chunk's codec, from its header alone (a .blp does not record levels)."""
        if not self.nchunks:
            return Compression()
        offset = self.reader.locate(0, whole=False).offset
        header = ChunkHeader.parse(self.reader.source.peek(offset, CHUNK_HEADER_PEEK))
        return Compression(header.codec)

    def prefetch(self, indices: Sequence[int]) -> None:
        self.reader.prefetch(indices)

    @property
    def remote(self) -> bool:
        return self.reader.source.remote

    def stored_chunk_items(self, index: int, lo: int, hi: int) -> memoryview:
        """A remote chunk without a digest to check: only the blocks ``[lo, hi)`` needs;
        else the chunk whole."""
        if self.reader.source.remote and not (self.verify and index not in self._verified):
            return self.reader.read_chunk_items(index, lo, hi)
        return self.stored_chunk(index)

    def stored_chunk(self, index: int) -> memoryview:
        """Chunk ``index``: its size checked against the header and, the first time it is read
        if ``verify`` is set, its digest, with :func:`load`'s messages."""
        check = self.verify and index not in self._verified
        data = self.reader.read_chunk(index, verify=check)
        if check:
            self._verified.add(index)
        return data

    def chunk_place(self, index: int) -> str:
        """``chunk <index> at offset <offset>``, as :func:`load` names a chunk."""
        return f"chunk {index} at offset {self.reader.locate(index, whole=False).offset}"

    def metadata(self) -> Any:
        return self._metadata

    def stored_metadata(self) -> StoredMetadata:
        return StoredMetadata.of_bytes_or_array(self._metadata, "metadata key",
                                                verbatim=self._metadata)  # fmt: skip

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        return self.reader.source.consistent()

    def close(self) -> None:
        self.reader.close()


def open_reader(source: SourceLike, *, verify: bool = True) -> BlpReader:
    """The ``.blp`` file ``source`` (path, bytes or :class:`~bloscpack.io.sources.ByteSource`) as a
    :class:`~bloscpack.containers.base.ContainerReader`."""
    return BlpReader(source, verify=verify)


def scan(blp: BlpReader) -> Iterator[ChunkSpan]:
    """:meth:`~bloscpack.containers.base.ContainerFormat.scan` of a ``.blp`` file: each chunk's
    location, checked against the file as reads check it, and its header (the digest that
    follows a chunk is not part of it)."""
    inner = blp.reader
    with inner.source.consistent():
        located = [(loc, ChunkHeader.parse(inner.source.peek(loc.offset, CHUNK_HEADER_PEEK)))
                   for loc in inner.locations()]  # fmt: skip
    for loc, header in located:
        yield ChunkSpan(loc.index, inner.source.name, loc.offset, loc.cbytes, header)


class _ChunkTable(NamedTuple):
    """Positions, stored sizes and uncompressed sizes of all chunks (int64 arrays)."""

    offsets: np.ndarray
    cbytes: np.ndarray
    nbytes: np.ndarray

    @classmethod
    def of(cls, locations: Sequence[ChunkLocation]) -> _ChunkTable:
        columns = np.array([loc[1:4] for loc in locations], np.int64).reshape(-1, 3).T
        return cls(columns[0], columns[1], columns[2])

    def locations(self, digest_size: int) -> list[ChunkLocation]:
        count = len(self.offsets)
        return list(map(ChunkLocation._make, zip(
            range(count), self.offsets.tolist(), self.cbytes.tolist(), self.nbytes.tolist(),
            repeat(digest_size, count), strict=True,
        )))  # fmt: skip


#: Stored bytes of a run of chunks from which :meth:`BloscpackReader.read_into` releases the
#: run's pages of the input once decoded (each release interrupts the other threads; smaller
#: runs stay mapped, at most 1 MiB each).
_RELEASE_MIN = 1024 * 1024
#: Output bytes a decoding thread takes at a time (consecutive chunks): whole huge pages
#: (2 MiB), so that two threads never fault in the same page of a new array.
_RUN_NBYTES = 4 * 1024 * 1024


def _runs(nchunks: int, chunk_nbytes: int, workers: int) -> list[tuple[int, int]]:
    """``(first, stop)`` runs of chunks for ``workers`` threads: each a ``2 * workers``-th of
    what is left, and at least :data:`_RUN_NBYTES` of output."""
    shortest = max(1, _RUN_NBYTES // max(1, chunk_nbytes))
    runs, first = [], 0
    while first < nchunks:
        stop = min(nchunks, first + max(shortest, (nchunks - first) // (2 * workers)))
        runs.append((first, stop))
        first = stop
    return runs


def allocate(nbytes: int, name: str) -> np.ndarray:
    """A new uninitialised byte array (its pages are first touched by the decoders)."""
    try:
        return np.empty(nbytes, np.uint8)
    except MemoryError:
        raise IntegrityError(
            f"{name}: cannot allocate the {nbytes} bytes the chunks claim"
        ) from None


def decompress_exactly(chunk: Buffer, out: Buffer, loc: ChunkLocation, name: str,
                       nthreads: int | None = None, validated: bool = False) -> int:  # fmt: skip
    """Decompress the chunk at ``loc`` into ``out`` (exactly its size); errors name ``name``
    and the chunk."""
    if memoryview(out).nbytes != loc.nbytes:
        raise IntegrityError(
            f"{name}: chunk {loc.index} holds {loc.nbytes} bytes, its destination"
            f" {memoryview(out).nbytes}"
        )
    try:
        n = engine.decompress_into(chunk, out, validated=validated, nthreads=nthreads)
    except BloscpackError as exc:
        raise _located(exc, name, loc) from None
    if n != loc.nbytes:
        raise IntegrityError(f"{name}: chunk {loc.index} decoded to {n} bytes, not {loc.nbytes}")
    return n


def parse_chunk_header(raw: Buffer, name: str, index: int, offset: int) -> ChunkHeader:
    """The Blosc header of chunk ``index`` at ``offset`` of ``name``, parsed from ``raw`` (its
    first bytes) and checked: ``nbytes`` in range, ``cbytes`` no smaller than the header."""
    try:
        header = ChunkHeader.parse(raw)
    except BloscpackError as exc:
        raise type(exc)(f"{name}: chunk {index} at offset {offset}: {exc}") from None
    if not 0 <= header.nbytes <= MAX_BUFFERSIZE:
        raise ChunkError(
            f"{name}: chunk {index} at offset {offset}: nbytes {header.nbytes} out of range"
        )
    if header.cbytes < header.size:
        raise ChunkError(
            f"{name}: chunk {index} at offset {offset}: cbytes {header.cbytes} is smaller than"
            f" its {header.size}-byte header"
        )
    return header


def check_chunk_nbytes(name: str, header: BloscpackHeader, index: int, nbytes: int,
                       expected: int | None) -> None:  # fmt: skip
    """Refuse chunk ``index`` holding ``nbytes`` unless it is the ``expected`` size (when
    known) and no larger than the ``header``'s chunk size."""
    if expected is not None and nbytes != expected:
        raise IntegrityError(
            f"{name}: chunk {index} holds {nbytes} bytes, the header prescribes {expected}"
            f" (chunk_size {header.chunk_size}, last_chunk {header.last_chunk})"
        )
    if header.chunk_size != -1 and nbytes > header.chunk_size:
        raise IntegrityError(
            f"{name}: chunk {index} holds {nbytes} bytes, more than the chunk_size"
            f" {header.chunk_size}"
        )


def check_digest(checksum: Hash, chunk: Buffer, stored: Buffer, name: str, index: int) -> None:
    """Refuse stored chunk ``index`` unless its digest is ``stored``."""
    computed = checksum(chunk)
    if bytes(stored) != computed:
        raise ChecksumMismatch(
            f"{name}: Checksum mismatch detected in chunk {index} ({checksum.name}),"
            f" expected: {bytes(stored)!r}, received: {computed!r}"
        )


def _located(exc: BloscpackError, name: str, loc: ChunkLocation) -> BloscpackError:
    """``exc`` again, its message starting with the input's name and the chunk's place."""
    return type(exc)(f"{name}: chunk {loc.index} at offset {loc.offset}: {exc}")


@contextlib.contextmanager
def reading(source: SourceLike, *, verify_metadata: bool = True) -> Iterator[BloscpackReader]:
    """A :class:`BloscpackReader` of ``source`` for one whole-file operation: opened and read
    inside one :meth:`~bloscpack.io.sources.ByteSource.consistent` block, so that an append by this
    library (which waits for the block to end) is seen entirely or not at all."""
    with contextlib.ExitStack() as stack:
        if isinstance(source, (str, os.PathLike)):
            recover(source)
            source = stack.enter_context(ByteSource(source))
        if isinstance(source, ByteSource):
            stack.enter_context(source.consistent())
        yield stack.enter_context(BloscpackReader(source, verify_metadata=verify_metadata))


def read_array(reader: BloscpackReader) -> np.ndarray:
    """The numpy array the file ``reader`` reads holds (its numpy metadata says which)."""
    spec = nd.decode_metadata(reader.metadata)
    total = reader.check_sizes()
    if total != spec.nbytes:
        raise IntegrityError(
            f"{reader.name}: the array {spec.shape} of {spec.dtype} needs {spec.nbytes} bytes,"
            f" the chunks hold {total}"
        )
    try:
        array = spec.empty()
    except (MemoryError, ValueError) as exc:
        raise IntegrityError(f"{reader.name}: cannot allocate the array: {exc}") from None
    reader.read_into(nd.byte_view(array))
    return nd.check_text(array, reader.name)


def load(path: SourceLike) -> np.ndarray:
    """The array in the ``.blp`` file ``path``; a file without (complete) numpy metadata comes
    back as its bytes in a ``uint8`` array."""
    with reading(path) as reader:
        if nd.describes_array(reader.metadata):
            return read_array(reader)
        data = np.empty(reader.check_sizes(), dtype=np.uint8)
        reader.read_into(data)
        return data


def read_metadata_section(source: SourceLike) -> Any:
    """The metadata stored in a ``.blp`` file (digest verified), or None if it has none."""
    with reading(source) as reader:
        return reader.metadata
