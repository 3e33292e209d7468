"""Writing a ``.blp`` file: chunk compression, :class:`BloscpackWriter` (header, metadata
section and offsets exactly as bloscpack 0.16 wrote them), the in-place metadata rewrite, the
writer's options for conversions (:func:`own_options`, :class:`BlpTarget`), the packing
pipeline of the 0.16 functions, and :class:`BlpWriter`, the one writer of a new file at a path
(:func:`save_blp`, :class:`BlpTarget`, :func:`~.compress.compress_file` and
:func:`open_writer`, an array's :class:`~bloscpack.containers.base.ContainerWriter`) with
its options read once (:class:`BlpSettings`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import IO, Any

import numpy as np

from ... import engine
from ... import ndarray as nd
from ...blosc.header import FILTER_IDS, MAX_TYPESIZE, ChunkHeader, Filter
from ...blosc.layout import validate_chunk
from ...errors import (
    ArgumentError,
    FileNotFound,
    FormatError,
    NoChangeInMetadata,
    NoMetadataFound,
    TruncatedError,
)
from ...io.durability import open_new
from ...io.paths import PathLike
from ...io.staging import StagedOutput, atomic_write, is_written_in_place
from ..base import NUMPY_KEYS, ArrayDescription, WriterBase
from ..options import CompressionParams, chunk_nbytes, parse_size, save_options, shuffle_only
from ..target import (
    Target,
    flat_spans,
    json_user,
    kept_metalayers,
    numpy_metadata,
    take_options,
    writer_user,
)
from .args import (
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
    check_range,
    handle_max_app_chunks,
)
from .checksums import check_valid_checksum, get_checksum
from .header import BLOSCPACK_HEADER_LENGTH, BloscpackHeader, MetadataHeader, header_typesize
from .order import encode_record, tag_size
from .preamble import OFFSET, encode_offsets, metadata_section, replacement_metadata_section
from .reader import BloscpackReader

Buffer = Any  # any object exporting the buffer protocol


def _filter_ids(filters: Sequence[int | str]) -> list[int]:
    ids = []
    for item in filters:
        if isinstance(item, str):
            if item.lower() not in FILTER_IDS:
                raise ArgumentError(f"unknown filter {item!r}; known: {', '.join(FILTER_IDS)}")
            ids.append(FILTER_IDS[item.lower()])
        else:
            ids.append(int(item))
    if len(ids) > 6:
        raise ArgumentError(f"at most 6 filters, got {len(ids)}")
    return [0] * (6 - len(ids)) + ids


def shuffle_code(shuffle: bool | int) -> int:
    """0.16's ``shuffle`` (True/False) or a Blosc code (0 none, 1 byte, 2 bit)."""
    code = int(shuffle)
    if code not in (0, 1, 2):
        raise ArgumentError(f"shuffle must be True/False or 0, 1 (byte), 2 (bit), not {shuffle!r}")
    return code


def compress_chunk(data: Buffer, blosc_args: BloscArgs, *, nthreads: int | None = None
                   ) -> bytes | bytearray:  # fmt: skip
    """One Blosc chunk of ``data`` as ``blosc_args`` ask: Blosc1 (readable by bloscpack 0.16)
    unless ``blosc_args.blosc_version == 2``."""
    if blosc_args.blosc_version == 2:
        return engine.compress_blosc2(data, **_blosc2_settings(blosc_args), nthreads=nthreads)
    with engine.blosc1_compressor(**_blosc1_settings(blosc_args)) as compress:
        return compress(data)


def compress_chunks(datas: Iterable[Buffer], blosc_args: BloscArgs, nchunks: int
                    ) -> Generator[bytes | bytearray, None, None]:  # fmt: skip
    """The chunks of the ``nchunks`` buffers of ``datas``, in order, each as
    :func:`compress_chunk` makes it but with one C thread, so that the bytes never depend on
    the thread count (C-Blosc 1.x threads store a chunk's blocks in the order they finish).  Up
    to :func:`~bloscpack.engine.get_nthreads` chunks are compressed at once, one per thread (a
    default Blosc1 chunk of 1 MiB is a single block, which C threads could not share anyway); a
    lone Blosc2 chunk without a dictionary with all C threads (C-Blosc2's blocks are put back in
    order: :func:`~bloscpack.engine.compress_blosc2`).
    A producer may cycle through ``engine.IN_FLIGHT_PER_WORKER * get_nthreads()`` buffers
    (see :func:`~bloscpack.engine.map_in_order`).  Close the generator when leaving early
    (other Blosc1 compressions wait until then)."""
    with _chunk_compressor(blosc_args, nchunks) as (compress, workers, own_threads):
        yield from engine.map_in_order(compress, datas, workers, own_threads=own_threads)


