"""The container protocol: what every format gives the layers above it.

A container is an ordered sequence of Blosc chunks plus metadata.  A format is one
:class:`ContainerFormat` object (``FORMAT`` in its package), listed by
:mod:`bloscpack.containers.registry`: it recognises its containers, opens them as a
:class:`ContainerReader` and, if it writes arrays, opens a :class:`ContainerWriter`; the lazy
arrays, conversions and integrations are written against this protocol and name no format.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, ClassVar, Protocol, Self

import numpy as np

from .. import engine
from .. import ndarray as nd
from ..blosc.header import ChunkHeader
from ..errors import (
    ArgumentError,
    FormatError,
    IntegrityError,
    NotAppendable,
    UnsupportedError,
)
from ..io.copies import append_file
from ..io.paths import PathLike
from ..io.sources import ByteSource, Directory
from ..io.staging import CommitsOnSuccess, StagedOutput
from ..remote import EDGE_SIZE
from .options import COMMON_OPTIONS, CompressionParams

Buffer = Any  # any object exporting the buffer protocol


@dataclass(frozen=True)
class Compression:
    """How a container's chunks were compressed, as far as it records it: ``codec`` by name
    and ``clevel`` (None where the format does not store it: Blosc chunks do not)."""

    codec: str | None = None
    clevel: int | None = None


@dataclass(frozen=True)
class ChunkSizes:
    """The uncompressed bytes of a container's chunks: ``every`` bytes each but the last (which
    holds the rest of ``total``), or each chunk's own size in ``each``."""

    total: int
    every: int | None = None
    each: Sequence[int] | None = None

    @classmethod
    def uniform(cls, every: int, total: int) -> ChunkSizes:
        """Chunks of ``every`` bytes, the last holding the rest of ``total``."""
        return cls(total=int(total), every=int(every))

    @classmethod
    def listed(cls, each: Sequence[int]) -> ChunkSizes:
        """Chunks of the sizes ``each``."""
        return cls(total=int(sum(each)), each=each)

    def of(self, index: int, nchunks: int) -> int:
        """The uncompressed bytes of chunk ``index`` of ``nchunks``."""
        if self.each is not None:
            return int(self.each[index])
        assert self.every is not None
        end = self.total if index + 1 == nchunks else min((index + 1) * self.every, self.total)
        return end - min(index * self.every, self.total)


@dataclass(frozen=True)
class ArrayDescription:
    """The array a container holds: item type, shape and the order its items are stored in.
    Containers without numpy metadata hold their bytes as a 1-d ``uint8`` array."""

    dtype: np.dtype
    shape: tuple[int, ...]
    order: str = "C"
    chunks: tuple[int, ...] | None = None  # the box one chunk holds, when the format says
    blocks: tuple[int, ...] | None = None  # the box one block holds, when the format says

    @classmethod
    def from_metadata(cls, metadata: Any, total: int) -> ArrayDescription:
        """The array numpy metadata (as ``.blp`` files and frames store it) describes, else
        ``total`` raw bytes.  User metadata that only looks like numpy metadata (entries
        missing) leaves the bytes raw."""
        if nd.describes_array(metadata):
            spec = nd.decode_metadata(metadata)
            return cls(spec.dtype, spec.shape, spec.order)
        return cls.raw(total)

    @classmethod
    def raw(cls, nbytes: int) -> ArrayDescription:
        """``nbytes`` bytes as a 1-d ``uint8`` array."""
        return cls(np.dtype(np.uint8), (int(nbytes),))


#: The entries of numpy metadata (``.blp`` metadata, frame vlmetalayers) that describe the array.
NUMPY_KEYS = ("dtype", "shape", "order", "container")


