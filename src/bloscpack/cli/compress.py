"""``blpk compress``: a file or stdin into a container."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import IO, Any

from ..containers.bloscpack.args import (
    DEFAULT_CHECKSUM,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_CLEVEL,
    DEFAULT_CNAME,
    DEFAULT_TYPESIZE,
    double_pretty_size,
)
from .console import EXIT_OK, EXIT_USAGE, STDIO, CLIError, Console
from .files import (
    _check_input,
    _check_output,
    _copy_file,
    _counting,
    _input_stream,
    _is_terminal,
    _output_format,
    _output_stream,
    _progress_bar,
    _read_metadata_file,
    _regular_file_size,
    _same_file,
    _scratch,
    _seekable,
    _size_of,
    _spool_input,
    _streamed,
)
from .options import FORMAT_EXTENSIONS


def cmd_compress(args: argparse.Namespace, console: Console) -> int:
    """``compress``: a file (or stdin) into a container (``.blp`` by default), to a file or to
    stdout."""
    in_file = args.in_file
    from_stdin = in_file == STDIO
    args.format = _output_format(args.out_file, args.format)
    out_file = args.out_file or (STDIO if from_stdin else in_file + FORMAT_EXTENSIONS[args.format])
    to_stdout = out_file == STDIO
    if not from_stdin:
        _check_input(in_file)
        if os.path.isdir(in_file):
            raise CLIError(f"input file '{in_file}' is a directory")
    if to_stdout:
        console.data_on_stdout()
        if args.format in ("sframe", "bcolz"):
            raise CLIError(
                f"--format {args.format} writes a directory, which cannot go to stdout", EXIT_USAGE
            )
        if _is_terminal(sys.stdout) and not args.force:
            raise CLIError("compressed data not written to a terminal (use -f to force)")
    else:
        directory = args.format if args.format in ("sframe", "bcolz") else None
        _check_output(out_file, args, console, directory)
        if not from_stdin and _same_file(in_file, out_file):
            raise CLIError(f"input and output are the same file: '{in_file}'")
    console.verbose(f"input file is: '{in_file}'")
    console.verbose(f"output file is: '{out_file}'")
    metadata = _read_metadata_file(args.metadata)
    with contextlib.ExitStack() as stack:
        out = _output_stream(stack, out_file)
        source, stream = in_file, None
        if _streamed(in_file):
            stream = _input_stream(stack, in_file)
            if not _streams_to_blp(args, in_file):  # these need the whole input
                source, stream = _spool_input(stack, console, stream, in_file), None
        in_size = os.path.getsize(source) if stream is None else _regular_file_size(stream)
        if in_size is not None:
            console.verbose(f"input file size: {double_pretty_size(in_size)}")
        if _streams_to_blp(args, in_file):
            _compress_blp(args, console, source, stream, out or out_file, metadata)
        else:
            target = out_file
            if out is not None:
                target = os.path.join(_scratch(stack), "out" + FORMAT_EXTENSIONS[args.format])
            with (
                _progress_bar(args, console, "compress", lambda: in_size) as bar,
                _counting(bar, "compress"),
            ):
                _compress_other(args, source, target, metadata)
            if out is not None:
                _copy_file(target, out)
    if out is None:
        out_size = _size_of(out_file)
        console.verbose(f"output file size: {double_pretty_size(out_size)}")
        if out_size and in_size is not None:
            console.verbose(f"compression ratio: {in_size / out_size:.6f}")
    return EXIT_OK


def _streams_to_blp(args: argparse.Namespace, in_file: str) -> bool:
    """Whether ``compress`` writes a ``.blp`` file from the input's bytes as they come."""
    if args.shape is not None and args.dtype is None:
        raise CLIError("--shape needs --dtype (the item type of the raw input)", EXIT_USAGE)
    if args.dtype is not None and in_file.endswith(".npy"):
        raise CLIError("--dtype does not apply to .npy input: its dtype is used", EXIT_USAGE)
    if args.dtype is not None and args.typesize is not None:
        raise CLIError("-t does not apply with --dtype: the item size is used", EXIT_USAGE)
    return args.format == "blp" and args.dtype is None


