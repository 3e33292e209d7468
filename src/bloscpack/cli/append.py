"""``blpk append``: the bytes of a file (or the rows of a ``.npy`` file) appended to a container
of any format that grows, in place."""

from __future__ import annotations

import argparse
import contextlib
import mmap
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..args import double_pretty_size
from ..containers import registry
from ..errors import NotEnoughSpace
from ..io.paths import is_stream
from .console import EXIT_OK, CLIError, Console
from .files import _check_input, _counting, _progress_bar, _read_metadata_file, _same_file
from .options import EXTENSION


def cmd_append(args: argparse.Namespace, console: Console) -> int:
    """``append``: the bytes of a file (the rows of a ``.npy`` file) to the end of a container
    of any format that grows (see :func:`bloscpack.append`), crash-safely."""
    from ..dispatch import append, appendable_path

    original, new = args.original_file, args.new_file
    if not args.no_check_extension and registry.by_extension(original) is None:
        raise CLIError(f"original file '{original}' does not end with '{EXTENSION}'")  # 0.16's text
    original = appendable_path(original)  # refused for a URL but file://, and for a device
    _check_input(original, "original file")
    _check_input(new, "new file")
    if _same_file(original, new):
        raise CLIError(f"cannot append a file to itself: '{original}'")
    console.verbose(f"original file is: '{original}'")
    console.verbose(f"new file is: '{new}'")
    options = _format_options(args, original)
    size_before = _size(original)
    new_size = os.path.getsize(new)
    with (
        _progress_bar(args, console, "append", lambda: new_size) as bar,
        _counting(bar, "compress"),
        _new_data(new, original) as data,
    ):
        try:
            length = append(original, data, **options)
        except NotEnoughSpace as exc:
            raise CLIError(exc.cli) from None
    console.verbose(f"orig file size before append: {double_pretty_size(size_before)}")
    console.verbose(f"orig file size after append: {double_pretty_size(_size(original))}")
    console.verbose(f"length after append: {length}")
    return EXIT_OK


def _format_options(args: argparse.Namespace, original: str) -> dict[str, Any]:
    """The options of ``-t/-l/-s/-c`` and ``-m`` for the append to ``original``, refused by
    name for a format whose appends take none (they use the container's own parameters)."""
    blosc_args = {"typesize": args.typesize, "clevel": args.clevel, "shuffle": args.shuffle,
                  "cname": args.cname}  # fmt: skip
    metadata = _read_metadata_file(args.metadata)
    wanted = {
        "blosc_args": (blosc_args, any(v is not None for v in blosc_args.values()), "-t/-l/-s/-c"),
        "metadata": (metadata, metadata is not None, "-m/--metadata"),
    }
    fmt = registry.detect(original)
    taken = registry.appender(fmt, original).append_options
    for name, (_, given, flags) in wanted.items():
        if given and name not in taken:
            raise CLIError(
                f"{flags} do not apply to '{original}' ({registry.get(fmt).description}): its"
                " appends use its own compression parameters and metadata"
            )
    return {name: value for name, (value, _, _) in wanted.items() if name in taken}


@contextlib.contextmanager
def _new_data(path: str, original: str) -> Iterator[Any]:
    """The data to append from ``path`` to ``original``: the rows of a ``.npy`` file, unless
    ``original`` holds raw bytes (a 1-d ``uint8`` array) the rows do not fit, which take the
    file's bytes, header and all, as bloscpack 0.16 appended them; else its bytes (mapped, not
    read into memory)."""
    if registry.extension_of(path) == ".npy":
        rows = np.load(path, mmap_mode="r", allow_pickle=False)
        from ..dispatch import held_array

        held = held_array(original)[1]
        if rows.dtype == held.dtype or held.dtype != np.uint8 or len(held.shape) != 1:
            yield rows
            return
    if is_stream(path):  # a FIFO, /proc: read to its end
        with open(path, "rb") as fh:
            yield fh.read()
        return
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        # unmapped when no longer referenced (rows viewing it may outlive the block)
        yield memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)) if size else b""


def _size(path: str) -> int:
    """Bytes of the file or directory container ``path``."""
    if not os.path.isdir(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(path) for name in names)  # fmt: skip
