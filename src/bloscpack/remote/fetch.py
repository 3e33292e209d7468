"""Byte ranges of one object at a URL, in as few requests as the storage allows.

HTTP(S) and S3 objects are read with ``Range`` requests of our own (through the session of
fsspec's filesystem), which tell the object's size and identity (``ETag``) with its bytes: the
first bytes and the last bytes of an object come in two concurrent requests, with no separate
``HEAD``.  A server that ignores ``Range`` (an answer ``200`` with the whole body) is detected
and refused unless the body is small; later requests carry ``If-Match`` so that an object
replaced since it was opened is never mixed with the old one.  Other asynchronous filesystems
(``gs://``, ``az://``, ...) are read through fsspec's ``_info`` and ``_cat_file``, concurrently:
the object's description with its first bytes, then its last bytes; a read's ranges at once.
The rest (``memory://``, ``zip://...::``, ``simplecache::...``) through ``info`` and
``cat_file``, one request after the other.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import FileChangedError, RemoteError

#: Requests in flight at once for one read.
IN_FLIGHT = 16
#: Attempts of a request that failed transiently (a refused or reset connection, a 5xx).
ATTEMPTS = 3
#: Seconds before the first retry, doubled for each further one.
BACKOFF = 0.1
#: A body a server sends whole (ignoring ``Range``) is accepted up to this size.
WHOLE_BODY_LIMIT = 1 << 20
#: Seconds an HTTP request may take: to connect, to wait for each piece of the answer (its
#: first byte too), and in all; ``BLOSCPACK_HTTP_TIMEOUT`` (``connect=5,read=10,total=60``)
#: changes them, a ``timeout`` storage option (an ``aiohttp.ClientTimeout``) replaces them.
HTTP_TIMEOUTS = {"connect": 10.0, "read": 30.0, "total": 120.0}

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


@dataclass
class Piece:
    """Bytes of an object from ``start``, its ``size`` and identity (``ETag``, or
    modification time and size) as the answer told them."""

    start: int
    data: bytes
    size: int
    identity: str | None


class Transient(ConnectionError):
    """A failure worth a retry (a 5xx answer)."""


async def bounded(fetch: Callable[[int, int], Awaitable[Any]],
                  ranges: Sequence[tuple[int, int]]) -> list[Any]:  # fmt: skip
    """``fetch(start, end)`` of every range, concurrently, at most :data:`IN_FLIGHT` at once;
    in the order of ``ranges``."""
    limit = asyncio.Semaphore(IN_FLIGHT)

    async def one(start: int, end: int) -> Any:
        async with limit:
            return await fetch(start, end)

    return list(await asyncio.gather(*(one(s, e) for s, e in ranges)))


class Fetcher:
    """Ranges of one object, through fsspec's filesystem ``fs`` at ``path`` (``url``: for
    messages).  The base class serves any filesystem with ``info`` and ``cat_file``."""

    def __init__(self, fs: Any, path: str, url: str) -> None:
        self.fs, self.path, self.url = fs, path, url
        self.identity: str | None = None
        self.requests = 0  # made so far (for measurements)

    def edges(self, head: int, tail: int) -> tuple[Piece, Piece | None]:
        """The first ``head`` and the last ``tail`` bytes (None when the first hold the whole
        object, or ``tail`` is 0)."""
        info = self.fs.info(self.path)
        if info.get("type") == "directory":
            raise FileNotFoundError(self.path)
        size = int(info["size"])
        self.identity = identity_of(info)
        first = Piece(0, self.fs.cat_file(self.path, 0, min(head, size)), size, self.identity)
        self.requests += 2
        last = None
        if tail and size > head:
            start = max(head, size - tail)
            last = Piece(start, self.fs.cat_file(self.path, start, size), size, self.identity)
            self.requests += 1
        return first, last

    def whole(self, limit: int) -> Piece | None:
        """The whole object in one request, or None (nothing read) when it holds more than
        ``limit`` bytes."""
        info = self.fs.info(self.path)
        if info.get("type") == "directory":
            raise FileNotFoundError(self.path)
        size = int(info["size"])
        self.identity = identity_of(info)
        self.requests += 1
        if size > limit:
            return None
        self.requests += 1
        data = self.fs.cat_file(self.path)
        return Piece(0, _exact(self.url, data, 0, size), size, self.identity)

    def get(self, ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        """The bytes of each ``(start, end)`` range, exactly."""
        out = []
        for start, end in ranges:
            data = self.fs.cat_file(self.path, start, end)
            self.requests += 1
            out.append(_exact(self.url, data, start, end))
        return out


class AsyncFetcher(Fetcher):
    """A filesystem with an event loop (HTTP, S3): ranges fetched concurrently, a bounded
    number in flight, transient failures retried with backoff."""

    async def _range(self, spec: str) -> Piece:  # pragma: no cover - overridden
        raise NotImplementedError

    async def _whole(self, limit: int) -> Piece | None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _timed_out(self) -> TimeoutError:
        """What a request that timed out tells (the timeouts)."""
        return TimeoutError()

    def whole(self, limit: int) -> Piece | None:
        """The whole object in one request (no ``Range``: a server without ``Range`` support
        serves it too), or None, its body unread, when it holds more than ``limit`` bytes."""
        piece = self._run(lambda: self._retried(None, limit))
        if piece is not None:
            self.identity = piece.identity
        return piece

    def _run(self, make: Callable[[], Awaitable[Any]]) -> Any:
        from fsspec.asyn import sync

        try:
            return sync(self.fs.loop, make)
        except TimeoutError as exc:  # fsspec's sync() raises its own, caused by ours
            raise exc.__cause__ if isinstance(exc.__cause__, TimeoutError) else exc from None

    async def _retried(self, spec: str | None, limit: int = 0) -> Any:
        """A range (``spec``), or the whole object up to ``limit`` bytes (``spec`` None)."""
        for attempt in range(ATTEMPTS):
            try:
                self.requests += 1
                return await (self._range(spec) if spec is not None else self._whole(limit))
            except TimeoutError:  # a slow server: not worth the same wait again
                raise self._timed_out() from None
            except (Transient, ConnectionResetError) as exc:
                if attempt == ATTEMPTS - 1:
                    raise ConnectionError(f"{exc} (after {ATTEMPTS} attempts)") from exc
            except Exception as exc:
                if type(exc).__name__ == "ClientPayloadError" and attempt == ATTEMPTS - 1:
                    raise RemoteError(f"{self.url}: truncated response ({exc})") from exc
                if not _is_transient(exc) or attempt == ATTEMPTS - 1:
                    raise
            await asyncio.sleep(BACKOFF * 2**attempt)
        raise AssertionError("unreachable")

    def edges(self, head: int, tail: int) -> tuple[Piece, Piece | None]:
        """The first ``head`` and the last ``tail`` bytes in one round (one request when
        ``tail`` is 0); the answers tell the size and identity."""
        specs = [f"bytes=0-{head - 1}"] + ([f"bytes=-{tail}"] if tail else [])

        async def both() -> list[Piece]:
            return await asyncio.gather(*(self._retried(spec) for spec in specs))

        pieces = self._run(both)
        first, last = pieces[0], pieces[-1]
        known = None not in (first.identity, last.identity)
        if first.size != last.size or (known and first.identity != last.identity):
            raise FileChangedError(f"{self.url}: changed while it was opened")
        self.identity = first.identity or last.identity
        if len(pieces) == 1 or first.start + len(first.data) >= first.size:
            return first, None
        return first, last

    def get(self, ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        async def piece(start: int, end: int) -> Piece:
            return await self._retried(f"bytes={start}-{end - 1}")

        pieces = self._run(lambda: bounded(piece, ranges))
        return [_exact(self.url, p.data, s, e) for p, (s, e) in zip(pieces, ranges, strict=True)]


class AsyncFsFetcher(Fetcher):
    """An object on an asynchronous fsspec filesystem without ranges of our own (gcsfs,
    adlfs, ...): its ``_info`` and first bytes in one round, its last bytes in a second one
    when the first do not hold it whole; the ranges of a read concurrently, a bounded number
    in flight (the back end retries what it deems transient)."""

    def _run(self, make: Callable[[], Awaitable[Any]]) -> Any:
        from fsspec.asyn import sync

        return sync(self.fs.loop, make)

    async def _cat(self, start: int, end: int) -> bytes:
        self.requests += 1
        return bytes(await self.fs._cat_file(self.path, start, end))

    def edges(self, head: int, tail: int) -> tuple[Piece, Piece | None]:
        async def described() -> tuple[dict[str, Any], bytes]:
            self.requests += 1
            found: Any = await asyncio.gather(self.fs._info(self.path), self._cat(0, head),
                                              return_exceptions=True)  # fmt: skip
            info, data = found
            if isinstance(info, BaseException):
                raise info
            if info.get("type") == "directory":
                raise FileNotFoundError(self.path)
            if isinstance(data, BaseException):
                if int(info["size"]):
                    raise data
                data = b""  # an empty object has no byte to range over
            return info, bytes(data)

        info, data = self._run(described)
        size = int(info["size"])
        self.identity = identity_of(info)
        first = Piece(0, data[:size], size, self.identity)
        if len(first.data) >= size or not tail:
            return first, None
        start = max(len(first.data), size - tail)
        last = Piece(start, self._run(lambda: self._cat(start, size)), size, self.identity)
        return first, last

    def get(self, ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        found = self._run(lambda: bounded(self._cat, ranges))
        return [_exact(self.url, d, s, e) for d, (s, e) in zip(found, ranges, strict=True)]


class HttpFetcher(AsyncFetcher):
    """An object on an HTTP(S) server (fsspec's ``HTTPFileSystem`` and its session)."""

    def _checked(self, r: Any) -> None:
        """Raise what an answer other than 200/206 (or 416) means."""
        if r.status == 404:
            raise FileNotFoundError(self.url)
        if r.status in (401, 403):
            raise PermissionError(self.url)
        if r.status == 412:
            raise FileChangedError.since_opened(self.url)
        if r.status >= 500:
            raise Transient(f"HTTP {r.status} {r.reason}")
        if r.status not in (200, 206, 416):
            raise OSError(f"HTTP {r.status} {r.reason}")

    def _kwargs(self) -> dict[str, Any]:
        """The options of a request: the storage options, with the timeouts."""
        kw = dict(self.fs.kwargs)
        if "timeout" not in kw:
            import aiohttp

            limits = http_timeouts(self.url)
            kw["timeout"] = aiohttp.ClientTimeout(
                total=limits["total"], sock_connect=limits["connect"], sock_read=limits["read"]
            )
        return kw

    def _timed_out(self) -> TimeoutError:
        limits = self._kwargs()["timeout"]
        shown = ", ".join(f"{name} {getattr(limits, key):g} s" for name, key in
                          (("connect", "sock_connect"), ("read", "sock_read"), ("total", "total"))
                          if getattr(limits, key, None) is not None)  # fmt: skip
        return TimeoutError(shown)

    async def _whole(self, limit: int) -> Piece | None:
        fs = self.fs
        kw = self._kwargs()
        session = await fs.set_session()
        async with session.get(fs.encode_url(self.path), **kw) as r:
            self._checked(r)
            length = r.content_length
            if length is not None and length > limit:
                return None
            data = await _body(r.content.read, limit)
            if data is None:  # more than the limit, its length untold: fetched by ranges
                return None
            if length is not None and len(data) != length:
                raise RemoteError(f"{self.url}: truncated response: {len(data)} of {length} bytes")
            modified = r.headers.get("Last-Modified")
            identity = r.headers.get("ETag") or (f"{modified}/{len(data)}" if modified else None)
            return Piece(0, data, len(data), identity)

    async def _range(self, spec: str) -> Piece:
        fs = self.fs
        kw = self._kwargs()
        headers = {**(kw.pop("headers", None) or {}), "Range": spec}
        if self.identity is not None and self.identity.startswith(("\"", "W/")):
            headers["If-Match"] = self.identity
        session = await fs.set_session()
        async with session.get(fs.encode_url(self.path), headers=headers, **kw) as r:
            self._checked(r)
            if r.status == 416:  # an empty object has no byte to range over
                return Piece(0, b"", 0, r.headers.get("ETag"))
            identity = r.headers.get("ETag") or _modified(r.headers)
            if r.status == 200:
                length = r.content_length
                if length is None or length > WHOLE_BODY_LIMIT:
                    raise RemoteError(
                        f"{self.url}: the server ignores Range requests (it answered {spec!r}"
                        f" with the whole body, {length if length is not None else 'unknown'}"
                        " bytes); not downloading it"
                    )
                data = await r.read()
                return Piece(0, data, len(data), identity)
            start, _, size = _content_range(self.url, r.headers.get("Content-Range", ""))
            return Piece(start, await _asked(self.url, r.content.read, spec), size, identity)


class S3Fetcher(AsyncFetcher):
    """An object in S3 (s3fs's client, its retries and its error translation)."""

    async def _whole(self, limit: int) -> Piece | None:
        bucket, key, version = self.fs.split_path(self.path)
        kw: dict[str, Any] = {"VersionId": version} if version else {}
        resp = await self.fs._call_s3("get_object", Bucket=bucket, Key=key, **kw)
        try:
            length = resp.get("ContentLength")
            if length is not None and length > limit:
                return None
            data = await resp["Body"].read()
        finally:
            resp["Body"].close()
        if length is not None and len(data) != length:
            raise RemoteError(f"{self.url}: truncated response: {len(data)} of {length} bytes")
        return Piece(0, data, len(data), resp.get("ETag"))

    async def _range(self, spec: str) -> Piece:
        bucket, key, version = self.fs.split_path(self.path)
        kw: dict[str, Any] = {"Range": spec}
        if version:
            kw["VersionId"] = version
        if self.identity is not None:
            kw["IfMatch"] = self.identity
        try:
            resp = await self.fs._call_s3("get_object", Bucket=bucket, Key=key, **kw)
        except OSError as exc:
            if "PreconditionFailed" in str(exc) or "412" in str(exc):
                raise FileChangedError.since_opened(self.url) from None
            if any(k in str(exc) for k in ("InvalidRange", "416", "not satisfiable")):
                return Piece(0, b"", 0, None)  # an empty object: no byte to range over
            raise
        try:
            data = await _asked(self.url, resp["Body"].read, spec)
        finally:
            resp["Body"].close()
        identity = resp.get("ETag")
        crange = resp.get("ContentRange")
        if not crange:  # the whole object
            return Piece(0, data, len(data), identity)
        start, _, size = _content_range(self.url, crange)
        return Piece(start, data, size, identity)


def fetcher(fs: Any, path: str, url: str) -> Fetcher:
    """The fetcher for ``path`` on ``fs``: our own ``Range`` requests for HTTP and S3, fsspec's
    reads for the others (concurrent ones where ``fs`` is asynchronous)."""
    kind = type(fs).__name__
    if kind == "HTTPFileSystem":
        return HttpFetcher(fs, path, url)
    if kind == "S3FileSystem":
        return S3Fetcher(fs, path, url)
    if getattr(fs, "async_impl", False) and not getattr(fs, "asynchronous", False):
        return AsyncFsFetcher(fs, path, url)
    return Fetcher(fs, path, url)


def cat_objects(fs: Any, paths: Sequence[str]) -> list[bytes | Exception]:
    """Every object of ``paths`` whole (or the exception reading it raised): concurrently, a
    bounded number in flight, where ``fs`` is asynchronous.  (fsspec's ``cat`` of a list
    first asks about each path, which costs a request each.)"""
    if not getattr(fs, "async_impl", False):
        return [_or_error(fs.cat_file, p) for p in paths]
    # s3fs would first ask each object's size (a HEAD) to fetch large ones in parts
    options = {"max_concurrency": 1} if type(fs).__name__ == "S3FileSystem" else {}

    async def all_of() -> list[bytes | Exception]:
        limit = asyncio.Semaphore(IN_FLIGHT)

        async def one(path: str) -> bytes | Exception:
            async with limit:
                try:
                    return bytes(await fs._cat_file(path, **options))
                except Exception as exc:  # noqa: BLE001 - kept for the read that needs it
                    return exc

        return await asyncio.gather(*(one(p) for p in paths))

    from fsspec.asyn import sync

    return list(sync(fs.loop, all_of))


def whole_objects(fs: Any, paths: Sequence[str], urls: Sequence[str]) -> list[Piece | Exception]:
    """Every object of ``paths`` (``urls``: their names) whole with the identity its answer
    told (or the exception reading it raised): concurrently, a bounded number in flight,
    where ``fs`` is asynchronous."""
    fetchers = [fetcher(fs, p, u) for p, u in zip(paths, urls, strict=True)]
    everything = 1 << 62
    if not fetchers or not isinstance(fetchers[0], AsyncFetcher):
        found: list[Piece | Exception] = []
        for f in fetchers:
            try:
                piece = f.whole(everything)
                assert piece is not None
                found.append(piece)
            except Exception as exc:  # noqa: BLE001 - kept for the read that needs it
                found.append(exc)
        return found

    async def all_of() -> list[Piece | Exception]:
        limit = asyncio.Semaphore(IN_FLIGHT)

        async def one(f: AsyncFetcher) -> Piece | Exception:
            async with limit:
                try:
                    return await f._retried(None, everything)  # noqa: SLF001
                except Exception as exc:  # noqa: BLE001 - kept for the read that needs it
                    return exc

        return await asyncio.gather(*(one(f) for f in fetchers))  # type: ignore[arg-type]

    from fsspec.asyn import sync

    return list(sync(fs.loop, all_of))


def _or_error(read: Callable[[str], bytes], path: str) -> bytes | Exception:
    try:
        return bytes(read(path))
    except Exception as exc:  # noqa: BLE001 - kept for the read that needs it
        return exc


def coalesce(ranges: Sequence[tuple[int, int]], gap: int) -> list[tuple[int, int]]:
    """``(start, end)`` ``ranges`` sorted, those closer than ``gap`` bytes merged into one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start - merged[-1][1] <= gap:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def split(ranges: Sequence[tuple[int, int]], part: int) -> list[tuple[int, int]]:
    """``ranges`` cut into parts of at most ``part`` bytes (requests made concurrently)."""
    return [(s, min(s + part, end)) for start, end in ranges for s in range(start, end, part)]


#: Bytes of an answer read at a time (see :func:`_body`).
BODY_PIECE = 1 << 20


async def _body(read: Callable[[int], Awaitable[bytes]], most: int) -> bytes | None:
    """The body of an answer, read a piece at a time (``read(n)``: up to ``n`` more bytes), or
    None as soon as it holds more than ``most`` bytes (the rest unread): a server that sends
    more than was asked for, with or without a ``Content-Length``, costs at most that many
    bytes and a piece."""
    data = bytearray()
    while len(data) <= most:
        piece = await read(BODY_PIECE)
        if not piece:
            return bytes(data)
        data += piece
    return None


async def _asked(url: str, read: Callable[[int], Awaitable[bytes]], spec: str) -> bytes:
    """The body of the answer to the ``Range`` ``spec``, never more than it asked for."""
    most = _spec_length(spec)
    data = await _body(read, most)
    if data is None:
        raise RemoteError(
            f"{url}: the server sent more than the {most} bytes asked for ({spec!r}); not"
            " reading the rest"
        )
    return data


def _spec_length(spec: str) -> int:
    """Bytes a ``Range`` spec (``bytes=a-b`` or ``bytes=-n``) asks for."""
    first, _, last = spec.removeprefix("bytes=").partition("-")
    return int(last) if not first else int(last) - int(first) + 1


def _content_range(url: str, text: str) -> tuple[int, int, int]:
    found = _CONTENT_RANGE.match(text.strip())
    if found is None or found.group(3) == "*":
        raise RemoteError(f"{url}: the server sent no usable Content-Range ({text!r})")
    return int(found.group(1)), int(found.group(2)), int(found.group(3))


def _exact(url: str, data: bytes, start: int, end: int) -> bytes:
    if len(data) != end - start:
        raise RemoteError(
            f"{url}: truncated response: bytes {start}-{end - 1} came as {len(data)} bytes"
        )
    return data


def _modified(headers: Any) -> str | None:
    modified = headers.get("Last-Modified")
    return f"{modified}/{headers.get('Content-Range', '').rpartition('/')[2]}" if modified else None


def identity_of(info: dict[str, Any]) -> str | None:
    """The identity of an object as ``info`` (or a listing) describes it: its ``ETag``, or its
    modification time and size."""
    for key in ("ETag", "etag", "checksum"):
        if info.get(key):
            return str(info[key])
    for key in ("mtime", "LastModified", "last_modified", "modified", "created"):
        when = info.get(key)
        if when is not None:  # a listing may give a number where info gives a datetime
            when = when.timestamp() if hasattr(when, "timestamp") else when
            return f"{when}/{info.get('size')}"
    return None


def http_timeouts(url: str) -> dict[str, float]:
    """:data:`HTTP_TIMEOUTS`, as ``BLOSCPACK_HTTP_TIMEOUT`` changes them."""
    limits = dict(HTTP_TIMEOUTS)
    for item in filter(None, os.environ.get("BLOSCPACK_HTTP_TIMEOUT", "").split(",")):
        name, _, value = item.partition("=")
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        if name.strip() not in limits or not seconds > 0:
            raise RemoteError(
                f"{url}: BLOSCPACK_HTTP_TIMEOUT: {item!r} is not connect=, read= or total= a"
                " number of seconds > 0"
            )
        limits[name.strip()] = seconds
    return limits


def _is_transient(exc: BaseException) -> bool:
    """Connection failures of aiohttp that a retry may get past (not a refused connection
    to a host that is down, which is reported at once)."""
    name = type(exc).__name__
    return name in {"ServerDisconnectedError", "ClientPayloadError", "ClientOSError"}


__all__ = ["AsyncFsFetcher", "Fetcher", "Piece", "coalesce", "fetcher", "identity_of",
           "whole_objects"]
