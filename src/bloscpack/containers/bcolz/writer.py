"""Writing new bcolz directories as bcolz does: :class:`CarrayWriter` and :class:`CtableWriter`
chunk by chunk, :func:`save_bcolz` (staged under a temporary name, renamed when complete, flushed
to disk if ``durable``), :func:`open_writer` (a carray's
:class:`~bloscpack.containers.base.ContainerWriter`), the conversion target
(:class:`BcolzTarget`) and :func:`own_options`."""

from __future__ import annotations

import contextlib
import functools
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ... import engine
from ... import ndarray as nd
from ...blosc.header import ChunkHeader
from ...errors import ArgumentError, ObjectNumpyArrayRejection
from ...io.durability import fsync_tree, start_writeback
from ...io.paths import PathLike
from ...io.staging import StagedOutput, is_written_in_place, staged_output
from ..base import ArrayDescription, WriterBase, map_chunks
from ..options import CompressionParams, chunk_rows, rows_of, shuffle_only
from ..target import (
    SLAB_NBYTES,
    Target,
    flat_spans,
    json_user,
    kept_metalayers,
    take_options,
    writer_user,
)
from .attrs import _attrs_blob
from .layout import (
    ATTRS_FILE,
    BLPK_HEADER,
    DATA_DIR,
    META_DIR,
    ROOTDIRS_FILE,
    SIZES_FILE,
    STORAGE_FILE,
    Cparams,
    _chunk_cbytes,
    _chunk_file,
    _compress_chunk,
    _dumps,
    _is_int,
    _sizes_blob,
    blosc_typesize,
    check_chunklen,
    check_column_name,
    chunk_compressor,
    default_chunklen,
    row_nbytes,
    sniff_dir,
)


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


def _store(rootdir: str, index: int, chunk: Any, durable: bool) -> None:
    """Write chunk file ``index``: bcolz's 16-byte header, then the Blosc chunk."""
    with open(_chunk_file(rootdir, index), "wb") as fh:
        fh.write(BLPK_HEADER)
        fh.write(chunk)
        if durable:  # the disk writes it while the next chunks are compressed
            fh.flush()
            start_writeback(fh.fileno())


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
                whole = (n - pos) // chunklen * chunklen
                self._write_whole(rows[pos : pos + whole])
                pos += whole
                continue
            if self._buffer is None:
                self._buffer = np.empty((chunklen, *self.rowshape), self.dtype)
            take = min(chunklen - self._filled, n - pos)
            self._buffer[self._filled : self._filled + take] = rows[pos : pos + take]
            self._filled += take
            pos += take
            if self._filled == chunklen:
                self._flush()

    def _write_whole(self, rows: np.ndarray) -> None:
        """Write the whole chunks ``rows`` holds: :func:`~bloscpack.engine.get_nthreads`
        compressed at a time (on threads of their own: other Blosc1 compressions, which may
        be on the shared pool's threads, wait meanwhile), each written in order as soon as it
        and those before are done."""
        with chunk_compressor(self.cparams, self.dtype) as compress, contextlib.closing(
            map_chunks(lambda _, box: compress(box), rows, (self.chunklen, *self.rowshape),
                       threads=engine.get_nthreads(), own_threads=True)
        ) as chunks:  # fmt: skip
            for chunk in chunks:
                self._write_chunk(chunk, self.chunklen)

    def _flush(self) -> None:
        if self._filled and self._buffer is not None:
            self._write_rows(self._buffer[: self._filled])
            self._filled = 0

    def _write_rows(self, rows: np.ndarray) -> None:
        self._write_chunk(_compress_chunk(rows, self.cparams), len(rows))

    def _write_chunk(self, chunk: Any, rows: int) -> None:
        _store(self.rootdir, self.nchunks, chunk, self.durable)
        self.add_stored(rows, _chunk_cbytes(chunk))

    def add_stored(self, rows: int, cbytes: int) -> None:
        """Count the next chunk (``rows`` rows, ``cbytes`` compressed), whose file is written."""
        if rows == self.chunklen:
            self.cbytes += cbytes
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
            fsync_tree(self.rootdir)


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
            fsync_tree(self.rootdir)


