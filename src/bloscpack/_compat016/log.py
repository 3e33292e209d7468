"""bloscpack 0.16's ``bloscpack.log``: messages on stdout, by verbosity level.

Kept for programs that print their own messages through it; the 0.16 functions of this package
(:mod:`.abstract_io`, :mod:`.file_io`, ...) print nothing.
"""

import sys

NORMAL = "NORMAL"
VERBOSE = "VERBOSE"
DEBUG = "DEBUG"
VERBOSITY_LEVELS = (NORMAL, VERBOSE, DEBUG)

LEVEL = NORMAL
PREFIX = "bloscpack.py"


def set_prefix(prefix: str) -> None:
    """The text that starts every message."""
    global PREFIX
    PREFIX = prefix


def set_level(level: str) -> None:
    """The verbosity: ``NORMAL``, ``VERBOSE`` or ``DEBUG`` (``ValueError`` otherwise)."""
    global LEVEL
    if level not in VERBOSITY_LEVELS:
        raise ValueError(f"Log level must be one of: {VERBOSITY_LEVELS}, not {level}")
    LEVEL = level


def verbose(message: str, level: str = VERBOSE) -> None:
    """Print ``message`` (line by line, prefixed) if ``level`` is enabled."""
    if level not in VERBOSITY_LEVELS:
        raise TypeError(f"Desired level '{level}' is not one of {VERBOSITY_LEVELS}")
    if VERBOSITY_LEVELS.index(level) <= VERBOSITY_LEVELS.index(LEVEL):
        for line in message.split("\n"):
            if line:
                print(f"{PREFIX}: {line}")


def debug(message: str) -> None:
    """Print ``message`` at level ``DEBUG``."""
    verbose(message, level=DEBUG)


def normal(message: str) -> None:
    """Print ``message`` at level ``NORMAL`` (always)."""
    verbose(message, level=NORMAL)


def error(message: str, exit_code: int = 1) -> None:
    """Print ``message`` as an error and exit with ``exit_code``."""
    for line in message.split("\n"):
        if line:
            print(f"{PREFIX}: error: {line}")
    sys.exit(exit_code)


__all__ = [
    "DEBUG",
    "LEVEL",
    "NORMAL",
    "PREFIX",
    "VERBOSE",
    "VERBOSITY_LEVELS",
    "debug",
    "error",
    "normal",
    "set_level",
    "set_prefix",
    "verbose",
]
