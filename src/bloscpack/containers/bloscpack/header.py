"""The two fixed-size headers of a .blp file (format version 3), as bloscpack 0.16 exposed them.

``BloscpackHeader`` (32 bytes at the start of the file) and ``MetadataHeader`` (32 bytes at the
start of the metadata section) are mutable mappings with 0.16's constructor defaults, range
checks, ``encode()`` and static ``decode(buf)``.  Pure format code: bytes in, records out.
All integers are little-endian.
"""

from __future__ import annotations

import struct
from typing import Any

from ...errors import (
    ArgumentError,
    BloscpackError,
    FormatError,
    NoSuchChecksum,
    NoSuchCodec,
    NotAContainer,
    TruncatedError,
)
from .args import (
    MAX_CHUNK_SIZE,
    MAX_CHUNKS,
    MAX_CLEVEL,
    META_CODECS,
    MutableMappingObject,
    check_range,
)
from .checksums import CHECKSUMS, CHECKSUMS_AVAIL, CHECKSUMS_LOOKUP, Hash, check_valid_checksum

MAGIC = b"blpk"
FORMAT_VERSION = 3
MAX_FORMAT_VERSION = 255
MAX_TYPESIZE = 255
MAX_META_SIZE = 2**32 - 1
BLOSCPACK_HEADER_LENGTH = 32
METADATA_HEADER_LENGTH = 32

_BLOSCPACK_HEADER = struct.Struct("<4sBBBBiiqq")
_METADATA_HEADER = struct.Struct("<8sBBBBIII8s")


def sniff(head: bytes) -> bool:
    """Whether ``head`` (the first bytes of a file) starts a ``.blp`` container."""
    return bytes(head[:4]) == MAGIC


def stream_size(head: bytes) -> tuple[int | None, int]:
    """``(uncompressed size or None, chunk size or 0)`` from the header at the start of a
    ``.blp`` stream (None and 0 when the stream does not say)."""
    if len(head) < BLOSCPACK_HEADER_LENGTH:
        return None, 0
    try:
        header = BloscpackHeader.decode(head[:BLOSCPACK_HEADER_LENGTH])
    except BloscpackError:
        return None, 0
    chunk_size = max(header.chunk_size, 0)
    if header.nchunks < 0 or header.chunk_size < 0 or header.last_chunk < 0:
        return None, chunk_size
    if header.nchunks == 0:
        return 0, chunk_size
    return header.chunk_size * (header.nchunks - 1) + header.last_chunk, chunk_size


def header_typesize(typesize: int) -> int:
    """The typesize byte of a .blp header: the chunks' typesize, or 0 when it does not fit."""
    return typesize if 0 <= typesize <= MAX_TYPESIZE else 0


def create_options(offsets: bool = True, metadata: bool = False) -> str:
    """The options bitfield as 0.16 wrote it: ``'000000' + metadata + offsets``."""
    return f"000000{int(bool(metadata))}{int(bool(offsets))}"


def decode_options(options: str) -> dict[str, bool]:
    """``'00000011'`` -> ``{'offsets': True, 'metadata': True}``; reserved bits must be 0."""
    _check_bitfield("options", options)
    if "1" in options[:6]:
        raise FormatError(f"bloscpack header options {options!r}: reserved bits 2-7 must be 0")
    return {"offsets": options[7] == "1", "metadata": options[6] == "1"}


def _check_bitfield(name: str, value: Any) -> None:
    if not isinstance(value, str) or len(value) != 8 or set(value) - {"0", "1"}:
        raise ArgumentError(f"'{name}' must be string of 0s and 1s of length 8, not {value!r}")


def _check_bytes(name: str, value: Any, max_len: int) -> None:
    if not isinstance(value, bytes):
        raise ArgumentError(f"'{name}' must be of type 'bytes', not {type(value).__name__!r}")
    if len(value) > max_len:
        raise ArgumentError(f"'{name}' can be of max length '{max_len}' but is: '{len(value)}'")


def _checksum_name(checksum_id: int, where: str) -> str:
    if checksum_id >= len(CHECKSUMS):
        raise NoSuchChecksum(
            f"{where}: checksum id {checksum_id} is unknown (known: 0..{len(CHECKSUMS) - 1},"
            f" {', '.join(CHECKSUMS_AVAIL)})"
        )
    return CHECKSUMS_AVAIL[checksum_id]


