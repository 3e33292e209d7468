"""``bloscpack.open()`` and :class:`BloscArray`: a read-only, lazy, numpy-like view of any Blosc
container (``.blp``, Blosc2 contiguous and sparse frames, b2nd arrays, bcolz carrays and
ctables, single Blosc chunks).

Opening reads only headers, metadata and chunk indices.  Indexing (``a[...]``, ``a.oindex``,
``a.vindex``: see :func:`bloscpack.selection.plan_index`) reads only the chunks a
selection touches and, inside a chunk, decodes only the blocks it needs: flat layouts (.blp,
raw frames, bcolz, chunks) are planned with :mod:`bloscpack.selection` and decoded with
:func:`bloscpack.engine.getitem_into`, straight into the result for contiguous runs; b2nd arrays
go through :class:`bloscpack.containers.b2nd.B2ndArray`, which projects the selection onto the
chunk grid and decodes only the block runs of each chunk it touches.

>>> import numpy as np, bloscpack, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "a.blp")
>>> bloscpack.pack_ndarray_to_file(np.arange(12.0).reshape(3, 4), path)
>>> with bloscpack.open(path) as a:
...     print(a.shape, a.dtype, a[1, ::-2], a[2, 3])
(3, 4) float64 [7. 5.] 11.0
"""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import math
import mmap
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import numpy as np

from . import chunkmanagers, engine
from .blosc.header import ChunkHeader
from .blosc.layout import ChunkKind, chunk_kind
from .blosc.partial import MIN_PARTIAL_CBYTES
from .containers.base import (
    ArrayDescription,
    ChunkSizes,
    Compression,
    ContainerReader,
    check_chunk_nbytes,
)
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
from .errors import (
    ArgumentError,
    BloscpackError,
    FileNotFound,
    IntegrityError,
    ReadOnlyError,
    UnsupportedError,
)
from .group import Group
from .io import ByteSource, Directory, PathLike, is_stream, shared_lock
from .journal import in_one_state, recover
from .ndarray import check_text
from .selection import (
    NUMPY,
    ORTHOGONAL,
    POINTS,
    Axis,
    AxisPoints,
    AxisSelection,
    OrthogonalPlan,
    ascending_order,
    axis_of,
    chunk_ranges,
    contiguous_range,
    flat_indices,
    flat_span,
    group_by_chunk,
    normalize_index,
    plan_index,
    result_shape,
)
from .url import is_url, local_path

Buffer = Any  # any object exporting the buffer protocol
#: Chunks a selection of a container at a URL touches that are read at once, in threads.
CONCURRENT_CHUNKS = 16

#: Largest number of items whose flat positions are planned at once for a strided selection.
GATHER_BATCH_ITEMS = 1 << 20
#: A part of a selection holding at least 1 / DENSE_SPAN of the items from its first to its
#: last (in the layout) is read as that run, then its items taken; sparser ones are gathered.
DENSE_SPAN = 4
#: A strided read of a chunk decodes at most this many separate runs of blocks, unless the runs
#: hold less than half of the blocks they span.
MAX_BLOCK_RUNS = 16
#: Units of a special or memcpyed chunk further apart than this many bytes are decoded apart.
SPARSE_GAP = 64 * 1024
#: b2nd selections of at most this many items are read item by item (larger ones box by box).
SMALL_SELECTION_ITEMS = 4096
#: Rows are read in pieces of about this many bytes when iterating over the first axis.
ITER_BYTES = 4 << 20
_UNIT_DTYPES: dict[int, np.dtype] = {k: np.dtype(f"u{k}") for k in (1, 2, 4, 8)}


#: Result size above which a read first checks every chunk's size (cheap next to decoding that
#: much), so that sizes a damaged header claims are not allocated.
_CHECKED_READ = 16 * 1024 * 1024


# --- stores: what a BloscArray reads from -------------------------------------------------


class Store(Protocol):
    """The storage behind a :class:`BloscArray`."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def chunks(self) -> tuple[int, ...] | None:
        """The shape of the box one stored chunk holds, or None."""
        ...

    def read(self, selection: tuple[Axis, ...]) -> np.ndarray:
        """The selected items as a new array of ``result_shape(selection)``."""
        ...

    def read_points(self, coords: tuple[np.ndarray, ...]) -> np.ndarray:
        """The items at ``coords`` (one int64 array per axis, non-negative, in range) as a new
        1-d array."""
        ...

    def read_item(self, coords: tuple[int, ...]) -> np.ndarray:
        """The item at ``coords`` (non-negative, in range) as a 0-d array."""
        ...

    def iter_chunks(self) -> Iterator[np.ndarray]:
        """Each stored chunk's items as a new array, in storage order."""
        ...

    def close(self) -> None:
        """Release the files."""
        ...