def compress_or_copy(items: Iterable[tuple[Any, Buffer | None, int]], blosc_args: BloscArgs,
                     nchunks: int) -> Generator[tuple[Any, bool, int], None, None]:  # fmt: skip
    """``(chunk, copied, n)`` for each ``(chunk, data, n)`` of ``items`` (``nchunks`` of them):
    a stored chunk to copy as it is (``data`` None), else ``data`` compressed as
    :func:`compress_chunks` compresses it (several at once, so a producer may cycle through
    as many buffers)."""

    with _chunk_compressor(blosc_args, nchunks) as (compress, workers, own_threads):

        def one(item: tuple[Any, Buffer | None, int]) -> tuple[Any, bool, int]:
            chunk, data, n = item
            return (chunk, True, n) if data is None else (compress(data), False, n)

        yield from engine.map_in_order(one, items, workers, own_threads=own_threads)


@contextlib.contextmanager
def _chunk_compressor(blosc_args: BloscArgs, nchunks: int
                      ) -> Iterator[tuple[Callable[[Buffer], Any], int, bool]]:  # fmt: skip
    """How :func:`compress_chunks` compresses ``nchunks`` chunks: the function compressing
    one, the chunks compressed at once and whether on threads of their own."""
    workers = max(1, min(engine.get_nthreads(), nchunks))
    if blosc_args.blosc_version == 2:
        settings = _blosc2_settings(blosc_args)
        c_threads = 1 if nchunks > 1 or blosc_args.use_dict else None

        def compress2(data: Buffer) -> bytearray:
            return engine.compress_blosc2(data, **settings, nthreads=c_threads)

        yield compress2, workers, False
    else:
        settings = _blosc1_settings(blosc_args)
        with engine.blosc1_compressor(**settings, concurrent=True) as compress:
            # threads of its own: Blosc1 work on the shared pool's threads may wait for it
            yield compress, workers, True


def _blosc2_settings(blosc_args: BloscArgs) -> dict[str, Any]:
    shuffle = shuffle_code(blosc_args.shuffle)
    filters = (
        _filter_ids(blosc_args.filters) if blosc_args.filters is not None else [0] * 5 + [shuffle]
    )
    if blosc_args.filters_meta is None:  # bytedelta needs the typesize as its meta
        filters_meta = [blosc_args.typesize if f == Filter.BYTEDELTA else 0 for f in filters]
    else:
        meta = list(blosc_args.filters_meta)
        filters_meta = [0] * (6 - len(meta)) + meta
    return dict(
        typesize=blosc_args.typesize, clevel=blosc_args.clevel, codec=blosc_args.cname,
        filters=filters, filters_meta=filters_meta, blocksize=blosc_args.blocksize,
        use_dict=blosc_args.use_dict,
    )  # fmt: skip


def _blosc1_settings(blosc_args: BloscArgs) -> dict[str, Any]:
    if blosc_args.filters is not None or blosc_args.use_dict:
        raise ArgumentError("filters and dictionaries need Blosc2 chunks: pass blosc_version=2")
    return dict(
        typesize=blosc_args.typesize, clevel=blosc_args.clevel,
        shuffle=shuffle_code(blosc_args.shuffle), codec=blosc_args.cname,
        blocksize=blosc_args.blocksize,
    )  # fmt: skip


def check_blosc_args(blosc_args: BloscArgs) -> None:
    """Raise (before anything is written) unless ``blosc_args`` can compress chunks."""
    limit = nd.MAX_BLOSC1_TYPESIZE if blosc_args.blosc_version == 1 else MAX_TYPESIZE
    check_range("typesize", blosc_args.typesize, 1, limit)
    check_range("clevel", blosc_args.clevel, 0, 9)
    shuffle_code(blosc_args.shuffle)
    if blosc_args.blosc_version == 1:
        known, kind = engine.blosc1_codecs(), "Blosc1 chunks"
    else:
        known, kind = list(engine.WRITABLE_CODECS), "Blosc2 chunks"
    if blosc_args.cname not in known:
        raise engine.codec_error(blosc_args.cname, f".blp files of {kind}", known)
    if blosc_args.filters is not None:
        _filter_ids(blosc_args.filters)


