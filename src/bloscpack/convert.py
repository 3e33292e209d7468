"""Convert a container from one format to another: :func:`convert`.

Every format is a sequence of Blosc chunks plus metadata, so a conversion streams chunks from a
*source* (any container :func:`bloscpack.dispatch.detect` recognises) to a *target* writer.
A stored chunk is copied byte for byte when the target accepts it as it is (same uncompressed
extent, a chunk format the target's readers decode: Blosc1 for 0.16-readable ``.blp`` and for
bcolz, Blosc2 for frames and b2nd, b2nd's block size), otherwise the data is decompressed and
compressed again with the target's options.  When the source's chunks can be copied and no
chunk size is given, the target keeps the source's chunk layout.

Memory stays bounded by a few chunks: flat layouts (``.blp``, frames, bcolz carrays) stream
chunk by chunk, b2nd arrays and ctables by slabs of rows one chunk deep.  The one exception is
a Fortran-ordered ``.blp``/frame array converted to a C-ordered format (b2nd, bcolz): its data
is decompressed once, as one array, and the output is still written chunk by chunk.

The numpy metadata (dtype, shape, order) is always kept; user metadata (``.blp`` metadata keys,
frame and b2nd vlmetalayers, bcolz attributes) and fixed metalayers are kept where the target
can hold them, and the report names everything dropped.  The output appears whole or not at
all: it is built under a temporary name next to ``dst`` and renamed into place.
"""

from __future__ import annotations

import bisect
import inspect
import math
import os
import sys
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from . import engine
from . import ndarray as nd
from .blosc.header import ChunkHeader
from .blosc.layout import ChunkKind
from .containers import registry
from .containers.base import (
    NUMPY_KEYS,
    ContainerReader,
    GridReader,
    StoredMetadata,
    TableReader,
    check_chunk_nbytes,
    nchunks_of,
)
from .containers.registry import detect
from .containers.target import SLAB_NBYTES, WriterTarget, check_user_metadata, row_flat
from .errors import (
    ArgumentError,
    IntegrityError,
    NotAContainer,
    UnsupportedError,
)
from .io.copies import sized_input
from .io.paths import PathLike
from .io.sources import ByteSource
from .journal import in_one_state
from .url import is_url

FORMATS = tuple(registry.FORMATS)
#: Target format by file name extension, when ``format`` is not given.
EXTENSIONS = {f.extension: f.name for f in registry.FORMATS.values()}

Buffer = Any


# --- sources ------------------------------------------------------------------------------


