#!/usr/bin/env python
"""Whole-array loads of ``.b2nd`` and ``.blp`` against python-blosc2 and zarr: wall time and
what the kernel did (system time, page faults, waits), on a quiet or a busy machine.

The files, datasets and settings are ``bench_peers.py``'s (256 MiB each: a float64 random
walk, int64 timestamps, a 4096 x 16384 float32 image; chunks of 128 x 16384, level 5, byte
shuffle, 2 threads for every tool).  Each round loads every file once, in a new random order
(so that no tool always follows the same one), and records for each load its wall time and,
from ``getrusage`` of the process (all its threads), the user and system CPU time, the minor
page faults and the voluntary context switches (a thread waiting: for another thread, a lock,
the disk).  ``--busy N`` runs N busy-looping processes during the measurement, as other work
on the machine would.

    python bench/bench_loads.py --rounds 15                  # 15 rounds, lz4 and zstd
    python bench/bench_loads.py --busy 4 --codecs lz4        # with 4 busy processes
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_peers import COLUMNS, CONTENDERS, OURS, available, datasets
from timing import add_json_options, comparison, record, write_json

MiB = 2**20
PEERS = ("python-blosc2", "zarr")
FORMAT = "2-D array"
#: The per-load quantities: getrusage fields, and how each is shown.
USAGE = ("user_s", "system_s", "minor_faults", "voluntary_switches")


def usage() -> tuple[float, float, int, int]:
    """CPU times and counters of this process so far (every thread)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime, r.ru_minflt, r.ru_nvcsw


def busy_processes(n: int) -> list[subprocess.Popen[bytes]]:
    """``n`` processes that spin until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def measure(a: np.ndarray, tools: dict, workdir: Path, rounds: int,
            seed: int) -> dict[str, list[dict[str, float]]]:  # fmt: skip
    """contender -> one dict per load: wall ``seconds`` and the :data:`USAGE` deltas."""
    paths = {name: workdir / f"{i}{tool.suffix}" for i, (name, tool) in enumerate(tools.items())}
    for name, tool in tools.items():
        tool.save(a, paths[name])
        if not np.array_equal(np.asarray(tool.read(paths[name], ...)).reshape(a.shape), a):
            raise SystemExit(f"{name}: the array read back differs from the one saved")
    loads: dict[str, list[dict[str, float]]] = {name: [] for name in tools}
    order = list(tools)
    rng = random.Random(seed)
    for _ in range(rounds):
        rng.shuffle(order)
        for name in order:
            before, t0 = usage(), time.perf_counter()
            got = tools[name].read(paths[name], ...)
            seconds, after = time.perf_counter() - t0, usage()
            del got  # freed before the next load, as in a loop over files
            deltas = [y - x for x, y in zip(before, after, strict=True)]
            loads[name].append({"seconds": seconds, **dict(zip(USAGE, deltas, strict=True))})
    for p in paths.values():
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    return loads


def quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mib", type=int, default=256, help="MiB per dataset (256)")
    parser.add_argument("--rounds", type=int, default=15, help="loads of each file (15)")
    parser.add_argument("--codecs", default="lz4,zstd", help="codecs, comma-separated (lz4,zstd)")
    parser.add_argument("--clevel", type=int, default=5, help="compression level (5)")
    parser.add_argument("--chunk-rows", type=int, default=128, help="rows per chunk (128)")
    parser.add_argument("--nthreads", type=int, default=2, help="threads of every tool (2)")
    parser.add_argument("--peers", default=",".join(PEERS),
                        help=f"peers, comma-separated ({','.join(PEERS)})")  # fmt: skip
    parser.add_argument("--busy", type=int, default=0, help="busy processes meanwhile (0)")
    parser.add_argument("--dir", default=None, help="where to write the files (a temp dir)")
    add_json_options(parser)
    args = parser.parse_args()
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = sorted(set(peers) - set(CONTENDERS) - set(OURS))
    if unknown:
        parser.error(f"unknown peers {', '.join(unknown)} (known: {', '.join(CONTENDERS)})")
    chunks = (args.chunk_rows, COLUMNS)
    codecs = [c.strip() for c in args.codecs.split(",")]
    arrays = datasets(args.size_mib * MiB)
    workdir = Path(tempfile.mkdtemp(prefix="bench_loads.", dir=args.dir))
    spinners = busy_processes(args.busy)
    results: dict[tuple[str, str], dict[str, list[dict[str, float]]]] = {}
    try:
        for codec in codecs:
            tools = available([*OURS, *peers], (codec, args.clevel, chunks, args.nthreads))
            for k, (dataset, a) in enumerate(arrays.items()):
                loads = results[dataset, codec] = measure(a, tools, workdir, args.rounds, k)
                print(f"\n{dataset}, {codec}, load average {os.getloadavg()[0]:.1f}: ms, median"
                      " [10th–90th percentile]; per load: user, system ms (90th), minor"
                      " faults, voluntary switches; ratio = median / .b2nd's")  # fmt: skip
                ref = statistics.median(x["seconds"] for x in loads["bloscpack .b2nd"])
                for name, xs in loads.items():
                    t = [x["seconds"] * 1e3 for x in xs]
                    s = [x["system_s"] * 1e3 for x in xs]
                    med = statistics.median(t)
                    user, faults, switches = (statistics.median(x[key] for x in xs)
                                              for key in ("user_s", "minor_faults",
                                                          "voluntary_switches"))  # fmt: skip
                    print(f"  {name:16s} {med:6.1f} [{quantile(t, .1):6.1f}–{quantile(t, .9):6.1f}]"
                          f"  user {user * 1e3:5.1f}"
                          f"  system {statistics.median(s):5.1f} ({quantile(s, .9):5.1f})"
                          f"  faults {faults:6.0f}  switches {switches:4.0f}"
                          f"  ratio {med / 1e3 / ref:.2f}")  # fmt: skip
    finally:
        for p in spinners:
            p.kill()
            p.wait()
        shutil.rmtree(workdir, ignore_errors=True)

    records, comparisons = [], []
    for (dataset, codec), loads in results.items():
        name = f"{dataset} ({codec})"
        for who, xs in loads.items():
            median = {key: statistics.median(x[key] for x in xs) for key in ("seconds", *USAGE)}
            seconds = median.pop("seconds")
            spread = [quantile([x["seconds"] for x in xs], q) for q in (0.1, 0.9)]
            records.append(record(name, FORMAT, who, "load", seconds, arrays[dataset].nbytes,
                                  p10_p90_seconds=spread, **median))  # fmt: skip
        comparisons += [comparison(FORMAT, "load", ours, peer, name)
                        for ours in OURS for peer in peers]  # fmt: skip
    settings = {"size_mib": args.size_mib, "codecs": codecs, "clevel": args.clevel,
                "shuffle": "byte", "chunks": list(chunks), "blocks": "each tool's default",
                "nthreads": args.nthreads, "rounds": args.rounds, "busy": args.busy,
                "peers": peers, "statistic": "median"}  # fmt: skip
    write_json(args, "loads", settings, records, comparisons)


if __name__ == "__main__":
    main()
