"""``blpk info``: what a container holds, as text or JSON."""

from __future__ import annotations

import argparse
import contextlib
import json
from typing import Any

from ..containers import registry
from .console import EXIT_OK, STDIO, Console
from .files import _check_input, _sized_input
from .options import storage_options


def cmd_info(args: argparse.Namespace, console: Console) -> int:
    """``info``: what a container holds (the format's own text where it has one, as 0.16's
    for ``.blp``; or ``--json``)."""
    from ..url import is_url

    with contextlib.ExitStack() as stack:
        if args.file_ != STDIO:
            _check_input(args.file_, "file")
        if is_url(args.file_):
            fmt, path = stack.enter_context(registry.opened_url(args.file_, storage_options(args)))
        else:
            path = _sized_input(stack, console, args.file_)
            fmt = None
        report = console.unalias(registry.describe(path, fmt))
        if args.json:
            console.plain(json.dumps(report, indent=2, sort_keys=True, default=_json_default))
            return EXIT_OK
        own_text = registry.hook(report["format"], "info_text")
        console.result(own_text(path, report) if own_text else format_info(report))
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
