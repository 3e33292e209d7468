"""Chunk jobs of NDArray reads and writes: run in order in a thread pool, with reusable
chunk-sized scratch buffers."""

from __future__ import annotations

import contextlib
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


class ScratchPool:
    """Reusable chunk-sized buffers, one per concurrent job."""

    def __init__(self, nitems: int, dtype: np.dtype) -> None:
        self.nitems = nitems
        self.dtype = dtype
        self._free: list[np.ndarray] = []

    @contextlib.contextmanager
    def take(self) -> Iterator[np.ndarray]:
        buf = self._free.pop() if self._free else np.empty(self.nitems, dtype=self.dtype)
        try:
            yield buf
        finally:
            self._free.append(buf)