@contextlib.contextmanager
def _new_directory(rootdir: str, overwrite: bool) -> Iterator[str]:
    """A private temporary directory path that becomes ``rootdir`` when the block succeeds."""
    rootdir = os.path.abspath(rootdir)
    if is_written_in_place(rootdir):
        raise ArgumentError(f"{rootdir}: is a FIFO or a device, not a directory")
    with staged_output(
        rootdir, overwrite=overwrite, replaces=sniff_dir, what="a bcolz directory"
    ) as target:
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
    options = dict(locals())
    for name in ("array", "rootdir", "overwrite"):
        del options[name]
    settings = BcolzSettings.parse(options)
    data = np.asarray(array)
    directory = os.fspath(rootdir)
    if data.dtype.names is None:
        chunklen, expected = settings.carray(data.dtype, data.shape)
        with _new_directory(directory, overwrite) as target:
            writer = settings.carray_writer(target, data.dtype, data.shape[1:], chunklen,
                                            expected)  # fmt: skip
            writer.append_rows(data)
            writer.close()
        return
    columns, dflts = settings.table(data.dtype, data.shape)
    with _new_directory(directory, overwrite) as target:
        table = settings.table_writer(target, columns, dflts, len(data))
        table.append_rows(data)
        table.close()


#: The options of a new bcolz directory and their defaults (those :func:`save_bcolz` takes
#: but ``overwrite``, which is the staged output's).
OPTIONS: dict[str, Any] = {
    "chunklen": None, "expectedlen": None, "clevel": 5, "shuffle": 1, "cname": "lz4",
    "quantize": 0, "dflt": None, "attrs": None, "durable": True, "codec": None,
}  # fmt: skip


@dataclass(frozen=True)
class BcolzSettings:
    """What a new bcolz directory is written with, checked before anything is made: the
    chunks' compression, the chunk length in rows (None: bcolz's default), the expected
    length (None: the rows written), the default value(s), the attributes and whether every
    file is flushed to disk before the directory appears."""

    cparams: Cparams
    chunklen: int | None = None
    expectedlen: int | None = None
    dflt: Any = None
    attrs: Mapping[str, Any] | None = None
    durable: bool = True

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> BcolzSettings:
        """The settings ``options`` (names of :data:`OPTIONS`) ask for."""
        opts = take_options(dict(options), OPTIONS, "bcolz")
        cparams = Cparams.make(opts["clevel"], opts["shuffle"], opts["codec"] or opts["cname"],
                               opts["quantize"])  # fmt: skip
        _attrs_blob(opts["attrs"])  # checked now: nothing is made unless every option is valid
        expectedlen = opts["expectedlen"]
        if expectedlen is not None and (not _is_int(expectedlen) or expectedlen < 0):
            raise ArgumentError(f"expectedlen must be an integer >= 0, got {expectedlen!r}")
        return cls(cparams, opts["chunklen"], expectedlen, opts["dflt"], opts["attrs"],
                   bool(opts["durable"]))  # fmt: skip

    def carray(self, dtype: np.dtype, shape: tuple[int, ...],
               chunklen: int | None = None) -> tuple[int, int]:  # fmt: skip
        """The checked ``(chunklen, expectedlen)`` of a new carray of ``dtype`` and
        ``shape`` (``chunklen``: the default chunk length where none was given)."""
        data = np.broadcast_to(np.zeros((), dtype), shape)  # no memory: the layout needs none
        if self.chunklen is not None:
            chunklen = self.chunklen
        return _column_layout(data, chunklen=chunklen,
                              expectedlen=self.expectedlen, cparams=self.cparams,
                              dflt=self.dflt)  # fmt: skip

    def table(self, dtype: np.dtype, shape: tuple[int, ...]
              ) -> tuple[TableColumns, dict[str, Any]]:  # fmt: skip
        """The checked columns of a new ctable of the structured ``dtype`` and ``shape`` and
        their default values (:func:`_table_layout`)."""
        data = np.broadcast_to(np.zeros((), dtype), shape)
        layout = functools.partial(_column_layout, chunklen=self.chunklen,
                                   expectedlen=self.expectedlen, cparams=self.cparams)  # fmt: skip
        return _table_layout(data, layout, self.dflt)

    def carray_writer(self, rootdir: str, dtype: np.dtype, rowshape: tuple[int, ...],
                      chunklen: int, expectedlen: int) -> CarrayWriter:  # fmt: skip
        """The one writer of a new carray at ``rootdir`` (:meth:`carray` gave ``chunklen``
        and ``expectedlen``)."""
        return CarrayWriter(rootdir, dtype, rowshape, chunklen, self.cparams,
                            expectedlen=expectedlen, dflt=self.dflt, attrs=self.attrs,
                            durable=self.durable)  # fmt: skip

    def table_writer(self, rootdir: str, columns: TableColumns, dflts: Mapping[str, Any],
                     nrows: int) -> CtableWriter:  # fmt: skip
        """The one writer of a new ctable of ``nrows`` rows at ``rootdir`` (:meth:`table`
        gave ``columns`` and ``dflts``)."""
        expectedlen = nrows if self.expectedlen is None else self.expectedlen
        return CtableWriter(rootdir, columns, self.cparams, expectedlen=expectedlen,
                            dflts=dflts, attrs=self.attrs, durable=self.durable)  # fmt: skip


