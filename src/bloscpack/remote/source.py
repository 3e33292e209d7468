"""A :class:`~bloscpack.io.sources.ByteSource` over an object at a URL: what readers read is fetched
by byte range, so every format reads a remote file as it reads a local one, with the same
checks.

Opening fetches the first and the last bytes of the object in one round (two concurrent
requests, or one when the format keeps nothing at its end; the answers also tell the size):
headers, metalayers, offsets and trailers usually lie in them, and a format whose header says
it needs more asks for it in one more round (:meth:`RemoteSource.prefetch`).  The windows are
the format's own (its ``ContainerFormat.edges``, by the name's suffix), :data:`EDGE_SIZE` at
each end when the name does not tell.  Later reads fetch
just their bytes (a small one at least :data:`MIN_FETCH`, so that a chunk header brings its
bstarts along); :meth:`RemoteSource.prefetch` fetches many ranges at once, neighbours merged.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..errors import TruncatedError, UnsupportedError
from ..io.sources import ByteSource
from ..url import filesystem, redact, remote_errors
from . import EDGE_SIZE
from .cache import Ranges, ranges_for
from .fetch import Fetcher, coalesce, fetcher, split

#: A read of fewer bytes fetches this many (a chunk header and its bstarts in one request).
MIN_FETCH = 4096
#: Ranges closer than this are fetched as one.
MAX_GAP = 64 * 1024
#: Bytes fetched by one request when a large range is fetched whole (the parts concurrently).
PART_SIZE = 8 << 20


class RemoteSource(ByteSource):
    """The bytes of the object at ``url`` (an fsspec URL; ``storage_options`` for its
    filesystem), fetched by range.  ``cache``: None (recent ranges only), ``"memory"`` or a
    directory (see :func:`~bloscpack.remote.cache.ranges_for`); ``edges``: the bytes opening
    fetches from its start and its end (:data:`EDGE_SIZE` each by default); ``whole``: the
    object will be read whole, so one request fetches all of it when it holds at most that
    many bytes (else its edges).

    It overrides every public method of :class:`~bloscpack.io.sources.ByteSource`."""

    #: Every read costs a request: readers decode only the blocks they need, always.
    remote = True

    def __init__(self, url: str, storage_options: Mapping[str, Any] | None = None, *,
                 cache: Any = None, fs: Any = None, path: str | None = None,
                 edges: tuple[int, int] | None = None,
                 whole: int | None = None) -> None:  # fmt: skip
        self.name = redact(url)  # what messages show: no password, no token
        self._file = self._mmap = None
        self._view = None
        self._lock = None
        self._whole: bytes | None = None
        with remote_errors(url):
            if fs is None or path is None:
                fs, path = filesystem(url, storage_options)
            self.fetcher: Fetcher = fetcher(fs, path, self.name)
            piece = self.fetcher.whole(whole) if whole is not None else None
            if piece is None:
                head, tail = self.fetcher.edges(*(edges or (EDGE_SIZE, EDGE_SIZE)))
        if piece is not None:  # the whole object, in one request
            head, tail = piece, None
        self._size = head.size
        self.identity = self.fetcher.identity
        self._ranges: Ranges = ranges_for(cache, url, self.identity)
        self._ranges.add(head.start, head.data, pinned=True)
        if tail is not None:
            self._ranges.add(tail.start, tail.data, pinned=True)
        if head.start + len(head.data) >= self._size:
            self._whole = head.data[: self._size]

    @property
    def requests(self) -> int:
        """Requests made so far."""
        return self.fetcher.requests

    def size(self) -> int:
        return self._size

    @contextlib.contextmanager
    def consistent(self) -> Iterator[None]:
        """Nothing to lock: every request after the first names the object's identity
        (``If-Match``), so an object replaced since it was opened raises
        ``FileChangedError``."""
        yield

    def _check(self, offset: int, n: int, what: str) -> None:
        if offset < 0 or n < 0 or offset + n > self._size:
            raise TruncatedError(
                f"{self.name}: {what} at offset {offset} needs {n} bytes,"
                f" but the input has {self._size}"
            )

    def read(self, offset: int, n: int, what: str = "data") -> memoryview:
        self._check(offset, n, what)
        if self._whole is not None:
            return memoryview(self._whole)[offset : offset + n]
        found = self._ranges.find(offset, n)
        if found is not None:
            return found
        end = min(self._size, offset + max(n, MIN_FETCH))
        if end - offset > self._ranges.budget_left():  # not kept: fetched for this read
            try:  # room for what the object's declared size allows, before any request
                buffer = memoryview(bytearray(end - offset))
            except MemoryError:
                raise UnsupportedError(
                    f"{self.name}: {what} at offset {offset}: its {n} bytes do not fit in"
                    " memory"
                ) from None
            pos = 0
            for part in self._get(split([(offset, end)], PART_SIZE)):
                buffer[pos : pos + len(part)] = part
                pos += len(part)
            return buffer[:n]
        self._fetch([(offset, end)])
        found = self._ranges.find(offset, n)
        assert found is not None
        return found

    def read_into(self, offset: int, dest: memoryview, what: str = "data") -> None:
        dest[:] = self.read(offset, dest.nbytes, what)

    def read_upto(self, offset: int, n: int) -> memoryview:
        offset = max(0, min(offset, self._size))
        return self.read(offset, max(0, min(n, self._size - offset)))

    def peek(self, offset: int, n: int) -> bytes:
        return bytes(self.read_upto(offset, n))

    def release(self, offset: int, n: int) -> None:
        pass  # nothing is mapped

    def prefetch(self, ranges: Sequence[tuple[int, int]]) -> None:
        """Fetch the ``(offset, length)`` ranges not kept yet, neighbours merged, concurrently,
        and keep them for the reads that follow."""
        if self._whole is not None:
            return
        wanted = [(o, o + n) for o, n in ranges
                  if n > 0 and o >= 0 and o + n <= self._size
                  and self._ranges.find(o, n) is None]  # fmt: skip
        if wanted:
            self._fetch(coalesce(wanted, MAX_GAP))

    def _fetch(self, ranges: list[tuple[int, int]]) -> None:
        """Fetch ``ranges`` (large ones in concurrent parts) and keep them."""
        got = iter(self._get(split(ranges, PART_SIZE)))
        for start, end in ranges:
            parts = [next(got) for _ in range(-(-(end - start) // PART_SIZE))]
            self._ranges.add(start, parts[0] if len(parts) == 1 else b"".join(parts))

    def _get(self, ranges: list[tuple[int, int]]) -> list[bytes]:
        with remote_errors(self.name):
            return self.fetcher.get(ranges)

    def close(self) -> None:
        self._ranges.clear()
        self._whole = None


__all__ = ["EDGE_SIZE", "MIN_FETCH", "RemoteSource"]
