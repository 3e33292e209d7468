#!/usr/bin/env python
"""Benchmark ``bloscpack.save`` against each format's own writer, same settings, one run.

* ``.b2nd``: ``bloscpack.save(a, "x.b2nd")`` vs ``blosc2.asarray(a, urlpath=...)`` (zstd 5,
  shuffle, python-blosc2's default chunks and blocks, the same threads);
* sparse b2nd: the same with ``sparse=True`` vs ``contiguous=False``;
* bcolz: ``bloscpack.save(a, "x.bcolz")`` at its defaults vs ``bcolz.carray(a, rootdir=...,
  mode="w").flush()`` at bcolz's (lz4 5, shuffle, bcolz's default chunklen);
* ``.blp``: ``bloscpack.save(a, "x.blp")`` at its defaults vs bloscpack 0.16's
  ``pack_ndarray_to_file(a, path)`` at its own (blosclz 7, shuffle, 1 MiB chunks, adler32),
  0.16 in a process of its own (``--bp016-dir``, installed there with pip if missing) that
  loads the same array once and times each call itself.

Durability, stated per row.  ``bloscpack.save`` writes a temporary file (directory), flushes
it to disk (``fsync``, of every file and directory for bcolz), renames it into place and
flushes the directory holding it.  python-blosc2, bcolz and bloscpack 0.16 flush nothing, so
each is measured as a user who wants the same guarantee would: "durable" rows flush the peer's
output afterwards inside its timing (``fsync`` of the file and of its directory; every file and
directory of a directory, several at once, as bloscpack does).  Rows marked "no fsync" compare
with the peer as it is: bcolz against ``durable=False``; ``.blp`` against ``bloscpack.save``
with ``os.fsync`` made a no-op for the call (the file's pages are still handed to the disk
early, as the writer always does).

Each timing is the median of ``--repeat`` interleaved rounds after a warm-up, with the CPU time
(user + system, all threads) of the same call; the ratio is the peer's median time /
bloscpack's (> 1: bloscpack is faster).  The load average is printed with the results.

    python bench/bench_write.py --quick                        # 64 MiB
    python bench/bench_write.py                                # 512 MiB float64
    python bench/bench_write.py --size-mib 100 --dtype float32 --formats blp,bcolz
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

import blosc2
import numpy as np
from bench_blp import BP016_PRELUDE, DEFAULT_BP016_DIR, ensure_bp016
from timing import add_json_options, comparison, disk_size, fresh, record, write_json

import bloscpack
from bloscpack import engine

MiB = 2**20
FORMATS = ("b2nd", "sparse", "bcolz", "blp")
Timed = Callable[[], tuple[float, float]]  # one call: (wall seconds, CPU seconds)


def timed(fn: Callable[[], object]) -> Timed:
    """``fn`` run in this process, timed: wall and CPU seconds."""

    def run() -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        return time.perf_counter() - t0, time.process_time() - c0

    return run


def fsync_output(path: Path) -> None:
    """Flush ``path`` (a file, or every file then every directory under a directory, 16 at
    once, as bloscpack's writers do) and the directory holding it to disk."""
    files, directories = [path], []
    if path.is_dir():
        files = [p for p in path.rglob("*") if p.is_file()]
        directories = [path, *(p for p in path.rglob("*") if p.is_dir())]
    for group in (files, [*directories, path.parent]):
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(_fsync, group))


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def no_fsync(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` with ``os.fsync`` a no-op while it runs."""

    def run() -> None:
        with mock.patch.object(os, "fsync", lambda fd: None):
            fn()

    return run


BP016_SERVER = """
import os, sys, time
import numpy as np
import bloscpack as bp
a = np.load(sys.argv[1])
out = sys.argv[2]
for line in sys.stdin:
    if os.path.exists(out):
        os.unlink(out)
    t0, c0 = time.perf_counter(), time.process_time()
    bp.pack_ndarray_to_file(a, out)
    if line.strip() == "durable":
        for path in (out, os.path.dirname(out)):
            fd = os.open(path, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
    print(time.perf_counter() - t0, time.process_time() - c0, flush=True)
"""


class Bp016:
    """bloscpack 0.16 in a process of its own, writing ``out`` from the array in ``npy``."""

    def __init__(self, directory: Path, npy: Path, out: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = str(directory)
        self.proc = subprocess.Popen(
            [sys.executable, "-S", "-c", BP016_PRELUDE + BP016_SERVER, str(npy), str(out)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True,
        )  # fmt: skip

    def call(self, durable: bool) -> Timed:
        def run() -> tuple[float, float]:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write("durable\n" if durable else "plain\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("bloscpack 0.16's process ended early")
            wall, cpu = map(float, line.split())
            return wall, cpu

        return run

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def median_rounds(repeat: int, fns: dict[str, Timed]) -> tuple[dict[str, dict[str, float]],
                                                                list[float]]:  # fmt: skip
    """Median wall and CPU seconds of each function over ``repeat`` interleaved rounds (after
    a warm-up), and the 1-minute load average after each round."""
    for fn in fns.values():
        fn()
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in fns}
    loads = []
    for _ in range(repeat):
        for name, fn in fns.items():
            times[name].append(fn())
        loads.append(os.getloadavg()[0])
    medians = {
        name: {"wall": statistics.median(w for w, _ in ts),
               "cpu": statistics.median(c for _, c in ts)}
        for name, ts in times.items()
    }  # fmt: skip
    return medians, loads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mib", type=int, default=512, help="array size in MiB (512)")
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"],
                        help="the random walk's dtype (float64)")  # fmt: skip
    parser.add_argument("--formats", default=",".join(FORMATS),
                        help=f"the formats to write, of {','.join(FORMATS)} (all)")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="64 MiB, 2 rounds")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per timing (3)")
    parser.add_argument("--nthreads", type=int, default=os.cpu_count() or 1, help="C threads")
    parser.add_argument("--dir", default=None, help="where to write (a temporary directory)")
    bp016_dir = Path(os.environ.get("BLOSCPACK016_DIR", DEFAULT_BP016_DIR))
    parser.add_argument("--bp016-dir", type=Path, default=bp016_dir,
                        help="where bloscpack 0.16 is (pip installs it if missing)")  # fmt: skip
    add_json_options(parser)
    args = parser.parse_args()
    formats = args.formats.split(",")
    if not set(formats) <= set(FORMATS):
        parser.error(f"--formats: unknown {sorted(set(formats) - set(FORMATS))}")
    size = 64 * MiB if args.quick else args.size_mib * MiB
    repeat = 2 if args.quick else args.repeat
    engine.set_nthreads(args.nthreads)
    blosc2.set_nthreads(args.nthreads)
    dtype = np.dtype(args.dtype)
    rng = np.random.default_rng(0)
    a = np.cumsum(rng.standard_normal(size // dtype.itemsize, dtype=dtype))  # a random walk
    dataset = f"{dtype.name} random walk"
    root = Path(args.dir or tempfile.mkdtemp(prefix="bench-write-"))
    root.mkdir(parents=True, exist_ok=True)
    cparams = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5, nthreads=args.nthreads)
    #: row -> (format, operation, the peer, its durability, bloscpack's file, the peer's, fns)
    rows: dict[str, tuple[str, str, str, str, str, str, dict[str, Timed]]] = {}

    def ours(name: str, **options: object) -> Callable[[], object]:
        return lambda: bloscpack.save(a, fresh(root / name), **options)

    def b2(name: str, contiguous: bool) -> Callable[[], object]:
        def run() -> None:
            blosc2.asarray(a, urlpath=str(fresh(root / name)), mode="w", contiguous=contiguous,
                           cparams=cparams)  # fmt: skip
            fsync_output(root / name)

        return run

    if "b2nd" in formats:
        rows["b2nd file"] = (".b2nd", "write", "python-blosc2", "peer + fsync", "a.b2nd",
                             "p.b2nd", {"bloscpack": timed(ours("a.b2nd", codec="zstd", clevel=5)),
                                        "peer": timed(b2("p.b2nd", True))})  # fmt: skip
    if "sparse" in formats:
        rows["b2nd sparse"] = (
            "sparse b2nd", "write", "python-blosc2", "peer + fsync", "s.b2nd", "ps.b2nd",
            {"bloscpack": timed(ours("s.b2nd", codec="zstd", clevel=5, sparse=True)),
             "peer": timed(b2("ps.b2nd", False))},
        )  # fmt: skip
    if "bcolz" in formats:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import bcolz

        def peer_bcolz(durable: bool) -> Callable[[], object]:
            def run() -> None:
                bcolz.carray(a, rootdir=str(fresh(root / "p.bcolz")), mode="w").flush()
                if durable:
                    fsync_output(root / "p.bcolz")

            return run

        rows["bcolz (durable)"] = ("bcolz", "write (durable)", "bcolz", "peer + fsync",
                                   "a.bcolz", "p.bcolz",
                                   {"bloscpack": timed(ours("a.bcolz")),
                                    "peer": timed(peer_bcolz(True))})  # fmt: skip
        rows["bcolz (durable=False)"] = ("bcolz", "write (durable=False)", "bcolz", "no fsync",
                                         "b.bcolz", "p.bcolz",
                                         {"bloscpack": timed(ours("b.bcolz", durable=False)),
                                          "peer": timed(peer_bcolz(False))})  # fmt: skip
    bp016 = None
    if "blp" in formats:
        directory = ensure_bp016(args.bp016_dir)
        if directory is None:
            print("# .blp rows left out: bloscpack 0.16 is not available", file=sys.stderr)
        else:
            np.save(root / "a.npy", a)
            bp016 = Bp016(directory, root / "a.npy", root / "p.blp")
            rows[".blp (durable)"] = (".blp", "write (durable)", "bloscpack 0.16",
                                      "peer + fsync", "a.blp", "p.blp",
                                      {"bloscpack": timed(ours("a.blp")),
                                       "peer": bp016.call(durable=True)})  # fmt: skip
            rows[".blp (no fsync)"] = (".blp", "write (no fsync)", "bloscpack 0.16", "no fsync",
                                       "b.blp", "p.blp",
                                       {"bloscpack": timed(no_fsync(ours("b.blp"))),
                                        "peer": bp016.call(durable=False)})  # fmt: skip
    results: dict[str, dict[str, dict[str, float]]] = {}
    loads: list[float] = []
    try:
        for name, row in rows.items():
            results[name], row_loads = median_rounds(repeat, row[-1])
            loads += row_loads
    finally:
        if bp016 is not None:
            bp016.close()

    print(f"{size / MiB:.0f} MiB {dataset}, {args.nthreads} threads, median of {repeat}"
          f" interleaved rounds; load average {min(loads, default=0):.2f}–"
          f"{max(loads, default=0):.2f} (1 min) on {os.cpu_count()} CPUs")  # fmt: skip
    print("| format | peer flushed | bloscpack ms (CPU) | peer ms (CPU) | ratio (peer / ours) |")
    print("|---|---|---:|---:|---:|")
    for name, t in results.items():
        ours_t, peer_t = t["bloscpack"], t["peer"]
        print(f"| {name} | {rows[name][3]}"
              f" | {ours_t['wall'] * 1e3:,.0f} ({ours_t['cpu'] * 1e3:,.0f})"
              f" | {peer_t['wall'] * 1e3:,.0f} ({peer_t['cpu'] * 1e3:,.0f})"
              f" | {peer_t['wall'] / ours_t['wall']:.2f} |")  # fmt: skip
    records, comparisons = [], []
    for name, t in results.items():
        fmt, op, peer, durability, *paths, _ = rows[name]
        for side, who, path in zip(("bloscpack", "peer"), ("bloscpack", peer), paths, strict=True):
            ratio = size / disk_size(root / path)
            records.append(record(dataset, fmt, who, op, t[side]["wall"], size, ratio,
                                  cpu_seconds=t[side]["cpu"], peer_flushed=durability))  # fmt: skip
        comparisons.append(comparison(fmt, op, "bloscpack", peer, dataset))
    settings = {"size_mib": size // MiB, "repeat": repeat, "nthreads": args.nthreads,
                "quick": args.quick, "dtype": dtype.name, "formats": formats,
                "statistic": "median", "load_average_1min": [min(loads, default=0),
                                                             max(loads, default=0)]}  # fmt: skip
    write_json(args, "write", settings, records, comparisons)
    if args.dir is None:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
