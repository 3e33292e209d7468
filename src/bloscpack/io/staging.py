"""Outputs built beside their destination and moved into place on success (atomic writes),
the rule for replacing a destination, and outputs written in place (FIFOs, devices)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any, Self

from ..errors import (
    ArgumentError,
    FileNotFound,
    OutputExistsError,
    PermissionDenied,
)
from .copies import copy_stream
from .durability import fsync_directory, open_new
from .paths import PathLike


def is_written_in_place(path: PathLike) -> bool:
    """Whether the output ``path`` is an existing FIFO, device or socket: such a file is opened
    and written where it is (never replaced, never removed), as ``zstd`` and ``gzip`` do."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextlib.contextmanager
def write_in_place(path: PathLike, mode: str = "wb") -> Iterator[IO[Any]]:
    """``path`` (a FIFO or a device: :func:`is_written_in_place`) opened for writing; an error
    while writing names it (``/dev/full``: "No space left on device")."""
    try:
        with open(path, mode) as fh:
            yield fh
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None


#: The private directory a :class:`StagedOutput` builds ``<dir>/<name>`` in, and in it the
#: output itself: ``<dir>/.<name>.<12 hex digits>.tmp/new``.
_STAGED_NAME = re.compile(
    r"(?P<dir>(?:[^\s'\"]*/)?)\.(?P<name>[^/\s'\"]+)\.[0-9a-f]{12}\.tmp(?:/new)?"
)


def destination_names(text: str) -> str:
    """``text`` with the paths where staged outputs are built replaced by the outputs' own
    paths: messages never show a temporary file."""
    return _STAGED_NAME.sub(lambda m: m["dir"] + m["name"], text)


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "wb") -> Iterator[IO[Any]]:
    """Write the file ``path`` through a :class:`StagedOutput`: renamed over ``path`` (after an
    ``fsync``) only when the block completes, so a failed or interrupted write leaves no
    partial output and never damages an existing file.  A FIFO or a device
    (:func:`is_written_in_place`) is written directly instead."""
    if is_written_in_place(path):
        with write_in_place(path, mode) as fh:
            yield fh
        return
    with StagedOutput(path) as output:
        fd = os.open(output.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with open_new(fd, mode) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())


