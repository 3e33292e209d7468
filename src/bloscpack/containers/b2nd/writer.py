"""Writing python-blosc2 NDArrays: :func:`save_b2nd` (a numpy array), :func:`open_writer` (an
array's :class:`~bloscpack.containers.base.ContainerWriter`) and :class:`B2ndTarget` (another
container's data, for :func:`bloscpack.convert`), as ``.b2nd`` files or sparse frame
directories."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np

from ... import engine
from ...blosc.header import BLOSC2_HEADER_SIZE, ChunkHeader, Filter, Special
from ...blosc.layout import validate_chunk
from ...errors import ArgumentError, BloscpackError
from ...io.paths import PathLike
from ...io.staging import StagedOutput, staged_output
from ..base import ArrayDescription
from ..grid import ChunkGrid, array_to_chunk, box_to_chunk
from ..options import CompressionParams, rows_of
from ..schunk.params import CParams
from ..schunk.records import MAX_METALAYERS, MAX_VLMETALAYERS_WRITE, pack_value
from ..schunk.sparse import (
    SPARSE_FRAME,
    SparseArrayWriter,
    SparseFrameWriter,
    sniff_dir,
    store_chunk,
)
from ..schunk.writer import (
    FrameArrayWriter,
    FrameSettings,
    FrameWriter,
    frame_stored,
    packed_user,
    user_vlmeta,
)
from ..target import Target, kept_metalayers, marker_fits, row_flat, take_options
from .jobs import ScratchPool
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

    def compressed_chunks(self, array: np.ndarray) -> Iterator[memoryview]:
        """The compressed chunks of the whole ``array``, in order, each valid until the next
        is asked for (:func:`save_b2nd`'s)."""
        return _compressed_chunks(array, self.grid, self.params, None)

    def stored(self, chunk: Any) -> tuple[list[Any], bytes]:
        """:func:`~bloscpack.containers.schunk.writer.frame_stored`."""
        return frame_stored(chunk)


class SparseB2ndLayout(B2ndLayout):
    """An NDArray's chunks in a sparse frame: each stored in a file of its own by whoever
    compresses it."""

    def store_chunk(self, directory: str, index: int, data: np.ndarray) -> tuple[bytes, str | None]:
        """Compress chunk ``index`` into a file of ``directory``
        (:func:`~bloscpack.containers.schunk.sparse.store_chunk`)."""
        return store_chunk(directory, index, self.compress_chunk(index, data))


#: The options of a new b2nd array and their defaults (those :func:`save_b2nd` takes).
OPTIONS: dict[str, Any] = {
    "chunks": None, "blocks": None, "codec": "zstd", "clevel": 5, "filters": None,
    "filters_meta": None, "splitmode": "auto", "nthreads": None, "sparse": False, "meta": None,
    "vlmeta": None,
}  # fmt: skip


@dataclass(frozen=True)
class B2ndSettings:
    """What a new NDArray is written with, checked before anything is written: its
    ``layout`` (chunk and block shapes, compression), its ``metalayers`` (``b2nd``, then those
    of the ``meta`` option), its ``vlmeta`` (packed), whether it is a sparse frame directory
    and how many chunks are compressed at a time (None: as many as C threads)."""

    layout: B2ndLayout
    metalayers: list[tuple[str, bytes]]
    vlmeta: list[tuple[str, bytes]]
    sparse: bool = False
    nthreads: int | None = None

    @classmethod
    def parse(cls, options: Mapping[str, Any], dtype: np.dtype, shape: tuple[int, ...],
              geometry: Callable[[], tuple[Any, Any]] | None = None) -> B2ndSettings:  # fmt: skip
        """The settings ``options`` (names of :data:`OPTIONS`) ask for an array of ``dtype``
        and ``shape``: chunk and block shapes default to ``geometry()`` (where given), else to
        :func:`.layout.box_chunks_blocks`."""
        opts = take_options(dict(options), OPTIONS, "b2nd")
        dtype_to_string(dtype)  # refuses dtypes holding Python objects
        unit = tuple(min(n, 1) for n in shape)  # the shape and dtype alone are checked
        B2ndMeta.from_array_params(shape, unit, unit, dtype)
        chunks, blocks = opts["chunks"], opts["blocks"]
        if chunks is None and blocks is None and geometry is not None:
            chunks, blocks = geometry()
        chunks = None if chunks is None else tuple(int(c) for c in chunks)
        blocks = None if blocks is None else tuple(int(b) for b in blocks)
        chunks, blocks = box_chunks_blocks(shape, dtype.itemsize, chunks, blocks)
        layer = B2ndMeta.from_array_params(shape, chunks, blocks, dtype)
        grid = ChunkGrid(layer.shape, layer.chunks, layer.blocks, dtype.itemsize)
        try:
            params = b2nd_cparams(dtype, grid, opts["codec"], opts["clevel"], opts["filters"],
                                  opts["filters_meta"], opts["splitmode"])  # fmt: skip
        except (TypeError, ValueError) as exc:
            if isinstance(exc, BloscpackError):
                raise
            raise ArgumentError(str(exc)) from None
        metalayers = [(METALAYER_NAME, layer.pack())]
        metalayers += [(name, pack_value(value)) for name, value in (opts["meta"] or {}).items()]
        vlmeta = [(name, pack_value(value)) for name, value in (opts["vlmeta"] or {}).items()]
        nthreads = None if opts["nthreads"] is None else int(opts["nthreads"])
        return cls(B2ndLayout(grid, params, dtype), metalayers, vlmeta, bool(opts["sparse"]),
                   nthreads)  # fmt: skip

    def frame(self, path: PathLike, *, in_place: bool = False) -> FrameWriter | SparseFrameWriter:
        """The one writer of the new frame at ``path`` (a sparse frame directory if
        :attr:`sparse`; ``in_place``: ``path`` is a new private file), its header's
        ``nthreads`` :func:`bloscpack.engine.get_nthreads`, as python-blosc2 records it."""
        params, chunksize = self.layout.params, self.layout.grid.chunk_nbytes
        threads = engine.get_nthreads()
        if self.sparse:
            return SparseFrameWriter(path, params, chunksize=chunksize,
                                     metalayers=self.metalayers, vlmeta=self.vlmeta,
                                     nthreads=threads)  # fmt: skip
        return FrameWriter(path, params, chunksize=chunksize, metalayers=self.metalayers,
                           vlmeta=self.vlmeta, nthreads=threads, in_place=in_place)  # fmt: skip


def open_writer(output: StagedOutput, description: ArrayDescription, *,
                metadata: Mapping[str, Any] | None = None,
                **options: Any) -> FrameArrayWriter | SparseArrayWriter:  # fmt: skip
    """A :class:`~bloscpack.containers.base.ContainerWriter` of a new ``.b2nd`` file (with
    ``sparse=True``, a sparse frame directory) of the array ``description`` at
    ``output.path`` (``options``: those of :func:`save_b2nd`): the bytes :func:`save_b2nd`
    writes (the user ``metadata`` as vlmetalayers, as :func:`bloscpack.save` stores it: give
    it or ``vlmeta``)."""
    if options.get("vlmeta") is not None and metadata is not None:
        raise ArgumentError("metadata= is stored as the vlmetalayers: give it or vlmeta=, not"
                            " both")  # fmt: skip
    settings = B2ndSettings.parse(options, description.dtype, description.shape)
    if metadata is not None:
        settings = replace(settings, vlmeta=user_vlmeta(metadata, "b2nd", 0))
    if settings.sparse:
        layout = SparseB2ndLayout(**vars(settings.layout))
        frame_settings = FrameSettings(layout.params, nthreads=engine.get_nthreads())
        return SparseArrayWriter(output, layout, frame_settings, settings.vlmeta,
                                 settings.metalayers)  # fmt: skip
    frame = settings.frame(output.path, in_place=True)
    return FrameArrayWriter(output, settings.layout, cast(FrameWriter, frame))


def _compressed_chunks(array: np.ndarray, grid: ChunkGrid, params: CParams,
                       workers: int | None) -> Iterator[memoryview]:  # fmt: skip
    """The compressed chunks of ``array`` in frame order
    (:func:`~bloscpack.engine.chunk_threads` of them at a time, each view valid until the next
    is asked for:
    :func:`bloscpack.engine.compress_in_order`): straight from the array's memory when a chunk
    is exactly its bytes there, else through a padded scratch buffer; the bytes of
    :meth:`B2ndLayout.compress_chunk`."""
    workers, c_threads = engine.chunk_threads(grid.nchunks, params.use_dict, workers)
    flat = array.reshape(-1).view(np.uint8) if array.flags.c_contiguous and array.ndim else None
    scratch = ScratchPool(grid.chunk_nbytes // array.dtype.itemsize, array.dtype)

    def compress_chunk(n: int, dest: np.ndarray) -> int:
        coords = grid.chunk_coords(n)
        if flat is not None and grid.chunk_is_array_bytes(coords):
            start = grid.byte_offset(coords)
            return params.compress_into(flat[start : start + grid.chunk_nbytes], dest, c_threads)
        with scratch.take() as buf:
            array_to_chunk(array, grid, coords, buf)
            return params.compress_into(buf.view(np.uint8), dest, c_threads)

    return engine.compress_in_order(compress_chunk, range(grid.nchunks),
                                    grid.chunk_nbytes + BLOSC2_HEADER_SIZE, workers)  # fmt: skip


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
    default as many chunks as C threads, one C thread each, and a lone chunk with all of them)
    while this thread writes them; ``meta`` adds msgpack
    metalayers after ``b2nd``; ``vlmeta`` adds variable-length metalayers.  The output appears
    atomically: a failed save leaves nothing behind."""
    options = dict(locals())
    array = np.asarray(options.pop("array"))
    del options["path"]
    settings = B2ndSettings.parse(options, array.dtype, array.shape)
    grid, params = settings.layout.grid, settings.layout.params
    with (
        staged_output(path, replaces=sniff_dir, what=SPARSE_FRAME) as build,
        settings.frame(build) as writer,
    ):
        for chunk in _compressed_chunks(array, grid, params, settings.nthreads):
            writer.append_chunk(chunk)


def _merged(kept: list[tuple[str, bytes]], given: list[tuple[str, bytes]]
            ) -> list[tuple[str, bytes]]:  # fmt: skip
    """The ``kept`` (name, value) pairs but those ``given`` replaces, then ``given``."""
    names = {name for name, _ in given}
    return [(name, value) for name, value in kept if name not in names] + given


class B2ndTarget(Target):
    """A python-blosc2 NDArray (``sparse=True``: a sparse frame directory)."""

    fmt = "b2nd"
    OPTIONS = OPTIONS

    def __init__(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> None:
        super().__init__(source, copy_chunks)
        spec = source.spec
        self.settings = B2ndSettings.parse(options, spec.dtype, spec.shape, self._copy_geometry)
        if spec.order == "F":
            self.dropped.append("Fortran order: b2nd arrays are C-ordered (values are kept)")
        self.grid, self.cparams = self.settings.layout.grid, self.settings.layout.params
        self.same_geometry = getattr(source, "grid", None) == self.grid
        # the source's metalayers and vlmetalayers are kept, those of meta= and vlmeta= added
        b2nd, *meta = self.settings.metalayers
        kept = kept_metalayers(source, self.dropped, MAX_METALAYERS - 1, True)
        vlkept = packed_user(source, self.dropped, MAX_VLMETALAYERS_WRITE)
        self.settings = replace(self.settings, metalayers=[b2nd, *_merged(kept, meta)],
                                vlmeta=_merged(vlkept, self.settings.vlmeta))  # fmt: skip

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
        with self.settings.frame(path) as writer:
            append = writer.append_chunk
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
