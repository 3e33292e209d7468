"""The command line's ``.blp`` hooks: a file or stream compressed into a new container
(:func:`compress_file`), a container's data written out as stored (:func:`write_stored`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import IO, Any

from ...errors import ArgumentError
from ...io.paths import PathLike, is_stream
from ...io.sources import ByteSource
from ..target import check_user_metadata
from .args import (
    DEFAULT_CHECKSUM,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_CLEVEL,
    DEFAULT_SHUFFLE,
    DEFAULT_TYPESIZE,
    BloscpackArgs,
    MetadataArgs,
)
from .file import BloscFile
from .reader import reading
from .sinks import WriteOptions
from .writer import (
    add_order_record,
    file_chunks,
    pack_npy_file,
    seekable,
    write_container,
)

#: :func:`compress_file` reads a stream a whole chunk at a time (compressed straight from the
#: buffer) up to this chunk size, 1 MiB at a time above it.
_WHOLE_CHUNK_READS = 16 << 20


def compress_file(
    src: PathLike | IO[bytes],
    dst: PathLike | IO[bytes],
    *,
    chunk_size: str | int = DEFAULT_CHUNK_SIZE,
    typesize: int = DEFAULT_TYPESIZE,
    clevel: int = DEFAULT_CLEVEL,
    shuffle: bool | int = DEFAULT_SHUFFLE,
    cname: str | None = None,
    codec: str | None = None,
    checksum: str = DEFAULT_CHECKSUM,
    offsets: bool = True,
    max_app_chunks: Any = None,
    blosc_version: int = 1,
    filters: Any = None,
    filters_meta: Any = None,
    use_dict: bool = False,
    blocksize: int = 0,
    metadata: Any = None,
    metadata_args: MetadataArgs | Mapping[str, Any] | None = None,
    order_record: bool = False,
) -> None:
    """The bytes of ``src`` into a new ``.blp`` container at ``dst``, compressed chunk by chunk
    as they are read (memory stays flat).  ``src`` is a path or a binary stream read to its
    end: a ``.npy`` file is stored as its array (0.16's numpy metadata, plus the ``metadata``
    mapping), a file of known size as bloscpack 0.16's ``pack_file_to_file`` writes it
    (offsets with room for appends), anything else as :class:`BloscFile` writes a stream.
    ``dst`` is a path (replaced atomically) or a binary stream written at its position (one
    that cannot seek gets no offsets section).  Every option is checked before anything is
    read; they mean what they mean for :func:`save_blp`, ``typesize`` being the item size of
    the bytes; ``order_record`` (a path ``dst`` only) also records the chunks' order."""
    if order_record and not isinstance(dst, (str, os.PathLike)):
        raise ArgumentError("order_record=True needs a path to write to, not a stream")
    _compress(src, dst, chunk_size, metadata, metadata_args, order_record, {
        "typesize": typesize, "clevel": clevel, "shuffle": shuffle, "cname": cname,
        "codec": codec, "checksum": checksum, "offsets": offsets,
        "max_app_chunks": max_app_chunks, "blosc_version": blosc_version, "filters": filters,
        "filters_meta": filters_meta, "use_dict": use_dict, "blocksize": blocksize,
    })  # fmt: skip


def _compress(src: PathLike | IO[bytes], dst: PathLike | IO[bytes], chunk_size: Any,
              metadata: Any, metadata_args: Any, order_record: bool,
              given: dict[str, Any]) -> None:  # fmt: skip
    """:func:`compress_file` of the ``given`` options."""
    given = {name: value for name, value in given.items() if value is not None}
    path = os.fspath(src) if isinstance(src, (str, os.PathLike)) else None
    npy = path is not None and path.endswith(".npy")
    user = check_user_metadata(metadata) if npy else None
    write = WriteOptions(chunk_size, None, None, None if npy else metadata, metadata_args, given)
    container = BloscpackArgs(**dict(write.container))
    streamed = not isinstance(dst, (str, os.PathLike)) and not seekable(dst)
    container.offsets = container.offsets and not streamed
    settings = replace(write.settings, bloscpack_args=container, order_record=order_record)
    if path is not None and npy:
        pack_npy_file(path, dst, settings, user)
        return
    if path is not None and not is_stream(path):
        with ByteSource(path) as probe:  # raises FileNotFound naming the path
            size = probe.size()
        with open(path, "rb") as fp:
            write_container(dst, settings, size, 1, metadata, file_chunks(fp, path))
        return
    with contextlib.ExitStack() as stack:
        stream: Any = src if path is None else stack.enter_context(open(path, "rb"))
        blp = stack.enter_context(BloscFile(dst, "wb", chunk_size=chunk_size, metadata=metadata,
                                            metadata_args=metadata_args, **given))  # fmt: skip
        piece = write.chunk_size if write.chunk_size <= _WHOLE_CHUNK_READS else 1 << 20
        buffer = memoryview(bytearray(piece))
        while n := stream.readinto(buffer):
            blp.write(buffer[:n])
    if order_record:  # a stream's container is not written by BlpWriter
        add_order_record(dst)  # type: ignore[arg-type]


def write_stored(source: Any, out: IO[bytes], progress: Any = None,
                 piece: int = 1 << 20) -> Any:  # fmt: skip
    """Write the decompressed data of a ``.blp`` container to ``out``, chunk by chunk, as
    stored; return its metadata.  ``source`` is a path or a readable binary stream (read in
    order, every chunk's checksum verified, ``piece`` bytes at a time); ``progress(n)`` is told
    the bytes written."""
    if isinstance(source, (str, os.PathLike)):
        with reading(source) as reader:
            for data in reader.iter_decompressed():
                out.write(data)
                if progress is not None:
                    progress(len(data))
            return reader.metadata
    with BloscFile(source, "rb") as blp:
        metadata = blp.metadata
        buffer = memoryview(bytearray(piece))
        while True:
            n = blp.readinto(buffer)
            if not n:
                return metadata
            out.write(buffer[:n])
            if progress is not None:
                progress(n)


__all__ = ["compress_file", "write_stored"]
