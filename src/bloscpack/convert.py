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
import contextlib
import json
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from . import engine
from . import ndarray as nd
from .args import (
    DEFAULT_CHECKSUM,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_CLEVEL,
    DEFAULT_MAX_APP_CHUNKS,
    DEFAULT_SHUFFLE,
    BloscArgs,
    MetadataArgs,
    array_chunk_size,
    calculate_nchunks,
)
from .b2nd_layout import ChunkGrid, array_to_chunk, default_chunks_blocks
from .b2nd_meta import METALAYER_NAME, B2ndMeta
from .blosc.header import ChunkHeader, Special
from .blosc.layout import validate_chunk
from .containers import registry
from .containers.base import NUMPY_KEYS, ContainerReader, StoredMetadata
from .containers.registry import detect
from .errors import (
    ArgumentError,
    BloscpackError,
    FileNotFound,
    IntegrityError,
    OutputExistsError,
    UnsupportedError,
)
from .headers import header_typesize
from .io import PathLike, is_written_in_place, sized_input, staged_output
from .journal import in_one_state

FORMATS = tuple(registry.FORMATS)
#: Target format by file name extension, when ``format`` is not given.
EXTENSIONS = {f.extension: f.name for f in registry.FORMATS.values()}
#: The metadata keys (``.blp`` metadata dict, frame vlmetalayers) that describe a numpy array.
#: Default chunk size of frames written from a source whose chunks cannot be copied.
FRAME_CHUNK_NBYTES = 4 * 1024 * 1024
#: Rows of a ctable target are moved in slabs of about this many bytes.
SLAB_NBYTES = 4 * 1024 * 1024

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
            if lo == 0 and take == u1 - u0:
                self._decode_unit_into(unit, out[pos : pos + take])
            else:
                out[pos : pos + take] = self._unit_bytes(unit, u1 - u0)[lo : lo + take]
            pos += take

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

    def __init__(self, reader: ContainerReader) -> None:
        super().__init__(reader)
        self.array, self.grid = reader.array, reader.grid  # type: ignore[attr-defined]
        self.unit_rows = max(self.grid.chunks[0], 1) if self.spec.shape else 1
        if _row_flat(self.grid):
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


def _row_flat(grid: ChunkGrid) -> bool:
    """Each chunk (and each block) spans whole rows: chunk ``i`` holds a flat byte range."""
    return (
        grid.ndim >= 1 and grid.chunks[1:] == grid.shape[1:] and grid.blocks[1:] == grid.shape[1:]
    )


class _TableSource(_SlabSource):
    """A table (bcolz ctable): rows are read column by column in slabs of ``unit_rows``."""

    def __init__(self, reader: Any) -> None:
        super().__init__(reader)
        chunklens = [reader.column(name).description.chunks[0] for name in reader.columns]
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


def open_source(path: str, fmt: str) -> _Source:
    """The conversion source for the container ``path`` in format ``fmt``."""
    reader = registry.open_reader(path, fmt)
    try:
        if reader.columns is not None:
            return _TableSource(reader)
        if reader.grid is not None:
            return _GridSource(reader)
        return _ChunkedSource(reader)
    except BaseException:
        reader.close()
        raise


# --- metadata -----------------------------------------------------------------------------


def _numpy_metadata(spec: nd.ArraySpec) -> dict[str, Any]:
    """The 0.16 numpy metadata dict of ``spec`` (also the frame vlmetalayers of an array)."""
    nd.check_storable(spec.dtype)
    return {"dtype": nd.dtype_to_string(spec.dtype), "shape": list(spec.shape),
            "order": spec.order, "container": nd.CONTAINER}  # fmt: skip


def _json_problem(value: Any) -> str | None:
    """Why JSON cannot hold ``value`` (None if it can; tuples become lists)."""
    try:
        json.dumps(value, allow_nan=True)
    except (TypeError, ValueError) as exc:
        return str(exc)
    if _has_non_string_key(value):
        return "JSON keys are strings, the value has other mapping keys"
    return None


