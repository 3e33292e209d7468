"""Frames through the container protocol (:class:`FrameReader`, :func:`open_reader`) and the
reads of a whole frame: :func:`info`, :func:`verify` (:func:`unopened_report` when it does not
open), :func:`load_bytes`, :func:`read_all`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ... import engine
from ...blosc.header import CODEC_NAMES, ChunkHeader
from ...blosc.layout import validate_chunk
from ...errors import ArgumentError, BloscpackError, FormatError
from ...io.paths import PathLike
from ..base import (
    NUMPY_KEYS,
    ArrayDescription,
    ChunkSizes,
    ChunkSpan,
    Compression,
    ReaderBase,
    StoredMetadata,
)
from .contiguous import ContiguousFrame
from .edit import FrameBase
from .features import refuse_unmodelled
from .records import unpack_value


def info(path: PathLike) -> dict[str, Any]:
    """JSON-able description of the contiguous frame at ``path``."""
    frame = ContiguousFrame(path)
    try:
        refuse_unmodelled(frame)
        with frame.consistent():
            return frame.info()
    finally:
        frame.close()


def verify(path: PathLike) -> dict[str, Any]:
    """Decode every chunk of the frame at ``path``; ``{"format": "b2frame", "ok", ...}``."""
    try:
        frame = ContiguousFrame(path)
    except BloscpackError as exc:
        return unopened_report("b2frame", exc)
    try:
        refuse_unmodelled(frame)
    except BloscpackError as exc:
        frame.close()
        return unopened_report("b2frame", exc)
    try:
        with frame.consistent():
            return {"format": "b2frame", **frame.verify()}
    finally:
        frame.close()


def unopened_report(fmt: str, exc: BaseException) -> dict[str, Any]:
    """The ``verify`` report of a container of format ``fmt`` that could not be opened."""
    return {"format": fmt, "ok": False, "nchunks": 0, "bad_chunks": [], "problems": [str(exc)]}


def frame_compression(core: Any) -> Compression:
    """The codec and level a frame's header records for its chunks."""
    cparams = core.cparams
    return Compression(CODEC_NAMES.get(cparams.codec, f"codec {cparams.codec}"), cparams.clevel)


class CoreChunks:
    """The chunk reads of a reader over an open frame, its ``core`` (what the frame formats'
    readers share)."""

    core: Any
    sizes: ChunkSizes
    nchunks: int

    def stored_chunk(self, index: int) -> memoryview | bytes:
        return self.core.read_chunk(index)

    def stored_chunk_items(self, index: int, lo: int, hi: int) -> memoryview | bytes:
        return self.core.read_chunk_items(index, lo, hi)

    def decode_chunk_items(self, index: int, lo: int, hi: int, dest: np.ndarray) -> bool:
        return bool(self.core.decode_chunk_items(index, lo, hi, self.sizes.of(index, self.nchunks),
                                                 dest))  # fmt: skip

    def prefetch(self, indices: Sequence[int]) -> None:
        self.core.prefetch(indices)

    @property
    def remote(self) -> bool:
        return bool(self.core.at_url)


