"""The ``blpk`` command line: compress, decompress, append, info, verify, convert and demo.

A thin layer over the public API.  Every subcommand, alias, option and default of bloscpack 0.16
keeps working; messages go to stderr (``blpk: error: ...`` on one line), ``info``/``verify``
reports and decompressed metadata go to stdout, unless stdout carries data (``-``), when they go
to stderr too.  Exit codes: 0 success, 1 error, 2 usage error, 130 interrupted (SIGINT), 143
terminated (SIGTERM).  Output files are written through a temporary file and renamed into
place, so a bad input or an interruption never leaves a partial or truncated output.  ``-``
is stdin or stdout (:mod:`bloscpack.streaming` moves the data chunk by chunk); long operations
draw a progress bar on stderr (:mod:`bloscpack.progress`).

The package holds one module per subcommand (``compress``, ``decompress``, ``append``,
``info``, ``verify``, ``convert``, ``demo``), the parser (``options``), inputs and outputs
(``files``), messages (``console``) and the entry point (``main``).
"""

import importlib
from typing import TYPE_CHECKING, Any

from .console import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, CLIError, Console
from .main import COMMANDS, main, run
from .options import FORMAT_EXTENSIONS, FORMATS, build_parser, parse_size, version_string

if TYPE_CHECKING:
    from .files import check_files
    from .info import format_info

#: The names of the subcommands' modules, imported when first used (blpk starts fast).
_SOURCES = {"check_files": ".files", "format_info": ".info"}


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_SOURCES[name], __name__), name)


#: bloscpack 0.16's name of :func:`build_parser`.
create_parser = build_parser

__all__ = [
    "COMMANDS",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "FORMATS",
    "FORMAT_EXTENSIONS",
    "CLIError",
    "Console",
    "build_parser",
    "check_files",
    "create_parser",
    "format_info",
    "main",
    "parse_size",
    "run",
    "version_string",
]