def _has_non_string_key(value: Any) -> bool:
    if isinstance(value, dict):
        return any(not isinstance(k, str) or _has_non_string_key(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_non_string_key(v) for v in value)
    return False


def _unreserved_user(source: _Source, dropped: list[str], reserved: Sequence[str]
                     ) -> Iterator[tuple[str, Any]]:  # fmt: skip
    """The source's user metadata but the names in ``reserved`` (told in ``dropped``)."""
    for name, value in source.meta.user.items():
        if name in reserved:
            dropped.append(f"{source.meta.entry} {name!r}: the name is taken by the numpy metadata")
        else:
            yield name, value


def _json_user(source: _Source, what: str, dropped: list[str], reserved: Sequence[str] = ()
               ) -> dict[str, Any]:  # fmt: skip
    """The user metadata JSON can hold (``what`` names the target's kind of entry)."""
    kept: dict[str, Any] = {}
    for name, value in _unreserved_user(source, dropped, reserved):
        problem = _json_problem(value)
        if problem is not None:
            dropped.append(f"{source.meta.entry} {name!r}: {what} cannot hold it ({problem})")
            continue
        kept[name] = value
    return kept


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _packed_user(source: _Source, dropped: list[str], room: int, reserved: Sequence[str] = ()
                 ) -> list[tuple[str, bytes]]:  # fmt: skip
    """User metadata as frame vlmetalayers (msgpack bytes), at most ``room`` of them."""
    from .containers.frame import MAX_NAME_LEN, pack_value

    layers: list[tuple[str, bytes]] = []
    for name, value in _unreserved_user(source, dropped, reserved):
        if len(name.encode("utf-8")) > MAX_NAME_LEN:
            dropped.append(f"{source.meta.entry} {name!r}: frame vlmetalayer names hold at most"
                           f" {MAX_NAME_LEN} bytes")  # fmt: skip
            continue
        if len(layers) >= room:
            dropped.append(f"{source.meta.entry} {name!r}: a frame holds at most {room} user"
                           " vlmetalayers here")  # fmt: skip
            continue
        packed = source.meta.packed.get(name)
        if packed is None:
            try:
                packed = pack_value(value)
            except (TypeError, ValueError, OverflowError) as exc:
                dropped.append(f"{source.meta.entry} {name!r}: msgpack cannot hold it ({exc})")
                continue
        layers.append((name, packed))
    return layers


def _metalayers(source: _Source, dropped: list[str], room: int, keep: bool
                ) -> list[tuple[str, bytes]]:  # fmt: skip
    """The source's fixed metalayers the target keeps (``keep`` False: a target without
    metalayers)."""
    kept: list[tuple[str, bytes]] = []
    for name, content in source.meta.metalayers:
        if not keep:
            dropped.append(f"metalayer {name!r}: the target format has no metalayers")
        elif len(kept) >= room:
            dropped.append(f"metalayer {name!r}: a frame holds at most {room} more metalayers")
        else:
            kept.append((name, bytes(content)))
    return kept


# --- options ------------------------------------------------------------------------------


def _take(options: dict[str, Any], allowed: Mapping[str, Any], fmt: str) -> dict[str, Any]:
    """The target's options with defaults; unknown names are refused."""
    registry.check_options(fmt, options, allowed)
    return {**allowed, **options}


def _flat_spans(total: int, size: int) -> list[tuple[int, int]]:
    """``(start, nbytes)`` of consecutive chunks of ``size`` bytes covering ``total`` bytes."""
    if total == 0:
        return []
    return [(start, min(size, total - start)) for start in range(0, total, size)]


# --- targets ------------------------------------------------------------------------------


class _Target:
    """A format writer: chooses its layout from the source and the options (before anything
    is written), then writes chunks, copied or compressed, to a path."""

    fmt = ""

    def __init__(self, source: _Source, copy_chunks: bool) -> None:
        self.source = source
        self.copy_chunks = copy_chunks
        self.dropped: list[str] = list(source.meta.dropped)
        self.copied = 0
        self.recompressed = 0
        self.progress: Callable[[int], None] = _no_progress  # told the source bytes written
        other = source.meta.verbatim
        verbatim = isinstance(self, _BlpTarget) and other is not None
        if source.meta.raw_reason and not verbatim:
            self.dropped.append(f"{source.meta.entry} {source.meta.raw_reason}")
        if other is not None and not isinstance(other, dict) and not isinstance(self, _BlpTarget):
            self.dropped.append(
                f"metadata {_short(other)}: only the .blp format holds metadata that is not a"
                " mapping"
            )

    def _copyable(self, header: ChunkHeader | None) -> bool:
        """The source's chunks can be copied (judged by its first chunk)."""
        return self.copy_chunks and header is not None and self.accepts_format(header)

    def accepts_format(self, header: ChunkHeader) -> bool:
        raise NotImplementedError

    def write(self, path: str) -> None:
        raise NotImplementedError

    def _write_spans(self, spans: Sequence[tuple[int, int]], c_order: bool,
                     put_chunk: Any, put_data: Any, chunk_nbytes: Any = None) -> None:  # fmt: skip
        """Write the target chunks holding the flat byte ranges ``spans``: a source chunk that
        holds exactly the range and that the target accepts is copied, anything else is read
        (in C order if ``c_order``) and compressed.  ``chunk_nbytes(n)`` is the uncompressed
        size a target chunk for ``n`` bytes must have (default: ``n``)."""
        source = self.source
        transposed = c_order and source.spec.order == "F"  # stored chunks hold F-order bytes
        lookup = source.span_lookup() if self.copy_chunks and not transposed else {}
        scratch = memoryview(bytearray(max((n for _, n in spans), default=0)))
        for start, n in spans:
            index = lookup.get((start, n))
            if index is not None:
                chunk = source.stored_chunk(index)
                header = validate_chunk(chunk)
                wanted = n if chunk_nbytes is None else chunk_nbytes(n)
                if header.nbytes == wanted and self.accepts_format(header):
                    put_chunk(chunk)
                    self.copied += 1
                    self.progress(n)
                    continue
            data = scratch[:n]
            if c_order:
                source.read_c(start, data)
            else:
                source.read_into(start, data)
            put_data(data)
            self.recompressed += 1
            self.progress(n)


class _BlpTarget(_Target):
    fmt = "blp"
    OPTIONS = {
        "chunk_size": None, "clevel": DEFAULT_CLEVEL, "shuffle": DEFAULT_SHUFFLE, "cname": None,
        "codec": None, "checksum": DEFAULT_CHECKSUM, "offsets": True,
        "max_app_chunks": DEFAULT_MAX_APP_CHUNKS, "blosc_version": 1, "filters": None,
        "filters_meta": None, "use_dict": False, "blocksize": 0, "metadata_args": None,
    }  # fmt: skip

    def __init__(self, source: _Source, options: dict[str, Any], copy_chunks: bool) -> None:
        from .containers.bloscpack import check_blosc_args

        super().__init__(source, copy_chunks)
        opts = _take(options, self.OPTIONS, self.fmt)
        self.opts = opts
        spec = source.spec
        self.args = BloscArgs.from_options(
            opts["cname"], opts["codec"], clevel=opts["clevel"], shuffle=opts["shuffle"],
            blosc_version=opts["blosc_version"], filters=opts["filters"],
            filters_meta=opts["filters_meta"], use_dict=opts["use_dict"],
            blocksize=opts["blocksize"],
        )  # fmt: skip
        itemsize = spec.dtype.itemsize
        self.args.typesize = nd.chunk_typesize(spec.dtype, self.args.blosc_version)
        check_blosc_args(self.args)
        if opts["metadata_args"] is not None and not isinstance(
            opts["metadata_args"], MetadataArgs
        ):
            self.opts["metadata_args"] = MetadataArgs(**dict(opts["metadata_args"]))
        chunk_size: Any = opts["chunk_size"]
        span = source.uniform_span()
        if chunk_size is None and span and self._copyable(source.first_chunk_header()):
            chunk_size = span
        chunk_size = array_chunk_size(
            chunk_size or DEFAULT_CHUNK_SIZE, source.nbytes, max(itemsize, 1)
        )
        self.nchunks, self.chunk_size, self.last_chunk = calculate_nchunks(
            source.nbytes, chunk_size
        )
        self.metadata = self._metadata()
        _metalayers(source, self.dropped, 0, False)

    def _metadata(self) -> Any:
        source = self.source
        if source.meta.verbatim is not None:  # .blp to .blp: the metadata as it was written
            return source.meta.verbatim
        if not source.meta.is_array:
            user = _json_user(source, "the .blp metadata (JSON)", self.dropped)
            return user or None
        metadata = _numpy_metadata(source.spec)
        metadata.update(_json_user(source, "the .blp metadata (JSON)", self.dropped, NUMPY_KEYS))
        return metadata

    def accepts_format(self, header: ChunkHeader) -> bool:
        if self.args.blosc_version == 1:
            return header.blosc_version == 1
        return not header.lazy

    def write(self, path: str) -> None:
        from .containers.bloscpack import BloscpackWriter, compress_chunk

        with open(path, "wb") as fh:
            writer = BloscpackWriter(
                fh, chunk_size=self.chunk_size, last_chunk=self.last_chunk, nchunks=self.nchunks,
                typesize=header_typesize(self.args.typesize), checksum=self.opts["checksum"],
                offsets=self.opts["offsets"], max_app_chunks=self.opts["max_app_chunks"],
                metadata=self.metadata, metadata_args=self.opts["metadata_args"],
            )  # fmt: skip
            spans = _flat_spans(self.source.nbytes, self.chunk_size) or [(0, 0)]
            self._write_spans(
                spans,
                False,
                writer.write_chunk,
                lambda data: writer.write_chunk(compress_chunk(data, self.args)),
            )
            writer.close()


class _FrameTarget(_Target):
    """A Blosc2 frame (``b2frame`` contiguous, ``sframe`` sparse) of flat chunks; an array's
    numpy metadata goes to the vlmetalayers ``dtype``, ``shape``, ``order``, ``container``."""

    OPTIONS = {
        "chunksize": None, "typesize": None, "codec": "zstd", "clevel": 5,
        "filters": (0, 0, 0, 0, 0, 1), "filters_meta": (0, 0, 0, 0, 0, 0), "codec_meta": 0,
        "splitmode": "auto", "blocksize": 0, "use_dict": False, "nthreads": 1,
    }  # fmt: skip

    def __init__(self, source: _Source, options: dict[str, Any], copy_chunks: bool,
                 fmt: str) -> None:  # fmt: skip
        from .containers.frame import MAX_METALAYERS, MAX_VLMETALAYERS_WRITE, CParams

        super().__init__(source, copy_chunks)
        self.fmt = fmt
        opts = _take(options, self.OPTIONS, fmt)
        spec = source.spec
        itemsize = max(spec.dtype.itemsize, 1)
        typesize = opts.pop("typesize") or source.meta.typesize or min(itemsize, 255)
        self.nthreads = int(opts.pop("nthreads"))
        chunksize = opts.pop("chunksize")
        try:
            self.cparams = CParams.make(typesize=typesize, **opts)
        except BloscpackError:
            raise
        except (TypeError, ValueError) as exc:
            raise ArgumentError(str(exc)) from None
        if chunksize is None and source.spans and self._copyable(source.first_chunk_header()):
            self.spans = [span for span in source.spans if span[1]]  # the source's layout
        else:
            size = FRAME_CHUNK_NBYTES if chunksize is None else int(chunksize)
            if size < 1:
                raise ArgumentError(f"chunksize must be a positive number of bytes, got {size}")
            size = max(itemsize, size - size % itemsize)
            self.spans = _flat_spans(source.nbytes, size)
        vl: list[tuple[str, bytes]] = []
        if source.meta.is_array:
            from .containers.frame import pack_value

            vl = [(k, pack_value(v)) for k, v in _numpy_metadata(spec).items()]
        reserved = NUMPY_KEYS if source.meta.is_array else ()
        self.vlmeta = vl + _packed_user(
            source, self.dropped, MAX_VLMETALAYERS_WRITE - len(vl), reserved
        )
        self.layers = _metalayers(source, self.dropped, MAX_METALAYERS, True)

    def accepts_format(self, header: ChunkHeader) -> bool:
        return (
            header.extended
            and not header.lazy
            and header.nbytes > 0
            and _marker_fits(header, self.cparams.typesize)
        )

    def write(self, path: str) -> None:
        with _frame_writer(path, self.fmt == "sframe", self.cparams, None, self.layers,
                           self.vlmeta, self.nthreads) as append:  # fmt: skip
            self._write_spans(
                self.spans, False, append, lambda data: append(self.cparams.compress(data))
            )


def _marker_fits(header: ChunkHeader, typesize: int) -> bool:
    """A NaN chunk becomes an index marker, which reads back with the frame's typesize."""
    return header.special != Special.NAN or header.typesize == typesize


@contextlib.contextmanager
def _frame_writer(path: str, sparse: bool, cparams: Any, chunksize: int | None,
                  metalayers: list[tuple[str, bytes]], vlmeta: list[tuple[str, bytes]],
                  nthreads: int) -> Iterator[Any]:  # fmt: skip
    """A function appending one chunk to a new contiguous or sparse frame at ``path``."""
    from .containers.frame import FrameWriter
    from .containers.sframe import SparseFrame

    if sparse:
        frame = SparseFrame.create(path, cparams, chunksize=chunksize, metalayers=metalayers,
                                   vlmeta=vlmeta, nthreads=nthreads)  # fmt: skip
        yield frame.append_chunk
        frame.close()
        return
    with FrameWriter(path, cparams, chunksize=chunksize, metalayers=metalayers, vlmeta=vlmeta,
                     nthreads=nthreads) as writer:  # fmt: skip
        yield writer.append_chunk


class _B2ndTarget(_Target):
    """A python-blosc2 NDArray (``sparse=True``: a sparse frame directory)."""

    fmt = "b2nd"
    OPTIONS = {
        "chunks": None, "blocks": None, "codec": "zstd", "clevel": 5, "filters": None,
        "filters_meta": None, "splitmode": "auto", "nthreads": None, "sparse": False,
    }  # fmt: skip

    def __init__(self, source: _Source, options: dict[str, Any], copy_chunks: bool) -> None:
        from .containers.b2nd import b2nd_cparams
        from .containers.frame import MAX_METALAYERS, MAX_VLMETALAYERS_WRITE

        super().__init__(source, copy_chunks)
        opts = _take(options, self.OPTIONS, self.fmt)
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
        if isinstance(source, _GridSource):
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
        self.layers += _metalayers(source, self.dropped, MAX_METALAYERS - 1, True)
        self.vlmeta = _packed_user(source, self.dropped, MAX_VLMETALAYERS_WRITE)

    def _copy_geometry(self) -> tuple[Any, Any]:
        """The geometry under which the source's chunks can be copied (else (None, None))."""
        source = self.source
        if not self.copy_chunks:
            return None, None
        if isinstance(source, _GridSource):
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
        if not _marker_fits(header, self.cparams.typesize):
            return False
        return header.special != Special.NONE or header.blocksize == self.grid.block_nbytes

    def write(self, path: str) -> None:
        grid = self.grid
        with _frame_writer(path, self.sparse, self.cparams, grid.chunk_nbytes, self.layers,
                           self.vlmeta, self.nthreads) as append:  # fmt: skip
            if grid.nchunks == 0:
                return
            if self.same_geometry:
                self._write_same_geometry(append)
            elif _row_flat(grid):
                self._write_row_chunks(append)
            else:
                self._write_slabs(append)

    def _write_same_geometry(self, append: Any) -> None:
        source = self.source
        assert isinstance(source, _GridSource)
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


class _BcolzTarget(_Target):
    """A bcolz carray, or a ctable for a 1-d structured array (one carray per field)."""

    fmt = "bcolz"
    OPTIONS = {"chunklen": None, "expectedlen": None, "clevel": 5, "shuffle": 1, "cname": "lz4",
               "durable": True}  # fmt: skip

    def __init__(self, source: _Source, options: dict[str, Any], copy_chunks: bool) -> None:
        from .containers import bcolz

        super().__init__(source, copy_chunks)
        opts = _take(options, self.OPTIONS, self.fmt)
        spec = source.spec
        if not spec.shape:
            raise ArgumentError(f"{source.name}: bcolz stores arrays of at least one dimension,"
                                " this one is 0-d")  # fmt: skip
        if spec.order == "F":
            self.dropped.append("Fortran order: bcolz arrays are C-ordered (values are kept)")
        nd.check_storable(spec.dtype)
        self.cparams = bcolz.Cparams.make(opts["clevel"], opts["shuffle"], opts["cname"])
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
                bcolz.check_column_name(name)
            packed = np.dtype([(name, spec.dtype[name]) for name in self.names])
            if packed != spec.dtype:
                self.dropped.append(
                    f"the layout of dtype {spec.dtype} (padding, offsets or titles): a ctable"
                    f" stores the fields only and reads back as {packed}"
                )
        columns = [spec.dtype[name] for name in self.names] or [
            np.dtype((spec.dtype, spec.shape[1:]))
        ]
        self.typesize = bcolz.blosc_typesize(spec.dtype)  # of a carray's chunks
        self.layouts: list[tuple[np.dtype, tuple[int, ...], int]] = []
        for dtype in columns:
            base, rowshape = dtype.base, tuple(dtype.shape)
            atomsize = bcolz.row_nbytes(base, rowshape)
            chunklen = opts["chunklen"]
            if chunklen is None:
                chunklen = self._copy_chunklen(atomsize) or bcolz.default_chunklen(
                    atomsize, expectedlen
                )
            bcolz.check_chunklen(chunklen, atomsize)
            self.layouts.append((base, rowshape, chunklen))
        self.attrs = _json_user(source, "bcolz attributes (JSON)", self.dropped)
        _metalayers(source, self.dropped, 0, False)

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
        from .containers.bcolz import CarrayWriter, CtableWriter

        source = self.source
        if not self.names:
            dtype, rowshape, chunklen = self.layouts[0]
            writer = CarrayWriter(path, dtype, rowshape, chunklen, self.cparams, attrs=self.attrs,
                                  durable=self.durable)  # fmt: skip

            def put_data(data: memoryview) -> None:
                writer.append_rows(np.frombuffer(data, dtype=dtype).reshape((-1, *rowshape)))

            spans = _flat_spans(source.nbytes, chunklen * writer.atomsize)
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


# --- output -------------------------------------------------------------------------------


@contextlib.contextmanager
def _staged_output(dst: str, overwrite: bool) -> Iterator[str]:
    """:func:`bloscpack.io.staged_output` for ``dst``, once it is known that it may be written:
    it does not exist, or ``overwrite`` is set and it is a file or a container directory (or it
    is a FIFO or a device, written in place)."""
    if not is_written_in_place(dst):
        _check_replaceable(dst, overwrite)
    with staged_output(dst) as new:
        yield new


def _check_replaceable(dst: str, overwrite: bool) -> None:
    target = os.path.abspath(dst)
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise FileNotFound(f"{dst}: the directory {parent!r} does not exist")
    if not os.path.lexists(target):
        return
    if not overwrite:
        raise OutputExistsError(f"{dst}: already exists (pass overwrite=True to replace it)")
    if os.path.isdir(target) and not os.path.islink(target):
        try:
            detect(target)
        except BloscpackError:
            raise OutputExistsError(
                f"{dst}: is a directory that holds no Blosc container; not replacing it"
            ) from None


# --- the entry point ----------------------------------------------------------------------


def target_format(dst: PathLike, format: str | None) -> str:
    """The format to write: ``format``, or the one the extension of ``dst`` names, or ``blp``
    (see :func:`bloscpack.containers.registry.output_format`)."""
    return registry.output_format(dst, format).name


def _no_progress(nbytes: int) -> None:
    pass


def _make_target(fmt: str, source: _Source, options: dict[str, Any], copy_chunks: bool) -> _Target:
    options = registry.writer_options(fmt, options, source.spec.dtype, source.spec.shape)
    if fmt == "blp":
        return _BlpTarget(source, options, copy_chunks)
    if fmt in ("b2frame", "sframe"):
        return _FrameTarget(source, options, copy_chunks, fmt)
    if fmt == "b2nd":
        return _B2ndTarget(source, options, copy_chunks)
    return _BcolzTarget(source, options, copy_chunks)


def convert(
    src: PathLike,
    dst: PathLike,
    format: str | None = None,
    *,
    overwrite: bool = True,
    copy_chunks: bool = True,
    progress: Callable[[int], None] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Convert the container ``src`` (any format bloscpack reads) into ``dst`` in ``format``.

    ``format`` is ``"blp"``, ``"b2frame"``, ``"sframe"``, ``"b2nd"`` (``sparse=True`` for a
    sparse directory) or ``"bcolz"``; by default the suffix of ``dst`` names it (``.blp``,
    ``.b2frame``, ``.b2nd``, ``.b2sframe``, ``.bcolz``), else ``blp``.  ``options`` are the
    target's compression and layout options (see the documentation); stored chunks the target
    accepts as they are are copied without recompression unless ``copy_chunks=False``.  An
    existing ``dst`` is replaced atomically, as :func:`bloscpack.save` replaces;
    ``overwrite=False`` refuses it.  A failed conversion leaves nothing.
    ``progress``, if given, is called with the number of uncompressed source bytes each step
    has written (they add up to the source's size).

    Returns a report: ``{"format", "source_format", "copied_chunks",
    "recompressed_chunks", "dropped"}``, where ``dropped`` lists, one sentence each, the
    metadata the target could not hold.
    """
    fmt = target_format(dst, format)

    def read(src_path: str) -> dict[str, Any]:
        return _convert(src_path, os.fspath(dst), fmt, overwrite, copy_chunks, progress, options)

    with sized_input(src) as src_path:
        return in_one_state(read, src_path)


def write_array(array: np.ndarray, dst: PathLike, fmt: str, overwrite: bool = True, *,
                metadata: Mapping[str, Any] | None = None, raw: bool = False,
                **options: Any) -> dict[str, Any]:  # fmt: skip
    """Write the in-memory ``array`` to ``dst`` in format ``fmt`` through the same targets as
    :func:`convert` (a staged output, replaced atomically), with the user ``metadata``; ``raw``
    bytes are stored without numpy metadata."""
    source = _ArraySource(np.asanyarray(array))
    source.meta.is_array = not raw
    source.meta.user = dict(metadata or {})
    target = _make_target(fmt, source, dict(options), copy_chunks=False)
    with _staged_output(os.fspath(dst), overwrite) as path:
        previous = engine.get_nthreads()
        try:
            target.write(path)
        finally:
            engine.set_nthreads(previous)
    return {"format": fmt, "dropped": target.dropped}


def _convert(
    src_path: str,
    dst_path: str,
    fmt: str,
    overwrite: bool,
    copy_chunks: bool,
    progress: Callable[[int], None] | None,
    options: dict[str, Any],
) -> dict[str, Any]:
    """:func:`convert` from a file whose size is known."""
    source_format = detect(src_path)
    source = open_source(src_path, source_format)
    try:
        target = _make_target(fmt, source, dict(options), copy_chunks)
        if progress is not None:
            target.progress = progress
        with _staged_output(dst_path, overwrite) as path:
            previous = engine.get_nthreads()
            try:
                target.write(path)
            finally:
                engine.set_nthreads(previous)
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


__all__ = ["EXTENSIONS", "FORMATS", "convert", "open_source", "target_format", "write_array"]
