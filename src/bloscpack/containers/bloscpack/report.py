"""What :func:`info` and :func:`verify` report on a ``.blp`` file."""

from __future__ import annotations

import contextlib
import pprint
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ...blosc.header import FORMAT_NAMES, ChunkHeader
from ...blosc.layout import validate_chunk
from ...errors import BloscpackError, IntegrityError
from ...io.sources import ByteSource
from .header import BloscpackHeader, MetadataHeader
from .reader import (
    CHUNK_HEADER_PEEK,
    BloscpackReader,
    ChunkLocation,
    SourceLike,
    allocate,
    decompress_exactly,
    reading,
)


def _chunk_summary(reader: BloscpackReader, loc: ChunkLocation) -> dict[str, Any]:
    chunk_header = ChunkHeader.parse(reader.source.read_upto(loc.offset, CHUNK_HEADER_PEEK))
    return {
        "index": loc.index,
        "offset": loc.offset,
        "cbytes": loc.cbytes,
        "nbytes": loc.nbytes,
        "codec": chunk_header.codec,
        "typesize": chunk_header.typesize,
        "shuffle": chunk_header.shuffle,
        "blosc_version": chunk_header.blosc_version,
        "header_version": chunk_header.version,
    }


def _jsonable_header(header: BloscpackHeader | MetadataHeader) -> dict[str, Any]:
    return {k: (v.decode("latin-1") if isinstance(v, bytes) else v) for k, v in header.items()}


def info(path: SourceLike, *, max_chunks: int = 1000) -> dict[str, Any]:
    """A JSON-able description of a ``.blp`` container: header, metadata header, metadata,
    offsets, section positions, and per-chunk codec/sizes (the first ``max_chunks``) plus
    totals over all chunks."""
    with reading(path) as reader:
        locations = reader.locations()
        chunks = [_chunk_summary(reader, loc) for loc in locations[:max_chunks]]
        codecs: Counter[str] = Counter()
        versions: Counter[int] = Counter()
        for loc in locations:
            summary = chunks[loc.index] if loc.index < max_chunks else _chunk_summary(reader, loc)
            codecs[summary["codec"]] += 1
            versions[summary["blosc_version"]] += 1
        nbytes = sum(loc.nbytes for loc in locations)
        cbytes = sum(loc.cbytes for loc in locations)
        return {
            "format": "blp",
            "file_size": reader.size,
            "header": _jsonable_header(reader.header),
            "metadata_header": (
                _jsonable_header(reader.metadata_header) if reader.metadata_header else None
            ),
            "metadata": reader.metadata,
            "metadata_offset": reader.metadata_offset,
            "offsets_offset": reader.offsets_offset if reader.header.offsets else None,
            "chunks_start": reader.chunks_start,
            "offsets": reader.offsets,
            "nchunks": len(locations),
            "nbytes": nbytes,
            "cbytes": cbytes,
            "ratio": (nbytes / cbytes) if cbytes else None,
            "trailing_bytes": reader.size - reader.data_end,
            "codecs": dict(codecs),
            "blosc_versions": {str(k): v for k, v in versions.items()},
            "chunks": chunks,
            "chunks_listed": len(chunks),
        }


def verify(path: SourceLike) -> dict[str, Any]:
    """Check a ``.blp`` container without writing anything: header and metadata digest, size
    and offset consistency, and every chunk's digest, decoding and size.  Returns
    ``{"format": "blp", "ok", "nchunks", "bad_chunks": [{"index", "error"}], "problems",
    "verifiable", "notes"}``: ``verifiable`` when the file stores digests of its chunks."""
    report: dict[str, Any] = {
        "format": "blp",
        "ok": False,
        "nchunks": 0,
        "bad_chunks": [],
        "problems": [],
        "verifiable": False,
        "notes": [],
    }
    problems: list[str] = report["problems"]
    with contextlib.ExitStack() as stack:
        try:
            reader = stack.enter_context(reading(path, verify_metadata=False))
        except BloscpackError as exc:
            problems.append(str(exc))
            return report
        if reader.metadata_digest_ok is False:
            problems.append(f"{reader.name}: metadata checksum mismatch")
        try:
            _ = reader.metadata
        except BloscpackError as exc:
            problems.append(str(exc))
        try:
            locations = reader.locations()
        except BloscpackError as exc:
            problems.append(str(exc))
            report["nchunks"] = max(reader.header.nchunks, 0)
            return report
        report["nchunks"] = len(locations)
        problems.extend(_layout_problems(reader, locations))
        report["verifiable"] = reader.checksum.size > 0  # digests of every chunk are stored
        reader.check_order = True
        try:
            report["bad_chunks"] = _chunk_problems(reader, locations)
        except BloscpackError as exc:
            problems.append(str(exc))
        problems.extend(_trailing_problems(reader, report["notes"]))
        report["notes"].extend(_header_notes(reader, locations))
        problems.extend(_array_problems(reader, locations))
    report["ok"] = not problems and not report["bad_chunks"]
    return report


def _layout_problems(reader: BloscpackReader, locations: list[ChunkLocation]) -> list[str]:
    problems = []
    if locations and locations[0].offset != reader.chunks_start:
        problems.append(
            f"chunk 0 starts at {locations[0].offset}, not right after the preamble"
            f" ({reader.chunks_start})"
        )
    for before, after in zip(locations, locations[1:], strict=False):
        if after.offset != before.end:  # the readers refuse overlaps: this is a gap
            problems.append(
                f"{after.offset - before.end} unreferenced bytes between chunk {before.index}"
                f" and chunk {after.index} (offsets {before.end} to {after.offset})"
            )
    if reader.header.offsets:
        unused = reader.unused_offsets()
        if any(v != -1 for v in unused):
            problems.append(f"preallocated offset slots are not all -1: {unused[:8]}")
    try:
        reader.check_sizes()
    except BloscpackError as exc:
        problems.append(str(exc))
    return problems


