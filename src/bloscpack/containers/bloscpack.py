"""The Bloscpack container (``.blp``, format version 3), bytes-compatible with bloscpack 0.16.

Layout: a 32-byte :class:`~bloscpack.headers.BloscpackHeader`, an optional metadata section
(32-byte :class:`~bloscpack.headers.MetadataHeader`, serialized JSON, NUL padding up to
``max_meta_size``, digest), an optional offsets section (``nchunks + max_app_chunks`` int64
file positions, unused slots -1), then the Blosc chunks, each followed by its digest.  Bytes
after the last digest are ignored (0.16's append leaves stale bytes there).

:class:`BloscpackReader` reads through a :class:`~bloscpack.io.ByteSource` (a memory map for
files): every size and position is checked against the input before it is used, chunks are
located through the offsets when present, and each chunk's digest is verified when it is read.
:class:`BloscpackWriter` writes header, metadata section and offsets exactly as 0.16 did.
"""

from __future__ import annotations

import contextlib
import json
import operator
import os
import struct
import zlib
from collections import Counter
from collections.abc import Generator, Iterable, Iterator, Sequence
from itertools import repeat
from typing import IO, Any, NamedTuple

import numpy as np

from .. import engine
from .. import ndarray as nd
from ..args import (
    DEFAULT_CHECKSUM,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_CLEVEL,
    DEFAULT_MAX_APP_CHUNKS,
    DEFAULT_SHUFFLE,
    SERIALIZERS,
    BloscArgs,
    MetadataArgs,
    array_chunk_size,
    calculate_nchunks,
    check_range,
    handle_max_app_chunks,
)
from ..blosc.header import (
    BLOSC1_HEADER_SIZE,
    BLOSC2_HEADER_SIZE,
    BLOSC2_VL_VERSION,
    EXTENDED_MARK,
    FILTER_IDS,
    MAX_BUFFERSIZE,
    ChunkHeader,
    Filter,
)
from ..blosc.layout import validate_chunk
from ..checksums import CHECKSUMS_LOOKUP, Hash, get_checksum
from ..errors import (
    ArgumentError,
    BloscpackError,
    ChecksumLengthMismatch,
    ChecksumMismatch,
    ChunkError,
    FormatError,
    FormatVersionMismatch,
    IntegrityError,
    MetadataSectionTooSmall,
    NoChangeInMetadata,
    NoMetadataFound,
    NoSuchSerializer,
    TruncatedError,
)
from ..headers import (
    BLOSCPACK_HEADER_LENGTH,
    FORMAT_VERSION,
    MAGIC,
    METADATA_HEADER_LENGTH,
    BloscpackHeader,
    MetadataHeader,
    header_typesize,
)
from ..io import ByteSource, PathLike, consistent_read
from ..journal import recover
from .base import NUMPY_KEYS, ArrayDescription, ChunkSizes, ReaderBase, StoredMetadata
from .options import CompressionParams, chunk_nbytes, shuffle_only
from .target import Target, flat_spans, json_user, kept_metalayers, numpy_metadata, take_options

Buffer = Any  # any object exporting the buffer protocol
SourceLike = ByteSource | PathLike | bytes | bytearray | memoryview
_INT64 = struct.Struct("<q")
_CHUNK_HEADER_PEEK = 32  # enough for a Blosc1 (16 B) or Blosc2 (32 B) chunk header
_MIN_CHUNK = 16


def sniff(head: bytes) -> bool:
    """Whether ``head`` (the first bytes of a file) starts a ``.blp`` container."""
    return bytes(head[:4]) == MAGIC


# --- metadata section ---------------------------------------------------------------------


def serialize_metadata(metadata: Any) -> bytes:
    """Metadata as 0.16 serialized it: compact ASCII JSON, keys in insertion order."""
    try:
        return json.dumps(metadata, separators=(",", ":")).encode("ascii")
    except (TypeError, ValueError) as exc:
        raise ArgumentError(f"metadata is not JSON-serializable: {exc}") from None


def encode_metadata_section(
    metadata: Any, metadata_args: MetadataArgs | MetadataHeader | None = None
) -> bytes:
    """The complete metadata section (header, data, padding, digest) for ``metadata``.

    With :class:`~bloscpack.args.MetadataArgs` (default: ``MetadataArgs()``) this is what 0.16
    wrote for a new file.  With the :class:`~bloscpack.headers.MetadataHeader` of an existing
    section it is the in-place replacement 0.16's metadata rewrite produced: same size, magic
    and checksum, zlib level 6 when that helps; :class:`MetadataSectionTooSmall` if it does not
    fit.
    """
    if isinstance(metadata_args, MetadataHeader):
        return replacement_metadata_section(metadata, metadata_args)
    return _encode_section(metadata, (metadata_args or MetadataArgs()).copy())[0]


