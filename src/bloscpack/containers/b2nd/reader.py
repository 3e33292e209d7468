"""Reading python-blosc2 NDArrays: recognising an NDArray frame (:func:`sniff_b2nd`,
:func:`open_frame`), :class:`B2ndArray` (whole reads and selections), :class:`B2ndReader` (the
container protocol), and the module-level reads, :func:`info` and :func:`verify`.

Reading decompresses each chunk straight into the destination array when the chunk is exactly
its bytes there, otherwise into a reused scratch buffer whose block-wise view is then copied.
Selections read only the chunks they touch, and in each only the blocks they touch.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ... import engine
from ...blosc.header import ChunkHeader, Special
from ...blosc.layout import ChunkKind, validate_block_runs, validate_chunk
from ...errors import (
    ArgumentError,
    BloscpackError,
    FormatError,
    NotAContainer,
    UnmodelledFeature,
    UnsupportedError,
)
from ...io.paths import PathLike
from ...io.sources import ByteSource, Directory
from ...ndarray import check_text
from ..base import ArrayDescription, ChunkSizes, Compression, GridReader, StoredMetadata
from ..grid import ChunkGrid, chunk_to_array, gather_into, normalize_index, project_selection
from ..schunk.contiguous import ContiguousFrame
from ..schunk.core import EDGE_READ, opening_ranges
from ..schunk.edit import FrameBase
from ..schunk.features import refuse_unmodelled
from ..schunk.reader import CoreChunks, frame_compression, unopened_report, vlmeta_items
from ..schunk.records import (
    HEADER_FIXED_LEN,
    MARKER_KINDS,
    MAX_METALAYERS,
    FrameHeader,
    parse_layers,
    sniff,
    unpack_value,
)
from ..schunk.sparse import INDEX_FILE, SparseFrame, sniff_index_file
from ..schunk.sparse import verify as sframe_verify
from .jobs import ScratchPool, run_in_order
from .meta import METALAYER_NAME, B2ndMeta

Source = PathLike | bytes | bytearray | memoryview


# --- recognising an NDArray frame ---------------------------------------------------------


def _frame_core(frame: Any) -> ContiguousFrame | SparseFrame:
    """The frame object behind ``frame`` (a :class:`bloscpack.Frame` or a frame reader)."""
    core = getattr(frame, "core", frame)
    if not isinstance(core, (ContiguousFrame, SparseFrame)):
        raise ArgumentError(f"expected a Blosc2 frame, got {type(frame).__name__}")
    return core


def _head_metalayers(path: str) -> list[str]:
    """Names of the metalayers of the frame file ``path``, reading only its header."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        head = os.pread(fd, EDGE_READ, 0)  # the header, as opening the frame reads it
        if not sniff(head[:HEADER_FIXED_LEN]):
            return []
        header = FrameHeader.parse(head, path)
        if header.header_len > len(head) == EDGE_READ:  # (no more than the file holds)
            end = min(header.header_len, os.fstat(fd).st_size)
            head += os.pread(fd, max(end - len(head), 0), len(head))
    finally:
        os.close(fd)
    layers = parse_layers(
        head[: header.header_len], HEADER_FIXED_LEN, 0, MAX_METALAYERS, f"{path}: metalayers"
    )
    return [name for name, _, _ in layers]


def sniff_b2nd(frame: Any) -> bool:
    """True if ``frame`` (a path to a frame file or sparse directory, frame bytes, a
    :class:`~bloscpack.io.sources.ByteSource` or an open frame) is a python-blosc2 NDArray: a Blosc2
    frame with a ``b2nd`` metalayer.  Reads only the header of a file; a damaged header gives
    False."""
    try:
        if isinstance(frame, Directory):  # a sparse frame at a URL
            frame = frame.read_bytes(INDEX_FILE, keep=True)
        if isinstance(frame, (ByteSource, bytes, bytearray, memoryview)):
            source = frame if isinstance(frame, ByteSource) else ByteSource(frame)
            head = source.read_upto(0, EDGE_READ)
            if not sniff(bytes(head[:10])):
                return False
            header = FrameHeader.parse(head)
            if header.header_len > len(head):
                # a remote frame: the rest of the header in the round its opening needs anyway
                source.prefetch(opening_ranges(header))
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


