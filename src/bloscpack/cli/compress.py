"""``blpk compress``: a file or stdin into a container."""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
from typing import Any

from ..containers import registry as _registry
from ..containers.options import double_pretty_size
from .console import EXIT_OK, EXIT_USAGE, STDIO, CLIError, Console
from .files import (
    _check_input,
    _check_output,
    _copy_file,
    _counting,
    _input_stream,
    _into_directory,
    _is_remote,
    _is_terminal,
    _output_format,
    _output_stream,
    _progress_bar,
    _read_metadata_file,
    _regular_file_size,
    _same_file,
    _scratch,
    _size_of,
    _spool_input,
    _streamed,
)
from .options import storage_options

#: Flags that set one format's own options, and the option (also the parsed argument's name).
_OWN_FLAGS = (("-k", "checksum"), ("-o", "offsets"), ("--max-app-chunks", "max_app_chunks"),
              ("--order-record", "order_record"))  # fmt: skip


def cmd_compress(args: argparse.Namespace, console: Console) -> int:
    """``compress``: a file (or stdin) into a container (``.blp`` by default), to a file or to
    stdout."""
    from ..dispatch import compress_file

    in_file = args.in_file
    from_stdin = in_file == STDIO
    args.format = _output_format(args.out_file, args.format)
    found = _registry.get(args.format)
    default = None if from_stdin else in_file + found.extension
    out_file = _into_directory(args.out_file, default) if args.out_file else default or STDIO
    to_stdout = out_file == STDIO
    if not from_stdin:
        _check_input(in_file)
        _refuse_compressed(in_file, args.force)
        if os.path.isdir(in_file):
            raise CLIError(f"input file '{in_file}' is a directory")
    if to_stdout:
        console.data_on_stdout()
        if found.directory:
            raise CLIError(
                f"--format {args.format} writes a directory, which cannot go to stdout", EXIT_USAGE
            )
        if _is_terminal(sys.stdout) and not args.force:
            raise CLIError("compressed data not written to a terminal (use -f to force)")
    else:
        _check_output(out_file, args, console, args.format if found.directory else None)
        if not from_stdin and _same_file(in_file, out_file):
            raise CLIError(f"input and output are the same file: '{in_file}'")
    console.verbose(f"input file is: '{in_file}'")
    console.verbose(f"output file is: '{out_file}'")
    options = _options(args, in_file)
    options["metadata"] = _read_metadata_file(args.metadata)
    with contextlib.ExitStack() as stack:
        out = _output_stream(stack, out_file)
        raw = args.dtype is None and not in_file.endswith(".npy")
        streams = raw and _registry.get(args.format).streams  # bytes written as they come
        source: Any = in_file
        if _streamed(in_file):
            source = _input_stream(stack, in_file)
            if not streams:  # the whole input is needed
                source = _spool_input(stack, console, source, in_file)
        in_size = os.path.getsize(source) if isinstance(source, str) else _regular_file_size(source)
        if in_size is not None:
            console.verbose(f"input file size: {double_pretty_size(in_size)}")
        scratch = None
        if out is not None and not streams:  # built whole, then copied to the stream
            scratch = os.path.join(_scratch(stack), "out" + found.extension)
        target = scratch or out or out_file
        total = functools.partial(_input_nbytes, source, in_size)
        with _progress_bar(args, console, "compress", total) as bar, _counting(bar, "compress"):
            compress_file(source, target, args.format, storage_options=storage_options(args),
                          **options)  # fmt: skip
        if out is not None:
            if scratch is not None:
                _copy_file(scratch, out)
            out.flush()
    if out is None and not _is_remote(out_file):
        out_size = _size_of(out_file)
        console.verbose(f"output file size: {double_pretty_size(out_size)}")
        if out_size and in_size is not None:
            console.verbose(f"compression ratio: {in_size / out_size:.6f}")
    return EXIT_OK


def _refuse_compressed(in_file: str, force: bool) -> None:
    """As ``gzip`` does: an input named as a container (any suffix a format is written with)
    is not compressed again, unless ``-f`` (then the formats other packages add are not even
    loaded to know their suffixes)."""
    if force:
        return
    found = _registry.by_extension(in_file)
    if found is not None:
        raise CLIError(
            f"{in_file} already has the {found.extension} suffix -- unchanged"
            " (use -f to compress it again)"
        )


def _options(args: argparse.Namespace, in_file: str) -> dict[str, Any]:
    """The writer options the flags give, by their common names (``-c`` as ``codec``, ``-s``
    as ``filters``, ``-z`` as ``chunk_size``, ``-t`` as ``typesize``) and, for the flags of one
    format's own settings, by that format's names (refused for other formats)."""
    if args.shape is not None and args.dtype is None:
        raise CLIError("--shape needs --dtype (the item type of the raw input)", EXIT_USAGE)
    if args.dtype is not None and in_file.endswith(".npy"):
        raise CLIError("--dtype does not apply to .npy input: its dtype is used", EXIT_USAGE)
    if args.dtype is not None and args.typesize is not None:
        raise CLIError("-t does not apply with --dtype: the item size is used", EXIT_USAGE)
    if in_file.endswith(".npy") and args.typesize is not None:
        raise CLIError("-t does not apply to .npy input: its dtype is used", EXIT_USAGE)
    typed = not _registry.get(args.format).holds_bytes  # raw input becomes unsigned ints
    if typed and args.typesize not in (None, 1, 2, 4, 8):
        raise CLIError("-t must be 1, 2, 4 or 8 for the array formats", EXIT_USAGE)
    given = {
        "codec": args.cname, "clevel": args.clevel, "chunk_size": args.chunk_size,
        "typesize": args.typesize, "dtype": args.dtype, "shape": args.shape,
        "filters": None if args.shuffle is None else ["shuffle"] if args.shuffle else [],
    }  # fmt: skip
    options = {name: value for name, value in given.items() if value is not None}
    for flag, name in _OWN_FLAGS:
        value = getattr(args, name)
        if value is None or (name == "offsets" and value):
            continue
        if not _registry.get(args.format).accepts(name):
            formats = [f.name for f in _registry.FORMATS.values() if f.accepts(name)]
            raise CLIError(f"{flag} applies to --format {', '.join(formats)} only", EXIT_USAGE)
        options[name] = value
    return options


def _input_nbytes(source: Any, size: int | None) -> int | None:
    """Bytes the compression reads: a ``.npy`` file's array, else the input's size."""
    if isinstance(source, str) and source.endswith(".npy"):
        from ..streaming import map_npy

        return int(map_npy(source, source).nbytes)
    return size
