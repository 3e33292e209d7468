"""python-blosc2 NDArray files: numpy arrays in Blosc2 frames (``.b2nd`` contiguous files and
sparse frame directories), read and written compatibly with python-blosc2 both ways.

An NDArray frame is an ordinary Blosc2 frame whose ``b2nd`` metalayer gives shape, chunks,
blocks and dtype (:mod:`bloscpack.b2nd_meta`); frame chunk ``n`` holds N-d chunk ``n`` (C order
over the chunk grid), its blocks in C order, zero-padded at the edges
(:mod:`bloscpack.b2nd_layout`).  Zeros/NaN/uninitialized chunks are index markers.

Reading decompresses each chunk straight into the destination array when the chunk is exactly
its bytes there, otherwise into a reused scratch buffer whose block-wise view is then copied.
Selections read only the chunks they touch, and in each only the blocks they touch.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from .. import engine
from ..b2nd_layout import (
    ChunkGrid,
    array_to_chunk,
    chunk_to_array,
    default_chunks_blocks,
    gather,
    normalize_index,
    project_selection,
)
from ..b2nd_meta import METALAYER_NAME, B2ndMeta, dtype_to_string
from ..blosc.header import ChunkHeader, Filter, Special
from ..blosc.layout import validate_chunk
from ..errors import (
    ArgumentError,
    BloscpackError,
    FormatError,
    NotAContainer,
    OutputExistsError,
    UnsupportedError,
)
from ..io import ByteSource, PathLike, staged_output
from .base import ArrayDescription, ChunkSizes, ReaderBase, StoredMetadata
from .frame.contiguous import ContiguousFrame
from .frame.core import EDGE_READ
from .frame.edit import FrameBase
from .frame.params import CParams
from .frame.reader import unopened_report, vlmeta_items
from .frame.records import (
    HEADER_FIXED_LEN,
    MARKER_KINDS,
    MAX_METALAYERS,
    MAX_VLMETALAYERS_WRITE,
    FrameHeader,
    pack_value,
    parse_layers,
    sniff,
    unpack_value,
)
from .frame.writer import FrameTarget, FrameWriter, packed_user
from .options import CompressionParams
from .sframe import (
    INDEX_FILE,
    SparseFrame,
    SparseFrameTarget,
    SparseFrameWriter,
    sniff_dir,
    sniff_index_file,
)
from .sframe import verify as sframe_verify
from .target import Target, kept_metalayers, marker_fits, row_flat, take_options

Source = PathLike | bytes | bytearray | memoryview
DEFAULT_FILTERS = (0, 0, 0, 0, 0, int(Filter.SHUFFLE))
# python-blosc2 shuffles fixed-width unicode by its 4-byte characters
UNICODE_FILTERS_META = (0, 0, 0, 0, 0, 4)


# --- running chunk jobs ----------------------------------------------------------------------


def _run_in_order(job: Callable[[int], Any], count: int, workers: int) -> Iterator[Any]:
    """``job(n)`` for ``n`` in ``range(count)``, results in order.  With ``workers`` > 1 the
    jobs run in a thread pool (the C calls release the GIL) with at most ``workers`` jobs
    ahead of the consumer."""
    if workers <= 1 or count <= 1:
        for n in range(count):
            yield job(n)
        return
    with ThreadPoolExecutor(min(workers, count)) as pool:
        pending: deque[Future[Any]] = deque()
        try:
            for n in range(count):
                pending.append(pool.submit(job, n))
                if len(pending) > workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


class _ScratchPool:
    """Reusable chunk-sized buffers, one per concurrent job."""

    def __init__(self, nitems: int, dtype: np.dtype) -> None:
        self.nitems = nitems
        self.dtype = dtype
        self._free: list[np.ndarray] = []

    @contextlib.contextmanager
    def take(self) -> Iterator[np.ndarray]:
        buf = self._free.pop() if self._free else np.empty(self.nitems, dtype=self.dtype)
        try:
            yield buf
        finally:
            self._free.append(buf)


# --- recognising an NDArray frame ---------------------------------------------------------


def _frame_core(frame: Any) -> ContiguousFrame | SparseFrame:
    """The frame object behind ``frame`` (a :class:`bloscpack.Frame` or a frame reader)."""
    core = getattr(frame, "core", frame)
    if not isinstance(core, (ContiguousFrame, SparseFrame)):
        raise ArgumentError(f"expected a Blosc2 frame, got {type(frame).__name__}")
    return core


def _head_metalayers(path: str) -> list[str]:
    """Names of the metalayers of the frame file ``path``, reading only its header."""
    with open(path, "rb") as fh:
        fixed = fh.read(HEADER_FIXED_LEN)
        if not sniff(fixed):
            return []
        header = FrameHeader.parse(fixed, path)
        head = fixed + fh.read(max(header.header_len - HEADER_FIXED_LEN, 0))
    layers = parse_layers(head, HEADER_FIXED_LEN, 0, MAX_METALAYERS, f"{path}: metalayers")
    return [name for name, _, _ in layers]


def sniff_b2nd(frame: Any) -> bool:
    """True if ``frame`` (a path to a frame file or sparse directory, frame bytes, a
    :class:`~bloscpack.io.ByteSource` or an open frame) is a python-blosc2 NDArray: a Blosc2
    frame with a ``b2nd`` metalayer.  Reads only the header of a file; a damaged header gives
    False."""
    try:
        if isinstance(frame, (ByteSource, bytes, bytearray, memoryview)):
            source = frame if isinstance(frame, ByteSource) else ByteSource(frame)
            head = source.read_upto(0, EDGE_READ)
            if not sniff(bytes(head[:10])):
                return False
            header = FrameHeader.parse(head)
            if header.header_len > len(head):
                head = source.read_upto(0, header.header_len)
            layers = parse_layers(
                head[: header.header_len], HEADER_FIXED_LEN, 0, MAX_METALAYERS, "frame"
            )
            return any(name == METALAYER_NAME for name, _, _ in layers)
        if isinstance(frame, (str, os.PathLike)):
            path = os.fspath(frame)
            if os.path.isdir(path):
                path = os.path.join(path, INDEX_FILE)
            return os.path.isfile(path) and METALAYER_NAME in _head_metalayers(path)
        return any(name == METALAYER_NAME for name, _ in _frame_core(frame).metalayers)
    except (BloscpackError, OSError):
        return False


def _parse_metalayer(core: FrameBase) -> B2ndMeta:
    try:
        raw = core.meta_raw(METALAYER_NAME)
    except KeyError:
        raise NotAContainer(
            f"{core.name}: a Blosc2 frame without a 'b2nd' metalayer (not an NDArray)"
        ) from None
    try:
        return B2ndMeta.parse(raw, core.header.typesize)
    except BloscpackError as exc:
        raise type(exc)(f"{core.name}: {exc}") from None


def read_b2nd_metalayer(
    frame: Any,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], np.dtype]:
    """``(shape, chunks, blocks, dtype)`` from the ``b2nd`` metalayer of an open frame
    (:class:`bloscpack.Frame` or a frame reader), checked against the frame's typesize."""
    meta = _parse_metalayer(_frame_core(frame))
    return meta.shape, meta.chunks, meta.blocks, meta.dtype


