"""The preamble of a ``.blp`` file, what comes before its chunks: the header, the metadata
section (32-byte :class:`~bloscpack.containers.bloscpack.header.MetadataHeader`, serialized
JSON, NUL padding up to ``max_meta_size``, digest) and the offsets section (``nchunks +
max_app_chunks`` int64 file positions, unused slots -1).  The sections are encoded and decoded
here, and :class:`Preamble` reads and checks all three for every reader of the format.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import (
    ArgumentError,
    BloscpackError,
    ChecksumLengthMismatch,
    ChecksumMismatch,
    FormatError,
    FormatVersionMismatch,
    MetadataSectionTooSmall,
    NoSuchSerializer,
    NotAContainer,
    TruncatedError,
)
from ...io.sources import ByteSource
from .args import SERIALIZERS, MetadataArgs
from .checksums import CHECKSUMS_LOOKUP, Hash, get_checksum
from .header import (
    BLOSCPACK_HEADER_LENGTH,
    FORMAT_VERSION,
    MAGIC,
    METADATA_HEADER_LENGTH,
    BloscpackHeader,
    MetadataHeader,
)

Buffer = Any  # any object exporting the buffer protocol
OFFSET = struct.Struct("<q")  # an entry of the offsets section

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

    With :class:`~bloscpack.containers.bloscpack.args.MetadataArgs` (default:
    ``MetadataArgs()``) this is what 0.16 wrote for a new file.  With the
    :class:`~bloscpack.containers.bloscpack.header.MetadataHeader` of an existing section it is
    the in-place replacement 0.16's metadata rewrite produced: same size, magic and checksum,
    zlib level 6 when that helps; :class:`MetadataSectionTooSmall` if it does not fit.
    """
    if isinstance(metadata_args, MetadataHeader):
        return replacement_metadata_section(metadata, metadata_args)
    return metadata_section(metadata, (metadata_args or MetadataArgs()).copy())[0]


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
    return metadata_section(metadata, args)[0]


def metadata_section(metadata: Any, args: MetadataArgs) -> tuple[bytes, MetadataHeader]:
    """The metadata section for ``metadata`` as ``args`` ask (which it may change: no codec
    when zlib does not help), and its header."""
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
    return b"".join(OFFSET.pack(o) for o in offsets) + OFFSET.pack(-1) * (slots - len(offsets))


# --- reading the preamble -----------------------------------------------------------------


