"""Timing shared by the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(repeat: int, fns: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Best wall time of each function over ``repeat`` interleaved rounds (after a warm-up)."""
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best