class FrameReader(CoreChunks, ReaderBase):
    """A contiguous or sparse frame through the container protocol (``format`` ``b2frame`` or
    ``sframe``): its chunks, special entries synthesized; numpy metadata in its vlmetalayers
    (as :func:`bloscpack.save` writes them) make it an array, else its bytes are 1-d uint8."""

    def __init__(self, core: Any) -> None:
        """``core``: an open :class:`ContiguousFrame` or sparse frame, which the reader owns."""
        self.core = core
        try:
            refuse_unmodelled(core)
            self.format = "sframe" if core.sparse else "b2frame"
            self.name = core.name
            self.nchunks = n = core.nchunks
            header = core.header
            if header.chunksize > 0:
                if n and not (n - 1) * header.chunksize < header.nbytes <= n * header.chunksize:
                    raise FormatError(
                        f"{core.name}: {n} chunks of chunksize {header.chunksize} cannot hold"
                        f" the {header.nbytes} bytes the header announces"
                    )
                self.sizes = ChunkSizes.uniform(header.chunksize, header.nbytes)
            else:
                self.sizes = ChunkSizes.listed([core.chunk_nbytes(i) for i in range(n)])
                if self.sizes.total != header.nbytes:
                    raise FormatError(
                        f"{core.name}: chunks hold {self.sizes.total} bytes, the header"
                        f" announces {header.nbytes}"
                    )
            names = {name for name, _ in core.vlmeta}
            numpy = self._vlmeta() if names.issuperset(NUMPY_KEYS) else None
            try:
                self.description = ArrayDescription.from_metadata(numpy, header.nbytes)
            except FormatError as exc:
                raise type(exc)(f"{core.name}: vlmetalayers: {exc}") from None
            self._numpy = numpy
        except BaseException:
            core.close()
            raise

    def compression(self) -> Compression:
        return frame_compression(self.core)

    def _vlmeta(self) -> dict[str, Any]:
        return {name: value for name, (_, value) in vlmeta_items(self.core).items()}

    def metadata(self) -> dict[str, Any]:
        """The numpy metadata when the vlmetalayers hold it, else all vlmetalayers."""
        return self._numpy if self._numpy is not None else self._vlmeta()

    def stored_metadata(self) -> StoredMetadata:
        items = vlmeta_items(self.core)
        stored = StoredMetadata.of_bytes_or_array(
            {name: value for name, (_, value) in items.items()}, "vlmetalayer",
            metalayers=list(self.core.metalayers), typesize=self.core.header.typesize,
        )  # fmt: skip
        stored.packed = {name: items[name][0] for name in stored.user}
        return stored

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        return self.core.consistent()

    def close(self) -> None:
        self.core.close()


def scan(reader: Any) -> Iterator[ChunkSpan]:
    """:meth:`~bloscpack.containers.base.ContainerFormat.scan` of a frame's reader (its
    ``core``): each chunk's place in the frame file or its chunk file, checked as reads check
    it; a special entry as the chunk C-Blosc2 synthesizes for it (no bytes of a file)."""
    core = reader.core
    with core.consistent():
        for i in range(core.nchunks):
            entry = core.entry(i)
            if entry < 0:
                chunk = core.chunk_at(i, entry)
                yield ChunkSpan(i, None, 0, len(chunk), ChunkHeader.parse(chunk))
            else:
                path, offset, header = core.stored_span(i, entry)
                yield ChunkSpan(i, path, offset, header.cbytes, header)


def vlmeta_items(core: FrameBase) -> dict[str, tuple[bytes, Any]]:
    """Every vlmetalayer of a frame: its stored msgpack bytes and its value."""
    items = {}
    for name, _ in core.vlmeta:
        packed = bytes(core.vlmeta_raw(name))
        items[name] = packed, unpack_value(packed, f"{core.name}: vlmetalayer {name!r}")
    return items


def open_reader(source: Any) -> FrameReader:
    """The contiguous frame ``source`` (a path, bytes, a :class:`~bloscpack.io.sources.ByteSource`
    or an open frame, which the reader then owns) as a
    :class:`~bloscpack.containers.base.ContainerReader`."""
    return FrameReader(source if isinstance(source, FrameBase) else ContiguousFrame(source))


def load_bytes(path: PathLike) -> bytes:
    """The concatenated data of every chunk of the frame at ``path``."""
    frame = ContiguousFrame(path)
    try:
        refuse_unmodelled(frame)
        return read_all(frame).tobytes()
    finally:
        frame.close()


def read_all(frame: FrameBase, out: Any = None) -> Any:
    """Decompress every chunk of ``frame`` into ``out`` (a writable buffer of ``nbytes``) or a
    new uint8 numpy array; returns the destination.  Sizes are checked against nbytes."""
    total = frame.header.nbytes
    if out is None:
        try:
            out = np.empty(total, dtype=np.uint8)
        except MemoryError:
            raise FormatError(
                f"{frame.name}: header announces {total} bytes of data, too many to allocate"
            ) from None
    view = memoryview(out).cast("B")
    if len(view) < total:
        raise ArgumentError(f"out holds {len(view)} bytes, the frame has {total}")
    pos = 0
    for i in range(frame.nchunks):
        chunk = frame.read_chunk(i)
        header = validate_chunk(chunk)
        if pos + header.nbytes > total:
            raise FormatError(
                f"{frame.name}: chunks hold more than the {total} bytes the header announces"
            )
        engine.decompress_into(chunk, view[pos : pos + header.nbytes], validated=True)
        pos += header.nbytes
    if pos != total:
        raise FormatError(f"{frame.name}: chunks hold {pos} bytes, the header announces {total}")
    return out
