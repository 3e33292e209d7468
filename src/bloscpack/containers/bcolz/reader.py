"""Reading, writing and appending to carray and ctable directories, info and verify."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import engine
from ... import ndarray as nd
from ...blosc.header import ChunkHeader, Special
from ...errors import (
    ArgumentError,
    BloscpackError,
    FileNotFound,
    FormatError,
    IntegrityError,
    ObjectNumpyArrayRejection,
    OutputExistsError,
    TruncatedError,
    UnsupportedError,
)
from ...io import (
    ByteSource,
    PathLike,
    atomic_write,
    fsync_directory,
    is_written_in_place,
    staged_output,
    start_writeback,
)
from ..base import ArrayDescription, ChunkSizes, ReaderBase, StoredMetadata
from ..options import CompressionParams, chunk_rows, shuffle_only
from ..target import SLAB_NBYTES, Target, flat_spans, json_user, kept_metalayers, take_options
from .attrs import BcolzAttrs, _attrs_blob
from .layout import (
    _CHUNK_NAME,
    ATTRS_FILE,
    BLPK_HEADER,
    BLPK_HEADER_SIZE,
    DATA_DIR,
    MAX_BLOSC1_CHUNK,
    META_DIR,
    ROOTDIRS_FILE,
    SIZES_FILE,
    STORAGE_FILE,
    WRITABLE_CODECS,
    Cparams,
    Storage,
    _chunk_cbytes,
    _chunk_file,
    _compress_chunk,
    _dumps,
    _is_int,
    _naming,
    _parse_chunk_header,
    _read_meta_json,
    _read_rootdirs,
    _read_shape,
    _sizes_blob,
    blosc_typesize,
    check_chunklen,
    check_column_name,
    default_chunklen,
    row_nbytes,
)

# --- reading ------------------------------------------------------------------------------


def _open_fd(path: str) -> int:
    try:
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise FormatError(f"{path}: chunk file missing") from None
    except OSError as exc:
        raise FormatError(f"{path}: cannot open chunk file ({exc.strerror})") from None


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


def open_chunk_file(path: str) -> tuple[ByteSource, ChunkHeader]:
    """Open a ``.blp`` chunk file: its source and the header of the Blosc chunk at byte 16."""
    try:
        source = ByteSource(path)
    except FileNotFound:
        raise FormatError(f"{path}: chunk file missing") from None
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

    def __init__(self, rootdir: PathLike) -> None:
        self.path = os.fspath(rootdir)
        if not os.path.isdir(self.path):
            raise FileNotFound(f"{self.path}: no such bcolz directory")
        storage_path = os.path.join(self.path, STORAGE_FILE)
        self.storage = Storage.read(storage_path)
        sizes_path = os.path.join(self.path, SIZES_FILE)
        self.shape, self.sizes_nbytes = _read_shape(sizes_path)
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
        return BcolzAttrs(self.path)

    @property
    def cparams(self) -> Cparams:
        """Compression parameters new chunks are written with."""
        return self.storage.cparams(os.path.join(self.path, STORAGE_FILE))

    def chunk_path(self, index: int) -> str:
        """Path of the file of chunk ``index``."""
        return _chunk_file(self.path, index)

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
        any output is allocated."""
        for index in range(first, last + 1):
            path = self.chunk_path(index)
            self._check_header(path, _read_chunk_header(path), index)

    def _decode(
        self, index: int, row0: int, row1: int, dest: np.ndarray, buffers: _Buffers
    ) -> None:
        """Decode rows ``[row0, row1)`` of chunk ``index`` into ``dest`` (flat uint8)."""
        path = self.chunk_path(index)
        fd = _open_fd(path)
        try:
            header = _fd_chunk_header(fd, path)
            self._check_header(path, header, index)
            offset, length = row0 * self.atomsize, (row1 - row0) * self.atomsize
            with _naming(path):
                if _is_raw(header):  # stored data: read it straight into place
                    _pread_into(fd, dest, BLPK_HEADER_SIZE + header.size + offset, path)
                    return
                chunk = buffers.chunk(header.cbytes)
                _pread_into(fd, chunk, BLPK_HEADER_SIZE, path)
                typesize = header.typesize or 1
                if offset == 0 and length == header.nbytes:
                    engine.decompress_into(chunk, dest)
                elif offset % typesize == 0 and length % typesize == 0:
                    engine.getitem_into(chunk, offset // typesize, length // typesize, dest)
                else:  # rows that do not start on a Blosc item: decode the whole chunk
                    whole = buffers.decoded(header.nbytes)
                    engine.decompress_into(chunk, whole)
                    dest[:] = whole[offset : offset + length]
        finally:
            os.close(fd)

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

    def __init__(self, rootdir: PathLike) -> None:
        self.path = os.fspath(rootdir)
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
            path = os.path.join(self.path, name)
            if not os.path.isdir(path):
                raise FormatError(f"{path}: directory of column {name!r} missing")
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
        return BcolzAttrs(self.path)

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


def sniff_dir(path: PathLike) -> bool:
    """Whether ``path`` is a bcolz carray or ctable directory."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        return False
    if os.path.isfile(os.path.join(path, ROOTDIRS_FILE)):
        return True
    # data/ is not required: git and some copies drop the empty data/ of an empty carray
    return all(os.path.isfile(os.path.join(path, name)) for name in (STORAGE_FILE, SIZES_FILE))


def open_bcolz(path: PathLike) -> CarrayReader | CtableReader:
    """Open a carray or ctable directory for reading (a ctable has ``__rootdirs__``)."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise FileNotFound(f"{path}: no such bcolz directory")
    if os.path.exists(os.path.join(path, ROOTDIRS_FILE)):
        return CtableReader(path)
    if not sniff_dir(path):
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
        source, header = open_chunk_file(path)
        self._in_use.source = source
        return source.read(BLPK_HEADER_SIZE, header.cbytes, f"{path}: Blosc chunk")

    def release(self) -> None:
        source = getattr(self._in_use, "source", None)
        if source is not None:
            source.close()
            self._in_use.source = None

    def metadata(self) -> dict[str, Any]:
        """The user attributes."""
        return self.carray.attrs.to_dict()

    def stored_metadata(self) -> StoredMetadata:
        return StoredMetadata(self.metadata(), "attribute")

    def close(self) -> None:
        self.release()


class BcolzTableReader:
    """A bcolz ctable through the container protocol: ``columns`` (names, in order) and
    ``column(name)``, a :class:`BcolzCarrayReader` of that column."""

    format = "bcolz"
    grid = None

    def __init__(self, table: CtableReader) -> None:
        self.table = table
        self.name = table.path
        self.columns: list[str] | None = list(table.names)
        self.description = ArrayDescription(table.dtype, table.shape)

    def column(self, name: str) -> BcolzCarrayReader:
        """A reader of column ``name``."""
        return BcolzCarrayReader(self.table.carray(name), len(self.table))

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

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def close(self) -> None:
        """Nothing is held open between reads."""

    def __enter__(self) -> BcolzTableReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def own_options(params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
    """The common options as the bcolz writer's: ``codec`` as ``cname``, ``chunks`` as
    ``chunklen`` (rows), ``filters`` as ``shuffle`` (bcolz writes Blosc1 chunks)."""
    return params.own(rest, codec=("cname", None),
                      chunks=("chunklen", lambda c: chunk_rows(c, shape, "bcolz")),
                      filters=("shuffle", lambda f: shuffle_only(f, "bcolz")))  # fmt: skip


def open_reader(path: PathLike, *, columns: Sequence[str] | None = None
                ) -> BcolzCarrayReader | BcolzTableReader:  # fmt: skip
    """The carray or ctable directory ``path`` as a
    :class:`~bloscpack.containers.base.ContainerReader` (a ctable: a table of them;
    ``columns`` picks and orders its columns)."""
    found = open_bcolz(path)
    if isinstance(found, CarrayReader):
        if columns is not None:
            raise ArgumentError(f"{found.path}: a carray has no columns")
        found.refuse_objects()
        return BcolzCarrayReader(found)
    reader = BcolzTableReader(found)
    if columns is not None:
        for name in columns:
            found.carray(name)  # an unknown name is refused here, listing the columns
        reader.columns = list(columns)
    return reader


def load_bcolz(path: PathLike, columns: Sequence[str] | None = None) -> np.ndarray:
    """Read a whole carray (an array of its shape) or ctable (a structured array; ``columns``
    picks and orders fields, the others are not read)."""
    reader = open_bcolz(path)
    if isinstance(reader, CtableReader):
        return reader.read(columns)
    if columns is not None:
        raise ArgumentError(f"{reader.path}: a carray has no columns")
    return reader.read()


def load(path: PathLike) -> np.ndarray:
    """The carray or ctable at ``path`` (what :func:`bloscpack.load` gives)."""
    return load_bcolz(path)


def read_bcolz_column(path: PathLike, name: str) -> np.ndarray:
    """One column of a ctable directory (only that column's files are read)."""
    reader = open_bcolz(path)
    if not isinstance(reader, CtableReader):
        raise ArgumentError(f"{reader.path}: a carray has no columns")
    return reader.column(name)


# --- info and verify ----------------------------------------------------------------------


def _json_safe(value: Any) -> Any:
    """``value`` with non-finite floats as strings, so that strict JSON can carry it."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    return value


def _dtype_info(dtype: np.dtype[Any]) -> Any:
    """``dtype.str``, or for a structured dtype its ``descr`` as JSON lists."""
    return json.loads(json.dumps(dtype.descr)) if dtype.names else dtype.str


def _carray_info(reader: CarrayReader) -> dict[str, Any]:
    used = [i for i in _chunk_indexes(reader.path) if i < reader.nchunks]
    files = sum(os.path.getsize(reader.chunk_path(i)) for i in used)
    return {
        "kind": "carray",
        "path": reader.path,
        "shape": list(reader.shape),
        "dtype": _dtype_info(reader.dtype),
        "storage_dtype": reader.storage.dtype_text,
        "chunklen": reader.chunklen,
        "nchunks": reader.nchunks,
        "typesize": reader.typesize,
        "nbytes": reader.nbytes,
        "cbytes": files,
        "cparams": _json_safe(reader.storage.cparams_raw),
        "expectedlen": _json_safe(reader.storage.expectedlen),
        "dflt": _json_safe(reader.storage.dflt),
        "bcolz_can_open": not reader.storage.dtype.names,
    }


def info(path: PathLike) -> dict[str, Any]:
    """A JSON-able description of a carray or ctable directory (metadata only, no data read)."""
    reader = open_bcolz(path)
    if isinstance(reader, CtableReader):
        columns = [dict(_carray_info(reader.carray(name)), name=name) for name in reader.names]
        result: dict[str, Any] = {
            "format": "bcolz",
            "kind": "ctable",
            "path": reader.path,
            "shape": [len(reader)],
            "dtype": _dtype_info(reader.dtype),
            "names": list(reader.names),
            "nchunks": sum(c["nchunks"] for c in columns),
            "nbytes": sum(c["nbytes"] for c in columns),
            "cbytes": sum(c["cbytes"] for c in columns),
            "bcolz_can_open": all(c["bcolz_can_open"] for c in columns),
            "columns": columns,
        }
        attrs_of: Any = reader
    else:
        result = {"format": "bcolz", **_carray_info(reader)}
        attrs_of = reader
    try:
        result["attrs"] = _json_safe(attrs_of.attrs.to_dict())
    except BloscpackError as exc:
        result["attrs"] = None
        result["attrs_error"] = str(exc)
    return result


def _verify_carray(reader: CarrayReader, length: int, name: str | None,
                   report: dict[str, Any]) -> None:  # fmt: skip
    """Decode the chunks of the first ``length`` rows of a carray; add what is wrong to
    ``report`` (``bad_chunks`` and ``problems``: reads fail; ``warnings``: reads work)."""
    warnings = report["warnings"]
    if reader.is_object:
        warnings.append(f"{reader.path}: object carray: its values are pickles, never loaded")
    elif _is_int(reader.sizes_nbytes) and reader.sizes_nbytes != reader.nbytes:
        warnings.append(
            f"{os.path.join(reader.path, SIZES_FILE)}: nbytes {reader.sizes_nbytes}"
            f" != {len(reader)} rows x {reader.atomsize} bytes"
        )
    for what in (ATTRS_FILE, DATA_DIR):
        if not os.path.exists(os.path.join(reader.path, what)):
            warnings.append(f"{os.path.join(reader.path, what)}: missing (bcolz cannot open it)")
    try:
        reader.cparams  # noqa: B018  (validates cparams)
    except BloscpackError as exc:
        warnings.append(f"{exc} (appending would fail)")
    nchunks = length if reader.is_object else -(-length // reader.chunklen)
    report["nchunks"] += nchunks
    present = _chunk_indexes(reader.path)
    checked = min(nchunks, max(present, default=-1) + 2)  # past the last file: all missing
    if checked < nchunks:
        report["problems"].append(
            f"{reader.chunk_path(checked)}: chunk files {checked} to {nchunks - 1} missing"
            f" ({os.path.join(reader.path, SIZES_FILE)} says {length} rows)"
        )
    scratch = np.empty(0, np.uint8)
    for index in range(checked):
        path = reader.chunk_path(index)
        try:
            source, header = open_chunk_file(path)
            try:
                with _naming(path):
                    chunk = source.read(BLPK_HEADER_SIZE, header.cbytes, "Blosc chunk")
                    if not reader.is_object:
                        reader._check_header(path, header, index)
                    if len(scratch) < header.nbytes:
                        scratch = np.empty(header.nbytes, np.uint8)
                    engine.decompress_into(chunk, scratch)
                    del chunk
            finally:
                source.close()
        except BloscpackError as exc:
            entry: dict[str, Any] = {"index": index, "error": str(exc)}
            if name is not None:
                entry["column"] = name
            report["bad_chunks"].append(entry)
            continue
        if header.typesize != reader.typesize:
            warnings.append(
                f"{path}: Blosc typesize {header.typesize}, bcolz uses {reader.typesize}"
                f" for {reader.dtype}: its partial reads of this chunk would be wrong"
            )


def _chunk_indexes(rootdir: str) -> set[int]:
    """Indexes of the ``data/__<i>.blp`` files present."""
    try:
        names = os.listdir(os.path.join(rootdir, DATA_DIR))
    except OSError:
        return set()
    return {int(m.group(1)) for m in map(_CHUNK_NAME.fullmatch, names) if m}


def verify(path: PathLike) -> dict[str, Any]:
    """Decode every chunk of a carray or ctable directory and check it against the metadata.

    Returns ``{"format": "bcolz", "ok": bool, "nchunks": n, "bad_chunks": [{"index": i,
    "error": msg}, ...], "problems": [...], "warnings": [...]}``; ctable chunk entries also
    name their ``column``.  ``ok`` is false when a chunk or the metadata cannot be read;
    ``warnings`` list what bcolz would trip on although bloscpack reads the data.
    """
    report: dict[str, Any] = {"format": "bcolz", "ok": False, "nchunks": 0,
                              "bad_chunks": [], "problems": [], "warnings": []}  # fmt: skip
    try:
        reader = open_bcolz(path)
    except BloscpackError as exc:
        report["problems"].append(str(exc))
        return report
    carrays: list[tuple[CarrayReader, str | None]] = []
    if isinstance(reader, CtableReader):
        for column_name in reader.names:
            try:
                carrays.append((reader.carray(column_name), column_name))
            except BloscpackError as exc:
                report["problems"].append(str(exc))
        for column, label in carrays:
            if len(column) != len(reader):
                report["warnings"].append(
                    f"{column.path}: column {label!r} has {len(column)} rows, the table"
                    f" {len(reader)} (an interrupted append?)"
                )
    else:
        carrays.append((reader, None))
    for column, label in carrays:
        _verify_carray(column, len(reader), label, report)
    for target in [reader.path] + [c.path for c, label in carrays if label is not None]:
        try:
            BcolzAttrs(target)
        except BloscpackError as exc:
            report["problems"].append(str(exc))
    if isinstance(reader, CtableReader) and not os.path.isfile(
        os.path.join(reader.path, ATTRS_FILE)
    ):
        report["warnings"].append(f"{os.path.join(reader.path, ATTRS_FILE)}: missing")
    report["ok"] = not report["bad_chunks"] and not report["problems"]
    return report


# --- writing ------------------------------------------------------------------------------


def _dflt_json(dtype: np.dtype[Any], dflt: Any) -> Any:
    """The ``dflt`` value of ``meta/storage``: bcolz's ``np.zeros((), dtype)`` set from
    ``dflt``, as JSON (bytes as ASCII text; datetimes as their integer count)."""
    value = np.zeros((), dtype)
    if dflt is not None:
        try:
            value[()] = dflt
        except (TypeError, ValueError, OverflowError) as exc:
            raise ArgumentError(f"dflt {dflt!r:.80} does not fit dtype {dtype}: {exc}") from None
    return _scalar_json(value, dflt)


def _scalar_json(value: np.ndarray, dflt: Any) -> Any:
    dtype = value.dtype
    if dtype.names:
        return [_scalar_json(value[name], dflt) for name in dtype.names]
    if dtype.shape:
        return [_scalar_json(np.asarray(item), dflt) for item in value.reshape(-1)[()]]
    if dtype.kind in "Mm":
        return int(value.view(np.int64))
    if dtype.kind == "c":
        if value != 0:
            raise ArgumentError(f"dflt {dflt!r:.80}: bcolz cannot store a non-zero complex default")
        return 0
    item = value.tolist()
    if isinstance(item, bytes):
        try:
            return item.decode("ascii")
        except UnicodeDecodeError:
            raise ArgumentError(
                f"dflt {dflt!r:.80}: bcolz stores byte defaults as ASCII text"
            ) from None
    return item


def _column_layout(data: np.ndarray, *, chunklen: int | None, expectedlen: int | None,
                   cparams: Cparams, dflt: Any) -> tuple[int, int]:  # fmt: skip
    """Check one carray's data and settings before anything is written; return its
    ``(chunklen, expectedlen)``."""
    if data.ndim == 0:
        raise ArgumentError("bcolz stores arrays of at least one dimension, got a scalar")
    if data.dtype.hasobject:
        raise ObjectNumpyArrayRejection("object arrays are refused: bcolz would store pickles")
    atomsize = row_nbytes(data.dtype, data.shape[1:])
    if cparams.quantize and data.dtype.kind != "f":
        raise ArgumentError(f"quantize is only for floating-point data, not {data.dtype}")
    if expectedlen is None:
        expectedlen = len(data)
    if not _is_int(expectedlen) or expectedlen < 0:
        raise ArgumentError(f"expectedlen must be an integer >= 0, got {expectedlen!r}")
    if chunklen is None:
        chunklen = default_chunklen(atomsize, expectedlen)
    check_chunklen(chunklen, atomsize)
    _dflt_json(data.dtype, dflt)
    return chunklen, expectedlen


def _write_file(path: str, blob: bytes) -> None:
    """Write a file in a directory that is still private (it appears whole by a rename)."""
    with open(path, "wb") as fh:
        fh.write(blob)


def _fsync_tree(rootdir: str) -> None:
    """Flush every file, then every directory, under ``rootdir`` to disk (files first, all
    written before: the kernel writes them back together)."""
    for dirpath, _dirs, files in os.walk(rootdir):
        for name in files:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    for dirpath, _dirs, _files in os.walk(rootdir):
        fsync_directory(dirpath)


class CarrayWriter:
    """Writes a new carray directory at ``rootdir`` (which must not exist) as bcolz does.

    :meth:`append_rows` takes rows (``(n, *rowshape)`` of ``dtype``) and compresses them
    ``chunklen`` at a time (quantized as ``cparams`` says); :meth:`append_chunk` stores a Blosc1
    chunk of ``chunklen`` rows as it is.  :meth:`close` writes the leftover rows,
    ``meta/storage``, ``meta/sizes`` and ``__attrs__``, then, if ``durable``, flushes every file
    to disk.  ``expectedlen`` defaults to the rows written; ``dflt`` and ``attrs`` are checked
    before anything is written.  Files are written in place: build the directory under a
    private name and rename it into place.
    """

    def __init__(
        self,
        rootdir: str,
        dtype: np.dtype[Any],
        rowshape: tuple[int, ...],
        chunklen: int,
        cparams: Cparams,
        *,
        expectedlen: int | None = None,
        dflt: Any = None,
        attrs: Mapping[str, Any] | None = None,
        durable: bool = False,
    ) -> None:
        self.dflt = _dflt_json(dtype, dflt)
        self.attrs_blob = _attrs_blob(attrs)
        self.rootdir = rootdir
        self.dtype, self.rowshape, self.chunklen, self.cparams = dtype, rowshape, chunklen, cparams
        self.expectedlen = expectedlen
        self.durable = durable
        self.atomsize = dtype.itemsize * math.prod(rowshape)
        self.nrows = 0
        self.nchunks = 0
        self.cbytes = chunklen * self.atomsize  # bcolz counts the leftover buffer
        self._buffer: np.ndarray | None = None  # rows waiting for a full chunk
        self._filled = 0
        os.mkdir(rootdir)
        os.mkdir(os.path.join(rootdir, DATA_DIR))
        os.mkdir(os.path.join(rootdir, META_DIR))

    def append_chunk(self, chunk: Any) -> None:
        """Store a Blosc1 chunk of whole rows as the next chunk file."""
        header = ChunkHeader.parse(chunk)
        rows = header.nbytes // self.atomsize
        self._write_chunk(memoryview(chunk).cast("B")[: header.cbytes], rows)

    def append_rows(self, rows: np.ndarray) -> None:
        """Add rows; every full chunk is compressed and written (straight from ``rows`` when
        no rows are waiting)."""
        pos, n, chunklen = 0, len(rows), self.chunklen
        while pos < n:
            if not self._filled and n - pos >= chunklen:
                self._write_rows(rows[pos : pos + chunklen])
                pos += chunklen
                continue
            if self._buffer is None:
                self._buffer = np.empty((chunklen, *self.rowshape), self.dtype)
            take = min(chunklen - self._filled, n - pos)
            self._buffer[self._filled : self._filled + take] = rows[pos : pos + take]
            self._filled += take
            pos += take
            if self._filled == chunklen:
                self._flush()

    def _flush(self) -> None:
        if self._filled and self._buffer is not None:
            self._write_rows(self._buffer[: self._filled])
            self._filled = 0

    def _write_rows(self, rows: np.ndarray) -> None:
        self._write_chunk(_compress_chunk(rows, self.cparams), len(rows))

    def _write_chunk(self, chunk: Any, rows: int) -> None:
        """Write the next chunk file: bcolz's 16-byte header, then the Blosc chunk."""
        with open(_chunk_file(self.rootdir, self.nchunks), "wb") as fh:
            fh.write(BLPK_HEADER)
            fh.write(chunk)
            if self.durable:  # the disk writes it while the next chunks are compressed
                fh.flush()
                start_writeback(fh.fileno())
        if rows == self.chunklen:
            self.cbytes += _chunk_cbytes(chunk)
        self.nchunks += 1
        self.nrows += rows

    def close(self) -> None:
        """Write the leftover rows and the metadata files (and flush them if ``durable``)."""
        self._flush()
        expectedlen = self.nrows if self.expectedlen is None else self.expectedlen
        storage = _dumps({
            "dtype": str(self.dtype),
            "cparams": self.cparams.to_json(),
            "chunklen": self.chunklen,
            "expectedlen": expectedlen,
            "dflt": self.dflt,
        })  # fmt: skip
        _write_file(os.path.join(self.rootdir, STORAGE_FILE), storage)
        shape = (self.nrows, *self.rowshape)
        _write_file(os.path.join(self.rootdir, SIZES_FILE),
                    _sizes_blob(shape, self.atomsize, self.cbytes))  # fmt: skip
        _write_file(os.path.join(self.rootdir, ATTRS_FILE), self.attrs_blob)
        if self.durable:
            _fsync_tree(self.rootdir)


class CtableWriter:
    """Writes a new ctable directory at ``rootdir`` (which must not exist) as bcolz does:
    ``__rootdirs__``, one :class:`CarrayWriter` per column (``columns`` maps each name, in
    table order, to its ``(dtype, rowshape, chunklen)``; ``dflts`` to its default value), and
    ``__attrs__`` on :meth:`close`; ``durable`` then flushes every file to disk."""

    def __init__(
        self,
        rootdir: str,
        columns: Mapping[str, tuple[np.dtype[Any], tuple[int, ...], int]],
        cparams: Cparams,
        *,
        expectedlen: int | None = None,
        dflts: Mapping[str, Any] | None = None,
        attrs: Mapping[str, Any] | None = None,
        durable: bool = False,
    ) -> None:
        for name in columns:
            check_column_name(name)
        self.attrs_blob = _attrs_blob(attrs)
        self.rootdir = rootdir
        self.durable = durable
        os.mkdir(rootdir)
        _write_file(os.path.join(rootdir, ROOTDIRS_FILE), _dumps({"names": list(columns)}))
        dflts = dflts or {}
        self.columns = {
            name: CarrayWriter(os.path.join(rootdir, name), dtype, rowshape, chunklen, cparams,
                               expectedlen=expectedlen, dflt=dflts.get(name))
            for name, (dtype, rowshape, chunklen) in columns.items()
        }  # fmt: skip

    def append_rows(self, rows: np.ndarray) -> None:
        """Add the rows of a structured array holding (at least) the table's fields."""
        for name, writer in self.columns.items():
            writer.append_rows(rows[name])

    def close(self) -> None:
        """Close every column, then write ``__attrs__`` (and flush all if ``durable``)."""
        for writer in self.columns.values():
            writer.close()
        _write_file(os.path.join(self.rootdir, ATTRS_FILE), self.attrs_blob)
        if self.durable:
            _fsync_tree(self.rootdir)


@contextlib.contextmanager
def _new_directory(rootdir: str, overwrite: bool) -> Iterator[str]:
    """A private temporary directory path that becomes ``rootdir`` when the block succeeds."""
    rootdir = os.path.abspath(rootdir)
    if is_written_in_place(rootdir):
        raise ArgumentError(f"{rootdir}: is a FIFO or a device, not a directory")
    if os.path.lexists(rootdir) and not overwrite:
        raise OutputExistsError(f"{rootdir}: already exists (pass overwrite=True to replace it)")
    with staged_output(rootdir) as target:
        yield target


def save_bcolz(
    array: Any,
    rootdir: PathLike,
    *,
    chunklen: int | None = None,
    expectedlen: int | None = None,
    clevel: int = 5,
    shuffle: int = 1,
    cname: str = "lz4",
    quantize: int = 0,
    dflt: Any = None,
    attrs: Mapping[str, Any] | None = None,
    overwrite: bool = False,
    durable: bool = True,
    codec: str | None = None,
) -> None:
    """Write ``array`` as a bcolz directory that bcolz 1.x opens, the way bcolz writes it.

    A structured 1-D array becomes a ctable (one carray column per field, named after it;
    ``dflt`` is then a mapping of field name to default), any other array a carray.
    ``chunklen`` and ``expectedlen`` default as in bcolz (chunks of 16 KiB to 4 MiB by the
    expected size), ``clevel``/``shuffle``/``cname`` are bcolz's defaults, ``quantize`` is
    bcolz's lossy float rounding to that many significant digits, ``attrs`` go to ``__attrs__``.
    The directory appears whole or not at all (it is written under a temporary name, then
    renamed); ``overwrite`` replaces an existing one.  ``durable`` flushes every file to disk
    before the rename (``False`` is faster for many small chunks and still atomic for other
    processes, but a power loss may then lose the directory).  ``codec`` is an alias of
    ``cname``, the name every other writer uses.
    """
    rootdir = os.fspath(rootdir)
    data = np.asarray(array)
    cparams = Cparams.make(clevel, shuffle, codec or cname, quantize)
    _attrs_blob(attrs)  # checked now: nothing is made unless every argument is valid
    layout = functools.partial(
        _column_layout, chunklen=chunklen, expectedlen=expectedlen, cparams=cparams
    )
    if data.dtype.names is None:
        chunk_rows, expected = layout(data, dflt=dflt)
        with _new_directory(rootdir, overwrite) as target:
            writer = CarrayWriter(
                target, data.dtype, data.shape[1:], chunk_rows, cparams,
                expectedlen=expected, dflt=dflt, attrs=attrs, durable=durable,
            )  # fmt: skip
            writer.append_rows(data)
            writer.close()
        return
    if data.ndim != 1:
        raise ArgumentError(
            f"a structured array is saved as a ctable and must be 1-D, got shape {data.shape}"
        )
    names = list(data.dtype.names)
    for name in names:
        check_column_name(name)
    dflts = _column_dflts(dflt, names)
    columns = {}
    for name in names:
        column = data[name]
        chunk_rows, _ = layout(column, dflt=dflts.get(name))
        columns[name] = (column.dtype, column.shape[1:], chunk_rows)
    with _new_directory(rootdir, overwrite) as target:
        table = CtableWriter(
            target, columns, cparams, expectedlen=len(data) if expectedlen is None else expectedlen,
            dflts=dflts, attrs=attrs, durable=durable,
        )  # fmt: skip
        table.append_rows(data)
        table.close()


def _column_dflts(dflt: Any, names: Sequence[str]) -> dict[str, Any]:
    if dflt is None:
        return {}
    if not isinstance(dflt, Mapping):
        raise ArgumentError("for a ctable, dflt is a mapping of column name to default value")
    unknown = [key for key in dflt if key not in names]
    if unknown:
        raise ArgumentError(f"dflt names unknown columns: {unknown}")
    return dict(dflt)


# --- appending ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _AppendPlan:
    """One carray append: the chunk files to write from ``first`` on, then ``meta/sizes``."""

    reader: CarrayReader
    cparams: Cparams
    rows: np.ndarray  # the old leftover rows, then the new ones (quantized when compressed)
    first: int  # index of the first chunk file written
    length: int  # rows after the append
    cbytes: int  # bcolz's ``cbytes`` before the append


def _plan_append(reader: CarrayReader, rows: np.ndarray, length: int) -> _AppendPlan:
    """Plan appending ``rows`` after the first ``length`` rows of a carray (nothing written)."""
    cparams = reader.cparams
    if cparams.cname not in WRITABLE_CODECS:
        raise UnsupportedError(
            f"{os.path.join(reader.path, STORAGE_FILE)}: new chunks would use codec"
            f" {cparams.cname!r}, which cannot be written; bloscpack writes {WRITABLE_CODECS}"
        )
    nfull, rem = divmod(length, reader.chunklen)
    if rem:  # the old leftover rows lead the first chunk rewritten
        rows = np.concatenate([reader.read(nfull * reader.chunklen, length), rows])
    old = _read_meta_json(os.path.join(reader.path, SIZES_FILE), "sizes")
    cbytes: Any = old.get("cbytes") if isinstance(old, dict) else None
    if not _is_int(cbytes):
        cbytes = reader.chunklen * reader.atomsize
    return _AppendPlan(reader, cparams, rows, nfull, nfull * reader.chunklen + len(rows), cbytes)


def _write_append_chunks(plan: _AppendPlan) -> bytes:
    """Write the chunk files of ``plan``, each replaced atomically; return the new
    ``meta/sizes`` (``cbytes`` grows by every full chunk written, as in bcolz)."""
    reader, chunklen = plan.reader, plan.reader.chunklen
    cbytes = plan.cbytes
    for i, row in enumerate(range(0, len(plan.rows), chunklen)):
        rows = plan.rows[row : row + chunklen]
        chunk = _compress_chunk(rows, plan.cparams)
        if len(rows) == chunklen:
            cbytes += _chunk_cbytes(chunk)
        with atomic_write(_chunk_file(reader.path, plan.first + i)) as fh:
            fh.write(BLPK_HEADER)
            fh.write(chunk)
    return _sizes_blob((plan.length,) + reader.shape[1:], reader.atomsize, cbytes)


def _coerce_rows(reader: CarrayReader, rows: Any) -> np.ndarray:
    """``rows`` as a C-contiguous array of the carray's dtype and row shape.  Arrays cast only
    within their kind (no float to int) and integers must fit; other values convert as numpy
    converts them."""
    try:
        if not isinstance(rows, np.ndarray):
            data = np.asarray(rows, dtype=reader.dtype)
        elif rows.dtype.hasobject:
            raise ObjectNumpyArrayRejection("object arrays are refused: bcolz would store pickles")
        else:
            data = rows.astype(reader.dtype, casting="same_kind", copy=False)
            if rows.dtype.kind in "iu" and reader.dtype.kind in "iu" and rows.size:
                limits = np.iinfo(reader.dtype)
                if rows.min() < limits.min or rows.max() > limits.max:
                    raise OverflowError(f"values outside {limits.min}..{limits.max}")
    except (TypeError, ValueError, OverflowError) as exc:
        kind = rows.dtype if isinstance(rows, np.ndarray) else type(rows).__name__
        raise ArgumentError(
            f"{reader.path}: cannot append {kind} rows to a {reader.dtype} carray: {exc}"
        ) from None
    row_shape = reader.shape[1:]
    if data.shape == row_shape:
        data = data.reshape((1,) + row_shape)
    if data.shape[1:] != row_shape:
        raise ArgumentError(
            f"{reader.path}: rows of shape {data.shape[1:]} do not match the carray's {row_shape}"
        )
    return np.ascontiguousarray(data)


def _prepare_appends(path: str, rows: Any) -> list[tuple[CarrayReader, np.ndarray, int]]:
    """Readers, converted rows and current table length for every carray an append touches."""
    reader = open_bcolz(path)
    if isinstance(reader, CarrayReader):
        reader.refuse_objects()
        return [(reader, _coerce_rows(reader, rows), len(reader))]
    length = len(reader)
    if isinstance(rows, Mapping):
        columns = {name: rows[name] for name in rows}
    else:
        data = np.asarray(rows)
        if data.dtype.names is None:
            raise ArgumentError(
                f"{reader.path}: append a structured array or a mapping of columns to a ctable"
            )
        columns = {name: data[name] for name in data.dtype.names}
    if set(columns) != set(reader.names):
        raise ArgumentError(
            f"{reader.path}: rows have columns {sorted(columns)},"
            f" the table has {sorted(reader.names)}"
        )
    work = []
    counts = set()
    for name in reader.names:
        column = reader.carray(name)
        column.refuse_objects()
        converted = _coerce_rows(column, columns[name])
        counts.add(len(converted))
        work.append((column, converted, length))
    if len(counts) > 1:
        raise ArgumentError(
            f"{reader.path}: columns to append have different lengths {sorted(counts)}"
        )
    return work


def append_bcolz(path: PathLike, rows: Any) -> int:
    """Append ``rows`` to a carray or ctable directory as bcolz does; return the new length.

    For a ctable, ``rows`` is a structured array or a mapping of column name to values.
    The leftover chunk is rewritten with the new rows after its own, further chunks are added,
    and ``meta/sizes`` is replaced last (for a ctable: the first column's last, since its
    length is the table's), every file atomically: if the append is interrupted, the
    directory still reads as before it started.
    """
    path = os.fspath(path)
    plans = [
        _plan_append(reader, data, length) for reader, data, length in _prepare_appends(path, rows)
    ]
    sizes = [_write_append_chunks(plan) for plan in plans]
    # sizes last; the first column's (which gives a ctable's length) after all the others
    for plan, blob in reversed(list(zip(plans, sizes, strict=True))):
        with atomic_write(os.path.join(plan.reader.path, SIZES_FILE)) as fh:
            fh.write(blob)
    return plans[0].length


class BcolzTarget(Target):
    """A bcolz carray, or a ctable for a 1-d structured array (one carray per field)."""

    fmt = "bcolz"
    OPTIONS = {"chunklen": None, "expectedlen": None, "clevel": 5, "shuffle": 1, "cname": "lz4",
               "durable": True}  # fmt: skip

    def __init__(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> None:
        super().__init__(source, copy_chunks)
        opts = take_options(options, self.OPTIONS, self.fmt)
        spec = source.spec
        if not spec.shape:
            raise ArgumentError(f"{source.name}: bcolz stores arrays of at least one dimension,"
                                " this one is 0-d")  # fmt: skip
        if spec.order == "F":
            self.dropped.append("Fortran order: bcolz arrays are C-ordered (values are kept)")
        nd.check_storable(spec.dtype)
        self.cparams = Cparams.make(opts["clevel"], opts["shuffle"], opts["cname"])
        self.durable = bool(opts["durable"])
        expectedlen = opts["expectedlen"]
        if expectedlen is None:
            expectedlen = spec.shape[0]
        self.names = list(spec.dtype.names or ())
        if self.names:
            if len(spec.shape) != 1:
                raise ArgumentError(
                    f"a structured array is stored as a ctable and must be 1-D, got shape"
                    f" {spec.shape}"
                )
            for name in self.names:
                check_column_name(name)
            packed = np.dtype([(name, spec.dtype[name]) for name in self.names])
            if packed != spec.dtype:
                self.dropped.append(
                    f"the layout of dtype {spec.dtype} (padding, offsets or titles): a ctable"
                    f" stores the fields only and reads back as {packed}"
                )
        columns = [spec.dtype[name] for name in self.names] or [
            np.dtype((spec.dtype, spec.shape[1:]))
        ]
        self.typesize = blosc_typesize(spec.dtype)  # of a carray's chunks
        self.layouts: list[tuple[np.dtype, tuple[int, ...], int]] = []
        for dtype in columns:
            base, rowshape = dtype.base, tuple(dtype.shape)
            atomsize = row_nbytes(base, rowshape)
            chunklen = opts["chunklen"]
            if chunklen is None:
                chunklen = self._copy_chunklen(atomsize) or default_chunklen(
                    atomsize, expectedlen
                )
            check_chunklen(chunklen, atomsize)
            self.layouts.append((base, rowshape, chunklen))
        self.attrs = json_user(source, "bcolz attributes (JSON)", self.dropped)
        kept_metalayers(source, self.dropped, 0, False)

    def _copy_chunklen(self, atomsize: int) -> int | None:
        source = self.source
        span = source.uniform_span()
        if (self.names or span is None or span % atomsize or source.spec.order != "C"
                or not self._copyable(source.first_chunk_header())):  # fmt: skip
            return None
        return span // atomsize

    def accepts_format(self, header: ChunkHeader) -> bool:
        # bcolz reads parts of chunks in typesize units: the typesize must follow its rule
        return header.blosc_version == 1 and header.typesize == self.typesize

    def write(self, path: str) -> None:
        source = self.source
        if not self.names:
            dtype, rowshape, chunklen = self.layouts[0]
            writer = CarrayWriter(path, dtype, rowshape, chunklen, self.cparams, attrs=self.attrs,
                                  durable=self.durable)  # fmt: skip

            def put_data(data: memoryview) -> None:
                writer.append_rows(np.frombuffer(data, dtype=dtype).reshape((-1, *rowshape)))

            spans = flat_spans(source.nbytes, chunklen * writer.atomsize)
            self._write_spans(spans, True, writer.append_chunk, put_data)
            writer.close()
            return
        table = CtableWriter(path, dict(zip(self.names, self.layouts, strict=True)), self.cparams,
                             attrs=self.attrs, durable=self.durable)  # fmt: skip
        slab = max(1, SLAB_NBYTES // max(source.row_nbytes, 1))
        for r0 in range(0, source.nrows, slab):
            rows = source.read_rows(r0, min(r0 + slab, source.nrows))
            table.append_rows(rows)
            self.progress(rows.nbytes)
        table.close()
        self.recompressed = sum(writer.nchunks for writer in table.columns.values())


ConversionTarget = BcolzTarget
