"""``blpk info``: what a container holds: a summary, then the details; or ``--json``.

The summary is written once for every format (:func:`summarize`): it reads the container
through the format-neutral reader (:func:`bloscpack.containers.registry.open_reader`: the
array, the chunks and their Blosc headers) and the info report
(:func:`bloscpack.containers.registry.describe`: compression level and checksums, where the
format stores them).  ``--legacy`` prints what ``blpk info`` printed before the summary
existed (bloscpack 0.16's text for ``.blp`` files); ``-v`` prints the summary, then that text.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..containers import registry
from ..containers.base import TableReader, nchunks_of
from ..errors import BloscpackError, RemoteError
from .console import EXIT_OK, STDIN_NAME, STDIO, Console
from .files import _check_input, _size_of, _sized_input
from .options import storage_options

#: The lines of the summary, in this order, for every format.
SUMMARY_LABELS = (
    "file", "format", "array", "size", "chunks", "codec", "filters", "clevel", "stored",
    "ratio", "checksums",
)  # fmt: skip
#: The lines read through the container's reader (the others come from its report).
READER_LABELS = ("array", "size", "chunks", "codec", "filters")
#: Chunk headers read for the codec and filter lines, at most (the rest are not counted; at a
#: URL only the first chunk's, as each costs a request).
SCANNED_CHUNKS = 1000
#: What the special chunks (no data stored, see :class:`bloscpack.blosc.header.Special`) hold.
SPECIAL_NAMES = {"zeros": "zeros", "nan": "NaNs", "value": "one repeated value",
                 "uninit": "uninitialized items"}  # fmt: skip
#: Width of the labels column.
LABEL_WIDTH = max(map(len, SUMMARY_LABELS)) + 2


def cmd_info(args: argparse.Namespace, console: Console) -> int:
    """``info``: the summary and the details (``-v``: the format's own text, 0.16's for
    ``.blp``), ``--legacy`` (the text alone) or ``--json``.  A container that cannot be read
    whole: what could be read, then the error."""
    from ..url import is_url

    name = STDIN_NAME if args.file_ == STDIO else args.file_
    with contextlib.ExitStack() as stack:
        if args.file_ != STDIO:
            _check_input(args.file_, "file")
        if is_url(args.file_):
            fmt, path = stack.enter_context(registry.opened_url(args.file_, storage_options(args)))
        else:
            path = _sized_input(stack, console, args.file_)
            fmt = registry.detect(path)
        if args.json or args.legacy:
            whole = console.unalias(registry.describe(path, fmt))
            if args.json:
                console.plain(json.dumps(whole, indent=2, sort_keys=True, default=_json_default))
            else:
                console.result(_details(path, whole, own=True))
            return EXIT_OK
        report: dict[str, Any] | None = None
        failure: Exception | None = None
        try:
            report = console.unalias(registry.describe(path, fmt))
        except (BloscpackError, OSError) as exc:
            failure = exc
        lines, problem = summarize(path, fmt, name, report)
        console.result(console.unalias(format_summary(lines)))
        failure = failure or problem
        if failure is not None:
            raise failure
        assert report is not None
        console.result("details:")
        console.result(_details(path, report, own=console.level >= Console.VERBOSE))
    return EXIT_OK


def _details(path: Any, report: dict[str, Any], own: bool) -> str:
    """The details: the format's own text (``own``, where it has one) or the generic text."""
    own_text = registry.format_of(report["format"]).info_text(path, report) if own else None
    return own_text if own_text is not None else format_info(report)


def summarize(
    path: Any, fmt: str, name: str, report: dict[str, Any] | None
) -> tuple[list[tuple[str, str]], Exception | None]:
    """The summary lines ``(label, text)`` of the container ``path`` (a path or an opened
    source) of format ``fmt``, called ``name``, whose info report is ``report`` (None: it could
    not be read), and the first problem met reading it (then the lines are what could be
    read).  Labels: :data:`SUMMARY_LABELS`."""
    found = registry.format_of(fmt)
    facts: dict[str, str] = {"file": name, "format": f"{fmt}: {found.description}"}
    problem: Exception | None = None
    stored = _stored_size(path)
    nbytes = None
    reader = None
    if found.group:
        nbytes, problem = _group_facts(path, found, facts)
    else:
        try:
            reader = registry.open_reader(path, fmt, verify=False)
        except (BloscpackError, OSError) as exc:
            problem = exc
    if reader is not None:
        with contextlib.closing(reader):
            nbytes, problem = _reader_facts(reader, facts)
    if isinstance(problem, RemoteError) and report is not None:  # e.g. a server that serves
        reason = f"unknown ({problem})"  # no byte ranges: the report was read, the container
        for label in READER_LABELS:  # is fine; the reason once, on the first line unknown
            if label not in facts:
                facts[label], reason = reason, "unknown"
        problem = None
    if report is not None:
        facts["clevel"] = _clevel(report)
    if stored is not None:
        facts["stored"] = _bytes(stored)
        if problem is None and report is not None:  # else misleading
            ratio = "unknown" if nbytes is None else f"{nbytes / stored:.2f}" if stored else "-"
            facts["ratio"] = ratio
    if report is not None:
        facts["checksums"] = _checksums(report)
    return [(label, facts[label]) for label in SUMMARY_LABELS if label in facts], problem