def _compress_blp(
    args: argparse.Namespace,
    console: Console,
    in_file: str,
    stream: IO[bytes] | None,
    target: str | IO[bytes],
    metadata: Any,
) -> None:
    """``.blp`` from a file, a ``.npy`` file (stored as an array) or ``stream`` (the input, read
    to its end when its size is unknown), to a file or an output stream.  A pipe gets no
    offsets section; from a stream, a stream of unknown length (``nchunks`` -1) unless the
    output can be rewritten (a file, or a redirected stdout)."""
    from ..api import pack_file_to_file, pack_npy_file_to_file
    from ..containers.bloscpack.args import BloscArgs, BloscpackArgs, MetadataArgs

    npy = stream is None and in_file.endswith(".npy")
    if npy and args.typesize is not None:
        raise CLIError("-t does not apply to .npy input: its dtype is used", EXIT_USAGE)
    if npy and metadata is not None:
        raise CLIError(
            "-m does not apply to .npy input with --format blp: the metadata holds the array's"
            " dtype and shape",
            EXIT_USAGE,
        )
    blosc_args = BloscArgs(
        typesize=DEFAULT_TYPESIZE if args.typesize is None else args.typesize,
        clevel=DEFAULT_CLEVEL if args.clevel is None else args.clevel,
        shuffle=True if args.shuffle is None else args.shuffle,
        cname=args.cname or DEFAULT_CNAME,
    )
    offsets = args.offsets and (isinstance(target, str) or _seekable(target))
    bloscpack_args = BloscpackArgs(offsets=offsets, checksum=args.checksum or DEFAULT_CHECKSUM)
    if args.max_app_chunks is not None:
        bloscpack_args.max_app_chunks = args.max_app_chunks
    chunk_size = args.chunk_size or DEFAULT_CHUNK_SIZE

    def total() -> int | None:
        if stream is not None:
            return _regular_file_size(stream)
        if npy:
            import numpy as np

            return int(np.load(in_file, mmap_mode="r", allow_pickle=False).nbytes)
        return os.path.getsize(in_file)

    with _progress_bar(args, console, "compress", total) as bar, _counting(bar, "compress"):
        if stream is not None:
            _compress_stream_blp(stream, target, chunk_size, blosc_args, bloscpack_args, metadata)
        elif npy:
            pack_npy_file_to_file(
                in_file, target, chunk_size, blosc_args, bloscpack_args, MetadataArgs()
            )
        else:
            pack_file_to_file(in_file, target, chunk_size=chunk_size, metadata=metadata,
                              blosc_args=blosc_args, bloscpack_args=bloscpack_args,
                              metadata_args=MetadataArgs())  # fmt: skip
    if not isinstance(target, str):
        target.flush()


def _compress_stream_blp(
    stream: IO[bytes],
    target: Any,
    chunk_size: str | int,
    blosc_args: Any,
    bloscpack_args: Any,
    metadata: Any,
) -> None:
    """``stream`` into a :class:`~bloscpack.BloscFile` writing ``target`` (a path or stdout):
    each chunk is compressed as soon as it has been read."""
    from ..containers.bloscpack.args import parse_chunk_size
    from ..containers.bloscpack.file import BloscFile
    from ..streaming import buffer_size, copy_into_blp

    with BloscFile(target, "wb", chunk_size=chunk_size, blosc_args=blosc_args,
                   bloscpack_args=bloscpack_args, metadata=metadata) as blp:  # fmt: skip
        copy_into_blp(stream, blp, buffer_size(parse_chunk_size(chunk_size)))


