"""The Python API for ``.blp`` files: bloscpack 0.16's functions, with the same signatures,
defaults and return values, plus :func:`save_blp`/:func:`load_blp` (used by
:func:`bloscpack.save`/:func:`bloscpack.load`) and
:func:`rewrite_metadata`.

Files are written through :func:`bloscpack.io.atomic_write` (no partial output on error) and
read through memory maps; file-to-file work streams chunk by chunk.  Arrays are decompressed
straight into the array that is returned.
"""

from __future__ import annotations

import contextlib
import functools
import os
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

import numpy as np

from . import engine
from . import ndarray as nd
from .containers.bloscpack.args import (
    DEFAULT_CHECKSUM,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_CLEVEL,
    DEFAULT_MAX_APP_CHUNKS,
    DEFAULT_SHUFFLE,
    BloscArgs,
    BloscpackArgs,
    MetadataArgs,
    array_chunk_size,
    calculate_nchunks,
)
from .containers.bloscpack.header import header_typesize
from .containers.bloscpack.reader import BloscpackReader, load, read_array, reading
from .containers.bloscpack.writer import (
    BloscpackWriter,
    check_blosc_args,
    compress_chunks,
    rewrite_metadata,
)
from .errors import (
    FileNotFound,
    FormatError,
    TruncatedError,
)
from .io import ByteSource, PathLike, atomic_write, sized_input

Buffer = Any


# --- argument handling --------------------------------------------------------------------


def _blosc_args(value: BloscArgs | Mapping[str, Any] | None) -> BloscArgs:
    """A private copy (0.16 mutated the caller's object; we do not)."""
    if value is None:
        return BloscArgs()
    if isinstance(value, BloscArgs):
        return value.copy()
    return BloscArgs(**dict(value))


def _bloscpack_args(value: BloscpackArgs | Mapping[str, Any] | None) -> BloscpackArgs:
    if value is None:
        return BloscpackArgs()
    if isinstance(value, BloscpackArgs):
        return value
    return BloscpackArgs(**dict(value))


def _metadata_args(value: MetadataArgs | Mapping[str, Any] | None) -> MetadataArgs | None:
    if value is None or isinstance(value, MetadataArgs):
        return value
    return MetadataArgs(**dict(value))


def _arguments(
    blosc_args: Any, bloscpack_args: Any, metadata_args: Any
) -> tuple[BloscArgs, BloscpackArgs, MetadataArgs | None]:
    return _blosc_args(blosc_args), _bloscpack_args(bloscpack_args), _metadata_args(metadata_args)


def _array_arguments(
    dtype: np.dtype, blosc_args: Any, bloscpack_args: Any, metadata_args: Any
) -> tuple[BloscArgs, BloscpackArgs, MetadataArgs | None]:
    """The arguments to pack an array of ``dtype`` with: the chunks' typesize follows it."""
    blosc, bloscpack, metadata = _arguments(blosc_args, bloscpack_args, metadata_args)
    blosc.typesize = nd.chunk_typesize(dtype, blosc.blosc_version)
    return blosc, bloscpack, metadata


# --- the packing pipeline -----------------------------------------------------------------


def _pack(
    chunks: Callable[[int, int, int], Iterator[Buffer]],
    size: int,
    out: IO[bytes],
    chunk_size: str | int,
    metadata: Any,
    blosc_args: BloscArgs,
    bloscpack_args: BloscpackArgs,
    metadata_args: MetadataArgs | None,
) -> None:
    """Cut ``size`` bytes into chunks (``chunks(nchunks, chunk_size, last_chunk)`` yields
    their bytes), compress them and write the container to ``out``.  Everything that can be
    checked is checked before the first byte is written."""
    nchunks, chunk_size, last_chunk = calculate_nchunks(size, chunk_size)
    check_blosc_args(blosc_args)
    writer = BloscpackWriter(
        out,
        chunk_size=chunk_size,
        last_chunk=last_chunk,
        nchunks=nchunks,
        typesize=header_typesize(blosc_args.typesize),
        checksum=bloscpack_args.checksum,
        offsets=bloscpack_args.offsets,
        max_app_chunks=bloscpack_args.max_app_chunks,
        metadata=metadata,
        metadata_args=metadata_args,
    )
    with contextlib.closing(
        compress_chunks(chunks(nchunks, chunk_size, last_chunk), blosc_args, nchunks)
    ) as compressed:
        for chunk in compressed:
            writer.write_chunk(chunk, trusted=True)
    writer.close()


