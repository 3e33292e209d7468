"""The Blosc chunk format (pure: no I/O, no compression)."""

from .header import ChunkHeader, Filter, Special
from .layout import validate_chunk

__all__ = ["ChunkHeader", "Filter", "Special", "validate_chunk"]