class BloscpackWriter:
    """Writes a ``.blp`` container to the binary file object ``fp``.

    The header, metadata section and a placeholder offsets section are written at once; each
    :meth:`write_chunk` appends one compressed chunk and its digest; :meth:`close` fills in the
    offsets (``fp`` must then be seekable).  ``nchunks=-1`` writes a stream of unknown length
    (no offsets); if ``fp`` is seekable, ``close`` records the real count and last size.
    """

    def __init__(
        self,
        fp: IO[bytes],
        *,
        chunk_size: int,
        last_chunk: int,
        nchunks: int,
        typesize: int,
        checksum: str | None = "adler32",
        offsets: bool = True,
        max_app_chunks: Any = DEFAULT_MAX_APP_CHUNKS,
        metadata: Any = None,
        metadata_args: MetadataArgs | None = None,
    ) -> None:
        checksum = "None" if checksum is None else checksum
        offsets = bool(offsets) and nchunks != -1
        self.header = BloscpackHeader(
            offsets=offsets,
            metadata=metadata is not None,
            checksum=checksum,
            typesize=typesize,
            chunk_size=chunk_size,
            last_chunk=last_chunk,
            nchunks=nchunks,
            max_app_chunks=handle_max_app_chunks(offsets, nchunks, max_app_chunks),
        )
        section = b""
        self.metadata_header: MetadataHeader | None = None
        if metadata is not None:
            section, self.metadata_header = metadata_section(
                metadata, (metadata_args or MetadataArgs()).copy()
            )
        self.fp = fp
        self.checksum = self.header.checksum_impl
        self.offsets: list[int] = []
        self.last_nbytes = -1
        self.offsets_offset = BLOSCPACK_HEADER_LENGTH + len(section)
        slots = self.header.total_prospective_chunks if offsets else 0
        placeholder = OFFSET.pack(-1) * (slots or 0)
        self.chunks_start = self.offsets_offset + len(placeholder)
        self._base = fp.tell() if seekable(fp) else 0
        fp.write(self.header.encode())
        fp.write(section)
        fp.write(placeholder)
        self._pos = self.chunks_start
        self.closed = False

    def write_chunk(self, chunk: Buffer, *, trusted: bool = False) -> int:
        """Append one complete Blosc chunk (and its digest); return its position.

        The chunk's layout is validated unless ``trusted`` (a chunk this process just
        compressed: only its header is read)."""
        header = ChunkHeader.parse(chunk) if trusted else validate_chunk(chunk)
        position = self.add_written(header.nbytes, header.cbytes)
        for part in stored_chunk(chunk, header, self.checksum):
            self.fp.write(part)
        return position

    def add_written(self, nbytes: int, cbytes: int) -> int:
        """Count the next chunk (``nbytes`` uncompressed, ``cbytes`` stored), whose bytes
        and digest the caller writes next; return its position."""
        index = len(self.offsets)
        nchunks = self.header.nchunks
        expected = None if nchunks == -1 else self.header.expected_nbytes(index, nchunks)
        if expected is not None and nbytes != expected:
            raise ArgumentError(
                f"chunk {index} holds {nbytes} bytes, the header prescribes {expected}"
            )
        if self.header.nchunks != -1 and index >= self.header.nchunks:
            raise ArgumentError(f"the header announces {self.header.nchunks} chunks, no more fit")
        position = self._pos
        self._pos += cbytes + self.checksum.size
        self.offsets.append(position)
        self.last_nbytes = nbytes
        return position

    def close(self) -> None:
        """Fill in the offsets (and, for a stream, the real chunk count); leave ``fp`` at the
        end of the container."""
        if self.closed:
            return
        header = self.header
        if header.nchunks != -1 and len(self.offsets) != header.nchunks:
            raise ArgumentError(
                f"{len(self.offsets)} chunks were written, the header announces {header.nchunks}"
            )
        if header.offsets:
            self.fp.seek(self._base + self.offsets_offset)
            self.fp.write(encode_offsets(self.offsets))
            self.fp.seek(self._base + self._pos)
        elif header.nchunks == -1 and seekable(self.fp):
            final = BloscpackHeader(**dict(header))
            final.nchunks = len(self.offsets)
            final.last_chunk = max(self.last_nbytes, 0)
            if final.chunk_size == -1:
                final.chunk_size = final.last_chunk
            self.fp.seek(self._base)
            self.fp.write(final.encode())
            self.fp.seek(self._base + self._pos)
            self.header = final
        self.closed = True

    def __enter__(self) -> BloscpackWriter:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()


def stored_chunk(chunk: Buffer, header: ChunkHeader, checksum: Any) -> list[Any]:
    """The bytes a ``.blp`` file stores for ``chunk`` (of ``header``): the chunk and its
    digest (``checksum``: a :mod:`.checksums` hash)."""
    view = memoryview(chunk).cast("B")[: header.cbytes]
    return [view, checksum(view)]