def _buffer_chunks(buffer: Buffer) -> Callable[[int, int, int], Iterator[memoryview]]:
    view = memoryview(buffer)
    if view.ndim != 1 or view.format != "B":
        view = view.cast("B")

    def chunks(nchunks: int, chunk_size: int, last_chunk: int) -> Iterator[memoryview]:
        for i in range(nchunks):
            start = i * chunk_size
            yield view[start : start + (last_chunk if i == nchunks - 1 else chunk_size)]

    return chunks


def _file_chunks(fp: IO[bytes], name: str) -> Callable[[int, int, int], Iterator[memoryview]]:
    """Chunks read from ``fp`` into as many reused buffers as chunks are compressed at once
    (memory stays flat)."""

    def chunks(nchunks: int, chunk_size: int, last_chunk: int) -> Iterator[memoryview]:
        in_flight = engine.IN_FLIGHT_PER_WORKER * engine.get_nthreads()
        buffers = [memoryview(bytearray(chunk_size)) for _ in range(min(in_flight, nchunks))]
        for i in range(nchunks):
            buffer = buffers[i % len(buffers)]
            want = last_chunk if i == nchunks - 1 else chunk_size
            got = fp.readinto(buffer[:want])  # type: ignore[attr-defined]
            while got < want:
                more = fp.readinto(buffer[got:want])  # type: ignore[attr-defined]
                if not more:
                    raise TruncatedError(f"{name}: the input ended early (it changed while read?)")
                got += more
            yield buffer[:want]

    return chunks


def _write_file(out_file: PathLike | IO[bytes], write: Callable[[IO[bytes]], None]) -> None:
    """Write to a path through a temporary file, or to a binary file object at its position."""
    if hasattr(out_file, "write"):
        write(out_file)  # type: ignore[arg-type]
        return
    with atomic_write(out_file) as fh:
        write(fh)


def _bytes_packer(
    bytes_: Buffer, chunk_size: str | int, metadata: Any, blosc_args: Any, bloscpack_args: Any,
    metadata_args: Any,
) -> Callable[[IO[bytes]], None]:  # fmt: skip
    """A function writing the ``.blp`` container of the bytes-like ``bytes_`` to a file object
    (the arguments are checked at once)."""
    args = _arguments(blosc_args, bloscpack_args, metadata_args)
    size = memoryview(bytes_).nbytes
    return lambda out: _pack(_buffer_chunks(bytes_), size, out, chunk_size, metadata, *args)


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
    args = _arguments(blosc_args, bloscpack_args, metadata_args)
    with sized_input(in_file) as name:
        with ByteSource(name) as probe:  # raises FileNotFound with the path
            size = probe.size()
        with open(name, "rb") as fp:
            _write_file(
                out_file,
                lambda out: _pack(_file_chunks(fp, name), size, out, chunk_size, metadata, *args),
            )


