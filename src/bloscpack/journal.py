"""The rollback journal that makes in-place changes of a file crash-safe, and the advisory
locks that keep its readers and writers apart.

Before a file is changed in place (an append to a ``.blp`` file), the journal
``<file>.journal`` records the file's length and the original bytes of every region the change
overwrites; it is written to a temporary name, fsynced and renamed into place.  The file is then
changed and fsynced, and only then the journal is removed.  :func:`recover` (run by every
reader and writer before it opens the file) puts the recorded bytes back and truncates the file
to its old length if a journal is left over, so after any crash the file is exactly as before
the change or completely changed.  Changes hold an exclusive ``flock`` on the file, readers a
shared one (:func:`in_one_state`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import struct
from collections.abc import Callable, Iterator
from typing import IO, TypeVar

from .errors import IntegrityError
from .io.durability import fsync_directory
from .io.locks import lock_file, shared_lock, unlock_file
from .io.paths import PathLike

T = TypeVar("T")

JOURNAL_SUFFIX = ".journal"
# Test hook: SIGKILL the process right after this many journal/file writes, fsyncs, renames.
KILL_AFTER_ENV = "BLOSCPACK_APPEND_KILL_AFTER"

_JOURNAL_MAGIC = b"BLPKJRNL"
_JOURNAL_VERSION = 1
_JOURNAL_HEAD = struct.Struct("<8sIQQQI")  # magic, version, dev, ino, original length, nregions
_JOURNAL_REGION = struct.Struct("<QQ")  # offset, length (the bytes follow)
_DIGEST_SIZE = 32  # sha256 of everything before it


# --- the rollback journal -----------------------------------------------------------------


def journal_path(path: PathLike) -> str:
    """Where the rollback journal of ``path`` lives."""
    return os.fspath(path) + JOURNAL_SUFFIX


class Steps:
    """Counts the durable steps of an append; the test hook kills the process at step k."""

    def __init__(self) -> None:
        value = os.environ.get(KILL_AFTER_ENV, "")
        self.kill_at = int(value) if value.isdigit() else 0
        self.count = 0

    def done(self) -> None:
        self.count += 1
        if self.count == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)


def _encode_journal(stat: os.stat_result, length: int, regions: list[tuple[int, bytes]]) -> bytes:
    parts = [
        _JOURNAL_HEAD.pack(
            _JOURNAL_MAGIC, _JOURNAL_VERSION, stat.st_dev, stat.st_ino, length, len(regions)
        )
    ]
    for offset, data in regions:
        parts.append(_JOURNAL_REGION.pack(offset, len(data)))
        parts.append(bytes(data))
    body = b"".join(parts)
    return body + hashlib.sha256(body).digest()


def _decode_journal(data: bytes) -> tuple[int, int, int, list[tuple[int, bytes]]] | None:
    """``(dev, ino, original length, regions)``, or None for a torn or foreign journal."""
    if len(data) < _JOURNAL_HEAD.size + _DIGEST_SIZE:
        return None
    body, digest = data[:-_DIGEST_SIZE], data[-_DIGEST_SIZE:]
    if hashlib.sha256(body).digest() != digest:
        return None
    magic, version, dev, ino, length, count = _JOURNAL_HEAD.unpack_from(body)
    if magic != _JOURNAL_MAGIC or version != _JOURNAL_VERSION:
        return None
    regions, pos = [], _JOURNAL_HEAD.size
    for _ in range(count):
        if pos + _JOURNAL_REGION.size > len(body):
            return None
        offset, size = _JOURNAL_REGION.unpack_from(body, pos)
        pos += _JOURNAL_REGION.size
        if pos + size > len(body):
            return None
        regions.append((offset, body[pos : pos + size]))
        pos += size
    return (dev, ino, length, regions) if pos == len(body) else None


def write_journal(
    path: str, fp: IO[bytes], regions: list[tuple[int, bytes]], steps: Steps
) -> None:
    """Record ``fp``'s length and the original ``regions``; durable before this returns."""
    stat = os.fstat(fp.fileno())
    data = _encode_journal(stat, stat.st_size, regions)
    final = journal_path(path)
    temporary = final + ".tmp"
    with open(temporary, "wb") as fh:
        fh.write(data)
        steps.done()
        fh.flush()
        os.fsync(fh.fileno())
        steps.done()
    os.replace(temporary, final)
    steps.done()
    fsync_directory(os.path.dirname(os.path.abspath(final)))
    steps.done()


def remove_journal(path: str, steps: Steps) -> None:
    os.unlink(journal_path(path))
    steps.done()
    fsync_directory(os.path.dirname(os.path.abspath(path)))
    steps.done()


def roll_back(path: str, fp: IO[bytes], steps: Steps | None = None) -> bool:
    """Apply the journal of ``path`` to ``fp`` (opened r+b and locked); True if it did."""
    journal = journal_path(path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(journal + ".tmp")  # an unfinished journal: the file was not touched yet
    try:
        with open(journal, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return False
    decoded = _decode_journal(data)
    stat = os.fstat(fp.fileno())
    if decoded is not None and (decoded[0], decoded[1]) == (stat.st_dev, stat.st_ino):
        _, _, length, regions = decoded
        for offset, original in regions:
            fp.seek(offset)
            fp.write(original)
        fp.truncate(length)
        fp.flush()
        os.fsync(fp.fileno())
        if steps is not None:
            steps.done()
        rolled_back = True
    else:
        # A journal that is torn was never complete, so the file was never touched; one that
        # belongs to another inode is stale (the file was replaced since).  Either way: drop it.
        rolled_back = False
    os.unlink(journal)
    fsync_directory(os.path.dirname(os.path.abspath(path)))
    return rolled_back


@contextlib.contextmanager
def locked(fp: IO[bytes]) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``fp`` (appends and recoveries take turns)."""
    lock_file(fp.fileno(), exclusive=True)
    try:
        yield
    finally:
        unlock_file(fp.fileno())


def needs_recovery(path: PathLike) -> bool:
    """Whether an interrupted append left a journal beside ``path``."""
    return os.path.exists(journal_path(path))


def recover(path: PathLike) -> bool:
    """Roll back an append to ``path`` that was interrupted, if its journal is there.

    Returns True if the file was restored to its state before that append.  Cheap when there
    is no journal (one ``stat``); safe to call while another process appends (it waits).
    """
    path = os.fspath(path)
    if not needs_recovery(path) and not os.path.exists(journal_path(path) + ".tmp"):
        return False
    try:
        with open(path, "r+b") as fp, locked(fp):
            return roll_back(path, fp)
    except FileNotFoundError:
        return False
    except PermissionError:
        raise IntegrityError(
            f"{path}: an append was interrupted and must be rolled back from"
            f" {journal_path(path)!r}, which needs write access to the file"
        ) from None


def in_one_state(read: Callable[[str], T], path: str) -> T:
    """``read(path)`` under a shared lock on the file (or directory) held from its first step
    to its last: changes by this library wait, so every step sees the same state.  An
    interrupted change is rolled back first."""
    while True:
        recover(path)
        with shared_lock(path):
            if not needs_recovery(path):  # else a change died after the roll-back: again
                return read(path)
