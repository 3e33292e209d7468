"""``blpk decompress``: a container back into raw data or a ``.npy`` file."""

from __future__ import annotations

import argparse
import contextlib
from typing import IO, Any, NoReturn

from ..containers import registry
from ..containers.options import double_pretty_size
from .console import EXIT_OK, STDIO, CLIError, Console
from .files import (
    _advance,
    _check_input,
    _check_output,
    _format_metadata,
    _input_name,
    _input_stream,
    _into_directory,
    _is_remote,
    _output_file,
    _progress_bar,
    _same_file,
    _size_of,
    _spool_input,
    _stdout,
    _streamed,
    _strip_extension,
    _write_json,
)
from .options import EXTENSION, storage_options

#: Bytes read from the start of an input to recognise its format and size.
HEAD_BYTES = 32


def cmd_decompress(args: argparse.Namespace, console: Console) -> int:
    """``decompress``: any container (or stdin) back into the raw data, or into a ``.npy`` file
    when ``<out_file>`` ends with ``.npy``; to a file or to stdout."""
    in_file, out_file = args.in_file, args.out_file
    from_stdin = in_file == STDIO
    default = None  # the output's name when none is given
    if from_stdin:
        out_file = out_file or STDIO
    elif args.no_check_extension:
        if out_file is None:
            raise CLIError("--no-check-extension requires use of <out_file>")
    else:
        stripped = _strip_extension(in_file)
        if stripped is None:
            _refuse_unnamed(in_file)
        default = _local_name(stripped)
        out_file = out_file or default
    out_file = _into_directory(out_file, default)
    to_stdout = out_file == STDIO
    if not from_stdin:
        _check_input(in_file)
    if to_stdout:
        console.data_on_stdout()
    else:
        _check_output(out_file, args, console)
    if args.metadata_out is not None:
        _check_output(args.metadata_out, args, console)
    if not (from_stdin or to_stdout) and _same_file(in_file, out_file):
        raise CLIError(f"input and output are the same file: '{in_file}'")
    console.verbose(f"input file is: '{in_file}'")
    console.verbose(f"output file is: '{out_file}'")
    npy = not to_stdout and out_file.endswith(".npy")
    with contextlib.ExitStack() as stack:
        source: Any = in_file
        if _streamed(in_file):
            source = _stream_source(stack, console, in_file, npy)
        out = _stdout() if to_stdout else stack.enter_context(_output_file(out_file, args))
        metadata = _decompress_into(args, console, source, out, npy)
        out.flush()
    if metadata:
        console.result(_format_metadata(metadata))
    if args.metadata_out is not None:
        _write_json(args.metadata_out, metadata)
        console.verbose(f"metadata saved to: '{args.metadata_out}'")
    if not to_stdout and not _is_remote(out_file):
        console.verbose(f"output file size: {double_pretty_size(_size_of(out_file))}")
    return EXIT_OK


def _refuse_unnamed(in_file: str) -> NoReturn:
    """The input has none of the suffixes of the formats: 0.16's message (for a ``.npy`` file,
    what reads it)."""
    if registry.extension_of(in_file) == ".npy":
        raise CLIError(
            f"input file '{in_file}' is a NumPy .npy file, not a Blosc container: read it with"
            " numpy.load, or compress it with blpk c"
        )
    raise CLIError(f"input file '{in_file}' does not end with '{EXTENSION}'")  # 0.16's text


def _local_name(name: str) -> str:
    """The default output of ``name``: a URL's last part, in the current directory."""
    from ..url import is_url

    return name.rstrip("/").rsplit("/", 1)[-1] if is_url(name) else name


def _stream_source(stack: contextlib.ExitStack, console: Console, path: str, npy: bool) -> Any:
    """What to decompress from a streamed input (see :func:`_streamed`): a stream of a format
    whose data is written as stored (``.blp``) is read as it arrives, chunk by chunk; anything
    else (other formats, or a ``.npy`` output) is first copied to a temporary file."""
    from ..streaming import PrefixedReader, read_head

    stream = _input_stream(stack, path)
    head = read_head(stream, HEAD_BYTES)
    if not npy and registry.stream_format(head) is not None:
        return PrefixedReader(head, stream, _input_name(path))
    return _spool_input(stack, console, stream, path, head)


def _decompress_into(
    args: argparse.Namespace, console: Console, source: Any, out: IO[bytes], npy: bool
) -> Any:
    """Write what ``source`` (a path or a stream, see :func:`_stream_source`) holds to ``out``;
    return the metadata of a format written as stored, if any.  Such data (``.blp``) is
    written as stored, chunk by chunk; other formats and ``.npy`` outputs as the array in C
    order, a slab of rows at a time."""
    from ..url import is_url

    if isinstance(source, str) and is_url(source):  # read by ranges: written as an array
        from ..array import BloscArray
        from ..streaming import write_array

        with (
            BloscArray(source, storage_options=storage_options(args)) as array,
            _progress_bar(args, console, "decompress", lambda: array.nbytes) as bar,
        ):
            write_array(array, out, npy=npy, progress=_advance(bar))
        return None
    if isinstance(source, str):  # in one state of the file: appends and edits wait
        from ..journal import in_one_state

        return in_one_state(lambda path: _write_contents(args, console, path, out, npy), source)
    return _write_contents(args, console, source, out, npy)


def _write_contents(
    args: argparse.Namespace, console: Console, source: Any, out: IO[bytes], npy: bool
) -> Any:
    from ..streaming import buffer_size, write_array

    if isinstance(source, str):
        fmt = registry.detect(source)
    else:
        fmt = str(registry.stream_format(source.head))
    console.verbose(f"format: {fmt}")
    found = registry.format_of(fmt)
    if found.streams and not npy:
        if isinstance(source, str):
            with open(source, "rb") as fh:
                head = fh.read(HEAD_BYTES)
        else:
            head = source.head
        size, chunk_size = found.stream_size(head)
        with _progress_bar(args, console, "decompress", lambda: size) as bar:
            return found.write_stored(source, out, _advance(bar), buffer_size(chunk_size))
    from ..array import BloscArray

    with (
        BloscArray(source) as array,
        _progress_bar(args, console, "decompress", lambda: array.nbytes) as bar,
    ):
        write_array(array, out, npy=npy, progress=_advance(bar))
    return None
