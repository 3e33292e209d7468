"""bloscpack 0.16's ``bloscpack.abstract_io``: the source/sink protocol of the 0.16 packing
functions, and :func:`pack`/:func:`unpack` moving chunks from a source to a sink.

A plain source yields the uncompressed chunks, a compressed sink stores the ``.blp`` header,
metadata, offsets and compressed chunks (:mod:`.file_io`: in a file object, :mod:`.memory_io`:
in lists).  A compressed source yields ``(chunk, digest)`` pairs, a plain sink takes the
decompressed data.  Headers and chunks are made by :mod:`bloscpack.containers.bloscpack`.
"""

from collections.abc import Iterator
from typing import Any

from ..containers.bloscpack.args import BloscArgs, MetadataArgs
from ..containers.bloscpack.checksums import Hash
from ..containers.bloscpack.header import BloscpackHeader, header_typesize
from ..containers.bloscpack.writer import check_blosc_args, compress_chunk, pack_arguments
from ..errors import ChecksumMismatch
from .args import _handle_max_apps


def _compress_chunk_str(chunk: Any, blosc_args: BloscArgs) -> bytes:
    return bytes(compress_chunk(chunk, blosc_args))


class PlainSource:
    """Uncompressed chunks: ``configure`` gives the chunking, iterating yields the chunks."""

    chunk_size: int
    last_chunk: int
    nchunks: int

    def configure(self, chunk_size: int, last_chunk: int, nchunks: int) -> None:
        """The chunking the source is read with."""
        self.chunk_size = chunk_size
        self.last_chunk = last_chunk
        self.nchunks = nchunks

    @property
    def compress_func(self) -> Any:
        """``compress(chunk, blosc_args) -> bytes`` for the chunks this source yields."""
        return _compress_chunk_str

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


class CompressedSource:
    """Compressed chunks: iterating yields ``(chunk, digest or None)``; ``metadata``,
    ``nchunks`` and ``checksum_impl`` describe them."""

    metadata: Any = None
    nchunks: int | None = None
    checksum_impl: Hash

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        raise NotImplementedError


class PlainSink:
    """Takes decompressed data: ``put(compressed)`` decompresses one chunk, returns its size."""

    def put(self, compressed: Any) -> int:
        """Decompress and store one chunk."""
        raise NotImplementedError


class CompressedSink:
    """Stores a ``.blp`` container: header, metadata, offsets and the compressed chunks."""

    def configure(self, blosc_args: BloscArgs, bloscpack_header: BloscpackHeader) -> None:
        """The arguments and header of the container to store."""
        self.blosc_args = blosc_args
        self.bloscpack_header = bloscpack_header
        self.checksum_impl = bloscpack_header.checksum_impl
        self.offsets = bloscpack_header.offsets

    def write_bloscpack_header(self) -> None:
        """Store the header."""

    def write_metadata(self, metadata: Any, metadata_args: Any) -> None:
        """Store the metadata section."""

    def init_offsets(self) -> None:
        """Reserve the offsets section."""

    def finalize(self) -> None:
        """Complete the container after the last chunk."""

    def put(self, i: int, compressed: bytes) -> Any:
        """Store chunk ``i``."""

    def do_checksum(self, compressed: Any) -> bytes:
        """The digest of a compressed chunk (``b''`` without checksum)."""
        return self.checksum_impl(compressed) if self.checksum_impl.size > 0 else b""


def pack(
    source: PlainSource,
    sink: CompressedSink,
    nchunks: int,
    chunk_size: int,
    last_chunk: int,
    metadata: Any = None,
    blosc_args: Any = None,
    bloscpack_args: Any = None,
    metadata_args: Any = None,
) -> None:
    """Compress the chunks of ``source`` into ``sink`` with the chunking ``nchunks``,
    ``chunk_size``, ``last_chunk`` (see :func:`~bloscpack.args.calculate_nchunks`)."""
    if not isinstance(source, PlainSource):
        raise TypeError(f"source must be a PlainSource, not {type(source).__name__}")
    if not isinstance(sink, CompressedSink):
        raise TypeError(f"sink must be a CompressedSink, not {type(sink).__name__}")
    blosc_args, bloscpack_args, metadata_args = pack_arguments(
        blosc_args, bloscpack_args, metadata_args
    )
    check_blosc_args(blosc_args)
    if metadata is not None and metadata_args is None:
        metadata_args = MetadataArgs()
    max_app_chunks = _handle_max_apps(
        bloscpack_args.offsets, nchunks, bloscpack_args.max_app_chunks
    )
    header = BloscpackHeader(
        offsets=bloscpack_args.offsets,
        metadata=metadata is not None,
        checksum=bloscpack_args.checksum,
        typesize=header_typesize(blosc_args.typesize),
        chunk_size=chunk_size,
        last_chunk=last_chunk,
        nchunks=nchunks,
        max_app_chunks=max_app_chunks,
    )
    source.configure(chunk_size, last_chunk, nchunks)
    sink.configure(blosc_args, header)
    sink.write_bloscpack_header()
    if metadata is not None:
        sink.write_metadata(metadata, metadata_args)
    sink.init_offsets()
    compress = source.compress_func
    for i, chunk in enumerate(source):
        sink.put(i, compress(chunk, blosc_args))
    sink.finalize()


def unpack(source: CompressedSource, sink: PlainSink) -> None:
    """Verify the digest of each chunk of ``source`` and decompress it into ``sink``."""
    if not isinstance(source, CompressedSource):
        raise TypeError(f"source must be a CompressedSource, not {type(source).__name__}")
    if not isinstance(sink, PlainSink):
        raise TypeError(f"sink must be a PlainSink, not {type(sink).__name__}")
    for i, (compressed, digest) in enumerate(source):
        if digest:
            computed = source.checksum_impl(compressed)
            if digest != computed:
                raise ChecksumMismatch(
                    f"Checksum mismatch detected in chunk {i}, expected: {digest!r},"
                    f" received: {computed!r}"
                )
        sink.put(compressed)


__all__ = [
    "CompressedSink",
    "CompressedSource",
    "PlainSink",
    "PlainSource",
    "pack",
    "unpack",
]
