"""The progress bar ``blpk`` draws on stderr: percent, bytes done of the total and throughput.

The library knows nothing of terminals: it reports bytes through callbacks
(:func:`bloscpack.engine.observe`, ``convert(progress=...)``), and :class:`ProgressBar` turns
them into one line redrawn in place (``\\r``) at most :data:`REDRAW_INTERVAL` seconds apart,
finished with a newline.  :func:`wanted` decides whether to draw it at all: by default only
when stderr is a terminal, stdout does not carry the data to a pipe or a terminal (of two
``blpk`` in a pipe, at most the last draws), and the work is expected to take
:data:`MIN_SECONDS` or more (:func:`expected_seconds`: the input's size against the throughput
measured for that work, :data:`THROUGHPUT`).  Work of unknown size (a stream) draws only once it
has run that long (``ProgressBar(delay=...)``).  ``--progress`` draws in every case but ``-q``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

#: Seconds between two redraws, at least (10 a second).
REDRAW_INTERVAL = 0.1
#: Characters of the bar itself.
BAR_WIDTH = 24
#: Work expected to take less (seconds) draws no bar by default.
MIN_SECONDS = 1.0
#: Bytes per second of each kind of work, the slow end of what was measured (2 CPUs, 128 MB
#: of float64 random walk, each format with its default and with the lz4, zstd and zlib
#: codecs): compressing goes at 22-1100 MB/s (zlib and zstd 45-110, the b2nd default zstd
#: ~50, blosclz and lz4 500-1100), decompressing at 200-3000 MB/s, verifying at 250-4000 MB/s.
#: So a bar is drawn by default from 50 MB of input to compress (convert, append: they
#: compress) and from 200 MB to decompress or 250 MB to verify.
THROUGHPUT = {
    "compress": 50e6, "convert": 50e6, "append": 50e6, "decompress": 200e6, "verify": 250e6,
}  # fmt: skip


def expected_seconds(kind: str, nbytes: int | None) -> float | None:
    """Seconds work of ``kind`` (``compress``, ``decompress``, ...) on ``nbytes`` bytes of data
    is expected to take (None: unknown size)."""
    if nbytes is None:
        return None
    return nbytes / THROUGHPUT.get(kind, min(THROUGHPUT.values()))


def wanted(
    option: bool | None, quiet: bool, stream: TextIO, *, data_out: bool = False,
    seconds: float | None = None,
) -> bool:  # fmt: skip
    """Whether to draw a bar: never with ``quiet``; else as ``option`` says (``--progress`` /
    ``--no-progress``); by default when ``stream`` is a terminal, unless stdout carries the
    data to a pipe or a terminal (``data_out``) or the work is expected to take less than
    :data:`MIN_SECONDS` (``seconds``; None: unknown)."""
    if quiet:
        return False
    if option is not None:
        return option
    if data_out or (seconds is not None and seconds < MIN_SECONDS):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def human_bytes(n: float) -> str:
    """``n`` bytes with a decimal unit: ``512 B``, ``1.5 kB``, ``12.3 MB``, ``2.0 GB``."""
    if n < 1000:
        return f"{int(n)} B"
    for unit in ("kB", "MB", "GB", "TB"):
        n /= 1000
        if n < 1000 or unit == "TB":
            break
    return f"{n:.1f} {unit}"


class ProgressBar:
    """A one-line progress bar for ``total`` bytes (None: unknown, no percent) on ``stream``.

    :meth:`advance` adds bytes (from any thread); :meth:`observe` is the same for
    :func:`bloscpack.engine.observe` callbacks of one ``kind``.  :meth:`finish` draws the final
    state and ends the line; :meth:`clear` erases the line instead (before an error message).
    """

    def __init__(
        self,
        label: str,
        total: int | None,
        stream: TextIO,
        *,
        clock: Callable[[], float] = time.monotonic,
        delay: float = 0.0,
    ) -> None:
        self.label = label
        self.total = total
        self.stream = stream
        self.done = 0
        self._clock = clock
        self._start = clock()
        self._next_draw = self._start + delay  # the first update after ``delay`` draws
        self._delayed = delay > 0
        self._lock = threading.Lock()
        self._drawn = False
        self._closed = False

    def advance(self, nbytes: int) -> None:
        """Count ``nbytes`` more; redraw if the last redraw is old enough."""
        with self._lock:
            self.done += nbytes
            if self._closed:
                return
            now = self._clock()
            if now >= self._next_draw:
                self._next_draw = now + REDRAW_INTERVAL
                self._draw(now)

    def observer(self, kind: str) -> Callable[[str, int], None]:
        """A callback for :func:`bloscpack.engine.observe` counting the chunks of ``kind``
        (``"compress"`` or ``"decompress"``)."""

        def observe(what: str, nbytes: int) -> None:
            if what == kind:
                self.advance(nbytes)

        return observe

    def line(self, now: float | None = None) -> str:
        """The text of the bar as it stands."""
        now = self._clock() if now is None else now
        elapsed = max(now - self._start, 1e-9)
        rate = f"{self.done / elapsed / 1e6:.1f} MB/s"
        if self.total is None:
            return f"{self.label} {human_bytes(self.done)} {rate}"
        done = min(self.done, self.total)
        fraction = done / self.total if self.total else 1.0
        filled = int(fraction * BAR_WIDTH)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        return (
            f"{self.label} [{bar}] {fraction * 100:3.0f}%"
            f" {human_bytes(done)} / {human_bytes(self.total)} {rate}"
        )

    def _draw(self, now: float) -> None:
        self.stream.write("\r" + self.line(now) + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    def finish(self) -> None:
        """Draw the final state (100% when the total is known) and end the line."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._delayed and not self._drawn:  # ended before the delay: never drawn
                return
            if self.total is not None:
                self.done = max(self.done, self.total)
            self._draw(self._clock())
            self.stream.write("\n")
            self.stream.flush()

    def clear(self) -> None:
        """Erase the bar (the operation failed: its message gets a clean line)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._drawn:
                self.stream.write("\r\x1b[K")
                self.stream.flush()


__all__ = [
    "BAR_WIDTH", "MIN_SECONDS", "REDRAW_INTERVAL", "THROUGHPUT", "ProgressBar", "expected_seconds",
    "human_bytes", "wanted",
]  # fmt: skip
