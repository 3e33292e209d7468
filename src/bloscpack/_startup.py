"""The first thing ``blpk`` does: SIGINT and SIGTERM handlers, before the heavy imports.

``python -m bloscpack`` and the ``blpk`` script both import the package first (numpy, the
Blosc libraries: a few tenths of a second).  A signal in that time would otherwise end the
process with a traceback (SIGINT) or silently by the signal (SIGTERM).  When the process was
started as the command line, :func:`guard_cli_start` makes either signal print one line and exit
``128 + signal`` at once (nothing has been written yet); :mod:`bloscpack.cli.main` then replaces
these handlers with ones that clean up the outputs of the running command.  Imported by a program,
the package touches no signal handler.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any, NoReturn

PROG = "blpk"

#: The message for each handled signal, and its exit code (128 + the signal's number).
MESSAGES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


def exit_code(signum: int) -> int:
    """The exit code for signal ``signum``: 130 for SIGINT, 143 for SIGTERM."""
    return 128 + int(signum)


def started_as_cli() -> bool:
    """Whether this process is ``blpk`` or ``python -m bloscpack``."""
    argv = list(getattr(sys, "orig_argv", ()))
    for i, arg in enumerate(argv[:-1]):
        if arg == "-m":
            return argv[i + 1] == "bloscpack"
    return bool(sys.argv) and os.path.basename(sys.argv[0]) == PROG


def _exit_now(signum: int, frame: Any) -> NoReturn:
    os.write(2, f"{PROG}: error: {MESSAGES[signal.Signals(signum)]}\n".encode())
    os._exit(exit_code(signum))


#: The thread pools of the BLAS library numpy loads: ``blpk`` never multiplies matrices, and
#: OpenBLAS starting one thread per core when numpy is imported costs about 30 ms of CPU.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS",)


def guard_cli_start() -> None:
    """Install the start-up handlers if this process is the command line (main thread only),
    and give numpy's BLAS one thread unless the environment says otherwise."""
    if not started_as_cli():
        return
    if "numpy" not in sys.modules:
        for name in BLAS_THREADS:
            os.environ.setdefault(name, "1")
    try:
        for signum in MESSAGES:
            signal.signal(signum, _exit_now)
    except ValueError:  # not the main thread
        pass


__all__ = ["BLAS_THREADS", "MESSAGES", "exit_code", "guard_cli_start", "started_as_cli"]