def open_frame(source: Source | ByteSource) -> ContiguousFrame | SparseFrame:
    """Open a contiguous frame (file, bytes or a :class:`~bloscpack.io.ByteSource`, which the
    frame then owns) or a sparse frame directory for reading."""
    if isinstance(source, (bytes, bytearray, memoryview, ByteSource)):
        return ContiguousFrame(source)
    path = os.fspath(source)
    if os.path.isdir(path):
        return SparseFrame(path)
    if (os.path.basename(path) == INDEX_FILE and os.path.isdir(os.path.dirname(path) or ".")
            and sniff_index_file(path)):  # fmt: skip
        return SparseFrame(os.path.dirname(path) or ".")
    return ContiguousFrame(path)


# --- reading ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _grid(shape: tuple[int, ...], chunks: tuple[int, ...], blocks: tuple[int, ...],
          itemsize: int) -> ChunkGrid:  # fmt: skip
    """The (immutable) chunk grid of a geometry, built and checked once per geometry."""
    return ChunkGrid(shape, chunks, blocks, itemsize)


class B2ndArray:
    """An NDArray frame open for reading: ``shape``, ``dtype``, ``chunks``, ``blocks``,
    :meth:`read` (the whole array) and :meth:`read_selection` / ``[...]`` (a box of slices,
    reading only the chunks and blocks it touches).

    ``source`` is a path (``.b2nd`` file, sparse directory or its ``chunks.b2frame``), frame
    bytes, a :class:`~bloscpack.io.ByteSource` (closed with the array), or an open frame (closed
    with the array when ``owns_frame`` is set).  The frame is checked against the metalayer on
    open: chunk count, chunk size and total size must agree with shape, chunks, blocks and
    itemsize.
    """

    def __init__(self, source: Any, *, owns_frame: bool = False) -> None:
        if isinstance(source, (ContiguousFrame, SparseFrame)):
            self._frame = source
            self._owned = owns_frame
        elif isinstance(source, (str, os.PathLike, bytes, bytearray, memoryview, ByteSource)):
            self._frame = open_frame(source)
            self._owned = True
        else:
            self._frame = _frame_core(source)
            self._owned = owns_frame
        try:
            self.b2nd = _parse_metalayer(self._frame)
            self.grid = _grid(
                self.b2nd.shape, self.b2nd.chunks, self.b2nd.blocks, self.b2nd.dtype.itemsize
            )
            self._check_frame()
        except BaseException:
            self.close()
            raise
        self._scratch = _ScratchPool(self.grid.chunk_nbytes // self.dtype.itemsize, self.dtype)

    def _check_frame(self) -> None:
        frame, grid = self._frame, self.grid
        header = frame.header
        name = frame.name
        if frame.nchunks != grid.nchunks:
            raise FormatError(
                f"{name}: frame holds {frame.nchunks} chunks, the b2nd shape {grid.shape} with"
                f" chunks {grid.chunks} needs {grid.nchunks}"
            )
        if grid.nchunks and header.chunksize not in (grid.chunk_nbytes, 0):  # 0: variable
            raise FormatError(
                f"{name}: frame chunksize {header.chunksize}, the b2nd chunks {grid.chunks}"
                f" padded to blocks {grid.blocks} hold {grid.chunk_nbytes} bytes"
            )
        if header.nbytes != grid.nchunks * grid.chunk_nbytes:
            raise FormatError(
                f"{name}: frame nbytes {header.nbytes} does not match {grid.nchunks} chunks of"
                f" {grid.chunk_nbytes} bytes"
            )

    # --- description ---------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self.b2nd.shape

    @property
    def dtype(self) -> np.dtype:
        return self.b2nd.dtype

    @property
    def chunks(self) -> tuple[int, ...]:
        return self.b2nd.chunks

    @property
    def blocks(self) -> tuple[int, ...]:
        return self.b2nd.blocks

    @property
    def ndim(self) -> int:
        return self.b2nd.ndim

    @property
    def nbytes(self) -> int:
        return self.grid.nitems * self.dtype.itemsize

    @property
    def frame(self) -> ContiguousFrame | SparseFrame:
        """The underlying frame reader."""
        return self._frame

    @property
    def metalayers(self) -> dict[str, bytes]:
        """Every metalayer's stored bytes (``b2nd`` included)."""
        return dict(self._frame.metalayers)

    @property
    def meta(self) -> dict[str, Any]:
        """The user metalayers (all but ``b2nd``), msgpack-decoded as python-blosc2 does."""
        return {
            name: unpack_value(content, f"{self._frame.name}: metalayer {name!r}")
            for name, content in self._frame.metalayers
            if name != METALAYER_NAME
        }

    @property
    def vlmeta(self) -> dict[str, Any]:
        """The variable-length metalayers, msgpack-decoded as python-blosc2 does."""
        return {
            name: unpack_value(self._frame.vlmeta_raw(name), f"{self._frame.name}: vlmeta {name!r}")
            for name, _ in self._frame.vlmeta
        }

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    # --- chunk access --------------------------------------------------------------------

    def _chunk(self, n: int) -> tuple[Any, ChunkHeader] | None:
        """The stored chunk ``n`` and its checked header; None for a zeros or uninitialized
        index marker (nothing stored; a NaN marker gives the chunk C-Blosc2 synthesizes)."""
        entry = self._frame.entry(n)
        if entry < 0 and MARKER_KINDS.get((entry >> 56) & 0xFF) in (Special.ZEROS, Special.UNINIT):
            return None
        chunk = self._frame.chunk_at(n, entry)
        header = validate_chunk(chunk)
        if header.nbytes != self.grid.chunk_nbytes:
            raise FormatError(
                f"{self._frame.name}: chunk {n} holds {header.nbytes} bytes, the b2nd geometry"
                f" needs {self.grid.chunk_nbytes}"
            )
        return chunk, header

    def _fill_zeros(self, region: np.ndarray) -> None:
        """Zero bytes in every item of ``region`` (what a zeros or uninitialized chunk reads as)."""
        np.copyto(region, np.zeros((), dtype=self.dtype))

    def _new_out(self, shape: tuple[int, ...], out: np.ndarray | None) -> np.ndarray:
        if out is None:
            try:
                return np.empty(shape, dtype=self.dtype)
            except (MemoryError, ValueError) as exc:
                raise UnsupportedError(
                    f"{self._frame.name}: cannot allocate an array of shape {shape} and dtype"
                    f" {self.dtype} ({exc})"
                ) from None
        if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != self.dtype:
            raise ArgumentError(
                f"out must be a numpy array of shape {shape} and dtype {self.dtype}, got"
                f" {getattr(out, 'shape', None)} {getattr(out, 'dtype', type(out).__name__)}"
            )
        if not out.flags.writeable:
            raise ArgumentError("out is read-only")
        return out

    def read(self, out: np.ndarray | None = None, *, nthreads: int = 1) -> np.ndarray:
        """The whole array, in a new array or in ``out`` (same shape and dtype, writable).
        ``nthreads`` chunks are decompressed at a time (each with
        :func:`bloscpack.engine.get_nthreads` C threads)."""
        grid = self.grid
        out = self._new_out(self.shape, out)
        if grid.nchunks == 0:
            return out
        flat = out.reshape(-1).view(np.uint8) if out.flags.c_contiguous else None
        scratch = self._scratch

        def read_chunk(n: int) -> None:
            coords = grid.chunk_coords(n)
            stored = self._chunk(n)
            if flat is not None and grid.chunk_is_array_bytes(coords):
                start = grid.byte_offset(coords)
                target = flat[start : start + grid.chunk_nbytes]
                if stored is None:  # zeros or uninitialized: no bytes stored
                    target[:] = 0
                else:
                    engine.decompress_into(stored[0], target, validated=True)
            elif stored is None:
                self._fill_zeros(out[grid.chunk_region(coords)])
            else:
                with scratch.take() as buf:
                    engine.decompress_into(stored[0], buf, validated=True)
                    chunk_to_array(buf, grid, coords, out)

        for _ in _run_in_order(read_chunk, grid.nchunks, nthreads):
            pass
        return out

    def read_selection(
        self, selection: Any, out: np.ndarray | None = None, *, nthreads: int = 1
    ) -> np.ndarray:
        """``array[selection]`` for a basic index (integers, slices with positive steps, one
        ``...``), reading only the chunks it touches, and in each only the blocks it touches;
        ``nthreads`` as for :meth:`read`.  Safe to call from several threads at once."""
        if self.ndim == 0:
            if selection not in ((), Ellipsis):
                raise IndexError("a 0-d array takes only () or ... as index")
            return self.read(out)
        slices, dropped = normalize_index(selection, self.shape)
        box = tuple(len(range(s.start, s.stop, s.step)) for s in slices)
        shape = tuple(n for axis, n in enumerate(box) if axis not in dropped)
        out = self._new_out(shape, out)
        if math.prod(shape) == 0:
            return out
        target = out.view()
        target.shape = box  # the dropped axes come back with length 1 (a view, never a copy)
        grid = self.grid
        projections = list(project_selection(grid, slices))

        def read_part(i: int) -> None:
            proj = projections[i]
            stored = self._chunk(proj.nchunk)
            if stored is None:
                self._fill_zeros(target[proj.out_index])
                return
            with self._scratch.take() as buf:
                self._decode_blocks(*stored, proj.block_runs, buf.view(np.uint8))
                target[proj.out_index] = gather(buf, grid, proj.chunk_index)

        for _ in _run_in_order(read_part, len(projections), nthreads):
            pass
        return out

    def _decode_blocks(
        self, chunk: Any, header: ChunkHeader, runs: Sequence[tuple[int, int]], dest: np.ndarray
    ) -> None:
        """Decode the block runs ``(first, count)`` of ``chunk`` into their places in ``dest``
        (the whole chunk when the runs cover most of it)."""
        grid = self.grid
        nblocks = math.prod(grid.bgrid)
        wanted = sum(count for _, count in runs)
        unit = header.real_typesize or 1
        if wanted * 2 >= nblocks or grid.block_nbytes % unit or header.special != Special.NONE:
            engine.decompress_into(chunk, dest, validated=True)
            return
        for first, count in runs:
            start = first * grid.block_nbytes
            stop = min(start + count * grid.block_nbytes, grid.chunk_nbytes)
            engine.getitem_into(
                chunk, start // unit, (stop - start) // unit, dest[start:stop], validated=True
            )

    def __getitem__(self, selection: Any) -> np.ndarray:
        return self.read_selection(selection)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        data = self.read()
        return data if dtype is None else data.astype(dtype, copy=False)

    def iter_chunk_coords(self) -> Iterator[tuple[int, ...]]:
        """Grid coordinates of the chunks, in frame order (``grid.chunk_region(coords)`` is
        the part of the array each holds)."""
        for n in range(self.grid.nchunks):
            yield self.grid.chunk_coords(n)

    def close(self) -> None:
        if self._owned:
            self._frame.close()

    def __enter__(self) -> B2ndArray:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"<B2ndArray {self._frame.name} shape={self.shape} dtype={self.dtype}"
            f" chunks={self.chunks} blocks={self.blocks}>"
        )


