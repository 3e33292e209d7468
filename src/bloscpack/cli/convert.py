"""``blpk convert``: a container into another format."""

from __future__ import annotations

import argparse
import contextlib
import json
from typing import Any

from ..containers import registry as _registry
from .console import EXIT_OK, EXIT_USAGE, STDIO, CLIError, Console
from .files import (
    _advance,
    _array_nbytes,
    _check_input,
    _check_output,
    _into_directory,
    _output_format,
    _progress_bar,
    _sized_input,
    _strip_extension,
)
from .options import storage_options


def cmd_convert(args: argparse.Namespace, console: Console) -> int:
    """``convert``: a container into another format (see :func:`bloscpack.convert`)."""
    from ..convert import convert

    if args.dst == STDIO:
        raise CLIError("convert writes files and directories, not stdout", EXIT_USAGE)
    if args.src != STDIO:
        _check_input(args.src)
    fmt = _output_format(args.dst, args.format)
    found = _registry.get(fmt)
    name = None if args.src == STDIO else (_strip_extension(args.src) or args.src) + found.extension
    args.dst = _into_directory(args.dst, name)
    options: dict[str, Any] = {}
    if args.sparse:
        options["sparse"] = True
    _check_output(args.dst, args, console, fmt if found.writes_directory(options) else None)
    if args.clevel is not None:
        options["clevel"] = args.clevel
    if args.codec is not None:
        options["codec"] = args.codec
    if args.max_app_chunks is not None:
        options["max_app_chunks"] = args.max_app_chunks
    if args.order_record:
        options["order_record"] = True
    with contextlib.ExitStack() as stack:
        src = _sized_input(stack, console, args.src)
        remote = storage_options(args)
        with _progress_bar(args, console, "convert", lambda: _array_nbytes(src, remote)) as bar:
            report = convert(src, args.dst, fmt, overwrite=args.force,
                             copy_chunks=not args.recompress, progress=_advance(bar),
                             storage_options=remote, **options)  # fmt: skip
        report = console.unalias(report)
    if args.json:
        console.plain(json.dumps(report, indent=2))
        return EXIT_OK
    console.result(
        f"{args.src} ({report['source_format']}) -> {args.dst} ({report['format']}):"
        f" {report['copied_chunks']} chunks copied, {report['recompressed_chunks']} recompressed"
    )
    for line in report["dropped"]:
        console.result(f"dropped: {line}")
    return EXIT_OK
