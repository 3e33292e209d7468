"""The store of a flat layout: an N-d array stored as its items in C or F order, cut into
Blosc chunks of any sizes (``.blp``, raw frames, bcolz carrays, single chunks).  A selection
is planned with :mod:`bloscpack.selection` and decoded with
:func:`bloscpack.engine.getitem_into`, straight into the result for contiguous runs; inside
a chunk only the blocks it needs are decoded."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ... import engine
from ...blosc.header import ChunkHeader
from ...blosc.layout import ChunkKind
from ...blosc.partial import MIN_PARTIAL_CBYTES
from ...errors import BloscpackError, IntegrityError
from ...selection import (
    Axis,
    AxisSelection,
    ascending_order,
    chunk_ranges,
    contiguous_range,
    flat_indices,
    flat_span,
    group_by_chunk,
    result_shape,
)
from ..base import ArrayDescription, ChunkSizes, ContainerReader, check_chunk_nbytes
from . import base
from .base import CONCURRENT_CHUNKS, DENSE_SPAN, GATHER_BATCH_ITEMS, Buffer, batches

#: A strided read of a chunk decodes at most this many separate runs of blocks, unless the runs
#: hold less than half of the blocks they span.
MAX_BLOCK_RUNS = 16
#: Units of a special or memcpyed chunk further apart than this many bytes are decoded apart.
SPARSE_GAP = 64 * 1024
#: Result size above which a read first checks every chunk's size (cheap next to decoding that
#: much), so that sizes a damaged header claims are not allocated.
CHECKED_READ = 16 * 1024 * 1024
_UNIT_DTYPES: dict[int, np.dtype] = {k: np.dtype(f"u{k}") for k in (1, 2, 4, 8)}


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
        if math.prod(out_shape) * self.dtype.itemsize > CHECKED_READ:
            self.source.check_sizes()
        out = base.allocate(out_shape, self.dtype, self.name)
        if out.size and self.dtype.itemsize:
            if self.per_item > 1:
                selection += (AxisSelection(0, self.per_item, 1, False),)
                shape += (self.per_item,)
            self._fill(selection, shape, out.reshape(-1).view(self.unit_dtype))
        return out.T if self.order == "F" else out

    def read_points(self, coords: tuple[np.ndarray, ...]) -> np.ndarray:
        """The items at ``coords`` as a new 1-d array: per chunk, the blocks holding them."""
        count = len(coords[0]) if coords else 1
        out = base.allocate((count,), self.dtype, self.name)
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
        out = base.allocate((), self.dtype, self.name)
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
        for part, offset in batches(selection, GATHER_BATCH_ITEMS):
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
        out = base.allocate((stop - first,), self.unit_dtype, self.name)
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
        fetched = dict(
            zip(
                (0, len(spans) - 1),
                self._fetched([(c, start * unit, end * unit) for c, start, end in ends]),
                strict=False,
            )
        )
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
        if fetched is None:
            try:
                done = self.source.decode_chunk_items(c, lo, hi, dest_bytes)
            except BloscpackError:
                done = False  # the read below raises it, worded as every read words it
            finally:
                self.source.release()
            if done:
                return
        chunk, header = fetched or self._chunk(c, lo, hi)
        try:
            decode_bytes(chunk, header, lo, hi, dest_bytes)
        except BloscpackError as exc:
            raise type(exc)(f"{self.name}: {self.source.chunk_place(c)}: {exc}") from None
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
                raise type(exc)(f"{self.name}: {self.source.chunk_place(c)}: {exc}") from None
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
        kind = header.kind
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
            decode_bytes(chunk, header, b0, b1, decoded[offset : offset + size])
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
            raise type(exc)(f"{self.name}: {self.source.chunk_place(c)}: {exc}") from None
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
        if self.sizes.total > CHECKED_READ:  # the chunks' sizes, before any is allocated
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


def decode_bytes(chunk: Buffer, header: ChunkHeader, lo: int, hi: int, dest: np.ndarray) -> None:
    """Decode bytes ``[lo, hi)`` of a chunk into ``dest`` (a byte array of ``hi - lo``),
    decoding (and validating) only the blocks they touch."""
    nbytes = header.nbytes
    if lo == 0 and hi == nbytes:
        engine.decompress_into(chunk, dest)
        return
    if header.kind == ChunkKind.SPECIAL:
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