class B2ndReader(ReaderBase):
    """A b2nd array through the container protocol: ``grid`` and ``array`` (the
    :class:`B2ndArray`) for N-d reads; its chunks, in frame order, hold the padded chunk
    boxes (blocks in C order, items in C order inside a block)."""

    format = "b2nd"

    def __init__(self, source: Any) -> None:
        self.array = array = B2ndArray(source, owns_frame=True)
        self.core = array.frame
        self.grid = grid = array.grid
        self.name = self.core.name
        self.nchunks = grid.nchunks
        self.sizes = ChunkSizes.uniform(grid.chunk_nbytes, grid.nchunks * grid.chunk_nbytes)
        self.description = ArrayDescription(array.dtype, array.shape, "C", array.chunks,
                                            array.blocks)  # fmt: skip

    def stored_chunk(self, index: int) -> memoryview | bytes:
        return self.core.read_chunk(index)

    def stored_chunk_items(self, index: int, lo: int, hi: int) -> memoryview | bytes:
        return self.core.read_chunk_items(index, lo, hi)

    def metadata(self) -> dict[str, Any]:
        """The variable-length metalayers."""
        return self.array.vlmeta

    def stored_metadata(self) -> StoredMetadata:
        items = vlmeta_items(self.core)
        return StoredMetadata(
            {name: value for name, (_, value) in items.items()}, "vlmetalayer",
            packed={name: packed for name, (packed, _) in items.items()},
            metalayers=[(n, c) for n, c in self.core.metalayers if n != METALAYER_NAME],
            typesize=self.core.header.typesize,
        )  # fmt: skip

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        return self.core.consistent()

    def close(self) -> None:
        self.array.close()