def open_frame(source: Source | ByteSource | Directory) -> ContiguousFrame | SparseFrame:
    """Open a contiguous frame (file, bytes or a :class:`~bloscpack.io.sources.ByteSource`, which
    the frame then owns) or a sparse frame directory for reading."""
    if isinstance(source, (bytes, bytearray, memoryview, ByteSource)):
        return ContiguousFrame(source)
    if isinstance(source, Directory):
        return SparseFrame(source)
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


#: The bits of every block: a chunk checked whole.
ALL_BLOCKS = -1


def _block_bits(runs: Sequence[tuple[int, int]]) -> int:
    """Block runs ``(first, count)`` as bits (bit ``i``: block ``i``)."""
    bits = 0
    for first, count in runs:
        bits |= ((1 << count) - 1) << first
    return bits


class _Named:
    """:meth:`B2ndArray._named`: a :class:`BloscpackError` leaving the block names the frame
    and the chunk."""

    __slots__ = ("name", "n")

    def __init__(self, name: str, n: int) -> None:
        self.name, self.n = name, n

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, traceback: Any) -> None:
        if isinstance(exc, BloscpackError):
            message, n = str(exc), self.n
            if not message.startswith(f"chunk {n} "):
                message = f"chunk {n}: {message}"
            raise type(exc)(f"{self.name}: {message}") from None