def _header_notes(reader: BloscpackReader, locations: list[ChunkLocation]) -> list[str]:
    """The header's ``nchunks`` and ``last_chunk`` are -1 (unknown) together or neither: one
    unknown leaves the other unchecked."""
    nchunks, last_chunk = reader.header.nchunks, reader.header.last_chunk
    if (nchunks == -1) == (last_chunk == -1):
        return []
    held = f"; the last chunk holds {locations[-1].nbytes} bytes" if locations else ""
    return [
        f"the header's nchunks {nchunks} and last_chunk {last_chunk} disagree: only one of them"
        f" is -1 (unknown){held}"
    ]


def _trailing_problems(reader: BloscpackReader, notes: list[str]) -> list[str]:
    """Bytes after the last chunk: an order record (:mod:`.order`, which the chunk reads
    check); a whole Blosc chunk there is data the header does not count (a problem);
    anything else is what bloscpack 0.16's append leaves (a note)."""
    end, size = reader.data_end, reader.size
    if end >= size:
        return []
    record = reader.order_record()
    if record is not None:
        where = f"the order record after the last chunk (offset {end})"
        if not record.describes(reader.nchunks, end, reader.checksum.size):
            notes.append(
                f"{size - end} bytes after the last chunk end in an order record of another"
                " state of the file: not used (bloscpack 0.16's append leaves it stale)"
            )
            return []
        return [f"{where} is damaged (CRC mismatch)"] if record.tags is None else []
    try:
        header = validate_chunk(reader.source.read(end, size - end, "trailing bytes"))
    except BloscpackError:
        notes.append(
            f"{size - end} bytes after the last chunk are ignored (stale bytes, as bloscpack"
            " 0.16's append leaves them)"
        )
        return []
    return [
        f"an unreferenced Blosc chunk of {header.cbytes} bytes at offset {end}, after the"
        f" {reader.nchunks} chunks the header counts"
    ]


def _chunk_problems(
    reader: BloscpackReader, locations: list[ChunkLocation]
) -> list[dict[str, Any]]:
    bad = []
    largest = max((loc.nbytes for loc in locations), default=0)
    if reader.header.chunk_size != -1:
        largest = min(largest, reader.header.chunk_size)
    scratch = allocate(largest, reader.name).data
    for loc in locations:
        try:
            chunk = reader._read_location(loc, True)
            if loc.nbytes > len(scratch):
                raise IntegrityError(
                    f"chunk {loc.index} claims {loc.nbytes} bytes, more than the chunk size"
                )
            decompress_exactly(chunk, scratch[: loc.nbytes], loc, reader.name)
        except BloscpackError as exc:
            bad.append({"index": loc.index, "error": str(exc)})
    return bad


def _array_problems(reader: BloscpackReader, locations: list[ChunkLocation]) -> list[str]:
    from ... import ndarray

    try:
        metadata = reader.metadata
    except BloscpackError:
        return []
    if not ndarray.is_numpy_metadata(metadata):
        return []
    try:
        spec = ndarray.decode_metadata(metadata)
    except BloscpackError:
        return []  # user metadata that merely resembles an array's
    total = sum(loc.nbytes for loc in locations)
    if spec.nbytes != total:
        return [f"the array needs {spec.nbytes} bytes, the chunks hold {total}"]
    return []


def info_text(path: SourceLike, report: dict[str, Any]) -> str:
    """The text bloscpack 0.16's ``blpk info`` printed for the ``.blp`` file ``path`` (or an
    open :class:`~bloscpack.io.sources.ByteSource`), whose :func:`info` is ``report``."""
    lines = [BloscpackHeader(**report["header"]).pformat()]
    offsets = report.get("offsets")
    if offsets:
        lines.append("'offsets':")
        lines.append("[{},...]".format(",".join(str(o) for o in offsets[:5])))
    if report.get("metadata") is not None:
        lines.append("Metadata:\n" + pprint.pformat(report["metadata"], width=90))
        meta_fields = {
            k: v.encode("latin-1") if k in ("magic_format", "user_codec") else v
            for k, v in report["metadata_header"].items()
        }
        lines.append(MetadataHeader(**meta_fields).pformat())
    chunks = report.get("chunks") or []
    if chunks:
        with contextlib.ExitStack() as stack:
            source = path if isinstance(path, ByteSource) else stack.enter_context(ByteSource(path))
            first = ChunkHeader.parse(source.read_upto(chunks[0]["offset"], CHUNK_HEADER_PEEK))
        lines.append("First chunk blosc header:")
        names = ("version", "versionlz", "flags", "typesize", "nbytes", "blocksize")
        header_items = [(n, getattr(first, n)) for n in names] + [("ctbytes", first.cbytes)]
        lines.append(_ordered_dict_repr(header_items))
        # 0.16's labels (bit 4 is really "do not split"; lz4hc chunks show as lz4)
        flags, code = first.flags, first.flags >> 5
        lines.append("First chunk blosc flags: ")
        flag_items = [
            ("byte_shuffle", bool(flags & 0x01)), ("pure_memcpy", bool(flags & 0x02)),
            ("bit_shuffle", bool(flags & 0x04)), ("split_blocks", bool(flags & 0x10)),
            ("codec", FORMAT_NAMES[code] if code < 5 else f"format{code}"),  # 0.16 knew 0-4
        ]  # fmt: skip
        lines.append(_ordered_dict_repr(flag_items))
    return "\n".join(lines)


def _ordered_dict_repr(items: Sequence[tuple[str, Any]]) -> str:
    return "OrderedDict([" + ", ".join(f"({k!r}, {v!r})" for k, v in items) + "])"
