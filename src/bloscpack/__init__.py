"""bloscpack: read and write every container format of the Blosc family."""

# ruff: noqa: E402 (the start-up guard of blpk comes before the imports)
from ._startup import guard_cli_start as _guard_cli_start

_guard_cli_start()  # blpk: a signal during the imports below exits with one line

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from . import chunkmanagers, errors
from .errors import *  # noqa: F403
from .errors import __all__ as _error_names

if TYPE_CHECKING:  # imported when first used (module __getattr__ below): blpk starts fast
    from . import append
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
    from .convert import convert  # (at run time: the module bloscpack.convert, callable)
    from .dispatch import detect, info, load, save, verify
    from .group import Group
    from .integrations.dask import to_dask, to_dask_dataframe
    from .integrations.pandas import read_table
    from .references import to_references, verify_references, write_references

#: The module each public name comes from, imported when the name is first used.
_SOURCES = {
    **dict.fromkeys(
        (
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
        ),
        ".api",
    ),
    "BloscArray": ".array",
    "open": ".array",
    "ChunkHeader": ".blosc",
    **dict.fromkeys(
        (
            "compress_chunk",
            "decompress_chunk",
            "decompress_chunk_items",
            "inspect_chunk",
            "is_chunk",
        ),
        ".chunks",
    ),
    "BloscFile": ".containers.bloscpack.file",
    "open_file": ".containers.bloscpack.file",
    "Frame": ".containers.frame.api",
    **dict.fromkeys(("detect", "info", "load", "save", "verify"), ".dispatch"),
    "to_dask": ".integrations.dask",
    "to_dask_dataframe": ".integrations.dask",
    "read_table": ".integrations.pandas",
    "Group": ".group",
    "to_references": ".references",
    "verify_references": ".references",
    "write_references": ".references",
}


def _to_dask(*args: Any, **options: Any) -> Any:
    """The chunk manager ``"dask"`` until :mod:`bloscpack.integrations.dask`, imported on the
    first call, registers its own."""
    from .integrations.dask import to_dask

    return to_dask(*args, **options)


chunkmanagers.register("dask", _to_dask)  # what BloscArray.to_dask calls


def __getattr__(name: str) -> Any:
    """A public name, imported from its module when first used; else a submodule
    (``bloscpack.engine``, 0.16's ``bloscpack.args``), imported when first used."""
    source = _SOURCES.get(name)
    if source is not None:
        value = getattr(importlib.import_module(source, __name__), name)
    elif name in __all__ or importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
    "to_references",
    "verify_references",
    "write_references",
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
