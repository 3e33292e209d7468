"""The order record of a ``.blp`` file: which digest each chunk position holds.

The 0.16 format ties no digest to a position, so chunks of the same size swapped together with
their digests read as valid.  A file written with ``order_record=True`` keeps, after its last
chunk, the first bytes of every chunk's digest in chunk order and a 32-byte footer::

    | tag0 | tag1 | ... | nchunks int64 | chunks_end int64 | tag_size uint32 | crc32 uint32 |
    | b'BLPORDER' |

``chunks_end`` is where the record starts (the end of the last chunk's digest) and the CRC
covers the tags and the footer's first 20 bytes.  bloscpack 0.16 ignores bytes after the last
chunk; an append by 0.16 leaves the record stale (its ``nchunks`` or ``chunks_end`` no longer
match: it is then not used), one by this library truncates it.
"""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

from ...io.sources import ByteSource

MAGIC = b"BLPORDER"
FOOTER = struct.Struct("<qqII8s")
#: Digest bytes kept per chunk (fewer when the checksum is shorter).
MAX_TAG = 8


class OrderRecord(NamedTuple):
    """A record found at the end of a file: what its footer says, and its ``tags`` (None when
    the CRC does not match)."""

    nchunks: int
    chunks_end: int
    tag_size: int
    tags: list[bytes] | None

    def describes(self, nchunks: int, chunks_end: int, digest_size: int) -> bool:
        """Whether the record is of the file as it is (not left over from another state)."""
        return (self.nchunks, self.chunks_end, self.tag_size) == (
            nchunks, chunks_end, min(digest_size, MAX_TAG))  # fmt: skip


def tag_size(digest_size: int) -> int:
    """Bytes of each chunk's digest the record keeps."""
    return min(digest_size, MAX_TAG)


def encode_record(tags: list[bytes], chunks_end: int, size: int) -> bytes:
    """The record of chunks whose digests begin with ``tags`` (of ``size`` bytes each), to be
    written at ``chunks_end``."""
    body = b"".join(tags)
    head = FOOTER.pack(len(tags), chunks_end, size, 0, MAGIC)[:20]
    crc = zlib.crc32(body + head) & 0xFFFFFFFF
    return body + FOOTER.pack(len(tags), chunks_end, size, crc, MAGIC)


def read_record(source: ByteSource, size: int) -> OrderRecord | None:
    """The order record ending the ``size`` bytes of ``source``, or None if there is none."""
    if size < FOOTER.size:
        return None
    nchunks, chunks_end, tags_size, crc, magic = FOOTER.unpack(
        source.read(size - FOOTER.size, FOOTER.size, "order record")
    )
    if magic != MAGIC:
        return None
    length = nchunks * tags_size
    if not 0 < tags_size <= MAX_TAG or nchunks < 0 or chunks_end + length + FOOTER.size != size:
        return OrderRecord(nchunks, chunks_end, tags_size, None)
    body = bytes(source.read(chunks_end, length, "order record"))
    head = FOOTER.pack(nchunks, chunks_end, tags_size, 0, MAGIC)[:20]
    if zlib.crc32(body + head) & 0xFFFFFFFF != crc:
        return OrderRecord(nchunks, chunks_end, tags_size, None)
    tags = [body[i : i + tags_size] for i in range(0, length, tags_size)]
    return OrderRecord(nchunks, chunks_end, tags_size, tags)
