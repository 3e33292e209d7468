"""The argument parser: subcommands, their options, and the value parsers."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ..blosc.header import BLOSC1_MAX_BUFFERSIZE, WRITABLE_CODECS
from ..containers import registry as _registry
from ..containers.options import SIZE_SUFFIXES, canonical
from ..errors import BloscpackError
from ..url import HIDDEN, may_hold_secret
from .console import EXIT_USAGE, PROG

#: The suffix of the format new outputs get unless told (``.blp``).
EXTENSION = _registry.DEFAULT.extension


FORMATS = tuple(_registry.FORMATS)
#: How ``--help`` shows the values of ``--format``: the built-in formats (another package's
#: formats are taken too).
FORMAT_METAVAR = "{" + ",".join(FORMATS) + "}"


# Output suffix added by ``compress`` and removed by ``decompress``, per format.
FORMAT_EXTENSIONS = {f.name: f.extension for f in _registry.FORMATS.values()}


CODECS = WRITABLE_CODECS
#: ``-z max``: the largest chunk C-Blosc 1.x compresses.
MAX_CHUNK_SIZE = BLOSC1_MAX_BUFFERSIZE


MAX_THREADS = 256


class _Defaults(str):
    """A help text that names defaults of the format new outputs get (``{clevel}``,
    ``{checksums}``, ...): filled in when the help is shown, so that building the parser
    imports no format."""


class _Formatter(argparse.RawTextHelpFormatter):
    """Help as written (line breaks kept), with the defaults of :class:`_Defaults` texts."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = super()._get_help_string(action)
        if isinstance(action.help, _Defaults) and text is not None:
            found = _registry.DEFAULT
            text = text.format(**found.option_defaults,
                               checksums=", ".join(found.option_choices["checksum"]))  # fmt: skip
        return text


class _DefaultChoices(Sequence[str]):
    """The names the format new outputs get takes for its option ``option`` (``checksum``),
    looked up when first used."""

    def __init__(self, option: str) -> None:
        self.option = option

    def _names(self) -> tuple[str, ...]:
        return tuple(_registry.DEFAULT.option_choices[self.option])

    def __getitem__(self, index: Any) -> Any:
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())


#: The checksums taken: those the format of new outputs declares.
CHECKSUMS = _DefaultChoices("checksum")


def parse_size(text: str) -> int:
    """A chunk size: an integer, a number with a B/K/M/G/T suffix (``1.5M``) or ``max``."""
    if text == "max":
        return MAX_CHUNK_SIZE
    try:
        if text and text[-1] in SIZE_SUFFIXES:
            value = int(float(text[:-1]) * SIZE_SUFFIXES[text[-1]])
        else:
            value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid size {text!r}: use an integer, a number with a B/K/M/G/T suffix, or 'max'"
        ) from None
    if not 1 <= value <= MAX_CHUNK_SIZE:
        raise argparse.ArgumentTypeError(f"must be 1 <= size <= {MAX_CHUNK_SIZE}, got {text!r}")
    return value


def _named(choices: Sequence[str]) -> Callable[[str], str]:
    """The value parser of an option whose values are ``choices`` (names, matched ignoring
    case as the Python API matches them); argparse's ``choices`` refuses the others."""
    return lambda text: canonical(text, choices)  # type: ignore[no-any-return]


