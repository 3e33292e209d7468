"""``blpk refs``: byte-range references to a container's chunks, as kerchunk JSON."""

from __future__ import annotations

import argparse
import json

from .console import EXIT_OK, STDIO, Console
from .files import _check_input, _check_output
from .options import storage_options


def cmd_refs(args: argparse.Namespace, console: Console) -> int:
    """``refs``: the references of the container ``args.src`` (see
    :func:`bloscpack.to_references`) to ``-o`` or stdout."""
    from ..references import to_references, write_references

    _check_input(args.src)
    options = {"zarr_format": args.zarr_format, "storage_options": storage_options(args)}
    if args.output in (None, STDIO):
        console.plain(json.dumps(to_references(args.src, **options)))
        return EXIT_OK
    _check_output(args.output, args, console)
    refs = to_references(args.src, **options)
    write_references(refs, args.output)
    chunks = [value for key, value in refs["refs"].items() if "/." not in f"/{key}"]
    inlined = sum(isinstance(value, str) for value in chunks)
    console.result(
        f"{args.src} -> {args.output}: {len(chunks)} chunks referenced, {inlined} of them inlined"
    )
    return EXIT_OK
