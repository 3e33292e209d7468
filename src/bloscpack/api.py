"""The Python API for ``.blp`` files: bloscpack 0.16's functions, with the same signatures,
defaults and return values, plus :func:`save_blp`/:func:`load_blp` and
:func:`rewrite_metadata`, whose bodies live in :mod:`bloscpack.containers.bloscpack`.

Files are written through :func:`bloscpack.io.staging.atomic_write` (no partial output on error) and
read through memory maps; file-to-file work streams chunk by chunk.  Arrays are decompressed
straight into the array that is returned.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from .containers.bloscpack.args import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_TYPESIZE,
    BloscArgs,
    BloscpackArgs,
    MetadataArgs,
)
from .containers.bloscpack.reader import BloscpackReader, load, read_array, reading
from .containers.bloscpack.writer import (
    BlpSettings,
    buffer_chunks,
    file_chunks,
    pack,
    pack_arguments,
    pack_ndarray,
    pack_npy_file,
    rewrite_metadata,
    save_blp,
    write_file,
)
from .io.copies import sized_input
from .io.paths import PathLike
from .io.sources import ByteSource

Buffer = Any


def _bytes_packer(
    bytes_: Buffer, chunk_size: str | int, metadata: Any, blosc_args: Any, bloscpack_args: Any,
    metadata_args: Any,
) -> Callable[[IO[bytes]], None]:  # fmt: skip
    """A function writing the ``.blp`` container of the bytes-like ``bytes_`` to a file object
    (the arguments are checked at once)."""
    args = pack_arguments(blosc_args, bloscpack_args, metadata_args)
    size = memoryview(bytes_).nbytes
    return lambda out: pack(buffer_chunks(bytes_), size, out, chunk_size, metadata, *args)


def _to_bytes(write: Callable[[IO[bytes]], None]) -> bytes:
    import io

    sink = io.BytesIO()
    write(sink)
    return sink.getvalue()


# --- files and bytes ----------------------------------------------------------------------


def pack_file_to_file(
    in_file: PathLike,
    out_file: PathLike | IO[bytes],
    chunk_size: str | int = DEFAULT_CHUNK_SIZE,
    metadata: Any = None,
    blosc_args: BloscArgs | None = None,
    bloscpack_args: BloscpackArgs | None = None,
    metadata_args: MetadataArgs | None = None,
) -> None:
    """Compress the file ``in_file`` into the ``.blp`` file ``out_file``, chunk by chunk.

    ``out_file`` may also be a binary file object, written at its position (it must be seekable
    unless ``bloscpack_args`` turns the offsets off: the offsets are filled in last)."""
    args = pack_arguments(blosc_args, bloscpack_args, metadata_args)
    with sized_input(in_file) as name:
        with ByteSource(name) as probe:  # raises FileNotFound with the path
            size = probe.size()
        with open(name, "rb") as fp:
            write_file(
                out_file,
                lambda out: pack(file_chunks(fp, name), size, out, chunk_size, metadata, *args),
            )


def unpack_file_from_file(in_file: PathLike, out_file: PathLike) -> Any:
    """Decompress the ``.blp`` file ``in_file`` into ``out_file``; return its metadata (or
    None).  Nothing is written if the input is damaged."""
    with reading(in_file) as reader:
        metadata = reader.metadata

        def write(out: IO[bytes]) -> None:
            for data in reader.iter_decompressed():
                out.write(data)

        write_file(out_file, write)
    return metadata


def pack_bytes_to_file(
    bytes_: Buffer,
    out_file: PathLike,
    chunk_size: str | int = DEFAULT_CHUNK_SIZE,
    metadata: Any = None,
    blosc_args: BloscArgs | None = None,
    bloscpack_args: BloscpackArgs | None = None,
    metadata_args: MetadataArgs | None = None,
) -> None:
    """Compress the bytes-like ``bytes_`` into the ``.blp`` file ``out_file``."""
    packer = _bytes_packer(bytes_, chunk_size, metadata, blosc_args, bloscpack_args, metadata_args)
    write_file(out_file, packer)


def unpack_bytes_from_file(compressed_file: PathLike) -> tuple[bytes, Any]:
    """``(data, metadata_or_None)`` of the ``.blp`` file ``compressed_file``."""
    with reading(compressed_file) as reader:
        return bytes(reader.read_all()), reader.metadata


def pack_bytes_to_bytes(
    bytes_: Buffer,
    chunk_size: str | int = DEFAULT_CHUNK_SIZE,
    metadata: Any = None,
    blosc_args: BloscArgs | None = None,
    bloscpack_args: BloscpackArgs | None = None,
    metadata_args: MetadataArgs | None = None,
) -> bytes:
    """The ``.blp`` container of the bytes-like ``bytes_`` (identical to the file variant)."""
    return _to_bytes(
        _bytes_packer(bytes_, chunk_size, metadata, blosc_args, bloscpack_args, metadata_args)
    )


def unpack_bytes_from_bytes(bytes_: Buffer) -> tuple[bytes, Any]:
    """``(data, metadata_or_None)`` of the ``.blp`` container ``bytes_``."""
    with BloscpackReader(ByteSource(bytes_)) as reader:
        return bytes(reader.read_all()), reader.metadata


# --- numpy arrays -------------------------------------------------------------------------


def pack_npy_file_to_file(
    in_file: PathLike,
    out_file: PathLike | IO[bytes],
    chunk_size: str | int = DEFAULT_CHUNK_SIZE,
    blosc_args: BloscArgs | None = None,
    bloscpack_args: BloscpackArgs | None = None,
    metadata_args: MetadataArgs | None = None,
) -> None:
    """Store the array of the ``.npy`` file ``in_file`` in the ``.blp`` file ``out_file`` (a path
    or a binary file object, as for :func:`pack_file_to_file`): the bytes
    ``pack_ndarray_to_file(numpy.load(in_file), ...)`` writes, 0.16's numpy metadata included,
    with the data read chunk by chunk (memory stays flat whatever the array's size)."""
    blosc, bloscpack, metadata = pack_arguments(blosc_args, bloscpack_args, metadata_args)
    blosc.typesize = DEFAULT_TYPESIZE  # the array's item size replaces it
    pack_npy_file(in_file, out_file, BlpSettings(blosc, bloscpack, metadata, chunk_size))


def pack_ndarray_to_file(
    ndarray: Any,
    filename: PathLike,
    chunk_size: str | int = DEFAULT_CHUNK_SIZE,
    blosc_args: BloscArgs | None = None,
    bloscpack_args: BloscpackArgs | None = None,
    metadata_args: MetadataArgs | None = None,
) -> None:
    """Store a numpy array in the ``.blp`` file ``filename`` (typesize = item size)."""
    write_file(filename, lambda out: pack_ndarray(ndarray, out, chunk_size, blosc_args,
                                                    bloscpack_args, metadata_args))  # fmt: skip


def pack_ndarray_to_bytes(
    ndarray: Any,
    chunk_size: str | int = DEFAULT_CHUNK_SIZE,
    blosc_args: BloscArgs | None = None,
    bloscpack_args: BloscpackArgs | None = None,
    metadata_args: MetadataArgs | None = None,
) -> bytes:
    """The ``.blp`` container of a numpy array (identical to the file variant)."""
    return _to_bytes(lambda out: pack_ndarray(ndarray, out, chunk_size, blosc_args,
                                               bloscpack_args, metadata_args))  # fmt: skip


def unpack_ndarray_from_file(filename: PathLike) -> np.ndarray:
    """The numpy array stored in the ``.blp`` file ``filename``."""
    with reading(filename) as reader:
        return read_array(reader)


def unpack_ndarray_from_bytes(bytes_: Buffer) -> np.ndarray:
    """The numpy array stored in the ``.blp`` container ``bytes_``."""
    with BloscpackReader(ByteSource(bytes_)) as reader:
        return read_array(reader)


# --- save / load --------------------------------------------------------------------------


def load_blp(path: PathLike) -> np.ndarray:
    """The array in the ``.blp`` file ``path``; a file without (complete) numpy metadata comes
    back as its bytes in a ``uint8`` array."""
    return load(path)


# --- deprecated 0.16 aliases --------------------------------------------------------------


def _deprecated(function: Callable[..., Any], old_name: str) -> Callable[..., Any]:
    message = (
        f"Call to deprecated function {old_name}. (Use '{function.__name__}' instead)"
        " -- Deprecated since version 0.16.0."
    )

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return function(*args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = old_name
    return wrapper


pack_file = _deprecated(pack_file_to_file, "pack_file")
unpack_file = _deprecated(unpack_file_from_file, "unpack_file")
pack_bytes_file = _deprecated(pack_bytes_to_file, "pack_bytes_file")
unpack_bytes_file = _deprecated(unpack_bytes_from_file, "unpack_bytes_file")
pack_ndarray_file = _deprecated(pack_ndarray_to_file, "pack_ndarray_file")
unpack_ndarray_file = _deprecated(unpack_ndarray_from_file, "unpack_ndarray_file")
pack_ndarray_str = _deprecated(pack_ndarray_to_bytes, "pack_ndarray_str")
unpack_ndarray_str = _deprecated(unpack_ndarray_from_bytes, "unpack_ndarray_str")

__all__ = [
    "BloscArgs",
    "BloscpackArgs",
    "MetadataArgs",
    "load_blp",
    "pack_bytes_file",
    "pack_bytes_to_bytes",
    "pack_bytes_to_file",
    "pack_file",
    "pack_file_to_file",
    "pack_ndarray_file",
    "pack_ndarray_str",
    "pack_ndarray_to_bytes",
    "pack_ndarray_to_file",
    "pack_npy_file_to_file",
    "rewrite_metadata",
    "save_blp",
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
