#!/usr/bin/env python
"""Start-up of ``blpk`` and of ``import bloscpack`` against bloscpack 0.16, in one run.

Each command runs in a fresh process, the contenders interleaved, ``--repeats`` times; the
table gives the median wall time and the median CPU time (user + system, of the process and
its children: less sensitive than wall time to other work on the machine) and our time over
0.16's.  Commands: ``blpk --version``, ``blpk c`` and ``blpk d`` of a 1 MiB raw file (a
float64 linspace) and ``python -c "import bloscpack"``.  Python's bytecode cache is allowed, as
after an install.  ``--importtime`` also prints the slowest imports of each of our commands
(``python -X importtime``, cumulative).

    python bench/bench_startup.py                 # 20 runs of each
    python bench/bench_startup.py --repeats 50 --importtime
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_blp import BP016_PRELUDE, DEFAULT_BP016_DIR, _bp016_env, _ours_env, ensure_bp016
from timing import add_json_options, comparison, record, write_json

OURS = "bloscpack 1.x"
OLD = "bloscpack 0.16"
#: 0.16's command line, started as the benchmarks of bench_blp.py start it.
OLD_BLPK = [
    sys.executable, "-S", "-c",
    BP016_PRELUDE + "import sys; from bloscpack.cli import main; sys.argv = ['blpk'] +"
    " sys.argv[1:]; main()",
]  # fmt: skip
OLD_IMPORT = [sys.executable, "-S", "-c", BP016_PRELUDE + "import bloscpack"]


def commands(work: Path) -> dict[str, dict[str, list[str]]]:
    """operation -> contender -> argv (run in ``work``)."""
    ours = [sys.executable, "-m", "bloscpack"]
    return {
        "blpk --version": {OURS: [*ours, "--version"], OLD: [*OLD_BLPK, "--version"]},
        "blpk c (1 MiB)": {
            OURS: [*ours, "-f", "c", "in.bin", "ours.blp"],
            OLD: [*OLD_BLPK, "-f", "c", "in.bin", "old.blp"],
        },
        "blpk d (1 MiB)": {
            OURS: [*ours, "-f", "d", "ours.blp", "ours.out"],
            OLD: [*OLD_BLPK, "-f", "d", "old.blp", "old.out"],
        },
        "import bloscpack": {
            OURS: [sys.executable, "-c", "import bloscpack"],
            OLD: OLD_IMPORT,
        },
    }


def timed(argv: list[str], env: dict[str, str], work: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=work, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def slowest_imports(argv: list[str], env: dict[str, str], work: Path, n: int = 12) -> list[str]:
    """The ``n`` imports of ``argv`` with the largest cumulative time (``-X importtime``)."""
    proc = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], env=env, cwd=work, capture_output=True,
        text=True, check=True,
    )  # fmt: skip
    rows = []
    for line in proc.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (.*)$", line)
        if found:
            rows.append((int(found.group(2)), found.group(3).rstrip()))
    return [f"{us / 1000:8.1f} ms  {name}" for us, name in sorted(rows, reverse=True)[:n]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--importtime", action="store_true", help="print the slowest imports")
    parser.add_argument(
        "--bp016-dir",
        type=Path,
        default=Path(os.environ.get("BLOSCPACK016_DIR", DEFAULT_BP016_DIR)),
    )
    add_json_options(parser)
    args = parser.parse_args(argv)
    bp016 = ensure_bp016(args.bp016_dir)
    envs = {OURS: _ours_env()}
    if bp016 is not None:
        envs[OLD] = _bp016_env(bp016)
    results, comparisons = [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        np.linspace(0, 1, 2**17).tofile(work / "in.bin")
        table = commands(work)
        for runs in table.values():
            for name, env in envs.items():  # warm-up: bytecode caches, page cache
                subprocess.run(runs[name], env=env, cwd=work, check=True, capture_output=True)
        times = {(op, name): [] for op in table for name in envs}
        for _ in range(args.repeats):
            for op, runs in table.items():
                for name, env in envs.items():
                    times[op, name].append(timed(runs[name], env, work))
        print(f"{'operation':18} {'contender':16} {'wall ms':>8} {'cpu ms':>8}  ours/0.16 (cpu)")
        for op in table:
            for name in envs:
                wall = statistics.median(t[0] for t in times[op, name])
                cpu = statistics.median(t[1] for t in times[op, name])
                ratio = ""
                if name == OURS and OLD in envs:
                    old_cpu = statistics.median(t[1] for t in times[op, OLD])
                    old_wall = statistics.median(t[0] for t in times[op, OLD])
                    ratio = f"{wall / old_wall:.2f} ({cpu / old_cpu:.2f})"
                print(f"{op:18} {name:16} {wall * 1000:8.1f} {cpu * 1000:8.1f}  {ratio}")
                results.append(record("1 MiB linspace f8", ".blp", name, op, wall, cpu=cpu))
            if OLD in envs:
                comparisons.append(comparison(".blp", op, OURS, OLD, "1 MiB linspace f8",
                                              kind="latency"))  # fmt: skip
        if args.importtime:
            for op, runs in table.items():
                print(f"\n{op}: slowest imports (cumulative)")
                print("\n".join(slowest_imports(runs[OURS], envs[OURS], work)))
    write_json(args, "bench_startup", {"repeats": args.repeats}, results, comparisons)
    return 0


if __name__ == "__main__":
    sys.exit(main())