def unpack_file_from_file(in_file: PathLike, out_file: PathLike) -> Any:
    """Decompress the ``.blp`` file ``in_file`` into ``out_file``; return its metadata (or
    None).  Nothing is written if the input is damaged."""
    with reading(in_file) as reader:
        metadata = reader.metadata

        def write(out: IO[bytes]) -> None:
            for data in reader.iter_decompressed():
                out.write(data)

        _write_file(out_file, write)
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
    _write_file(out_file, packer)


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
    name = os.fspath(in_file)
    try:
        mapped = np.load(name, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise FileNotFound(f"file {name!r} does not exist") from None
    except ValueError as exc:
        raise FormatError(f"{name}: not a .npy file numpy can map: {exc}") from None
    if not isinstance(mapped, np.memmap):
        raise FormatError(f"{name}: not a .npy file")
    array = nd.contiguous(mapped)  # a mapped .npy is C- or F-contiguous: nothing is read
    metadata = nd.encode_metadata(array)
    args = _array_arguments(array.dtype, blosc_args, bloscpack_args, metadata_args)
    chunk_size = array_chunk_size(chunk_size, array.nbytes, array.dtype.itemsize)
    size, offset = array.nbytes, mapped.offset
    del array, mapped
    with open(name, "rb") as fp:
        fp.seek(offset)
        _write_file(
            out_file,
            lambda out: _pack(_file_chunks(fp, name), size, out, chunk_size, metadata, *args),
        )


def _pack_ndarray(
    array: Any,
    out: IO[bytes],
    chunk_size: str | int,
    blosc_args: BloscArgs | None,
    bloscpack_args: BloscpackArgs | None,
    metadata_args: MetadataArgs | None,
) -> None:
    array = np.asarray(array)
    metadata = nd.encode_metadata(array)
    args = _array_arguments(array.dtype, blosc_args, bloscpack_args, metadata_args)
    view = nd.byte_view(nd.contiguous(array))
    chunk_size = array_chunk_size(chunk_size, view.nbytes, array.dtype.itemsize)
    _pack(_buffer_chunks(view), view.nbytes, out, chunk_size, metadata, *args)


def pack_ndarray_to_file(
    ndarray: Any,
    filename: PathLike,
    chunk_size: str | int = DEFAULT_CHUNK_SIZE,
    blosc_args: BloscArgs | None = None,
    bloscpack_args: BloscpackArgs | None = None,
    metadata_args: MetadataArgs | None = None,
) -> None:
    """Store a numpy array in the ``.blp`` file ``filename`` (typesize = item size)."""
    _write_file(filename, lambda out: _pack_ndarray(ndarray, out, chunk_size, blosc_args,
                                                    bloscpack_args, metadata_args))  # fmt: skip


def pack_ndarray_to_bytes(
    ndarray: Any,
    chunk_size: str | int = DEFAULT_CHUNK_SIZE,
    blosc_args: BloscArgs | None = None,
    bloscpack_args: BloscpackArgs | None = None,
    metadata_args: MetadataArgs | None = None,
) -> bytes:
    """The ``.blp`` container of a numpy array (identical to the file variant)."""
    return _to_bytes(lambda out: _pack_ndarray(ndarray, out, chunk_size, blosc_args,
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


def save_blp(
    array: Any,
    path: PathLike,
    *,
    chunk_size: str | int = DEFAULT_CHUNK_SIZE,
    clevel: int = DEFAULT_CLEVEL,
    shuffle: bool | int = DEFAULT_SHUFFLE,
    cname: str | None = None,
    codec: str | None = None,
    checksum: str | None = DEFAULT_CHECKSUM,
    offsets: bool = True,
    max_app_chunks: Any = DEFAULT_MAX_APP_CHUNKS,
    blosc_version: int = 1,
    filters: Any = None,
    filters_meta: Any = None,
    use_dict: bool = False,
    blocksize: int = 0,
    metadata_args: MetadataArgs | None = None,
) -> None:
    """Save a numpy array to the ``.blp`` file ``path``.

    Blosc1 chunks (readable by bloscpack 0.16) unless ``blosc_version=2``, which also allows
    ``filters`` (e.g. ``['delta', 'shuffle']``, ``'trunc_prec'``, ``'bytedelta'``),
    ``filters_meta``, ``use_dict`` and item sizes above 255 as the chunks' typesize.
    ``codec`` is an alias of ``cname`` (default blosclz).
    """
    blosc_args = BloscArgs.from_options(
        cname, codec, clevel=clevel, shuffle=shuffle, blosc_version=blosc_version,
        filters=filters, filters_meta=filters_meta, use_dict=use_dict, blocksize=blocksize,
    )  # fmt: skip
    bloscpack_args = BloscpackArgs(
        offsets=offsets, checksum=checksum, max_app_chunks=max_app_chunks
    )
    pack_ndarray_to_file(array, path, chunk_size, blosc_args, bloscpack_args, metadata_args)


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
