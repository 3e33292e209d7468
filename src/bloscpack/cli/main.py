"""The entry point: parse, run the subcommand, report errors and interruptions."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from .._startup import MESSAGES, exit_code
from ..url import redact_options
from .console import EXIT_ERROR, EXIT_USAGE, CLIError, Console, _describe
from .options import build_parser, refuse_gzip_levels

#: Each subcommand and alias: the module of the subcommand and its function, imported when the
#: subcommand runs (blpk starts fast).
COMMANDS: dict[str, tuple[str, str]] = {
    "compress": (".compress", "cmd_compress"),
    "c": (".compress", "cmd_compress"),
    "decompress": (".decompress", "cmd_decompress"),
    "d": (".decompress", "cmd_decompress"),
    "append": (".append", "cmd_append"),
    "a": (".append", "cmd_append"),
    "info": (".info", "cmd_info"),
    "i": (".info", "cmd_info"),
    "verify": (".verify", "cmd_verify"),
    "t": (".verify", "cmd_verify"),
    "convert": (".convert", "cmd_convert"),
    "refs": (".refs", "cmd_refs"),
    "demo": (".demo", "cmd_demo"),
}


def command(name: str) -> Callable[[argparse.Namespace, Console], int]:
    """The function of subcommand (or alias) ``name``, its module imported now."""
    module, function = COMMANDS[name]
    return getattr(importlib.import_module(module, __package__), function)  # type: ignore[no-any-return]


class _Interrupted(KeyboardInterrupt):
    """Raised by blpk's SIGINT/SIGTERM handler while a command runs; ``signum`` is the signal.

    A subclass on purpose: CPython remembers a plain KeyboardInterrupt that lands inside
    ``eval()`` (as ``namedtuple`` uses) and then exits by SIGINT instead of with blpk's code.
    """

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__()
        self.signum = signum


def _on_signal(signum: int, frame: Any) -> NoReturn:
    raise _Interrupted(signum)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``blpk`` with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    refuse_gzip_levels(parser, argv)
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
        console.debug(f"    {key}: {redact_options(value)}")
    with _terminate_as_interrupt():
        try:
            if args.nthreads is not None:
                from ..engine import set_nthreads

                set_nthreads(args.nthreads)
            console.verbose(f"using {args.nthreads or os.cpu_count()} threads")
            code = command(args.subcommand)(args, console)
            console.verbose("done")
            return code
        except KeyboardInterrupt as exc:  # SIGINT 130, SIGTERM 143; outputs already cleaned up
            signum = getattr(exc, "signum", signal.SIGINT)
            console.error(MESSAGES[signal.Signals(signum)])
            return exit_code(signum)
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
    """SIGINT and SIGTERM raise KeyboardInterrupt while a command runs: outputs are cleaned up.
    Before and after, the start-up handlers (:mod:`bloscpack._startup`) exit at once."""

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