class CommitsOnSuccess:
    """A block that ends in :meth:`commit` when it succeeds and in :meth:`abort` when it fails
    (entering it calls :meth:`enter`: nothing, or opening what the block builds)."""

    def enter(self) -> None:
        """What entering the block does first."""

    def commit(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.enter()
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()


#: What the open :class:`StagedOutput` objects of this process build (their ``path``).
_BUILDING: set[str] = set()
_BUILDING_LOCK = threading.Lock()


class StagedOutput(CommitsOnSuccess):
    """A file or a directory built at :attr:`path`, a private name beside the destination,
    that :meth:`commit` moves into place (replacing what is there) and :meth:`abort` removes:
    a failed or interrupted write leaves nothing behind and the destination untouched.  A
    destination that is a FIFO or a device (:func:`is_written_in_place`) gets a built file's
    bytes written into it instead.

    The one rule for replacing, checked before anything is built: an existing destination is
    refused with ``OutputExistsError`` if ``overwrite`` is false; a directory is replaced only
    if it is empty or ``replaces(path)`` says it is a container (``what``: which, for the
    message), never a directory of other files; the directory the destination goes in must
    exist and be writable (else ``PermissionDenied``).

    What is moved into place gets the mode ``open(path, "w")`` (``os.mkdir`` for a directory)
    would give it: that of the file (directory) it replaces, else the default the umask leaves
    (:func:`_output_mode`), whatever the writer built it with.

    A destination that is itself what another open :class:`StagedOutput` of this process
    builds (a format's own writer called inside the one staged output of ``save``) is built in
    place: the enclosing output already moves it into place or removes it."""

    def __init__(self, destination: PathLike, *, overwrite: bool = True,
                 replaces: Callable[[str], bool] | None = None,
                 what: str = "a Blosc container") -> None:  # fmt: skip
        self.name = os.fspath(destination)
        self.target = os.path.abspath(destination)
        with _BUILDING_LOCK:
            self.nested = self.target in _BUILDING
        self.in_place = not self.nested and is_written_in_place(self.target)
        if not self.in_place and not self.nested:
            _check_replaceable(destination, overwrite, replaces, what)
        self._work = ""
        #: Where to build the output once :meth:`open` has made its directory.
        self.path = ""
        self._done = False

    def open(self) -> str:
        """Make the private directory (its name is known before it exists, so that an
        interruption at any point leaves nothing behind); returns :attr:`path`."""
        if self.nested:
            self.path = self.target
            return self.path
        parent = tempfile.gettempdir() if self.in_place else os.path.dirname(self.target)
        prefix = os.path.join(parent, f".{os.path.basename(self.target)}.")
        while True:
            self._work = f"{prefix}{os.urandom(6).hex()}.tmp"
            try:
                os.mkdir(self._work, 0o700)
            except FileExistsError:
                continue
            except BaseException:
                self.abort()
                raise
            self.path = os.path.join(self._work, "new")
            with _BUILDING_LOCK:
                _BUILDING.add(self.path)
            return self.path

    def commit(self) -> None:
        """Move what was built at :attr:`path` to the destination (durably)."""
        if self.nested:
            return
        try:
            if self.in_place:
                if os.path.isdir(self.path):
                    raise ArgumentError(f"{self.name}: is a FIFO or a device, not a directory")
                with open(self.path, "rb") as built, write_in_place(self.target) as out:
                    copy_stream(built, out)
                return
            target = self.target
            os.chmod(self.path, _output_mode(self.path, target))
            if os.path.lexists(target) and (os.path.isdir(self.path) or os.path.isdir(target)):
                os.rename(target, os.path.join(self._work, "old"))
            os.replace(self.path, target)
            fsync_directory(os.path.dirname(target))
        finally:
            self.abort()

    def abort(self) -> None:
        """Remove what was built (the destination is left as it was)."""
        if not self._done and not self.nested:
            self._done = True
            with _BUILDING_LOCK:
                _BUILDING.discard(self.path)
            if self._work:
                shutil.rmtree(self._work, ignore_errors=True)

    def enter(self) -> None:
        self.open()


#: Whether ``os.access`` can check for the effective user (the one that writes).
_EFFECTIVE_IDS = os.access in os.supports_effective_ids


def _check_replaceable(destination: PathLike, overwrite: bool,
                       replaces: Callable[[str], bool] | None, what: str) -> None:  # fmt: skip
    """:class:`StagedOutput`'s rule for replacing ``destination`` (not written in place)."""
    name = os.fspath(destination)
    target = os.path.abspath(name)
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise FileNotFound(f"{name}: the directory {parent!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK, effective_ids=_EFFECTIVE_IDS):
        raise PermissionDenied(f"{name}: permission denied: cannot write in {parent!r}")
    if not os.path.lexists(target):
        return
    if not overwrite:
        raise OutputExistsError(f"{name}: already exists (pass overwrite=True to replace it)")
    directory = os.path.isdir(target) and not os.path.islink(target)
    if directory and os.listdir(target) and (replaces is None or not replaces(target)):
        raise OutputExistsError(f"{name}: is a directory that is not {what}; not replacing it")


@contextlib.contextmanager
def staged_output(path: PathLike, *, overwrite: bool = True,
                  replaces: Callable[[str], bool] | None = None,
                  what: str = "a Blosc container") -> Iterator[str]:  # fmt: skip
    """A :class:`StagedOutput` for ``path`` as a block: the path to build at, moved into
    place when the block succeeds, removed when it fails."""
    with StagedOutput(path, overwrite=overwrite, replaces=replaces, what=what) as output:
        yield output.path


def _output_mode(built: str, target: str) -> int:
    """The mode for ``built`` (a file or a directory) moved to ``target``: as ``open(target,
    "w")`` or ``os.mkdir`` would give, that of the file (directory) there, else 0o666 (0o777)
    minus the umask (a directory keeps the set-group-ID bit it inherited)."""
    directory = os.path.isdir(built)
    same_kind = stat.S_ISDIR if directory else stat.S_ISREG
    with contextlib.suppress(OSError):
        existing = os.stat(target).st_mode
        if same_kind(existing):
            return existing & 0o7777
    if directory:
        return (0o777 & ~_umask()) | (os.stat(built).st_mode & stat.S_ISGID)
    return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read (from ``/proc`` on Linux) without setting it where it can be:
    other threads may be creating files meanwhile."""
    with (
        contextlib.suppress(OSError, ValueError),
        open("/proc/self/status", encoding="ascii") as fh,
    ):
        for line in fh:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o077)  # the strictest value while it is read
    os.umask(mask)
    return mask
