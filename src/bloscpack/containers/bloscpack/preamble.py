"""The sections of a ``.blp`` file before its chunks: the metadata section (32-byte
:class:`~bloscpack.containers.bloscpack.header.MetadataHeader`, serialized JSON, NUL padding up
to ``max_meta_size``, digest) and the offsets section (``nchunks + max_app_chunks`` int64 file
positions, unused slots -1), encoded and decoded.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Sequence
from typing import Any

from ...errors import (
    ArgumentError,
    ChecksumLengthMismatch,
    FormatError,
    MetadataSectionTooSmall,
    NoSuchSerializer,
)
from .args import SERIALIZERS, MetadataArgs
from .checksums import CHECKSUMS_LOOKUP, get_checksum
from .header import METADATA_HEADER_LENGTH, MetadataHeader

Buffer = Any  # any object exporting the buffer protocol
_INT64 = struct.Struct("<q")

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
