"""New frames: the one-pass :class:`FrameWriter` (chunks streamed to a temporary file renamed
into place, or bytes in memory), :func:`save_bytes`, :func:`open_writer` (an array's
:class:`~bloscpack.containers.base.ContainerWriter`) and :class:`FrameTarget`, which writes
another container's data (:func:`bloscpack.convert`) as a frame."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from ... import engine
from ... import ndarray as nd
from ...blosc.header import BLOSC2_HEADER_SIZE, MAX_BUFFERSIZE, ChunkHeader
from ...errors import ArgumentError, BloscpackError
from ...io.durability import open_new
from ...io.paths import PathLike
from ...io.staging import CommitsOnSuccess, StagedOutput, atomic_write
from ..base import NUMPY_KEYS, ArrayDescription, WriterBase
from ..options import CompressionParams, chunk_nbytes, parse_size
from ..target import (
    FRAME_CHUNK_NBYTES,
    Target,
    flat_spans,
    kept_metalayers,
    marker_fits,
    numpy_metadata,
    take_options,
    unreserved_user,
    writer_user,
)
from .params import CParams, compress_vlmeta, new_frame_image
from .records import (
    FRAME_CONTIGUOUS,
    HEADER_FIXED_LEN,
    MAX_METALAYERS,
    MAX_NAME_LEN,
    MAX_VLMETALAYERS_WRITE,
    FrameHeader,
    check_new_chunk,
    encode_index,
    general_flags,
    marker_of,
    next_chunksize,
    pack_value,
    put_field,
)


class OnePassWriter(CommitsOnSuccess):
    """What the one-pass frame writers share: ``append_data``, and as a block ``close`` when
    it succeeds and ``abort`` when it raises."""

    cparams: CParams

    def append_chunk(self, chunk: Any) -> int:
        raise NotImplementedError

    def append_data(self, data: Any) -> int:
        """Compress ``data`` with the frame's cparams and append it."""
        return self.append_chunk(self.cparams.compress(data))

    def close(self) -> Any:
        raise NotImplementedError

    def commit(self) -> None:
        self.close()


