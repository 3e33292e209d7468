"""One Blosc chunk (v1 or v2 header) stored on its own, read through the container protocol:
a container of one chunk whose bytes are a 1-d ``uint8`` array."""

from __future__ import annotations

from typing import Any

from .. import engine
from ..blosc import partial
from ..blosc.header import ChunkHeader
from ..blosc.layout import validate_chunk
from ..chunks import inspect_chunk, is_chunk
from ..errors import BloscpackError
from ..io.paths import PathLike
from ..io.sources import ByteSource
from .base import (
    ArrayDescription,
    ChunkSizes,
    ContainerFormat,
    ReaderBase,
    StoredMetadata,
)
from .listing import listed


class ChunkReader(ReaderBase):
    """A file or buffer that is one Blosc chunk."""

    format = "chunk"
    nchunks = 1

    def __init__(self, source: ByteSource) -> None:
        self.source = source
        self.name = source.name
        try:
            nbytes = ChunkHeader.parse(source.read_upto(0, 32)).nbytes
        except BaseException:
            source.close()
            raise
        self.sizes = ChunkSizes.listed([nbytes])
        self.description = ArrayDescription.raw(nbytes)

    def stored_chunk(self, index: int) -> memoryview:
        return chunk_bytes(self.source)

    def check_sizes(self) -> None:
        """The chunk's layout (header, bstarts, streams) checked against the input, so that
        the size its header claims is not allocated for a chunk that cannot hold it."""
        try:
            validate_chunk(self.stored_chunk(0))
        except BloscpackError as exc:
            raise type(exc)(f"{self.name}: chunk 0: {exc}") from None

    @property
    def remote(self) -> bool:
        return self.source.remote

    def stored_chunk_items(self, index: int, lo: int, hi: int) -> memoryview:
        """The chunk, or from a remote input a buffer of its size holding its header, bstarts
        and the streams of the blocks that bytes ``[lo, hi)`` touch (two rounds of requests
        at most: the header when not fetched yet, then the blocks)."""
        if self.source.remote:
            part = partial.source_chunk_items(self.source, 0, self.source.size(), lo, hi,
                                              "Blosc chunk")  # fmt: skip
            if part is not None:
                return part
        return self.stored_chunk(index)

    def metadata(self) -> None:
        """A chunk carries no metadata."""
        return None

    def stored_metadata(self) -> StoredMetadata:
        return StoredMetadata(is_array=False)

    def close(self) -> None:
        self.source.close()


def open_reader(source: Any) -> ChunkReader:
    """The Blosc chunk ``source`` (a path, bytes or a :class:`~bloscpack.io.sources.ByteSource`,
    which the reader then owns) as a :class:`~bloscpack.containers.base.ContainerReader`."""
    return ChunkReader(_source(source))


def _source(source: Any) -> ByteSource:
    return source if isinstance(source, ByteSource) else ByteSource(source)


def chunk_bytes(source: ByteSource) -> memoryview:
    """The bytes of the chunk at the start of ``source`` as far as its header's ``cbytes``
    says (all of a shorter input), never what follows: a file with a hole after its chunk
    costs what the chunk holds."""
    cbytes = ChunkHeader.parse(source.read_upto(0, 32)).cbytes
    return source.read(0, min(max(cbytes, 0), source.size()), "Blosc chunk")


def info(source: PathLike | Any) -> dict[str, Any]:
    """The header of the Blosc chunk ``source`` (a path, bytes or a
    :class:`~bloscpack.io.sources.ByteSource`), as a JSON-able dict."""
    with _source(source) as data:
        return inspect_chunk(chunk_bytes(data))


def verify(source: PathLike | Any) -> dict[str, Any]:
    """Decode the Blosc chunk ``source`` (a path, bytes or a
    :class:`~bloscpack.io.sources.ByteSource`); a report as the formats give."""
    with _source(source) as data:
        try:
            engine.check_decodes(chunk_bytes(data))
        except BloscpackError as exc:
            bad = [{"index": 0, "error": str(exc)}]
            return {"ok": False, "nchunks": 1, "bad_chunks": bad, "problems": []}
    return {"ok": True, "nchunks": 1, "bad_chunks": [], "problems": []}


@listed("chunk")
class ChunkFormat(ContainerFormat):
    """One Blosc chunk stored on its own: read, never written; tried last (its header has no
    magic bytes)."""

    description = "one Blosc chunk"

    def sniff(self, head: bytes) -> bool:
        return is_chunk(head)

    def sniff_source(self, source: ByteSource, head: bytes, *, whole: bool = False) -> bool:
        """A plausible chunk header; ``whole``: a chunk that fills ``source`` exactly."""
        return is_chunk(head, source.size() if whole else None)

    def open_reader(self, source: Any, *, verify: bool = True) -> ChunkReader:
        return open_reader(source)

    def info(self, source: Any) -> dict[str, Any]:
        return info(source)

    def verify(self, source: Any) -> dict[str, Any]:
        return verify(source)


FORMAT = ChunkFormat()

__all__ = ["FORMAT", "ChunkFormat", "ChunkReader", "info", "open_reader", "verify"]