#: Keys of a group named on its summary line, at most.
SHOWN_KEYS = 5


def _group_facts(path: Any, found: Any, facts: dict[str, str]
                 ) -> tuple[int | None, Exception | None]:  # fmt: skip
    """Fill in the array (the keys), size, chunks, codec and filters lines of a container of
    many arrays (a store) from each array's reader; return the uncompressed size and the first
    problem met."""
    from ..io.sources import ByteSource

    try:
        group = found.open_group(path)
    except (BloscpackError, OSError) as exc:
        return None, exc
    with contextlib.ExitStack() as stack:
        stack.callback(group.close)
        keys = group.keys()
        shown = ", ".join(keys[:SHOWN_KEYS]) + (", ..." if len(keys) > SHOWN_KEYS else "")
        facts["array"] = f"{_counted_arrays(len(keys))} by key" + (f": {shown}" if keys else "")
        nbytes, readers = 0, []
        try:
            for key in keys:
                member = group.member(key)
                source = member if isinstance(member, ByteSource) else ByteSource(member)
                fmt = registry.detect_source(source, whole=not isinstance(member, ByteSource))
                reader = stack.enter_context(
                    contextlib.closing(registry.open_reader(source, fmt, verify=False))
                )
                readers.append(reader)
                description = reader.description
                nbytes += math.prod(description.shape) * description.dtype.itemsize
        except (BloscpackError, OSError) as exc:
            return None, exc
        nchunks = sum(nchunks_of(reader) for reader in readers)
        facts["size"] = _bytes(nbytes)
        facts["chunks"] = f"{nchunks} (in {_counted_arrays(len(keys))})"
        remote = any(_remote(reader) for reader in readers)
        return nbytes, _codec_facts(readers, nchunks, remote, facts)


def _counted_arrays(n: int) -> str:
    return f"{n} array{'' if n == 1 else 's'}"


def format_summary(lines: list[tuple[str, str]]) -> str:
    """The summary lines as text: labels in a column."""
    return "\n".join(f"{label + ':':<{LABEL_WIDTH}}{text}" for label, text in lines)


def _reader_facts(reader: Any, facts: dict[str, str]) -> tuple[int | None, Exception | None]:
    """Fill in the array, size, chunks, codec and filters lines from ``reader``; return the
    uncompressed size and the first problem met."""
    description = reader.description
    table = isinstance(reader, TableReader)
    parts = [reader.column(c) for c in reader.columns] if table else [reader]
    try:
        raw = not reader.stored_metadata().is_array
    except (BloscpackError, OSError):
        raw = False
    if raw:
        facts["array"] = "none: raw bytes"
    else:
        facts["array"] = f"{_dtype(description.dtype)}, shape {tuple(description.shape)}"
    if raw:
        nbytes = sum(int(part.sizes.total) for part in parts)
    else:  # the array's bytes (chunks of a grid may be padded beyond them)
        nbytes = math.prod(description.shape) * description.dtype.itemsize
    facts["size"] = _bytes(nbytes)
    nchunks = sum(int(part.nchunks) for part in parts)
    facts["chunks"] = _chunk_text(parts, nchunks)
    return nbytes, _codec_facts(parts, nchunks, _remote(reader), facts)


def _codec_facts(parts: list[Any], nchunks: int, remote: bool,
                 facts: dict[str, str]) -> Exception | None:  # fmt: skip
    """Fill in the codec and filters lines from the chunk headers of the readers ``parts``
    (``nchunks`` chunks in all; ``remote``: at a URL, where only the first is read); return
    the first problem met."""
    codecs: Counter[str] = Counter()
    filters: Counter[str] = Counter()
    specials: Counter[str] = Counter()
    problem = None
    limit = 1 if remote else SCANNED_CHUNKS  # at a URL every header is a request
    try:
        for header in _chunk_headers(parts, limit):
            if header.special:
                specials[header.special.name.lower()] += 1
                continue
            codecs[_codec(header)] += 1
            filters[_filters(header)] += 1
    except (BloscpackError, OSError) as exc:
        problem = exc
    scanned = (
        ""
        if nchunks <= limit
        else (" (in the first chunk)" if limit == 1 else f" (in the first {limit} chunks)")
    )
    special = ", ".join(f"{_counted(n)} of {SPECIAL_NAMES.get(kind, kind)}"
                        for kind, n in sorted(specials.items()))  # fmt: skip
    facts["codec"] = (_tally(codecs) or ("-" if not special else "none")) + scanned
    if special:
        facts["codec"] += f"; {special}"
    facts["filters"] = (_tally(filters) or "-") + scanned
    return problem


def _remote(reader: Any) -> bool:
    try:
        return bool(reader.remote)
    except AttributeError:
        return False


