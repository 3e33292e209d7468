"""Writing containers to URLs: built in a local temporary file or directory, then uploaded so
that a reader sees the old container, or none, or the new one whole, never a part of one.

A single-file container becomes one object, streamed from the temporary file (large ones in
parts of :data:`PART_SIZE`, a few at a time: memory stays bounded whatever the size).  A
directory container becomes one object per file: its chunk files first (several at a time),
then, one by one and in their order, the files its format names as the ones a reader needs to
find it (its index or metadata: ``published_last``), so that it is readable only once whole.
Replacing a container removes the old objects the new one does not have, after the new one is
in place; object stores have no rename, so when the new container's objects overwrite old ones
(a directory container replaced by one of the same layout) the old one's ``published_last``
objects are removed first: it stops being readable, rather than being read half old, half new.

A failed upload removes what it wrote (best effort) and raises one
:class:`~bloscpack.errors.RemoteError` naming the URL and saying so.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import inspect
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import IO, Any, NoReturn

from ..errors import BloscpackError, OutputExistsError, RemoteError
from ..io.staging import CommitsOnSuccess
from ..url import describe, filesystem, remote_errors

#: Bytes sent per request of a large object's multipart upload, where the store has them.
PART_SIZE = 8 * 1024 * 1024
#: Parts of one object in flight at once (the client holds about two copies of each).
PARTS_AT_ONCE = 4
#: Most parts one object may have (S3's limit): a larger object gets larger parts.
MAX_PARTS = 10_000
#: Objects of a directory container uploaded at once.
UPLOADS_AT_ONCE = 8


def exists(url: str, storage_options: Mapping[str, Any] | None = None) -> bool:
    """Whether anything (an object, or objects under it as a prefix) is at ``url``."""
    fs, path = filesystem(url, storage_options)
    with remote_errors(url):
        return bool(_objects(fs, path)[0])


def _objects(fs: Any, path: str) -> tuple[list[str], bool]:
    """The objects at ``path`` (itself, or every one under it) and whether it is a directory
    (a prefix)."""
    fs.invalidate_cache(path)
    if fs.isdir(path):
        return list(fs.find(path)), True
    return ([path] if fs.exists(path) else []), False


def _part_options(fs: Any, size: int) -> dict[str, Any]:
    """What keeps the upload of an object of ``size`` bytes in bounded memory, where
    ``fs.put_file`` takes it (S3: the part size and the parts sent at once)."""
    put = getattr(fs, "_put_file", fs.put_file)
    try:
        accepted = inspect.signature(put).parameters
    except (TypeError, ValueError):
        return {}
    part = max(PART_SIZE, -(-size // MAX_PARTS))
    wanted = {"chunksize": part, "max_concurrency": PARTS_AT_ONCE}
    return {k: v for k, v in wanted.items() if k in accepted}


def rank(name: str, last: Sequence[str]) -> int:
    """Where the file ``name`` (``/``-separated, relative) of a directory container goes in
    its upload: 0 for the first batch, else 1 + the index in ``last`` of the name it ends
    with."""
    for i, tail in enumerate(last):
        if name == tail or name.endswith("/" + tail):
            return i + 1
    return 0


class Upload:
    """An upload to ``url`` of a container built locally, by :meth:`commit`.  As for
    :class:`~bloscpack.io.staging.StagedOutput`, the rule for replacing is checked first, before
    anything is built: what is at ``url`` is refused with ``OutputExistsError`` if
    ``overwrite`` is false, and a prefix is replaced only if ``replaces`` (given the names of
    its objects) says it holds a container.  ``last``: the names of a directory container's
    files uploaded last, in this order (see the module's description)."""

    def __init__(self, url: str, storage_options: Mapping[str, Any] | None = None, *,
                 overwrite: bool = True, last: Sequence[str] = (),
                 replaces: Callable[[list[str]], bool] | None = None) -> None:  # fmt: skip
        self.url = url
        self.last = tuple(last)
        self.fs, self.target = filesystem(url, storage_options)
        with remote_errors(url):
            self.old, self.old_is_dir = _objects(self.fs, self.target)
        if self.old and not overwrite:
            raise OutputExistsError(f"{url}: already exists (pass overwrite=True to replace it)")
        if self.old_is_dir and self.old and not (replaces and replaces(self._names(self.old))):
            raise OutputExistsError(
                f"{url}: holds objects that are not a Blosc container; not replacing them"
            )
        #: Whether the old container was removed (or made unreadable) before the upload.
        self.removed = False

    def _names(self, keys: Sequence[str]) -> list[str]:
        """The names of the objects ``keys`` relative to the destination."""
        prefix = self.target.rstrip("/") + "/"
        return [key[len(prefix) :] if key.startswith(prefix) else "" for key in keys]

    def commit(self, built: str) -> None:
        """Upload the file or directory ``built``, then remove the old objects it replaces."""
        new = self._upload_directory(built) if os.path.isdir(built) else self._upload_file(built)
        stale = sorted(set(self.old) - set(new))
        with remote_errors(self.url):
            _remove(self.fs, stale)

    def _upload_file(self, built: str) -> list[str]:
        """Upload the built file as one object (which replaces an old one whole, or not)."""
        self._replace_other_kind(directory=False)
        try:
            _put_all(self.fs, [(built, self.target)])
        except BaseException as exc:
            self._fail(exc, "the object there is unchanged" if self.old else
                       "the container that was there is removed" if self.removed else
                       "nothing was written")  # fmt: skip
        return [self.target]

    def _upload_directory(self, built: str) -> list[str]:
        """Upload the directory ``built`` (see the module's description); its object names."""
        names = sorted(
            os.path.relpath(os.path.join(root, name), built).replace(os.sep, "/")
            for root, _, files in os.walk(built)
            for name in files
        )
        pairs = [(os.path.join(built, *name.split("/")), f"{self.target}/{name}")
                 for name in names]  # fmt: skip
        self._replace_other_kind(directory=True)
        if set(self.old) & {key for _, key in pairs}:  # the old one stops being readable first
            published = [k for k, n in zip(self.old, self._names(self.old), strict=True)
                         if rank(n, self.last)]  # fmt: skip
            with remote_errors(self.url):
                _remove(self.fs, published)
            self.removed = True
        ranks = [rank(name, self.last) for name in names]
        order = sorted(range(len(pairs)), key=ranks.__getitem__)
        batches = [[pairs[i] for i in order if not ranks[i]]]  # at once, then one by one
        batches += [[pairs[i]] for i in order if ranks[i]]
        sent: list[str] = []
        try:
            for batch in batches:
                sent += [key for _, key in batch]
                _put_all(self.fs, batch)
        except BaseException as exc:
            left = _remove_quietly(self.fs, sent + (self.old if self.removed else []))
            what = f"removed the {len(sent)} objects written"
            if self.removed:
                what += " and the container that was there"
            if left:
                what = f"could not remove {len(left)} of the objects written ({left[0]}, ...)"
            self._fail(exc, what)
        return [key for _, key in pairs]

    def _fail(self, exc: BaseException, what: str) -> NoReturn:
        """Raise, for ``exc`` during the upload, one line naming the URL, the cause and
        ``what`` became of the objects (an interruption or an error of this library as it
        is)."""
        if not isinstance(exc, Exception) or isinstance(exc, BloscpackError):
            raise exc
        raise RemoteError(f"{self.url}: upload failed ({_cause(exc)}); {what}") from exc

    def _replace_other_kind(self, directory: bool) -> None:
        """Remove an old container of the other kind (a file replaced by a directory or the
        reverse): a file system cannot hold both under one name."""
        if self.old and self.old_is_dir != directory:
            with remote_errors(self.url):
                _remove(self.fs, self.old)
            self.old, self.removed = [], True


def _put_all(fs: Any, pairs: Sequence[tuple[str, str]]) -> None:
    """Upload each local file of ``pairs`` to its key (several at once); the first error is
    raised once none is in flight (those not started are not)."""
    with concurrent.futures.ThreadPoolExecutor(min(UPLOADS_AT_ONCE, len(pairs)) or 1) as pool:
        futures = [pool.submit(fs.put_file, local, key,
                               **_part_options(fs, os.path.getsize(local)))
                   for local, key in pairs]  # fmt: skip
        try:
            for future in futures:
                future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def _remove(fs: Any, keys: Sequence[str]) -> None:
    """Remove the objects ``keys`` (missing ones are no error)."""
    if not keys:
        return
    try:
        fs.rm(list(keys))
    except FileNotFoundError:
        for key in keys:
            with contextlib.suppress(FileNotFoundError):
                fs.rm_file(key)


def _remove_quietly(fs: Any, keys: list[str]) -> list[str]:
    """Remove ``keys`` (best effort); those that could not be removed."""
    try:
        _remove(fs, keys)
    except Exception:
        return [k for k in keys if _still_there(fs, k)]
    return []


def _still_there(fs: Any, key: str) -> bool:
    try:
        return bool(fs.exists(key))
    except Exception:
        return True


def _cause(exc: BaseException) -> str:
    """What went wrong, in a few words (a missing bucket says so, not only "not found")."""
    if isinstance(exc, FileNotFoundError) and exc.args and isinstance(exc.args[-1], str):
        return f"not found: {exc.args[-1]}"
    return describe(exc)


class StagedUpload(CommitsOnSuccess):
    """An :class:`Upload` with the interface of :class:`~bloscpack.io.staging.StagedOutput`:
    :meth:`open` makes a local temporary directory to build in (:attr:`path`), :meth:`commit`
    uploads what was built, :meth:`abort` leaves the URL as it was."""

    def __init__(self, upload: Upload) -> None:
        self.upload = upload
        self._work = ""
        #: Where to build the output once :meth:`open` has made its directory.
        self.path = ""

    def open(self) -> str:
        """Make the local directory to build in; returns :attr:`path`."""
        self._work = tempfile.mkdtemp(prefix="blpk-upload-")
        self.path = os.path.join(self._work, "new")
        return self.path

    def commit(self) -> None:
        """Upload what was built at :attr:`path`, then remove it."""
        try:
            self.upload.commit(self.path)
        finally:
            self.abort()

    def abort(self) -> None:
        """Remove what was built (nothing is uploaded)."""
        if self._work:
            shutil.rmtree(self._work, ignore_errors=True)
            self._work = ""

    def enter(self) -> None:
        self.open()


@contextlib.contextmanager
def staged_upload(
    url: str, storage_options: Mapping[str, Any] | None = None, *, overwrite: bool = True,
    last: Sequence[str] = (), replaces: Callable[[list[str]], bool] | None = None,
) -> Iterator[str]:  # fmt: skip
    """A :class:`StagedUpload` to ``url`` as a block: the local path to build at, uploaded
    when the block succeeds; removed when the block ends."""
    upload = Upload(url, storage_options, overwrite=overwrite, last=last, replaces=replaces)
    with StagedUpload(upload) as staged:
        yield staged.path


@contextlib.contextmanager
def upload_writer(url: str, storage_options: Mapping[str, Any] | None = None, *,
                  overwrite: bool = True) -> Iterator[IO[bytes]]:  # fmt: skip
    """A local temporary file opened for writing, uploaded to ``url`` as one object when the
    block succeeds (as :func:`bloscpack.io.staging.atomic_write` for a local path)."""
    with (
        staged_upload(url, storage_options, overwrite=overwrite) as built,
        open(built, "wb") as fh,
    ):
        yield fh


__all__ = [
    "MAX_PARTS", "PART_SIZE", "PARTS_AT_ONCE", "UPLOADS_AT_ONCE", "StagedUpload", "Upload",
    "exists", "rank", "staged_upload", "upload_writer",
]  # fmt: skip
