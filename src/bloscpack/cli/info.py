"""``blpk info``: what a container holds, as text or JSON."""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .console import EXIT_OK, STDIO, Console
from .files import _check_input, _format_metadata, _sized_input
from .options import storage_options

if TYPE_CHECKING:
    from ..blosc.header import ChunkHeader


def cmd_info(args: argparse.Namespace, console: Console) -> int:
    """``info``: what a container holds (0.16's text for ``.blp``, or ``--json``)."""
    from ..containers.registry import describe, opened_url
    from ..url import is_url

    with contextlib.ExitStack() as stack:
        if args.file_ != STDIO:
            _check_input(args.file_, "file")
        if is_url(args.file_):
            fmt, path = stack.enter_context(opened_url(args.file_, storage_options(args)))
        else:
            path = _sized_input(stack, console, args.file_)
            fmt = None
        report = console.unalias(describe(path, fmt))
        fmt = report["format"]
        first = _first_chunk_header(path, report) if fmt == "blp" and not args.json else None
    if args.json:
        console.plain(json.dumps(report, indent=2, sort_keys=True, default=_json_default))
    elif fmt == "blp":
        console.result(format_blp_info(report, first))
    else:
        console.result(format_info(report))
    return EXIT_OK


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


def _first_chunk_header(path: Any, report: dict[str, Any]) -> ChunkHeader | None:
    """The header of the first chunk of the ``.blp`` file ``path`` (or opened source)."""
    from ..blosc.header import ChunkHeader

    chunks = report.get("chunks") or []
    if not chunks:
        return None
    if not isinstance(path, str):
        return ChunkHeader.parse(path.read_upto(chunks[0]["offset"], 32))
    with open(path, "rb") as fh:
        fh.seek(chunks[0]["offset"])
        return ChunkHeader.parse(fh.read(32))


def format_blp_info(report: dict[str, Any], first: ChunkHeader | None) -> str:
    """The text bloscpack 0.16's ``blpk info`` printed for a ``.blp`` file."""
    from ..containers.bloscpack.header import BloscpackHeader, MetadataHeader

    lines = [BloscpackHeader(**report["header"]).pformat()]
    offsets = report.get("offsets")
    if offsets:
        lines.append("'offsets':")
        lines.append("[{},...]".format(",".join(str(o) for o in offsets[:5])))
    if report.get("metadata") is not None:
        lines.append(_format_metadata(report["metadata"]))
        meta_fields = {
            k: v.encode("latin-1") if k in ("magic_format", "user_codec") else v
            for k, v in report["metadata_header"].items()
        }
        lines.append(MetadataHeader(**meta_fields).pformat())
    if first is not None:
        lines.append("First chunk blosc header:")
        names = ("version", "versionlz", "flags", "typesize", "nbytes", "blocksize")
        header_items = [(n, getattr(first, n)) for n in names] + [("ctbytes", first.cbytes)]
        lines.append(_ordered_dict_repr(header_items))
        # 0.16's labels (bit 4 is really "do not split"; lz4hc chunks show as lz4)
        codecs = ("blosclz", "lz4", "snappy", "zlib", "zstd")
        flags, code = first.flags, first.flags >> 5
        lines.append("First chunk blosc flags: ")
        flag_items = [
            ("byte_shuffle", bool(flags & 0x01)), ("pure_memcpy", bool(flags & 0x02)),
            ("bit_shuffle", bool(flags & 0x04)), ("split_blocks", bool(flags & 0x10)),
            ("codec", codecs[code] if code < len(codecs) else f"format{code}"),
        ]  # fmt: skip
        lines.append(_ordered_dict_repr(flag_items))
    return "\n".join(lines)


def _ordered_dict_repr(items: Sequence[tuple[str, Any]]) -> str:
    return "OrderedDict([" + ", ".join(f"({k!r}, {v!r})" for k, v in items) + "])"
