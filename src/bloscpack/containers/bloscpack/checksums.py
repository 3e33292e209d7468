"""The checksum table of the .blp format (chunk and metadata digests share it).

The id of a checksum is its index in :data:`CHECKSUMS`; the digest of ``adler32``/``crc32`` is
the 32-bit value packed little-endian, the others are raw :mod:`hashlib` digests.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from typing import Any

from ...errors import NoSuchChecksum

try:  # zlib-ng's SIMD adler32/crc32: the same values, several times faster than zlib's
    from zlib_ng import zlib_ng as zlib
except ImportError:  # pragma: no cover - zlib-ng is a dependency; zlib is the fallback
    import zlib  # type: ignore[no-redef]

Buffer = Any  # any object exporting the buffer protocol


class Hash:
    """One checksum: ``name``, digest ``size`` in bytes, and ``hash(data) -> digest bytes``."""

    def __init__(self, name: str, size: int, function: Callable[[Buffer], bytes]) -> None:
        self.name, self.size, self._function = name, size, function

    def __call__(self, data: Buffer) -> bytes:
        return self._function(data)

    def __repr__(self) -> str:
        return f"Hash({self.name!r}, size={self.size})"

    @property
    def id(self) -> int:
        """The id stored in .blp headers."""
        return CHECKSUMS_AVAIL.index(self.name)


def _zlib_hash(function: Callable[[Buffer], int]) -> tuple[int, Callable[[Buffer], bytes]]:
    def digest(data: Buffer) -> bytes:
        return struct.pack("<I", function(data) & 0xFFFFFFFF)

    return 4, digest


def _hashlib_hash(name: str) -> tuple[int, Callable[[Buffer], bytes]]:
    def digest(data: Buffer) -> bytes:
        return hashlib.new(name, data).digest()

    return hashlib.new(name).digest_size, digest


CHECKSUMS: list[Hash] = [
    Hash("None", 0, lambda data: b""),
    Hash("adler32", *_zlib_hash(zlib.adler32)),
    Hash("crc32", *_zlib_hash(zlib.crc32)),
    Hash("md5", *_hashlib_hash("md5")),
    Hash("sha1", *_hashlib_hash("sha1")),
    Hash("sha224", *_hashlib_hash("sha224")),
    Hash("sha256", *_hashlib_hash("sha256")),
    Hash("sha384", *_hashlib_hash("sha384")),
    Hash("sha512", *_hashlib_hash("sha512")),
]
CHECKSUMS_AVAIL: list[str] = [c.name for c in CHECKSUMS]
CHECKSUMS_LOOKUP: dict[str, Hash] = {c.name: c for c in CHECKSUMS}


def check_valid_checksum(checksum: str) -> None:
    """Raise :class:`NoSuchChecksum` unless ``checksum`` names a known checksum."""
    if checksum not in CHECKSUMS_AVAIL:
        raise NoSuchChecksum(
            f"checksum {checksum!r} does not exist; choose one of {', '.join(CHECKSUMS_AVAIL)}"
        )


def get_checksum(checksum: str | int | None) -> Hash:
    """The checksum named ``checksum`` (``None`` means ``'None'``) or with that header id."""
    if checksum is None:
        checksum = "None"
    if isinstance(checksum, int) and not isinstance(checksum, bool):
        if not 0 <= checksum < len(CHECKSUMS):
            raise NoSuchChecksum(
                f"checksum id {checksum} is unknown (known ids: 0..{len(CHECKSUMS) - 1})"
            )
        return CHECKSUMS[checksum]
    check_valid_checksum(checksum)  # type: ignore[arg-type]
    return CHECKSUMS_LOOKUP[checksum]  # type: ignore[index]


__all__ = [
    "CHECKSUMS",
    "CHECKSUMS_AVAIL",
    "CHECKSUMS_LOOKUP",
    "Hash",
    "check_valid_checksum",
    "get_checksum",
]
