"""bloscpack 0.16's ``bloscpack.memory_io``: sources and sinks holding chunks in lists (a
compressed container in memory, without its byte layout)."""

from collections.abc import Iterator
from typing import Any

from ..chunks import decompress_chunk
from ..containers.bloscpack.args import BloscArgs
from ..containers.bloscpack.header import BloscpackHeader
from .abstract_io import CompressedSink, CompressedSource, PlainSink, PlainSource


class PlainMemorySource(PlainSource):
    """Uncompressed chunks from a list."""

    def __init__(self, chunks: list[Any]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[Any]:
        yield from self.chunks


class CompressedMemorySource(CompressedSource):
    """The chunks (and digests, metadata) a :class:`CompressedMemorySink` holds."""

    def __init__(self, compressed_memory_sink: "CompressedMemorySink") -> None:
        self.compressed_memory_sink = compressed_memory_sink
        self.checksum_impl = compressed_memory_sink.checksum_impl
        self.checksum = compressed_memory_sink.checksum
        self.nchunks = compressed_memory_sink.nchunks
        self.chunks = compressed_memory_sink.chunks
        if self.checksum:
            self.checksums = compressed_memory_sink.checksums

    @property
    def metadata(self) -> Any:  # type: ignore[override]
        """The metadata the sink was given."""
        return self.compressed_memory_sink.metadata

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        for i in range(self.nchunks or 0):
            yield self.chunks[i], self.checksums[i] if self.checksum else None


class PlainMemorySink(PlainSink):
    """Decompressed chunks in the list ``chunks`` (of ``nchunks`` entries if given)."""

    def __init__(self, nchunks: int | None = None) -> None:
        self.have_chunks = nchunks is not None
        self.chunks: list[Any] = [None] * nchunks if nchunks is not None else []
        self.i = 0

    def put(self, compressed: Any) -> int:
        """Decompress a chunk and keep it."""
        chunk = bytes(decompress_chunk(compressed))
        if self.have_chunks:
            self.chunks[self.i] = chunk
            self.i += 1
        else:
            self.chunks.append(chunk)
        return len(chunk)


class CompressedMemorySink(CompressedSink):
    """Compressed chunks in the list ``chunks`` (digests in ``checksums``), the metadata
    as given."""

    def configure(self, blosc_args: BloscArgs, bloscpack_header: BloscpackHeader) -> None:
        """The arguments and header of the chunks to keep."""
        super().configure(blosc_args, bloscpack_header)
        self.checksum = bloscpack_header.checksum
        self.nchunks = bloscpack_header.nchunks
        self.chunks: list[Any] = [None] * self.nchunks
        if self.checksum:
            self.checksums: list[Any] = [None] * self.nchunks
        self.metadata: Any = None
        self.metadata_args: Any = None

    def write_metadata(self, metadata: Any, metadata_args: Any) -> None:
        """Keep the metadata."""
        self.metadata = metadata
        self.metadata_args = metadata_args

    def put(self, i: int, compressed: bytes) -> None:
        """Keep chunk ``i`` and its digest."""
        self.chunks[i] = compressed
        if self.checksum:
            self.checksums[i] = self.do_checksum(compressed)


__all__ = [
    "CompressedMemorySink",
    "CompressedMemorySource",
    "PlainMemorySink",
    "PlainMemorySource",
]
