#!/usr/bin/env python
"""Open + one element, one element, one 512x512 box: ``bloscpack.open()`` against each
format's own reader on the same files, with the Python calls each makes.

A 2048 x 4096 float32 random walk (along rows), zstd 5, written by python-blosc2 as ``.b2nd``
with pinned chunks (128, 4096) and blocks (16, 512), with python-blosc2's default chunks and
blocks (which depend on the machine's caches) and as a sparse ``.b2nd`` directory with the
pinned geometry; as a ``.b2frame`` (a python-blosc2 ``SChunk`` of 4 MiB chunks: its elements
are read by flat position); as a bcolz carray (bcolz's defaults, zstd 5) and as a ``.blp``
(bloscpack's defaults, zstd 5; it has no reader of single elements to compare with).  For each
file and library, in one run:

* ``open + element``: ``lib.open(path)[i, j]``, new random positions every round;
* ``element``: ``a[i, j]`` of an open array (50 positions in turn);
* ``box``: ``a[700:1212, 1500:2012]`` of an open array; ``open + box``: with the opening
  (N-d files);
* ``calls``: the Python function calls of one such operation (``cProfile``'s total).

Times are the 10th percentile of ``--rounds`` rounds (after a warm-up); ratio = peer time /
bloscpack time (>= 1.0: bloscpack is as fast or faster).  Both libraries use ``--nthreads`` C
threads.

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

import bcolz
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


def measure(lib: object, path: str, rounds: int, flat: bool = False,
            boxes: bool = True) -> dict[str, tuple[float, int]]:  # fmt: skip
    """Seconds and Python calls of each operation of ``lib`` (a module with ``open``);
    ``flat``: the file holds the array's bytes in one dimension (read by flat position)."""
    rng = np.random.default_rng(7)
    points = [(int(rng.integers(SHAPE[0])), int(rng.integers(SHAPE[1]))) for _ in range(50)]
    turn = iter(range(1 << 62))

    def point() -> tuple[int, int] | int:
        i, j = points[next(turn) % len(points)]
        return i * SHAPE[1] + j if flat else (i, j)

    opened = lib.open(path)  # type: ignore[attr-defined]
    ops: dict[str, tuple[Callable[[], object], int]] = {
        "open + element": (lambda: lib.open(path)[point()], rounds),  # type: ignore[attr-defined]
        "element": (lambda: opened[point()], rounds),
    }
    if boxes:
        ops["box"] = (lambda: opened[BOX], max(rounds // 3, 1))
        ops["open + box"] = (lambda: lib.open(path)[BOX], max(rounds // 3, 1))  # type: ignore[attr-defined]
    return {name: (quantile_time(fn, n), python_calls(fn)) for name, (fn, n) in ops.items()}


def write_files(array: np.ndarray, workdir: str) -> dict[str, tuple[str, object, bool, bool]]:
    """The files measured: label -> (path, peer module or None, flat, boxes)."""
    cparams = {"codec": blosc2.Codec.ZSTD, "clevel": 5}
    pinned = {"chunks": (128, 4096), "blocks": (16, 512)}
    files: dict[str, tuple[str, object, bool, bool]] = {}
    for name, geometry in (("pinned", pinned), ("default", {}),
                           ("sparse", {**pinned, "contiguous": False})):  # fmt: skip
        path = os.path.join(workdir, f"{name}.b2nd")
        written = blosc2.asarray(array, urlpath=path, mode="w", cparams=cparams, **geometry)
        files[f"{name} {written.chunks} {written.blocks}"] = (path, blosc2, False, True)
    path = os.path.join(workdir, "a.b2frame")
    blosc2.SChunk(chunksize=4 << 20, data=array, urlpath=path, mode="w",
                  cparams={**cparams, "typesize": 4})  # fmt: skip
    files["b2frame (4 MiB chunks)"] = (path, blosc2, True, False)
    path = os.path.join(workdir, "a.bcolz")
    bcolz.carray(array, rootdir=path, mode="w",
                 cparams=bcolz.cparams(clevel=5, cname="zstd")).flush()  # fmt: skip
    files["bcolz (defaults)"] = (path, bcolz, False, False)
    path = os.path.join(workdir, "a.blp")
    bloscpack.save(array, path, codec="zstd", clevel=5)
    files[".blp (defaults)"] = (path, None, False, False)
    for path, _, flat, _ in files.values():
        if not flat:
            assert np.array_equal(bloscpack.open(path)[BOX], array[BOX])
    return files


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
    try:
        files = write_files(array, workdir)
        print(f"{SHAPE[0]}x{SHAPE[1]} float32, zstd 5, {args.nthreads} C threads; times in us;"
              f" load average {os.getloadavg()[0]:.1f}")  # fmt: skip
        print(f"{'file':<34}{'operation':<16}{'bloscpack':>10}{'calls':>7}"
              f"{'peer':>10}{'calls':>7}{'ratio':>8}")  # fmt: skip
        for label, (path, peer, flat, boxes) in files.items():
            ours = measure(bloscpack, path, args.rounds, flat, boxes)
            theirs = measure(peer, path, args.rounds, flat, boxes) if peer is not None else {}
            for op, (t_ours, c_ours) in ours.items():
                if op in theirs:
                    t_theirs, c_theirs = theirs[op]
                    peer_cols = f"{t_theirs * 1e6:>10.0f}{c_theirs:>7}{t_theirs / t_ours:>7.2f}x"
                else:
                    peer_cols = f"{'-':>10}{'-':>7}{'-':>8}"
                print(f"{label:<34}{op:<16}{t_ours * 1e6:>10.0f}{c_ours:>7}{peer_cols}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