def _allocate(shape: tuple[int, ...], dtype: np.dtype, name: str) -> np.ndarray:
    try:
        return np.empty(shape, dtype=dtype)
    except (MemoryError, ValueError) as exc:
        raise UnsupportedError(
            f"{name}: cannot allocate an array of shape {shape} and dtype {dtype} ({exc})"
        ) from None


def _span(s: Axis) -> int:
    """How many items the box around the selected ones holds along an axis."""
    return int(s.points[-1] - s.points[0]) + 1 if isinstance(s, AxisPoints) else len(s)


def _full_selection(selection: tuple[Axis, ...], shape: tuple[int, ...]) -> bool:
    return all(
        isinstance(s, AxisSelection) and s.start == 0 and s.step == 1 and s.stop == n
        and not s.drop
        for s, n in zip(selection, shape, strict=True)
    )


def _batches(
    selection: tuple[Axis, ...], limit: int, offset: int = 0
) -> Iterator[tuple[tuple[Axis, ...], int]]:
    """Split ``selection`` into parts of at most ``limit`` items (or single lines), each a run
    of the result in C order: ``(part, offset of its first item in the result)``."""
    total = math.prod(len(s) for s in selection)
    axis = next((k for k, s in enumerate(selection) if len(s) > 1), None)
    if total <= limit or axis is None:
        yield selection, offset
        return
    s = selection[axis]
    inner = total // len(s)
    per = max(1, limit // inner)
    for j in range(0, len(s), per):
        part = selection[:axis] + (s.part(j, min(per, len(s) - j)),) + selection[axis + 1 :]
        if inner > limit:
            yield from _batches(part, limit, offset + j * inner)
        else:
            yield part, offset + j * inner


class FlatStore:
    """An N-d array stored as its items in C or F order, cut into Blosc chunks of any sizes
    (``.blp``, raw frames, bcolz carrays, single chunks).

    Selections are planned in *units* of ``gcd(itemsize, chunk boundaries)`` bytes, so items
    that straddle two chunks are read correctly; normally a unit is one item.
    """

    def __init__(self, reader: ContainerReader, description: ArrayDescription | None = None,
                 sizes: ChunkSizes | None = None) -> None:  # fmt: skip
        """The items ``description`` (default: the reader's) in the chunks of ``reader``, of
        ``sizes`` bytes (default: the reader's)."""
        description = reader.description if description is None else description
        sizes = reader.sizes if sizes is None else sizes
        self.source = reader
        self.sizes = sizes
        self.name = reader.name
        self.dtype = dtype = description.dtype
        self.shape = shape = description.shape
        self.order = description.order
        self.nchunks = nchunks = reader.nchunks
        if sizes.every is not None:
            chunk_nbytes, total = sizes.every, sizes.total
            # the boundaries are the multiples of chunk_nbytes below total, and total
            boundaries_gcd = (
                0 if not nchunks
                else math.gcd(chunk_nbytes, total) if nchunks > 1 and chunk_nbytes < total
                else total
            )  # fmt: skip
        else:
            assert sizes.each is not None
            bounds = np.zeros(len(sizes.each) + 1, dtype=np.int64)
            np.cumsum(np.asarray(sizes.each, dtype=np.int64), out=bounds[1:])
            self.bounds = bounds
            total = int(bounds[-1])
            boundaries_gcd = int(np.gcd.reduce(bounds))
        expected = math.prod(shape) * dtype.itemsize
        if total != expected:
            raise IntegrityError(
                f"{self.name}: the array {shape} of {dtype} needs {expected} bytes,"
                f" the chunks hold {total}"
            )
        itemsize = dtype.itemsize
        unit = math.gcd(itemsize, boundaries_gcd) if itemsize else 1
        self.unit = unit
        self.unit_dtype: np.dtype = _UNIT_DTYPES.get(unit, np.dtype(f"V{unit}"))
        self.per_item = itemsize // unit if itemsize else 1
        self.chunk_units: int | None = None
        if sizes.every is not None and nchunks:
            self.chunk_units = sizes.every // unit
        elif nchunks == 1:
            self.chunk_units = int(self.ubounds[1])
        if self.chunk_units == 0:
            self.chunk_units = None

    @functools.cached_property
    def bounds(self) -> np.ndarray:
        """Byte offset of each chunk in the layout, then the total (``nchunks + 1`` values)."""
        chunk_nbytes, total = self.sizes.every, self.sizes.total
        assert chunk_nbytes is not None  # set in __init__ otherwise
        bounds = np.minimum(np.arange(self.nchunks + 1, dtype=np.int64) * chunk_nbytes, total)
        if self.nchunks:
            bounds[-1] = total
        return bounds

    @functools.cached_property
    def ubounds(self) -> np.ndarray:
        """:attr:`bounds` in units."""
        return self.bounds // self.unit

    def _ubound(self, c: int) -> int:
        """``ubounds[c]``, without building the array for chunks of one size."""
        if self.sizes.every is None:
            return int(self.ubounds[c])
        if c >= self.nchunks:
            return self.sizes.total // self.unit
        return min(c * self.sizes.every, self.sizes.total) // self.unit

    def chunk_nbytes(self, c: int) -> int:
        """Uncompressed bytes of chunk ``c`` in the layout."""
        return self.sizes.of(c, self.nchunks)

    # --- geometry -------------------------------------------------------------------------

    @property
    def chunks(self) -> tuple[int, ...] | None:
        """The shape of the box one chunk holds, or None when chunks cut rows."""
        shape = self.shape
        if not shape or math.prod(shape) == 0 or self.source.nchunks == 1:
            return shape
        if self.chunk_units is None:
            return None
        outer = 0 if self.order == "C" else len(shape) - 1
        row_units = math.prod(shape) // shape[outer] * self.per_item
        if self.chunk_units % row_units:
            return None
        rows = min(self.chunk_units // row_units, shape[outer])
        return shape[:outer] + (rows,) + shape[outer + 1 :]

    def _spans(self, first: int, stop: int) -> Iterator[tuple[int, int, int]]:
        """``(chunk, start, stop)`` unit ranges, relative to each chunk, covering ``[first,
        stop)``."""
        if self.chunk_units is not None:
            yield from chunk_ranges(first, stop, self.chunk_units)
            return
        ub = self.ubounds
        c = int(np.searchsorted(ub, first, side="right")) - 1
        while first < stop:
            end = min(stop, int(ub[c + 1]))
            if end > first:
                yield c, first - int(ub[c]), end - int(ub[c])
            first = max(first, end)
            c += 1

    def _groups(self, flat: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """``(chunk, positions, units)`` for the units ``flat`` (any order) of each chunk."""
        if self.chunk_units is not None:
            yield from group_by_chunk(flat, self.chunk_units)
            return
        flat = flat.ravel()
        order = ascending_order(flat)
        ordered = flat[order]
        chunks = np.searchsorted(self.ubounds, ordered, side="right") - 1
        cuts = np.flatnonzero(np.diff(chunks)) + 1
        for part in np.split(np.arange(len(ordered)), cuts):
            if len(part):
                c = int(chunks[part[0]])
                yield c, order[part], ordered[part] - self.ubounds[c]

    # --- reading ---------------------------------------------------------------------------

    def read(self, selection: tuple[Axis, ...]) -> np.ndarray:
        """The selected items as a new array (only the chunks, and blocks, they touch are
        decoded)."""
        shape = self.shape
        if self.order == "F":  # an F-order layout is the C-order layout of the transpose
            selection, shape = selection[::-1], shape[::-1]
        out_shape = result_shape(selection)
        if math.prod(out_shape) * self.dtype.itemsize > _CHECKED_READ:
            self.source.check_sizes()
        out = _allocate(out_shape, self.dtype, self.name)
        if out.size and self.dtype.itemsize:
            if self.per_item > 1:
                selection += (AxisSelection(0, self.per_item, 1, False),)
                shape += (self.per_item,)
            self._fill(selection, shape, out.reshape(-1).view(self.unit_dtype))
        return out.T if self.order == "F" else out

    def read_points(self, coords: tuple[np.ndarray, ...]) -> np.ndarray:
        """The items at ``coords`` as a new 1-d array: per chunk, the blocks holding them."""
        count = len(coords[0]) if coords else 1
        out = _allocate((count,), self.dtype, self.name)
        if count and self.dtype.itemsize:
            flat = np.ravel_multi_index(coords, self.shape, order=self.order)  # type: ignore[call-overload]
            self.gather_items(np.asarray(flat, dtype=np.int64), out)
        return out

    def gather_items(self, flat: np.ndarray, out: np.ndarray) -> None:
        """``out[k] = item flat[k]`` (item numbers of the layout, 1-d), a batch at a time."""
        k = self.per_item
        units = out.reshape(-1).view(self.unit_dtype)
        step = max(1, GATHER_BATCH_ITEMS // k)
        within = np.arange(k, dtype=np.int64)
        for j in range(0, len(flat), step):
            part = flat[j : j + step]
            wanted = part if k == 1 else (part[:, None] * k + within).reshape(-1)
            self.gather(wanted, units[j * k : (j + len(part)) * k])

    def read_item(self, coords: tuple[int, ...]) -> np.ndarray:
        """The item at ``coords`` (non-negative, in range) as a 0-d array."""
        if self.order == "C":
            axes = zip(coords, self.shape, strict=True)
        else:
            axes = zip(coords[::-1], self.shape[::-1], strict=True)
        position = 0
        for k, n in axes:
            position = position * n + k
        out = _allocate((), self.dtype, self.name)
        if self.dtype.itemsize:
            first = position * self.per_item
            self.read_run(first, first + self.per_item, out.reshape(-1).view(self.unit_dtype))
        return out

    def _fill(self, selection: tuple[Axis, ...], shape: tuple[int, ...],
              dest: np.ndarray) -> None:  # fmt: skip
        """Fill ``dest`` (units, C order of the result) with the C-order ``selection``."""
        run = contiguous_range(selection, shape)
        if run is not None:
            self.read_run(*run, dest)
            return
        for part, offset in _batches(selection, GATHER_BATCH_ITEMS):
            count = math.prod(len(s) for s in part)
            piece = dest[offset : offset + count]
            run = contiguous_range(part, shape)
            if run is not None:
                self.read_run(*run, piece)
                continue
            first, last = flat_span(part, shape)
            flat = flat_indices(part, shape)
            if last - first < DENSE_SPAN * count:
                piece[...] = self.read_units(first, last + 1)[flat.reshape(-1) - first]
            else:
                self.gather(flat, piece)

    def read_units(self, first: int, stop: int) -> np.ndarray:
        """Units ``[first, stop)`` of the layout as a new 1-d array of the unit dtype."""
        out = _allocate((stop - first,), self.unit_dtype, self.name)
        self.read_run(first, stop, out)
        return out

    def read_run(self, first: int, stop: int, dest: np.ndarray) -> None:
        """Decode units ``[first, stop)`` straight into ``dest``, chunk by chunk."""
        dest_bytes = dest.view(np.uint8)
        cu = self.chunk_units
        if cu is not None and first // cu == (stop - 1) // cu:  # one chunk (single items)
            c = first // cu
            self._read_span(c, first - c * cu, stop - c * cu, dest_bytes)
            return
        spans = list(self._spans(first, stop))
        unit, sizes, n = self.unit, self.source.sizes, self.source.nchunks
        whole = [(end - start) * unit >= sizes.of(c, n) for c, start, end in spans]
        read_whole = [c for k, (c, _, _) in enumerate(spans)
                      if whole[k] or 0 < k < len(spans) - 1]  # fmt: skip
        if read_whole:  # fetched at once if remote
            self.source.prefetch(read_whole)
        ends = [spans[0], spans[-1]] if len(spans) > 1 else []  # maybe only some blocks
        fetched = dict(zip((0, len(spans) - 1), self._fetched(
            [(c, start * unit, end * unit) for c, start, end in ends]), strict=False))
        pos = 0
        for k, (c, start, end) in enumerate(spans):
            n = (end - start) * unit
            self._read_span(c, start, end, dest_bytes[pos : pos + n], fetched.get(k))
            pos += n

    def _fetched(self, wanted: list[tuple[int, int, int]]
                 ) -> list[tuple[Buffer, ChunkHeader] | None]:  # fmt: skip
        """``_chunk(c, lo, hi)`` of a few ``wanted`` chunks of a remote input, read at once in
        threads (each read then costs the rounds of one); else Nones (read when decoded)."""
        if not 1 < len(wanted) <= CONCURRENT_CHUNKS or not self.source.remote:
            return [None] * len(wanted)
        sizes, n = self.source.sizes, self.source.nchunks
        if all(sizes.of(c, n) <= MIN_PARTIAL_CBYTES for c, _, _ in wanted):
            # small chunks are read whole: neighbours come in one request
            self.source.prefetch([c for c, _, _ in wanted])

        def fetch(one: tuple[int, int, int]) -> tuple[Buffer, ChunkHeader]:
            data, header = self._chunk(*one)
            try:  # a copy: partial reads fill a buffer the thread reuses
                return bytes(data), header
            finally:
                self.source.release()

        with ThreadPoolExecutor(len(wanted)) as pool:
            return list(pool.map(fetch, wanted))

    def _read_span(self, c: int, start: int, end: int, dest_bytes: np.ndarray,
                   fetched: tuple[Buffer, ChunkHeader] | None = None) -> None:  # fmt: skip
        """Decode units ``[start, end)`` of chunk ``c`` into ``dest_bytes`` (from ``fetched``,
        what :meth:`_fetched` gave, if given)."""
        lo, hi = start * self.unit, end * self.unit
        chunk, header = fetched or self._chunk(c, lo, hi)
        try:
            _decode_bytes(chunk, header, lo, hi, dest_bytes)
        except BloscpackError as exc:
            raise type(exc)(f"{self.name}: chunk {c}: {exc}") from None
        finally:
            self.source.release()

    def gather(self, flat: np.ndarray, dest: np.ndarray) -> None:
        """``dest[k] = unit flat[k]``: per chunk, decode the blocks holding its units."""
        unit = self.unit
        groups = list(self._groups(flat))
        fetched = self._fetched([(c, int(units[0]) * unit, (int(units[-1]) + 1) * unit)
                                 for c, _, units in groups])  # fmt: skip
        for (c, positions, units), got in zip(groups, fetched, strict=True):
            chunk, header = got or self._chunk(c, int(units[0]) * unit,
                                               (int(units[-1]) + 1) * unit)  # fmt: skip
            try:
                dest[positions] = self._decode_units(chunk, header, units)
            except BloscpackError as exc:
                raise type(exc)(f"{self.name}: chunk {c}: {exc}") from None
            finally:
                self.source.release()

    def _decode_units(self, chunk: Buffer, header: ChunkHeader, units: np.ndarray) -> np.ndarray:
        """The units ``units`` (sorted unit numbers of the chunk), decoding only the blocks that
        hold them: each run of consecutive blocks with one call, or the blocks from the first
        to the last with one call when there are many runs and they hold most of those
        blocks."""
        unit = self.unit
        lo, hi = int(units[0]) * unit, (int(units[-1]) + 1) * unit
        bs = header.blocksize
        runs = [(lo, hi)]
        kind = chunk_kind(header)
        if kind != ChunkKind.REGULAR and hi - lo > max(SPARSE_GAP, 2 * len(units) * unit):
            # special and memcpyed chunks decode any range alone: a sparse selection decodes
            # its units' neighbourhoods only, not the span (a special chunk may claim GiBs)
            cuts = np.flatnonzero(np.diff(units.astype(np.int64)) * unit > SPARSE_GAP) + 1
            runs = [(int(p[0]) * unit, (int(p[-1]) + 1) * unit) for p in np.split(units, cuts)]
        elif kind == ChunkKind.REGULAR and 0 < unit <= bs and hi - lo > bs:
            starts = units.astype(np.int64) * unit
            first_block = lo // bs
            marks = np.zeros((hi - 1) // bs - first_block + 1, dtype=bool)
            marks[starts // bs - first_block] = True
            marks[(starts + unit - 1) // bs - first_block] = True  # units across two blocks
            blocks = np.flatnonzero(marks) + first_block
            cuts = np.flatnonzero(np.diff(blocks) != 1) + 1
            if len(cuts) < MAX_BLOCK_RUNS or len(blocks) * 2 < blocks[-1] - blocks[0] + 1:
                # a unit across a block boundary needs both blocks, which then share a run:
                # the run's partial units at its ends belong to no wanted unit
                runs = [
                    (max(-(-int(run[0]) * bs // unit) * unit, lo),
                     min((int(run[-1]) + 1) * bs // unit * unit, hi))
                    for run in np.split(blocks, cuts)
                ]  # fmt: skip
        sizes = [b1 - b0 for b0, b1 in runs]
        decoded = np.empty(sum(sizes), dtype=np.uint8)
        offset = 0
        for (b0, b1), size in zip(runs, sizes, strict=True):
            _decode_bytes(chunk, header, b0, b1, decoded[offset : offset + size])
            offset += size
        values = decoded.view(self.unit_dtype)
        if len(runs) == 1:
            return values[units - lo // unit]
        run_units = np.array([b0 // unit for b0, _ in runs], dtype=np.int64)
        run_offsets = np.concatenate(([0], np.cumsum(sizes[:-1], dtype=np.int64) // unit))
        k = np.searchsorted(run_units, units, side="right") - 1
        return values[units - run_units[k] + run_offsets[k]]

    def _chunk(self, c: int, lo: int = 0, hi: int = 0) -> tuple[Buffer, ChunkHeader]:
        """Chunk ``c`` and its header, which announces the bytes the layout expects of it (the
        engine validates the parts it decodes); with ``lo < hi``, possibly only the parts that
        decoding its bytes ``[lo, hi)`` reads."""
        source = self.source
        data = source.stored_chunk_items(c, lo, hi) if lo < hi else source.stored_chunk(c)
        try:
            header = ChunkHeader.parse(data)
        except BloscpackError as exc:
            self.source.release()
            raise type(exc)(f"{self.name}: chunk {c}: {exc}") from None
        try:
            check_chunk_nbytes(source, c, header.nbytes)
        except IntegrityError:
            source.release()
            raise
        return data, header

    def iter_chunks(self) -> Iterator[np.ndarray]:
        """Each chunk's items: boxes of :attr:`chunks` when chunks hold whole rows, else the
        1-d items in storage order (whole items; one straddling two chunks goes with the
        first)."""
        if self.sizes.total > _CHECKED_READ:  # the chunks' sizes, before any is allocated
            self.source.check_sizes()
        box = self.chunks
        k = self.per_item
        outer = 0 if self.order == "C" else len(self.shape) - 1
        for c in range(self.source.nchunks):
            i0 = -(-self._ubound(c) // k)
            i1 = -(-self._ubound(c + 1) // k)
            if i1 == i0:
                continue
            items = self.read_units(i0 * k, i1 * k).view(self.dtype)
            if box is None:
                yield items
            elif not self.shape:
                yield items.reshape(())
            else:
                piece = list(self.shape)
                piece[outer] = (i1 - i0) // (math.prod(self.shape) // self.shape[outer])
                yield items.reshape(piece, order=self.order)  # type: ignore[call-overload]

    def close(self) -> None:
        """Release the chunk source."""
        self.source.close()


def _decode_bytes(chunk: Buffer, header: ChunkHeader, lo: int, hi: int, dest: np.ndarray) -> None:
    """Decode bytes ``[lo, hi)`` of a chunk into ``dest`` (a byte array of ``hi - lo``),
    decoding (and validating) only the blocks they touch."""
    nbytes = header.nbytes
    if lo == 0 and hi == nbytes:
        engine.decompress_into(chunk, dest)
        return
    if chunk_kind(header) == ChunkKind.SPECIAL:
        engine.special_range_into(chunk, lo, hi, dest)
        return
    ts = max(header.real_typesize, 1)
    addressable = nbytes // ts * ts  # C-Blosc2 getitem reaches whole items only
    if lo % ts == 0 and hi % ts == 0 and hi <= addressable:
        engine.getitem_into(chunk, lo // ts, (hi - lo) // ts, dest)
        return
    if -(-hi // ts) * ts > addressable:  # the tail bytes after the last whole item
        whole = np.empty(nbytes, dtype=np.uint8)
        engine.decompress_into(chunk, whole)
        dest[:] = whole[lo:hi]
        return
    first, last = lo // ts, -(-hi // ts)
    part = np.empty((last - first) * ts, dtype=np.uint8)
    engine.getitem_into(chunk, first, last - first, part)
    dest[:] = part[lo - first * ts : hi - first * ts]


class B2ndStore:
    """A python-blosc2 NDArray.  Small selections are read item by item: each item's place in
    its chunk (blocks in C order, items in C order inside a block) makes the frame a flat
    layout, read like the others, so only the blocks holding the items are decoded.  Larger
    boxes go to :class:`~bloscpack.containers.b2nd.B2ndArray`, which reads only the chunks,
    and in them the block runs, a box touches, and copies block by block."""

    def __init__(self, reader: ContainerReader) -> None:
        self.reader = reader
        self.array = array = reader.array  # type: ignore[attr-defined]
        self.name = reader.name
        self.shape = array.shape
        self.dtype = array.dtype
        self.chunks = array.chunks
        self.grid = grid = reader.grid
        self._frame_items: FlatStore | None = None
        if grid.nchunks and self.dtype.itemsize and self.shape:
            items = grid.nchunks * grid.chunk_nbytes // self.dtype.itemsize
            self._frame_items = FlatStore(reader, ArrayDescription(self.dtype, (items,)))

    def _axis_positions(self, indices: Sequence[np.ndarray]) -> Iterator[np.ndarray]:
        """Per axis, what each index along it adds to an item's number in the frame's chunks
        (chunks, then blocks in C order, then items in C order inside a block)."""
        for index, (chunk, block, per_chunk, per_block, per_item) in zip(
            indices, self.grid.item_steps, strict=True
        ):
            within = index % chunk
            yield (
                index // chunk * per_chunk + within // block * per_block + within % block * per_item
            )

    def _frame_positions(self, selection: tuple[Axis, ...]) -> np.ndarray:
        """Item numbers in the frame's chunks of the selected items (box shape, C order)."""
        ndim = len(self.shape)
        positions = np.zeros((1,) * ndim, dtype=np.int64)
        parts = self._axis_positions([s.indices() for s in selection])
        for axis, part in enumerate(parts):
            positions = positions + part.reshape([-1 if a == axis else 1 for a in range(ndim)])
        return positions

    def read_points(self, coords: tuple[np.ndarray, ...]) -> np.ndarray:
        """The items at ``coords`` as a new 1-d array: per chunk, the blocks holding them."""
        out = _allocate((len(coords[0]),), self.dtype, self.name)
        if len(out) and self._frame_items is not None:
            positions = sum(self._axis_positions(coords), np.zeros(len(out), np.int64))
            self._frame_items.gather_items(positions, out)
        return out

    def read_item(self, coords: tuple[int, ...]) -> np.ndarray:
        """The item at ``coords`` (non-negative, in range) as a 0-d array."""
        if self._frame_items is None:
            return self.read(tuple(AxisSelection(k, k + 1, 1, True) for k in coords))
        position = self.grid.frame_item(coords)
        out = _allocate((), self.dtype, self.name)
        self._frame_items.read_run(position, position + 1, out.reshape(-1).view(self.dtype))
        return out

    def read(self, selection: tuple[Axis, ...]) -> np.ndarray:
        """The selected items as a new array: item by item when few (or when index arrays
        pick under 1 / DENSE_SPAN of the box around their points), else box by box (with
        index arrays: a box per chunk they touch, around their points in it)."""
        if _full_selection(selection, self.shape):
            return self.array.read(_allocate(self.shape, self.dtype, self.name))
        count = math.prod(len(s) for s in selection)
        points = any(isinstance(s, AxisPoints) for s in selection)
        if self._frame_items is not None and count > 0 and (
            count <= SMALL_SELECTION_ITEMS
            or (points and DENSE_SPAN * count < math.prod(map(_span, selection)))
        ):  # few items, or index arrays whose points are sparse: item by item
            out = _allocate(result_shape(selection), self.dtype, self.name)
            self._frame_items.gather_items(self._frame_positions(selection).reshape(-1), out)
            return out
        read = self._read_by_chunks if points else self._read_box
        box = read(selection)  # type: ignore[arg-type]  # (no index arrays: ranges only)
        return box[tuple(0 if s.drop else slice(None) for s in selection) + (Ellipsis,)]

    def _read_by_chunks(self, selection: tuple[Axis, ...]) -> np.ndarray:
        """The box of ``selection`` (dense index arrays: see :meth:`read`; dropped axes kept),
        where the points of each index array are read a chunk at a time: per chunk they
        touch, the box from its first to its last point there."""
        out = _allocate(tuple(len(s) for s in selection), self.dtype, self.name)
        if not out.size:
            return out
        pieces: list[list[tuple[slice, Axis, np.ndarray | None]]] = []
        for axis, s in enumerate(selection):
            if not isinstance(s, AxisPoints):
                pieces.append([(slice(None), s, None)])
                continue
            points = s.points
            cuts = [0, *(np.flatnonzero(np.diff(points // self.chunks[axis])) + 1), len(points)]
            axis_pieces: list[tuple[slice, Axis, np.ndarray | None]] = []
            for a, b in zip(cuts[:-1], cuts[1:], strict=True):
                group = points[a:b]
                first, last = int(group[0]), int(group[-1])
                span = AxisSelection(first, last + 1, 1, False)
                axis_pieces.append((slice(a, b), span, None if last - first + 1 == len(group)
                                    else group - first))  # fmt: skip
            pieces.append(axis_pieces)
        for combo in itertools.product(*pieces):
            box = self._read_box(tuple(span for _, span, _ in combo))  # type: ignore[misc]
            for axis, (_, _, within) in enumerate(combo):
                if within is not None:
                    box = np.take(box, within, axis=axis)
            out[tuple(place for place, _, _ in combo)] = box
        return out

    def _read_box(self, selection: tuple[AxisSelection, ...]) -> np.ndarray:
        """The box of ``selection`` (ranges; dropped axes kept with length 1) as a new array:
        only the chunks, and in them the block runs, it touches."""
        boxes: list[slice] = []
        flips: list[slice] = []
        for s in selection:
            n = len(s)
            if n == 0:
                boxes.append(slice(0, 0, 1))
                flips.append(slice(None))
            elif s.step > 0:
                boxes.append(slice(s.start, s.start + (n - 1) * s.step + 1, s.step))
                flips.append(slice(None))
            else:  # read the same items in ascending order into a reversed view
                low = s.start + (n - 1) * s.step
                boxes.append(slice(low, s.start + 1, -s.step))
                flips.append(slice(None, None, -1))
        box_shape = tuple(len(s) for s in selection)
        out = _allocate(box_shape, self.dtype, self.name)
        self.array.read_selection(tuple(boxes), out=out[tuple(flips)])
        return out

    def iter_chunks(self) -> Iterator[np.ndarray]:
        """Each chunk's region of the array (edge chunks are smaller), in frame order."""
        if not self.shape:
            yield self.array.read()
            return
        grid = self.array.grid
        for coords in self.array.iter_chunk_coords():
            yield self.array.read_selection(grid.chunk_region(coords))

    def close(self) -> None:
        """Release the array's frame."""
        self.reader.close()


class TableStore:
    """A bcolz ctable: a structured array whose fields are the columns, each read only when
    a selection needs it."""

    def __init__(
        self, reader: Any, names: Sequence[str], columns: dict[str, FlatStore] | None = None
    ) -> None:
        """``reader``: a table reader (its ``columns`` and ``column(name)``); ``columns``: the
        column stores of the table this one selects from (shared)."""
        self.reader = reader
        self.name = reader.name
        self.names = list(names)
        self._columns: dict[str, FlatStore] = {} if columns is None else columns
        described = [self.column(name).source.description for name in self.names]
        self.shape: tuple[int, ...] = described[0].shape[:1]
        self.dtype = np.dtype(
            [(n, d.dtype, d.shape[1:]) for n, d in zip(self.names, described, strict=True)]
        )
        chunklens = {d.chunks[0] for d in described if d.chunks}
        self.chunklen = described[0].chunks[0] if described[0].chunks else 1
        self.chunks: tuple[int, ...] | None = (
            (min(self.chunklen, self.shape[0]),) if len(chunklens) == 1 else None
        )

    def select(self, names: Sequence[str]) -> TableStore:
        """A store of the columns ``names`` of this table, sharing its column stores."""
        return TableStore(self.reader, names, self._columns)

    def column(self, name: str) -> FlatStore:
        """The store of column ``name`` (its chunk files are read only when it is indexed)."""
        if name not in self._columns:
            self._columns[name] = FlatStore(self.reader.column(name))
        return self._columns[name]

    def read_item(self, coords: tuple[int, ...]) -> np.ndarray:
        """Row ``coords[0]`` as a 0-d structured array."""
        return self.read((AxisSelection(coords[0], coords[0] + 1, 1, True),))

    def read_points(self, coords: tuple[np.ndarray, ...]) -> np.ndarray:
        """The rows ``coords[0]`` as a structured array, column by column."""
        rows, positions = np.unique(coords[0], return_inverse=True)
        return self.read((axis_of(rows),))[positions.reshape(-1)]

    def read(self, selection: tuple[Axis, ...]) -> np.ndarray:
        """The selected rows as a structured array, column by column (the columns of a table
        at a URL at once, in threads: one round of requests for all)."""
        out = _allocate(result_shape(selection), self.dtype, self.name)

        def read_column(name: str) -> None:
            column = self.column(name)
            whole_rows = tuple(AxisSelection(0, n, 1, False) for n in column.shape[1:])
            out[name] = column.read(selection + whole_rows)

        columns = [self.column(name) for name in self.names]
        if len(columns) > 1 and columns[0].source.remote:
            with ThreadPoolExecutor(min(len(columns), CONCURRENT_CHUNKS)) as pool:
                list(pool.map(read_column, self.names))
        else:
            for name in self.names:
                read_column(name)
        return out

    def iter_chunks(self) -> Iterator[np.ndarray]:
        """Blocks of ``chunklen`` rows (the first column's chunk length)."""
        n = self.shape[0]
        for start in range(0, n, self.chunklen):
            yield self.read(normalize_index(slice(start, start + self.chunklen), self.shape))

    def close(self) -> None:
        """Release the column stores opened so far."""
        for column in self._columns.values():
            column.close()


# --- opening ------------------------------------------------------------------------------


def _store(reader: ContainerReader) -> Store:
    """The store that reads ``reader``'s array: by columns for a table, by chunk boxes for an
    N-d chunk grid, else by item positions in its flat layout."""
    if reader.columns is not None:
        return TableStore(reader, reader.columns)
    if reader.grid is not None:
        return B2ndStore(reader)
    return FlatStore(reader)


def _open_path(path: str) -> tuple[str | None, Any]:
    """(format, what to open it from) for a path: a directory's format and its path, or the
    one :class:`~bloscpack.io.ByteSource` a file's reader reads (format None: detected under
    :meth:`~bloscpack.io.ByteSource.consistent`, with the rest of the opening)."""
    try:
        return None, ByteSource(path)
    except FileNotFound:
        if not os.path.isdir(path):
            raise
    return detect(path), path


def detect_buffer(data: Buffer) -> str:
    """The format of a single-file container held in memory: ``blp``, ``b2frame``, ``b2nd``
    or ``chunk`` (see :func:`bloscpack.dispatch.detect` for paths)."""
    return detect_source(ByteSource(data), whole=True)


def _map_file(fileobj: Any) -> tuple[memoryview, Any]:
    """The bytes of a binary file object from its current position: memory-mapped when it is
    a real file, else read into memory.  Returns (view, the mapping or None)."""
    if isinstance(fileobj, io.TextIOBase):
        raise TypeError("open() needs a file object opened in binary mode")
    try:
        fd = fileobj.fileno()
        start = fileobj.tell()
        mapping = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (AttributeError, OSError, ValueError):
        data = fileobj.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError("open() needs a file object opened in binary mode") from None
        return memoryview(data), None
    return memoryview(mapping)[start:], mapping


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
            recover(self.path)  # an append that was interrupted is rolled back first
        elif isinstance(source, (bytes, bytearray, memoryview)):
            self.path = None
            self._view = opened = memoryview(source).cast("B")
            self._from_bytes = True
            fmt = detect_buffer(opened)
        elif hasattr(source, "read"):
            self.path = None
            opened, self._mapping = _map_file(source)
            self._view = opened
            fmt = detect_buffer(opened)
        else:
            raise TypeError(
                f"open() takes a path, a binary file object or bytes, not {type(source).__name__}"
            )
        # A path is opened in one state: appends and edits by this library wait meanwhile.
        with shared_lock(self.path) if self.path is not None else contextlib.nullcontext():
            if self.path is not None:
                fmt, opened = _open_path(self.path)
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
        """Uncompressed bytes of one stored chunk (the first: only the last may hold fewer)."""
        reader = self._reader
        return reader.sizes.of(0, reader.nchunks) if reader.nchunks else 0

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
        return {"format": self.format, **format_of(self.format).info(self._view)}

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
        where = self.path or self.url or ("<bytes>" if self._from_bytes else "<file object>")
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
                return check_text(self._store.read_item(coords), self._store.name)[()]
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
        with contextlib.suppress(Exception):
            self.close()

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