def _checked(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """The value parser of an option the library's ``parse`` checks: its error is a usage
    error."""

    def checked(text: str) -> Any:
        try:
            return parse(text)
        except BloscpackError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return checked


#: The value parser of ``--format``: the name of a format that writes, built in or added by
#: another package (:func:`~bloscpack.containers.registry.get`: aliases, any case).
_format_name = _checked(lambda text: _registry.get(text).name)


def _parse_dtype(text: str) -> Any:
    """A numpy dtype (numpy imported only for ``--dtype``)."""
    from ..ndarray import parse_dtype

    return parse_dtype(text)


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


class _VersionAction(argparse.Action):
    """``--version``: bloscpack and the C libraries it uses, then exit."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(version_string())
        parser.exit()


def version_string() -> str:
    """The versions of bloscpack, python-blosc, C-Blosc, python-blosc2 and C-Blosc2 (the
    packages' from their metadata: importing them imports numpy)."""
    from .. import __version__
    from ..clibs import c_blosc2_version, c_blosc_version, package_version

    return (
        f"bloscpack: '{__version__}' python-blosc: '{package_version('blosc')}'"
        f" blosc: '{c_blosc_version()}' python-blosc2: '{package_version('blosc2')}'"
        f" blosc2: '{c_blosc2_version()}'"
    )


EPILOG = """\
exit codes: 0 success, 1 error, 2 usage error, 130 interrupted (SIGINT), 143 terminated (SIGTERM)
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
        help=_Defaults("compression level (default: {clevel})"),
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
        type=_named(CODECS),
        choices=CODECS,
        dest="cname",
        default=None,
        help=_Defaults(f"codec to be used by Blosc:\n{', '.join(CODECS)} (default: {{cname}})"),
    )


def _storage_option(text: str) -> tuple[str, Any]:
    """``key=value``: a setting for the fsspec back end of URLs; ``true``/``false``, integers
    and numbers become those types, anything else stays a string."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        shown = HIDDEN if may_hold_secret(text) else repr(text)  # never a credential
        raise argparse.ArgumentTypeError(f"not key=value: {shown} (e.g. anon=true)")
    typed: Any = value
    if value.lower() in ("true", "false"):
        typed = value.lower() == "true"
    else:
        for kind in (int, float):
            try:
                typed = kind(value)
                break
            except ValueError:
                continue
    return key.strip(), typed


def storage_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ``--storage-option`` settings given, as fsspec's ``storage_options``."""
    pairs = [*(getattr(args, "storage_option", None) or ()),
             *(getattr(args, "storage_option_after", None) or ())]  # fmt: skip
    return dict(pairs) if pairs else None


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
        help="disable overwrite checks for existing files\n(use with caution); compress: also"
        " an input already\nnamed as a container (.blp, .b2nd, ...)",
    )  # fmt: skip
    common.add_argument(
        "-n", "--nthreads", metavar=f"[1, {MAX_THREADS}]",
        type=_int_in_range(1, MAX_THREADS, "-n"), default=default(None),
        help="set number of threads (default: ncores)",
    )  # fmt: skip
    common.add_argument(
        "--storage-option", metavar="<key=value>", action="append", type=_storage_option,
        dest="storage_option_after" if suppress else "storage_option", default=default(None),
        help="a setting for the storage of URLs (s3://, https://, ...), passed to\n"
        "fsspec; repeat for several (e.g. anon=true, endpoint_url=...)",
    )  # fmt: skip
    bar = common.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress", action="store_true", dest="progress", default=default(None),
        help="draw a progress bar on stderr (default: when stderr is a\nterminal, for work"
        " expected to take a second or more, unless\nstdout carries the data to a pipe;"
        " never with -q)",
    )  # fmt: skip
    bar.add_argument(
        "--no-progress", action="store_false", dest="progress", default=default(None),
        help="never draw a progress bar",
    )  # fmt: skip


class _Parser(argparse.ArgumentParser):
    """Usage errors: the usage, then one ``blpk: error: ...`` line (also for subcommands)."""

    def error(self, message: str) -> NoReturn:
        # the subcommand's positional has no metavar (it would clutter the help): name it
        message = message.replace("argument : invalid", "argument <subcommand>: invalid")
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{PROG}: error: {message}\n")


#: The option that sets the compression level, of the subcommands that compress.
LEVEL_OPTIONS = {"compress": "-l", "c": "-l", "append": "-l", "a": "-l", "convert": "--clevel"}