#: The columns of a new ctable: each name's ``(dtype, rowshape, chunklen)``.
TableColumns = dict[str, tuple[np.dtype, tuple[int, ...], int]]


def _table_layout(data: np.ndarray, layout: Any, dflt: Any
                  ) -> tuple[TableColumns, dict[str, Any]]:  # fmt: skip
    """The columns of the ctable of the structured array ``data`` (the ``columns`` of
    :class:`CtableWriter`, each column's chunklen from ``layout``, :func:`_column_layout` with
    the table's settings) and their defaults (``dflt``: a mapping by column name)."""
    if data.ndim != 1:
        raise ArgumentError(
            f"a structured array is saved as a ctable and must be 1-D, got shape {data.shape}"
        )
    names = list(data.dtype.names or ())
    for name in names:
        check_column_name(name)
    dflts = _column_dflts(dflt, names)
    columns = {}
    for name in names:
        column = data[name]
        chunk_rows, _ = layout(column, dflt=dflts.get(name))
        columns[name] = (column.dtype, column.shape[1:], chunk_rows)
    return columns, dflts


@dataclass(frozen=True)
class CarrayLayout:
    """A carray's chunks: ``chunks[0]`` rows each (the leftover, last, fewer), compressed as
    ``cparams`` say."""

    cparams: Cparams
    nchunks: int
    chunks: tuple[int, ...]
    durable: bool
    flat = False

    def compress_chunk(self, index: int, data: np.ndarray) -> bytes:
        return _compress_chunk(np.asarray(data), self.cparams)

    def store_chunk(self, directory: str, index: int, data: np.ndarray) -> tuple[int, int]:
        """Compress chunk ``index`` into its file under ``directory``; returns its rows and
        compressed size."""
        chunk = self.compress_chunk(index, data)
        _store(directory, index, chunk, self.durable)
        return len(data), _chunk_cbytes(chunk)


class _ColumnWriter:
    """One carray of a new ctable (:attr:`CtableArrayWriter.columns`): its chunks appended or
    stored by tasks under :attr:`directory`, its files finished with the table."""

    columns = None

    def __init__(self, carray: CarrayWriter, layout: CarrayLayout) -> None:
        self._carray = carray
        self.layout = layout
        self.directory = carray.rootdir

    def compress_chunk(self, index: int, data: np.ndarray) -> bytes:
        return self.layout.compress_chunk(index, data)

    def append_chunk(self, chunk: Any) -> None:
        self._carray.append_chunk(chunk)

    def append_stored(self, index: int, stored: Any) -> None:
        self._carray.add_stored(*stored)