class Preamble:
    """The header, metadata section and offsets section at the start of ``source``, read and
    checked against its size: ``header``, ``checksum`` (of the chunks), ``metadata_header``,
    ``metadata_offset`` (32) and ``stored_metadata`` (None without metadata),
    ``metadata_digest_ok`` (a mismatch raises unless not ``verify_metadata``),
    ``offsets_offset``, ``offsets`` (the first ``nchunks`` entries, int64; empty without an
    offsets section), ``slots`` and ``chunks_start``."""

    def __init__(self, source: ByteSource, *, verify_metadata: bool = True) -> None:
        self.source, self.name, self.size = source, source.name, source.size()
        head = bytes(source.read_upto(0, len(MAGIC)))
        if head != MAGIC:
            raise _not_blp(self.name, head)
        raw = source.read(0, BLOSCPACK_HEADER_LENGTH, "bloscpack header")
        self.header = decode_header(raw, self.name)
        self.checksum: Hash = self.header.checksum_impl
        pos = BLOSCPACK_HEADER_LENGTH
        self.metadata_header: MetadataHeader | None = None
        self.metadata_offset: int | None = None
        self.metadata_digest_ok: bool | None = None
        self.stored_metadata: memoryview | None = None
        if self.header.metadata:
            pos = self._read_metadata(pos, verify_metadata)
        self.offsets_offset = pos
        self.offsets = _NO_OFFSETS
        self.slots = 0
        if self.header.offsets:
            pos = self._read_offsets(pos)
        self.chunks_start = pos

    def _read_metadata(self, pos: int, verify: bool) -> int:
        raw = self.source.read(pos, METADATA_HEADER_LENGTH, "metadata header")
        header = decode_metadata_header(raw, self.name)
        length = metadata_section_length(header)
        if self.source.remote:  # the metadata and the offsets after it in one round
            offsets = 8 * max(self.header.nchunks, 0) if self.header.offsets else 0
            self.source.prefetch([(pos, min(length + offsets, max(self.size - pos, 0)))])
        section = self.source.read(pos, length, "metadata section")
        data_end = METADATA_HEADER_LENGTH + header.meta_comp_size
        self.stored_metadata = section[METADATA_HEADER_LENGTH:data_end]
        digest = section[METADATA_HEADER_LENGTH + header.max_meta_size : length]
        computed = header.checksum_impl(self.stored_metadata)
        self.metadata_digest_ok = bytes(digest) == computed
        if verify and not self.metadata_digest_ok:
            raise ChecksumMismatch(
                f"{self.name}: Checksum mismatch detected in metadata ({header.meta_checksum}),"
                f" expected: {bytes(digest)!r}, received: {computed!r}"
            )
        self.metadata_header = header
        self.metadata_offset = pos
        return pos + length

    def _read_offsets(self, pos: int) -> int:
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
        self.offsets = np.frombuffer(raw, "<i8").astype(np.int64)  # a copy, not a view
        self.slots = slots
        self._check_increasing(pos + 8 * slots)
        return pos + 8 * slots

    def _check_increasing(self, chunks_start: int) -> None:
        """Refuse offsets before the chunk area, or that do not increase: swapped or
        repeated entries would read chunks out of order or twice (no digest covers the
        offsets).  The end of the chunk area is checked when a chunk is located (a stream's
        preamble is read before the rest)."""
        offsets = self.offsets
        outside = offsets < chunks_start
        if bool(outside.any()):
            i = int(np.argmax(outside))
            raise outside_error(self.name, i, int(offsets[i]), chunks_start, self.size)
        if len(offsets) > 1 and not bool((offsets[1:] > offsets[:-1]).all()):
            i = int(np.argmax(offsets[1:] <= offsets[:-1])) + 1
            raise FormatError(
                f"{self.name}: the offsets do not increase: chunk {i} at offset"
                f" {int(offsets[i])} follows chunk {i - 1} at offset {int(offsets[i - 1])}"
            )


def decode_header(raw: Buffer, name: str) -> BloscpackHeader:
    """The bloscpack header of ``name`` from its 32 bytes ``raw``, checked (format version
    included)."""
    try:
        header = BloscpackHeader.decode(raw)
    except BloscpackError as exc:
        raise type(exc)(f"{name}: {exc}") from None
    check_format_version(header, name)
    return header


def decode_metadata_header(raw: Buffer, name: str) -> MetadataHeader:
    """The metadata header of ``name`` from its 32 bytes ``raw``, checked."""
    try:
        header = MetadataHeader.decode(raw)
    except BloscpackError as exc:
        raise type(exc)(f"{name}: {exc}") from None
    if header.meta_comp_size > header.max_meta_size:
        raise FormatError(
            f"{name}: metadata meta_comp_size {header.meta_comp_size} exceeds its"
            f" max_meta_size {header.max_meta_size}"
        )
    return header


def outside_error(name: str, index: int, offset: int, chunks_start: int, size: int
                  ) -> FormatError:  # fmt: skip
    """The error for chunk ``index`` placed at ``offset``, outside the chunk area."""
    return FormatError(
        f"{name}: chunk {index} at offset {offset} lies outside the chunk area"
        f" [{chunks_start}, {size})"
    )


def check_format_version(header: BloscpackHeader, name: str,
                         error: type[FormatError] = FormatVersionMismatch) -> None:  # fmt: skip
    """Raise ``error`` unless ``header`` has the format version this library reads (3)."""
    if header.format_version != FORMAT_VERSION:
        raise error(
            f"{name}: format version of file was not '{FORMAT_VERSION}' as expected,"
            f" but '{header.format_version}'"
        )


_NO_OFFSETS = np.empty(0, np.int64)


def _not_blp(name: str, head: bytes) -> FormatError:
    return NotAContainer(
        f"{name}: the magic marker {MAGIC!r} is missing from the bloscpack header,"
        f" instead we found: {head!r}"
    )
