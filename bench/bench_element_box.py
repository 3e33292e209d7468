#!/usr/bin/env python
"""Open + one element, one element, one 512x512 box: ``bloscpack.open()`` against
``blosc2.open()`` on the same ``.b2nd`` files, with the Python calls each makes.

A 2048 x 4096 float32 random walk (along rows), zstd 5, written by python-blosc2 twice: with
pinned chunks (128, 4096) and blocks (16, 512), and with python-blosc2's default chunks and
blocks (which depend on the machine's caches).  For each file and library, in one run:

* ``open + element``: ``lib.open(path)[i, j]``, new random positions every round;
* ``element``: ``a[i, j]`` of an open array (50 positions in turn);
* ``box``: ``a[700:1212, 1500:2012]`` of an open array; ``open + box``: with the opening;
* ``calls``: the Python function calls of one such operation (``cProfile``'s total).

Times are the 10th percentile of ``--rounds`` rounds (after a warm-up); ratio = python-blosc2
time / bloscpack time (>= 1.0: bloscpack is as fast or faster).  Both libraries use
``--nthreads`` C threads.

    python bench/bench_element_box.py --nthreads 2
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import tempfile
import time
from collections.abc import Callable

import blosc2
import numpy as np

import bloscpack
from bloscpack import engine

BOX = (slice(700, 1212), slice(1500, 2012))
SHAPE = (2048, 4096)


def quantile_time(fn: Callable[[], object], rounds: int) -> float:
    """The 10th percentile of ``fn``'s wall time over ``rounds`` rounds, after one warm-up."""
    fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.quantile(times, 0.1))


def python_calls(fn: Callable[[], object]) -> int:
    """The Python function calls one call of ``fn`` makes (after a warm-up call)."""
    fn()
    profile = cProfile.Profile()
    profile.enable()
    fn()
    profile.disable()
    return int(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]


def measure(lib: object, path: str, rounds: int) -> dict[str, tuple[float, int]]:
    """Seconds and Python calls of each operation of ``lib`` (bloscpack or blosc2)."""
    rng = np.random.default_rng(7)
    points = [(int(rng.integers(SHAPE[0])), int(rng.integers(SHAPE[1]))) for _ in range(50)]
    turn = iter(range(1 << 62))

    def point() -> tuple[int, int]:
        return points[next(turn) % len(points)]

    opened = lib.open(path)  # type: ignore[attr-defined]
    ops: dict[str, tuple[Callable[[], object], int]] = {
        "open + element": (lambda: lib.open(path)[point()], rounds),  # type: ignore[attr-defined]
        "element": (lambda: opened[point()], rounds),
        "box": (lambda: opened[BOX], max(rounds // 3, 1)),
        "open + box": (lambda: lib.open(path)[BOX], max(rounds // 3, 1)),  # type: ignore[attr-defined]
    }
    return {name: (quantile_time(fn, n), python_calls(fn)) for name, (fn, n) in ops.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=300, help="rounds of the element reads")
    parser.add_argument("--nthreads", type=int, default=os.cpu_count() or 1, help="C threads")
    args = parser.parse_args()
    engine.set_nthreads(args.nthreads)
    blosc2.set_nthreads(args.nthreads)
    rng = np.random.default_rng(0)
    array = np.cumsum(rng.standard_normal(SHAPE, dtype=np.float32), axis=1)
    workdir = tempfile.mkdtemp(prefix="bench_element_box.")
    cparams = {"codec": blosc2.Codec.ZSTD, "clevel": 5}
    try:
        files = {}
        for name, geometry in (("pinned", {"chunks": (128, 4096), "blocks": (16, 512)}),
                               ("default", {})):  # fmt: skip
            path = os.path.join(workdir, f"{name}.b2nd")
            written = blosc2.asarray(array, urlpath=path, mode="w", cparams=cparams, **geometry)
            files[name] = (path, written.chunks, written.blocks)
            assert np.array_equal(bloscpack.open(path)[BOX], array[BOX])
        print(f"{SHAPE[0]}x{SHAPE[1]} float32, zstd 5, {args.nthreads} C threads; times in us")
        print(f"{'file':<34}{'operation':<16}{'bloscpack':>10}{'calls':>7}"
              f"{'blosc2':>10}{'calls':>7}{'ratio':>8}")  # fmt: skip
        for name, (path, chunks, blocks) in files.items():
            ours, theirs = measure(bloscpack, path, args.rounds), measure(blosc2, path, args.rounds)
            label = f"{name} {chunks} {blocks}"
            for op, (t_ours, c_ours) in ours.items():
                t_theirs, c_theirs = theirs[op]
                ratio = t_theirs / t_ours
                print(f"{label:<34}{op:<16}{t_ours * 1e6:>10.0f}{c_ours:>7}"
                      f"{t_theirs * 1e6:>10.0f}{c_theirs:>7}{ratio:>7.2f}x")  # fmt: skip
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