@dataclass
class StoredMetadata:
    """What a container stores besides its chunks and its array, as conversions carry it over.

    ``user``: the user's entries by name (without the numpy entries that made the array);
    ``entry``: what the format calls one (``metadata key``, ``vlmetalayer``, ``attribute``);
    ``packed``: frames: the stored msgpack bytes of those entries; ``metalayers``: frames: the
    fixed metalayers (``b2nd`` excluded); ``verbatim``: ``.blp``: the metadata as stored;
    ``typesize``: frames: the typesize of the header; ``is_array``: the container says it holds
    an array (else it holds bytes); ``raw_reason``: why numpy-looking metadata is not used;
    ``dropped``: what a conversion cannot carry, one sentence each.
    """

    user: dict[str, Any] = field(default_factory=dict)
    entry: str = "metadata key"
    packed: dict[str, bytes] = field(default_factory=dict)
    metalayers: list[tuple[str, bytes]] = field(default_factory=list)
    verbatim: Any = None
    typesize: int | None = None
    is_array: bool = True
    raw_reason: str | None = None
    dropped: list[str] = field(default_factory=list)

    @classmethod
    def of_bytes_or_array(cls, metadata: Any, entry: str, **fields: Any) -> StoredMetadata:
        """The metadata of a container whose numpy metadata (``metadata``, as ``.blp`` files
        and frames store it) makes it an array; without it, or when it is incomplete, the
        container holds bytes and every entry is the user's."""
        if nd.is_numpy_metadata(metadata):
            try:
                nd.decode_metadata(metadata)
            except FormatError as exc:  # e.g. 0.16's CLI wrote dtype and shape but no order
                reason = (
                    f"'container': the numpy metadata is incomplete ({exc}), so the data is"
                    " converted as raw bytes"
                )
                user = {k: v for k, v in metadata.items() if k != "container"}
                return cls(user, entry, is_array=False, raw_reason=reason, **fields)
            user = {k: v for k, v in metadata.items() if k not in NUMPY_KEYS}
            return cls(user, entry, **fields)
        user = dict(metadata) if isinstance(metadata, dict) else {}
        return cls(user, entry, is_array=False, **fields)


@dataclass(frozen=True)
class ChunkSpan:
    """Where stored chunk ``index`` of a container lies, as :meth:`ContainerFormat.scan`
    finds it: ``length`` bytes at ``offset`` of the file ``path`` (named as the reader names
    its input), a Blosc chunk whose header is ``header``.  ``path`` None: the chunk is no
    bytes of a file (a special entry of a frame), :meth:`ContainerReader.stored_chunk` makes
    it."""

    index: int
    path: str | None
    offset: int
    length: int
    header: ChunkHeader


class ContainerReader(Protocol):
    """An open container, read chunk by chunk.  Safe to use from many threads at once.

    Readers whose chunks are boxes of an N-d grid (b2nd) are :class:`GridReader` s.  A table
    (a bcolz ctable) is no sequence of chunks: its reader is a :class:`TableReader`, whose
    columns are container readers.
    """

    format: str  # the registry name of the format
    name: str  # the path or a description, for messages
    nchunks: int
    sizes: ChunkSizes
    description: ArrayDescription
    longer_last_ok: bool  # the last chunk may hold more bytes than the layout uses (bcolz)

    def stored_chunk(self, index: int) -> Buffer:
        """The compressed bytes of chunk ``index``, valid until :meth:`release` (in this
        thread)."""
        ...

    def stored_chunk_items(self, index: int, lo: int, hi: int) -> Buffer:
        """:meth:`stored_chunk`, or a buffer of its size holding at least the bytes that
        decoding its uncompressed bytes ``[lo, hi)`` reads (block-granular reads)."""
        ...

    def decode_chunk_items(self, index: int, lo: int, hi: int, dest: np.ndarray) -> bool:
        """Decode bytes ``[lo, hi)`` (whole items) of chunk ``index`` into ``dest`` (a byte
        array of ``hi - lo``) in one pass, its layout checked as a read through
        :meth:`stored_chunk_items` checks it; False: nothing was decoded (read it that way,
        which names what is wrong)."""
        ...

    def read_chunk(self, index: int, out: Buffer = None) -> Buffer:
        """Chunk ``index`` decompressed, into ``out`` when given."""
        ...

    def release(self) -> None:
        """Let go of the chunk :meth:`stored_chunk` returned last in this thread."""
        ...

    def chunk_place(self, index: int) -> str:
        """How an error names chunk ``index``: ``chunk <index>``, with where it is stored when
        the format's own messages say so."""
        ...

    def prefetch(self, indices: Sequence[int]) -> None:
        """Hint that chunks ``indices`` are read next, whole (a remote input fetches them at
        once, concurrently)."""
        ...

    @property
    def remote(self) -> bool:
        """Whether every chunk read costs requests (a container at a URL)."""
        ...

    def check_sizes(self) -> None:
        """Check every chunk's size against what the container announces, before a large
        result is allocated from those announcements."""
        ...

    def compression(self) -> Compression:
        """The codec and level the chunks were compressed with, from the format's parameters
        or the first chunk's header (a few bytes)."""
        ...

    def metadata(self) -> Any:
        """The container's metadata (user metadata, numpy metadata, vlmetalayers or
        attributes)."""
        ...

    def stored_metadata(self) -> StoredMetadata:
        """The metadata as a conversion carries it to another format."""
        ...

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        """The block reads run in: edits by this library wait, and a file changed since it
        was opened raises :class:`~bloscpack.errors.FileChangedError`."""
        ...

    def close(self) -> None:
        """Release the input."""
        ...