class _Source:
    """A container opened for conversion.

    ``spec`` is the array (raw-bytes containers: 1-d ``uint8``), ``meta`` the metadata to carry
    over (:class:`~bloscpack.containers.base.StoredMetadata`).  ``spans`` gives the flat byte
    range (in storage order) each stored chunk holds, or None when chunks are not flat.  Data
    is read in *units* (a stored chunk, or a slab of rows) through a one-unit cache.
    """

    fmt = ""
    spans: list[tuple[int, int]] | None = None

    def __init__(self, name: str) -> None:
        self.name = name
        self.spec = nd.ArraySpec(np.dtype(np.uint8), (0,), "C")
        self.meta = StoredMetadata()
        self._cache: tuple[int, Buffer] | None = None
        self._whole: np.ndarray | None = None

    # --- description ---------------------------------------------------------------------

    @property
    def nbytes(self) -> int:
        return self.spec.nbytes

    @property
    def row_nbytes(self) -> int:
        """Bytes of one row (one item of a 0-d array)."""
        return math.prod(self.spec.shape[1:]) * self.spec.dtype.itemsize

    @property
    def nrows(self) -> int:
        return self.spec.shape[0] if self.spec.shape else 1

    def uniform_span(self) -> int | None:
        """The size of every stored chunk but the last (which may be smaller), if chunks are
        flat and uniform; None otherwise."""
        if not self.spans:
            return None
        size = self.spans[0][1]
        if size <= 0 or any(n != size for _, n in self.spans[:-1]) or self.spans[-1][1] > size:
            return None
        return size

    def span_lookup(self) -> dict[tuple[int, int], int]:
        return {span: i for i, span in enumerate(self.spans or ())}

    def first_chunk_header(self) -> ChunkHeader | None:
        """Header of the first stored chunk holding data (None without chunks)."""
        for i, (_, n) in enumerate(self.spans or ()):
            if n:
                return ChunkHeader.parse(self.stored_chunk(i))
        return None

    # --- chunks and data -----------------------------------------------------------------

    def stored_chunk(self, index: int) -> Buffer:
        """The stored bytes of chunk ``index`` (verified as the format allows)."""
        raise NotImplementedError

    def _unit_of(self, offset: int) -> tuple[int, int, int]:
        """``(unit, start, stop)`` of the unit holding flat byte ``offset``."""
        raise NotImplementedError

    def _decode_unit_into(self, unit: int, out: memoryview) -> None:
        """Decode all bytes of ``unit`` into ``out`` (exactly its size)."""
        raise NotImplementedError

    def _unit_bytes(self, unit: int, size: int) -> memoryview:
        if self._cache is None or self._cache[0] != unit:
            self._cache = None
            buffer = memoryview(bytearray(size))
            self._decode_unit_into(unit, buffer)
            self._cache = (unit, buffer)
        return self._cache[1]

    def read_into(self, start: int, out: memoryview) -> None:
        """Fill ``out`` with the flat bytes (storage order) from ``start``; whole units are
        decoded straight into ``out``."""
        pos, n = 0, len(out)
        while pos < n:
            unit, u0, u1 = self._unit_of(start + pos)
            lo = start + pos - u0
            take = min(u1 - u0 - lo, n - pos)
            part = out[pos : pos + take]
            cached = self._cache is not None and self._cache[0] == unit
            if lo == 0 and take == u1 - u0:
                self._decode_unit_into(unit, part)
            elif cached or u1 - u0 <= SLAB_NBYTES or not self._part_into(unit, lo, part):
                part[:] = self._unit_bytes(unit, u1 - u0)[lo : lo + take]
            pos += take

    def _part_into(self, unit: int, lo: int, out: memoryview) -> bool:
        """Fill ``out`` with the bytes from ``lo`` of a large ``unit`` without decoding all of
        it, where the unit allows (False: it does not, decode it whole)."""
        return False

    def read_c(self, start: int, out: memoryview) -> None:
        """Like :meth:`read_into`, in C order of the array (``start`` and ``len(out)`` whole
        rows when the source is Fortran-ordered)."""
        if self.spec.order == "C" or len(out) == 0:
            self.read_into(start, out)
            return
        rb = self.row_nbytes
        rows = self.read_rows(start // rb, (start + len(out)) // rb)
        out[:] = nd.byte_view(np.ascontiguousarray(rows)).data

    def read_rows(self, r0: int, r1: int) -> np.ndarray:
        """Rows ``[r0, r1)`` as a C-contiguous array (a 0-d source: its one item)."""
        spec = self.spec
        if spec.order == "F":
            return np.ascontiguousarray(self._whole_array()[r0:r1])
        shape = (r1 - r0, *spec.shape[1:]) if spec.shape else ()
        rows = np.empty(shape, dtype=spec.dtype)
        if rows.nbytes:
            self.read_into(r0 * self.row_nbytes, nd.byte_view(rows).data)
        return rows

    def _whole_array(self) -> np.ndarray:
        if self._whole is None:
            try:
                whole = self.spec.empty()
            except (MemoryError, ValueError) as exc:
                raise UnsupportedError(f"{self.name}: cannot allocate the array ({exc})") from None
            if whole.nbytes:
                self.read_into(0, nd.byte_view(whole).data)
            self._whole = whole
        return self._whole

    def close(self) -> None:
        self._cache = None
        self._whole = None


class _ChunkedSource(_Source):
    """A container whose units are its stored chunks, each holding a flat byte range."""

    spans: list[tuple[int, int]]

    def __init__(self, reader: ContainerReader) -> None:
        super().__init__(reader.name)
        self.reader = reader
        _describe(self, reader)
        reader.check_sizes()
        sizes, n = reader.sizes, reader.nchunks
        self._set_spans([sizes.of(i, n) for i in range(n)])
        self._check_total()

    def _set_spans(self, sizes: Sequence[int]) -> None:
        self.spans, pos = [], 0
        for size in sizes:
            self.spans.append((pos, size))
            pos += size
        self._starts = [start for start, _ in self.spans]
        self._total = pos

    def _check_total(self) -> None:
        if self._total != self.spec.nbytes:
            raise IntegrityError(
                f"{self.name}: the array {self.spec.shape} of {self.spec.dtype} needs"
                f" {self.spec.nbytes} bytes, the chunks hold {self._total}"
            )

    def _unit_of(self, offset: int) -> tuple[int, int, int]:
        unit = bisect.bisect_right(self._starts, offset) - 1
        while self.spans[unit][1] == 0:  # skip empty chunks
            unit += 1
        start, size = self.spans[unit]
        return unit, start, start + size

    def stored_chunk(self, index: int) -> Buffer:
        return self.reader.stored_chunk(index)

    def _decode_unit_into(self, unit: int, out: memoryview) -> None:
        self.reader.read_chunk(unit, out)

    def _part_into(self, unit: int, lo: int, out: memoryview) -> bool:
        """A special-value chunk (32 to 40 bytes that may claim GiBs) is expanded only for
        the bytes asked for."""
        try:
            chunk = self.reader.stored_chunk(unit)
            header = ChunkHeader.parse(chunk)
            if header.kind != ChunkKind.SPECIAL:
                return False
            check_chunk_nbytes(self.reader, unit, header.nbytes)
            engine.special_range_into(chunk, lo, lo + len(out), out)
        finally:
            self.reader.release()
        return True

    def close(self) -> None:
        super().close()
        self.reader.close()


def _describe(source: _Source, reader: ContainerReader) -> None:
    """Set ``source``'s array and metadata from ``reader``'s."""
    described = reader.description
    source.fmt = reader.format
    source.spec = nd.ArraySpec(described.dtype, described.shape, described.order)
    source.meta = reader.stored_metadata()


class _SlabSource(_Source):
    """A source whose units are slabs of ``unit_rows`` rows (axis 0)."""

    unit_rows = 1

    def __init__(self, reader: Any) -> None:
        super().__init__(reader.name)
        self.reader = reader
        _describe(self, reader)

    def _unit_of(self, offset: int) -> tuple[int, int, int]:
        unit_nbytes = self.unit_rows * self.row_nbytes
        unit = offset // unit_nbytes
        return unit, unit * unit_nbytes, min((unit + 1) * unit_nbytes, self.nbytes)

    def _decode_unit_into(self, unit: int, out: memoryview) -> None:
        r0 = unit * self.unit_rows
        rows = self.read_rows(r0, min(r0 + self.unit_rows, self.nrows))
        out[:] = nd.byte_view(rows).data

    def close(self) -> None:
        super().close()
        self.reader.close()


class _GridSource(_SlabSource):
    """An N-d array stored in a chunk grid (b2nd); units are slabs of one chunk of rows."""

    def __init__(self, reader: GridReader) -> None:
        super().__init__(reader)
        self.array, self.grid = reader.array, reader.grid
        self.unit_rows = max(self.grid.chunks[0], 1) if self.spec.shape else 1
        if row_flat(self.grid):
            rb, c0 = self.row_nbytes, self.grid.chunks[0]
            self.spans = [(i * c0 * rb, (min(c0, self.nrows - i * c0)) * rb)
                          for i in range(self.grid.nchunks)]  # fmt: skip

    def stored_chunk(self, index: int) -> Buffer:
        return self.reader.stored_chunk(index)

    def _decode_unit_into(self, unit: int, out: memoryview) -> None:
        r0 = unit * self.unit_rows
        r1 = min(r0 + self.unit_rows, self.nrows)
        shape = (r1 - r0, *self.spec.shape[1:]) if self.spec.shape else ()
        dest = np.frombuffer(out, dtype=self.spec.dtype).reshape(shape)
        if self.spec.shape:
            self.array.read_selection(slice(r0, r1), out=dest)
        else:
            self.array.read(out=dest)

    def read_rows(self, r0: int, r1: int) -> np.ndarray:
        if not self.spec.shape:
            return self.array.read()
        return self.array.read_selection(slice(r0, r1))


class _TableSource(_SlabSource):
    """A table (bcolz ctable): rows are read column by column in slabs of ``unit_rows``."""

    def __init__(self, reader: TableReader) -> None:
        super().__init__(reader)
        chunklens = [(reader.column(name).description.chunks or (1,))[0]
                     for name in reader.columns]  # fmt: skip
        self.unit_rows = max(
            1, min(max(chunklens, default=1), SLAB_NBYTES // max(self.row_nbytes, 1))
        )

    def read_rows(self, r0: int, r1: int) -> np.ndarray:
        return self.reader.read_rows(r0, r1)


class _ArraySource(_Source):
    """A numpy array in memory (what :func:`bloscpack.save` writes), read without copies."""

    fmt = "array"

    def __init__(self, array: np.ndarray) -> None:
        super().__init__("array")
        nd.check_storable(array.dtype)
        self.array = nd.contiguous(array)
        self.spec = nd.ArraySpec(self.array.dtype, self.array.shape, nd.memory_order(self.array))
        self._bytes = nd.byte_view(self.array).data

    def read_into(self, start: int, out: memoryview) -> None:
        out[:] = self._bytes[start : start + len(out)]

    def _whole_array(self) -> np.ndarray:
        return self.array


def open_source(path: Any, fmt: str) -> _Source:
    """The conversion source for the container ``path`` (or an opened source) in format
    ``fmt``."""
    return source_of(registry.open_reader(path, fmt))


def source_of(reader: ContainerReader | TableReader) -> _Source:
    """The conversion source reading ``reader`` (which it then owns)."""
    try:
        if isinstance(reader, TableReader):
            return _TableSource(reader)
        if isinstance(reader, GridReader):
            return _GridSource(reader)
        return _ChunkedSource(reader)
    except BaseException:
        reader.close()
        raise


# --- output -------------------------------------------------------------------------------


# --- the entry point ----------------------------------------------------------------------


def target_format(dst: PathLike, format: str | None) -> str:
    """The format to write: ``format``, or the one the extension of ``dst`` names, or ``blp``
    (see :func:`bloscpack.containers.registry.output_format`)."""
    return registry.output_format(dst, format).name


def _make_target(fmt: str, source: _Source, options: dict[str, Any], copy_chunks: bool) -> Any:
    """The writer of format ``fmt`` for ``source``, its layout chosen from the options."""
    options = _keep_item_size(fmt, source, options)
    options = registry.writer_options(fmt, options, source.spec.dtype, source.spec.shape)
    found = registry.format_of(fmt)
    target = found.conversion_target(source, options, copy_chunks)
    return WriterTarget(found, source, options, copy_chunks) if target is None else target


#: The unsigned ints raw bytes become in a format that stores typed arrays only.
_UNSIGNED_SIZES = (2, 4, 8)


def _keep_item_size(fmt: str, source: _Source, options: dict[str, Any]) -> dict[str, Any]:
    """Raw bytes (a source that is no array) keep the typesize and the shuffle their stored
    chunks were compressed with (the first chunk's header records them): the source's
    ``meta.typesize`` is set, and its shuffle becomes ``filters`` unless ``options`` give
    filters.  A format that stores typed arrays only gets the bytes as unsigned ints of that
    size when they are whole items of 2, 4 or 8 bytes (else as bytes)."""
    header = None if source.meta.is_array else source.first_chunk_header()
    if header is None:
        return options
    typesize = source.meta.typesize = header.typesize
    if not {"filters", "shuffle"} & set(options):
        options = {**options, "filters": [header.shuffle] if header.shuffle else []}
    whole = typesize in _UNSIGNED_SIZES and source.nbytes % typesize == 0
    if whole and not registry.get(fmt).holds_bytes:
        dtype = np.dtype(f"<u{typesize}")
        source.spec = nd.ArraySpec(dtype, (source.nbytes // typesize,), "C")
    return options


def convert(
    src: PathLike,
    dst: PathLike,
    format: str | None = None,
    *,
    overwrite: bool = True,
    copy_chunks: bool = True,
    progress: Callable[[int], None] | None = None,
    storage_options: Mapping[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Convert the container ``src`` (any format bloscpack reads; a path or a URL, read with
    ``storage_options`` as :func:`bloscpack.open` reads it) into ``dst`` in ``format``.

    ``format`` is ``"blp"``, ``"b2frame"``, ``"sframe"``, ``"b2nd"`` (``sparse=True`` for a
    sparse directory) or ``"bcolz"``; by default the suffix of ``dst`` names it (``.blp``,
    ``.b2frame``, ``.b2nd``, ``.b2sframe``, ``.bcolz``), else ``blp``.  ``options`` are the
    target's compression and layout options (see the documentation); stored chunks the target
    accepts as they are are copied without recompression unless ``copy_chunks=False``.  An
    existing ``dst`` is replaced atomically, as :func:`bloscpack.save` replaces;
    ``overwrite=False`` refuses it.  A failed conversion leaves nothing.
    ``progress``, if given, is called with the number of uncompressed source bytes each step
    has written (they add up to the source's size).  ``dst`` may be a URL, configured by
    ``storage_options``, as for :func:`bloscpack.save`.

    A container of many arrays (a python-blosc2 store) converts into another (``.b2z``,
    ``.b2d``, ``.b2e``): every array read and written again with ``options``, the root
    group's attributes kept (other groups' are dropped, and said so).  So does a directory of
    containers (:func:`containers_in`: ``a/b.b2nd`` is the key ``/a/b``; other files are left
    out, and said so); a ``.b2d`` store is itself a directory of ``.b2nd`` files.

    Returns a report: ``{"format", "source_format", "copied_chunks",
    "recompressed_chunks", "dropped"}``, where ``dropped`` lists, one sentence each, the
    metadata the target could not hold.
    """
    fmt = target_format(dst, format)
    target = registry.format_of(fmt)

    def read(src_path: Any, source_format: str | None = None) -> dict[str, Any]:
        if target.group:
            return _into_group(src_path, os.fspath(dst), target, overwrite, progress, options,
                               source_format, storage_options)  # fmt: skip
        return _convert(src_path, os.fspath(dst), fmt, overwrite, copy_chunks, progress, options,
                        source_format, storage_options)  # fmt: skip

    if is_url(src):
        with registry.opened_url(os.fspath(src), storage_options, whole=True) as (found, opened):
            return read(opened, found)
    with sized_input(src) as src_path:
        return in_one_state(read, src_path)


class _ArraysByKey(Mapping[str, np.ndarray]):
    """Arrays by key, each opened with ``open_reader(key)`` and read whole when asked for (one
    at a time in memory); ``nchunks`` counts the chunks read."""

    def __init__(self, keys: Sequence[str], open_reader: Callable[[str], Any],
                 progress: Callable[[int], None] | None) -> None:  # fmt: skip
        self._keys, self._open_reader, self._progress = list(keys), open_reader, progress
        self.nchunks = 0

    def __getitem__(self, key: str) -> np.ndarray:
        reader = self._open_reader(key)
        self.nchunks += nchunks_of(reader)
        source = source_of(reader)
        try:
            rows = source.read_rows(0, source.nrows).reshape(source.spec.shape)
        finally:
            source.close()
        if self._progress is not None:
            self._progress(rows.nbytes)
        return rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _member_reader(group: Any, key: str) -> Any:
    """A reader of the array ``key`` of the open container of many ``group`` (a
    :class:`~bloscpack.containers.base.GroupReader`)."""
    member = group.member(key)
    whole = isinstance(member, (bytes, bytearray, memoryview))
    opened = ByteSource(member) if whole else member
    return registry.open_reader(opened, registry.detect_source(opened, whole=whole))


def _into_group(src: Any, dst: str, target: registry.ContainerFormat, overwrite: bool,
                progress: Callable[[int], None] | None, options: dict[str, Any],
                source_format: str | None,
                storage_options: Mapping[str, Any] | None) -> dict[str, Any]:  # fmt: skip
    """Convert a container of many arrays into a new one of ``target`` (a format that holds
    groups): every array read and written in turn, the root group's attributes kept (the
    other groups' are dropped, and said so)."""
    if source_format is None and isinstance(src, str) and _is_plain_directory(src):
        return _directory_into_group(src, dst, target, overwrite, progress, options,
                                     storage_options)  # fmt: skip
    found = registry.format_of(source_format or detect(src))
    if not found.group:
        raise UnsupportedError(
            f"{dst}: converting one array ({found.description}) into a {target.description} is"
            " not supported; save a dict of arrays to it (bloscpack.save)"
        )
    group = found.open_group(src)
    try:
        arrays = _ArraysByKey(group.keys(), lambda key: _member_reader(group, key), progress)
        attrs = group.attrs("/")
        dropped = [f"the attributes of group {name!r}: only the root's are kept"
                   for name in group.groups() if name != "/"]  # fmt: skip
        with registry.staged_container(dst, overwrite, target.name, storage_options) as build:
            target.save_group(arrays, dst, build, metadata=attrs or None, **options)
    finally:
        group.close()
    return {"format": target.name, "source_format": found.name, "copied_chunks": 0,
            "recompressed_chunks": arrays.nchunks, "dropped": dropped}  # fmt: skip


def _is_plain_directory(path: str) -> bool:
    """A local directory that is no container (a directory of containers, maybe)."""
    if not os.path.isdir(path):
        return False
    try:
        detect(path)
    except NotAContainer:
        return True
    return False


def containers_in(directory: str) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """The containers under ``directory`` by key (``/a/b`` for ``a/b.b2nd``: the path without
    its format's suffix) as ``(path, format)``, and, one sentence each, the files that are
    none (left out).  A container directory (sparse, bcolz) is one container; hidden names
    are skipped; two containers with one key are refused."""
    found: dict[str, tuple[str, str]] = {}
    left_out: list[str] = []
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in [*sorted(dirs), *sorted(files)]:
            if name.startswith("."):
                continue
            path = os.path.join(root, name)
            relative = os.path.relpath(path, directory).replace(os.sep, "/")
            try:
                fmt = detect(path)
            except NotAContainer:
                if name in files:
                    left_out.append(f"file {relative!r}: not a container, left out")
                continue
            if name in dirs:
                dirs.remove(name)  # a container directory: its members are no containers
            suffix = registry.format_of(fmt).extension
            key = "/" + (relative[: -len(suffix)] if suffix and relative.endswith(suffix)
                         else relative)  # fmt: skip
            if key in found:
                raise ArgumentError(f"{directory}: {found[key][0]!r} and {path!r} both give the"
                                    f" key {key!r}")  # fmt: skip
            found[key] = (path, fmt)
    return found, left_out


def _directory_into_group(src: str, dst: str, target: registry.ContainerFormat,
                          overwrite: bool, progress: Callable[[int], None] | None,
                          options: dict[str, Any],
                          storage_options: Mapping[str, Any] | None) -> dict[str, Any]:  # fmt: skip
    """The containers under the directory ``src`` (:func:`containers_in`) into a new store of
    ``target``, each under its key."""
    containers, left_out = containers_in(src)
    if not containers:
        raise NotAContainer(f"{src}: a directory holding no container")
    arrays = _ArraysByKey(list(containers),
                          lambda key: registry.open_reader(*containers[key]), progress)
    with registry.staged_container(dst, overwrite, target.name, storage_options) as build:
        target.save_group(arrays, dst, build, **options)
    return {"format": target.name, "source_format": "directory", "copied_chunks": 0,
            "recompressed_chunks": arrays.nchunks, "dropped": left_out}  # fmt: skip


def write_new_array(array: np.ndarray, path: str, fmt: str, *,
                    metadata: Mapping[str, Any] | None = None, raw: bool = False,
                    **options: Any) -> dict[str, Any]:  # fmt: skip
    """Write the in-memory ``array`` to the new ``path`` in format ``fmt`` through the same
    targets as :func:`convert`, with the user ``metadata``; ``raw`` bytes are stored without
    numpy metadata.  Metadata the format cannot hold is refused before anything is written.
    Returns ``{"format", "dropped"}``."""
    source = _ArraySource(np.asanyarray(array))
    source.meta.is_array = not raw
    source.meta.user = check_user_metadata(metadata) or {}
    target = _make_target(fmt, source, dict(options), copy_chunks=False)
    lost = [line for line in target.dropped if line.startswith(source.meta.entry)]
    if lost:
        raise ArgumentError(f"format {fmt!r} cannot store the metadata: {lost[0]}")
    with engine.threads():
        target.write(path)
    return {"format": fmt, "dropped": target.dropped}


def _convert(
    src_path: str,
    dst_path: str,
    fmt: str,
    overwrite: bool,
    copy_chunks: bool,
    progress: Callable[[int], None] | None,
    options: dict[str, Any],
    source_format: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """:func:`convert` from a file whose size is known (or an opened URL of
    ``source_format``) to ``dst_path`` (a URL reached with ``storage_options``)."""
    source_format = source_format or detect(src_path)
    options = dict(options)
    nthreads = options.pop("nthreads", None)
    source = open_source(src_path, source_format)
    try:
        target = _make_target(fmt, source, options, copy_chunks)
        if progress is not None:
            target.progress = progress
        staged = registry.staged_container(dst_path, overwrite, fmt, storage_options)
        with staged as path, engine.threads(nthreads):
            target.write(path)
            source.close()
    finally:
        source.close()
    return {
        "format": fmt,
        "source_format": source_format,
        "copied_chunks": target.copied,
        "recompressed_chunks": target.recompressed,
        "dropped": target.dropped,
    }


class ConvertModule(types.ModuleType):
    """The class of this module: called, it is :func:`convert` (``bloscpack.convert(src,
    dst)``, the name the package exports, is this module once it is imported)."""

    def __call__(self, *args: Any, **options: Any) -> dict[str, Any]:
        return convert(*args, **options)


sys.modules[__name__].__class__ = ConvertModule
__signature__ = inspect.signature(convert)  # what inspect reports for bloscpack.convert

__all__ = [
    "EXTENSIONS", "FORMATS", "NUMPY_KEYS", "convert", "open_source", "target_format",
    "write_new_array",
]  # fmt: skip
