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
            _print_verify_report(report, console)
    if args.json:
        console.plain(
            json.dumps(reports if len(reports) > 1 else reports[0], indent=2, default=_json_default)
        )
    return EXIT_OK if all(r["ok"] for r in reports) else EXIT_ERROR


def _verify_one(args: argparse.Namespace, console: Console, path: str) -> dict[str, Any]:
    """The :func:`bloscpack.verify` report of ``path`` (``--strict``: under the strict rule),
    with a progress bar."""
    from ..dispatch import verify
    from ..errors import BloscpackError

    options = storage_options(args)
    with (
        _progress_bar(args, console, "verify", lambda: _array_nbytes(path, options)) as bar,
        _counting(bar, "decompress"),
    ):
        try:
            return verify(path, storage_options=options, strict=args.strict)
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
        "data_verified": False,
        "notes": [],
    }


def _print_verify_report(report: dict[str, Any], console: Console) -> None:
    """One line for the file: ``ok``, ``structure ok, data not verifiable`` (no checksums:
    changed data that still decodes would not be seen) or ``FAILED``; a failure with bad
    chunks, or of a file that could not be read, is followed by one line per bad chunk and
    problem."""
    path, nchunks = report["file"], report.get("nchunks")
    nchunks = nchunks if isinstance(nchunks, int) else None
    counted = _counted(nchunks or 0)
    if report["ok"]:
        if report.get("data_verified"):
            console.result(f"{path}: ok ({report['format']}, {counted})")
        else:
            console.result(f"{path}: structure ok, data not verifiable ({report['format']},"
                           f" {counted}, no checksums)")  # fmt: skip
        for note in report.get("notes") or []:
            console.result(f"  note: {_one_line(note)}")
        return
    bad = report.get("bad_chunks") or []
    problems = report.get("problems") or []
    fmt = report.get("format") or "unknown format"
    if nchunks is not None and problems and not bad:  # the problems say what is wrong
        why = "; ".join(_one_line(problem) for problem in problems)
        print(f"{PROG}: {path}: FAILED ({fmt}, {counted}): {why}", file=console.out)
        return
    counted = f"{len(bad)} of {_counted(nchunks)} bad" if nchunks is not None else "unreadable"
    print(f"{PROG}: {path}: FAILED ({fmt}, {counted})", file=console.out)
    for entry in bad:
        print(f"{PROG}:   chunk {entry['index']}: {_one_line(entry['error'])}", file=console.out)
    for problem in problems:
        print(f"{PROG}:   {_one_line(problem)}", file=console.out)