class BloscpackHeader(MutableMappingObject):
    """The 32-byte file header: magic ``blpk``, format version, options (offsets/metadata),
    checksum, typesize, chunk_size, last_chunk, nchunks, max_app_chunks (-1 = unknown)."""

    _attrs = (
        "format_version", "offsets", "metadata", "checksum", "typesize",
        "chunk_size", "last_chunk", "nchunks", "max_app_chunks",
    )  # fmt: skip
    _bytes_attrs = ("chunk_size", "last_chunk")

    def __init__(
        self,
        format_version: int = FORMAT_VERSION,
        offsets: bool = False,
        metadata: bool = False,
        checksum: str = "None",
        typesize: int = 0,
        chunk_size: int = -1,
        last_chunk: int = -1,
        nchunks: int = -1,
        max_app_chunks: int = 0,
    ) -> None:
        check_range("format_version", format_version, 0, MAX_FORMAT_VERSION)
        check_valid_checksum(checksum)
        check_range("typesize", typesize, 0, MAX_TYPESIZE)
        check_range("chunk_size", chunk_size, -1, MAX_CHUNK_SIZE)
        check_range("last_chunk", last_chunk, -1, MAX_CHUNK_SIZE)
        check_range("nchunks", nchunks, -1, MAX_CHUNKS)
        check_range("max_app_chunks", max_app_chunks, 0, MAX_CHUNKS)
        if nchunks != -1:
            check_range("nchunks + max_app_chunks", nchunks + max_app_chunks, 0, MAX_CHUNKS)
        elif max_app_chunks != 0:
            raise ArgumentError("'max_app_chunks' can not be non '0' if 'nchunks' is '-1'")
        if chunk_size != -1 and last_chunk != -1 and last_chunk > chunk_size:
            raise ArgumentError(
                f"'last_chunk' ({last_chunk}) is larger than 'chunk_size' ({chunk_size})"
            )
        self.format_version = format_version
        self.offsets = offsets
        self.metadata = metadata
        self.checksum = checksum
        self.typesize = typesize
        self.chunk_size = chunk_size
        self.last_chunk = last_chunk
        self.nchunks = nchunks
        self.max_app_chunks = max_app_chunks

    @property
    def checksum_impl(self) -> Hash:
        """The :class:`~bloscpack.containers.bloscpack.checksums.Hash` of the chunk digests."""
        return CHECKSUMS_LOOKUP[self.checksum]

    @property
    def total_prospective_chunks(self) -> int | None:
        """Slots in the offsets section (``nchunks + max_app_chunks``), None if unknown."""
        return self.nchunks + self.max_app_chunks if self.nchunks >= 0 else None

    def expected_nbytes(self, index: int, nchunks: int) -> int | None:
        """The uncompressed size this header prescribes for chunk ``index`` of ``nchunks``
        (None if unknown)."""
        last = index == nchunks - 1
        if last and self.nchunks != -1 and self.last_chunk != -1:
            return self.last_chunk
        if not last and self.chunk_size != -1:
            return self.chunk_size
        return None

    def encode(self) -> bytes:
        """The 32 header bytes."""
        return _BLOSCPACK_HEADER.pack(
            MAGIC, self.format_version, int(create_options(self.offsets, self.metadata), 2),
            CHECKSUMS_AVAIL.index(self.checksum), self.typesize, self.chunk_size,
            self.last_chunk, self.nchunks, self.max_app_chunks,
        )  # fmt: skip

    @staticmethod
    def decode(buffer_: bytes | bytearray | memoryview) -> BloscpackHeader:
        """Decode 32 header bytes; any format version is accepted here (readers check it)."""
        if len(buffer_) != BLOSCPACK_HEADER_LENGTH:
            raise TruncatedError(
                f"attempting to decode a bloscpack header of length '{len(buffer_)}', not '32'"
            )
        magic, version, options, checksum_id, typesize, chunk_size, last_chunk, nchunks, \
            max_app_chunks = _BLOSCPACK_HEADER.unpack(buffer_)  # fmt: skip
        if magic != MAGIC:
            raise NotAContainer(
                f"the magic marker {MAGIC!r} is missing from the bloscpack header,"
                f" instead we found: {magic!r}"
            )
        flags = decode_options(format(options, "08b"))
        checksum = _checksum_name(checksum_id, "bloscpack header")
        try:
            return BloscpackHeader(
                version, flags["offsets"], flags["metadata"], checksum, typesize,
                chunk_size, last_chunk, nchunks, max_app_chunks,
            )  # fmt: skip
        except ArgumentError as exc:
            raise FormatError(f"invalid bloscpack header: {exc}") from None


