"""What the writers of every format share when they write another container's data
(:func:`bloscpack.convert`) or an array: the :class:`Target` base (layout chosen before
anything is written, stored chunks copied when the target accepts them as they are, the rest
decompressed and compressed again) and the rules for carrying metadata over."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import ndarray as nd
from ..blosc.header import ChunkHeader, Special
from ..blosc.layout import validate_chunk
from ..errors import ArgumentError, UnsupportedError
from ..io.staging import StagedOutput
from .base import NUMPY_KEYS, ArrayDescription, ContainerFormat, StoredMetadata, map_chunks
from .grid import ChunkGrid
from .options import check_options

#: Default chunk size of frames written from a source whose chunks cannot be copied.
FRAME_CHUNK_NBYTES = 4 * 1024 * 1024
#: Rows of a ctable target are moved in slabs of about this many bytes.
SLAB_NBYTES = 4 * 1024 * 1024


# --- metadata -----------------------------------------------------------------------------


def numpy_metadata(spec: nd.ArraySpec) -> dict[str, Any]:
    """The 0.16 numpy metadata dict of ``spec`` (also the frame vlmetalayers of an array)."""
    nd.check_storable(spec.dtype)
    return {"dtype": nd.dtype_to_string(spec.dtype), "shape": list(spec.shape),
            "order": spec.order, "container": nd.CONTAINER}  # fmt: skip


def check_user_metadata(metadata: Any) -> dict[str, Any] | None:
    """The user ``metadata`` a writer is given (None or a mapping), as a dict; a name the
    numpy metadata takes is refused."""
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        raise ArgumentError(f"metadata must be a mapping, got {type(metadata).__name__}")
    for name in NUMPY_KEYS:
        if name in metadata:
            raise ArgumentError(f"metadata key {name!r}: the name is taken by the numpy metadata")
    return dict(metadata)


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


def unreserved_user(source: Any, dropped: list[str], reserved: Sequence[str]
                     ) -> Iterator[tuple[str, Any]]:  # fmt: skip
    """The source's user metadata but the names in ``reserved`` (told in ``dropped``)."""
    for name, value in source.meta.user.items():
        if name in reserved:
            dropped.append(f"{source.meta.entry} {name!r}: the name is taken by the numpy metadata")
        else:
            yield name, value


def json_user(source: Any, what: str, dropped: list[str], reserved: Sequence[str] = ()
               ) -> dict[str, Any]:  # fmt: skip
    """The user metadata JSON can hold (``what`` names the target's kind of entry)."""
    kept: dict[str, Any] = {}
    for name, value in unreserved_user(source, dropped, reserved):
        problem = _json_problem(value)
        if problem is not None:
            dropped.append(f"{source.meta.entry} {name!r}: {what} cannot hold it ({problem})")
            continue
        kept[name] = value
    return kept


def writer_user(metadata: Any, fmt: str,
                pick: Callable[[Any, list[str]], Any]) -> Any:  # fmt: skip
    """The user ``metadata`` (a mapping, or None) as a new ``fmt`` container's array writer
    stores it: what ``pick(source, dropped)`` keeps of it, the rule of ``fmt``'s conversion
    target (so the bytes are those :func:`bloscpack.save` writes with it); metadata the
    format cannot hold is refused as :func:`bloscpack.convert.write_new_array` refuses it."""
    source = _UserMetadata(StoredMetadata(user=check_user_metadata(metadata) or {}))
    dropped: list[str] = []
    kept = pick(source, dropped)
    if dropped:
        raise ArgumentError(f"format {fmt!r} cannot store the metadata: {dropped[0]}")
    return kept


@dataclass(frozen=True)
class _UserMetadata:
    """A source of nothing but user metadata (what the rules of :func:`json_user` and the
    formats' like read)."""

    meta: StoredMetadata