class BcolzWriter(WriterBase):
    """A new carray directory of an array (:func:`open_writer`)."""

    def __init__(self, output: StagedOutput, description: ArrayDescription,
                 settings: BcolzSettings) -> None:  # fmt: skip
        dtype, shape = description.dtype, description.shape
        chunklen, expected = settings.carray(dtype, shape)
        super().__init__(output)
        self.directory = output.path
        self._carray = settings.carray_writer(self.directory, dtype, shape[1:], chunklen,
                                              expected)  # fmt: skip
        nchunks = -(-shape[0] // chunklen)
        self.layout = CarrayLayout(settings.cparams, nchunks, (chunklen, *shape[1:]),
                                   settings.durable)  # fmt: skip

    def append_chunk(self, chunk: Any) -> None:
        self._carray.append_chunk(chunk)

    def append_stored(self, index: int, stored: Any) -> None:
        self._carray.add_stored(*stored)

    def _finish(self) -> None:
        self._carray.close()


class CtableArrayWriter(WriterBase):
    """A new ctable directory of a 1-d structured array (:func:`open_writer`): the files
    :func:`save_bcolz` writes.  Its :attr:`columns` write the carrays, one per field; the
    table has no layout of its own."""

    layout = None

    def __init__(self, output: StagedOutput, description: ArrayDescription,
                 settings: BcolzSettings) -> None:  # fmt: skip
        columns, dflts = settings.table(description.dtype, description.shape)
        super().__init__(output)
        nrows = description.shape[0]
        self._table = settings.table_writer(output.path, columns, dflts, nrows)
        self.directory = output.path
        cparams, durable = settings.cparams, settings.durable
        self.columns = {
            name: _ColumnWriter(carray, CarrayLayout(cparams, -(-nrows // carray.chunklen),
                                                     (carray.chunklen, *carray.rowshape),
                                                     durable))
            for name, carray in self._table.columns.items()
        }  # fmt: skip

    def append_chunk(self, chunk: Any) -> None:
        raise ArgumentError("a ctable takes chunks column by column (its columns' writers)")

    def _finish(self) -> None:
        self._table.close()


def open_writer(output: StagedOutput, description: ArrayDescription, *, metadata: Any = None,
                **options: Any) -> BcolzWriter | CtableArrayWriter:  # fmt: skip
    """A :class:`~bloscpack.containers.base.ContainerWriter` of a new bcolz directory of the
    array ``description`` at ``output.path`` (``options``: those of :func:`save_bcolz`): the
    files :func:`save_bcolz` writes, a carray, or a ctable for a structured array (whose
    ``columns`` are the writers of its carrays).  The user ``metadata`` are its attributes
    (give them or ``attrs``)."""
    if metadata is not None:
        if options.get("attrs") is not None:
            raise ArgumentError("metadata= is stored as the bcolz attributes: give it or"
                                " attrs=, not both")  # fmt: skip
        options["attrs"] = writer_user(metadata, "bcolz", lambda source, dropped: json_user(
            source, BCOLZ_ATTRS, dropped))  # fmt: skip
    settings = BcolzSettings.parse(options)
    if description.dtype.names is not None:
        return CtableArrayWriter(output, description, settings)
    return BcolzWriter(output, description, settings)


def _column_dflts(dflt: Any, names: Sequence[str]) -> dict[str, Any]:
    if dflt is None:
        return {}
    if not isinstance(dflt, Mapping):
        raise ArgumentError("for a ctable, dflt is a mapping of column name to default value")
    unknown = [key for key in dflt if key not in names]
    if unknown:
        raise ArgumentError(f"dflt names unknown columns: {unknown}")
    return dict(dflt)


def refused(dtype: np.dtype, shape: tuple[int, ...]) -> str | None:
    """Why bcolz cannot hold an array of ``dtype`` and ``shape`` as it is, or None."""
    if not shape:
        return "bcolz stores arrays of at least one dimension, this one is 0-d"
    if dtype.names is None:
        empty = dtype.itemsize * math.prod(shape[1:]) == 0
        return f"rows of shape {shape[1:]} and dtype {dtype} hold no bytes" if empty else None
    if len(shape) != 1:
        return f"a structured array is stored as a ctable and must be 1-D, got shape {shape}"
    if not dtype.names:
        return f"a structured array is stored as a ctable, one column per field; {dtype} has none"
    packed = np.dtype([(name, dtype[name]) for name in dtype.names])
    if packed != dtype:
        return (
            f"dtype {dtype} has padding, offsets or titles, which a ctable (one column per"
            f" field) does not keep: convert it first (a.astype({packed})) or choose another"
            " format"
        )
    return None


def own_options(params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
    """The common options as the bcolz writer's: ``codec`` as ``cname``, ``chunks`` as
    ``chunklen`` (rows), ``filters`` as ``shuffle`` (bcolz writes Blosc1 chunks)."""
    return params.own(rest, codec=("cname", None),
                      chunks=("chunklen", lambda c: chunk_rows(c, shape, "bcolz")),
                      chunk_size=("chunklen", lambda n: rows_of(n, dtype, shape)),
                      filters=("shuffle", lambda f: shuffle_only(f, "bcolz")))  # fmt: skip


#: What bcolz attributes are called in messages.
BCOLZ_ATTRS = "bcolz attributes (JSON)"


class BcolzTarget(Target):
    """A bcolz carray, or a ctable for a 1-d structured array (one carray per field)."""

    fmt = "bcolz"
    OPTIONS = OPTIONS

    def __init__(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> None:
        super().__init__(source, copy_chunks)
        self.settings = settings = BcolzSettings.parse(options)
        spec = source.spec
        self.typesize = blosc_typesize(spec.dtype)  # of a carray's chunks
        if not spec.shape:
            raise ArgumentError(f"{source.name}: bcolz stores arrays of at least one dimension,"
                                " this one is 0-d")  # fmt: skip
        if spec.order == "F":
            self.dropped.append("Fortran order: bcolz arrays are C-ordered (values are kept)")
        nd.check_storable(spec.dtype)
        self.names = list(spec.dtype.names or ())
        if self.names:
            if len(spec.shape) != 1:
                raise ArgumentError(
                    f"a structured array is stored as a ctable and must be 1-D, got shape"
                    f" {spec.shape}"
                )
            packed = np.dtype([(name, spec.dtype[name]) for name in self.names])
            if packed != spec.dtype:
                self.dropped.append(
                    f"the layout of dtype {spec.dtype} (padding, offsets or titles): a ctable"
                    f" stores the fields only and reads back as {packed}"
                )
            self.columns, self.dflts = settings.table(spec.dtype, spec.shape)
        else:
            atomsize = row_nbytes(spec.dtype, spec.shape[1:])
            copied = None if settings.chunklen is not None else self._copy_chunklen(atomsize)
            self.chunklen, self.expectedlen = settings.carray(spec.dtype, spec.shape, copied)
        # the source's user metadata are kept, the attributes of attrs= added
        attrs = {**json_user(source, BCOLZ_ATTRS, self.dropped), **(settings.attrs or {})}
        kept_metalayers(source, self.dropped, 0, False)
        self.settings = replace(settings, attrs=attrs)

    def _copy_chunklen(self, atomsize: int) -> int | None:
        source = self.source
        span = source.uniform_span()
        if (self.names or span is None or span % atomsize or source.spec.order != "C"
                or not self._copyable(source.first_chunk_header())):  # fmt: skip
            return None
        return span // atomsize

    def accepts_format(self, header: ChunkHeader) -> bool:
        # bcolz reads parts of chunks in typesize units: the typesize must follow its rule;
        # a stored chunk was not quantized
        return (header.blosc_version == 1 and header.typesize == self.typesize
                and not self.settings.cparams.quantize)  # fmt: skip

    def write(self, path: str) -> None:
        source, spec = self.source, self.source.spec
        if not self.names:
            rowshape = spec.shape[1:]
            writer = self.settings.carray_writer(path, spec.dtype, rowshape, self.chunklen,
                                                 self.expectedlen)  # fmt: skip

            def put_data(data: memoryview) -> None:
                writer.append_rows(np.frombuffer(data, dtype=spec.dtype).reshape((-1, *rowshape)))

            spans = flat_spans(source.nbytes, self.chunklen * writer.atomsize)
            self._write_spans(spans, True, writer.append_chunk, put_data)
            writer.close()
            return
        table = self.settings.table_writer(path, self.columns, self.dflts, source.nrows)
        slab = max(1, SLAB_NBYTES // max(source.row_nbytes, 1))
        for r0 in range(0, source.nrows, slab):
            rows = source.read_rows(r0, min(r0 + slab, source.nrows))
            table.append_rows(rows)
            self.progress(rows.nbytes)
        table.close()
        self.recompressed = sum(writer.nchunks for writer in table.columns.values())


#: What :func:`bloscpack.save` writes a new bcolz output with.
save = save_bcolz
ConversionTarget = BcolzTarget