class GroupReader(Protocol):
    """An open container of many arrays, each under a ``/``-separated key (a store), as a
    format with the ``group`` capability gives it (:meth:`ContainerFormat.open_group`)."""

    format: str
    name: str

    def keys(self) -> list[str]:
        """The keys of the arrays (each beginning with ``/``)."""
        ...

    def member(self, key: str) -> Any:
        """What the reader of ``key``'s array opens (a
        :class:`~bloscpack.io.ByteSource`, which the caller closes, or bytes);
        ``KeyError`` for a key it does not hold."""
        ...

    def attrs(self, group: str = "/") -> dict[str, Any]:
        """The attributes of ``group`` (``/``: the container's own)."""
        ...

    def groups(self) -> list[str]:
        """The groups that have attributes (``/`` among them when the container has)."""
        ...

    def close(self) -> None:
        """Release the input."""
        ...


def check_chunk_nbytes(reader: Any, index: int, nbytes: int) -> None:
    """Refuse a chunk ``index`` whose header announces ``nbytes`` where the layout needs
    another size (a reader with ``longer_last_ok`` may keep more in its last chunk)."""
    expected = reader.sizes.of(index, reader.nchunks)
    last = index == reader.nchunks - 1
    if nbytes != expected and not (reader.longer_last_ok and last and nbytes > expected):
        raise IntegrityError(
            f"{reader.name}: chunk {index} holds {nbytes} bytes, the layout needs {expected}"
        )


class ReaderBase:
    """What most readers share: chunks read whole, nothing to release, decompression
    through the engine checked against the layout."""

    longer_last_ok = False

    name: str
    nchunks: int
    sizes: ChunkSizes

    def stored_chunk(self, index: int) -> Buffer:
        raise NotImplementedError

    def stored_chunk_items(self, index: int, lo: int, hi: int) -> Buffer:
        return self.stored_chunk(index)

    def decode_chunk_items(self, index: int, lo: int, hi: int, dest: np.ndarray) -> bool:
        return False

    def release(self) -> None:
        pass

    def chunk_place(self, index: int) -> str:
        return f"chunk {index}"

    def prefetch(self, indices: Sequence[int]) -> None:
        """Hint that chunks ``indices`` are read next, whole: a remote input fetches them at
        once, concurrently (nothing for local ones)."""

    @property
    def remote(self) -> bool:
        """Whether every chunk read costs requests (a container at a URL): a few chunks a
        selection touches are then read at once, in threads."""
        return False

    def check_sizes(self) -> None:
        """Nothing to check up front: each chunk's size is checked when it is decoded."""

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def compression(self) -> Compression:
        """The first chunk's codec (its header); Blosc chunks do not record their level."""
        if not self.nchunks:
            return Compression()
        try:
            return Compression(ChunkHeader.parse(self.stored_chunk(0)).codec)
        finally:
            self.release()

    def read_chunk(self, index: int, out: Buffer = None) -> Buffer:
        expected = self.sizes.of(index, self.nchunks)
        try:
            data = self.stored_chunk(index)
            nbytes = ChunkHeader.parse(data).nbytes
            check_chunk_nbytes(self, index, nbytes)
            reuse = out is not None and nbytes == expected
            whole: Any = out if reuse else np.empty(nbytes, np.uint8)
            engine.decompress_into(data, whole)
        finally:
            self.release()
        if whole is out:
            return out
        if out is None:
            return whole[:expected]
        memoryview(out).cast("B")[:expected] = whole[:expected]
        return out

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class GridReader(ReaderBase, ABC):
    """A :class:`ContainerReader` whose chunks are the boxes of an N-d chunk grid (b2nd, in
    frame order): also ``grid`` (a :class:`~bloscpack.containers.grid.ChunkGrid`) and
    ``array``, the N-d reader (``read(out=)``, ``read_selection(boxes, out=)``,
    ``iter_chunk_coords()``).  A format's reader has this capability by subclassing it."""

    format: str
    description: ArrayDescription
    grid: Any
    array: Any

    @abstractmethod
    def metadata(self) -> Any:
        """:meth:`ContainerReader.metadata`."""

    @abstractmethod
    def stored_metadata(self) -> StoredMetadata:
        """:meth:`ContainerReader.stored_metadata`."""


