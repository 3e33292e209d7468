"""Walk and validate the layout of a Blosc chunk before any byte of it reaches C."""

from __future__ import annotations

from typing import Any

from ..errors import ChunkError, TruncatedError
from .header import MAX_BLOCKSIZE, MAX_BUFFERSIZE, ChunkHeader, Special


def validate_chunk(chunk: Any) -> ChunkHeader:
    """Check a chunk's header sizes against its buffer; return the parsed header.

    Raises :class:`~bloscpack.errors.ChunkError` (or ``TruncatedError``) naming the field.
    """
    mv = memoryview(chunk).cast("B")
    header = ChunkHeader.parse(mv)
    if header.typesize == 0 and header.special != Special.VALUE:
        raise ChunkError("Blosc chunk header: typesize 0")
    if not 0 <= header.nbytes <= MAX_BUFFERSIZE:
        raise ChunkError(f"Blosc chunk header: nbytes {header.nbytes} out of range")
    if header.cbytes < header.size:
        raise ChunkError(f"Blosc chunk header: cbytes {header.cbytes} smaller than the header")
    if header.cbytes > len(mv):
        raise TruncatedError(
            f"Blosc chunk truncated: header says cbytes {header.cbytes}, buffer has {len(mv)}"
        )
    if header.nbytes and not 0 < header.blocksize <= MAX_BLOCKSIZE:
        raise ChunkError(f"Blosc chunk header: blocksize {header.blocksize} out of range")
    if header.memcpyed and header.special == Special.NONE:
        if header.cbytes != header.nbytes + header.size:
            raise ChunkError(
                f"memcpyed Blosc chunk: cbytes {header.cbytes} != nbytes {header.nbytes}"
                f" + {header.size}"
            )
    return header
