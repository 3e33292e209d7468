"""The geometry of python-blosc2 NDArrays, now :mod:`bloscpack.containers.grid` (the chunk
grid, copies between arrays and chunk buffers, selections) and
:mod:`bloscpack.containers.b2nd.layout` (python-blosc2's default chunk and block shapes): this
module re-exports their names."""

from .containers.b2nd.layout import (
    CHUNK_REDUCTION,
    DEFAULT_BLOCK_NBYTES,
    L3_MAXIMUM,
    L3_MINIMUM,
    CacheSizes,
    default_chunk_nbytes,
    default_chunks_blocks,
    nearest_divisor,
    partition,
)
from .containers.grid import (
    ChunkGrid,
    ChunkProjection,
    Shape,
    array_to_chunk,
    chunk_to_array,
    gather,
    normalize_index,
    project_selection,
    region_is_contiguous,
)

__all__ = [
    "CHUNK_REDUCTION", "DEFAULT_BLOCK_NBYTES", "L3_MAXIMUM", "L3_MINIMUM", "CacheSizes",
    "ChunkGrid", "ChunkProjection", "Shape", "array_to_chunk", "chunk_to_array",
    "default_chunk_nbytes", "default_chunks_blocks", "gather", "nearest_divisor",
    "normalize_index", "partition", "project_selection", "region_is_contiguous",
]  # fmt: skip
