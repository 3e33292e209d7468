"""``bloscpack.open()`` and :class:`BloscArray`: a read-only, lazy, numpy-like view of any Blosc
container (``.blp``, Blosc2 contiguous and sparse frames, b2nd arrays, bcolz carrays and
ctables, single Blosc chunks).

Opening reads only headers, metadata and chunk indices.  Indexing (``a[...]``, ``a.oindex``,
``a.vindex``: see :func:`bloscpack.selection.plan_index`) reads only the chunks a
selection touches and, inside a chunk, decodes only the blocks it needs, through the store
(:mod:`bloscpack.containers.stores`) the reader's capability picks: a flat layout (.blp, raw
frames, bcolz carrays, chunks), an N-d chunk grid (b2nd) or a table of columns (ctables).
Where the array is read from: :mod:`bloscpack.inputs`.

>>> import numpy as np, bloscpack, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "a.blp")
>>> bloscpack.pack_ndarray_to_file(np.arange(12.0).reshape(3, 4), path)
>>> with bloscpack.open(path) as a:
...     print(a.shape, a.dtype, a[1, ::-2], a[2, 3])
(3, 4) float64 [7. 5.] 11.0
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from . import chunkmanagers
from .containers.base import Compression, ContainerReader, GridReader, TableReader
from .containers.registry import (
    by_extension,
    describe,
    detect,
    detect_directory,
    detect_source,
    format_of,
    open_reader,
    open_url_input,
    opened_url,
)
from .containers.stores.base import Store
from .containers.stores.flat import FlatStore
from .containers.stores.grid import GridStore
from .containers.stores.table import TableStore
from .errors import (
    ArgumentError,
    BloscpackError,
    ReadOnlyError,
)
from .group import Group
from .inputs import detect_buffer, map_file, open_file, open_path
from .io.locks import shared_lock
from .io.paths import PathLike, is_stream
from .io.sources import ByteSource, Directory
from .journal import in_one_state, needs_recovery, recover
from .ndarray import check_text
from .selection import (
    NUMPY,
    ORTHOGONAL,
    POINTS,
    OrthogonalPlan,
    plan_index,
)
from .url import is_url, local_path, redact

#: Rows are read in pieces of about this many bytes when iterating over the first axis.
ITER_BYTES = 4 << 20


# --- the store a reader's capability picks ------------------------------------------------


def _first_chunk_nbytes(reader: ContainerReader) -> int:
    return reader.sizes.of(0, reader.nchunks) if reader.nchunks else 0


def _store(reader: ContainerReader | TableReader) -> Store:
    """The store that reads ``reader``'s array: by columns for a table, by chunk boxes for an
    N-d chunk grid, else by item positions in its flat layout."""
    if isinstance(reader, TableReader):
        return TableStore(reader, reader.columns)
    if isinstance(reader, GridReader):
        return GridStore(reader)
    return FlatStore(reader)


# --- the lazy array -----------------------------------------------------------------------


class Indexer:
    """``a.oindex`` and ``a.vindex``: index them (``a.oindex[[1, 5], :]``) to read a
    selection of ``a``."""

    def __init__(self, array: BloscArray, mode: str) -> None:
        self._array, self._mode = array, mode

    def __getitem__(self, index: Any) -> Any:
        return self._array._read(index, self._mode)

    def __repr__(self) -> str:
        return f"<{self._mode} of {self._array!r}>"


#: numpy methods and attributes a lazy array does not pretend to have (each would read and
#: compute on the whole array): accessing one raises an ``AttributeError`` that says how.
NUMPY_ONLY = frozenset({
    "T", "mT", "all", "any", "argmax", "argmin", "argpartition", "argsort", "astype",
    "byteswap", "choose", "clip", "compress", "conj", "conjugate", "copy", "cumprod", "cumsum",
    "diagonal", "dot", "fill", "flat", "flatten", "imag", "item", "max", "mean", "min",
    "nonzero", "partition", "prod", "ptp", "ravel", "real", "repeat", "reshape", "round",
    "searchsorted", "sort", "squeeze", "std", "sum", "swapaxes", "take", "tobytes", "tofile",
    "tolist", "trace", "transpose", "var", "view",
})  # fmt: skip


class BloscArray:
    """A read-only, lazy view of the array in a Blosc container; create it with
    :func:`bloscpack.open`.

    Attributes and methods follow numpy: ``shape``, ``dtype``, ``ndim``, ``size``, ``nbytes``,
    ``len()``, ``a[index]`` (integers, slices with any step, ``...``, ``None``, one integer
    array or boolean mask: numpy's result; field names of a ctable), ``a.oindex[...]``
    (orthogonal selection, like zarr's), ``a.vindex[...]`` (points), ``numpy.asarray(a)``,
    iteration over the first axis.  Every selection reads only the chunks, and the blocks,
    holding selected items.  Also: ``chunks`` (the box one stored chunk holds, or None),
    ``iter_chunks()``, ``metadata``, ``format``, ``path``, ``info()``, ``to_dask()``,
    ``close()`` and use as a context manager.  Arrays opened by path (or from bytes) can be
    pickled: they are reopened on unpickling.

    Nothing is computed lazily: Python's operators (``==``, ``+``, ``bool()``, ...) raise
    ``TypeError`` and numpy's methods (``astype``, ``T``, ``transpose``, ``sum``, ...)
    ``AttributeError``, each saying to read the data first (``a[...] == 5``,
    ``np.asarray(a).T``) or to compute out of core with ``to_dask()``; numpy's functions
    (``np.sum(a)``) read the whole array through ``__array__``.
    """

    _parent: BloscArray | None = None  # the array a derived view (a ctable column) reads from
    _summary: tuple[Compression, int | None] | None = None  # see _compression()
    group: Any = None  # the store (a Group) the array is one of, kept alive with it

    def __init__(self, source: Any, *, verify: bool = True,
                 columns: Sequence[str] | None = None,
                 storage_options: Mapping[str, Any] | None = None,
                 cache: Any = None) -> None:  # fmt: skip
        """Open ``source``: see :func:`bloscpack.open`."""
        self._mapping: Any = None  # the mmap of a file object
        self._view: memoryview | None = None  # the bytes of a source that is not a path
        self._from_bytes = False
        self._key: Any = None
        self._options: dict[str, Any] = {"verify": bool(verify)}
        if columns is not None:
            self._options["columns"] = list(columns)
        for name, value in (("storage_options", storage_options), ("cache", cache)):
            if value is not None:
                self._options[name] = value
        #: The URL the container was opened from (None for a path, bytes or a file object).
        self.url: str | None = None
        self.path: str | None = None
        fmt: str | None = None
        opened: Any = None
        if isinstance(source, (str, os.PathLike)) and is_url(os.fspath(source)):
            self.url = os.fspath(source)
            local = local_path(self.url, storage_options)
            if local is not None:
                source, self.url = local, None
        if self.url is not None:
            fmt, opened = open_url_input(self.url, storage_options, cache=cache)
        elif isinstance(source, (ByteSource, Directory)):  # opened by the caller: it is ours
            opened = source
            fmt = (detect_directory(source, by_extension(source.name))
                   if isinstance(source, Directory) else None)  # fmt: skip
        elif isinstance(source, (str, os.PathLike)):
            self.path = os.fspath(source)
            if needs_recovery(self.path):  # an interrupted append is rolled back first
                recover(self.path)
        elif isinstance(source, (bytes, bytearray, memoryview)):
            self.path = None
            self._view = opened = memoryview(source).cast("B")
            self._from_bytes = True
            fmt = detect_buffer(opened)
        elif hasattr(source, "read"):
            self.path = None
            opened, self._mapping = map_file(source)
            if isinstance(opened, memoryview):
                self._view = opened
                fmt = detect_buffer(opened)
            else:  # a file too large to map: read where asked
                fmt = None
        else:
            raise TypeError(
                f"open() takes a path, a binary file object or bytes, not {type(source).__name__}"
            )
        # A path is opened in one state: appends and edits by this library wait meanwhile (a
        # file: its source's consistent() block below locks it; a directory: locked here).
        directory = None  # a path that is no file
        if self.path is not None:
            fmt, opened = open_file(self.path)
            directory = self.path if opened is None else None
        with shared_lock(directory) if directory is not None else contextlib.nullcontext():
            if directory is not None:
                fmt, opened = open_path(directory)
            self._source = opened if isinstance(opened, ByteSource) else None  # closed with us
            self._directory = opened if isinstance(opened, Directory) else None
            try:
                with self._source.consistent() if self._source else contextlib.nullcontext():
                    if fmt is None:  # a file
                        fmt = detect_source(opened)
                    self._reader = open_reader(opened, fmt, verify=verify, columns=columns)
            except BaseException:
                self._release_mapping()
                raise
        try:
            self._store = _store(self._reader)
        except BaseException:
            self._reader.close()
            self._release_mapping()
            raise
        self.format = self._reader.format
        self._closed = False

    def _consistent(self) -> contextlib.AbstractContextManager[None]:
        """The block every read runs in: an append or an edit by this library waits for it,
        and a file changed since it was opened raises ``FileChangedError``."""
        return self._reader.consistent()

    @classmethod
    def _derived(cls, parent: BloscArray, store: Any, key: Any) -> BloscArray:
        """A view of ``parent`` (a ctable column) sharing its files."""
        view = cls.__new__(cls)
        view.__dict__.update(parent.__dict__)
        view._store, view._key = store, key
        view._parent = parent  # its files stay open while the view lives
        return view

    # --- description -----------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape."""
        return tuple(self._store.shape)

    @property
    def dtype(self) -> np.dtype:
        """The array's numpy dtype."""
        return self._store.dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of items."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the uncompressed array."""
        return self.size * self.dtype.itemsize

    @property
    def chunks(self) -> tuple[int, ...] | None:
        """Shape of the box of the array one stored chunk holds (edge chunks are cut by the
        array's end); None when the stored chunks do not cut the array into boxes."""
        return self._store.chunks

    @property
    def columns(self) -> list[str] | None:
        """The column names of a table (a bcolz ctable, read column by column), else None."""
        store = self._store
        return list(store.names) if isinstance(store, TableStore) else None

    @property
    def chunk_nbytes(self) -> int:
        """Uncompressed bytes of one stored chunk (the first: only the last may hold fewer; a
        table: its columns' first chunks together)."""
        reader = self._reader
        if isinstance(reader, TableReader):
            return sum(_first_chunk_nbytes(reader.column(name)) for name in reader.columns)
        return _first_chunk_nbytes(reader)

    @property
    def metadata(self) -> Any:
        """The container's user metadata: the ``.blp`` metadata (the numpy metadata dict for
        arrays), the decoded vlmetalayers of frames and b2nd arrays, bcolz attributes."""
        if not hasattr(self, "_metadata"):
            with self._consistent():
                self._metadata = self._reader.metadata()
        return self._metadata

    @property
    def attrs(self) -> dict[str, Any]:
        """The user's metadata entries, the same in every format (what ``save(...,
        metadata=)`` stored): the metadata without the entries that describe the array."""
        with self._consistent():
            return dict(self._reader.stored_metadata().user)

    def info(self) -> dict[str, Any]:
        """The container's description, as :func:`bloscpack.info` gives it."""
        self._check_open()
        if self.path is not None:
            return in_one_state(describe, self.path)
        if self.url is not None:
            options = self._options
            with opened_url(self.url, options.get("storage_options"),
                            cache=options.get("cache")) as (fmt, again):  # fmt: skip
                return {"format": fmt, **format_of(fmt).info(again)}
        source = self._view if self._view is not None else self._source
        return {"format": self.format, **format_of(self.format).info(source)}

    def to_dask(self, chunks: Any = None) -> Any:
        """The container as a ``dask.array.Array`` (a ctable: a dict of one per column), as
        :func:`bloscpack.to_dask` gives it for :attr:`path` (a ctable column: that column's
        array).  Arrays opened from bytes or a file object have no path to give tasks.  The
        conversion is the dask integration's, looked up when called in
        :mod:`bloscpack.chunkmanagers` (the core does not import its integrations)."""
        self._check_open()
        if self.path is None:
            raise ArgumentError("only an array opened by path becomes a dask array")
        to_dask = chunkmanagers.manager("dask")
        if isinstance(self._key, str):
            return to_dask(self.path, chunks, columns=[self._key])[self._key]
        return to_dask(self.path, chunks, columns=self._options.get("columns"))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        """What the array is, the same fields for every format (``?`` where the container
        does not record one):
        ``<BloscArray b2nd shape=(1000, 1000) dtype=float64 chunks=(100, 1000) codec=zstd
        clevel=5 ratio=4.21 'x.b2nd'>``.  ``ratio``: the container's uncompressed bytes over
        the bytes it occupies (its file, or the files of its directory)."""
        where = self.path or (self.url and redact(self.url))
        where = where or ("<bytes>" if self._from_bytes else "<file object>")
        field = f"[{self._key!r}]" if self._key is not None else ""
        compression, stored = self._compression()
        total = (self if self._parent is None else self._parent).nbytes
        ratio = f"{total / stored:.2f}" if stored else "?"
        clevel = "?" if compression.clevel is None else compression.clevel
        state = " (closed)" if self._closed else ""
        return (
            f"<BloscArray {self.format} shape={self.shape} dtype={self.dtype}"
            f" chunks={self.chunks} codec={compression.codec or '?'} clevel={clevel}"
            f" ratio={ratio} {where!r}{field}{state}>"
        )

    def _compression(self) -> tuple[Compression, int | None]:
        """The container's codec and level, and the bytes it occupies (None where unknown:
        a directory at a URL), read once (a chunk header at most)."""
        if self._summary is None:
            if self._closed:
                return Compression(), None
            owner = self if self._parent is None else self._parent
            try:
                with self._consistent():
                    compression = owner._reader.compression()
            except (BloscpackError, OSError):  # a damaged first chunk: described unknown
                compression = Compression()
            self._summary = (compression, self._stored_nbytes())
        return self._summary

    def _stored_nbytes(self) -> int | None:
        if self._source is not None:
            return self._source.size()
        if self._view is not None:
            return self._view.nbytes
        if self.path is not None and os.path.isdir(self.path):
            return sum(
                os.lstat(os.path.join(top, name)).st_size
                for top, _, names in os.walk(self.path)
                for name in names
            )
        return None

    # --- reading ---------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("I/O operation on a closed BloscArray")

    def _read(self, index: Any, mode: str = NUMPY) -> Any:
        """What ``index`` selects, read the ``mode`` way (see :func:`plan_index`)."""
        self._check_open()
        plan = plan_index(index, self.shape, mode)
        with self._consistent():
            if isinstance(plan, OrthogonalPlan):
                data = self._store.read(plan.selection)
            else:
                data = self._store.read_points(plan.coords)
        return plan.finish(check_text(data, self._store.name))

    def __getitem__(self, index: Any) -> Any:
        """``a[index]`` with numpy's result: an array, or a numpy scalar when every axis is
        indexed by an integer and there is no ``...``.  Integers, slices (any step), ``...``,
        ``None`` and one integer array or boolean mask (numpy's result, axis placement
        included); two or more arrays raise :class:`~bloscpack.errors.SelectionError` (numpy
        broadcasts them together: say :attr:`oindex` or :attr:`vindex`).  A field name (or
        list of names) of a ctable gives a lazy array of those columns; of other structured
        arrays, the field."""
        if isinstance(index, str) or (
            isinstance(index, list) and index and all(isinstance(i, str) for i in index)
        ):
            return self._field(index)
        coords = self._item_coords(index)
        if coords is not None:
            self._check_open()
            with self._consistent():
                item = self._store.read_item(coords)
            if item.dtype.kind in "UV":  # text, maybe in fields
                check_text(item, self._store.name)
            return item[()]
        return self._read(index)

    @property
    def oindex(self) -> Indexer:
        """Orthogonal selection, like zarr's ``oindex``: ``a.oindex[[1, 5, 9], mask]`` takes
        the rows 1, 5, 9 and the columns where ``mask`` is true (every combination).  Per axis:
        an integer, a slice, a 1-d integer array or a 1-d boolean mask; also ``...`` and
        ``None``.  Only the chunks (and blocks) holding selected items are read."""
        return Indexer(self, ORTHOGONAL)

    @property
    def vindex(self) -> Indexer:
        """Point selection, like zarr's ``vindex``: ``a.vindex[rows, cols]`` picks the items
        ``(rows[k], cols[k])`` (integer arrays, one per axis, broadcast together: numpy's
        ``a[rows, cols]``), ``a.vindex[mask]`` those where a boolean mask of ``a``'s shape is
        true.  Only the chunks (and blocks) holding the points are read."""
        return Indexer(self, POINTS)

    def __getattr__(self, name: str) -> Any:
        if name in NUMPY_ONLY:
            raise AttributeError(
                f"'BloscArray' object has no attribute {name!r}: a lazy array computes nothing;"
                f" read it into memory first (np.asarray(a).{name}, or a selection such as"
                f" a[:100].{name}) or compute out of core with a.to_dask().{name}"
            )
        raise AttributeError(f"'BloscArray' object has no attribute {name!r}")

    def _item_coords(self, index: Any) -> tuple[int, ...] | None:
        """The coordinates of the one item an index of in-range integers, one per axis, picks
        (else None: the general path handles it)."""
        items = index if type(index) is tuple else (index,)
        shape = self._store.shape
        if len(items) != len(shape) or not shape:
            return None
        coords = []
        for k, n in zip(items, shape, strict=True):
            if type(k) is not int:
                if not isinstance(k, np.integer):
                    return None
                k = int(k)
            if k < 0:
                k += n
            if not 0 <= k < n:
                return None
            coords.append(k)
        return tuple(coords)

    def _field(self, key: str | list[str]) -> Any:
        self._check_open()
        names = self.dtype.names or ()
        wanted = [key] if isinstance(key, str) else key
        for name in wanted:
            if name not in names:
                raise ValueError(f"no field of name {name}")
        store = self._store
        if not isinstance(store, TableStore):
            return np.asarray(self)[key]
        if isinstance(key, str):
            return BloscArray._derived(self, store.column(key), key)
        return BloscArray._derived(self, store.select(key), list(key))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy is False:
            raise ValueError(
                "a BloscArray is decompressed on access: converting it always makes a new array"
            )
        data = self._read(Ellipsis)
        return data if dtype is None else data.astype(dtype, copy=False)

    def __iter__(self) -> Iterator[Any]:
        """The items along the first axis, as numpy iterates (read a few chunks at a time)."""
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        n = self.shape[0]
        row_nbytes = self.nbytes // n if n else 0
        step = max(1, ITER_BYTES // max(row_nbytes, 1))
        for start in range(0, n, step):
            yield from self._read(slice(start, start + step))

    def iter_chunks(self) -> Iterator[np.ndarray]:
        """Each stored chunk as a new array, in storage order: the box of the array it holds
        (see :attr:`chunks`), or its items in storage order when chunks do not hold boxes."""
        self._check_open()
        chunks = self._store.iter_chunks()
        while True:
            with self._consistent():
                chunk = next(chunks, None)
            if chunk is None:
                return
            yield check_text(chunk, self._store.name)

    # --- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Release the files (arrays derived from this one, like ctable columns, too)."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        if self._key is None:
            self._store.close()
            self._release_mapping()

    def _release_mapping(self) -> None:
        if self._source is not None:
            self._source.close()
        if self._directory is not None:
            self._directory.close()
        if self._view is not None and not self._from_bytes:
            self._view.release()
        if self._mapping is not None:
            with contextlib.suppress(BufferError):
                self._mapping.close()
            self._mapping = None

    def __del__(self) -> None:
        try:  # noqa: SIM105 (contextlib may be gone at interpreter exit)
            self.close()
        except Exception:  # noqa: S110
            pass

    def __enter__(self) -> BloscArray:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __dask_tokenize__(self) -> tuple[Any, ...]:
        """What tells dask two arrays hold the same data: the path, with its size and time
        of change, and the selection (an array not opened by path is only equal to itself)."""
        if self.url is not None:
            return ("BloscArray", self.url, getattr(self._source, "identity", None),
                    repr(self._key), repr(self._options))  # fmt: skip
        if self.path is None:
            return ("BloscArray", id(self))
        status = os.stat(self.path)
        return ("BloscArray", self.path, status.st_size, status.st_mtime_ns, repr(self._key),
                repr(self._options))  # fmt: skip

    def __reduce__(self) -> tuple[Any, ...]:
        if self.path is not None or self.url is not None:
            source: Any = self.path or self.url
        elif self._from_bytes and self._view is not None:
            source = bytes(self._view)
        else:
            raise TypeError(
                "a BloscArray opened from a file object cannot be pickled: open it by path"
                " (or from bytes) to pickle it"
            )
        return (_reopen, (source, self._options, self._key))


#: Python's operators on a lazy array: each would read the whole array, so each raises a
#: ``TypeError`` that says to read the data first (numpy's functions, and operators with a numpy
#: array on the left, read it through ``__array__`` and give numpy's result).
_COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_ARITHMETIC = {
    "add": "+", "sub": "-", "mul": "*", "matmul": "@", "truediv": "/", "floordiv": "//",
    "mod": "%", "pow": "**", "lshift": "<<", "rshift": ">>", "and": "&", "or": "|", "xor": "^",
}  # fmt: skip
_OTHERS = {"divmod": "divmod()", "rdivmod": "divmod()", "neg": "unary -", "pos": "unary +",
           "abs": "abs()", "invert": "~", "bool": "bool()", "contains": "in"}  # fmt: skip


def _refused(symbol: str) -> Callable[..., Any]:
    def refuse(self: BloscArray, *other: Any) -> Any:
        raise TypeError(
            f"{symbol} is not supported on a lazy BloscArray: read the data first (x[...], or a"
            f" selection such as x[10:20]) and apply {symbol} to that numpy array"
        )

    return refuse


for _name, _symbol in _COMPARISONS.items():
    setattr(BloscArray, f"__{_name}__", _refused(_symbol))
for _name, _symbol in _ARITHMETIC.items():
    for _method in (f"__{_name}__", f"__r{_name}__", f"__i{_name}__"):
        setattr(BloscArray, _method, _refused(_symbol))
for _name, _symbol in _OTHERS.items():
    setattr(BloscArray, f"__{_name}__", _refused(_symbol))
BloscArray.__hash__ = object.__hash__  # type: ignore[method-assign]  # identity, as before


def _reopen(source: Any, options: dict[str, Any], key: Any) -> BloscArray:
    """Unpickle a :class:`BloscArray`: open ``source`` again, then select ``key``."""
    array = BloscArray(source, **options)
    return array if key is None else array[key]


#: The modes :func:`open` takes: containers are opened for reading only.
READ_MODES = ("r", "rb")


def open(
    source: PathLike | Any, mode: str = "r", *, storage_options: Mapping[str, Any] | None = None,
    verify: bool = True, columns: Sequence[str] | None = None, cache: Any = None,
) -> BloscArray | Group:  # fmt: skip
    """Open the Blosc container ``source`` as a read-only lazy :class:`BloscArray`.

    ``mode`` is ``"r"`` (or ``"rb"``), as ``open(path, "r")`` reads a file in h5py or
    python-blosc2: any other mode raises :class:`~bloscpack.errors.ReadOnlyError`.

    ``source`` is a path (file or directory), a binary file object (memory-mapped from its
    current position when it is a real file, else read), bytes, or an fsspec URL
    (``s3://bucket/key``, ``https://...``, ``memory://...``, chained ``simplecache::s3://...``;
    a directory container: the prefix of its objects) read by byte ranges: opening fetches
    the object's first and last bytes, a selection only the chunks and blocks it touches.
    ``storage_options`` go to fsspec; ``cache``: ``"memory"`` keeps every range fetched, a
    directory path keeps them on disk between runs (keyed by the object's ETag, or its time
    and size, so a changed object is fetched again).  The format is recognised
    by content: ``.blp`` (an array with numpy metadata, else its bytes as 1-d ``uint8``),
    Blosc2 contiguous and sparse frames (the concatenated chunks as 1-d ``uint8``, unless
    their vlmetalayers hold numpy metadata), b2nd arrays, bcolz carrays and ctables
    (structured; ``columns`` picks fields), and single Blosc chunks.  ``.blp`` chunk digests
    are checked when a chunk is first read (which reads its compressed bytes whole);
    ``verify=False`` skips that, so that reading an item touches only the blocks it needs.

    A local container of many arrays under keys (a python-blosc2 store: ``.b2z``, ``.b2d``,
    ``.b2e``) opens as a read-only :class:`~bloscpack.group.Group`, a mapping of its keys to
    such lazy arrays.
    """
    check_read_mode(source, mode)
    group = _url_group(source, storage_options, cache)
    if group is not None:
        return group
    try:
        return BloscArray(source, verify=verify, columns=columns,
                          storage_options=storage_options, cache=cache)  # fmt: skip
    except ArgumentError:  # a store's format refuses to be one array: is it a store?
        group = open_group(source, storage_options=storage_options)
        if group is None:
            raise
        return group


def open_group(source: Any, *, storage_options: Mapping[str, Any] | None = None,
               cache: Any = None) -> Group | None:  # fmt: skip
    """The container at the path or URL ``source`` as a :class:`~bloscpack.group.Group` when
    its format holds groups of arrays; None for anything else (an array, bytes, a stream).
    At a URL only a name with such a format's suffix is tried (no requests for the others)."""
    group = _url_group(source, storage_options, cache)
    if group is not None or not isinstance(source, (str, os.PathLike)):
        return group
    path = os.fspath(source)
    if is_url(path):
        local = local_path(path, storage_options)
        if local is None:
            return None
        path = local
    if is_stream(path):
        return None  # read once, as an array (a stream cannot be a store)
    try:
        found = format_of(detect(path))
    except BloscpackError:
        return None
    if not found.group:
        return None
    return Group(found.open_group(path), BloscArray)


def _url_group(source: Any, storage_options: Mapping[str, Any] | None,
               cache: Any) -> Group | None:  # fmt: skip
    """The group at ``source`` when it is a URL (not a local ``file://`` one) whose name has
    the suffix of a format of groups; None for anything else (nothing is fetched), or for
    another container found there."""
    if not isinstance(source, (str, os.PathLike)) or not is_url(os.fspath(source)):
        return None
    url = os.fspath(source)
    named = by_extension(url)
    if local_path(url, storage_options) is not None or named is None or not named.group:
        return None
    fmt, opened = open_url_input(url, storage_options, cache=cache)
    try:
        found = format_of(fmt or detect_source(opened))
        if not found.group:
            opened.close()
            return None
        return Group(found.open_group(opened), BloscArray)
    except BaseException:
        opened.close()
        raise


def check_read_mode(source: Any, mode: Any) -> None:
    """Refuse a ``mode`` other than reading, naming it and ``source``."""
    if isinstance(mode, str) and mode in READ_MODES:
        return
    where = os.fspath(source) if isinstance(source, (str, os.PathLike)) else type(source).__name__
    if isinstance(mode, Mapping):
        raise ReadOnlyError(
            f"{where}: the second argument of open() is the mode ('r'); pass the settings of"
            " the file system as storage_options={...}"
        )
    raise ReadOnlyError(
        f"{where}: mode {mode!r}: containers are opened read-only (mode 'r' or 'rb'); write"
        " them with bloscpack.save or bloscpack.convert"
    )


__all__ = ["READ_MODES", "BloscArray", "detect_buffer", "open", "open_group"]
