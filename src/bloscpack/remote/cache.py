"""Byte ranges of an object kept once fetched: in memory (a budget of recent ranges, or all of
them), or on disk under a directory, keyed by the object's URL and identity (its ``ETag``, or
its modification time and size), so that a changed object is never served from the cache."""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import os
import threading
from collections import OrderedDict
from typing import Any

from ..errors import ArgumentError

#: Bytes of recently fetched ranges kept without a cache: a chunk's header and bstarts, read
#: just before its blocks, are served from them.
RECENT_BUDGET = 8 << 20


class Ranges:
    """Fetched ranges of one object; :meth:`find` serves a read lying inside one of them.
    ``budget``: bytes kept (the least recently used ranges go first; pinned ones stay), None
    for all."""

    def __init__(self, budget: int | None = RECENT_BUDGET) -> None:
        self.budget = budget
        self._starts: list[int] = []
        self._pieces: dict[int, bytes] = {}
        self._used: OrderedDict[int, None] = OrderedDict()
        self._pinned: set[int] = set()
        self._bytes = 0
        self._lock = threading.Lock()

    def find(self, offset: int, n: int) -> memoryview | None:
        """``n`` bytes at ``offset`` if one kept range holds them."""
        with self._lock:
            k = bisect.bisect_right(self._starts, offset) - 1
            while k >= 0:  # ranges may overlap: look back over a few that start earlier
                start = self._starts[k]
                data = self._pieces[start]
                if offset + n <= start + len(data):
                    if start not in self._pinned:
                        self._used.move_to_end(start)
                    return memoryview(data)[offset - start : offset - start + n]
                if offset - start > (64 << 20):
                    break
                k -= 1
            return None

    def add(self, start: int, data: bytes, pinned: bool = False) -> None:
        """Keep ``data``, the bytes at ``start``."""
        with self._lock:
            old = self._pieces.get(start)
            if old is not None and len(old) >= len(data):
                return
            if old is not None:
                self._bytes -= len(old)
                self._used.pop(start, None)
            else:
                bisect.insort(self._starts, start)
            self._pieces[start] = data
            self._bytes += len(data)
            if pinned:
                self._pinned.add(start)
            else:
                self._used[start] = None
            self._evict()
        self.stored(start, data)

    def _evict(self) -> None:
        while self.budget is not None and self._bytes > self.budget and len(self._used) > 1:
            start, _ = self._used.popitem(last=False)
            self._bytes -= len(self._pieces.pop(start))
            self._starts.remove(start)

    def budget_left(self) -> float:
        """Bytes that may still be kept without evicting others (infinite without a budget)."""
        if self.budget is None:
            return float("inf")
        return max(self.budget // 2, self.budget - self._bytes)

    def stored(self, start: int, data: bytes) -> None:
        """Hook: ``data`` at ``start`` was added (a disk cache writes it)."""

    def clear(self) -> None:
        with self._lock:
            self._starts.clear()
            self._pieces.clear()
            self._used.clear()
            self._bytes = 0


class DiskRanges(Ranges):
    """:class:`Ranges` kept in files under ``directory``/<key>, where the key hashes the
    object's URL and identity; the ranges of earlier runs are found there again."""

    def __init__(self, directory: str, url: str, identity: str | None) -> None:
        super().__init__(budget=None)
        key = hashlib.sha256(f"{url}\0{identity}".encode()).hexdigest()[:32]
        self.directory = os.path.join(os.fspath(directory), key)
        self._loading = True
        if identity is None:  # nothing tells a changed object: never kept between runs
            self.directory = ""
            return
        os.makedirs(self.directory, exist_ok=True)
        for name in os.listdir(self.directory):
            start, sep, end = name.partition("-")
            if sep and start.isdigit() and end.isdigit():
                with contextlib.suppress(OSError), open(os.path.join(self.directory, name),
                                                        "rb") as fh:  # fmt: skip
                    data = fh.read()
                if len(data) == int(end) - int(start):
                    super().add(int(start), data)
        self._loading = False

    def stored(self, start: int, data: bytes) -> None:
        if self._loading or not self.directory:
            return
        final = os.path.join(self.directory, f"{start}-{start + len(data)}")
        temp = f"{final}.{os.getpid()}.{threading.get_ident()}.tmp"
        with contextlib.suppress(OSError):
            with open(temp, "wb") as fh:
                fh.write(data)
            os.replace(temp, final)


class DiskObjects:
    """Whole objects (the members of a directory container) kept in files under
    ``directory``/objects, keyed by the object's URL and identity: an object whose identity
    changed is a new key, never the old bytes."""

    def __init__(self, directory: str) -> None:
        self.directory = os.path.join(os.fspath(directory), "objects")
        os.makedirs(self.directory, exist_ok=True)

    def _file(self, url: str, identity: str) -> str:
        key = hashlib.sha256(f"{url}\0{identity}".encode()).hexdigest()[:40]
        return os.path.join(self.directory, key)

    def get(self, url: str, identity: str | None) -> bytes | None:
        """The bytes kept for ``url`` at ``identity``, if any."""
        if identity is None:
            return None
        try:
            with open(self._file(url, identity), "rb") as fh:
                return fh.read()
        except OSError:
            return None

    def has(self, url: str, identity: str | None) -> bool:
        """Whether bytes are kept for ``url`` at ``identity``."""
        return identity is not None and os.path.isfile(self._file(url, identity))

    def put(self, url: str, identity: str | None, data: bytes) -> None:
        """Keep ``data``, the bytes of ``url`` at ``identity`` (nothing without one)."""
        if identity is None:
            return
        final = self._file(url, identity)
        temp = f"{final}.{os.getpid()}.{threading.get_ident()}.tmp"
        with contextlib.suppress(OSError):
            with open(temp, "wb") as fh:
                fh.write(data)
            os.replace(temp, final)


def objects_for(cache: Any) -> DiskObjects | None:
    """The kept whole objects of ``cache`` when it is a directory (see :func:`ranges_for`)."""
    if cache is None or cache == "memory":
        return None
    if isinstance(cache, (str, os.PathLike)):
        return DiskObjects(os.fspath(cache))
    raise ArgumentError(f"cache={cache!r}: use None, 'memory' or a directory path")


def ranges_for(cache: Any, url: str, identity: str | None) -> Ranges:
    """The ranges kept for one object: ``cache`` None (recent ranges, within a budget),
    ``"memory"`` (every range fetched, while the source is open) or a directory path (on
    disk, across runs)."""
    if cache is None:
        return Ranges()
    if cache == "memory":
        return Ranges(budget=None)
    if isinstance(cache, (str, os.PathLike)):
        return DiskRanges(os.fspath(cache), url, identity)
    raise ArgumentError(f"cache={cache!r}: use None, 'memory' or a directory path")


__all__ = ["DiskObjects", "DiskRanges", "RECENT_BUDGET", "Ranges", "objects_for", "ranges_for"]
