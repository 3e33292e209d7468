"""The ``blpk`` command line: compress, decompress, append, info, verify, convert and demo.

A thin layer over the public API.  Every subcommand, alias, option and default of bloscpack 0.16
keeps working; messages go to stderr (``blpk: error: ...`` on one line), ``info``/``verify``
reports and decompressed metadata go to stdout, unless stdout carries data (``-``), when they go
to stderr too.  Exit codes: 0 success, 1 error, 2 usage error, 130 interrupted.  Output files
are written through a temporary file and renamed into place, so a bad input or an interruption
never leaves a partial or truncated output.  ``-`` is stdin or stdout (:mod:`bloscpack.streaming`
moves the data chunk by chunk); long operations draw a progress bar on stderr
(:mod:`bloscpack.progress`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pprint
import shutil
import signal
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any, NoReturn, TextIO

from .args import (
    DEFAULT_CHECKSUM,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_CLEVEL,
    DEFAULT_CNAME,
    DEFAULT_TYPESIZE,
    MAX_CHUNK_SIZE,
    SUFFIXES,
    double_pretty_size,
)
from .checksums import CHECKSUMS_AVAIL
from .containers import registry as _registry

if TYPE_CHECKING:
    from .blosc.header import ChunkHeader
    from .progress import ProgressBar

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

PROG = "blpk"
EXTENSION = ".blp"
STDIO = "-"  # stdin as an input, stdout as an output
STDIN_NAME = "<stdin>"  # how messages name data read from stdin
FORMATS = tuple(_registry.FORMATS)
# Output suffix added by ``compress`` and removed by ``decompress``, per format.
FORMAT_EXTENSIONS = {f.name: f.extension for f in _registry.FORMATS.values()}
CODECS = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")  # python-blosc 1.x (0.16 offered these)
MAX_THREADS = 256


class CLIError(Exception):
    """An error reported as one ``blpk: error:`` line, with an exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.exit_code = exit_code


# --- output -------------------------------------------------------------------------------


class Console:
    """Where messages go: results to stdout (``-q`` silences them), progress to stderr."""

    QUIET, NORMAL, VERBOSE, DEBUG = range(4)

    def __init__(self, level: int = NORMAL, out: TextIO | None = None, err: TextIO | None = None):
        self.level = level
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.aliases: dict[str, str] = {}  # temporary file -> the name messages give it

    def data_on_stdout(self) -> None:
        """Stdout carries data from now on: results go to stderr too."""
        self.out = self.err

    def unalias(self, value: Any) -> Any:
        """``value`` (text, or lists and dicts of it) with temporary file names replaced by the
        names of what they hold."""
        if isinstance(value, str):
            for path, name in self.aliases.items():
                value = value.replace(path, name)
            return value
        if isinstance(value, list):
            return [self.unalias(v) for v in value]
        if isinstance(value, dict):
            return {k: self.unalias(v) for k, v in value.items()}
        return value

    def result(self, text: str) -> None:
        """A result line (or lines) on stdout, each prefixed ``blpk: `` like bloscpack 0.16."""
        if self.level >= self.NORMAL:
            for line in text.split("\n"):
                if line:
                    print(f"{PROG}: {line}", file=self.out)

    def plain(self, text: str) -> None:
        """Text on stdout as it is (JSON, tables)."""
        if self.level >= self.NORMAL:
            print(text, file=self.out)

    def verbose(self, text: str) -> None:
        if self.level >= self.VERBOSE:
            for line in text.split("\n"):
                if line:
                    print(f"{PROG}: {line}", file=self.err)

    def debug(self, text: str) -> None:
        if self.level >= self.DEBUG:
            self.verbose(text)

    def error(self, text: str) -> None:
        """One error line on stderr (never silenced)."""
        print(f"{PROG}: error: {_one_line(self.unalias(text))}", file=self.err)


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


# --- argument types -----------------------------------------------------------------------


def parse_size(text: str) -> int:
    """A chunk size: an integer, a number with a B/K/M/G/T suffix (``1.5M``) or ``max``."""
    if text == "max":
        return MAX_CHUNK_SIZE
    try:
        if text and text[-1] in SUFFIXES:
            value = int(float(text[:-1]) * SUFFIXES[text[-1]])
        else:
            value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid size {text!r}: use an integer, a number with a B/K/M/G/T suffix, or 'max'"
        ) from None
    if not 1 <= value <= MAX_CHUNK_SIZE:
        raise argparse.ArgumentTypeError(f"must be 1 <= size <= {MAX_CHUNK_SIZE}, got {text!r}")
    return value


def _int_in_range(low: int, high: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} must be {low} <= n <= {high}, got {value}")
        return value

    parse.__name__ = what
    return parse


def _non_negative(text: str) -> int:
    return _int_in_range(0, 2**62, "max-app-chunks")(text)


# --- parser -------------------------------------------------------------------------------


