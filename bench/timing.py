"""Timing shared by the benchmarks."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path


def fresh(path: Path) -> Path:
    """``path``, with whatever was there (a file or a directory) removed."""
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
    return path


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


# --- machine-readable results (``--json``), read by plots.py -------------------------------

MiB = 2**20
#: The version of the layout below; plots.py refuses other versions.
SCHEMA = 1


def add_json_options(parser: argparse.ArgumentParser) -> None:
    """``--json PATH``, ``--machine-note TEXT`` and ``--run-note TEXT``, the same in every
    benchmark script; ``write_json(args, ...)`` reads them."""
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write the results as JSON to PATH (for bench/plots.py)",
    )
    parser.add_argument(
        "--machine-note",
        default="",
        metavar="TEXT",
        help="added to the JSON's machine description (e.g. how loaded the machine was)",
    )
    parser.add_argument(
        "--run-note",
        default="",
        metavar="TEXT",
        help="added to the JSON's settings (e.g. why the sizes differ from the defaults)",
    )


def record(
    dataset: str,
    fmt: str,
    contender: str,
    operation: str,
    seconds: float,
    nbytes: int | None = None,
    ratio: float | None = None,
    memory: int | None = None,
    **extra: object,
) -> dict[str, object]:
    """One measurement: ``mb_per_s`` is MB/s of ``nbytes`` uncompressed bytes (1 MB = 2^20
    bytes; None for a latency), ``ratio`` the compression ratio (uncompressed / stored size),
    ``memory_bytes`` the peak memory the script measured for it (None if not measured)."""
    return {
        "dataset": dataset,
        "format": fmt,
        "contender": contender,
        "operation": operation,
        "seconds": seconds,
        "nbytes": nbytes,
        "mb_per_s": nbytes / MiB / seconds if nbytes and seconds > 0 else None,
        "ratio": ratio,
        "memory_bytes": memory,
        **extra,
    }


def comparison(
    fmt: str, operation: str, ours: str, peer: str, dataset: str = "", kind: str = "throughput"
) -> dict[str, str]:
    """Which two records of one (dataset, format, operation) are bloscpack and its peer;
    ``kind`` is ``throughput`` (a whole array) or ``latency`` (a few elements)."""
    return {
        "dataset": dataset,
        "format": fmt,
        "operation": operation,
        "ours": ours,
        "peer": peer,
        "kind": kind,
    }


def machine(note: str = "") -> dict[str, object]:
    """What the numbers were measured on: CPUs, load, memory and the libraries' versions."""
    import blosc2
    import numpy

    import bloscpack

    model = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as fh:
        model = next(
            (line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), ""
        )
    memory = 0
    with contextlib.suppress(OSError), open("/proc/meminfo") as fh:
        memory = next(
            (int(line.split()[1]) * 1024 for line in fh if line.startswith("MemTotal:")), 0
        )
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": model,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "memory_bytes": memory,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": {
            "bloscpack": bloscpack.__version__,
            "numpy": numpy.__version__,
            "blosc2": blosc2.__version__,
        },
        "note": note,
    }


def write_json(
    args: argparse.Namespace,
    benchmark: str,
    settings: dict[str, object],
    results: list[dict[str, object]],
    comparisons: list[dict[str, str]] | None = None,
) -> None:
    """Write one benchmark run to ``args.json`` (nothing if it is None), with the notes of
    ``add_json_options``."""
    if args.json is None:
        return
    doc = {
        "schema": SCHEMA,
        "benchmark": benchmark,
        "settings": {**settings, "note": args.run_note},
        "machine": machine(args.machine_note),
        "results": results,
        "comparisons": comparisons or [],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(doc, indent=1) + "\n")


def disk_size(path: Path) -> int:
    """Bytes stored in a file or in every file under a directory."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def median_of(repeat: int, fns: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Median wall time of each function over ``repeat`` interleaved rounds (after a warm-up)."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}
