"""Directory containers at a URL (a prefix of objects: sparse frames, bcolz carrays and
ctables), and :func:`open_url`, which tells an object from such a prefix.

Members are small objects read whole (one request each); :meth:`RemoteDir.prefetch` fetches
many at once, concurrently where the filesystem is asynchronous."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from ..errors import RemoteError
from ..io.sources import ByteSource, Directory
from ..url import filesystem, redact, remote_errors
from .cache import objects_for
from .fetch import cat_objects, identity_of, whole_objects
from .source import RemoteSource


class RemoteDir(Directory):
    """The objects under the prefix ``url`` (``storage_options`` for its filesystem), read
    whole.  With a ``cache`` (``"memory"`` or a directory) every member read is kept while
    the directory is open (in memory: a member's identity would cost a request of its own);
    otherwise a member fetched ahead by :meth:`prefetch` is kept until it is read."""

    remote = True

    def __init__(self, url: str, storage_options: Mapping[str, Any] | None = None, *,
                 cache: Any = None, fs: Any = None, path: str | None = None) -> None:  # fmt: skip
        self.name = self.path = redact(url).rstrip("/")  # for messages: no credentials
        if fs is None or path is None:
            fs, path = filesystem(url, storage_options)
        self._fs, self._root, self._cache = fs, path.rstrip("/"), cache
        self._prefix = ""  # of this directory's members in the kept ones (shared by children)
        self._kept: dict[str, bytes | BaseException] = {}
        self._sizes: dict[str, dict[str, Any]] = {}  # listed sizes, by folder
        self._lock = threading.Lock()
        #: Members kept on disk across runs, by identity (with a cache directory), and the
        #: listing of every object under the prefix that tells their identities (one request,
        #: shared with the children).
        self._disk = objects_for(cache)
        self._listing: list[dict[str, Any] | None] = [None]

    def join(self, member: str) -> str:
        return f"{self.name}/{member}"

    def _path(self, member: str) -> str:
        return f"{self._root}/{member}"

    def child(self, name: str) -> RemoteDir:
        """The prefix ``name`` inside this one; what this one fetched ahead for it (members
        ``name/...``) is its own."""
        child = RemoteDir(self.join(name), cache=self._cache, fs=self._fs, path=self._path(name))
        child._prefix = f"{self._prefix}{name}/"
        child._kept, child._lock, child._listing = self._kept, self._lock, self._listing
        return child

    def is_dir(self) -> bool:
        """Always: a prefix exists as far as its members do (their reads report them)."""
        return True

    def is_file(self, member: str) -> bool:
        try:
            self.read_bytes(member, keep=True)
        except FileNotFoundError:
            return False
        return True

    def read_bytes(self, member: str, limit: int | None = None, keep: bool = False) -> bytes:
        key = self._prefix + member
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and not keep and self._cache is None:
                del self._kept[key]
        if kept is None:
            found = self._fetch([member])[0]
            if isinstance(found, Exception):
                try:
                    with remote_errors(self.join(member)):
                        raise found
                except RemoteError as exc:
                    kept = exc
            else:
                kept = found
            if keep or self._cache is not None:
                with self._lock:
                    self._kept[key] = kept
        if isinstance(kept, RemoteError) and isinstance(kept.__cause__, FileNotFoundError):
            raise FileNotFoundError(self.join(member))
        if isinstance(kept, BaseException):
            raise kept
        if limit is not None and len(kept) > limit:
            raise ValueError(f"larger than {limit} bytes")
        return bytes(kept)

    def prefetch(self, members: list[str]) -> None:
        """Fetch ``members`` (those not kept yet) concurrently and keep them until read."""
        with self._lock:
            wanted = [m for m in dict.fromkeys(members) if self._prefix + m not in self._kept]
        if not wanted:
            return
        with remote_errors(self.name):
            found = self._fetch(wanted)
        with self._lock:
            for member, value in zip(wanted, found, strict=True):
                if isinstance(value, BaseException):
                    error = RemoteError(f"{self.join(member)}: {value}")
                    error.__cause__ = value
                    value = error
                self._kept[self._prefix + member] = value

    def _fetch(self, members: list[str]) -> list[bytes | Exception]:
        """The bytes of each of ``members`` (or the exception reading it raised), fetched at
        once; with a cache directory, those kept there at the identity the listing tells
        are not fetched, and those fetched are kept."""
        if self._disk is None:
            return cat_objects(self._fs, [self._path(m) for m in members])
        entries = [self._listed(m) for m in members]
        listed = [identity_of(e) if e else None for e in entries]
        found: list[bytes | Exception | None] = [
            self._disk.get(self.join(m), i) for m, i in zip(members, listed, strict=True)
        ]
        for k, entry in enumerate(entries):  # not listed where the storage lists: missing
            if entry is not None and not entry:
                found[k] = FileNotFoundError(self._path(members[k]))
        missing = [k for k, data in enumerate(found) if data is None]
        pieces = whole_objects(self._fs, [self._path(members[k]) for k in missing],
                               [self.join(members[k]) for k in missing])  # fmt: skip
        for k, piece in zip(missing, pieces, strict=True):
            if isinstance(piece, Exception):
                found[k] = piece
                continue
            found[k] = piece.data
            if piece.identity is not None and piece.identity == listed[k]:
                self._disk.put(self.join(members[k]), piece.identity, piece.data)
        return [f for f in found if f is not None]

    def _listed(self, member: str) -> dict[str, Any] | None:
        """What the listing of the prefix tells of ``member``: its entry, ``{}`` when the
        listing has none (it is missing), None where the storage does not list (HTTP)."""
        with self._lock:
            listing = self._listing[0]
            if listing is None:
                try:
                    found = self._fs.find(self._root, detail=True)
                except Exception:  # noqa: BLE001 - no listing: nothing is known ahead
                    found = {}
                listing = self._listing[0] = {str(k).rstrip("/"): v for k, v in found.items()}
            if not listing:  # no listing, or an empty one: it tells nothing
                return None
            return listing.get(self._path(member), {})

    def source(self, member: str, head: int | None = None) -> ByteSource:
        return RemoteSource(self.join(member), cache=self._cache, fs=self._fs,
                            path=self._path(member),
                            edges=None if head is None else (head, 0))  # fmt: skip

    def holds(self, member: str) -> bool:
        with self._lock:
            if isinstance(self._kept.get(self._prefix + member), bytes):
                return True
        if self._disk is None:
            return False
        entry = self._listed(member)
        return entry is not None and self._disk.has(self.join(member), identity_of(entry))

    def size(self, member: str) -> int:
        """The size of ``member``: from one listing of its directory where the filesystem
        lists (S3), else asked alone."""
        folder, _, _ = member.rpartition("/")
        if folder not in self._sizes:
            base = self._path(folder) if folder else self._root
            try:
                listed = self._fs.ls(base, detail=True)
            except Exception:  # noqa: BLE001 - no listing (HTTP): ask each member
                listed = []
            self._sizes[folder] = {str(e["name"]).rstrip("/").rpartition("/")[2]: e.get("size")
                                   for e in listed if e.get("type") == "file"}  # fmt: skip
        size = self._sizes[folder].get(member.rpartition("/")[2])
        if size is not None:
            return int(size)
        with remote_errors(self.join(member)):
            return int(self._fs.size(self._path(member)))

    def exists(self, member: str) -> bool:
        """A member object exists; a folder always does (a prefix store has no empty ones)."""
        return self.is_file(member) or "." not in member.rpartition("/")[2]

    def listdir(self, member: str) -> list[str]:
        try:
            with remote_errors(self.join(member)):
                names = self._fs.ls(self._path(member), detail=False)
        except RemoteError as exc:
            raise OSError(str(exc)) from None
        return [str(n).rstrip("/").rpartition("/")[2] for n in names]

    def close(self) -> None:
        with self._lock:
            for key in [k for k in self._kept if k.startswith(self._prefix)]:
                del self._kept[key]
            self._sizes.clear()


def open_url(url: str, storage_options: Mapping[str, Any] | None = None, *, cache: Any = None,
             directory: bool = False,
             edges: tuple[int, int] | None = None,
             whole: int | None = None) -> RemoteSource | RemoteDir:  # fmt: skip
    """The object at ``url`` as a :class:`RemoteSource` (``edges``: the bytes fetched from its
    start and its end; ``whole``: fetched whole up to that size), or, when there is none (or
    ``directory`` says so), the prefix ``url`` as a :class:`RemoteDir`."""
    with remote_errors(url):
        fs, path = filesystem(url, storage_options)
    if not directory and not url.endswith("/"):
        try:
            return RemoteSource(url, cache=cache, fs=fs, path=path, edges=edges, whole=whole)
        except RemoteError as exc:
            if not isinstance(exc.__cause__, (FileNotFoundError, IsADirectoryError)):
                raise
    return RemoteDir(url, cache=cache, fs=fs, path=path)


__all__ = ["RemoteDir", "open_url"]