class _VersionAction(argparse.Action):
    """``--version``: bloscpack and the C libraries it uses, then exit."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(version_string())
        parser.exit()


def version_string() -> str:
    """The versions of bloscpack, python-blosc, C-Blosc, python-blosc2 and C-Blosc2."""
    import blosc
    import blosc2

    from . import __version__

    return (
        f"bloscpack: '{__version__}' python-blosc: '{blosc.__version__}'"
        f" blosc: '{blosc.BLOSC_VERSION_STRING}' python-blosc2: '{blosc2.__version__}'"
        f" blosc2: '{blosc2.VERSION_STRING}'"
    )


EPILOG = """\
exit codes: 0 success, 1 error, 2 usage error, 130 interrupted
Additional help for subcommands is available:
  %(prog)s 'subcommand' [ -h | --help ]"""


def _add_blosc_options(parser: argparse.ArgumentParser, typesize_help: str) -> None:
    group = parser.add_argument_group("blosc settings")
    group.add_argument(
        "-t",
        "--typesize",
        metavar="<size>",
        type=_int_in_range(1, 255, "typesize"),
        default=None,
        help=typesize_help,
    )
    group.add_argument(
        "-l",
        "--clevel",
        metavar="[0, 9]",
        type=_int_in_range(0, 9, "clevel"),
        default=None,
        help=f"compression level (default: {DEFAULT_CLEVEL})",
    )
    group.add_argument(
        "-s",
        "--no-shuffle",
        action="store_false",
        dest="shuffle",
        default=None,
        help="deactivate shuffle",
    )
    group.add_argument(
        "-c",
        "--codec",
        metavar="<codec>",
        choices=CODECS,
        dest="cname",
        default=None,
        help=f"codec to be used by Blosc:\n{', '.join(CODECS)} (default: {DEFAULT_CNAME})",
    )


def _shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(n) for n in text.split(",") if n.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a shape: {text!r} (e.g. 1000,3)") from None
    if not shape or any(n < 0 for n in shape):
        raise argparse.ArgumentTypeError(f"not a shape: {text!r} (e.g. 1000,3)")
    return shape


def _add_global_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """``-v | -d | -q``, ``-f`` and ``-n``: before the subcommand (as in bloscpack 0.16) or,
    with ``suppress`` (no defaults, so they do not override), after it."""

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    output = parser.add_mutually_exclusive_group()
    output.add_argument(
        "-v", "--verbose", action="store_true", default=default(False),
        help="be verbose about actions",
    )  # fmt: skip
    output.add_argument(
        "-d", "--debug", action="store_true", default=default(False),
        help="print debugging output too (and tracebacks)",
    )  # fmt: skip
    output.add_argument(
        "-q", "--quiet", action="store_true", default=default(False),
        help="print nothing but errors",
    )  # fmt: skip
    common = parser.add_argument_group("global options")
    common.add_argument(
        "-f", "--force", action="store_true", default=default(False),
        help="disable overwrite checks for existing files\n(use with caution)",
    )  # fmt: skip
    common.add_argument(
        "-n", "--nthreads", metavar=f"[1, {MAX_THREADS}]",
        type=_int_in_range(1, MAX_THREADS, "-n"), default=default(None),
        help="set number of threads (default: ncores)",
    )  # fmt: skip
    bar = common.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress", action="store_true", dest="progress", default=default(None),
        help="draw a progress bar on stderr\n(default: when stderr is a terminal, without -q)",
    )  # fmt: skip
    bar.add_argument(
        "--no-progress", action="store_false", dest="progress", default=default(None),
        help="never draw a progress bar",
    )  # fmt: skip


class _Parser(argparse.ArgumentParser):
    """Usage errors: the usage, then one ``blpk: error: ...`` line (also for subcommands)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{PROG}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``blpk`` argument parser."""
    parser = _Parser(
        prog=PROG,
        description="command line de/compression with blosc, for every Blosc container format",
        formatter_class=argparse.RawTextHelpFormatter,
        epilog=EPILOG,
    )
    parser.add_argument("--version", action=_VersionAction, help="show the versions and exit")
    _add_global_options(parser, suppress=False)

    sub = parser.add_subparsers(title="subcommands", metavar="", dest="subcommand")

    def add(name: str, alias: str, text: str) -> list[argparse.ArgumentParser]:
        main = sub.add_parser(
            name, formatter_class=argparse.RawTextHelpFormatter, help=text, description=text
        )
        short = sub.add_parser(
            alias,
            formatter_class=argparse.RawTextHelpFormatter,
            help=f"alias for '{name}'",
            description=text,
        )
        for p in (main, short):
            _add_global_options(p, suppress=True)
        return [main, short]

    for p in add("compress", "c", "perform compression on file"):
        _add_blosc_options(
            p,
            f"typesize for blosc (default: {DEFAULT_TYPESIZE}; raw input to the array\n"
            "formats: 1, or the item size of --dtype)",
        )
        group = p.add_argument_group("raw input as an array")
        group.add_argument(
            "--dtype",
            metavar="<dtype>",
            default=None,
            help="numpy dtype of the raw input's items (e.g. f8, <i4, float32): it is\n"
            "stored as an array of that dtype, which load() and python-blosc2 see",
        )
        group.add_argument(
            "--shape",
            metavar="<n,n,...>",
            type=_shape,
            default=None,
            help="shape of that array, C order (default: 1-d); needs --dtype",
        )
        group = p.add_argument_group("bloscpack settings")
        group.add_argument(
            "-z",
            "--chunk-size",
            metavar="<size>",
            type=parse_size,
            default=None,
            help="set desired chunk size or 'max' (default: 1M)",
        )
        group.add_argument(
            "-k",
            "--checksum",
            metavar="<checksum>",
            choices=CHECKSUMS_AVAIL,
            default=None,
            help=f"set desired checksum:\n{', '.join(CHECKSUMS_AVAIL)} (default: adler32)",
        )
        group.add_argument(
            "-o", "--no-offsets", action="store_false", dest="offsets", help="deactivate offsets"
        )
        group.add_argument(
            "-m",
            "--metadata",
            metavar="<metadata>",
            help="file containing the metadata, must contain valid JSON",
        )
        group.add_argument(
            "--max-app-chunks",
            metavar="<n>",
            type=_non_negative,
            default=None,
            help="offset slots reserved for appends (default: 10 x nchunks)",
        )
        group.add_argument(
            "--format",
            choices=FORMATS,
            default=None,
            help="container format to write (default: the one the suffix of <out_file>\n"
            "names, else blp); the others take their own defaults for -l, -c, -z\n"
            "and shuffle unless given",
        )
        p.add_argument("in_file", metavar="<in_file>", help="file to be compressed ('-': stdin)")
        p.add_argument(
            "out_file",
            metavar="<out_file>",
            nargs="?",
            default=None,
            help="file to compress to ('-': stdout)\n(default: <in_file>.blp; stdout for stdin)",
        )

    for p in add("decompress", "d", "perform decompression on file"):
        p.add_argument(
            "-e",
            "--no-check-extension",
            action="store_true",
            help="disable checking input file for extension (*.blp)\n(requires use of <out_file>)",
        )
        p.add_argument(
            "-m",
            "--metadata-out",
            metavar="<file>",
            default=None,
            help="also save the metadata as JSON to this file",
        )
        p.add_argument("in_file", metavar="<in_file>", help="file to be decompressed ('-': stdin)")
        p.add_argument(
            "out_file", metavar="<out_file>", nargs="?", default=None,
            help="file to decompress to ('-': stdout; a .npy name: a .npy file)\n"
            "(default: <in_file> without its extension; stdout for stdin)",
        )  # fmt: skip

    for p in add("append", "a", "append data to a compressed file"):
        _add_blosc_options(p, "typesize for blosc (default: the file's typesize)")
        p.add_argument("original_file", metavar="<original_file>", help="file to append to")
        p.add_argument("new_file", metavar="<new_file>", help="file to append from")
        p.add_argument(
            "-e",
            "--no-check-extension",
            action="store_true",
            help="disable checking original file for extension (*.blp)",
        )
        p.add_argument(
            "-m",
            "--metadata",
            metavar="<metadata>",
            help="file containing the metadata, must contain valid JSON",
        )

    for p in add("info", "i", "print information about a compressed file"):
        p.add_argument("--json", action="store_true", help="print the information as JSON")
        p.add_argument("file_", metavar="<file>", help="file to show info for ('-': stdin)")

    for p in add("verify", "t", "check every checksum and decode every chunk, write nothing"):
        p.add_argument("--json", action="store_true", help="print the reports as JSON")
        p.add_argument("files", metavar="<file>", nargs="+", help="files to verify ('-': stdin)")

    convert = sub.add_parser(
        "convert",
        formatter_class=argparse.RawTextHelpFormatter,
        help="rewrite a container in another format",
        description="Rewrite the container <src> (any format) as <dst> in --format (default:"
        " from the\nextension of <dst>). Chunks the new format accepts are copied without"
        " recompression;\nmetadata the new format cannot hold is listed as dropped.",
    )
    _add_global_options(convert, suppress=True)
    convert.add_argument("src", metavar="<src>", help="the container to convert ('-': stdin)")
    convert.add_argument("dst", metavar="<dst>", help="the file or directory to write")
    convert.add_argument(
        "--format", choices=FORMATS, default=None,
        help="format of <dst> (default: from its extension .blp, .b2frame, .b2nd,\n"
        ".b2sframe, .bcolz; else blp)",
    )  # fmt: skip
    convert.add_argument("--sparse", action="store_true", help="b2nd: write a sparse directory")
    convert.add_argument(
        "--codec", metavar="<codec>", default=None,
        help="codec of recompressed chunks (default: the format's)",
    )  # fmt: skip
    convert.add_argument(
        "--clevel", metavar="[0, 9]", type=_int_in_range(0, 9, "--clevel"), default=None,
        help="compression level of recompressed chunks (default: the format's)",
    )  # fmt: skip
    convert.add_argument(
        "--recompress", action="store_true", help="recompress every chunk, copy none"
    )
    convert.add_argument("--json", action="store_true", help="print the report as JSON")

    demo = sub.add_parser(
        "demo",
        formatter_class=argparse.RawTextHelpFormatter,
        help="write, read and verify an example array in every format",
        description="Write a built-in example array (a float64 random walk) in"
        " every format, read each back, verify it and print sizes, ratios"
        " and speeds.",
    )
    _add_global_options(demo, suppress=True)
    demo.add_argument(
        "--size",
        metavar="<size>",
        type=parse_size,
        default=8 * 2**20,
        help="bytes of example data (default: 8M)",
    )
    demo.add_argument(
        "--dir",
        metavar="<dir>",
        default=None,
        help="write the files here and keep them (default: a temporary directory)",
    )
    return parser


# --- helpers shared by the subcommands ----------------------------------------------------


def _check_input(path: str, what: str = "input file") -> None:
    if not os.path.exists(path):
        raise CLIError(f"{what} '{path}' does not exist!")


def _check_output(
    path: str, args: argparse.Namespace, console: Console, directory: str | None = None
) -> None:
    """Refuse an existing output without ``-f``.  A FIFO or a device is written in place, with
    or without ``-f``, unless ``directory`` (the format, when it writes a directory)."""
    from .io import is_written_in_place

    if is_written_in_place(path):
        if directory is not None:
            raise CLIError(f"'{path}' is not a regular file: {directory} writes a directory")
        return
    if os.path.lexists(path):
        if not args.force:
            raise CLIError(f"output file '{path}' exists!")
        console.verbose(f"overwriting existing file: '{path}'")


def _read_metadata_file(path: str | None) -> Any:
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise CLIError(f"metadata file '{path}' does not exist!") from None
    except OSError as exc:
        raise CLIError(f"cannot read metadata file '{path}': {exc.strerror}") from None
    try:
        return json.loads(text.strip())
    except json.JSONDecodeError as exc:
        raise CLIError(f"metadata file '{path}' is not valid JSON: {exc}") from None


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _format_metadata(metadata: Any) -> str:
    return "Metadata:\n" + pprint.pformat(metadata, width=90)


def _write_json(path: str, value: Any) -> None:
    from .io import atomic_write

    with atomic_write(path, "w") as fh:
        json.dump(value, fh, indent=2, sort_keys=True)
        fh.write("\n")


def _size_of(path: str) -> int:
    if os.path.isdir(path):
        return sum(
            os.path.getsize(os.path.join(root, name))
            for root, _, names in os.walk(path)
            for name in names
        )
    return os.path.getsize(path)


def _strip_extension(path: str) -> str | None:
    for suffix in FORMAT_EXTENSIONS.values():
        if path.endswith(suffix) and len(path) > len(suffix):
            return path[: -len(suffix)]
    return None


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _seekable(stream: Any) -> bool:
    try:
        return bool(stream.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _stdin() -> IO[bytes]:
    from .streaming import widen_pipe

    widen_pipe(sys.stdin.buffer)
    return sys.stdin.buffer


def _stdout() -> IO[bytes]:
    from .streaming import widen_pipe

    widen_pipe(sys.stdout.buffer)
    return sys.stdout.buffer


def _regular_file_size(stream: Any) -> int | None:
    """The bytes left in ``stream`` if it is a file of known size (a redirection), else None."""
    from .io import has_known_size

    try:
        status = os.fstat(stream.fileno())
        if has_known_size(status):
            return max(0, status.st_size - stream.tell())
    except (AttributeError, OSError, ValueError):
        pass
    return None


def _streamed(path: str) -> bool:
    """Whether the input ``path`` is read as a stream, start to end: ``-`` (stdin), or a file
    whose size is unknown (a FIFO, a device, a ``/proc`` file, a process substitution)."""
    from .io import is_stream

    return path == STDIO or is_stream(path)


def _input_stream(stack: contextlib.ExitStack, path: str) -> IO[bytes]:
    """The stream of the input ``path`` (see :func:`_streamed`), closed with ``stack``."""
    if path == STDIO:
        return _stdin()
    from .streaming import widen_pipe

    stream = stack.enter_context(open(path, "rb"))  # noqa: SIM115 (closed with the stack)
    widen_pipe(stream)
    return stream


def _input_name(path: str) -> str:
    return STDIN_NAME if path == STDIO else path


def _spool_input(
    stack: contextlib.ExitStack, console: Console, stream: IO[bytes], name: str, head: bytes = b""
) -> str:
    """``head`` and then the rest of ``stream`` (the input ``name``) copied into a temporary
    file, removed when ``stack`` closes; messages name it ``name``."""
    from .streaming import spool

    spooled = "stdin" if name == STDIO else os.path.basename(name)  # keeps a .npy suffix
    path = spool(head, stream, _scratch(stack), spooled)
    console.aliases[path] = _input_name(name)
    return path


def _sized_input(stack: contextlib.ExitStack, console: Console, path: str) -> str:
    """A path to read the input ``path`` from: itself, or for a stream, a temporary copy."""
    if not _streamed(path):
        return path
    return _spool_input(stack, console, _input_stream(stack, path), path)


@contextlib.contextmanager
def _progress_bar(
    args: argparse.Namespace, console: Console, label: str, total: Callable[[], int | None]
) -> Iterator[ProgressBar | None]:
    """A progress bar on stderr while the block runs, if wanted (see
    :func:`bloscpack.progress.wanted`); ``total()`` is asked only then.  Finished with a newline
    on success, erased on error."""
    from .progress import ProgressBar, wanted

    quiet = console.level == Console.QUIET
    if not wanted(getattr(args, "progress", None), quiet, console.err):
        yield None
        return
    bar = ProgressBar(f"{PROG}: {label}", total(), console.err)
    try:
        yield bar
    except BaseException:
        bar.clear()
        raise
    bar.finish()


@contextlib.contextmanager
def _counting(bar: ProgressBar | None, kind: str) -> Iterator[None]:
    """Every chunk of ``kind`` (``compress``/``decompress``) the engine does advances ``bar``."""
    if bar is None:
        yield
        return
    from .engine import observe

    with observe(bar.observer(kind)):
        yield


def _advance(bar: ProgressBar | None) -> Callable[[int], None] | None:
    return None if bar is None else bar.advance


def _array_nbytes(path: str) -> int | None:
    """Uncompressed bytes of the container at ``path`` (None if it cannot be opened)."""
    from .array import BloscArray
    from .errors import BloscpackError

    try:
        with BloscArray(path) as array:
            return array.nbytes
    except (BloscpackError, OSError, ValueError):
        return None


# --- subcommands --------------------------------------------------------------------------


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


def _scratch(stack: contextlib.ExitStack) -> str:
    """A temporary directory, removed when ``stack`` closes."""
    from .streaming import temporary_directory

    return stack.enter_context(temporary_directory())


def _output_stream(stack: contextlib.ExitStack, path: str) -> IO[bytes] | None:
    """The stream an output is written to as it is produced: stdout for ``-``, the file opened
    where it is for a FIFO or a device; None for a file written through a temporary file."""
    from .io import is_written_in_place, write_in_place

    if path == STDIO:
        return _stdout()
    if is_written_in_place(path):
        return stack.enter_context(write_in_place(path))
    return None


def _copy_file(path: str, out: IO[bytes]) -> None:
    with open(path, "rb") as fh:
        shutil.copyfileobj(fh, out, 1 << 20)
    out.flush()


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
    from .api import pack_file_to_file, pack_npy_file_to_file
    from .args import BloscArgs, BloscpackArgs, MetadataArgs

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
    from .args import parse_chunk_size
    from .blpfile import BloscFile
    from .streaming import buffer_size, copy_into_blp

    with BloscFile(target, "wb", chunk_size=chunk_size, blosc_args=blosc_args,
                   bloscpack_args=bloscpack_args, metadata=metadata) as blp:  # fmt: skip
        copy_into_blp(stream, blp, buffer_size(parse_chunk_size(chunk_size)))


def _output_format(out_file: str | None, format: str | None) -> str:
    """``--format``, or the format the suffix of ``out_file`` names, else ``blp``."""
    from .errors import BloscpackError

    if out_file is None or out_file == STDIO:
        return format or _registry.DEFAULT.name
    try:
        return _registry.output_format(out_file, format).name
    except BloscpackError as exc:
        raise CLIError(str(exc), EXIT_USAGE) from None


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
        from .dispatch import compress_file

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

    from .dispatch import save

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
    from .dispatch import compress_file

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
        from . import ndarray as nd

        return nd.raw_array(path, dtype, shape)
    if typesize not in (None, 1, 2, 4, 8):
        raise CLIError("-t must be 1, 2, 4 or 8 for the array formats", EXIT_USAGE)
    dtype = np.dtype(f"<u{typesize or 1}")
    size = os.path.getsize(path)
    if size % dtype.itemsize:
        raise CLIError(f"input file '{path}' holds {size} bytes, not a multiple of -t {typesize}")
    return np.fromfile(path, dtype=dtype)


def cmd_decompress(args: argparse.Namespace, console: Console) -> int:
    """``decompress``: any container (or stdin) back into the raw data, or into a ``.npy`` file
    when ``<out_file>`` ends with ``.npy``; to a file or to stdout."""
    in_file, out_file = args.in_file, args.out_file
    from_stdin = in_file == STDIO
    if from_stdin:
        out_file = out_file or STDIO
    elif args.no_check_extension:
        if out_file is None:
            raise CLIError("--no-check-extension requires use of <out_file>")
    else:
        stripped = _strip_extension(in_file)
        if stripped is None:
            raise CLIError(f"input file '{in_file}' does not end with '{EXTENSION}'")
        out_file = out_file or stripped
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
    from .io import atomic_write

    with contextlib.ExitStack() as stack:
        source: Any = in_file
        if _streamed(in_file):
            source = _stream_source(stack, console, in_file, npy)
        out = _stdout() if to_stdout else stack.enter_context(atomic_write(out_file))
        metadata = _decompress_into(args, console, source, out, npy)
        out.flush()
    if metadata:
        console.result(_format_metadata(metadata))
    if args.metadata_out is not None:
        _write_json(args.metadata_out, metadata)
        console.verbose(f"metadata saved to: '{args.metadata_out}'")
    if not to_stdout:
        console.verbose(f"output file size: {double_pretty_size(_size_of(out_file))}")
    return EXIT_OK


def _stream_source(stack: contextlib.ExitStack, console: Console, path: str, npy: bool) -> Any:
    """What to decompress from a streamed input (see :func:`_streamed`): a ``.blp`` stream is
    read as it arrives (chunk by chunk); anything else (other formats, or a ``.npy`` output) is
    first copied to a temporary file."""
    from .headers import BLOSCPACK_HEADER_LENGTH
    from .streaming import PrefixedReader, read_head

    stream = _input_stream(stack, path)
    head = read_head(stream, BLOSCPACK_HEADER_LENGTH)
    if head[:4] == b"blpk" and not npy:
        return PrefixedReader(head, stream, _input_name(path))
    return _spool_input(stack, console, stream, path, head)


def _decompress_into(
    args: argparse.Namespace, console: Console, source: Any, out: IO[bytes], npy: bool
) -> Any:
    """Write what ``source`` (a path or a ``.blp`` stream) holds to ``out``; return the ``.blp``
    metadata, if any.  ``.blp`` data is written as stored, chunk by chunk; other formats and
    ``.npy`` outputs as the array in C order, a slab of rows at a time."""
    if isinstance(source, str):  # in one state of the file: appends and edits wait
        from .journal import in_one_state

        return in_one_state(lambda path: _write_contents(args, console, path, out, npy), source)
    return _write_contents(args, console, source, out, npy)


def _write_contents(
    args: argparse.Namespace, console: Console, source: Any, out: IO[bytes], npy: bool
) -> Any:
    from .streaming import blp_stream_size, buffer_size, write_array, write_blp_data

    if isinstance(source, str):
        from .dispatch import detect

        fmt = detect(source)
        if fmt == "blp" and not npy:
            with open(source, "rb") as fh:
                head = fh.read(32)
    else:
        fmt, head = "blp", source.head
    console.verbose(f"format: {fmt}")
    if fmt == "blp" and not npy:
        size, chunk_size = blp_stream_size(head)
        with _progress_bar(args, console, "decompress", lambda: size) as bar:
            return write_blp_data(source, out, _advance(bar), buffer_size(chunk_size))
    from .array import BloscArray

    with (
        BloscArray(source) as array,
        _progress_bar(args, console, "decompress", lambda: array.nbytes) as bar,
    ):
        write_array(array, out, npy=npy, progress=_advance(bar))
    return None


def cmd_append(args: argparse.Namespace, console: Console) -> int:
    """``append``: the bytes of a file to the end of a ``.blp`` file, crash-safely."""
    original, new = args.original_file, args.new_file
    if not args.no_check_extension and not original.endswith(EXTENSION):
        raise CLIError(f"original file '{original}' does not end with '{EXTENSION}'")
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
    from .append import append

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


def cmd_info(args: argparse.Namespace, console: Console) -> int:
    """``info``: what a container holds (0.16's text for ``.blp``, or ``--json``)."""
    from .dispatch import detect, info

    with contextlib.ExitStack() as stack:
        if args.file_ != STDIO:
            _check_input(args.file_, "file")
        path = _sized_input(stack, console, args.file_)
        fmt = detect(path)
        report = console.unalias(info(path))
        first = _first_chunk_header(path, report) if fmt == "blp" and not args.json else None
    if args.json:
        console.plain(json.dumps(report, indent=2, sort_keys=True, default=_json_default))
    elif fmt == "blp":
        console.result(format_blp_info(report, first))
    else:
        console.result(format_info(report))
    return EXIT_OK


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("latin-1")
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def format_info(report: dict[str, Any], indent: str = "") -> str:
    """Generic ``key: value`` text of an info report."""
    lines = []
    for key, value in report.items():
        if isinstance(value, dict) and value:
            lines.append(f"{indent}{key}:")
            lines.append(format_info(value, indent + "    "))
        elif isinstance(value, list) and len(value) > 8:
            shown = ", ".join(repr(v) for v in value[:5])
            lines.append(f"{indent}{key}: [{shown}, ...] ({len(value)} entries)")
        else:
            lines.append(
                f"{indent}{key}: {value!r}" if isinstance(value, str) else f"{indent}{key}: {value}"
            )
    return "\n".join(lines)


def _first_chunk_header(path: str, report: dict[str, Any]) -> ChunkHeader | None:
    from .blosc.header import ChunkHeader

    chunks = report.get("chunks") or []
    if not chunks:
        return None
    with open(path, "rb") as fh:
        fh.seek(chunks[0]["offset"])
        return ChunkHeader.parse(fh.read(32))


def format_blp_info(report: dict[str, Any], first: ChunkHeader | None) -> str:
    """The text bloscpack 0.16's ``blpk info`` printed for a ``.blp`` file."""
    from .headers import BloscpackHeader, MetadataHeader

    lines = [BloscpackHeader(**report["header"]).pformat()]
    offsets = report.get("offsets")
    if offsets:
        lines.append("'offsets':")
        lines.append("[{},...]".format(",".join(str(o) for o in offsets[:5])))
    if report.get("metadata") is not None:
        lines.append(_format_metadata(report["metadata"]))
        meta_fields = {
            k: v.encode("latin-1") if k in ("magic_format", "user_codec") else v
            for k, v in report["metadata_header"].items()
        }
        lines.append(MetadataHeader(**meta_fields).pformat())
    if first is not None:
        lines.append("First chunk blosc header:")
        names = ("version", "versionlz", "flags", "typesize", "nbytes", "blocksize")
        header_items = [(n, getattr(first, n)) for n in names] + [("ctbytes", first.cbytes)]
        lines.append(_ordered_dict_repr(header_items))
        # 0.16's labels (bit 4 is really "do not split"; lz4hc chunks show as lz4)
        codecs = ("blosclz", "lz4", "snappy", "zlib", "zstd")
        flags, code = first.flags, first.flags >> 5
        lines.append("First chunk blosc flags: ")
        flag_items = [
            ("byte_shuffle", bool(flags & 0x01)), ("pure_memcpy", bool(flags & 0x02)),
            ("bit_shuffle", bool(flags & 0x04)), ("split_blocks", bool(flags & 0x10)),
            ("codec", codecs[code] if code < len(codecs) else f"format{code}"),
        ]  # fmt: skip
        lines.append(_ordered_dict_repr(flag_items))
    return "\n".join(lines)


def _ordered_dict_repr(items: Sequence[tuple[str, Any]]) -> str:
    return "OrderedDict([" + ", ".join(f"({k!r}, {v!r})" for k, v in items) + "])"


def cmd_verify(args: argparse.Namespace, console: Console) -> int:
    """``verify``: check every checksum and decode every chunk; exit 1 if anything is wrong."""
    reports = []
    for name in args.files:
        with contextlib.ExitStack() as stack:
            if name != STDIO:
                _check_input(name, "file")
            path = _sized_input(stack, console, name)
            report = _verify_one(args, console, path)
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
    """The :func:`bloscpack.verify` report of ``path``, with a progress bar."""
    from .dispatch import verify
    from .errors import BloscpackError

    with (
        _progress_bar(args, console, "verify", lambda: _array_nbytes(path)) as bar,
        _counting(bar, "decompress"),
    ):
        try:
            return verify(path)
        except BloscpackError as exc:
            return {
                "format": None,
                "ok": False,
                "nchunks": None,
                "bad_chunks": [],
                "problems": [_one_line(str(exc))],
            }


def _chunks(n: int) -> str:
    return f"{n} chunk" if n == 1 else f"{n} chunks"


def _print_verify_report(report: dict[str, Any], console: Console) -> None:
    path, nchunks = report["file"], report.get("nchunks")
    nchunks = nchunks if isinstance(nchunks, int) else None
    if report["ok"]:
        console.result(f"{path}: ok ({report['format']}, {_chunks(nchunks or 0)})")
        return
    bad = report.get("bad_chunks") or []
    problems = report.get("problems") or []
    counted = f"{len(bad)} of {_chunks(nchunks)} bad" if nchunks is not None else "unreadable"
    print(
        f"{PROG}: {path}: FAILED ({report.get('format') or 'unknown format'}, {counted})",
        file=console.out,
    )
    for entry in bad:
        print(f"{PROG}:   chunk {entry['index']}: {_one_line(entry['error'])}", file=console.out)
    for problem in problems:
        print(f"{PROG}:   {_one_line(problem)}", file=console.out)


def cmd_convert(args: argparse.Namespace, console: Console) -> int:
    """``convert``: a container into another format (see :func:`bloscpack.convert`)."""
    from .convert import convert

    if args.dst == STDIO:
        raise CLIError("convert writes files and directories, not stdout", EXIT_USAGE)
    if args.src != STDIO:
        _check_input(args.src)
    fmt = _output_format(args.dst, args.format)
    directory = fmt if fmt in ("sframe", "bcolz") or args.sparse else None
    _check_output(args.dst, args, console, directory)
    options: dict[str, Any] = {}
    if args.sparse:
        options["sparse"] = True
    if args.clevel is not None:
        options["clevel"] = args.clevel
    if args.codec is not None:
        options["cname" if fmt in ("blp", "bcolz") else "codec"] = args.codec
    with contextlib.ExitStack() as stack:
        src = _sized_input(stack, console, args.src)
        with _progress_bar(args, console, "convert", lambda: _array_nbytes(src)) as bar:
            report = convert(src, args.dst, fmt, overwrite=args.force,
                             copy_chunks=not args.recompress, progress=_advance(bar),
                             **options)  # fmt: skip
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


def example_array(nbytes: int) -> Any:
    """The demo's data: a float64 random walk (cumulative sum of normal steps), fixed seed."""
    import numpy as np

    rng = np.random.default_rng(2024)
    return np.cumsum(rng.standard_normal(max(nbytes // 8, 1)))


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    """``demo``: the quick start on a built-in example array, in every format, offline."""
    import tempfile
    import time

    import numpy as np

    from .dispatch import load, save, verify

    array = example_array(args.size)
    nbytes = array.nbytes
    rows = []
    ok = True
    with tempfile.TemporaryDirectory(prefix="blpk-demo-") as scratch:
        directory = args.dir or scratch
        os.makedirs(directory, exist_ok=True)
        for fmt in FORMATS:
            _check_output(
                os.path.join(directory, "example" + FORMAT_EXTENSIONS[fmt]), args, console
            )
        console.result(
            f"example: float64 random walk, {array.size} items ({nbytes / 2**20:.1f} MiB),"
            f" written to {directory if args.dir else 'a temporary directory'}"
        )
        for fmt in FORMATS:  # warm up: load the C libraries before anything is timed
            path = os.path.join(scratch, "warm-up" + FORMAT_EXTENSIONS[fmt])
            save(array[:1024], path, format=fmt)
            load(path)
            if os.path.isdir(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        for fmt in FORMATS:
            path = os.path.join(directory, "example" + FORMAT_EXTENSIONS[fmt])
            written = read = float("inf")
            for _ in range(3):  # best of three
                start = time.perf_counter()
                save(array, path, format=fmt)
                written = min(written, time.perf_counter() - start)
                start = time.perf_counter()
                back = load(path)
                read = min(read, time.perf_counter() - start)
            report = verify(path)
            same = back.dtype == array.dtype and np.array_equal(back, array)
            ok = ok and same and bool(report["ok"])
            size = _size_of(path)
            rows.append((fmt, os.path.basename(path), size, nbytes / size, nbytes / written,
                         nbytes / read, "yes" if same and report["ok"] else "NO"))  # fmt: skip
    header = ("format", "file", "bytes", "ratio", "write MB/s", "read MB/s", "verified")
    table = [header] + [
        (f, name, f"{size:,}", f"{ratio:.2f}", f"{w / 2**20:,.0f}", f"{r / 2**20:,.0f}", v)
        for f, name, size, ratio, w, r, v in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for i, row in enumerate(table):
        cells = [
            c.ljust(w) if j < 2 else c.rjust(w)
            for j, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        console.plain("  ".join(cells).rstrip())
        if i == 0:
            console.plain("  ".join("-" * w for w in widths))
    if not ok:
        raise CLIError("the demo found a format that did not round-trip")
    return EXIT_OK


COMMANDS: dict[str, Callable[[argparse.Namespace, Console], int]] = {
    "compress": cmd_compress,
    "c": cmd_compress,
    "decompress": cmd_decompress,
    "d": cmd_decompress,
    "append": cmd_append,
    "a": cmd_append,
    "info": cmd_info,
    "i": cmd_info,
    "verify": cmd_verify,
    "t": cmd_verify,
    "convert": cmd_convert,
    "demo": cmd_demo,
}


# --- entry point --------------------------------------------------------------------------


def _describe(exc: BaseException) -> str:
    """One line naming the problem (and the file, for OS errors)."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f"'{exc.filename}': " if exc.filename else ""
        return f"{where}{exc.strerror}"
    text = _one_line(str(exc))
    if isinstance(exc, CLIError):
        return text
    from .errors import BloscpackError

    if isinstance(exc, BloscpackError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Interrupted(KeyboardInterrupt):
    """Raised by blpk's SIGINT/SIGTERM handler.

    A subclass on purpose: CPython remembers a plain KeyboardInterrupt that lands inside
    ``eval()`` (as ``namedtuple`` uses) and then exits by SIGINT instead of with blpk's code.
    """


def _on_signal(signum: int, frame: Any) -> NoReturn:
    raise _Interrupted


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``blpk`` with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    level = Console.NORMAL
    if args.quiet:
        level = Console.QUIET
    elif args.debug:
        level = Console.DEBUG
    elif args.verbose:
        level = Console.VERBOSE
    console = Console(level)
    if args.subcommand is None:
        parser.print_usage(sys.stderr)
        console.error("too few arguments")
        return EXIT_USAGE
    console.debug("command line arguments are: ")
    for key, value in sorted(vars(args).items()):
        console.debug(f"    {key}: {value}")
    with _terminate_as_interrupt():
        try:
            if args.nthreads is not None:
                from .engine import set_nthreads

                set_nthreads(args.nthreads)
            console.verbose(f"using {args.nthreads or os.cpu_count()} threads")
            code = COMMANDS[args.subcommand](args, console)
            console.verbose("done")
            return code
        except KeyboardInterrupt:
            console.error("interrupted")
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            _silence_stdout()
            return EXIT_ERROR
        except CLIError as exc:
            if exc.exit_code == EXIT_USAGE:
                parser.print_usage(sys.stderr)
            console.error(str(exc))
            return exc.exit_code
        except Exception as exc:  # the last resort: still one line, traceback only with -d
            if args.debug:
                traceback.print_exc()
            console.error(_describe(exc))
            return EXIT_ERROR


class _terminate_as_interrupt:
    """SIGINT and SIGTERM raise KeyboardInterrupt while a command runs: outputs are cleaned up."""

    _SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __enter__(self) -> None:
        try:
            self._old = [signal.signal(signum, _on_signal) for signum in self._SIGNALS]
        except ValueError:  # not the main thread
            self._old = []

    def __exit__(self, *exc: object) -> None:
        for signum, old in zip(self._SIGNALS, self._old, strict=False):  # none off the main thread
            signal.signal(signum, old)


def _silence_stdout() -> None:
    """After a closed pipe, point stdout at /dev/null so the interpreter exits quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def run() -> NoReturn:
    """Console-script style entry: ``sys.exit(main())``."""
    sys.exit(main())
