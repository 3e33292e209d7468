"""Reading carray and ctable directories: :class:`CarrayReader` and :class:`CtableReader` (rows
decoded straight into the result, only the chunks a read touches), the container-protocol
readers over them, and the whole-directory loads."""

from __future__ import annotations

import contextlib
import math
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ... import engine
from ...blosc.header import ChunkHeader, Special
from ...errors import (
    ArgumentError,
    FileNotFound,
    FormatError,
    IntegrityError,
    TruncatedError,
    UnsupportedError,
)
from ...io.paths import PathLike
from ...io.sources import ByteSource, Directory, open_member
from ...ndarray import check_text
from ..base import (
    ArrayDescription,
    ChunkSizes,
    ChunkSpan,
    Compression,
    ReaderBase,
    StoredMetadata,
    TableReader,
)
from .attrs import BcolzAttrs
from .layout import (
    BLPK_HEADER_SIZE,
    DATA_DIR,
    MAX_BLOSC1_CHUNK,
    META_MEMBERS,
    ROOTDIRS_FILE,
    SIZES_FILE,
    STORAGE_FILE,
    Cparams,
    Storage,
    _chunk_file,
    _naming,
    _parse_chunk_header,
    _read_rootdirs,
    _read_shape,
    blosc_typesize,
    has_carray_meta,
    member_reader,
    sniff_dir,
)


def _open_fd(path: str) -> int:
    """The chunk file ``path`` (``<root>/data/__N.blp``), a regular file inside the carray."""
    try:
        return open_member(path, os.path.dirname(os.path.dirname(path)))
    except FileNotFoundError:
        raise FormatError(f"{path}: chunk file missing") from None


def _fd_chunk_header(fd: int, path: str) -> ChunkHeader:
    head = os.pread(fd, BLPK_HEADER_SIZE + 32, 0)
    return _parse_chunk_header(path, memoryview(head)[BLPK_HEADER_SIZE:], os.fstat(fd).st_size)


def _read_chunk_header(path: str) -> ChunkHeader:
    """Parse the chunk header of a ``.blp`` file, reading only its first bytes."""
    fd = _open_fd(path)
    try:
        return _fd_chunk_header(fd, path)
    finally:
        os.close(fd)


def _pread_into(fd: int, out: Any, offset: int, path: str) -> None:
    """Fill ``out`` with the file's bytes from ``offset`` (no intermediate copy)."""
    view = memoryview(out).cast("B")
    done = 0
    while done < len(view):
        n = os.preadv(fd, [view[done:]], offset + done)
        if n <= 0:
            raise TruncatedError(
                f"{path}: file ends at {offset + done}, {len(view) - done} bytes short"
            )
        done += n


#: Chunk files a check asks a remote directory for at once.
_CHECK_BATCH = 256


def _chunk_member(index: int) -> str:
    return f"{DATA_DIR}/__{index}.blp"


def open_chunk_file(path: str, data: bytes | None = None) -> tuple[ByteSource, ChunkHeader]:
    """Open a ``.blp`` chunk file (or its bytes ``data``, ``path`` naming them): its source and
    the header of the Blosc chunk at byte 16."""
    # a file: a regular file inside the carray (or a FormatError), opened once
    source = ByteSource(path, fd=_open_fd(path)) if data is None else ByteSource(data, name=path)
    try:
        header = _parse_chunk_header(path, source.read_upto(BLPK_HEADER_SIZE, 32), source.size())
    except BaseException:
        source.close()
        raise
    return source, header


def _is_raw(header: ChunkHeader) -> bool:
    """A chunk that stores its data uncompressed right after the header."""
    return (
        header.memcpyed
        and header.special == Special.NONE
        and not header.lazy
        and header.cbytes == header.nbytes + header.size
    )