class FrameWriter(OnePassWriter):
    """Write a new contiguous frame in one pass: chunks are streamed to a temporary file next
    to ``path`` and the index, trailer and header are written by :meth:`close`, which renames
    the file into place (a failed write leaves nothing behind).  ``path=None`` builds the frame
    in memory (:meth:`close` returns its bytes).

    The result is byte-identical to appending the same chunks one by one with C-Blosc2
    (header ``nthreads`` fields aside, which are given here).  ``in_place``: ``path`` is new
    and private already (a staged output), written directly.
    """

    def __init__(
        self, path: PathLike | None, cparams: CParams, *, chunksize: int | None = None,
        metalayers: Sequence[tuple[str, bytes]] = (), vlmeta: Sequence[tuple[str, bytes]] = (),
        nthreads: int = 1, vlmeta_chunks: Sequence[tuple[str, bytes]] = (),
        in_place: bool = False,
    ) -> None:  # fmt: skip
        self.cparams = cparams
        vl = [(name, compress_vlmeta(bytes(content))) for name, content in vlmeta]
        vl += [(name, bytes(chunk)) for name, chunk in vlmeta_chunks]
        empty = new_frame_image(FRAME_CONTIGUOUS, cparams, chunksize, metalayers, vl, nthreads)
        head = FrameHeader.parse(empty)
        self._fixed = bytearray(head.raw)
        self._meta = empty[HEADER_FIXED_LEN : head.header_len]
        self._trailer = empty[head.header_len :]
        self._chunksize = head.chunksize
        self._offsets: list[int] = []
        self._nbytes = 0
        self._cbytes = 0
        self._last_nbytes = 0
        self._vl_blocks = False
        self._path = path
        self._cm: Any = None
        if path is not None:
            self._cm = _new_file(path) if in_place else atomic_write(path)
        self._fh: Any = self._cm.__enter__() if self._cm is not None else None
        self._buffer = bytearray()
        self._out(empty[: head.header_len])
        self._closed = False

    def _out(self, data: Any) -> None:
        if self._fh is not None:
            self._fh.write(data)
        else:
            self._buffer += data

    @property
    def nchunks(self) -> int:
        return len(self._offsets)

    def append_chunk(self, chunk: Any) -> int:
        """Append a compressed Blosc2 chunk; returns the number of chunks."""
        data, header = check_new_chunk(chunk)
        return self._add(data, header)

    def add_written(self, head: bytes) -> int:
        """Count the next chunk, whose header is ``head`` and whose stored bytes (those of
        :func:`frame_stored`) are written to :attr:`file` by the caller; returns the number of
        chunks."""
        return self._add(None, ChunkHeader.parse(head))

    @property
    def file(self) -> IO[bytes]:
        """The file the frame is written to (at the end of the chunks written so far)."""
        if self._fh is None:
            raise ArgumentError("a frame built in memory has no file")
        return self._fh  # type: ignore[no-any-return]

    def _add(self, data: Any, header: ChunkHeader) -> int:
        n = len(self._offsets)
        self._chunksize = next_chunksize(self._chunksize, "append", n, n, header.nbytes,
                                         lambda: self._last_nbytes)  # fmt: skip
        if n == 0:
            self._vl_blocks = header.vl_blocks
        marker = marker_of(header)
        if marker is None:
            if data is not None:
                self._out(data)
            self._offsets.append(self._cbytes)
            self._cbytes += header.cbytes
        else:
            self._offsets.append(marker)
        self._nbytes += header.nbytes
        self._last_nbytes = header.nbytes
        return len(self._offsets)

    def close(self) -> bytes | None:
        """Finish the frame; returns its bytes when it was built in memory."""
        if self._closed:
            return None
        self._closed = True
        try:
            index = encode_index(np.asarray(self._offsets, dtype="<i8")) if self._offsets else b""
            self._out(index + self._trailer)
            raw = self._fixed
            raw[25] = general_flags(self._chunksize, self._vl_blocks)
            hl = HEADER_FIXED_LEN + len(self._meta)
            put_field(raw, "frame_len", hl + self._cbytes + len(index) + len(self._trailer))
            put_field(raw, "nbytes", self._nbytes)
            put_field(raw, "cbytes", self._cbytes)
            put_field(raw, "chunksize", self._chunksize)
            if self._fh is not None:
                self._fh.seek(0)
                self._fh.write(raw)
                self._cm.__exit__(None, None, None)
                return None
            self._buffer[:HEADER_FIXED_LEN] = raw
            return bytes(self._buffer)
        except BaseException as exc:
            if self._cm is not None:
                self._cm.__exit__(type(exc), exc, exc.__traceback__)
            raise

    def abort(self) -> None:
        """Discard the frame being written."""
        if not self._closed and self._cm is not None:
            self._closed = True
            err = RuntimeError("frame write aborted")
            with contextlib.suppress(RuntimeError):
                self._cm.__exit__(RuntimeError, err, None)


def frame_stored(chunk: Any) -> tuple[list[Any], bytes]:
    """What a frame's file holds of the compressed ``chunk`` (its bytes; nothing for a
    special chunk, which is an index marker) and what :meth:`FrameWriter.add_written` is
    given for it (its header)."""
    data, header = check_new_chunk(chunk)
    head = bytes(data[:BLOSC2_HEADER_SIZE])
    return ([] if marker_of(header) is not None else [data]), head


