"""Chunk jobs of NDArray reads and writes: run in order in a thread pool, with reusable
chunk-sized scratch buffers."""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np


def run_in_order(job: Callable[[int], Any], count: int, workers: int) -> Iterator[Any]:
    """``job(n)`` for ``n`` in ``range(count)``, results in order.  With ``workers`` > 1 the
    jobs run in a thread pool (the C calls release the GIL) with at most ``workers`` jobs
    ahead of the consumer."""
    if workers <= 1 or count <= 1:
        for n in range(count):
            yield job(n)
        return
    with ThreadPoolExecutor(min(workers, count)) as pool:
        pending: deque[Future[Any]] = deque()
        try:
            for n in range(count):
                pending.append(pool.submit(job, n))
                if len(pending) > workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


#: Bytes of scratch buffers kept for the next array once a job gives them back: a new buffer's
#: pages fault in on first touch, which costs more than decoding the few blocks of a box read
#: just after an array is opened.
KEPT_SCRATCH_BYTES = 64 << 20
_kept: dict[int, list[np.ndarray]] = {}
_kept_lock = threading.Lock()


class ScratchPool:
    """Reusable chunk-sized buffers, one per concurrent job, shared by every pool of their
    size (at most :data:`KEPT_SCRATCH_BYTES` of them kept)."""

    def __init__(self, nitems: int, dtype: np.dtype) -> None:
        self.nitems = nitems
        self.dtype = dtype
        self.nbytes = nitems * dtype.itemsize

    @contextlib.contextmanager
    def take(self) -> Iterator[np.ndarray]:
        with _kept_lock:
            free = _kept.get(self.nbytes)
            buf = free.pop() if free else None
        if buf is None:
            buf = np.empty(self.nbytes, dtype=np.uint8)
        try:
            yield buf.view(self.dtype)
        finally:
            with _kept_lock:
                kept = sum(size * len(bufs) for size, bufs in _kept.items())
                if kept + self.nbytes <= KEPT_SCRATCH_BYTES:
                    _kept.setdefault(self.nbytes, []).append(buf)