def replacement_metadata_section(
    metadata: Any,
    old: MetadataHeader,
    checksum: str | None = None,
    codec: str = "zlib",
    level: int = 6,
) -> bytes:
    """A metadata section the size of the existing one described by ``old``, holding
    ``metadata``; ``checksum`` may change only to one with the same digest size."""
    args = MetadataArgs(old.magic_format, old.meta_checksum, codec, level, old.max_meta_size)
    if checksum is not None and checksum != old.meta_checksum:
        new_size = get_checksum(checksum).size
        if new_size != old.checksum_impl.size:
            raise ChecksumLengthMismatch(
                f"checksums {old.meta_checksum!r} and {checksum!r} have different digest sizes"
                f" ({old.checksum_impl.size} and {new_size}): the section cannot change size"
            )
        args.meta_checksum = checksum
    return _encode_section(metadata, args)[0]


def _encode_section(metadata: Any, args: MetadataArgs) -> tuple[bytes, MetadataHeader]:
    args.validate()
    data = serialize_metadata(metadata)
    meta_size = len(data)
    stored = data
    if args.should_compress:
        compressed = zlib.compress(data, args.meta_level)
        if len(compressed) > meta_size:  # 0.16: keep zlib unless strictly longer
            args.nullify_codec()
        else:
            stored = compressed
    max_meta_size = args.effective_max_meta_size(meta_size)
    if len(stored) > max_meta_size:
        raise MetadataSectionTooSmall(
            "metadata section is too small to contain the metadata required:"
            f" {len(stored)} allocated: {max_meta_size}"
        )
    header = MetadataHeader(
        magic_format=args.magic_format,
        meta_checksum=args.meta_checksum,
        meta_codec=args.meta_codec,
        meta_level=args.meta_level,
        meta_size=meta_size,
        max_meta_size=max_meta_size,
        meta_comp_size=len(stored),
    )
    digest = CHECKSUMS_LOOKUP[args.meta_checksum](stored)
    padding = bytes(max_meta_size - len(stored))
    return header.encode() + stored + padding + digest, header


def metadata_section_length(header: MetadataHeader) -> int:
    """Bytes occupied by a metadata section: header, reserved space and digest."""
    return METADATA_HEADER_LENGTH + header.max_meta_size + header.checksum_impl.size