def own_options(params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
    """The common options as the b2nd writer's: ``chunks`` (rows alone: whole rows),
    ``filters`` as filter ids."""

    def box(chunks: tuple[int, ...]) -> tuple[int, ...]:
        return (chunks[0], *shape[1:]) if len(chunks) == 1 and len(shape) > 1 else chunks

    return params.own(rest, chunks=("chunks", box), filters=("filters", list))


def open_reader(source: Any) -> B2ndReader:
    """The b2nd array in ``source`` (a path, bytes, a :class:`~bloscpack.io.ByteSource` or an
    open frame, which the reader then owns) as a
    :class:`~bloscpack.containers.base.ContainerReader`."""
    return B2ndReader(source)


def load_b2nd(path: Source, out: np.ndarray | None = None, *, nthreads: int = 1) -> np.ndarray:
    """Read the NDArray at ``path`` (``.b2nd`` file, sparse directory, or frame bytes) into a
    new numpy array, or into ``out``; ``nthreads`` as for :meth:`B2ndArray.read`."""
    with B2ndArray(path) as array:
        return array.read(out, nthreads=nthreads)


def load(path: Source) -> np.ndarray:
    """The NDArray at ``path`` (what :func:`bloscpack.load` gives)."""
    return load_b2nd(path)


def read_b2nd_selection(path: Source, selection: Any, out: np.ndarray | None = None) -> np.ndarray:
    """``array[selection]`` (integers, slices with positive steps, ``...``) of the NDArray at
    ``path``, reading only the chunks and blocks it needs."""
    with B2ndArray(path) as array:
        return array.read_selection(selection, out)


# --- writing ------------------------------------------------------------------------------


def b2nd_cparams(
    dtype: np.dtype, grid: ChunkGrid, codec: str | int, clevel: int, filters: Sequence[int] | None,
    filters_meta: Sequence[int] | None, splitmode: str,
) -> CParams:  # fmt: skip
    """Compression parameters of a b2nd frame: python-blosc2's default filters (and unicode
    filter meta) unless given, typesize = item size, blocksize = one N-d block."""
    if filters is None:
        filters = DEFAULT_FILTERS
        if filters_meta is None and dtype.kind == "U":
            filters_meta = UNICODE_FILTERS_META
    return CParams.make(
        typesize=dtype.itemsize, codec=codec, clevel=clevel, filters=list(filters),
        filters_meta=list(filters_meta or [0] * len(filters)), splitmode=splitmode,
        blocksize=grid.block_nbytes,
    )  # fmt: skip


def _compressed_chunks(
    array: np.ndarray, grid: ChunkGrid, params: CParams, workers: int | None
) -> Iterator[bytearray]:
    """The compressed chunks of ``array`` in frame order: straight from the array's memory
    when a chunk is exactly its bytes there, else through a padded scratch buffer.  With
    ``workers=None``, :func:`bloscpack.engine.get_nthreads` chunks are compressed at a time
    with one C thread each (faster than all C threads on one chunk, and deterministic)."""
    c_threads = None
    if workers is None:
        workers = engine.get_nthreads() if grid.nchunks > 1 else 1
        c_threads = 1 if workers > 1 else None
    flat = array.reshape(-1).view(np.uint8) if array.flags.c_contiguous and array.ndim else None
    scratch = _ScratchPool(grid.chunk_nbytes // array.dtype.itemsize, array.dtype)
    split = _SPLIT_NAMES[params.splitmode]

    def compress(source: Any) -> bytearray:
        return engine.compress_blosc2(
            source, typesize=params.typesize, clevel=params.clevel, codec=params.codec,
            filters=params.filters, filters_meta=params.filters_meta, splitmode=split,
            blocksize=grid.block_nbytes, nthreads=c_threads,
        )  # fmt: skip

    def compress_chunk(n: int) -> bytearray:
        coords = grid.chunk_coords(n)
        if flat is not None and grid.chunk_is_array_bytes(coords):
            start = grid.byte_offset(coords)
            return compress(flat[start : start + grid.chunk_nbytes])
        with scratch.take() as buf:
            array_to_chunk(array, grid, coords, buf)
            return compress(buf.view(np.uint8))

    return _run_in_order(compress_chunk, grid.nchunks, workers)


def _append_all(append: Callable[[Any], Any], chunks: Iterator[Any]) -> None:
    """``append(chunk)`` for every chunk, in order, in a writer thread: compression goes on
    while a chunk is being written (at most two chunks wait)."""
    with ThreadPoolExecutor(1) as io:
        pending: deque[Future[Any]] = deque()
        for chunk in chunks:
            pending.append(io.submit(append, chunk))
            if len(pending) > 2:
                pending.popleft().result()
        while pending:
            pending.popleft().result()


_SPLIT_NAMES = {1: "always", 2: "never", 3: "auto", 4: "forward_compat"}


def save_b2nd(
    array: Any,
    path: PathLike,
    *,
    chunks: Sequence[int] | None = None,
    blocks: Sequence[int] | None = None,
    codec: str | int = "zstd",
    clevel: int = 5,
    filters: Sequence[int] | None = None,
    filters_meta: Sequence[int] | None = None,
    splitmode: str = "auto",
    nthreads: int | None = None,
    sparse: bool = False,
    meta: Mapping[str, Any] | None = None,
    vlmeta: Mapping[str, Any] | None = None,
) -> None:
    """Save ``array`` as a python-blosc2 NDArray: a ``.b2nd`` file, or with ``sparse=True`` a
    sparse frame directory.  Chunk and block shapes default to python-blosc2's choice;
    ``filters`` (up to 6 filter ids, slot order) default to shuffle; ``nthreads`` chunks are
    compressed at a time (each with :func:`bloscpack.engine.get_nthreads` C threads; by
    default as many chunks as C threads, one C thread each) while another thread writes
    them; ``meta`` adds msgpack
    metalayers after ``b2nd``; ``vlmeta`` adds variable-length metalayers.  The output appears
    atomically: a failed save leaves nothing behind."""
    array = np.asarray(array)
    dtype = array.dtype
    dtype_to_string(dtype)  # refuses dtypes holding Python objects
    if chunks is not None:
        chunks = tuple(int(c) for c in chunks)
    if blocks is not None:
        blocks = tuple(int(b) for b in blocks)
    chunks, blocks = default_chunks_blocks(array.shape, dtype.itemsize, chunks, blocks)
    layer = B2ndMeta.from_array_params(array.shape, chunks, blocks, dtype)
    grid = ChunkGrid(layer.shape, layer.chunks, layer.blocks, dtype.itemsize)
    params = b2nd_cparams(dtype, grid, codec, clevel, filters, filters_meta, splitmode)
    metalayers = [(METALAYER_NAME, layer.pack())]
    metalayers += [(name, pack_value(value)) for name, value in (meta or {}).items()]
    vl = [(name, pack_value(value)) for name, value in (vlmeta or {}).items()]
    threads = engine.get_nthreads()  # recorded in the header, as python-blosc2 does
    target = os.fspath(path)
    replacing_dir = os.path.isdir(target) and not os.path.islink(target)
    if replacing_dir and os.listdir(target) and not sniff_dir(target):
        raise OutputExistsError(
            f"{target!r} is a directory that is not a sparse frame; not replaced"
        )
    with staged_output(target) as build:
        writer_class = SparseFrameWriter if sparse else FrameWriter
        with writer_class(build, params, chunksize=grid.chunk_nbytes, metalayers=metalayers,
                          vlmeta=vl, nthreads=threads) as writer:  # fmt: skip
            _append_all(writer.append_chunk, _compressed_chunks(array, grid, params, nthreads))


# --- integration: info and verify ---------------------------------------------------------


def info(path: Source) -> dict[str, Any]:
    """JSON-able description: the frame's header, metalayers, vlmetalayers and index, plus the
    array (shape, chunks, blocks, dtype, dtype string, chunk grid)."""
    with B2ndArray(path) as array:
        result = array.frame.info()
        grid = array.grid
        result["b2nd"] = {
            "shape": list(array.shape), "chunks": list(array.chunks), "blocks": list(array.blocks),
            "dtype": str(array.dtype), "dtype_string": array.b2nd.dtype_string,
            "itemsize": array.dtype.itemsize, "grid": list(grid.grid),
            "chunk_nbytes": grid.chunk_nbytes, "block_nbytes": grid.block_nbytes,
            "sparse": array.frame.sparse,
        }  # fmt: skip
        return result


def verify(path: Source) -> dict[str, Any]:
    """Check the metalayer against the frame and decode every chunk; returns
    ``{"format": "b2nd", "ok", "nchunks", "bad_chunks": [{"index", "error"}], "problems"}``."""
    try:
        array = B2ndArray(path)
    except (BloscpackError, OSError) as exc:
        return unopened_report("b2nd", exc)
    with array:
        if isinstance(array.frame, SparseFrame):  # also checks the chunk files against cbytes
            report = sframe_verify(array.frame.path)
            del report["format"]
        else:
            report = array.frame.verify()
        last = array.grid.nchunks - 1
        if last >= 0 and not any(bad["index"] == last for bad in report["bad_chunks"]):
            try:
                array._chunk(last)  # the frame allows a short last chunk, an NDArray does not
            except BloscpackError as exc:
                report["bad_chunks"].append({"index": last, "error": str(exc)})
                report["ok"] = False
        return {"format": "b2nd", **report}


class B2ndTarget(Target):
    """A python-blosc2 NDArray (``sparse=True``: a sparse frame directory)."""

    fmt = "b2nd"
    OPTIONS = {
        "chunks": None, "blocks": None, "codec": "zstd", "clevel": 5, "filters": None,
        "filters_meta": None, "splitmode": "auto", "nthreads": None, "sparse": False,
    }  # fmt: skip

    def __init__(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> None:
        super().__init__(source, copy_chunks)
        opts = take_options(options, self.OPTIONS, self.fmt)
        spec = source.spec
        if spec.order == "F":
            self.dropped.append("Fortran order: b2nd arrays are C-ordered (values are kept)")
        self.sparse = bool(opts["sparse"])
        self.nthreads = engine.get_nthreads() if opts["nthreads"] is None else int(opts["nthreads"])
        B2ndMeta.from_array_params(spec.shape, spec.shape, spec.shape, spec.dtype)
        self.same_geometry = False
        chunks, blocks = opts["chunks"], opts["blocks"]
        if chunks is None and blocks is None:
            chunks, blocks = self._copy_geometry()
        chunks = None if chunks is None else tuple(int(c) for c in chunks)
        blocks = None if blocks is None else tuple(int(b) for b in blocks)
        chunks, blocks = default_chunks_blocks(spec.shape, spec.dtype.itemsize, chunks, blocks)
        self.meta = B2ndMeta.from_array_params(spec.shape, chunks, blocks, spec.dtype)
        self.grid = ChunkGrid(spec.shape, self.meta.chunks, self.meta.blocks, spec.dtype.itemsize)
        if getattr(source, "grid", None) is not None:
            self.same_geometry = source.grid == self.grid
        try:
            self.cparams = b2nd_cparams(
                spec.dtype, self.grid, opts["codec"], opts["clevel"], opts["filters"],
                opts["filters_meta"], opts["splitmode"],
            )  # fmt: skip
        except (TypeError, ValueError) as exc:
            if isinstance(exc, BloscpackError):
                raise
            raise ArgumentError(str(exc)) from None
        self.layers = [(METALAYER_NAME, self.meta.pack())]
        self.layers += kept_metalayers(source, self.dropped, MAX_METALAYERS - 1, True)
        self.vlmeta = packed_user(source, self.dropped, MAX_VLMETALAYERS_WRITE)

    def _copy_geometry(self) -> tuple[Any, Any]:
        """The geometry under which the source's chunks can be copied (else (None, None))."""
        source = self.source
        if not self.copy_chunks:
            return None, None
        if getattr(source, "grid", None) is not None:
            return source.grid.chunks, source.grid.blocks
        span, header = source.uniform_span(), source.first_chunk_header()
        rb = source.row_nbytes
        if (span is None or header is None or source.spec.order != "C" or not source.spec.shape
                or not rb or not header.extended or header.vl_blocks or header.special
                or span % rb or header.blocksize % rb or span % header.blocksize):  # fmt: skip
            return None, None
        rest = source.spec.shape[1:]
        return (span // rb, *rest), (header.blocksize // rb, *rest)

    def accepts_format(self, header: ChunkHeader) -> bool:
        if not header.extended or header.lazy or header.vl_blocks:
            return False
        if not marker_fits(header, self.cparams.typesize):
            return False
        return header.special != Special.NONE or header.blocksize == self.grid.block_nbytes

    def write(self, path: str) -> None:
        grid = self.grid
        target = SparseFrameTarget if self.sparse else FrameTarget
        with target.writer(path, self.cparams, grid.chunk_nbytes, self.layers, self.vlmeta,
                           self.nthreads) as append:  # fmt: skip
            if grid.nchunks == 0:
                return
            if self.same_geometry:
                self._write_same_geometry(append)
            elif row_flat(grid):
                self._write_row_chunks(append)
            else:
                self._write_slabs(append)

    def _write_same_geometry(self, append: Any) -> None:
        source = self.source
        scratch = bytearray(self.grid.chunk_nbytes)
        total, nchunks = source.nbytes, self.grid.nchunks
        for n in range(nchunks):
            chunk = source.stored_chunk(n)
            header = validate_chunk(chunk)
            if self.copy_chunks and self.accepts_format(header):
                append(chunk)
                self.copied += 1
            else:
                engine.decompress_into(chunk, scratch, validated=True)
                append(self.cparams.compress(scratch))
                self.recompressed += 1
            self.progress(total * (n + 1) // nchunks - total * n // nchunks)

    def _write_row_chunks(self, append: Any) -> None:
        """Chunks of whole rows: each is a flat byte range of the array, padded at the end."""
        grid, source = self.grid, self.source
        rb, c0 = source.row_nbytes, grid.chunks[0]
        spans = [(i * c0 * rb, min(c0, source.nrows - i * c0) * rb) for i in range(grid.nchunks)]
        padded = bytearray(grid.chunk_nbytes)

        def put_data(data: memoryview) -> None:
            if len(data) == grid.chunk_nbytes:
                append(self.cparams.compress(data))
                return
            padded[: len(data)] = data
            padded[len(data) :] = bytes(grid.chunk_nbytes - len(data))
            append(self.cparams.compress(padded))

        self._write_spans(spans, True, append, put_data, lambda n: grid.chunk_nbytes)

    def _write_slabs(self, append: Any) -> None:
        """Any chunk geometry: rows are read one chunk deep and cut into chunks."""
        grid, source = self.grid, self.source
        itemsize = source.spec.dtype.itemsize
        scratch = np.empty(grid.chunk_nbytes // itemsize, dtype=source.spec.dtype)
        if grid.ndim == 0:
            data = source.read_rows(0, 1)
            array_to_chunk(data, grid, (), scratch)
            append(self.cparams.compress(scratch.view(np.uint8)))
            self.recompressed += 1
            return
        c0 = grid.chunks[0]
        for r0 in range(0, source.nrows, c0):
            slab = source.read_rows(r0, min(r0 + c0, source.nrows))
            slab_grid = ChunkGrid(slab.shape, grid.chunks, grid.blocks, itemsize)
            for n in range(slab_grid.nchunks):
                array_to_chunk(slab, slab_grid, slab_grid.chunk_coords(n), scratch)
                append(self.cparams.compress(scratch.view(np.uint8)))
                self.recompressed += 1
            self.progress(slab.nbytes)


ConversionTarget = B2ndTarget


__all__ = [
    "B2ndArray", "B2ndReader", "B2ndTarget", "ConversionTarget", "info", "load", "load_b2nd",
    "open_frame", "open_reader", "own_options", "read_b2nd_metalayer", "read_b2nd_selection",
    "save_b2nd", "sniff_b2nd", "verify",
]  # fmt: skip