def _compress_other(args: argparse.Namespace, in_file: str, out_file: str, metadata: Any) -> None:
    """``--format b2frame|b2nd|sframe|bcolz``, or an array (``--dtype``) to ``.blp``: unset
    options take the format's own defaults."""
    if args.format == "blp":
        _compress_raw_array_blp(args, in_file, out_file, metadata)
        return
    for flag, value in (
        ("-k", args.checksum),
        ("-o", None if args.offsets else True),
        ("--max-app-chunks", args.max_app_chunks),
    ):
        if value is not None:
            raise CLIError(f"{flag} applies to --format blp only", EXIT_USAGE)
    if metadata is not None and not isinstance(metadata, dict):
        raise CLIError(f"-m needs a JSON object with --format {args.format}", EXIT_USAGE)
    shuffle_filters = [0, 0, 0, 0, 0, 0 if args.shuffle is False else 1]
    options: dict[str, Any] = {}
    if args.clevel is not None:
        options["clevel"] = args.clevel
    if args.format in ("b2frame", "sframe"):
        from ..dispatch import compress_file

        if not in_file.endswith(".npy"):
            options["typesize"] = DEFAULT_TYPESIZE if args.typesize is None else args.typesize
        elif args.typesize is not None:
            raise CLIError("-t does not apply to .npy input: its dtype is used", EXIT_USAGE)
        options["filters"] = shuffle_filters
        if args.cname is not None:
            options["codec"] = args.cname
        if args.chunk_size is not None:
            options["chunksize"] = args.chunk_size
        if metadata is not None:
            options["metadata"] = metadata
        if args.dtype is not None:
            options.update(dtype=args.dtype, shape=args.shape)
            options.pop("typesize", None)  # the item size
        compress_file(in_file, out_file, format=args.format, **options)
        return
    import numpy as np

    from ..dispatch import save

    array = _input_array(in_file, args.typesize, args.dtype, args.shape)
    rows = None
    if args.chunk_size is not None:
        row_bytes = array.itemsize * int(np.prod(array.shape[1:], dtype=np.int64))
        rows = max(1, args.chunk_size // max(row_bytes, 1))
    if args.format == "bcolz":
        options["shuffle"] = 0 if args.shuffle is False else 1
        options["overwrite"] = args.force
        if args.cname is not None:
            options["cname"] = args.cname
        if rows is not None:
            options["chunklen"] = rows
        if metadata is not None:
            options["attrs"] = metadata
    else:
        options["filters"] = shuffle_filters
        if args.cname is not None:
            options["codec"] = args.cname
        if rows is not None:
            options["chunks"] = (min(rows, max(array.shape[0], 1)), *array.shape[1:])
        if metadata is not None:
            options["vlmeta"] = metadata
    save(array, out_file, format=args.format, **options)


def _compress_raw_array_blp(
    args: argparse.Namespace, in_file: str, out_file: str, metadata: Any
) -> None:
    """``--dtype`` to ``.blp``: the raw input stored as an array, with 0.16's numpy metadata."""
    from ..dispatch import compress_file

    if metadata is not None:
        raise CLIError("-m does not apply with --dtype: the metadata holds the array's dtype"
                       " and shape", EXIT_USAGE)  # fmt: skip
    options: dict[str, Any] = {
        "chunk_size": args.chunk_size or DEFAULT_CHUNK_SIZE,
        "clevel": DEFAULT_CLEVEL if args.clevel is None else args.clevel,
        "shuffle": True if args.shuffle is None else args.shuffle,
        "cname": args.cname or DEFAULT_CNAME,
        "checksum": args.checksum or DEFAULT_CHECKSUM,
        "offsets": args.offsets,
    }
    if args.max_app_chunks is not None:
        options["max_app_chunks"] = args.max_app_chunks
    compress_file(in_file, out_file, "blp", dtype=args.dtype, shape=args.shape, **options)


def _input_array(path: str, typesize: int | None, dtype: Any = None, shape: Any = None) -> Any:
    """A ``.npy`` file's array (memory-mapped), a raw file as an array of ``dtype`` (and
    ``shape``), or as unsigned ints of ``typesize`` bytes (default 1)."""
    import numpy as np

    if path.endswith(".npy"):
        if typesize is not None:
            raise CLIError("-t does not apply to .npy input: its dtype is used", EXIT_USAGE)
        return np.load(path, mmap_mode="r", allow_pickle=False)
    if dtype is not None:
        from .. import ndarray as nd

        return nd.raw_array(path, dtype, shape)
    if typesize not in (None, 1, 2, 4, 8):
        raise CLIError("-t must be 1, 2, 4 or 8 for the array formats", EXIT_USAGE)
    dtype = np.dtype(f"<u{typesize or 1}")
    size = os.path.getsize(path)
    if size % dtype.itemsize:
        raise CLIError(f"input file '{path}' holds {size} bytes, not a multiple of -t {typesize}")
    return np.fromfile(path, dtype=dtype)
