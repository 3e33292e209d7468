"""Writing python-blosc2 NDArrays: :func:`save_b2nd` (a numpy array), :func:`open_writer` (an
array's :class:`~bloscpack.containers.base.ContainerWriter`) and :class:`B2ndTarget` (another
container's data, for :func:`bloscpack.convert`), as ``.b2nd`` files or sparse frame
directories."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import engine
from ...blosc.header import ChunkHeader, Filter, Special
from ...blosc.layout import validate_chunk
from ...errors import ArgumentError, BloscpackError
from ...io.paths import PathLike
from ...io.staging import StagedOutput, staged_output
from ..base import ArrayDescription
from ..grid import ChunkGrid, array_to_chunk, box_to_chunk
from ..options import CompressionParams, rows_of
from ..schunk.params import CParams
from ..schunk.records import MAX_METALAYERS, MAX_VLMETALAYERS_WRITE, pack_value
from ..schunk.sparse import SPARSE_FRAME, SparseFrameTarget, SparseFrameWriter, sniff_dir
from ..schunk.writer import (
    FrameArrayWriter,
    FrameTarget,
    FrameWriter,
    frame_stored,
    packed_user,
    user_vlmeta,
)
from ..target import Target, kept_metalayers, marker_fits, row_flat, take_options
from .jobs import ScratchPool, run_in_order
from .layout import box_chunks_blocks
from .meta import METALAYER_NAME, B2ndMeta, dtype_to_string

DEFAULT_FILTERS = (0, 0, 0, 0, 0, int(Filter.SHUFFLE))
# python-blosc2 shuffles fixed-width unicode by its 4-byte characters
UNICODE_FILTERS_META = (0, 0, 0, 0, 0, 4)


def refused(dtype: np.dtype, shape: tuple[int, ...]) -> str | None:
    """Why a b2nd array cannot hold an array of ``dtype`` and ``shape``, or None."""
    if dtype.itemsize == 0:
        return f"dtype {dtype} has items of 0 bytes, which a b2nd array cannot hold"
    return None


def own_options(params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
    """The common options as the b2nd writer's: ``chunks`` (rows alone: whole rows),
    ``filters`` as filter ids."""

    def box(chunks: tuple[int, ...]) -> tuple[int, ...]:
        return (chunks[0], *shape[1:]) if len(chunks) == 1 and len(shape) > 1 else chunks

    def rows(nbytes: Any) -> tuple[int, ...]:
        return (min(rows_of(nbytes, dtype, shape), max(shape[0], 1)), *shape[1:])

    return params.own(rest, chunks=("chunks", box), chunk_size=("chunks", rows),
                      blocks=("blocks", box),
                      filters=("filters", list))  # fmt: skip


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


@dataclass(frozen=True)
class B2ndLayout:
    """An NDArray's chunks: the boxes of ``grid``, padded to whole blocks (in block order),
    compressed with ``params``."""

    grid: ChunkGrid
    params: CParams
    dtype: np.dtype
    flat = False

    @property
    def nchunks(self) -> int:
        return self.grid.nchunks

    @property
    def chunks(self) -> tuple[int, ...]:
        return tuple(self.grid.chunks)

    def compress_chunk(self, index: int, data: np.ndarray) -> bytearray:
        """Chunk ``index`` of its box ``data``, with one C thread (as :func:`save_b2nd` when
        it compresses several chunks at a time); a whole C-contiguous box whose blocks are
        in C order is the chunk's bytes already."""
        box = np.asarray(data)
        if (self.grid.blocks_in_order and box.shape == self.grid.ext_chunk
                and box.flags.c_contiguous):  # fmt: skip
            return self.params.compress(box.reshape(-1).view(np.uint8), nthreads=1)
        chunk = np.empty(self.grid.chunk_nbytes // max(self.dtype.itemsize, 1), self.dtype)
        box_to_chunk(box, self.grid, self.grid.chunk_coords(index), chunk)
        return self.params.compress(chunk.view(np.uint8), nthreads=1)

    def stored(self, chunk: Any) -> tuple[list[Any], bytes]:
        """:func:`~bloscpack.containers.schunk.writer.frame_stored`."""
        return frame_stored(chunk)


def new_layout(
    shape: tuple[int, ...], dtype: np.dtype, chunks: Sequence[int] | None,
    blocks: Sequence[int] | None, codec: str | int, clevel: int, filters: Sequence[int] | None,
    filters_meta: Sequence[int] | None, splitmode: str, meta: Mapping[str, Any] | None,
) -> tuple[B2ndLayout, list[tuple[str, bytes]]]:  # fmt: skip
    """The layout and metalayers of a new NDArray of ``shape`` and ``dtype``: chunk and block
    shapes default to :func:`.layout.box_chunks_blocks`, ``meta`` adds msgpack metalayers after
    ``b2nd``."""
    dtype_to_string(dtype)  # refuses dtypes holding Python objects
    if chunks is not None:
        chunks = tuple(int(c) for c in chunks)
    if blocks is not None:
        blocks = tuple(int(b) for b in blocks)
    chunks, blocks = box_chunks_blocks(shape, dtype.itemsize, chunks, blocks)
    layer = B2ndMeta.from_array_params(shape, chunks, blocks, dtype)
    grid = ChunkGrid(layer.shape, layer.chunks, layer.blocks, dtype.itemsize)
    params = b2nd_cparams(dtype, grid, codec, clevel, filters, filters_meta, splitmode)
    metalayers = [(METALAYER_NAME, layer.pack())]
    metalayers += [(name, pack_value(value)) for name, value in (meta or {}).items()]
    return B2ndLayout(grid, params, dtype), metalayers


def open_writer(
    output: StagedOutput, description: ArrayDescription, *, chunks: Sequence[int] | None = None,
    blocks: Sequence[int] | None = None, codec: str | int = "zstd", clevel: int = 5,
    filters: Sequence[int] | None = None, filters_meta: Sequence[int] | None = None,
    splitmode: str = "auto", meta: Mapping[str, Any] | None = None,
    vlmeta: Mapping[str, Any] | None = None, metadata: Mapping[str, Any] | None = None,
) -> FrameArrayWriter:  # fmt: skip
    """A :class:`~bloscpack.containers.base.ContainerWriter` of a new ``.b2nd`` file of the
    array ``description`` at ``output.path``: the bytes :func:`save_b2nd` writes (the user
    ``metadata`` as vlmetalayers, as :func:`bloscpack.save` stores it: give it or
    ``vlmeta``)."""
    if vlmeta is not None and metadata is not None:
        raise ArgumentError("metadata= is stored as the vlmetalayers: give it or vlmeta=, not"
                            " both")  # fmt: skip
    layout, metalayers = new_layout(description.shape, description.dtype, chunks, blocks, codec,
                                    clevel, filters, filters_meta, splitmode, meta)  # fmt: skip
    vl = [(name, pack_value(value)) for name, value in (vlmeta or {}).items()]
    vl += user_vlmeta(metadata, "b2nd", 0)
    frame = FrameWriter(
        output.path, layout.params, chunksize=layout.grid.chunk_nbytes, metalayers=metalayers,
        vlmeta=vl, nthreads=engine.get_nthreads(), in_place=True,
    )  # fmt: skip
    return FrameArrayWriter(output, layout, frame)


def _compressed_chunks(
    array: np.ndarray, grid: ChunkGrid, params: CParams, workers: int | None
) -> Iterator[bytearray]:
    """The compressed chunks of ``array`` in frame order: straight from the array's memory
    when a chunk is exactly its bytes there, else through a padded scratch buffer.  With
    ``workers=None``, :func:`bloscpack.engine.get_nthreads` chunks are compressed at a time
    with one C thread each (faster than all C threads on one chunk), and a lone chunk with all
    of them (unless it trains a dictionary): the bytes of :meth:`B2ndLayout.compress_chunk`
    either way (:func:`bloscpack.engine.compress_blosc2` stores blocks in order)."""
    c_threads = None
    if workers is None:
        workers = engine.get_nthreads() if grid.nchunks > 1 else 1
        c_threads = 1 if grid.nchunks > 1 or params.use_dict else None
    flat = array.reshape(-1).view(np.uint8) if array.flags.c_contiguous and array.ndim else None
    scratch = ScratchPool(grid.chunk_nbytes // array.dtype.itemsize, array.dtype)

    def compress(source: Any) -> bytearray:
        return params.compress(source, nthreads=c_threads)

    def compress_chunk(n: int) -> bytearray:
        coords = grid.chunk_coords(n)
        if flat is not None and grid.chunk_is_array_bytes(coords):
            start = grid.byte_offset(coords)
            return compress(flat[start : start + grid.chunk_nbytes])
        with scratch.take() as buf:
            array_to_chunk(array, grid, coords, buf)
            return compress(buf.view(np.uint8))

    return run_in_order(compress_chunk, grid.nchunks, workers)


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
    sparse frame directory.  Chunk and block shapes default to :func:`.layout.box_chunks_blocks`;
    ``filters`` (up to 6 filter ids, slot order) default to shuffle; ``nthreads`` chunks are
    compressed at a time (each with :func:`bloscpack.engine.get_nthreads` C threads; by
    default as many chunks as C threads, one C thread each) while another thread writes
    them; ``meta`` adds msgpack
    metalayers after ``b2nd``; ``vlmeta`` adds variable-length metalayers.  The output appears
    atomically: a failed save leaves nothing behind."""
    array = np.asarray(array)
    layout, metalayers = new_layout(array.shape, array.dtype, chunks, blocks, codec, clevel,
                                    filters, filters_meta, splitmode, meta)  # fmt: skip
    grid, params = layout.grid, layout.params
    vl = [(name, pack_value(value)) for name, value in (vlmeta or {}).items()]
    threads = engine.get_nthreads()  # recorded in the header, as python-blosc2 does
    with staged_output(path, replaces=sniff_dir, what=SPARSE_FRAME) as build:
        writer_class = SparseFrameWriter if sparse else FrameWriter
        with writer_class(build, params, chunksize=grid.chunk_nbytes, metalayers=metalayers,
                          vlmeta=vl, nthreads=threads) as writer:  # fmt: skip
            _append_all(writer.append_chunk, _compressed_chunks(array, grid, params, nthreads))



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
        unit = tuple(min(n, 1) for n in spec.shape)  # the shape and dtype alone are checked
        B2ndMeta.from_array_params(spec.shape, unit, unit, spec.dtype)
        self.same_geometry = False
        chunks, blocks = opts["chunks"], opts["blocks"]
        if chunks is None and blocks is None:
            chunks, blocks = self._copy_geometry()
        chunks = None if chunks is None else tuple(int(c) for c in chunks)
        blocks = None if blocks is None else tuple(int(b) for b in blocks)
        chunks, blocks = box_chunks_blocks(spec.shape, spec.dtype.itemsize, chunks, blocks)
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


#: What :func:`bloscpack.save` writes a new b2nd output with.
save = save_b2nd
ConversionTarget = B2ndTarget