def seekable(fp: IO[bytes]) -> bool:
    """Whether ``fp`` can seek (False if it cannot tell)."""
    try:
        return bool(fp.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def check_order_record(order_record: bool, checksum: str | None) -> None:
    """Refuse ``order_record=True`` for chunks without digests."""
    if order_record and get_checksum(checksum).size == 0:
        raise ArgumentError("order_record=True needs chunk digests (a checksum other than None)")


def add_order_record(path: PathLike) -> None:
    """Write the order record (:mod:`.order`) after the last chunk of the ``.blp`` file
    ``path``, replacing whatever follows it; the file must store chunk digests."""
    with BloscpackReader(path) as reader:
        size = tag_size(reader.checksum.size)
        if not size:
            raise ArgumentError(
                f"{reader.name}: an order record needs chunk digests (a checksum other than None)"
            )
        tags = [reader.digest(loc.index)[:size] for loc in reader.locations()]
        end = reader.data_end
    with open(path, "r+b") as fh:
        fh.seek(end)
        fh.write(encode_record(tags, end, size))
        fh.truncate()
        fh.flush()
        os.fsync(fh.fileno())


# --- rewriting metadata in place --------------------------------------------------------


def rewrite_metadata(
    path: PathLike,
    metadata: Any,
    *,
    checksum: str | None = None,
    codec: str = "zlib",
    level: int = 6,
) -> None:
    """Replace the metadata of the ``.blp`` file ``path`` in place.

    The new section must fit in the space reserved when the file was written
    (``max_meta_size``); otherwise :class:`MetadataSectionTooSmall` is raised and the file is
    left untouched.  Identical metadata raises :class:`NoChangeInMetadata` (as in 0.16).  The
    section is written with one positioned write and synced.
    """
    import os

    with BloscpackReader(path) as reader:
        if reader.metadata_header is None or reader.metadata_offset is None:
            raise NoMetadataFound(f"{reader.name}: the file has no metadata section to rewrite")
        if reader.metadata == metadata:
            raise NoChangeInMetadata(f"{reader.name}: the metadata has not changed")
        section = replacement_metadata_section(
            metadata, reader.metadata_header, checksum=checksum, codec=codec, level=level
        )
        position = reader.metadata_offset
    fd = os.open(os.fspath(path), os.O_WRONLY)
    try:
        written = os.pwrite(fd, section, position)
        if written != len(section):
            raise OSError(f"short write: {written} of {len(section)} bytes")
        os.fsync(fd)
    finally:
        os.close(fd)


# --- conversions --------------------------------------------------------------------------


def _own_chunk_size(value: int | str) -> int | str:
    """A common ``chunk_size`` as the ``.blp`` writer takes it: a size with a suffix stays text
    (0.16 reads ``'1M'``, its default, its own way), a count of bytes becomes an int."""
    if isinstance(value, str) and not value.isdigit():
        return value
    return parse_size(value, "chunk_size")


def _own_blocksize(blocks: tuple[int, ...], dtype: np.dtype, shape: tuple[int, ...],
                   blosc1: bool) -> int:  # fmt: skip
    """Common ``blocks`` as the bytes of a Blosc2 chunk's blocks (C-Blosc 1.x multiplies a
    forced block size by the typesize when it splits blocks, so Blosc1 chunks refuse it)."""
    if blosc1:
        raise ArgumentError(
            "blocks needs Blosc2 chunks in a .blp file (blosc_version=2): C-Blosc 1.x changes a"
            " forced block size"
        )
    return chunk_nbytes(blocks, dtype, shape, "blp", "blocks")


def own_options(params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
    """The common options as the ``.blp`` writer's: ``chunks`` as ``chunk_size`` (bytes),
    ``filters`` as ``shuffle`` (Blosc1 chunks; ``filters`` with ``blosc_version=2``)."""
    blosc1 = rest.get("blosc_version", 1) == 1
    return params.own(
        rest, chunks=("chunk_size", lambda c: chunk_nbytes(c, dtype, shape, "blp")),
        chunk_size=("chunk_size", _own_chunk_size),
        blocks=("blocksize", lambda b: _own_blocksize(b, dtype, shape, blosc1)),
        filters=("shuffle", lambda f: shuffle_only(f, "blp")) if blosc1 else ("filters", list),
    )  # fmt: skip


#: What a ``.blp`` file's user metadata is called in messages.
BLP_METADATA = "the .blp metadata (JSON)"


class BlpTarget(Target):
    """A ``.blp`` file: the source's numpy metadata and user metadata (JSON) in its metadata
    section; another ``.blp`` file's metadata is kept as it was written."""

    fmt = "blp"
    keeps_any_metadata = True
    OPTIONS = {
        "chunk_size": None, "clevel": DEFAULT_CLEVEL, "shuffle": DEFAULT_SHUFFLE, "cname": None,
        "codec": None, "checksum": DEFAULT_CHECKSUM, "offsets": True,
        "max_app_chunks": DEFAULT_MAX_APP_CHUNKS, "blosc_version": 1, "filters": None,
        "filters_meta": None, "use_dict": False, "blocksize": 0, "metadata_args": None,
        "order_record": False,
    }  # fmt: skip

    def __init__(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> None:
        super().__init__(source, copy_chunks)
        opts = take_options(options, self.OPTIONS, self.fmt)
        typesize = None
        if not source.meta.is_array and source.meta.typesize:  # raw bytes keep their typesize
            limit = nd.MAX_BLOSC1_TYPESIZE if opts["blosc_version"] == 1 else MAX_TYPESIZE
            typesize = min(source.meta.typesize, limit)
        self.settings = BlpSettings.parse(opts, source.spec.dtype, typesize)
        span = source.uniform_span()
        if opts["chunk_size"] is None and span and self._copyable(source.first_chunk_header()):
            self.settings.chunk_size = span
        self.settings.chunk_size = self.settings.chunk_size or DEFAULT_CHUNK_SIZE
        self.settings.chunk_bytes(source.nbytes, source.spec.dtype.itemsize)  # checked now
        self.metadata = self._metadata()
        kept_metalayers(source, self.dropped, 0, False)

    def _metadata(self) -> Any:
        source = self.source
        if source.meta.verbatim is not None:  # .blp to .blp: the metadata as it was written
            return source.meta.verbatim
        if not source.meta.is_array:
            user = json_user(source, BLP_METADATA, self.dropped)
            return user or None
        metadata = numpy_metadata(source.spec)
        metadata.update(json_user(source, BLP_METADATA, self.dropped, NUMPY_KEYS))
        return metadata

    def accepts_format(self, header: ChunkHeader) -> bool:
        if self.settings.blosc_args.blosc_version == 1:
            return header.blosc_version == 1
        return not header.lazy

    def write(self, path: str) -> None:
        source = self.source
        with BlpWriter.create(path, self.settings, source.nbytes, source.spec.dtype.itemsize,
                              self.metadata) as writer:  # fmt: skip
            spans = flat_spans(source.nbytes, writer.header.chunk_size) or [(0, 0)]
            in_flight = engine.IN_FLIGHT_PER_WORKER * engine.get_nthreads()
            items = self._span_items(spans, False, buffers=in_flight)
            with contextlib.closing(writer.compress_or_copy(items)) as chunks:
                for chunk, copied, n in chunks:
                    writer.append_chunk(chunk)
                    self.written(copied, n)


ConversionTarget = BlpTarget


# --- packing: what the 0.16 functions and save_blp write ----------------------------------


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


def metadata_args_of(value: MetadataArgs | Mapping[str, Any] | None) -> MetadataArgs | None:
    """0.16's metadata options from an object, a dict or None (the defaults)."""
    if value is None or isinstance(value, MetadataArgs):
        return value
    return MetadataArgs(**dict(value))


def pack_arguments(
    blosc_args: Any, bloscpack_args: Any, metadata_args: Any
) -> tuple[BloscArgs, BloscpackArgs, MetadataArgs | None]:
    """0.16's three argument objects from objects, dicts or None (the defaults)."""
    return _blosc_args(blosc_args), _bloscpack_args(bloscpack_args), metadata_args_of(metadata_args)


def array_pack_arguments(
    dtype: np.dtype, blosc_args: Any, bloscpack_args: Any, metadata_args: Any
) -> tuple[BloscArgs, BloscpackArgs, MetadataArgs | None]:
    """The arguments to pack an array of ``dtype`` with: the chunks' typesize follows it."""
    blosc, bloscpack, metadata = pack_arguments(blosc_args, bloscpack_args, metadata_args)
    blosc.typesize = nd.chunk_typesize(dtype, blosc.blosc_version)
    return blosc, bloscpack, metadata


def pack(
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
    writer = new_writer(size, out, chunk_size, metadata, blosc_args, bloscpack_args,
                        metadata_args)  # fmt: skip
    write_chunks(writer, chunks, blosc_args)
    writer.close()


def new_writer(
    size: int, out: IO[bytes], chunk_size: str | int, metadata: Any, blosc_args: BloscArgs,
    bloscpack_args: BloscpackArgs, metadata_args: MetadataArgs | None,
) -> BloscpackWriter:  # fmt: skip
    """The writer of a container of ``size`` bytes cut into chunks of ``chunk_size`` (its
    header says how many), once the arguments are checked."""
    nchunks, chunk_size, last_chunk = calculate_nchunks(size, chunk_size)
    check_blosc_args(blosc_args)
    return BloscpackWriter(
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


def buffer_chunks(buffer: Buffer) -> Callable[[int, int, int], Iterator[memoryview]]:
    """Chunks as views into the bytes-like ``buffer``."""
    view = memoryview(buffer)
    if view.ndim != 1 or view.format != "B":
        view = view.cast("B")

    def chunks(nchunks: int, chunk_size: int, last_chunk: int) -> Iterator[memoryview]:
        for i in range(nchunks):
            start = i * chunk_size
            yield view[start : start + (last_chunk if i == nchunks - 1 else chunk_size)]

    return chunks


def file_chunks(fp: IO[bytes], name: str) -> Callable[[int, int, int], Iterator[memoryview]]:
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


def write_file(out_file: PathLike | IO[bytes], write: Callable[[IO[bytes]], None]) -> None:
    """Write to a path through a temporary file, or to a binary file object at its position."""
    if hasattr(out_file, "write"):
        write(out_file)  # type: ignore[arg-type]
        return
    with atomic_write(out_file) as fh:
        write(fh)


def pack_ndarray(
    array: Any,
    out: IO[bytes],
    chunk_size: str | int,
    blosc_args: BloscArgs | None,
    bloscpack_args: BloscpackArgs | None,
    metadata_args: MetadataArgs | None,
) -> None:
    """Write the ``.blp`` container of a numpy array (typesize = item size) to ``out``."""
    array = np.asarray(array)
    metadata = nd.encode_metadata(array)
    args = array_pack_arguments(array.dtype, blosc_args, bloscpack_args, metadata_args)
    view = nd.byte_view(nd.contiguous(array))
    chunk_size = array_chunk_size(chunk_size, view.nbytes, array.dtype.itemsize)
    pack(buffer_chunks(view), view.nbytes, out, chunk_size, metadata, *args)


def pack_npy_file(in_file: PathLike, out_file: PathLike | IO[bytes], settings: BlpSettings,
                  user: Mapping[str, Any] | None = None) -> None:  # fmt: skip
    """Store the array of the ``.npy`` file ``in_file`` in the ``.blp`` file ``out_file`` (a path
    or a binary file object), with the data read chunk by chunk (memory stays flat whatever
    the array's size): the bytes ``pack_ndarray`` writes, 0.16's numpy metadata plus the
    ``user`` entries; ``settings`` as given, the chunks' typesize that of the array's items."""
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
    metadata = {**nd.encode_metadata(array), **(user or {})}
    blosc_args = settings.blosc_args.copy()
    blosc_args.typesize = nd.chunk_typesize(array.dtype, blosc_args.blosc_version)
    settings = replace(settings, blosc_args=blosc_args)
    size, itemsize, offset = array.nbytes, array.dtype.itemsize, mapped.offset
    del array, mapped
    with open(name, "rb") as fp:
        fp.seek(offset)
        write_container(out_file, settings, size, itemsize, metadata, file_chunks(fp, name))


def write_container(out_file: PathLike | IO[bytes], settings: BlpSettings, size: int,
                    itemsize: int, metadata: Any,
                    chunks: Callable[[int, int, int], Iterator[Buffer]]) -> None:  # fmt: skip
    """A new ``.blp`` container of ``size`` bytes (items of ``itemsize`` bytes; the chunks'
    bytes from ``chunks(nchunks, chunk_size, last_chunk)``) with ``metadata``: to a path
    through :class:`BlpWriter`; to a binary file object (or a FIFO or a device, written in
    place) as bloscpack 0.16 wrote it, there (then without an order record)."""
    if not hasattr(out_file, "write") and not is_written_in_place(out_file):  # type: ignore[arg-type]
        with BlpWriter.create(out_file, settings, size, itemsize, metadata) as writer:  # type: ignore[arg-type]
            writer.write_data(chunks)
        return
    if settings.order_record:
        raise ArgumentError(
            f"{_name(out_file)}: order_record=True needs a regular file to write to"
        )
    chunk_size = settings.chunk_bytes(size, itemsize)
    write_file(out_file, lambda out: pack(chunks, size, out, chunk_size, metadata,
                                          settings.blosc_args, settings.bloscpack_args,
                                          settings.metadata_args))  # fmt: skip


def _name(out_file: Any) -> str:
    if isinstance(out_file, (str, os.PathLike)):
        return os.fspath(out_file)
    return str(getattr(out_file, "name", "the output"))


def blosc_args_of(options: Mapping[str, Any]) -> BloscArgs:
    """The chunks' compression that the options of :func:`save_blp` in ``options`` ask for
    (each of them named; other keys are ignored)."""
    return BloscArgs.from_options(
        options["cname"], options["codec"], clevel=options["clevel"], shuffle=options["shuffle"],
        blosc_version=options["blosc_version"], filters=options["filters"],
        filters_meta=options["filters_meta"], use_dict=options["use_dict"],
        blocksize=options["blocksize"],
    )  # fmt: skip


# --- the writer of a new file: save, convert, compress_file, open_writer (dask) ------------


@dataclass
class BlpSettings:
    """What a new ``.blp`` file is written with, checked before anything is written: the
    chunks' compression, the container options, the metadata section's options, the chunk
    size (None: the default) and whether the chunks' order is recorded."""

    blosc_args: BloscArgs
    bloscpack_args: BloscpackArgs
    metadata_args: MetadataArgs | None = None
    chunk_size: str | int | None = None
    order_record: bool = False

    def __post_init__(self) -> None:
        check_blosc_args(self.blosc_args)
        check_valid_checksum(self.bloscpack_args.checksum)
        handle_max_app_chunks(bool(self.bloscpack_args.offsets), 1,
                              self.bloscpack_args.max_app_chunks)  # fmt: skip
        check_order_record(self.order_record, self.bloscpack_args.checksum)
        self.metadata_args = metadata_args_of(self.metadata_args)

    @classmethod
    def parse(cls, options: Mapping[str, Any], dtype: np.dtype | None = None,
              typesize: int | None = None) -> BlpSettings:  # fmt: skip
        """The settings ``options`` (every name :func:`save_blp` takes) ask for, the chunks'
        typesize that of ``dtype``'s items (:func:`~bloscpack.ndarray.chunk_typesize`) or
        ``typesize`` (the item size of raw bytes)."""
        blosc_args = blosc_args_of(options)
        if typesize is None:
            typesize = nd.chunk_typesize(np.dtype(dtype or np.uint8), blosc_args.blosc_version)
        blosc_args.typesize = typesize
        bloscpack_args = BloscpackArgs(offsets=options["offsets"], checksum=options["checksum"],
                                       max_app_chunks=options["max_app_chunks"])  # fmt: skip
        return cls(blosc_args, bloscpack_args, options["metadata_args"], options["chunk_size"],
                   options["order_record"])  # fmt: skip

    def chunk_bytes(self, nbytes: int, itemsize: int) -> str | int:
        """The chunk size of ``nbytes`` of items of ``itemsize`` bytes (checked: whole items,
        in range)."""
        chunk_size = DEFAULT_CHUNK_SIZE if self.chunk_size is None else self.chunk_size
        size = array_chunk_size(chunk_size, nbytes, max(itemsize, 1))
        calculate_nchunks(nbytes, size)
        return size


class BlpWriter(WriterBase):
    """The writer of every new ``.blp`` file at a path (:func:`save_blp`, :class:`BlpTarget`,
    :func:`~.compress.compress_file`, :func:`open_writer` and so the dask writer): ``nbytes``
    of items of ``itemsize`` bytes (raw bytes: 1) in chunks as ``settings`` ask, with
    ``metadata``.  Header, metadata section, offsets, chunks and digests are written by one
    :class:`BloscpackWriter` into the staged ``output``; committing flushes the file to disk
    and adds the order record before the output is moved into place."""

    def __init__(self, output: StagedOutput, settings: BlpSettings, nbytes: int,
                 itemsize: int = 1, metadata: Any = None) -> None:  # fmt: skip
        super().__init__(output)
        self.settings = settings
        chunk_size = settings.chunk_bytes(nbytes, itemsize)
        fd = os.open(output.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        self._fh = open_new(fd, "wb")
        try:
            self._writer = new_writer(nbytes, self._fh, chunk_size, metadata, settings.blosc_args,
                                      settings.bloscpack_args, settings.metadata_args)  # fmt: skip
        except BaseException:
            self._fh.close()
            raise
        self.header = header = self._writer.header
        items = header.chunk_size // max(itemsize, 1)
        self.layout = BlpLayout(settings.blosc_args, header.nchunks, (max(items, 1),),
                                header.checksum)  # fmt: skip

    def write_data(self, chunks: Callable[[int, int, int], Iterator[Buffer]]) -> None:
        """Compress and append every chunk: ``chunks(nchunks, chunk_size, last_chunk)`` yields
        their bytes (as :func:`compress_chunks` compresses them: several at once)."""
        write_chunks(self._writer, chunks, self.settings.blosc_args)

    def compress_or_copy(self, items: Iterable[tuple[Any, Buffer | None, int]]
                         ) -> Generator[tuple[Any, bool, int], None, None]:  # fmt: skip
        """The next chunks (:func:`compress_or_copy` of ``items``) to append in order (close
        the generator when leaving early)."""
        return compress_or_copy(items, self.settings.blosc_args, self.header.nchunks)

    def append_chunk(self, chunk: Any) -> None:
        """Append the next chunk (compressed by :attr:`layout`, or checked by the caller)."""
        self._writer.write_chunk(chunk, trusted=True)

    def _add_written(self, receipt: Any) -> IO[bytes]:
        self._writer.add_written(*receipt)
        return self._fh

    def _finish(self) -> None:
        if not self._writer.offsets and self.header.nchunks == 1 and not self.header.chunk_size:
            self.append_chunk(self.layout.compress_chunk(0, np.empty(0, np.uint8)))  # empty
        self._writer.close()
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        if self.settings.order_record:
            add_order_record(self.output.path)

    def _discard(self) -> None:
        self._fh.close()

    @classmethod
    def create(cls, path: PathLike, settings: BlpSettings, nbytes: int, itemsize: int = 1,
               metadata: Any = None) -> BlpWriter:  # fmt: skip
        """The writer of a new file at ``path``, built in a :class:`StagedOutput` that
        replaces ``path`` on commit."""
        output = StagedOutput(path)
        output.open()
        try:
            return cls(output, settings, nbytes, itemsize, metadata)
        except BaseException:
            output.abort()
            raise


def write_chunks(writer: BloscpackWriter, chunks: Callable[[int, int, int], Iterator[Buffer]],
                 blosc_args: BloscArgs) -> None:  # fmt: skip
    """Compress the chunks ``chunks(nchunks, chunk_size, last_chunk)`` yields (the header of
    ``writer`` says how many) and append them to ``writer``."""
    header = writer.header
    nchunks = header.nchunks
    with contextlib.closing(
        compress_chunks(chunks(nchunks, header.chunk_size, header.last_chunk), blosc_args, nchunks)
    ) as compressed:
        for chunk in compressed:
            writer.write_chunk(chunk, trusted=True)


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
    order_record: bool = False,
) -> None:
    """Save a numpy array to the ``.blp`` file ``path``.

    Blosc1 chunks (readable by bloscpack 0.16) unless ``blosc_version=2``, which also allows
    ``filters`` (e.g. ``['delta', 'shuffle']``, ``'trunc_prec'``, ``'bytedelta'``),
    ``filters_meta``, ``use_dict`` and item sizes above 255 as the chunks' typesize.
    ``codec`` is an alias of ``cname`` (default blosclz).  ``order_record``: also record
    which digest each chunk position holds (:mod:`.order`), so that ``verify`` finds chunks
    swapped or moved.
    """
    options = dict(locals())
    array = np.asarray(array)
    metadata = nd.encode_metadata(array)
    settings = BlpSettings.parse(options, array.dtype)
    if hasattr(path, "write"):  # a binary file object, written at its position
        if order_record:
            raise ArgumentError("order_record=True needs a path to write to, not a file object")
        pack_ndarray(array, path, chunk_size, settings.blosc_args,  # type: ignore[arg-type]
                     settings.bloscpack_args, settings.metadata_args)  # fmt: skip
        return
    view = nd.byte_view(nd.contiguous(array))
    with BlpWriter.create(path, settings, view.nbytes, array.dtype.itemsize, metadata) as writer:
        writer.write_data(buffer_chunks(view))


@dataclass(frozen=True)
class BlpLayout:
    """A ``.blp`` file's chunks of an array: runs of ``chunks[0]`` items compressed as
    ``blosc_args`` ask, one C thread each (as :func:`compress_chunks` compresses them)."""

    blosc_args: BloscArgs
    nchunks: int
    chunks: tuple[int, ...]
    checksum: str = DEFAULT_CHECKSUM
    flat = True

    def stored(self, chunk: Any) -> tuple[list[Any], tuple[int, int]]:
        """The chunk's bytes and digest, as the file holds them, and its receipt (its
        uncompressed and compressed sizes, :meth:`BloscpackWriter.add_written`)."""
        header = ChunkHeader.parse(chunk)
        return stored_chunk(chunk, header, get_checksum(self.checksum)), (
            header.nbytes,
            header.cbytes,
        )

    def compress_chunk(self, index: int, data: np.ndarray) -> bytes | bytearray:
        view = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        if self.blosc_args.blosc_version == 2:
            return compress_chunk(view, self.blosc_args, nthreads=1)
        settings = _blosc1_settings(self.blosc_args)
        with engine.blosc1_compressor(**settings, concurrent=True) as compress:
            return compress(view)


def open_writer(output: StagedOutput, description: ArrayDescription, *, metadata: Any = None,
                **options: Any) -> BlpWriter:  # fmt: skip
    """A :class:`~bloscpack.containers.base.ContainerWriter` of a new ``.blp`` file of the
    array ``description`` at ``output.path`` (``options``: those of :func:`save_blp`), the
    user ``metadata`` next to the numpy metadata."""
    dtype = description.dtype
    settings = BlpSettings.parse(save_options("blp", save_blp, options), dtype)
    stored = numpy_metadata(nd.ArraySpec(dtype, description.shape, description.order))
    if metadata is not None:  # as BlpTarget stores it
        stored.update(writer_user(metadata, "blp", lambda source, dropped: json_user(
            source, BLP_METADATA, dropped, NUMPY_KEYS)))  # fmt: skip
    nbytes = dtype.itemsize * int(np.prod(description.shape, dtype=np.int64))
    return BlpWriter(output, settings, nbytes, dtype.itemsize, stored)


#: What :func:`bloscpack.save` writes a new ``.blp`` output with.
save = save_blp