def _chunk_headers(parts: list[Any], limit: int) -> Iterator[Any]:
    """The Blosc headers of the first ``limit`` chunks of ``parts``."""
    from ..blosc.header import ChunkHeader

    left = limit
    for part in parts:
        for index in range(min(int(part.nchunks), left)):
            try:
                header = ChunkHeader.parse(part.stored_chunk(index))
            finally:
                part.release()
            yield header
        left -= min(int(part.nchunks), left)


def _chunk_text(parts: list[Any], nchunks: int) -> str:
    text = f"{nchunks}"
    if len(parts) > 1:
        return f"{text} (in {len(parts)} columns)"
    sizes = parts[0].sizes
    if nchunks > 1 and sizes.every:
        last = sizes.of(nchunks - 1, nchunks)
        text += f" of {_bytes(sizes.every)}"
        if last != sizes.every:
            text += f", the last {_bytes(last)}"
    elif nchunks == 1:
        text += f" of {_bytes(sizes.total)}"
    chunk_shape = parts[0].description.chunks
    if chunk_shape is not None and len(chunk_shape) > 1:
        text += f", each of shape {tuple(chunk_shape)}"
    return text


def _counted(n: int) -> str:
    return f"{n} chunk{'' if n == 1 else 's'}"


def _codec(header: Any) -> str:
    """The codec of a chunk by name; Blosc1 headers store one code for lz4 and lz4hc."""
    name = str(header.codec)
    return "lz4 or lz4hc" if name == "lz4" and not header.extended else name


def _filters(header: Any) -> str:
    from ..blosc.header import Filter

    names = []
    for f in header.pipeline:
        if f == Filter.NOFILTER:
            continue
        try:
            names.append(Filter(f).name.lower())
        except ValueError:
            names.append(f"filter{f}")
    return " + ".join(names) or "none"


def _tally(counts: Counter[str]) -> str:
    """``zstd``, or ``lz4 (3 chunks), zstd (1 chunk)`` when chunks differ."""
    if len(counts) <= 1:
        return next(iter(counts), "")
    return ", ".join(f"{key} ({_counted(n)})"
                     for key, n in counts.most_common())  # fmt: skip


def _dtype(dtype: Any) -> str:
    if dtype.names:
        return "table of " + ", ".join(f"{n} {dtype.fields[n][0].str}" for n in dtype.names)
    return str(dtype) if dtype.kind not in "SUVmM" or dtype.byteorder == "|" else dtype.str


def _bytes(n: int) -> str:
    from ..progress import human_bytes

    exact = f"{n} byte" if n == 1 else f"{n} bytes"
    return exact if n < 1000 else f"{human_bytes(n)} ({exact})"


def _stored_size(path: Any) -> int | None:
    """Bytes the container takes where it is stored (a directory: its files)."""
    if isinstance(path, (str, os.PathLike)):
        try:
            return _size_of(os.fspath(path))
        except OSError:
            return None
    size = getattr(path, "size", None)
    try:
        return int(size()) if callable(size) else None
    except (TypeError, BloscpackError, OSError):
        return None


def _found(report: Any, key: str) -> list[Any]:
    """Every value of ``key`` in the report, depth first (tables: one per column)."""
    if isinstance(report, dict):
        here = [report[key]] if key in report else []
        return here + [v for k, value in report.items() if k != key for v in _found(value, key)]
    if isinstance(report, list):
        return [v for value in report for v in _found(value, key)]
    return []


def _clevel(report: dict[str, Any]) -> str:
    levels = sorted({c["clevel"] for c in _found(report, "cparams")
                     if isinstance(c, dict) and "clevel" in c})  # fmt: skip
    if not levels:
        return "not stored (Blosc chunks do not record it)"
    return ", ".join(map(str, levels))


def _checksums(report: dict[str, Any]) -> str:
    def named(values: list[Any]) -> str | None:
        kinds = sorted({str(v) for v in values if isinstance(v, str)})
        return ", ".join("none" if k == "None" else k for k in kinds) or None

    chunks, meta = named(_found(report, "checksum")), named(_found(report, "meta_checksum"))
    if chunks is None and meta is None:
        return "none (the format stores none)"
    parts = [f"{chunks} (chunks)"] if chunks else []
    return ", ".join(parts + ([f"{meta} (metadata)"] if meta else []))


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("latin-1")
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def format_info(report: dict[str, Any], indent: str = "") -> str:
    """Generic ``key: value`` text of an info report."""
    lines = []
    for key, value in report.items():
        if isinstance(value, dict) and value:
            lines.append(f"{indent}{key}:")
            lines.append(format_info(value, indent + "    "))
        elif isinstance(value, list) and len(value) > 8:
            shown = ", ".join(repr(v) for v in value[:5])
            lines.append(f"{indent}{key}: [{shown}, ...] ({len(value)} entries)")
        else:
            lines.append(
                f"{indent}{key}: {value!r}" if isinstance(value, str) else f"{indent}{key}: {value}"
            )
    return "\n".join(lines)
