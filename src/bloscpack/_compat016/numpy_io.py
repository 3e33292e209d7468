"""bloscpack 0.16's ``bloscpack.numpy_io``: numpy arrays as ``.blp`` containers through the
0.16 sources and sinks (:mod:`.abstract_io`).

The metadata of an array is 0.16's (dtype, shape, order, ``container: 'numpy'``, from
:func:`_ndarray_meta`); reading also takes the older forms of the dtype entry.  Arrays are
compressed from and decompressed into their own memory, chunk by chunk.
"""

import io
from collections.abc import Iterator
from typing import IO, Any

import numpy as np

from .. import ndarray as nd
from ..api import pack_ndarray_file, pack_ndarray_str, unpack_ndarray_file, unpack_ndarray_str
from ..blosc.header import ChunkHeader
from ..containers.bloscpack.args import DEFAULT_CHUNK_SIZE, array_chunk_size, calculate_nchunks
from ..containers.bloscpack.writer import array_pack_arguments, write_file
from ..engine import decompress_into
from ..errors import ChunkSizeTypeSizeMismatch, FormatError
from ..ndarray import _lists_to_tuples
from .abstract_io import CompressedSink, CompressedSource, PlainSink, PlainSource, pack, unpack
from .file_io import CompressedFPSink, CompressedFPSource

#: 0.16's name of the conversion of a pre-0.7.2 JSON dtype descr (lists) to a numpy descr.
_conv = _lists_to_tuples


def _ndarray_meta(ndarray: np.ndarray) -> dict[str, Any]:
    """The metadata of ``ndarray``: dtype (as a Python literal), shape, order, container."""
    return nd.encode_metadata(ndarray)


class PlainNumpySource(PlainSource):
    """The chunks of an array's memory (a C-ordered copy if it is not contiguous)."""

    def __init__(self, ndarray: np.ndarray) -> None:
        self.metadata = _ndarray_meta(ndarray)
        self.size = ndarray.size * ndarray.itemsize
        self.ndarray = nd.contiguous(ndarray)
        self._bytes = nd.byte_view(self.ndarray)

    def __iter__(self) -> Iterator[np.ndarray]:
        itemsize = self.ndarray.itemsize
        if itemsize and self.chunk_size % itemsize:
            raise ChunkSizeTypeSizeMismatch(
                f"chunk_size: {self.chunk_size} bytes is not divisible by the item size"
                f" {itemsize} of the array: chunks must hold whole items"
            )
        for i in range(self.nchunks):
            start = i * self.chunk_size
            size = self.chunk_size if i < self.nchunks - 1 else self.last_chunk
            yield self._bytes[start : start + size]


class PlainNumpySink(PlainSink):
    """Decompresses the chunks into a new array, the one ``metadata`` describes
    (:class:`~bloscpack.errors.NotANumpyArray` if it describes none)."""

    def __init__(self, metadata: Any) -> None:
        self.metadata = metadata
        self.ndarray = nd.decode_metadata(metadata).empty()
        self._bytes = nd.byte_view(self.ndarray)
        self._pos = 0

    def put(self, compressed: Any) -> int:
        """Decompress a chunk into the next bytes of the array."""
        nbytes = ChunkHeader.parse(compressed).nbytes
        if nbytes > len(self._bytes) - self._pos:
            raise FormatError(
                f"the chunks hold more than the {len(self._bytes)} bytes of the array"
                f" the metadata describes"
            )
        written = decompress_into(compressed, self._bytes[self._pos : self._pos + nbytes])
        self._pos += written
        return written


def pack_ndarray(ndarray: np.ndarray, sink: CompressedSink,
                 chunk_size: Any = DEFAULT_CHUNK_SIZE, blosc_args: Any = None,
                 bloscpack_args: Any = None, metadata_args: Any = None) -> None:  # fmt: skip
    """Compress ``ndarray`` into ``sink``; the chunks' typesize is the array's item size
    (``blosc_args`` is not modified)."""
    nd.check_storable(ndarray.dtype)
    blosc_args, bloscpack_args, metadata_args = array_pack_arguments(
        ndarray.dtype, blosc_args, bloscpack_args, metadata_args
    )
    source = PlainNumpySource(ndarray)
    chunk_size = array_chunk_size(chunk_size, source.size, ndarray.itemsize)
    pack(source, sink, *calculate_nchunks(source.size, chunk_size), metadata=source.metadata,
         blosc_args=blosc_args, bloscpack_args=bloscpack_args,
         metadata_args=metadata_args)  # fmt: skip


def pack_ndarray_to_file(ndarray: np.ndarray, filename: Any,
                         chunk_size: Any = DEFAULT_CHUNK_SIZE, blosc_args: Any = None,
                         bloscpack_args: Any = None,
                         metadata_args: Any = None) -> None:  # fmt: skip
    """Compress ``ndarray`` into the ``.blp`` file ``filename``."""

    def write(fp: IO[bytes]) -> None:
        pack_ndarray(ndarray, CompressedFPSink(fp), chunk_size, blosc_args, bloscpack_args,
                     metadata_args)  # fmt: skip

    write_file(filename, write)


def pack_ndarray_to_bytes(ndarray: np.ndarray, chunk_size: Any = DEFAULT_CHUNK_SIZE,
                          blosc_args: Any = None, bloscpack_args: Any = None,
                          metadata_args: Any = None) -> bytes:  # fmt: skip
    """The ``.blp`` container of ``ndarray``."""
    sink = io.BytesIO()
    pack_ndarray(ndarray, CompressedFPSink(sink), chunk_size, blosc_args, bloscpack_args,
                 metadata_args)  # fmt: skip
    return sink.getvalue()


def unpack_ndarray(source: CompressedSource) -> np.ndarray:
    """The array the chunks of ``source`` hold."""
    sink = PlainNumpySink(source.metadata)
    unpack(source, sink)
    return sink.ndarray


def unpack_ndarray_from_file(filename: Any) -> np.ndarray:
    """The array in the ``.blp`` file ``filename``."""
    with open(filename, "rb") as fp:
        return unpack_ndarray(CompressedFPSource(fp))


def unpack_ndarray_from_bytes(bytes_: Any) -> np.ndarray:
    """The array in the ``.blp`` container ``bytes_``."""
    return unpack_ndarray(CompressedFPSource(io.BytesIO(bytes_)))


__all__ = [
    "PlainNumpySink",
    "PlainNumpySource",
    "pack_ndarray",
    "pack_ndarray_file",
    "pack_ndarray_str",
    "pack_ndarray_to_bytes",
    "pack_ndarray_to_file",
    "unpack_ndarray",
    "unpack_ndarray_file",
    "unpack_ndarray_from_bytes",
    "unpack_ndarray_from_file",
    "unpack_ndarray_str",
]