def short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def kept_metalayers(source: Any, dropped: list[str], room: int, keep: bool
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


def take_options(options: dict[str, Any], allowed: Mapping[str, Any], fmt: str) -> dict[str, Any]:
    """The target's options with defaults; unknown names are refused."""
    check_options(fmt, options, allowed)
    return {**allowed, **options}


def flat_spans(total: int, size: int) -> list[tuple[int, int]]:
    """``(start, nbytes)`` of consecutive chunks of ``size`` bytes covering ``total`` bytes."""
    if total == 0:
        return []
    return [(start, min(size, total - start)) for start in range(0, total, size)]


def row_flat(grid: ChunkGrid) -> bool:
    """Each chunk (and each block) spans whole rows: chunk ``i`` holds a flat byte range."""
    return (
        grid.ndim >= 1 and grid.chunks[1:] == grid.shape[1:] and grid.blocks[1:] == grid.shape[1:]
    )


def marker_fits(header: ChunkHeader, typesize: int) -> bool:
    """A NaN chunk becomes an index marker, which reads back with the frame's typesize."""
    return header.special != Special.NAN or header.typesize == typesize


def no_progress(nbytes: int) -> None:
    """A progress callback that does nothing."""


# --- targets ------------------------------------------------------------------------------


class Target:
    """A format writer: chooses its layout from the source and the options (before anything
    is written), then writes chunks, copied or compressed, to a path."""

    fmt = ""
    keeps_any_metadata = False  # holds metadata that is not a mapping (.blp)

    def __init__(self, source: Any, copy_chunks: bool) -> None:
        self.source = source
        self.copy_chunks = copy_chunks
        self.dropped: list[str] = list(source.meta.dropped)
        self.copied = 0
        self.recompressed = 0
        self.progress: Callable[[int], None] = no_progress  # told the source bytes written
        other = source.meta.verbatim
        verbatim = self.keeps_any_metadata and other is not None
        if source.meta.raw_reason and not verbatim:
            self.dropped.append(f"{source.meta.entry} {source.meta.raw_reason}")
        if other is not None and not isinstance(other, dict) and not self.keeps_any_metadata:
            self.dropped.append(
                f"metadata {short(other)}: only the .blp format holds metadata that is not a"
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
        holds exactly the range and that the target accepts is copied (``put_chunk``),
        anything else is read (in C order if ``c_order``) and compressed (``put_data``).
        ``chunk_nbytes(n)`` is the uncompressed size a target chunk for ``n`` bytes must have
        (default: ``n``)."""
        for chunk, data, n in self._span_items(spans, c_order, chunk_nbytes):
            if data is None:
                put_chunk(chunk)
            else:
                put_data(data)
            self.written(data is None, n)

    def written(self, copied: bool, nbytes: int) -> None:
        """Count a target chunk written (``copied`` or compressed) for ``nbytes`` source bytes."""
        if copied:
            self.copied += 1
        else:
            self.recompressed += 1
        self.progress(nbytes)

    def _span_items(self, spans: Sequence[tuple[int, int]], c_order: bool,
                    chunk_nbytes: Any = None, buffers: int = 1
                    ) -> Iterator[tuple[Any, memoryview | None, int]]:  # fmt: skip
        """For each of ``spans`` (as :meth:`_write_spans` takes them), ``(chunk, None, n)``:
        the source's stored chunk to copy, or ``(None, data, n)``: its ``n`` bytes, read into
        one of ``buffers`` scratch buffers used in turn."""
        source = self.source
        transposed = c_order and source.spec.order == "F"  # stored chunks hold F-order bytes
        lookup = source.span_lookup() if self.copy_chunks and not transposed else {}
        scratch = [memoryview(b"")] * buffers  # made when a chunk is read, not copied
        turn = 0
        for start, n in spans:
            index = lookup.get((start, n))
            if index is not None:
                chunk = source.stored_chunk(index)
                header = validate_chunk(chunk)
                wanted = n if chunk_nbytes is None else chunk_nbytes(n)
                if header.nbytes == wanted and self.accepts_format(header):
                    yield chunk, None, n
                    continue
            turn = (turn + 1) % buffers
            if len(scratch[turn]) < n:
                try:
                    scratch[turn] = memoryview(bytearray(n))
                except MemoryError:
                    raise UnsupportedError(
                        f"{source.name}: a chunk of {n} bytes to compress does not fit in"
                        " memory; give a smaller chunk size"
                    ) from None
            data = scratch[turn][:n]
            if c_order:
                source.read_c(start, data)
            else:
                source.read_into(start, data)
            yield None, data, n


class WriterTarget(Target):
    """The target of a format that gives an array writer and no conversion target of its own
    (:meth:`~bloscpack.containers.base.ContainerFormat.open_writer`): every chunk is read from
    the source in C order, in slabs of whole chunk rows, and compressed by the writer's layout
    (never copied); the user metadata JSON can hold goes to the writer's ``metadata``."""

    def __init__(self, found: ContainerFormat, source: Any, options: dict[str, Any],
                 copy_chunks: bool) -> None:  # fmt: skip
        super().__init__(source, copy_chunks)
        self.fmt = found.name
        self.found = found
        if found.writer_options is not None:
            check_options(found.name, options, found.writer_options)
        self.options = dict(options)
        user = json_user(source, f"format {found.name!r}", self.dropped)
        if user:
            self.options["metadata"] = user

    def accepts_format(self, header: ChunkHeader) -> bool:
        return False

    def write(self, path: str) -> None:
        spec = self.source.spec
        with (
            StagedOutput(path) as output,
            self.found.open_writer(output, ArrayDescription(spec.dtype, spec.shape),
                                   **self.options) as writer,  # fmt: skip
        ):
            if writer.layout.flat:
                self._write_flat(writer)
            else:
                self._write_grid(writer)

    def _write_flat(self, writer: Any) -> None:
        """Chunks of a flat layout: consecutive runs of items in C order."""
        source, layout = self.source, writer.layout
        step = layout.chunks[0] * source.spec.dtype.itemsize
        rb = max(source.row_nbytes, 1)
        for index, (start, n) in enumerate(flat_spans(source.nbytes, step)):
            if source.spec.order == "F":  # read_c takes whole rows of a Fortran source
                r0 = start // rb
                rows = source.read_rows(r0, -(-(start + n) // rb))
                data = nd.byte_view(rows)[start - r0 * rb : start - r0 * rb + n]
            else:
                data = np.empty(n, np.uint8)
                source.read_c(start, data.data)
            self._append(writer, layout.compress_chunk(index, data.view(source.spec.dtype)), n)

    def _write_grid(self, writer: Any) -> None:
        """Chunks of an N-d grid, from slabs of one chunk row each (C order of the chunks)."""
        source, layout = self.source, writer.layout
        spec = source.spec
        if not spec.shape:
            self._append_all(writer, source.read_rows(0, 1), 0)
            return
        per_row = math.prod(-(-n // c) for n, c in zip(spec.shape[1:], layout.chunks[1:],
                                                      strict=True))  # fmt: skip
        for row, r0 in enumerate(range(0, spec.shape[0], layout.chunks[0])):
            slab = source.read_rows(r0, min(r0 + layout.chunks[0], spec.shape[0]))
            self._append_all(writer, slab, row * per_row)

    def _append_all(self, writer: Any, block: np.ndarray, first: int) -> None:
        for chunk in map_chunks(writer.layout.compress_chunk, block, writer.layout.chunks, first):
            self._append(writer, chunk, 0)
        self.progress(block.nbytes)

    def _append(self, writer: Any, chunk: Any, nbytes: int) -> None:
        writer.append_chunk(chunk)
        self.recompressed += 1
        if nbytes:
            self.progress(nbytes)


__all__ = [
    "FRAME_CHUNK_NBYTES", "SLAB_NBYTES", "Target", "WriterTarget", "check_user_metadata",
    "flat_spans", "json_user", "kept_metalayers", "marker_fits", "no_progress", "numpy_metadata",
    "row_flat", "short", "take_options", "unreserved_user",
]  # fmt: skip
