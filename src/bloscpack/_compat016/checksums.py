"""bloscpack 0.16's ``bloscpack.checksums``: the checksum table of the ``.blp`` format
(:mod:`bloscpack.containers.bloscpack.checksums`) and 0.16's helpers to build entries."""

import struct
from collections.abc import Callable
from typing import Any

from ..containers.bloscpack.checksums import (
    CHECKSUMS,
    CHECKSUMS_AVAIL,
    CHECKSUMS_LOOKUP,
    Hash,
    check_valid_checksum,
)


def zlib_hash(func: Callable[[Any], int]) -> tuple[int, Callable[[Any], bytes]]:
    """``(4, digest)`` for a zlib checksum function: the value as little-endian uint32."""

    def hash_(data: Any) -> bytes:
        return struct.pack("<I", func(data) & 0xFFFFFFFF)

    return 4, hash_


def hashlib_hash(func: Callable[..., Any]) -> tuple[int, Callable[[Any], bytes]]:
    """``(digest size, digest)`` for a :mod:`hashlib` constructor."""

    def hash_(data: Any) -> bytes:
        return func(data).digest()

    return func().digest_size, hash_


__all__ = [
    "CHECKSUMS",
    "CHECKSUMS_AVAIL",
    "CHECKSUMS_LOOKUP",
    "Hash",
    "check_valid_checksum",
    "hashlib_hash",
    "zlib_hash",
]
