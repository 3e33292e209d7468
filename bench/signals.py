"""Test data shared by the benchmarks."""

from __future__ import annotations

import numpy as np

COLUMNS = 8192


def smooth_array(nbytes: int) -> np.ndarray:
    """About ``nbytes`` of a smooth float64 signal plus low-order noise, ``COLUMNS`` wide
    (compresses to about 60 % with zstd and byte shuffle)."""
    n = nbytes // 8
    rows = max(n // COLUMNS, 1)
    rng = np.random.default_rng(20240601)
    data = np.linspace(0.0, 1000.0, rows * COLUMNS)
    data += rng.standard_normal(rows * COLUMNS) * 1e-3
    return data.reshape(rows, COLUMNS)
