"""``blpk verify``: every checksum and chunk of one or more containers."""

from __future__ import annotations

import argparse
import contextlib
import json
from typing import Any

from .console import EXIT_ERROR, EXIT_OK, PROG, STDIO, CLIError, Console, _describe, _one_line
from .files import _array_nbytes, _check_input, _counting, _progress_bar, _sized_input
from .info import _counted, _json_default
from .options import storage_options


def cmd_verify(args: argparse.Namespace, console: Console) -> int:
    """``verify``: check every checksum and decode every chunk of every file, as ``gzip -t``
    does: one line each (a file that cannot be opened: an error line), and exit 1 if anything
    is wrong with any of them."""
    from ..errors import BloscpackError

    reports = []
    for name in args.files:
        try:
            with contextlib.ExitStack() as stack:
                if name != STDIO:
                    _check_input(name, "file")
                path = _sized_input(stack, console, name)
                report = _verify_one(args, console, path)
        except (CLIError, OSError, BloscpackError) as exc:  # the next file is still checked
            console.error(_describe(exc))
            report = _unreadable(_describe(exc))
            if not args.json:
                reports.append({"file": name, **report})
                continue
        report = {"file": name, **console.unalias(report)}
        reports.append(report)
        if not args.json:
            _print_verify_report(report, console, args.strict)
    if args.json:
        console.plain(
            json.dumps(reports if len(reports) > 1 else reports[0], indent=2, default=_json_default)
        )
    return EXIT_OK if all(_passed(r, args.strict) for r in reports) else EXIT_ERROR


def _passed(report: dict[str, Any], strict: bool) -> bool:
    """The file is fine (with ``--strict``: and checksums cover its chunks)."""
    return bool(report["ok"]) and (not strict or report.get("verifiable", True) is not False)


def _verify_one(args: argparse.Namespace, console: Console, path: str) -> dict[str, Any]:
    """The :func:`bloscpack.verify` report of ``path``, with a progress bar."""
    from ..dispatch import verify
    from ..errors import BloscpackError

    options = storage_options(args)
    with (
        _progress_bar(args, console, "verify", lambda: _array_nbytes(path, options)) as bar,
        _counting(bar, "decompress"),
    ):
        try:
            return verify(path, storage_options=options)
        except BloscpackError as exc:
            return _unreadable(str(exc))


def _unreadable(problem: str) -> dict[str, Any]:
    """The report of a file that could not be read as a container."""
    return {
        "format": None,
        "ok": False,
        "nchunks": None,
        "bad_chunks": [],
        "problems": [_one_line(problem)],
        "verifiable": False,
        "notes": [],
    }


def _print_verify_report(report: dict[str, Any], console: Console, strict: bool) -> None:
    path, nchunks = report["file"], report.get("nchunks")
    nchunks = nchunks if isinstance(nchunks, int) else None
    unchecked = report.get("verifiable") is False
    notes = [n for n in report.get("notes") or [] if not n.startswith("not verifiable")]
    if report["ok"] and not (strict and unchecked):
        extra = ", no checksums" if unchecked else ""
        console.result(f"{path}: ok ({report['format']}, {_counted(nchunks or 0)}{extra})")
        for note in notes:
            console.result(f"  note: {_one_line(note)}")
        return
    if report["ok"]:  # --strict, and no checksum covers the chunks
        print(f"{PROG}: {path}: FAILED ({report['format']}, {_counted(nchunks or 0)}, not"
              " verifiable: no checksums cover the chunks)", file=console.out)  # fmt: skip
        return
    bad = report.get("bad_chunks") or []
    problems = report.get("problems") or []
    counted = f"{len(bad)} of {_counted(nchunks)} bad" if nchunks is not None else "unreadable"
    print(
        f"{PROG}: {path}: FAILED ({report.get('format') or 'unknown format'}, {counted})",
        file=console.out,
    )
    for entry in bad:
        print(f"{PROG}:   chunk {entry['index']}: {_one_line(entry['error'])}", file=console.out)
    for problem in problems:
        print(f"{PROG}:   {_one_line(problem)}", file=console.out)