class B2ndArray:
    """An NDArray frame open for reading: ``shape``, ``dtype``, ``chunks``, ``blocks``,
    :meth:`read` (the whole array) and :meth:`read_selection` / ``[...]`` (a box of slices,
    reading only the chunks and blocks it touches).

    ``source`` is a path (``.b2nd`` file, sparse directory or its ``chunks.b2frame``), frame
    bytes, a :class:`~bloscpack.io.sources.ByteSource` (closed with the array), or an open frame
    (closed with the array when ``owns_frame`` is set).  The frame is checked against the metalayer
    on open: chunk count, chunk size and total size must agree with shape, chunks, blocks and
    itemsize.
    """

    def __init__(self, source: Any, *, owns_frame: bool = False) -> None:
        if isinstance(source, (ContiguousFrame, SparseFrame)):
            self._frame = source
            self._owned = owns_frame
        elif isinstance(source, (str, os.PathLike, bytes, bytearray, memoryview, ByteSource,
                                 Directory)):  # fmt: skip
            self._frame = open_frame(source)
            self._owned = True
        else:
            self._frame = _frame_core(source)
            self._owned = owns_frame
        try:
            try:
                refuse_unmodelled(self._frame)
            except UnmodelledFeature as exc:
                with contextlib.suppress(BloscpackError):
                    meta = _parse_metalayer(self._frame)
                    exc.array = (meta.dtype, meta.shape)
                raise
            self.b2nd = _parse_metalayer(self._frame)
            self.grid = _grid(
                self.b2nd.shape, self.b2nd.chunks, self.b2nd.blocks, self.b2nd.dtype.itemsize
            )
            self._check_frame()
        except BaseException:
            self.close()
            raise
        self._scratch = ScratchPool(self.grid.chunk_nbytes // self.dtype.itemsize, self.dtype)
        #: The chunks whose layout was checked (number: index entry, header, the blocks
        #: checked as bits), kept for a local contiguous frame open for reading, whose file
        #: cannot change unnoticed: every read checks that it has not changed since it was
        #: opened (a sparse frame's chunk files are checked again).
        self._checked: dict[int, tuple[int, ChunkHeader, int]] = {}
        frame = self._frame
        self._keeps_checks = (isinstance(frame, ContiguousFrame) and not frame.ranged
                              and not frame.writable)  # fmt: skip

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

    def _chunk(self, n: int, runs: Sequence[tuple[int, int]] | None = None
               ) -> tuple[Any, ChunkHeader] | None:  # fmt: skip
        """The stored chunk ``n`` and its header, with the layout of its block ``runs``
        ``(first, count)`` checked (None: all of it); None for a zeros or uninitialized index
        marker (nothing stored; a NaN marker gives the chunk C-Blosc2 synthesizes).  A local
        contiguous frame checks each block once (see ``_checked``)."""
        entry = self._frame.entry(n)
        if entry < 0 and MARKER_KINDS.get((entry >> 56) & 0xFF) in (Special.ZEROS, Special.UNINIT):
            return None
        chunk = self._frame.chunk_at(n, entry)
        checked = self._checked.get(n)
        if checked is None or checked[0] != entry:
            checked = (entry, self._chunk_header(n, chunk), 0)
        _, header, blocks = checked
        wanted = ALL_BLOCKS if runs is None else _block_bits(runs)
        if blocks & wanted != wanted:
            blocks = self._check_layout(n, chunk, header, runs, blocks)
            if self._keeps_checks:
                self._checked[n] = (entry, header, blocks)
        return chunk, header

    def _chunk_header(self, n: int, chunk: Any) -> ChunkHeader:
        """The header of chunk ``n``, which must claim the geometry's bytes."""
        with self._named(n):
            header = ChunkHeader.parse(chunk)  # the claim first, then the layout
            if header.nbytes != self.grid.chunk_nbytes:
                raise FormatError(
                    f"chunk {n} holds {header.nbytes} bytes, the b2nd geometry needs"
                    f" {self.grid.chunk_nbytes}"
                )
        return header

    def _check_layout(self, n: int, chunk: Any, header: ChunkHeader,
                      runs: Sequence[tuple[int, int]] | None, blocks: int) -> int:  # fmt: skip
        """Check the layout of the block ``runs`` of chunk ``n`` not in ``blocks`` (all of it
        when None, or when its blocks are not the geometry's); the blocks now checked."""
        whole = (runs is None or header.kind != ChunkKind.REGULAR
                 or header.blocksize != self.grid.block_nbytes)  # fmt: skip
        with self._named(n):
            if whole:
                validate_chunk(chunk)
                return ALL_BLOCKS
            assert runs is not None
            unchecked = [run for run in runs if ~blocks & _block_bits([run])]
            validate_block_runs(chunk, unchecked, header)
        return blocks | _block_bits(unchecked)

    def _named(self, n: int) -> _Named:
        """Errors in the block name the frame and chunk ``n``."""
        return _Named(self._frame.name, n)

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
        :func:`bloscpack.engine.get_nthreads` C threads).  Each large chunk's pages of a
        mapped file are released once it is decoded."""
        grid = self.grid
        out = self._new_out(self.shape, out)
        if grid.nchunks == 0:
            return out
        flat = out.reshape(-1).view(np.uint8) if out.flags.c_contiguous else None
        scratch = self._scratch
        self._frame.prefetch(range(grid.nchunks))

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
            if stored is not None:
                self._frame.release(n, stored[0])

        for _ in run_in_order(read_chunk, grid.nchunks, nthreads):
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
        projections = project_selection(grid, slices)
        ranged = self._frame.ranged
        if len(projections) > 1:
            self._frame.offsets  # noqa: B018  (the whole index decoded now, not an entry alone)
        self._frame.prefetch(
            [p.nchunk for p in projections if not (ranged and self._few_blocks(p.block_runs))]
        )

        def read_part(i: int, buf: np.ndarray) -> None:
            nchunk, _, chunk_index, out_index, runs = projections[i]
            stored = self._chunk_blocks(nchunk, runs, ranged)
            if stored is None:
                self._fill_zeros(target[out_index])
                return
            self._decode_blocks(*stored, runs, buf.view(np.uint8))
            gather_into(buf, grid, chunk_index, target[out_index])

        if nthreads <= 1 or len(projections) <= 1:  # one scratch buffer for every chunk
            with self._scratch.take() as buf:
                for i in range(len(projections)):
                    read_part(i, buf)
            return out

        def read_alone(i: int) -> None:
            with self._scratch.take() as buf:
                read_part(i, buf)

        for _ in run_in_order(read_alone, len(projections), nthreads):
            pass
        return out

    def _few_blocks(self, runs: Sequence[tuple[int, int]]) -> bool:
        """Whether the block ``runs`` of a frame at a URL are read alone (less than half the
        chunk's blocks) rather than with the whole chunk."""
        wanted = sum([count for _, count in runs])
        return 0 < wanted * 2 < math.prod(self.grid.bgrid)

    def _chunk_blocks(self, n: int, runs: Sequence[tuple[int, int]], ranged: bool
                      ) -> tuple[Any, ChunkHeader, bool] | None:  # fmt: skip
        """:meth:`_chunk` with ``runs`` checked (and True: validated), or for a few blocks of a
        frame at a URL (``ranged``) or of a chunk file of a local sparse frame, a buffer
        holding the chunk's header, bstarts and those blocks (and whether they were checked as
        they were read, else the decoder validates what it decodes)."""
        size = self.grid.block_nbytes
        part, checked = None, False
        if ranged:
            if self._few_blocks(runs) and self._frame.entry(n) >= 0:
                lo = min(first for first, _ in runs) * size
                hi = min(max(first + count for first, count in runs) * size,
                         self.grid.chunk_nbytes)  # fmt: skip
                part = self._frame.read_chunk_items(n, lo, hi)
        else:  # the blocks read alone are checked as they are read
            part, checked = self._frame.read_chunk_blocks(n, runs), True
        if part is not None:
            header = ChunkHeader.parse(part)
            unit = header.real_typesize or 1
            if (header.nbytes == self.grid.chunk_nbytes and header.special == Special.NONE
                    and header.blocksize == size and not size % unit):  # fmt: skip
                return part, header, checked
        stored = self._chunk(n, runs)
        return None if stored is None else (*stored, True)

    def _decode_blocks(self, chunk: Any, header: ChunkHeader, validated: bool,
                       runs: Sequence[tuple[int, int]], dest: np.ndarray) -> None:  # fmt: skip
        """Decode the block runs ``(first, count)`` of ``chunk`` into their places in ``dest``,
        in one call that skips the other blocks (``validated``: the layout of those blocks was
        checked, else the decoder checks the blocks it decodes)."""
        grid = self.grid
        if (sum([count for _, count in runs]) >= math.prod(grid.bgrid)
                or header.blocksize != grid.block_nbytes):  # fmt: skip
            engine.decompress_into(chunk, dest, validated=validated)
        else:
            engine.decompress_blocks_into(chunk, dest, runs, validated=validated, header=header)

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


class B2ndReader(CoreChunks, GridReader):
    """A b2nd array as a :class:`~bloscpack.containers.base.GridReader`: ``grid`` and
    ``array`` (the :class:`B2ndArray`) for N-d reads; its chunks, in frame order, hold the
    padded chunk boxes (blocks in C order, items in C order inside a block)."""

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

    def compression(self) -> Compression:
        return frame_compression(self.core)

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


def open_reader(source: Any) -> B2ndReader:
    """The b2nd array in ``source`` (a path, bytes, a :class:`~bloscpack.io.sources.ByteSource` or
    an open frame, which the reader then owns) as a
    :class:`~bloscpack.containers.base.ContainerReader`."""
    return B2ndReader(source)


def load_b2nd(path: Source, out: np.ndarray | None = None, *, nthreads: int = 1) -> np.ndarray:
    """Read the NDArray at ``path`` (``.b2nd`` file, sparse directory, or frame bytes) into a
    new numpy array, or into ``out``; ``nthreads`` as for :meth:`B2ndArray.read`."""
    with B2ndArray(path) as array:
        return check_text(array.read(out, nthreads=nthreads), array.frame.name)


def load(path: Source) -> np.ndarray:
    """The NDArray at ``path`` (what :func:`bloscpack.load` gives)."""
    return load_b2nd(path)


def read_b2nd_selection(path: Source, selection: Any, out: np.ndarray | None = None) -> np.ndarray:
    """``array[selection]`` (integers, slices with positive steps, ``...``) of the NDArray at
    ``path``, reading only the chunks and blocks it needs."""
    with B2ndArray(path) as array:
        return check_text(array.read_selection(selection, out), array.frame.name)


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
            report = sframe_verify(array.frame.remote or array.frame.path)
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
