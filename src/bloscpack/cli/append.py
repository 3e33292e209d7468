"""``blpk append``: the bytes of a file to the end of a ``.blp`` file."""

from __future__ import annotations

import argparse
import os

from ..containers.bloscpack.args import (
    double_pretty_size,
)
from ..remote.upload import local_output
from .console import EXIT_OK, CLIError, Console
from .files import _check_input, _counting, _progress_bar, _read_metadata_file, _same_file
from .options import EXTENSION


def cmd_append(args: argparse.Namespace, console: Console) -> int:
    """``append``: the bytes of a file to the end of a ``.blp`` file, crash-safely."""
    original, new = args.original_file, args.new_file
    if not args.no_check_extension and not original.endswith(EXTENSION):
        raise CLIError(f"original file '{original}' does not end with '{EXTENSION}'")
    original = local_output(original, "append to")  # refused for a URL but file://
    _check_input(original, "original file")
    _check_input(new, "new file")
    if _same_file(original, new):
        raise CLIError(f"cannot append a file to itself: '{original}'")
    console.verbose(f"original file is: '{original}'")
    console.verbose(f"new file is: '{new}'")
    metadata = _read_metadata_file(args.metadata)
    blosc_args = {
        "typesize": args.typesize,
        "clevel": args.clevel,
        "shuffle": args.shuffle,
        "cname": args.cname,
    }
    from ..containers.bloscpack.append import append

    size_before = os.path.getsize(original)
    new_size = os.path.getsize(new)
    with (
        _progress_bar(args, console, "append", lambda: new_size) as bar,
        _counting(bar, "compress"),
    ):
        nchunks = append(original, new, blosc_args=blosc_args, metadata=metadata)
    size_after = os.path.getsize(original)
    console.verbose(f"orig file size before append: {double_pretty_size(size_before)}")
    console.verbose(f"orig file size after append: {double_pretty_size(size_after)}")
    console.verbose(f"new chunks written: {nchunks}")
    return EXIT_OK
