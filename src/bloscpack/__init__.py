"""bloscpack: read and write every container format of the Blosc family."""

# ruff: noqa: E402 (the start-up guard of blpk comes before the imports)
from ._startup import guard_cli_start as _guard_cli_start

_guard_cli_start()  # blpk: a signal during the imports below exits with one line

from . import append, errors
from .api import (  # the bloscpack 0.16 API
    BloscArgs,
    BloscpackArgs,
    MetadataArgs,
    pack_bytes_file,
    pack_bytes_to_bytes,
    pack_bytes_to_file,
    pack_file,
    pack_file_to_file,
    pack_ndarray_file,
    pack_ndarray_str,
    pack_ndarray_to_bytes,
    pack_ndarray_to_file,
    rewrite_metadata,
    unpack_bytes_file,
    unpack_bytes_from_bytes,
    unpack_bytes_from_file,
    unpack_file,
    unpack_file_from_file,
    unpack_ndarray_file,
    unpack_ndarray_from_bytes,
    unpack_ndarray_from_file,
    unpack_ndarray_str,
)
from .array import BloscArray, open
from .blosc import ChunkHeader
from .chunks import (
    compress_chunk,
    decompress_chunk,
    decompress_chunk_items,
    inspect_chunk,
    is_chunk,
)
from .containers.bloscpack.file import BloscFile, open_file
from .containers.frame.api import Frame
from .convert import convert
from .dispatch import AppendModule as _AppendModule
from .dispatch import detect, info, load, save, verify
from .errors import *  # noqa: F403
from .errors import __all__ as _error_names
from .group import Group
from .integrations.dask import to_dask, to_dask_dataframe
from .integrations.pandas import read_table

# bloscpack.append: 0.16's module (bloscpack.append.append_fp, ...), and called, the append of
# every format that grows (bloscpack.dispatch.append)
append.__class__ = _AppendModule

__version__ = "1.0.0"

__all__ = [
    "append",
    "BloscFile",
    "ChunkHeader",
    "convert",
    "detect",
    "info",
    "load",
    "save",
    "verify",
    "compress_chunk",
    "decompress_chunk",
    "decompress_chunk_items",
    "inspect_chunk",
    "is_chunk",
    "Frame",
    "BloscArray",
    "Group",
    "open",
    "errors",
    "open_file",
    "read_table",
    "to_dask",
    "to_dask_dataframe",
    *_error_names,
    "BloscArgs",
    "BloscpackArgs",
    "MetadataArgs",
    "pack_bytes_file",
    "pack_bytes_to_bytes",
    "pack_bytes_to_file",
    "pack_file",
    "pack_file_to_file",
    "pack_ndarray_file",
    "pack_ndarray_str",
    "pack_ndarray_to_bytes",
    "pack_ndarray_to_file",
    "rewrite_metadata",
    "unpack_bytes_file",
    "unpack_bytes_from_bytes",
    "unpack_bytes_from_file",
    "unpack_file",
    "unpack_file_from_file",
    "unpack_ndarray_file",
    "unpack_ndarray_from_bytes",
    "unpack_ndarray_from_file",
    "unpack_ndarray_str",
]