def decode_metadata(header: MetadataHeader, stored: Buffer, name: str = "<bytes>") -> Any:
    """The metadata object from the stored (possibly zlib-compressed) bytes."""
    if header.magic_format not in SERIALIZERS:
        raise NoSuchSerializer(
            f"{name}: metadata serializer {header.magic_format!r} is unknown (only b'JSON')"
        )
    data: Buffer = stored
    if header.meta_codec == "zlib":
        inflater = zlib.decompressobj()
        try:
            data = inflater.decompress(stored, header.meta_size + 1)
        except zlib.error as exc:
            raise FormatError(f"{name}: metadata does not decompress: {exc}") from None
        if len(data) == header.meta_size and not inflater.eof:
            raise FormatError(f"{name}: compressed metadata is cut short")
    if len(data) != header.meta_size:
        raise FormatError(
            f"{name}: metadata is {len(data)} bytes, its header says meta_size {header.meta_size}"
        )
    try:
        return json.loads(bytes(data).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise FormatError(f"{name}: metadata is not valid JSON: {exc}") from None


# --- offsets ------------------------------------------------------------------------------


def encode_offsets(offsets: Sequence[int], slots: int | None = None) -> bytes:
    """The offsets section: ``offsets`` as int64, padded with -1 to ``slots`` entries."""
    slots = len(offsets) if slots is None else slots
    if slots < len(offsets):
        raise ArgumentError(f"{len(offsets)} offsets do not fit in {slots} slots")
    return b"".join(_INT64.pack(o) for o in offsets) + _INT64.pack(-1) * (slots - len(offsets))


# --- reading ------------------------------------------------------------------------------


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

    ``source`` is a path, a bytes-like object or a :class:`~bloscpack.io.ByteSource`.
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
        src = self.source
        self.name = src.name
        self.size = src.size()
        head = bytes(src.read_upto(0, len(MAGIC)))
        if head != MAGIC:
            raise _not_blp(self.name, head)
        raw = src.read(0, BLOSCPACK_HEADER_LENGTH, "bloscpack header")
        try:
            self.header = BloscpackHeader.decode(raw)
        except BloscpackError as exc:
            raise type(exc)(f"{self.name}: {exc}") from None
        if self.header.format_version != FORMAT_VERSION:
            raise FormatVersionMismatch(
                f"{self.name}: format version of file was not '{FORMAT_VERSION}' as expected,"
                f" but '{self.header.format_version}'"
            )
        self.checksum: Hash = self.header.checksum_impl
        pos = BLOSCPACK_HEADER_LENGTH
        self.metadata_header: MetadataHeader | None = None
        self.metadata_offset: int | None = None
        self.metadata_digest_ok: bool | None = None
        self._stored_metadata: memoryview | None = None
        if self.header.metadata:
            pos = self._open_metadata(pos, verify_metadata)
        self.offsets_offset = pos
        self._offsets = _NO_OFFSETS
        self.slots = 0
        if self.header.offsets:
            pos = self._open_offsets(pos)
        self.chunks_start = pos
        self._locations: list[ChunkLocation] | None = None
        self._located: dict[int, ChunkLocation] = {}
        self._table: _ChunkTable | None = None

    def _open_metadata(self, pos: int, verify: bool) -> int:
        raw = self.source.read(pos, METADATA_HEADER_LENGTH, "metadata header")
        try:
            header = MetadataHeader.decode(raw)
        except BloscpackError as exc:
            raise type(exc)(f"{self.name}: {exc}") from None
        if header.meta_comp_size > header.max_meta_size:
            raise FormatError(
                f"{self.name}: metadata meta_comp_size {header.meta_comp_size} exceeds its"
                f" max_meta_size {header.max_meta_size}"
            )
        length = metadata_section_length(header)
        section = self.source.read(pos, length, "metadata section")
        data_end = METADATA_HEADER_LENGTH + header.meta_comp_size
        self._stored_metadata = section[METADATA_HEADER_LENGTH:data_end]
        digest = section[METADATA_HEADER_LENGTH + header.max_meta_size : length]
        computed = header.checksum_impl(self._stored_metadata)
        self.metadata_digest_ok = bytes(digest) == computed
        if verify and not self.metadata_digest_ok:
            raise ChecksumMismatch(
                f"{self.name}: Checksum mismatch detected in metadata ({header.meta_checksum}),"
                f" expected: {bytes(digest)!r}, received: {computed!r}"
            )
        self.metadata_header = header
        self.metadata_offset = pos
        return pos + length

    def _open_offsets(self, pos: int) -> int:
        header = self.header
        if header.nchunks == -1:
            raise FormatError(
                f"{self.name}: the header announces an offsets section but an unknown number of"
                " chunks (-1), so the section's size is unknown"
            )
        slots = header.nchunks + header.max_app_chunks
        if slots > (self.size - pos) // 8:
            raise TruncatedError(
                f"{self.name}: offsets section of {slots} entries at offset {pos} needs"
                f" {8 * slots} bytes, but the input has {self.size}"
            )
        raw = self.source.read(pos, 8 * header.nchunks, "offsets section")
        self._offsets = np.frombuffer(raw, "<i8").astype(np.int64)  # a copy, not a view
        self.slots = slots
        return pos + 8 * slots

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
        return [v for (v,) in _INT64.iter_unpack(self.source.read(start, 8 * count, "offsets"))]

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
            raise FormatError(
                f"{self.name}: chunk {index} at offset {offset} lies outside the chunk area"
                f" [{self.chunks_start}, {self.size})"
            )
        if offset > self.size - _MIN_CHUNK:
            raise TruncatedError(
                f"{self.name}: chunk {index} at offset {offset}: the input ends at {self.size}"
            )
        try:
            chunk_header = ChunkHeader.parse(self.source.peek(offset, _CHUNK_HEADER_PEEK))
        except BloscpackError as exc:
            raise type(exc)(f"{self.name}: chunk {index} at offset {offset}: {exc}") from None
        cbytes = chunk_header.cbytes
        if not 0 <= chunk_header.nbytes <= MAX_BUFFERSIZE:
            raise ChunkError(
                f"{self.name}: chunk {index} at offset {offset}: nbytes {chunk_header.nbytes}"
                " out of range"
            )
        if cbytes < chunk_header.size:
            raise ChunkError(
                f"{self.name}: chunk {index} at offset {offset}: cbytes {cbytes} is smaller than"
                f" its {chunk_header.size}-byte header"
            )
        location = ChunkLocation(index, offset, cbytes, chunk_header.nbytes, self.checksum.size)
        if location.end > self.size:
            raise TruncatedError(
                f"{self.name}: chunk {index} at offset {offset} needs {cbytes} bytes plus a"
                f" {self.checksum.size}-byte digest, but the input has {self.size}"
            )
        return location

    @consistent_read
    def locate(self, index: int) -> ChunkLocation:
        """The location of chunk ``index`` (through the offsets when present: only this
        chunk's header is read and checked)."""
        count = len(self._offsets)
        if count:
            if not 0 <= index < count:
                raise IndexError(f"chunk index {index} out of range for {count} chunks")
            if self._locations is None:
                index = operator.index(index)
                location = self._located.get(index)
                if location is None:
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

    def expected_nbytes(self, index: int, nchunks: int) -> int | None:
        """The uncompressed size the header prescribes for chunk ``index`` (None if unknown)."""
        header = self.header
        last = index == nchunks - 1
        if last and header.nchunks != -1 and header.last_chunk != -1:
            return header.last_chunk
        if not last and header.chunk_size != -1:
            return header.chunk_size
        return None

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
            expected = self.expected_nbytes(loc.index, len(locations))
            if expected is not None and loc.nbytes != expected:
                raise IntegrityError(
                    f"{self.name}: chunk {loc.index} holds {loc.nbytes} bytes, the header"
                    f" prescribes {expected} (chunk_size {self.header.chunk_size},"
                    f" last_chunk {self.header.last_chunk})"
                )
            if self.header.chunk_size != -1 and loc.nbytes > self.header.chunk_size:
                raise IntegrityError(
                    f"{self.name}: chunk {loc.index} holds {loc.nbytes} bytes, more than the"
                    f" chunk_size {self.header.chunk_size}"
                )
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
        """The stored Blosc chunk ``index`` (a view into the input), digest verified."""
        return self._read_location(self.locate(index), verify)

    def _read_location(self, loc: ChunkLocation, verify: bool) -> memoryview:
        chunk = self.source.read(loc.offset, loc.cbytes, f"chunk {loc.index}")
        if verify and loc.digest_size:
            stored = bytes(self.source.read(loc.digest_offset, loc.digest_size, "digest"))
            computed = self.checksum(chunk)
            if stored != computed:
                raise ChecksumMismatch(
                    f"{self.name}: Checksum mismatch detected in chunk {loc.index}"
                    f" ({self.checksum.name}), expected: {stored!r}, received: {computed!r}"
                )
        return chunk

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
        return _decompress_exactly(self._read_location(loc, True), out, loc, self.name)

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
                pos += _decompress_exactly(chunk, view[pos : pos + loc.nbytes], loc, self.name)
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
                        _decompress_exactly(chunk, out, loc, self.name, c_threads, validated=True)
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
        out = _allocate(self.check_sizes(), self.name)
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
        buffers = [_allocate(largest, self.name).data for _ in range(in_flight + 1)]
        c_threads = max(1, engine.get_nthreads() // max(workers, 1))

        def decode(loc: ChunkLocation) -> memoryview:
            out = buffers[loc.index % len(buffers)][: loc.nbytes]
            chunk = self._read_location(loc, True)
            _decompress_exactly(chunk, out, loc, self.name, c_threads)
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
            else:
                self.sizes = ChunkSizes.listed([loc.nbytes for loc in reader.locations()])
            self._metadata = reader.metadata
            self.description = ArrayDescription.from_metadata(self._metadata, self.sizes.total)
        except BaseException:
            reader.close()
            raise

    def check_sizes(self) -> None:
        self.reader.check_sizes()

    def stored_chunk(self, index: int) -> memoryview:
        check = self.verify and index not in self._verified
        data = self.reader.read_chunk(index, verify=check)
        if check:
            self._verified.add(index)
        return data

    def metadata(self) -> Any:
        return self._metadata

    def stored_metadata(self) -> StoredMetadata:
        return StoredMetadata.of_bytes_or_array(self._metadata, "metadata key",
                                                verbatim=self._metadata)  # fmt: skip

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        return self.reader.source.consistent()

    def close(self) -> None:
        self.reader.close()


def own_options(params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
    """The common options as the ``.blp`` writer's: ``chunks`` as ``chunk_size`` (bytes),
    ``filters`` as ``shuffle`` (Blosc1 chunks; ``filters`` with ``blosc_version=2``)."""
    blosc1 = rest.get("blosc_version", 1) == 1
    return params.own(
        rest, chunks=("chunk_size", lambda c: chunk_nbytes(c, dtype, shape, "blp")),
        filters=("shuffle", lambda f: shuffle_only(f, "blp")) if blosc1 else ("filters", list),
    )  # fmt: skip


def open_reader(source: SourceLike, *, verify: bool = True) -> BlpReader:
    """The ``.blp`` file ``source`` (path, bytes or :class:`~bloscpack.io.ByteSource`) as a
    :class:`~bloscpack.containers.base.ContainerReader`."""
    return BlpReader(source, verify=verify)


_NO_OFFSETS = np.empty(0, np.int64)


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


def _not_blp(name: str, head: bytes) -> FormatError:
    from ..errors import NotAContainer

    return NotAContainer(
        f"{name}: the magic marker {MAGIC!r} is missing from the bloscpack header,"
        f" instead we found: {head!r}"
    )


def _allocate(nbytes: int, name: str) -> np.ndarray:
    """A new uninitialised byte array (its pages are first touched by the decoders)."""
    try:
        return np.empty(nbytes, np.uint8)
    except MemoryError:
        raise IntegrityError(
            f"{name}: cannot allocate the {nbytes} bytes the chunks claim"
        ) from None


def _decompress_exactly(chunk: Buffer, out: Buffer, loc: ChunkLocation, name: str,
                        nthreads: int | None = None, validated: bool = False) -> int:  # fmt: skip
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


def _located(exc: BloscpackError, name: str, loc: ChunkLocation) -> BloscpackError:
    """``exc`` again, its message starting with the input's name and the chunk's place."""
    return type(exc)(f"{name}: chunk {loc.index} at offset {loc.offset}: {exc}")


@contextlib.contextmanager
def reading(source: SourceLike, *, verify_metadata: bool = True) -> Iterator[BloscpackReader]:
    """A :class:`BloscpackReader` of ``source`` for one whole-file operation: opened and read
    inside one :meth:`~bloscpack.io.ByteSource.consistent` block, so that an append by this
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
    return array


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


# --- writing ------------------------------------------------------------------------------


def _filter_ids(filters: Sequence[int | str]) -> list[int]:
    ids = []
    for item in filters:
        if isinstance(item, str):
            if item.lower() not in FILTER_IDS:
                raise ArgumentError(f"unknown filter {item!r}; known: {', '.join(FILTER_IDS)}")
            ids.append(FILTER_IDS[item.lower()])
        else:
            ids.append(int(item))
    if len(ids) > 6:
        raise ArgumentError(f"at most 6 filters, got {len(ids)}")
    return [0] * (6 - len(ids)) + ids


def shuffle_code(shuffle: bool | int) -> int:
    """0.16's ``shuffle`` (True/False) or a Blosc code (0 none, 1 byte, 2 bit)."""
    code = int(shuffle)
    if code not in (0, 1, 2):
        raise ArgumentError(f"shuffle must be True/False or 0, 1 (byte), 2 (bit), not {shuffle!r}")
    return code


def compress_chunk(data: Buffer, blosc_args: BloscArgs, *, nthreads: int | None = None
                   ) -> bytes | bytearray:  # fmt: skip
    """One Blosc chunk of ``data`` as ``blosc_args`` ask: Blosc1 (readable by bloscpack 0.16)
    unless ``blosc_args.blosc_version == 2``."""
    if blosc_args.blosc_version == 2:
        return engine.compress_blosc2(data, **_blosc2_settings(blosc_args), nthreads=nthreads)
    with engine.blosc1_compressor(**_blosc1_settings(blosc_args)) as compress:
        return compress(data)


def compress_chunks(datas: Iterable[Buffer], blosc_args: BloscArgs, nchunks: int
                    ) -> Generator[bytes | bytearray, None, None]:  # fmt: skip
    """The chunks of the ``nchunks`` buffers of ``datas``, in order, each as
    :func:`compress_chunk` makes it but with one C thread, so that the bytes never depend on
    the thread count (C threads store a chunk's blocks in the order they finish).  Up to
    :func:`~bloscpack.engine.get_nthreads` chunks are compressed at once, one per thread (a
    default Blosc1 chunk of 1 MiB is a single block, which C threads could not share anyway).
    A producer may cycle through ``engine.IN_FLIGHT_PER_WORKER * get_nthreads()`` buffers
    (see :func:`~bloscpack.engine.map_in_order`).  Close the generator when leaving early
    (other Blosc1 compressions wait until then)."""
    workers = max(1, min(engine.get_nthreads(), nchunks))
    if blosc_args.blosc_version == 2:
        settings = _blosc2_settings(blosc_args)

        def compress2(data: Buffer) -> bytearray:
            return engine.compress_blosc2(data, **settings, nthreads=1)

        yield from engine.map_in_order(compress2, datas, workers)
    else:
        settings = _blosc1_settings(blosc_args)
        with engine.blosc1_compressor(**settings, concurrent=True) as compress:
            yield from engine.map_in_order(compress, datas, workers)


def _blosc2_settings(blosc_args: BloscArgs) -> dict[str, Any]:
    shuffle = shuffle_code(blosc_args.shuffle)
    filters = (
        _filter_ids(blosc_args.filters) if blosc_args.filters is not None else [0] * 5 + [shuffle]
    )
    if blosc_args.filters_meta is None:  # bytedelta needs the typesize as its meta
        filters_meta = [blosc_args.typesize if f == Filter.BYTEDELTA else 0 for f in filters]
    else:
        meta = list(blosc_args.filters_meta)
        filters_meta = [0] * (6 - len(meta)) + meta
    return dict(
        typesize=blosc_args.typesize, clevel=blosc_args.clevel, codec=blosc_args.cname,
        filters=filters, filters_meta=filters_meta, blocksize=blosc_args.blocksize,
        use_dict=blosc_args.use_dict,
    )  # fmt: skip


def _blosc1_settings(blosc_args: BloscArgs) -> dict[str, Any]:
    if blosc_args.filters is not None or blosc_args.use_dict:
        raise ArgumentError("filters and dictionaries need Blosc2 chunks: pass blosc_version=2")
    return dict(
        typesize=blosc_args.typesize, clevel=blosc_args.clevel,
        shuffle=shuffle_code(blosc_args.shuffle), codec=blosc_args.cname,
        blocksize=blosc_args.blocksize,
    )  # fmt: skip


def check_blosc_args(blosc_args: BloscArgs) -> None:
    """Raise (before anything is written) unless ``blosc_args`` can compress chunks."""
    limit = 255 if blosc_args.blosc_version == 1 else 536866816
    check_range("typesize", blosc_args.typesize, 1, limit)
    check_range("clevel", blosc_args.clevel, 0, 9)
    shuffle_code(blosc_args.shuffle)
    if blosc_args.blosc_version == 1:
        import blosc

        known, kind = blosc.compressor_list(), "Blosc1 chunks"
    else:
        known, kind = list(engine.WRITABLE_CODECS), "Blosc2 chunks"
    if blosc_args.cname not in known:
        raise engine.codec_error(blosc_args.cname, f".blp files of {kind}", known)
    if blosc_args.filters is not None:
        _filter_ids(blosc_args.filters)


class BloscpackWriter:
    """Writes a ``.blp`` container to the binary file object ``fp``.

    The header, metadata section and a placeholder offsets section are written at once; each
    :meth:`write_chunk` appends one compressed chunk and its digest; :meth:`close` fills in the
    offsets (``fp`` must then be seekable).  ``nchunks=-1`` writes a stream of unknown length
    (no offsets); if ``fp`` is seekable, ``close`` records the real count and last size.
    """

    def __init__(
        self,
        fp: IO[bytes],
        *,
        chunk_size: int,
        last_chunk: int,
        nchunks: int,
        typesize: int,
        checksum: str | None = "adler32",
        offsets: bool = True,
        max_app_chunks: Any = DEFAULT_MAX_APP_CHUNKS,
        metadata: Any = None,
        metadata_args: MetadataArgs | None = None,
    ) -> None:
        checksum = "None" if checksum is None else checksum
        offsets = bool(offsets) and nchunks != -1
        self.header = BloscpackHeader(
            offsets=offsets,
            metadata=metadata is not None,
            checksum=checksum,
            typesize=typesize,
            chunk_size=chunk_size,
            last_chunk=last_chunk,
            nchunks=nchunks,
            max_app_chunks=handle_max_app_chunks(offsets, nchunks, max_app_chunks),
        )
        section = b""
        self.metadata_header: MetadataHeader | None = None
        if metadata is not None:
            section, self.metadata_header = _encode_section(
                metadata, (metadata_args or MetadataArgs()).copy()
            )
        self.fp = fp
        self.checksum = self.header.checksum_impl
        self.offsets: list[int] = []
        self.last_nbytes = -1
        self.offsets_offset = BLOSCPACK_HEADER_LENGTH + len(section)
        slots = self.header.total_prospective_chunks if offsets else 0
        placeholder = _INT64.pack(-1) * (slots or 0)
        self.chunks_start = self.offsets_offset + len(placeholder)
        self._base = fp.tell() if _seekable(fp) else 0
        fp.write(self.header.encode())
        fp.write(section)
        fp.write(placeholder)
        self._pos = self.chunks_start
        self.closed = False

    def write_chunk(self, chunk: Buffer, *, trusted: bool = False) -> int:
        """Append one complete Blosc chunk (and its digest); return its position.

        The chunk's layout is validated unless ``trusted`` (a chunk this process just
        compressed: only its header is read)."""
        header = ChunkHeader.parse(chunk) if trusted else validate_chunk(chunk)
        index = len(self.offsets)
        expected = self._expected_nbytes(index)
        if expected is not None and header.nbytes != expected:
            raise ArgumentError(
                f"chunk {index} holds {header.nbytes} bytes, the header prescribes {expected}"
            )
        if self.header.nchunks != -1 and index >= self.header.nchunks:
            raise ArgumentError(f"the header announces {self.header.nchunks} chunks, no more fit")
        view = memoryview(chunk).cast("B")[: header.cbytes]
        position = self._pos
        self.fp.write(view)
        self.fp.write(self.checksum(view))
        self._pos += header.cbytes + self.checksum.size
        self.offsets.append(position)
        self.last_nbytes = header.nbytes
        return position

    def _expected_nbytes(self, index: int) -> int | None:
        header = self.header
        if header.nchunks == -1:
            return None
        return header.last_chunk if index == header.nchunks - 1 else header.chunk_size

    def close(self) -> None:
        """Fill in the offsets (and, for a stream, the real chunk count); leave ``fp`` at the
        end of the container."""
        if self.closed:
            return
        header = self.header
        if header.nchunks != -1 and len(self.offsets) != header.nchunks:
            raise ArgumentError(
                f"{len(self.offsets)} chunks were written, the header announces {header.nchunks}"
            )
        if header.offsets:
            self.fp.seek(self._base + self.offsets_offset)
            self.fp.write(encode_offsets(self.offsets))
            self.fp.seek(self._base + self._pos)
        elif header.nchunks == -1 and _seekable(self.fp):
            final = BloscpackHeader(**dict(header))
            final.nchunks = len(self.offsets)
            final.last_chunk = max(self.last_nbytes, 0)
            if final.chunk_size == -1:
                final.chunk_size = final.last_chunk
            self.fp.seek(self._base)
            self.fp.write(final.encode())
            self.fp.seek(self._base + self._pos)
            self.header = final
        self.closed = True

    def __enter__(self) -> BloscpackWriter:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()


def _seekable(fp: IO[bytes]) -> bool:
    try:
        return bool(fp.seekable())
    except (AttributeError, OSError, ValueError):
        return False


# --- rewriting metadata in place --------------------------------------------------------


def rewrite_metadata(
    path: PathLike,
    metadata: Any,
    *,
    checksum: str | None = None,
    codec: str = "zlib",
    level: int = 6,
) -> None:
    """Replace the metadata of the ``.blp`` file ``path`` in place.

    The new section must fit in the space reserved when the file was written
    (``max_meta_size``); otherwise :class:`MetadataSectionTooSmall` is raised and the file is
    left untouched.  Identical metadata raises :class:`NoChangeInMetadata` (as in 0.16).  The
    section is written with one positioned write and synced.
    """
    import os

    with BloscpackReader(path) as reader:
        if reader.metadata_header is None or reader.metadata_offset is None:
            raise NoMetadataFound(f"{reader.name}: the file has no metadata section to rewrite")
        if reader.metadata == metadata:
            raise NoChangeInMetadata(f"{reader.name}: the metadata has not changed")
        section = replacement_metadata_section(
            metadata, reader.metadata_header, checksum=checksum, codec=codec, level=level
        )
        position = reader.metadata_offset
    fd = os.open(os.fspath(path), os.O_WRONLY)
    try:
        written = os.pwrite(fd, section, position)
        if written != len(section):
            raise OSError(f"short write: {written} of {len(section)} bytes")
        os.fsync(fd)
    finally:
        os.close(fd)


# --- info and verify ----------------------------------------------------------------------


def _chunk_summary(reader: BloscpackReader, loc: ChunkLocation) -> dict[str, Any]:
    chunk_header = ChunkHeader.parse(reader.source.read_upto(loc.offset, _CHUNK_HEADER_PEEK))
    return {
        "index": loc.index,
        "offset": loc.offset,
        "cbytes": loc.cbytes,
        "nbytes": loc.nbytes,
        "codec": chunk_header.codec,
        "typesize": chunk_header.typesize,
        "shuffle": chunk_header.shuffle,
        "blosc_version": chunk_header.blosc_version,
        "header_version": chunk_header.version,
    }


def _jsonable_header(header: BloscpackHeader | MetadataHeader) -> dict[str, Any]:
    return {k: (v.decode("latin-1") if isinstance(v, bytes) else v) for k, v in header.items()}


def info(path: SourceLike, *, max_chunks: int = 1000) -> dict[str, Any]:
    """A JSON-able description of a ``.blp`` container: header, metadata header, metadata,
    offsets, section positions, and per-chunk codec/sizes (the first ``max_chunks``) plus
    totals over all chunks."""
    with reading(path) as reader:
        locations = reader.locations()
        chunks = [_chunk_summary(reader, loc) for loc in locations[:max_chunks]]
        codecs: Counter[str] = Counter()
        versions: Counter[int] = Counter()
        for loc in locations:
            summary = chunks[loc.index] if loc.index < max_chunks else _chunk_summary(reader, loc)
            codecs[summary["codec"]] += 1
            versions[summary["blosc_version"]] += 1
        nbytes = sum(loc.nbytes for loc in locations)
        cbytes = sum(loc.cbytes for loc in locations)
        return {
            "format": "blp",
            "file_size": reader.size,
            "header": _jsonable_header(reader.header),
            "metadata_header": (
                _jsonable_header(reader.metadata_header) if reader.metadata_header else None
            ),
            "metadata": reader.metadata,
            "metadata_offset": reader.metadata_offset,
            "offsets_offset": reader.offsets_offset if reader.header.offsets else None,
            "chunks_start": reader.chunks_start,
            "offsets": reader.offsets,
            "nchunks": len(locations),
            "nbytes": nbytes,
            "cbytes": cbytes,
            "ratio": (nbytes / cbytes) if cbytes else None,
            "trailing_bytes": reader.size - reader.data_end,
            "codecs": dict(codecs),
            "blosc_versions": {str(k): v for k, v in versions.items()},
            "chunks": chunks,
            "chunks_listed": len(chunks),
        }


def verify(path: SourceLike) -> dict[str, Any]:
    """Check a ``.blp`` container without writing anything: header and metadata digest, size
    and offset consistency, and every chunk's digest, decoding and size.  Returns
    ``{"format": "blp", "ok", "nchunks", "bad_chunks": [{"index", "error"}], "problems"}``."""
    report: dict[str, Any] = {
        "format": "blp",
        "ok": False,
        "nchunks": 0,
        "bad_chunks": [],
        "problems": [],
    }
    problems: list[str] = report["problems"]
    with contextlib.ExitStack() as stack:
        try:
            reader = stack.enter_context(reading(path, verify_metadata=False))
        except BloscpackError as exc:
            problems.append(str(exc))
            return report
        if reader.metadata_digest_ok is False:
            problems.append(f"{reader.name}: metadata checksum mismatch")
        try:
            _ = reader.metadata
        except BloscpackError as exc:
            problems.append(str(exc))
        try:
            locations = reader.locations()
        except BloscpackError as exc:
            problems.append(str(exc))
            report["nchunks"] = max(reader.header.nchunks, 0)
            return report
        report["nchunks"] = len(locations)
        problems.extend(_layout_problems(reader, locations))
        try:
            report["bad_chunks"] = _chunk_problems(reader, locations)
        except BloscpackError as exc:
            problems.append(str(exc))
        problems.extend(_array_problems(reader, locations))
    report["ok"] = not problems and not report["bad_chunks"]
    return report


def _layout_problems(reader: BloscpackReader, locations: list[ChunkLocation]) -> list[str]:
    problems = []
    if locations and locations[0].offset != reader.chunks_start:
        problems.append(
            f"chunk 0 starts at {locations[0].offset}, not right after the preamble"
            f" ({reader.chunks_start})"
        )
    for before, after in zip(locations, locations[1:], strict=False):
        if after.offset < before.end:
            problems.append(
                f"chunk {after.index} at offset {after.offset} overlaps chunk {before.index}"
                f" (which ends at {before.end})"
            )
    if reader.header.offsets:
        unused = reader.unused_offsets()
        if any(v != -1 for v in unused):
            problems.append(f"preallocated offset slots are not all -1: {unused[:8]}")
    try:
        reader.check_sizes()
    except BloscpackError as exc:
        problems.append(str(exc))
    return problems


def _chunk_problems(
    reader: BloscpackReader, locations: list[ChunkLocation]
) -> list[dict[str, Any]]:
    bad = []
    largest = max((loc.nbytes for loc in locations), default=0)
    if reader.header.chunk_size != -1:
        largest = min(largest, reader.header.chunk_size)
    scratch = _allocate(largest, reader.name).data
    for loc in locations:
        try:
            chunk = reader._read_location(loc, True)
            if loc.nbytes > len(scratch):
                raise IntegrityError(
                    f"chunk {loc.index} claims {loc.nbytes} bytes, more than the chunk size"
                )
            _decompress_exactly(chunk, scratch[: loc.nbytes], loc, reader.name)
        except BloscpackError as exc:
            bad.append({"index": loc.index, "error": str(exc)})
    return bad


def _array_problems(reader: BloscpackReader, locations: list[ChunkLocation]) -> list[str]:
    from .. import ndarray

    try:
        metadata = reader.metadata
    except BloscpackError:
        return []
    if not ndarray.is_numpy_metadata(metadata):
        return []
    try:
        spec = ndarray.decode_metadata(metadata)
    except BloscpackError:
        return []  # user metadata that merely resembles an array's
    total = sum(loc.nbytes for loc in locations)
    if spec.nbytes != total:
        return [f"the array needs {spec.nbytes} bytes, the chunks hold {total}"]
    return []


class BlpTarget(Target):
    """A ``.blp`` file: the source's numpy metadata and user metadata (JSON) in its metadata
    section; another ``.blp`` file's metadata is kept as it was written."""

    fmt = "blp"
    keeps_any_metadata = True
    OPTIONS = {
        "chunk_size": None, "clevel": DEFAULT_CLEVEL, "shuffle": DEFAULT_SHUFFLE, "cname": None,
        "codec": None, "checksum": DEFAULT_CHECKSUM, "offsets": True,
        "max_app_chunks": DEFAULT_MAX_APP_CHUNKS, "blosc_version": 1, "filters": None,
        "filters_meta": None, "use_dict": False, "blocksize": 0, "metadata_args": None,
    }  # fmt: skip

    def __init__(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> None:
        super().__init__(source, copy_chunks)
        opts = take_options(options, self.OPTIONS, self.fmt)
        self.opts = opts
        spec = source.spec
        self.args = BloscArgs.from_options(
            opts["cname"], opts["codec"], clevel=opts["clevel"], shuffle=opts["shuffle"],
            blosc_version=opts["blosc_version"], filters=opts["filters"],
            filters_meta=opts["filters_meta"], use_dict=opts["use_dict"],
            blocksize=opts["blocksize"],
        )  # fmt: skip
        itemsize = spec.dtype.itemsize
        self.args.typesize = nd.chunk_typesize(spec.dtype, self.args.blosc_version)
        check_blosc_args(self.args)
        if opts["metadata_args"] is not None and not isinstance(
            opts["metadata_args"], MetadataArgs
        ):
            self.opts["metadata_args"] = MetadataArgs(**dict(opts["metadata_args"]))
        chunk_size: Any = opts["chunk_size"]
        span = source.uniform_span()
        if chunk_size is None and span and self._copyable(source.first_chunk_header()):
            chunk_size = span
        chunk_size = array_chunk_size(
            chunk_size or DEFAULT_CHUNK_SIZE, source.nbytes, max(itemsize, 1)
        )
        self.nchunks, self.chunk_size, self.last_chunk = calculate_nchunks(
            source.nbytes, chunk_size
        )
        self.metadata = self._metadata()
        kept_metalayers(source, self.dropped, 0, False)

    def _metadata(self) -> Any:
        source = self.source
        if source.meta.verbatim is not None:  # .blp to .blp: the metadata as it was written
            return source.meta.verbatim
        if not source.meta.is_array:
            user = json_user(source, "the .blp metadata (JSON)", self.dropped)
            return user or None
        metadata = numpy_metadata(source.spec)
        metadata.update(json_user(source, "the .blp metadata (JSON)", self.dropped, NUMPY_KEYS))
        return metadata

    def accepts_format(self, header: ChunkHeader) -> bool:
        if self.args.blosc_version == 1:
            return header.blosc_version == 1
        return not header.lazy

    def write(self, path: str) -> None:
        with open(path, "wb") as fh:
            writer = BloscpackWriter(
                fh, chunk_size=self.chunk_size, last_chunk=self.last_chunk, nchunks=self.nchunks,
                typesize=header_typesize(self.args.typesize), checksum=self.opts["checksum"],
                offsets=self.opts["offsets"], max_app_chunks=self.opts["max_app_chunks"],
                metadata=self.metadata, metadata_args=self.opts["metadata_args"],
            )  # fmt: skip
            spans = flat_spans(self.source.nbytes, self.chunk_size) or [(0, 0)]
            self._write_spans(
                spans,
                False,
                writer.write_chunk,
                lambda data: writer.write_chunk(compress_chunk(data, self.args)),
            )
            writer.close()


ConversionTarget = BlpTarget


__all__ = [
    "BlpTarget",
    "ConversionTarget",
    "BloscpackReader",
    "BlpReader",
    "BloscpackWriter",
    "ChunkLocation",
    "check_blosc_args",
    "compress_chunk",
    "decode_metadata",
    "encode_metadata_section",
    "encode_offsets",
    "info",
    "load",
    "metadata_section_length",
    "open_reader",
    "read_array",
    "own_options",
    "read_metadata_section",
    "replacement_metadata_section",
    "rewrite_metadata",
    "serialize_metadata",
    "sniff",
    "verify",
]
