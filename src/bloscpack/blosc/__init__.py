"""The Blosc chunk format (pure: no I/O, no compression)."""

import importlib
from typing import TYPE_CHECKING, Any

from .header import ChunkHeader, Filter, Special

if TYPE_CHECKING:
    from .layout import ChunkLayout, check_header, chunk_layout, validate_chunk

#: The names of :mod:`.layout` (which imports numpy), imported when first used: the command
#: line reads the header's tables without numpy.
_LAYOUT = ("ChunkLayout", "check_header", "chunk_layout", "validate_chunk")


def __getattr__(name: str) -> Any:
    if name not in _LAYOUT:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(".layout", __name__), name)


__all__ = ["ChunkHeader", "ChunkLayout", "Filter", "Special", "check_header", "chunk_layout",
           "validate_chunk"]  # fmt: skip
