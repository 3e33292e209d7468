"""The ``b2nd`` metalayer record, now :mod:`bloscpack.containers.b2nd.meta` (the array geometry
check, now in :mod:`bloscpack.containers.grid`): this module re-exports their names."""

from .containers.b2nd.meta import (
    DTYPE_FORMAT_NUMPY,
    MAX_DTYPE_STRING,
    METALAYER_NAME,
    METALAYER_VERSION,
    B2ndMeta,
    dtype_from_string,
    dtype_to_string,
    pack_metalayer,
)
from .containers.grid import MAX_BLOCK_NBYTES, MAX_CHUNK_NBYTES, MAX_DIM, check_geometry

__all__ = [
    "DTYPE_FORMAT_NUMPY", "MAX_BLOCK_NBYTES", "MAX_CHUNK_NBYTES", "MAX_DIM", "MAX_DTYPE_STRING",
    "METALAYER_NAME", "METALAYER_VERSION", "B2ndMeta", "check_geometry", "dtype_from_string",
    "dtype_to_string", "pack_metalayer",
]  # fmt: skip
