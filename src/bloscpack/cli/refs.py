"""``blpk refs``: byte-range references to a container's chunks, as kerchunk JSON (parquet to
a ``.parq`` directory); with ``--verify``, whether the files of written references are still
as they were."""

from __future__ import annotations

import argparse
import json
import os

from .console import EXIT_ERROR, EXIT_OK, PROG, STDIO, CLIError, Console
from .files import _check_input, _check_output
from .options import storage_options


def cmd_refs(args: argparse.Namespace, console: Console) -> int:
    """``refs``: the references of the container ``args.src`` (see
    :func:`bloscpack.to_references`) to ``-o`` or stdout."""
    from ..references import to_references, write_references

    if args.verify:
        return _verify(args, console)
    _check_input(args.src)
    options = {"zarr_format": args.zarr_format, "codec": args.codec,
               "storage_options": storage_options(args)}  # fmt: skip
    if args.output in (None, STDIO):
        console.plain(json.dumps(to_references(args.src, **options)))
        return EXIT_OK
    if args.output.rstrip("/").endswith((".parq", ".parquet")):  # (a directory, replaced)
        if os.path.lexists(args.output) and not args.force:
            raise CLIError(f"output '{args.output}' exists!")
    else:
        _check_output(args.output, args, console)
    refs = to_references(args.src, **options)
    write_references(refs, args.output)
    chunks = [value for value in refs["refs"].values()
              if isinstance(value, list) or value.startswith("base64:")]  # fmt: skip
    inlined = sum(isinstance(value, str) for value in chunks)
    filled = refs["bloscpack"]["filled"]
    console.result(
        f"{args.src} -> {args.output}: {len(chunks)} chunks referenced, {inlined} of them inlined"
        + (
            f", {filled} special chunk{'s' if filled > 1 else ''} read as the fill value"
            if filled
            else ""
        )
    )
    return EXIT_OK


def _verify(args: argparse.Namespace, console: Console) -> int:
    """``refs --verify``: one line for the references ``args.src``, ``ok`` or ``STALE``
    followed by one line per changed file; exit 1 when stale."""
    from ..references import verify_references

    if args.output is not None or args.zarr_format != 2 or args.codec != "stock":
        raise CLIError("--verify checks references: -o, --zarr-format and --codec do not apply")
    _check_input(args.src, "references file")
    report = verify_references(args.src, storage_options=storage_options(args))
    count = f"{report['files']} file" + ("" if report["files"] == 1 else "s")
    if report["ok"]:
        console.result(f"{args.src}: ok ({report['source']}: {count} unchanged)")
        return EXIT_OK
    changed = report["changed"]
    print(f"{PROG}: {args.src}: STALE ({report['source']}: {len(changed)} of {count} changed)",
          file=console.out)  # fmt: skip
    for file, what in changed.items():
        said = ", ".join(f"{key} {old} -> {new}" for key, (old, new) in what.items())
        print(f"{PROG}:   {file}: {said}", file=console.out)
    return EXIT_ERROR