class TableReader(ABC):
    """An open table (a bcolz ctable): named columns of one length, each stored as a
    container of its own with chunks of its own, so the table has no chunk sequence:
    ``columns`` (the names, in order), :meth:`column` (a :class:`ContainerReader` of one) and
    :meth:`read_rows`.  A format's table reader has this capability by subclassing it."""

    format: str
    name: str
    description: ArrayDescription  # a structured dtype, one field per column
    columns: list[str]

    @abstractmethod
    def column(self, name: str) -> ContainerReader:
        """A reader of column ``name``."""

    @abstractmethod
    def read_rows(self, start: int, stop: int) -> np.ndarray:
        """Rows ``[start, stop)`` of :attr:`columns`, as a structured array."""

    @abstractmethod
    def compression(self) -> Compression:
        """The codec and level of the columns (the first column's)."""

    @abstractmethod
    def metadata(self) -> Any:
        """The table's metadata."""

    @abstractmethod
    def stored_metadata(self) -> StoredMetadata:
        """The metadata as a conversion carries it to another format."""

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        """:meth:`ContainerReader.consistent` (the columns' reads are checked by theirs)."""
        return contextlib.nullcontext()

    @abstractmethod
    def close(self) -> None:
        """Release the input."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def nchunks_of(reader: ContainerReader | TableReader) -> int:
    """The chunks ``reader`` holds (a table: those of all its columns)."""
    if isinstance(reader, TableReader):
        return sum(int(reader.column(name).nchunks) for name in reader.columns)
    return int(reader.nchunks)


class ChunkLayout(Protocol):
    """How a new container cuts its array into chunks, chosen before anything is written.
    Picklable and pure, so that any process can compress chunk ``index`` (and, in a format that
    keeps chunks in files of their own, store it in the staged directory)."""

    nchunks: int
    flat: bool  # chunks hold runs of the flattened (C-order) array, else boxes of the array
    chunks: tuple[int, ...]  # the items (flat) or the box one chunk holds (less at the ends)

    def compress_chunk(self, index: int, data: np.ndarray) -> Buffer:
        """Chunk ``index``, whose items are ``data``, compressed (the same bytes anywhere)."""
        ...

    def store_chunk(self, directory: str, index: int, data: np.ndarray) -> Any:
        """Directory formats: compress chunk ``index`` into its file in the staged
        ``directory``; returns what :meth:`ContainerWriter.append_stored` takes."""
        ...

    def stored(self, chunk: Buffer) -> tuple[list[Buffer], Any]:
        """Single-file formats: the bytes the file holds for the compressed ``chunk`` (its
        bytes, a digest; nothing for a chunk the index holds) and its receipt, what
        :meth:`ContainerWriter.append_run` takes for it (:func:`stage_run`)."""
        ...


class ContainerWriter(Protocol):
    """A new container of an array whose layout was chosen up front, built in one
    :class:`~bloscpack.io.staging.StagedOutput`: chunks are appended in order, :meth:`commit` writes
    what follows them and moves the container into place, :meth:`abort` leaves nothing.
    Directory formats also take chunks that tasks stored in :attr:`directory` themselves.
    A table (a bcolz ctable) has no layout of its own: its :attr:`columns` are the writers
    of its columns (each one field of the structured array), committed with the table."""

    layout: ChunkLayout
    directory: str | None  # where tasks may store chunk files (directory formats)
    columns: dict[str, Any] | None  # a table's writers of each column, by field name

    def compress_chunk(self, index: int, data: np.ndarray) -> Buffer:
        """:meth:`ChunkLayout.compress_chunk`."""
        ...

    def append_chunk(self, chunk: Buffer) -> None:
        """Append the next chunk (compressed)."""
        ...

    def append_stored(self, index: int, stored: Any) -> None:
        """Append chunk ``index``, which :meth:`ChunkLayout.store_chunk` stored already."""
        ...

    def append_run(self, path: str, receipts: Sequence[Any]) -> None:
        """Single-file formats: append the next chunks, whose stored bytes :func:`stage_run`
        wrote to the file ``path`` (``receipts``: one per chunk), copied by the kernel."""
        ...

    def run_directory(self) -> str:
        """A private directory next to the container being built (on its file system,
        removed with the staged output) for the files of :func:`stage_run`."""
        ...

    def commit(self) -> None:
        ...

    def abort(self) -> None:
        ...

    def __enter__(self) -> Self:
        ...

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        ...


class WriterBase(CommitsOnSuccess):
    """What writers share: one staged output, committed when the writer's own end
    (:meth:`_finish`) is written, removed on :meth:`abort`; a block commits or aborts."""

    layout: Any
    directory: str | None = None
    columns: dict[str, Any] | None = None

    def __init__(self, output: StagedOutput) -> None:
        self.output = output

    def compress_chunk(self, index: int, data: np.ndarray) -> Buffer:
        return self.layout.compress_chunk(index, data)

    def append_stored(self, index: int, stored: Any) -> None:
        raise NotImplementedError("this format stores its chunks in one file")

    def append_run(self, path: str, receipts: Sequence[Any]) -> None:
        file = None
        for receipt in receipts:
            file = self._add_written(receipt)
        if file is not None:
            append_file(file, path)

    def run_directory(self) -> str:
        path = os.path.join(os.path.dirname(self.output.path), "runs")
        os.makedirs(path, exist_ok=True)
        return path

    def _add_written(self, receipt: Any) -> IO[bytes]:
        """Count the next chunk (its receipt from :meth:`ChunkLayout.stored`), whose bytes
        the caller appends; returns the file they go to."""
        raise NotImplementedError("this format stores its chunks in files of their own")

    def _finish(self) -> None:
        """Write what follows the chunks."""

    def _discard(self) -> None:
        """Let go of what :meth:`_finish` would have completed."""

    def commit(self) -> None:
        try:
            self._finish()
            self.output.commit()
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        try:
            self._discard()
        finally:
            self.output.abort()


def chunk_regions(shape: tuple[int, ...], chunks: tuple[int, ...]
                  ) -> Iterator[tuple[slice, ...]]:  # fmt: skip
    """The boxes of ``shape`` that chunks of ``chunks`` cut it into, in C order."""
    counts = [-(-n // c) if n else 0 for n, c in zip(shape, chunks, strict=True)]
    for coords in np.ndindex(*counts):
        yield tuple(slice(i * c, min((i + 1) * c, n))
                    for i, c, n in zip(coords, chunks, shape, strict=True))  # fmt: skip


def map_chunks(fn: Callable[[int, np.ndarray], Any], block: np.ndarray, chunks: tuple[int, ...],
               first: int = 0, threads: int = 1, *, own_threads: bool = False
               ) -> Generator[Any, None, None]:  # fmt: skip
    """``fn(first + k, box)`` for the boxes that chunks of ``chunks`` cut ``block`` into (C
    order, ``k`` from 0), in order, up to ``threads`` at a time
    (:func:`~bloscpack.engine.map_in_order`, ``own_threads`` as there)."""
    nchunks = math.prod(-(-n // c) if n else 0 for n, c in zip(block.shape, chunks, strict=True))
    regions = enumerate(chunk_regions(block.shape, chunks))
    return engine.map_in_order(lambda item: fn(first + item[0], block[item[1]]), regions,
                               min(threads, nchunks), own_threads=own_threads)  # fmt: skip


def write_array(writer: ContainerWriter, array: np.ndarray) -> None:
    """Append every chunk of the in-memory ``array`` to ``writer``: compressed
    :func:`~bloscpack.engine.get_nthreads` at a time, one C thread each (so the bytes never
    depend on the thread count), appended in order; a table's columns one after another.  A
    layout with ``compressed_chunks(data)`` (views of reused buffers, valid until the next:
    :func:`~bloscpack.engine.compress_in_order`) compresses them itself."""
    if writer.columns is not None:
        for name, column in writer.columns.items():
            write_array(column, array[name])
        return
    layout = writer.layout
    data = np.ascontiguousarray(array).reshape(-1) if layout.flat else array
    compressed = getattr(layout, "compressed_chunks", None)
    if compressed is not None:
        for chunk in compressed(data):
            writer.append_chunk(chunk)
        return
    for chunk in map_chunks(layout.compress_chunk, data, layout.chunks,
                            threads=engine.get_nthreads()):  # fmt: skip
        writer.append_chunk(chunk)


def stage_run(layout: ChunkLayout, path: str, first: int, block: np.ndarray,
              threads: int = 1) -> list[Any]:  # fmt: skip
    """Compress the chunks ``first``, ``first + 1``, ... of ``layout`` that ``block`` holds
    and write the bytes a single file holds of them (:meth:`ChunkLayout.stored`) to the new
    file ``path``, for :meth:`ContainerWriter.append_run`; returns their receipts.  With
    ``threads`` > 1, that many threads of its own compress while this one writes."""
    def compress(index: int, box: np.ndarray) -> tuple[list[Buffer], Any]:
        return layout.stored(layout.compress_chunk(index, box))

    receipts = []
    with open(path, "xb") as fh:
        for parts, receipt in map_chunks(compress, block, layout.chunks, first, threads,
                                         own_threads=True):  # fmt: skip
            fh.writelines(parts)
            receipts.append(receipt)
    return receipts


#: The first bytes of a file :meth:`ContainerFormat.sniff` is given (fewer if the file is
#: shorter).
SNIFF_BYTES = 32


class ContainerFormat(ABC):
    """One container format: what it is called, what it can do, and how its containers are
    recognised, read, written, described and checked.  A format is a subclass whose one
    instance its package exports as ``FORMAT``; the registry lists those instances (its own
    formats, then those of the entry-point group ``bloscpack.formats``).

    Class attributes: ``name`` (what :func:`bloscpack.detect` gives), ``description`` (for
    messages), ``suffixes`` (the first one is given to new outputs; an output may have any),
    ``aliases`` (other names ``format=`` takes); capabilities ``directory`` (a container is a
    directory), ``writable`` (it writes arrays), ``holds_bytes`` (it stores raw bytes as such,
    else as unsigned ints), ``grid`` (chunks are boxes of an N-d grid), ``table`` (it holds
    tables by column), ``appendable`` (:meth:`append_rows` grows a container in place),
    ``checksummed`` (it stores digests of its chunks), ``streams`` (its data is written and
    read as it arrives: :meth:`compress_file`, :meth:`write_stored`, :meth:`stream_size`),
    ``group`` (a container holds many arrays under keys: :meth:`open_group`,
    :meth:`save_group`); declared options (``None``: the writer has no such path, or checks
    its options itself), with their defaults and choices.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    suffixes: ClassVar[tuple[str, ...]] = ()
    aliases: ClassVar[tuple[str, ...]] = ()

    directory: ClassVar[bool] = False
    writable: ClassVar[bool] = True
    holds_bytes: ClassVar[bool] = False
    grid: ClassVar[bool] = False
    table: ClassVar[bool] = False
    appendable: ClassVar[bool] = False
    checksummed: ClassVar[bool] = False
    streams: ClassVar[bool] = False
    group: ClassVar[bool] = False

    #: The options :meth:`open_writer` takes besides ``metadata`` (None: it checks them).
    writer_options: ClassVar[tuple[str, ...] | None] = None
    #: The options of :meth:`save`, the fast path of :func:`bloscpack.save` (None: none).
    save_options: ClassVar[tuple[str, ...] | None] = None
    #: The options of :meth:`compress_file` (None: the format has no such path).
    compress_file_options: ClassVar[tuple[str, ...] | None] = None
    #: The options of :meth:`append_rows`.
    append_options: ClassVar[tuple[str, ...]] = ()
    #: Its own options' defaults, as the command line shows them (e.g. ``.blp``'s ``clevel``).
    option_defaults: ClassVar[Mapping[str, Any]] = {}
    #: The names its own options whose values are names take (e.g. ``.blp``'s ``checksum``),
    #: which the command line offers.
    option_choices: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    #: The formats whose containers may also be this format's (it is more specific):
    #: detection tries it before them (the built-in formats are tried before those other
    #: packages add, so a format added refines only other added ones).
    refines: ClassVar[tuple[str, ...]] = ()
    #: Directory formats: the members :meth:`sniff_dir` reads (fetched first at a URL).
    dir_members: ClassVar[tuple[str, ...]] = ()
    #: Directory formats: the files that make a container readable, written last where
    #: files appear one by one (``/``-separated, relative).
    published_last: ClassVar[tuple[str, ...]] = ()
    #: The bytes its open reads from the start and the end of a file of usual size (what
    #: opening one at a URL fetches first).
    edges: ClassVar[tuple[int, int]] = (EDGE_SIZE, EDGE_SIZE)

    @property
    def extension(self) -> str:
        """The suffix new outputs get (``""``: none)."""
        return self.suffixes[0] if self.suffixes else ""

    def writes_directory(self, options: Mapping[str, Any]) -> bool:
        """Whether a new container written with ``options`` is a directory (by default:
        :attr:`directory`; a format whose option makes one, as b2nd's ``sparse``, says so)."""
        return self.directory

    def accepts(self, option: str) -> bool:
        """Whether some writer of this format takes the option ``option`` (a common one or
        its own)."""
        own = (*(self.save_options or ()), *(self.compress_file_options or ()))
        return option in {*COMMON_OPTIONS, *own, *self.conversion_options()}

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<format {self.name}>"

    # --- recognising -------------------------------------------------------------------------

    def sniff(self, head: bytes) -> bool:
        """Whether a file that begins with ``head`` (its first :data:`SNIFF_BYTES` or more)
        is a container of this format (directory formats: never)."""
        return False

    def sniff_source(self, source: ByteSource, head: bytes, *, whole: bool = False) -> bool:
        """Whether ``source``, which begins with ``head`` (as :meth:`sniff` gets it), is a
        container of this format: :meth:`sniff`, unless the format reads more.  ``whole``:
        the source is one container and nothing else (a buffer)."""
        return self.sniff(head)

    def sniff_dir(self, path: PathLike | Directory) -> bool:
        """Whether the directory ``path`` (or a prefix at a URL) is a container of this
        format (single-file formats: never)."""
        return False

    # --- reading -------------------------------------------------------------------------------

    @abstractmethod
    def open_reader(self, source: Any, *, verify: bool = True) -> ContainerReader | TableReader:
        """The container ``source`` (a path, a :class:`~bloscpack.io.sources.ByteSource`, a
        :class:`~bloscpack.io.sources.Directory` or bytes, which the reader then owns) as a
        :class:`ContainerReader` (a table: a :class:`TableReader`); ``verify`` checks chunk
        digests where the format stores them."""

    def open_table(self, source: Any, columns: Sequence[str]) -> TableReader:
        """Tables: the container ``source`` with only ``columns``, in that order."""
        raise ArgumentError(f"columns= selects ctable columns; this container is {self.name}")

    def open_group(self, source: Any) -> GroupReader:
        """Groups: the container ``source`` (a path, a :class:`~bloscpack.io.ByteSource` or a
        :class:`~bloscpack.io.Directory`, which the reader then owns) as a
        :class:`GroupReader`."""
        raise ArgumentError(f"{self.name} containers hold one array, not a group of them")

    def save_group(self, arrays: Mapping[str, np.ndarray], path: str, build: str,
                   **options: Any) -> None:  # fmt: skip
        """Groups: the ``arrays`` by key into a new container for ``path`` (whose suffix may
        choose a layout) built at the staged ``build``, each written with ``options`` (as
        :func:`bloscpack.save` takes them)."""
        raise ArgumentError(f"{self.name} containers hold one array, not a group of them")

    def load(self, source: Any) -> np.ndarray | None:
        """The whole array, by a path faster than the reader's (None: there is none)."""
        return None

    @abstractmethod
    def info(self, source: Any) -> dict[str, Any]:
        """A JSON-able description of the container ``source``."""

    def info_text(self, source: Any, report: dict[str, Any]) -> str | None:
        """The format's own text for ``blpk info -v`` (None: the generic one)."""
        return None

    @abstractmethod
    def verify(self, source: Any) -> dict[str, Any]:
        """Check the container ``source``: ``{"ok", "nchunks", "bad_chunks", "problems"}``
        and, where the format knows, ``verifiable`` and ``notes``."""

    # --- writing -------------------------------------------------------------------------------

    def refused(self, dtype: np.dtype, shape: tuple[int, ...]) -> str | None:
        """Why an array of ``dtype`` and ``shape`` cannot be written as it is (None: it can)."""
        return None

    def own_options(self, params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                    shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
        """The common options ``params`` and the format's own ``rest`` as this format's
        writers take them, for an array of ``dtype`` and ``shape``."""
        raise self._unwritable()

    def open_writer(self, output: StagedOutput, description: ArrayDescription, *,
                    metadata: Any = None, **options: Any) -> ContainerWriter:  # fmt: skip
        """A :class:`ContainerWriter` of a new container of the array ``description`` in
        ``output`` (a :class:`~bloscpack.io.staging.StagedOutput`, or an upload staged alike), with
        its own ``options`` and the user ``metadata``."""
        raise self._unwritable()

    def save(self, array: np.ndarray, path: str, **options: Any) -> None:
        """The fast path of :func:`bloscpack.save` (where :attr:`save_options` is not None):
        ``array`` to the staged ``path`` with its own ``options``."""
        raise self._unwritable()

    def conversion_target(self, source: Any, options: dict[str, Any],
                          copy_chunks: bool) -> Any:  # fmt: skip
        """The :class:`~bloscpack.containers.target.Target` a conversion of ``source`` into
        this format writes through; None (the default for a writable format): the generic
        :class:`~bloscpack.containers.target.WriterTarget` over :meth:`open_writer`."""
        if not self.writable:
            raise self._unwritable()
        return None

    def conversion_options(self) -> Mapping[str, Any]:
        """The options :meth:`conversion_target` takes, with their defaults (by default
        :attr:`writer_options`, as the generic target passes them to :meth:`open_writer`)."""
        return dict.fromkeys(self.writer_options or ())

    def compress_file(self, src: Any, dst: Any, **options: Any) -> None:
        """Formats that stream: the raw file or stream ``src`` into ``dst``, chunk by chunk as
        it is read."""
        raise self._unwritable()

    def write_stored(self, source: Any, out: IO[bytes], progress: Any, piece: int) -> Any:
        """Formats that stream: the data of ``source`` (a path or a stream) to ``out`` as
        stored; returns its metadata."""
        raise UnsupportedError(f"format {self.name!r} is not written out as stored")

    def stream_size(self, head: bytes) -> tuple[int | None, int]:
        """Formats that stream: ``(uncompressed size or None, chunk size or 0)`` from the
        first bytes ``head``."""
        return None, 0

    def scan(self, reader: Any) -> Iterator[ChunkSpan]:
        """Where each stored chunk of the open container ``reader`` (this format's
        :class:`ContainerReader`) lies, in chunk order, from the reader's own parsing (for byte
        range references); refused for a format that cannot say."""
        raise UnsupportedError(
            f"{reader.name}: the chunks of a {self.description} cannot be referenced by byte"
            f" range (format {self.name!r} does not locate them)"
        )

    def append_rows(self, path: PathLike, rows: np.ndarray, **options: Any) -> None:
        """Append ``rows`` (of the container's dtype and trailing shape, bytes as ``uint8``)
        to the container at ``path`` in place (where :attr:`appendable`)."""
        raise NotAppendable(f"{os.fspath(path)}: {self.description} cannot grow in place")

    def _unwritable(self) -> UnsupportedError:
        return UnsupportedError(f"format {self.name!r} has no array writer")


#: The plug-in interface: what a format of another package imports from here (the inputs and
#: outputs its methods are given included).
__all__ = [
    "NUMPY_KEYS", "SNIFF_BYTES", "ArrayDescription", "ByteSource", "ChunkLayout", "ChunkSizes",
    "ChunkSpan", "ContainerFormat", "ContainerReader", "ContainerWriter", "Directory",
    "GridReader", "GroupReader", "PathLike", "ReaderBase", "StagedOutput", "StoredMetadata",
    "TableReader", "WriterBase", "check_chunk_nbytes", "nchunks_of",
    "chunk_regions", "map_chunks", "stage_run", "write_array",
]  # fmt: skip


def lazy_names(package: str, sources: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each name of ``sources`` is imported when
    first used, from the module ``sources`` names for it (relative to ``package``)."""

    def __getattr__(name: str) -> Any:
        if name not in sources:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(sources[name], package), name)

    return __getattr__