class _Buffers:
    """Scratch buffers reused across the chunks of one read."""

    def __init__(self) -> None:
        self._chunk = bytearray()
        self._decoded = np.empty(0, np.uint8)

    def chunk(self, nbytes: int) -> memoryview:
        """Room for a compressed chunk of ``nbytes``."""
        if len(self._chunk) < nbytes:
            self._chunk = bytearray(nbytes)
        return memoryview(self._chunk)[:nbytes]

    def decoded(self, nbytes: int) -> np.ndarray:
        """Room for a decoded chunk of ``nbytes``."""
        if len(self._decoded) < nbytes:
            self._decoded = np.empty(nbytes, np.uint8)
        return self._decoded[:nbytes]


class CarrayReader:
    """A bcolz carray directory opened for reading.

    ``shape``, ``dtype`` (numpy dtype of the elements), ``chunklen``, ``nchunks``, ``attrs``;
    ``read(start, stop)`` decodes rows straight into the returned array.
    """

    def __init__(self, rootdir: PathLike | Directory) -> None:
        #: A directory at a URL (read-only, members read whole), or None for a local one.
        self.remote = rootdir if isinstance(rootdir, Directory) and rootdir.remote else None
        if self.remote is not None:
            remote = self.remote
            self.path = remote.name
            storage_path, sizes_path = remote.join(STORAGE_FILE), remote.join(SIZES_FILE)
            self.storage = Storage.read(storage_path, member_reader(remote, STORAGE_FILE))
            self.shape, self.sizes_nbytes = _read_shape(sizes_path,
                                                        member_reader(remote, SIZES_FILE))
            self._init_geometry(storage_path)
            return
        self.path = os.fspath(rootdir)  # type: ignore[arg-type]
        if not os.path.isdir(self.path):
            raise FileNotFound(f"{self.path}: no such bcolz directory")
        storage_path = os.path.join(self.path, STORAGE_FILE)
        self.storage = Storage.read(storage_path)
        sizes_path = os.path.join(self.path, SIZES_FILE)
        self.shape, self.sizes_nbytes = _read_shape(sizes_path)
        self._init_geometry(storage_path)

    def _init_geometry(self, storage_path: str) -> None:
        """Shape, dtype and chunk length from the metadata files, checked."""
        stored = self.storage.dtype
        if len(self.shape) == 1 and stored.shape:
            self.shape = self.shape + stored.shape  # a subarray dtype: rows are the subarray
        self.dtype: np.dtype[Any] = stored.base
        self.chunklen = self.storage.chunklen
        self.typesize = blosc_typesize(self.dtype)
        self.atomsize = self.dtype.itemsize * math.prod(self.shape[1:])
        if self.chunklen * self.atomsize > MAX_BLOSC1_CHUNK:
            raise FormatError(
                f"{storage_path}: chunklen {self.chunklen} rows of {self.atomsize} bytes exceed"
                f" the largest Blosc chunk ({MAX_BLOSC1_CHUNK} bytes)"
            )
        if self.atomsize == 0 and len(self):
            raise FormatError(
                f"{storage_path}: rows of 0 bytes ({self.storage.dtype_text!r}, shape {self.shape})"
            )
        if self.dtype.hasobject and not self.is_object:
            raise FormatError(
                f"{storage_path}: dtype {self.storage.dtype_text!r} holds Python objects"
            )

    # --- metadata ---------------------------------------------------------------------------

    @property
    def directory(self) -> Directory:
        """The directory, local or at a URL, as a :class:`~bloscpack.io.sources.Directory`."""
        return self.remote or Directory(self.path)

    @property
    def is_object(self) -> bool:
        """The carray stores pickled Python objects (one per chunk file)."""
        return self.dtype == np.dtype(object)

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def nbytes(self) -> int:
        """Size of the decoded data in bytes."""
        return len(self) * self.atomsize

    @property
    def nchunks(self) -> int:
        """Number of chunk files that hold the rows (the leftover included)."""
        if self.is_object:
            return len(self)
        return -(-len(self) // self.chunklen)

    @property
    def attrs(self) -> BcolzAttrs:
        """The user attributes, as a mapping that writes through to ``__attrs__``."""
        return BcolzAttrs(self.remote or self.path)

    @property
    def cparams(self) -> Cparams:
        """Compression parameters new chunks are written with."""
        return self.storage.cparams(os.path.join(self.path, STORAGE_FILE))

    def chunk_path(self, index: int) -> str:
        """Path of the file of chunk ``index``."""
        if self.remote is not None:
            return self.remote.join(_chunk_member(index))
        return _chunk_file(self.path, index)

    def prefetch(self, first: int, last: int) -> None:
        """Hint that chunks ``first..last`` are read next (a remote directory fetches their
        files at once)."""
        if self.remote is not None:
            self.remote.prefetch([_chunk_member(i) for i in range(first, last + 1)])

    def _remote_chunk(self, index: int, keep: bool = False) -> bytes:
        assert self.remote is not None
        try:
            return self.remote.read_bytes(_chunk_member(index), keep=keep)
        except FileNotFoundError:
            raise FormatError(f"{self.chunk_path(index)}: chunk file missing") from None

    def chunk_source(self, index: int) -> tuple[ByteSource, ChunkHeader]:
        """The file of chunk ``index`` and the header of its Blosc chunk."""
        if self.remote is None:
            return open_chunk_file(self.chunk_path(index))
        return open_chunk_file(self.chunk_path(index), self._remote_chunk(index))

    @contextlib.contextmanager
    def _chunk_file(self, index: int) -> Iterator[tuple[ChunkHeader, Any]]:
        """The header of chunk ``index`` and ``read_into(out, offset)`` of its file."""
        path = self.chunk_path(index)
        if self.remote is not None:
            source, header = self.chunk_source(index)
            with source:
                yield header, lambda out, offset: source.read_into(
                    offset, memoryview(out).cast("B"), "chunk")
            return
        fd = _open_fd(path)
        try:
            yield _fd_chunk_header(fd, path), lambda out, offset: _pread_into(fd, out, offset, path)
        finally:
            os.close(fd)

    def chunk_rows(self, index: int) -> int:
        """Rows of chunk ``index`` that belong to the carray."""
        return min(self.chunklen, len(self) - index * self.chunklen)

    def refuse_objects(self) -> None:
        """Raise :class:`~bloscpack.errors.UnsupportedError` for an object carray."""
        if self.is_object:
            raise UnsupportedError(
                f"{self.path}: object carray: its chunks are pickled Python objects,"
                " which bloscpack never unpickles"
            )

    def _check_header(self, path: str, header: ChunkHeader, index: int) -> None:
        """A chunk must decode to ``chunklen`` rows (the leftover: between the rows needed and
        ``chunklen``), with whole rows only."""
        needed = self.chunk_rows(index) * self.atomsize
        full = self.chunklen * self.atomsize
        if needed == full and header.nbytes != full:
            raise IntegrityError(
                f"{path}: chunk holds {header.nbytes} bytes, a full chunk of {self.chunklen}"
                f" rows of {self.atomsize} bytes needs {full}"
            )
        if not needed <= header.nbytes <= full or header.nbytes % self.atomsize:
            raise IntegrityError(
                f"{path}: leftover chunk holds {header.nbytes} bytes, expected {needed} to"
                f" {full} in rows of {self.atomsize} bytes"
            )

    def check_chunks(self, first: int, last: int) -> None:
        """Check that chunk files ``first..last`` exist and announce the right sizes, before
        any output is allocated (the first missing or wrong one stops the check, so its cost
        is bounded by the files present, whatever length ``meta/sizes`` claims)."""
        for index in range(first, last + 1):
            if (index - first) % _CHECK_BATCH == 0:
                self.prefetch(index, min(last, index + _CHECK_BATCH - 1))
            path = self.chunk_path(index)
            if self.remote is not None:
                data = self._remote_chunk(index, keep=True)
                header = _parse_chunk_header(path, data[BLPK_HEADER_SIZE:][:32], len(data))
            else:
                header = _read_chunk_header(path)
            self._check_header(path, header, index)

    def _decode(
        self, index: int, row0: int, row1: int, dest: np.ndarray, buffers: _Buffers
    ) -> None:
        """Decode rows ``[row0, row1)`` of chunk ``index`` into ``dest`` (flat uint8)."""
        path = self.chunk_path(index)
        with self._chunk_file(index) as (header, read_into):
            self._check_header(path, header, index)
            offset, length = row0 * self.atomsize, (row1 - row0) * self.atomsize
            with _naming(path):
                if _is_raw(header):  # stored data: read it straight into place
                    read_into(dest, BLPK_HEADER_SIZE + header.size + offset)
                    return
                chunk = buffers.chunk(header.cbytes)
                read_into(chunk, BLPK_HEADER_SIZE)
                typesize = header.typesize or 1
                if offset == 0 and length == header.nbytes:
                    engine.decompress_into(chunk, dest)
                elif offset % typesize == 0 and length % typesize == 0:
                    engine.getitem_into(chunk, offset // typesize, length // typesize, dest)
                else:  # rows that do not start on a Blosc item: decode the whole chunk
                    whole = buffers.decoded(header.nbytes)
                    engine.decompress_into(chunk, whole)
                    dest[:] = whole[offset : offset + length]

    def _span(self, start: int | None, stop: int | None) -> tuple[int, int]:
        start, stop, _ = slice(start, stop).indices(len(self))
        return start, max(start, stop)

    def iter_chunks(
        self, start: int | None = None, stop: int | None = None
    ) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(row, rows)`` pieces of rows ``[start, stop)``, one per chunk touched; the
        array yielded is reused for the next piece."""
        self.refuse_objects()
        start, stop = self._span(start, stop)
        if start == stop:
            return
        first, last = start // self.chunklen, (stop - 1) // self.chunklen
        self.check_chunks(first, last)
        buffer = np.empty((min(self.chunklen, stop - start),) + self.shape[1:], self.dtype)
        flat = buffer.reshape(-1).view(np.uint8)
        buffers = _Buffers()
        for index in range(first, last + 1):
            base = index * self.chunklen
            row0, row1 = max(start, base) - base, min(stop, base + self.chunklen) - base
            nbytes = (row1 - row0) * self.atomsize
            self._decode(index, row0, row1, flat[:nbytes], buffers)
            yield base + row0, buffer[: row1 - row0]

    def read(self, start: int | None = None, stop: int | None = None) -> np.ndarray:
        """Rows ``[start, stop)`` (all by default) as a new C-contiguous array; only the chunks
        they touch are read, each decoded straight into its slice of the result."""
        self.refuse_objects()
        start, stop = self._span(start, stop)
        if start == stop:
            return np.empty((stop - start,) + self.shape[1:], self.dtype)
        first, last = start // self.chunklen, (stop - 1) // self.chunklen
        self.check_chunks(first, last)  # before allocating what the metadata claims
        out = np.empty((stop - start,) + self.shape[1:], self.dtype)
        flat = out.reshape(-1).view(np.uint8)
        buffers = _Buffers()
        for index in range(first, last + 1):
            base = index * self.chunklen
            row0, row1 = max(start, base) - base, min(stop, base + self.chunklen) - base
            at = (base + row0 - start) * self.atomsize
            self._decode(index, row0, row1, flat[at : at + (row1 - row0) * self.atomsize], buffers)
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        data = self.read()
        return data if dtype is None else data.astype(dtype)


class CtableReader:
    """A bcolz ctable directory opened for reading: ``names`` in order, ``dtype``
    (structured), ``attrs``; each column is a :class:`CarrayReader` (``carray(name)``),
    opened only when it is used."""

    def __init__(self, rootdir: PathLike | Directory) -> None:
        self.remote = rootdir if isinstance(rootdir, Directory) and rootdir.remote else None
        if self.remote is not None:
            self.path = self.remote.name
            self.names = _read_rootdirs(self.remote.join(ROOTDIRS_FILE),
                                        member_reader(self.remote, ROOTDIRS_FILE))  # fmt: skip
            # every column's metadata in one round of requests
            self.remote.prefetch([f"{n}/{m}" for n in self.names for m in META_MEMBERS[1:]])
        else:
            self.path = os.fspath(rootdir)  # type: ignore[arg-type]
            if not os.path.isdir(self.path):
                raise FileNotFound(f"{self.path}: no such bcolz directory")
            self.names = _read_rootdirs(os.path.join(self.path, ROOTDIRS_FILE))
        self._carrays: dict[str, CarrayReader] = {}
        self._length = len(self.carray(self.names[0]))

    def carray(self, name: str) -> CarrayReader:
        """The carray of column ``name`` (its files are not read until it is opened)."""
        if name not in self._carrays:
            if name not in self.names:
                raise ArgumentError(
                    f"{self.path}: no column {name!r}; columns: {', '.join(self.names)}"
                )
            if self.remote is not None:
                column = CarrayReader(self.remote.child(name))
            else:
                path = os.path.join(self.path, name)
                if not os.path.isdir(path):
                    raise FormatError(f"{path}: directory of column {name!r} missing")
                inside = os.path.realpath(self.path)
                if os.path.commonpath([inside, os.path.realpath(path)]) != inside:
                    raise FormatError(f"{path}: a symbolic link out of the container")
                column = CarrayReader(path)
            if self._carrays and len(column) < self._length:
                raise IntegrityError(
                    f"{column.path}: column {name!r} has {len(column)} rows, the table"
                    f" (its first column {self.names[0]!r}) has {self._length}"
                )
            self._carrays[name] = column
        return self._carrays[name]

    @property
    def columns(self) -> dict[str, CarrayReader]:
        """Every column's carray, in table order."""
        return {name: self.carray(name) for name in self.names}

    def __len__(self) -> int:
        """Rows of the table: the length of its first column, as bcolz counts."""
        return self._length

    @property
    def shape(self) -> tuple[int]:
        """``(rows,)``."""
        return (len(self),)

    @property
    def dtype(self) -> np.dtype[Any]:
        """The structured dtype of a table row, fields in column order."""
        return self._dtype(self.names)

    def _dtype(self, names: Sequence[str]) -> np.dtype[Any]:
        fields = []
        for name in names:
            column = self.carray(name)
            fields.append((name, column.dtype, column.shape[1:]))
        return np.dtype(fields)

    @property
    def attrs(self) -> BcolzAttrs:
        """The table's attributes (each column has its own, in ``carray(name).attrs``)."""
        return BcolzAttrs(self.remote or self.path)

    def _span(self, start: int | None, stop: int | None) -> tuple[int, int]:
        start, stop, _ = slice(start, stop).indices(len(self))
        return start, max(start, stop)

    def column(self, name: str, start: int | None = None, stop: int | None = None) -> np.ndarray:
        """Rows ``[start, stop)`` of one column; the other columns are not read."""
        return self.carray(name).read(*self._span(start, stop))

    def read(self, columns: Sequence[str] | None = None, start: int | None = None,
             stop: int | None = None) -> np.ndarray:  # fmt: skip
        """Rows ``[start, stop)`` as a structured array of the chosen columns (all, in table
        order, by default); each column is decoded chunk by chunk into its field."""
        names = self._select(columns)
        start, stop = self._span(start, stop)
        if start < stop and self.remote is not None:  # every column's chunks in one round
            self.remote.prefetch([
                f"{name}/{_chunk_member(i)}" for name in names
                for i in range(start // self.carray(name).chunklen,
                               (stop - 1) // self.carray(name).chunklen + 1)
            ])  # fmt: skip
        if start < stop:
            for name in names:
                column = self.carray(name)
                column.refuse_objects()
                column.check_chunks(start // column.chunklen, (stop - 1) // column.chunklen)
        out = np.empty(stop - start, self._dtype(names))
        for name in names:
            field = out[name]
            for row, piece in self.carray(name).iter_chunks(start, stop):
                field[row - start : row - start + len(piece)] = piece
        return out

    def _select(self, columns: Sequence[str] | None) -> list[str]:
        if columns is None:
            return list(self.names)
        names = [columns] if isinstance(columns, str) else list(columns)
        for name in names:
            self.carray(name)
        if len(set(names)) != len(names):
            raise ArgumentError(f"columns {names!r} name a column twice")
        return names

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        data = self.read()
        return data if dtype is None else data.astype(dtype)


def open_bcolz(path: PathLike | Directory) -> CarrayReader | CtableReader:
    """Open a carray or ctable directory for reading (a ctable has ``__rootdirs__``)."""
    if isinstance(path, Directory):
        if not sniff_dir(path):
            raise FormatError(
                f"{path.name}: not a bcolz directory (it has no {ROOTDIRS_FILE},"
                f" nor {STORAGE_FILE} and {SIZES_FILE})"
            )
        return CtableReader(path) if path.is_file(ROOTDIRS_FILE) else CarrayReader(path)
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise FileNotFound(f"{path}: no such bcolz directory")
    if os.path.exists(os.path.join(path, ROOTDIRS_FILE)):
        return CtableReader(path)
    if not has_carray_meta(path):  # (a directory with no ROOTDIRS_FILE: sniff_dir's rest)
        raise FormatError(
            f"{path}: not a bcolz directory (it has no {ROOTDIRS_FILE},"
            f" nor {STORAGE_FILE} and {SIZES_FILE})"
        )
    return CarrayReader(path)


class BcolzCarrayReader(ReaderBase):
    """A bcolz carray (or one column of a ctable, ``length`` rows) through the container
    protocol: one ``data/__<i>.blp`` file per chunk, memory-mapped while in use (each thread
    maps its own: a thread's chunk stays valid while others read theirs)."""

    format = "bcolz"
    longer_last_ok = True  # the leftover chunk file may hold more rows than the carray

    def __init__(self, carray: CarrayReader, length: int | None = None) -> None:
        self.carray = carray
        self.name = carray.path
        length = len(carray) if length is None else length
        self.nchunks = -(-length // carray.chunklen) if length and carray.atomsize else 0
        self.sizes = ChunkSizes.uniform(carray.chunklen * carray.atomsize, length * carray.atomsize)
        shape = (length, *carray.shape[1:])
        self.description = ArrayDescription(carray.dtype, shape, "C",
                                            (carray.chunklen, *carray.shape[1:]))  # fmt: skip
        self._in_use = threading.local()  # .source: this thread's open chunk file

    def stored_chunk(self, index: int) -> memoryview:
        self.release()
        self.carray.refuse_objects()
        path = self.carray.chunk_path(index)
        source, header = self.carray.chunk_source(index)
        self._in_use.source = source
        return source.read(BLPK_HEADER_SIZE, header.cbytes, f"{path}: Blosc chunk")

    def prefetch(self, indices: Sequence[int]) -> None:
        if len(indices):
            self.carray.prefetch(min(indices), max(indices))

    def check_sizes(self) -> None:
        """Every chunk file the rows need exists and announces the bytes of its rows (the
        leftover: at least its rows): a length in ``meta/sizes`` that the files do not hold
        is refused before a result of that length is allocated."""
        self.carray.refuse_objects()
        if self.nchunks:
            self.carray.check_chunks(0, self.nchunks - 1)

    @property
    def remote(self) -> bool:
        return self.carray.remote is not None

    def release(self) -> None:
        source = getattr(self._in_use, "source", None)
        if source is not None:
            source.close()
            self._in_use.source = None

    def compression(self) -> Compression:
        """The codec and level of the carray's ``meta/storage`` parameters."""
        cparams = self.carray.cparams
        return Compression(cparams.cname, cparams.clevel)

    def metadata(self) -> dict[str, Any]:
        """The user attributes."""
        return self.carray.attrs.to_dict()

    def stored_metadata(self) -> StoredMetadata:
        return StoredMetadata(self.metadata(), "attribute")

    def close(self) -> None:
        self.release()


def scan(reader: BcolzCarrayReader) -> Iterator[ChunkSpan]:
    """:meth:`~bloscpack.containers.base.ContainerFormat.scan` of a carray (or a column): the
    Blosc chunk after the 16-byte header of each chunk file, its size checked as reads check
    it (a leftover chunk may hold more rows than the carray uses)."""
    carray = reader.carray
    carray.refuse_objects()
    for index in range(reader.nchunks):
        path = carray.chunk_path(index)
        if carray.remote is None:
            header = _read_chunk_header(path)
        else:
            source, header = carray.chunk_source(index)
            source.close()
        carray._check_header(path, header, index)
        yield ChunkSpan(index, path, BLPK_HEADER_SIZE, header.cbytes, header)


class BcolzTableReader(TableReader):
    """A bcolz ctable as a :class:`~bloscpack.containers.base.TableReader`: ``columns``
    (names, in order) and ``column(name)``, a :class:`BcolzCarrayReader` of that column (the
    columns may have chunks of different lengths)."""

    format = "bcolz"

    def __init__(self, table: CtableReader) -> None:
        self.table = table
        self.name = table.path
        self.columns = list(table.names)
        self.description = ArrayDescription(table.dtype, table.shape)

    def column(self, name: str) -> BcolzCarrayReader:
        """A reader of column ``name``."""
        return BcolzCarrayReader(self.table.carray(name), len(self.table))

    def compression(self) -> Compression:
        """The codec and level of the first column."""
        if not self.table.names:
            return Compression()
        cparams = self.table.carray(self.table.names[0]).cparams
        return Compression(cparams.cname, cparams.clevel)

    def metadata(self) -> dict[str, Any]:
        """The user attributes."""
        return self.table.attrs.to_dict()

    def stored_metadata(self) -> StoredMetadata:
        """The table's attributes (those of its columns cannot be carried over)."""
        dropped = [
            f"attributes of column {name!r} (only table attributes are kept)"
            for name in self.table.names
            if self.table.carray(name).attrs.to_dict()
        ]
        return StoredMetadata(self.metadata(), "attribute", dropped=dropped)

    def read_rows(self, start: int, stop: int) -> np.ndarray:
        """Rows ``[start, stop)`` of the selected columns, as a structured array."""
        return np.ascontiguousarray(self.table.read(self.columns, start=start, stop=stop))

    def close(self) -> None:
        """Nothing is held open between reads."""


def open_reader(path: PathLike) -> BcolzCarrayReader | BcolzTableReader:
    """The carray directory ``path`` as a :class:`~bloscpack.containers.base.ContainerReader`,
    or the ctable directory as a :class:`~bloscpack.containers.base.TableReader`."""
    found = open_bcolz(path)
    if isinstance(found, CtableReader):
        return BcolzTableReader(found)
    found.refuse_objects()
    return BcolzCarrayReader(found)


def open_table(path: PathLike, columns: Sequence[str]) -> BcolzTableReader:
    """The ctable directory ``path`` with only ``columns``, in that order."""
    found = open_bcolz(path)
    if isinstance(found, CarrayReader):
        raise ArgumentError(f"{found.path}: a carray has no columns")
    reader = BcolzTableReader(found)
    for name in columns:
        found.carray(name)  # an unknown name is refused here, listing the columns
    reader.columns = list(columns)
    return reader


def load_bcolz(path: PathLike, columns: Sequence[str] | None = None) -> np.ndarray:
    """Read a whole carray (an array of its shape) or ctable (a structured array; ``columns``
    picks and orders fields, the others are not read)."""
    reader = open_bcolz(path)
    if isinstance(reader, CtableReader):
        return check_text(reader.read(columns), reader.path)
    if columns is not None:
        raise ArgumentError(f"{reader.path}: a carray has no columns")
    return check_text(reader.read(), reader.path)


def load(path: PathLike) -> np.ndarray:
    """The carray or ctable at ``path`` (what :func:`bloscpack.load` gives)."""
    return load_bcolz(path)


def read_bcolz_column(path: PathLike, name: str) -> np.ndarray:
    """One column of a ctable directory (only that column's files are read)."""
    reader = open_bcolz(path)
    if not isinstance(reader, CtableReader):
        raise ArgumentError(f"{reader.path}: a carray has no columns")
    return check_text(reader.column(name), reader.path)