class MetadataHeader(MutableMappingObject):
    """The 32-byte metadata header: serializer magic (``b'JSON'``), options, checksum, codec,
    level, serialized size, reserved size, stored size, user codec."""

    _attrs = (
        "magic_format", "meta_options", "meta_checksum", "meta_codec", "meta_level",
        "meta_size", "max_meta_size", "meta_comp_size", "user_codec",
    )  # fmt: skip
    _bytes_attrs = ("meta_size", "max_meta_size", "meta_comp_size")

    def __init__(
        self,
        magic_format: bytes = b"",
        meta_options: str = "00000000",
        meta_checksum: str = "None",
        meta_codec: str = "None",
        meta_level: int = 0,
        meta_size: int = 0,
        max_meta_size: int = 0,
        meta_comp_size: int = 0,
        user_codec: bytes = b"",
    ) -> None:
        _check_bytes("magic_format", magic_format, 8)
        _check_bitfield("meta_options", meta_options)
        check_valid_checksum(meta_checksum)
        if meta_codec not in META_CODECS:
            raise NoSuchCodec(f"codec {meta_codec!r} does not exist; use 'zlib' or 'None'")
        check_range("meta_level", meta_level, 0, MAX_CLEVEL)
        check_range("meta_size", meta_size, 0, MAX_META_SIZE)
        check_range("max_meta_size", max_meta_size, 0, MAX_META_SIZE)
        check_range("meta_comp_size", meta_comp_size, 0, MAX_META_SIZE)
        _check_bytes("user_codec", user_codec, 8)
        self.magic_format = magic_format
        self.meta_options = meta_options
        self.meta_checksum = meta_checksum
        self.meta_codec = meta_codec
        self.meta_level = meta_level
        self.meta_size = meta_size
        self.max_meta_size = max_meta_size
        self.meta_comp_size = meta_comp_size
        self.user_codec = user_codec

    @property
    def checksum_impl(self) -> Hash:
        """The :class:`~bloscpack.containers.bloscpack.checksums.Hash` of the metadata digest."""
        return CHECKSUMS_LOOKUP[self.meta_checksum]

    def encode(self) -> bytes:
        """The 32 header bytes (magic and user codec padded with NULs)."""
        return _METADATA_HEADER.pack(
            self.magic_format, int(self.meta_options, 2),
            CHECKSUMS_AVAIL.index(self.meta_checksum), META_CODECS.index(self.meta_codec),
            self.meta_level, self.meta_size, self.max_meta_size, self.meta_comp_size,
            self.user_codec,
        )  # fmt: skip

    @staticmethod
    def decode(buffer_: bytes | bytearray | memoryview) -> MetadataHeader:
        """Decode 32 metadata header bytes (the magic may be padded with NULs or spaces)."""
        if len(buffer_) != METADATA_HEADER_LENGTH:
            raise TruncatedError(
                f"attempting to decode a bloscpack metadata header of length '{len(buffer_)}',"
                " not '32'"
            )
        magic, options, checksum_id, codec_id, level, size, max_size, comp_size, user_codec = (
            _METADATA_HEADER.unpack(buffer_)
        )
        if options:
            raise FormatError(f"metadata header options 0x{options:02x}: all bits must be 0")
        if codec_id >= len(META_CODECS):
            raise NoSuchCodec(
                f"metadata header: codec id {codec_id} is unknown (0 None, 1 zlib are known)"
            )
        if level > MAX_CLEVEL:
            raise FormatError(f"metadata header: level {level} out of range 0..{MAX_CLEVEL}")
        return MetadataHeader(
            magic_format=magic.strip(b"\x00 "),
            meta_options=format(options, "08b"),
            meta_checksum=_checksum_name(checksum_id, "metadata header"),
            meta_codec=META_CODECS[codec_id],
            meta_level=level,
            meta_size=size,
            max_meta_size=max_size,
            meta_comp_size=comp_size,
            user_codec=user_codec.strip(b"\x00"),
        )


__all__ = [
    "BLOSCPACK_HEADER_LENGTH",
    "FORMAT_VERSION",
    "MAGIC",
    "METADATA_HEADER_LENGTH",
    "BloscpackHeader",
    "MetadataHeader",
    "create_options",
    "decode_options",
    "header_typesize",
    "sniff",
]
