"""The Blosc chunk format (pure: no I/O, no compression)."""

from .header import ChunkHeader, Filter, Special
from .layout import ChunkLayout, check_header, chunk_layout, validate_chunk

__all__ = ["ChunkHeader", "ChunkLayout", "Filter", "Special", "check_header", "chunk_layout",
           "validate_chunk"]  # fmt: skip