@contextlib.contextmanager
def _new_file(path: PathLike) -> Iterator[IO[bytes]]:
    """The new file ``path``, on disk when the block succeeds (its pages handed to the disk
    while it is written: :func:`~bloscpack.io.durability.open_new`)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    with open_new(fd, "wb") as fh:
        yield fh
        fh.flush()
        os.fsync(fh.fileno())


DEFAULT_CHUNKSIZE = 4 * 1024 * 1024


def save_bytes(
    data: Any, path: PathLike, chunksize: int = DEFAULT_CHUNKSIZE, **cparams: Any
) -> None:
    """Store the raw bytes of ``data`` (any buffer) in a new contiguous frame at ``path``,
    ``chunksize`` bytes per chunk; ``cparams`` as for :class:`CParams` (typesize default 1)."""
    params = CParams.make(**cparams)
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    mv = memoryview(data).cast("B")
    chunksize = int(chunksize)
    if not 0 < chunksize <= MAX_BUFFERSIZE:
        raise ArgumentError(f"chunksize must be 1..{MAX_BUFFERSIZE}, got {chunksize}")
    chunksize -= chunksize % params.typesize or 0
    if chunksize <= 0:
        raise ArgumentError(f"chunksize must hold at least one item of typesize {params.typesize}")
    with FrameWriter(path, params, chunksize=chunksize) as writer:
        for start in range(0, len(mv), chunksize):
            writer.append_data(mv[start : start + chunksize])


def refused(dtype: np.dtype, shape: tuple[int, ...]) -> str | None:
    """Why a frame cannot hold an array of ``dtype`` and ``shape``, or None."""
    if dtype.itemsize == 0 and 0 not in shape:
        return f"dtype {dtype} has items of 0 bytes, which a frame's chunks cannot hold"
    return None


def own_options(params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
    """The common options as a frame writer's: ``chunks`` as ``chunksize`` (bytes),
    ``filters`` as filter ids."""
    return params.own(rest, chunks=("chunksize", lambda c: chunk_nbytes(c, dtype, shape, "frame")),
                      chunk_size=("chunksize", lambda n: parse_size(n, "chunk_size")),
                      blocks=("blocksize",
                              lambda b: chunk_nbytes(b, dtype, shape, "frame", "blocks")),
                      filters=("filters", list))  # fmt: skip


def packed_user(source: Any, dropped: list[str], room: int, reserved: Sequence[str] = ()
                 ) -> list[tuple[str, bytes]]:  # fmt: skip
    """User metadata as frame vlmetalayers (msgpack bytes), at most ``room`` of them."""
    layers: list[tuple[str, bytes]] = []
    for name, value in unreserved_user(source, dropped, reserved):
        if len(name.encode("utf-8")) > MAX_NAME_LEN:
            dropped.append(f"{source.meta.entry} {name!r}: frame vlmetalayer names hold at most"
                           f" {MAX_NAME_LEN} bytes")  # fmt: skip
            continue
        if len(layers) >= room:
            dropped.append(f"{source.meta.entry} {name!r}: a frame holds at most {room} user"
                           " vlmetalayers here")  # fmt: skip
            continue
        packed = source.meta.packed.get(name)
        if packed is None:
            try:
                packed = pack_value(value)
            except (TypeError, ValueError, OverflowError) as exc:
                dropped.append(f"{source.meta.entry} {name!r}: msgpack cannot hold it ({exc})")
                continue
        layers.append((name, packed))
    return layers


def user_vlmeta(metadata: Any, fmt: str, used: int, reserved: Sequence[str] = ()
                ) -> list[tuple[str, bytes]]:  # fmt: skip
    """The user ``metadata`` of a new ``fmt`` frame holding ``used`` vlmetalayers already, as
    its conversion target packs it (:func:`packed_user`); what it cannot hold is refused."""
    if metadata is None:
        return []
    layers: list[tuple[str, bytes]] = writer_user(
        metadata, fmt, lambda source, dropped: packed_user(
            source, dropped, MAX_VLMETALAYERS_WRITE - used, reserved))  # fmt: skip
    return layers


#: The options of a new frame of flat chunks (contiguous or sparse) and their defaults.
OPTIONS: dict[str, Any] = {
    "chunksize": None, "typesize": None, "codec": "zstd", "clevel": 5,
    "filters": (0, 0, 0, 0, 0, 1), "filters_meta": (0, 0, 0, 0, 0, 0), "codec_meta": 0,
    "splitmode": "auto", "blocksize": 0, "use_dict": False, "nthreads": None,
}  # fmt: skip


@dataclass(frozen=True)
class FrameSettings:
    """What a new frame of flat chunks (contiguous or sparse) is written with, checked before
    anything is written: the chunks' compression, their size in bytes (None: the default, or
    in a conversion the source's chunks) and the header's ``nthreads`` (None: the threads in
    effect when the frame is written, :func:`bloscpack.engine.get_nthreads`, as b2nd records
    them)."""

    cparams: CParams
    chunksize: int | None = None
    nthreads: int | None = None

    @classmethod
    def parse(cls, options: Mapping[str, Any], fmt: str, itemsize: int,
              typesize: int | None = None) -> FrameSettings:  # fmt: skip
        """The settings ``options`` (names of :data:`OPTIONS`) ask for a new ``fmt`` frame of
        items of ``itemsize`` bytes, the chunks' typesize by default ``typesize`` (where
        known), else the item size (at most 255)."""
        opts = take_options(dict(options), OPTIONS, fmt)
        typesize = opts.pop("typesize") or typesize or min(max(itemsize, 1), 255)
        threads = opts.pop("nthreads")
        nthreads = None if threads is None else int(threads)
        size = opts.pop("chunksize")
        try:
            chunksize = None if size is None else int(size)
        except (TypeError, ValueError):
            chunksize = 0
        if chunksize is not None and chunksize < 1:
            raise ArgumentError(f"chunksize must be a positive number of bytes, got {size!r}")
        try:
            cparams = CParams.make(typesize=typesize, **opts)
        except BloscpackError:
            raise
        except (TypeError, ValueError) as exc:
            raise ArgumentError(str(exc)) from None
        return cls(cparams, chunksize, nthreads)

    def header_nthreads(self) -> int:
        """The ``nthreads`` the header records."""
        return engine.get_nthreads() if self.nthreads is None else self.nthreads

    def chunk_items(self, itemsize: int) -> int:
        """The items of ``itemsize`` bytes a chunk holds: as many whole ones as fit in the
        chunk size (at least one)."""
        size = FRAME_CHUNK_NBYTES if self.chunksize is None else self.chunksize
        return max(1, size // max(itemsize, 1))

    def frame(self, path: PathLike, metalayers: Sequence[tuple[str, bytes]] = (),
              vlmeta: Sequence[tuple[str, bytes]] = (), *,
              in_place: bool = False) -> FrameWriter:  # fmt: skip
        """The one writer of a new contiguous frame at ``path`` (``in_place``: a new private
        file)."""
        return FrameWriter(path, self.cparams, metalayers=metalayers, vlmeta=vlmeta,
                           nthreads=self.header_nthreads(), in_place=in_place)  # fmt: skip


class FrameTarget(Target):
    """A contiguous frame of flat chunks (the base of the sparse frame's); an array's numpy
    metadata goes to the vlmetalayers ``dtype``, ``shape``, ``order``, ``container``."""

    fmt = "b2frame"
    OPTIONS = OPTIONS

    def __init__(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> None:
        super().__init__(source, copy_chunks)
        spec = source.spec
        itemsize = max(spec.dtype.itemsize, 1)
        self.settings = FrameSettings.parse(options, self.fmt, itemsize, source.meta.typesize)
        self.cparams = self.settings.cparams
        if (self.settings.chunksize is None and source.spans
                and self._copyable(source.first_chunk_header())):  # fmt: skip
            self.spans = [span for span in source.spans if span[1]]  # the source's layout
        else:
            self.spans = flat_spans(source.nbytes, self.settings.chunk_items(itemsize) * itemsize)
        vl: list[tuple[str, bytes]] = []
        if source.meta.is_array:
            vl = [(k, pack_value(v)) for k, v in numpy_metadata(spec).items()]
        reserved = NUMPY_KEYS if source.meta.is_array else ()
        self.vlmeta = vl + packed_user(
            source, self.dropped, MAX_VLMETALAYERS_WRITE - len(vl), reserved
        )
        self.layers = kept_metalayers(source, self.dropped, MAX_METALAYERS, True)

    def accepts_format(self, header: ChunkHeader) -> bool:
        return (
            header.extended
            and not header.lazy
            and header.nbytes > 0
            and marker_fits(header, self.cparams.typesize)
        )

    def write(self, path: str) -> None:
        # a chunk trained a dictionary on takes one C thread, as the array writer's do (with
        # several, its bytes depend on how C-Blosc2's threads ran)
        threads = 1 if self.cparams.use_dict else None
        with self.writer(path) as append:

            def put_data(data: memoryview) -> None:
                append(self.cparams.compress(data, threads))

            self._write_spans(self.spans, False, append, put_data)

    @contextlib.contextmanager
    def writer(self, path: str) -> Iterator[Callable[[Any], Any]]:
        """A function appending one chunk to the new frame at ``path`` (the frame is complete
        when the block ends)."""
        with self.settings.frame(path, self.layers, self.vlmeta) as frame:
            yield frame.append_chunk


@dataclass(frozen=True)
class FrameLayout:
    """A frame's chunks of an array: runs of ``chunks[0]`` items, compressed with ``cparams``
    (one C thread, so the bytes never depend on the thread count)."""

    cparams: CParams
    nchunks: int
    chunks: tuple[int, ...]
    flat = True

    def compress_chunk(self, index: int, data: np.ndarray) -> bytearray:
        return self.cparams.compress(np.ascontiguousarray(data).view(np.uint8), nthreads=1)

    def compressed_chunks(self, data: np.ndarray) -> Iterator[memoryview]:
        """The compressed chunks of the whole flat ``data``, in order, each valid until the
        next is asked for (:func:`~bloscpack.engine.compress_in_order`; a lone chunk with all
        C threads, the bytes of :meth:`compress_chunk`)."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        step = self.chunks[0] * data.dtype.itemsize
        workers, threads = engine.chunk_threads(self.nchunks, self.cparams.use_dict)

        def compress(start: int, dest: np.ndarray) -> int:
            return self.cparams.compress_into(raw[start : start + step], dest, threads)

        return engine.compress_in_order(compress, range(0, raw.size, step),
                                        step + BLOSC2_HEADER_SIZE, workers)  # fmt: skip

    def stored(self, chunk: Any) -> tuple[list[Any], bytes]:
        """:func:`frame_stored`."""
        return frame_stored(chunk)


def array_layout(
    fmt: str, description: ArrayDescription, options: dict[str, Any], metadata: Any = None
) -> tuple[FrameSettings, FrameLayout, list[tuple[str, bytes]]]:
    """The settings, the layout and the vlmetalayers (the numpy metadata, then the user
    ``metadata``) of a new frame of the array ``description`` (``options``: :data:`OPTIONS`)."""
    settings = FrameSettings.parse(options, fmt, description.dtype.itemsize)
    items = settings.chunk_items(description.dtype.itemsize)
    nitems = int(np.prod(description.shape, dtype=np.int64))
    layout = FrameLayout(settings.cparams, -(-nitems // items), (items,))
    spec = nd.ArraySpec(description.dtype, description.shape, description.order)
    vlmeta = [(k, pack_value(v)) for k, v in numpy_metadata(spec).items()]
    vlmeta += user_vlmeta(metadata, fmt, len(vlmeta), NUMPY_KEYS)
    return settings, layout, vlmeta


class FrameArrayWriter(WriterBase):
    """A new contiguous frame of an array, written by ``frame`` at ``output.path``, its chunks
    those of ``layout`` (:func:`open_writer`, also for NDArrays)."""

    def __init__(self, output: StagedOutput, layout: Any, frame: FrameWriter) -> None:
        super().__init__(output)
        self.layout = layout
        self._frame = frame

    def append_chunk(self, chunk: Any) -> None:
        self._frame.append_chunk(chunk)

    def _add_written(self, receipt: Any) -> IO[bytes]:
        self._frame.add_written(receipt)
        return self._frame.file

    def _finish(self) -> None:
        self._frame.close()

    def _discard(self) -> None:
        self._frame.abort()


def open_writer(output: StagedOutput, description: ArrayDescription, *, metadata: Any = None,
                **options: Any) -> FrameArrayWriter:  # fmt: skip
    """A :class:`~bloscpack.containers.base.ContainerWriter` of a new frame of the array
    ``description`` at ``output.path``: flat chunks, the numpy metadata and the user
    ``metadata`` as vlmetalayers."""
    settings, layout, vlmeta = array_layout("b2frame", description, options, metadata)
    return FrameArrayWriter(output, layout, settings.frame(output.path, (), vlmeta, in_place=True))


ConversionTarget = FrameTarget
