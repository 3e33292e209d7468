"""Messages, exit codes and the errors the command line reports."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from ..url import redact

EXIT_OK = 0


EXIT_ERROR = 1


EXIT_USAGE = 2


EXIT_INTERRUPTED = 130  # SIGINT; SIGTERM exits 143 (128 + the signal number)


PROG = "blpk"


STDIO = "-"  # stdin as an input, stdout as an output


STDIN_NAME = "<stdin>"  # how messages name data read from stdin


class CLIError(Exception):
    """An error reported as one ``blpk: error:`` line, with an exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.exit_code = exit_code


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
            for line in redact(text).split("\n"):
                if line:
                    print(f"{PROG}: {line}", file=self.err)

    def debug(self, text: str) -> None:
        if self.level >= self.DEBUG:
            self.verbose(text)

    def error(self, text: str) -> None:
        """One error line on stderr (never silenced)."""
        line = _one_line(real_names(self.unalias(text)))
        print(f"{PROG}: error: {redact(line)}", file=self.err)


def real_names(text: str) -> str:
    """``text`` naming outputs by their paths, not the temporary places they are built in."""
    from ..io.staging import destination_names

    return destination_names(text)


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _describe(exc: BaseException) -> str:
    """One line naming the problem (and the file, for OS errors)."""
    if isinstance(exc, OSError) and exc.strerror:
        where = f"'{exc.filename}': " if exc.filename else ""
        return f"{where}{exc.strerror}"
    text = _one_line(str(exc))
    if isinstance(exc, CLIError):
        return text
    from ..errors import BloscpackError

    if isinstance(exc, BloscpackError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