def refuse_gzip_levels(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """gzip's ``-1`` ... ``-9`` given to a subcommand that compresses: a usage error that names
    blpk's option.  bloscpack 0.16 read such a word as a file name, and still does when a file
    of that name exists (``--`` ends the options as usual)."""
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    takes_value = {o for a in parser._actions if a.nargs != 0 for o in a.option_strings}
    position = 0
    while position < len(argv) and argv[position] not in subparsers.choices:
        position += 2 if argv[position] in takes_value else 1
    if position >= len(argv) or argv[position] not in LEVEL_OPTIONS:
        return
    name = argv[position]
    sub = subparsers.choices[name]
    takes_value = {o for a in sub._actions if a.nargs != 0 for o in a.option_strings}
    previous = ""
    for arg in argv[position + 1 :]:
        if arg == "--":
            return
        if (len(arg) == 2 and arg[0] == "-" and arg[1].isdigit() and previous not in takes_value
                and not os.path.exists(arg)):  # fmt: skip
            sub.error(
                f"no such option: {arg} (gzip's compression level): blpk {name} sets the level"
                f" with {LEVEL_OPTIONS[name]} {arg[1]}"
            )
        previous = arg


def build_parser() -> argparse.ArgumentParser:
    """The ``blpk`` argument parser."""
    parser = _Parser(
        prog=PROG,
        description="command line de/compression with blosc, for every Blosc container format",
        formatter_class=_Formatter,
        epilog=EPILOG,
    )
    parser.add_argument("--version", action=_VersionAction, help="show the versions and exit")
    _add_global_options(parser, suppress=False)

    sub = parser.add_subparsers(title="subcommands", metavar="", dest="subcommand")

    def one(name: str, text: str, description: str | None = None) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, formatter_class=_Formatter, help=text,
                                description=description or text)  # fmt: skip
        _add_global_options(parser, suppress=True)
        return parser

    def add(name: str, alias: str, text: str) -> list[argparse.ArgumentParser]:
        return [one(name, text), one(alias, f"alias for '{name}'", text)]

    for p in add("compress", "c", "perform compression on file"):
        _add_blosc_options(
            p,
            _Defaults(
                "typesize for blosc (default: {typesize}; raw input to the array\n"
                "formats: 1, or the item size of --dtype)"
            ),
        )
        group = p.add_argument_group("raw input as an array")
        group.add_argument(
            "--dtype",
            metavar="<dtype>",
            type=_checked(_parse_dtype),
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
            help=_Defaults("set desired chunk size or 'max' (default: {chunk_size})"),
        )
        group.add_argument(
            "-k",
            "--checksum",
            metavar="<checksum>",
            type=_named(CHECKSUMS),
            choices=CHECKSUMS,
            default=None,
            help=_Defaults("set desired checksum:\n{checksums} (default: {checksum})"),
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
            "--order-record", action="store_true", default=None,
            help="blp: record the order of the chunks' digests after the last chunk,\n"
            "so that verify and reads find chunks swapped or moved",
        )  # fmt: skip
        group.add_argument(
            "--format",
            type=_format_name,
            metavar=FORMAT_METAVAR,
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
        p.add_argument(
            "original_file", metavar="<original_file>",
            help="container to append to (any format that grows: .blp, .b2frame,\n"
            ".b2nd, sparse frame or b2nd directory, .bcolz)",
        )  # fmt: skip
        p.add_argument(
            "new_file", metavar="<new_file>",
            help="file to append from: its bytes (whole rows for an array), or the\n"
            "rows of a .npy file",
        )  # fmt: skip
        p.add_argument(
            "-e",
            "--no-check-extension",
            action="store_true",
            help="disable checking original file for extension (*.blp, *.b2frame,\n"
            "*.b2nd, *.b2sframe, *.bcolz)",
        )
        p.add_argument(
            "-m",
            "--metadata",
            metavar="<metadata>",
            help="file containing the metadata, must contain valid JSON",
        )

    for p in add("info", "i", "print information about a compressed file"):
        shown = p.add_mutually_exclusive_group()
        shown.add_argument("--json", action="store_true", help="print the information as JSON")
        shown.add_argument(
            "--legacy", action="store_true",
            help="print the details alone, as earlier versions did (bloscpack 0.16's\n"
            "text for .blp files); -v prints the summary, then that text",
        )  # fmt: skip
        p.add_argument("file_", metavar="<file>", help="file to show info for ('-': stdin)")

    for p in add("verify", "t", "check every checksum and decode every chunk, write nothing"):
        p.add_argument("--json", action="store_true", help="print the reports as JSON")
        p.add_argument(
            "--strict", action="store_true",
            help="also fail on files whose data no checksum covers\n(.blp files written"
            " without checksums, and the formats that have none)\nand on files with notes"
            " (e.g. bytes after the last chunk)",
        )  # fmt: skip
        p.add_argument("files", metavar="<file>", nargs="+", help="files to verify ('-': stdin)")

    convert = one(
        "convert",
        "rewrite a container in another format",
        "Rewrite the container <src> (any format) as <dst> in --format (default:"
        " from the\nextension of <dst>, else blp). Chunks the new format accepts are copied"
        " without recompression;\nmetadata the new format cannot hold is listed as dropped.",
    )
    convert.add_argument("src", metavar="<src>", help="the container to convert ('-': stdin)")
    convert.add_argument("dst", metavar="<dst>", help="the file or directory to write")
    convert.add_argument(
        "--format", type=_format_name, metavar=FORMAT_METAVAR, default=None,
        help="format of <dst> (default: from its extension .blp, .b2frame, .b2nd,\n"
        ".b2sframe, .bcolz; else blp)",
    )  # fmt: skip
    convert.add_argument("--sparse", action="store_true", help="b2nd: write a sparse directory")
    convert.add_argument(
        "--codec", metavar="<codec>", type=_named(CODECS), choices=CODECS, default=None,
        help="codec of recompressed chunks (default: the format's)",
    )  # fmt: skip
    convert.add_argument(
        "--clevel", metavar="[0, 9]", type=_int_in_range(0, 9, "--clevel"), default=None,
        help="compression level of recompressed chunks (default: the format's)",
    )  # fmt: skip
    convert.add_argument(
        "--recompress", action="store_true", help="recompress every chunk, copy none"
    )
    convert.add_argument(
        "--max-app-chunks", metavar="<n>", type=_non_negative, default=None,
        help="blp: offset slots reserved for appends (default: 10 x nchunks)",
    )  # fmt: skip
    convert.add_argument(
        "--order-record", action="store_true",
        help="blp: record the order of the chunks' digests (see compress)",
    )  # fmt: skip
    convert.add_argument("--json", action="store_true", help="print the report as JSON")

    refs = one(
        "refs",
        "byte-range references to a container's chunks (kerchunk JSON or parquet)",
        "Describe the container <src> as a zarr (format 2) store whose chunks are byte ranges of"
        " its\nfiles (kerchunk references, version 1), for zarr and xarray to read it in place:"
        "\nJSON, or parquet to a directory named *.parq or *.parquet."
        "\nWith --verify, <src> is a references JSON file (or parquet directory): say whether"
        "\nthe files it describes are still as they were (exit 1 if not).",
    )
    refs.add_argument("src", metavar="<src>", help="the container (a local file or directory)")
    refs.add_argument(
        "-o", "--output", metavar="<json>", default=None,
        help="the JSON file to write (default: stdout); a name ending in .parq or .parquet:"
        " a directory of parquet references",
    )  # fmt: skip
    refs.add_argument(
        "--zarr-format", type=int, choices=(2, 3), default=2,
        help="zarr format of the arrays described (default: 2; 3: Blosc2 chunks are read by"
        " bloscpack's own codec, bloscpack_blosc2)",
    )  # fmt: skip
    refs.add_argument(
        "--codec", choices=("stock", "bloscpack"), default="stock",
        help="stock: zarr's codecs, a short last chunk inlined (default); bloscpack: bloscpack's"
        " filters too, no short chunk inlined, b2nd blocks in any order",
    )  # fmt: skip
    refs.add_argument(
        "--verify", action="store_true",
        help="<src> is references JSON: check the size and modification time of its files",
    )  # fmt: skip

    demo = one(
        "demo",
        "write, read and verify an example array in every format",
        "Write a built-in example array (a float64 random walk) in every format, read each"
        " back, verify it and print sizes, ratios and speeds.",
    )
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
