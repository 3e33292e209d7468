"""The names of bloscpack 0.16's ``bloscpack.headers`` that :mod:`bloscpack.headers` does not
define itself (it looks them up here when first used): the options bitfields, the integer
codecs of the header fields, and the Blosc chunk header as 0.16's ``OrderedDict``."""

import struct
from collections import OrderedDict
from typing import Any

from ..blosc.header import ChunkHeader
from ..containers.bloscpack.args import MAX_CHUNKS, check_range
from ..containers.bloscpack.header import (
    BloscpackHeader,
    MetadataHeader,
    create_options,
    decode_options,
)
from ..errors import ArgumentError
from .constants import CNAME_MAPPING


def check_options(options: Any) -> None:
    """Raise unless ``options`` is a string of eight 0s and 1s (``TypeError`` for a non-string,
    ``ValueError`` otherwise; both :class:`~bloscpack.errors.ArgumentError`)."""
    if not isinstance(options, str):
        raise ArgumentError(f"'options' must be of type 'str', not {type(options).__name__!r}")
    if len(options) != 8 or set(options) - {"0", "1"}:
        raise ArgumentError(f"'options' must be string of 0s and 1s of length 8, not {options!r}")


def check_options_zero(options: str, indices: Any) -> None:
    """Raise unless the bits of ``options`` at ``indices`` are 0."""
    for i in indices:
        if options[i] != "0":
            raise ArgumentError(f"Element {i} was non-zero when attempting to decode options")


def create_metadata_options() -> str:
    """The metadata options bitfield: no option is defined, ``'00000000'``."""
    return "00000000"


def decode_metadata_options(options: str) -> dict[str, bool]:
    """``{}`` for ``'00000000'``; any set bit raises."""
    check_options(options)
    check_options_zero(options, range(8))
    return {}


def decode_uint8(byte: int) -> int:
    """A byte of a ``bytes`` object (already an int)."""
    return byte


def decode_uint32(fourbyte: bytes) -> int:
    """Little-endian uint32."""
    return int(struct.unpack("<I", fourbyte)[0])


def decode_int32(fourbyte: bytes) -> int:
    """Little-endian int32."""
    return int(struct.unpack("<i", fourbyte)[0])


def decode_int64(eightbyte: bytes) -> int:
    """Little-endian int64."""
    return int(struct.unpack("<q", eightbyte)[0])


def decode_bitfield(byte: int) -> str:
    """``3`` -> ``'00000011'``."""
    return format(byte, "08b")


def decode_magic_string(str_: bytes) -> bytes:
    """A NUL-padded magic without its padding."""
    return str_.strip(b"\x00")


def encode_uint8(byte: int) -> bytes:
    """One byte."""
    return struct.pack("<B", byte)


def encode_uint32(byte: int) -> bytes:
    """Little-endian uint32."""
    return struct.pack("<I", byte)


def encode_int32(fourbyte: int) -> bytes:
    """Little-endian int32."""
    return struct.pack("<i", fourbyte)


def encode_int64(eightbyte: int) -> bytes:
    """Little-endian int64."""
    return struct.pack("<q", eightbyte)


def decode_blosc_header(buffer_: Any) -> "OrderedDict[str, int]":
    """The header of a Blosc chunk as 0.16 returned it: ``version``, ``versionlz``, ``flags``,
    ``typesize``, ``nbytes``, ``blocksize``, ``ctbytes``."""
    header = ChunkHeader.parse(buffer_)
    return OrderedDict(
        (
            ("version", header.version),
            ("versionlz", header.versionlz),
            ("flags", header.flags),
            ("typesize", header.typesize),
            ("nbytes", header.nbytes),
            ("blocksize", header.blocksize),
            ("ctbytes", header.cbytes),
        )
    )


def decode_blosc_flags(byte_: int) -> "OrderedDict[str, Any]":
    """The flags byte of a Blosc1 chunk: shuffles, memcpy, split blocks and codec."""
    return OrderedDict(
        (
            ("byte_shuffle", bool(byte_ & 1)),
            ("pure_memcpy", bool(byte_ >> 1 & 1)),
            ("bit_shuffle", bool(byte_ >> 2 & 1)),
            ("split_blocks", bool(byte_ >> 4 & 1)),
            ("codec", CNAME_MAPPING[byte_ >> 5 & 7]),
        )
    )


__all__ = [
    "MAX_CHUNKS",
    "BloscpackHeader",
    "MetadataHeader",
    "check_options",
    "check_options_zero",
    "check_range",
    "create_metadata_options",
    "create_options",
    "decode_bitfield",
    "decode_blosc_flags",
    "decode_blosc_header",
    "decode_int32",
    "decode_int64",
    "decode_magic_string",
    "decode_metadata_options",
    "decode_options",
    "decode_uint32",
    "decode_uint8",
    "encode_int32",
    "encode_int64",
    "encode_uint32",
    "encode_uint8",
]
