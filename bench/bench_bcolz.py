"""Benchmark: reading a bcolz carray with bloscpack against bcolz itself, in one run.

The carray (int64, bcolz's default chunklen and cparams) is written by bcolz-zipline; then,
alternately, ``bcolz.open(dir)[:]`` and ``bloscpack.containers.bcolz.load_bcolz(dir)`` read it
whole, both from the page cache.  Prints one line per size with the best time of each reader,
the throughput, and the ratio (bcolz time / bloscpack time: above 1 means bloscpack is faster).

    python bench/bench_bcolz.py            # 1 GiB
    python bench/bench_bcolz.py --quick    # 8 MiB and 64 MiB, for a quick check
    python bench/bench_bcolz.py --sizes 16 256 --repeat 7 --data random
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from timing import add_json_options, comparison, record, write_json

from bloscpack import engine
from bloscpack.containers.bcolz import load_bcolz

MIB = 1 << 20


def make_data(nbytes: int, kind: str) -> np.ndarray:
    """int64 test data: ``ramp`` (a slow ramp plus small noise, typical sensor/time data) or
    ``random`` (full-range random integers, incompressible)."""
    n = nbytes // 8
    rng = np.random.default_rng(42)
    if kind == "random":
        return rng.integers(-(2**62), 2**62, size=n, dtype=np.int64)
    return np.arange(n, dtype=np.int64) // 7 + rng.integers(0, 100, size=n, dtype=np.int64)


def best_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
        del result
    return min(times)


def run(size_mib: int, kind: str, repeat: int, workdir: Path, records: list[dict]) -> dict:
    """One size: the printed summary; the JSON records are appended to ``records``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import bcolz
    data = make_data(size_mib * MIB, kind)
    rootdir = workdir / f"i8_{size_mib}MiB_{kind}"
    bcolz.carray(data, rootdir=str(rootdir), mode="w").flush()
    ours = load_bcolz(rootdir)
    theirs = bcolz.open(str(rootdir), mode="r")[:]
    if not (np.array_equal(ours, data) and np.array_equal(theirs, data)):
        raise SystemExit("readers disagree with the data written")
    del ours, theirs
    t_bcolz = best_time(lambda: bcolz.open(str(rootdir), mode="r")[:], repeat)
    t_ours = best_time(lambda: load_bcolz(rootdir), repeat)
    storage = json.loads((rootdir / "meta" / "storage").read_text())
    disk = sum(p.stat().st_size for p in (rootdir / "data").iterdir())
    shutil.rmtree(rootdir)
    dataset = f"int64 {kind} {size_mib} MiB"
    records += [
        record(dataset, "bcolz", who, "read", t, data.nbytes, data.nbytes / disk)
        for who, t in (("bcolz", t_bcolz), ("bloscpack", t_ours))
    ]
    return {
        "size_mib": size_mib,
        "data": kind,
        "chunklen": storage["chunklen"],
        "ratio_on_disk": round(data.nbytes / disk, 2),
        "bcolz_s": round(t_bcolz, 4),
        "bloscpack_s": round(t_ours, 4),
        "bcolz_gbps": round(data.nbytes / t_bcolz / 1e9, 2),
        "bloscpack_gbps": round(data.nbytes / t_ours / 1e9, 2),
        "speedup": round(t_bcolz / t_ours, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (8 and 64 MiB)")
    parser.add_argument("--sizes", type=int, nargs="+", help="carray sizes in MiB (default 1024)")
    parser.add_argument("--data", choices=("ramp", "random"), default="ramp")
    parser.add_argument("--repeat", type=int, default=5, help="runs per reader (best is kept)")
    parser.add_argument("--dir", help="where to write the carrays (default: a temporary dir)")
    add_json_options(parser)
    args = parser.parse_args()
    sizes = args.sizes or ([8, 64] if args.quick else [1024])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import bcolz
    print(f"# bcolz {bcolz.__version__} (C-Blosc {bcolz.blosc_version()[0]}, {bcolz.ncores} cores);"
          f" bloscpack engine threads: {engine.get_nthreads()}")  # fmt: skip
    records: list[dict] = []
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for size in sizes:
            print(json.dumps(run(size, args.data, args.repeat, Path(tmp), records)), flush=True)
    settings = {"sizes_mib": sizes, "data": args.data, "repeat": args.repeat,
                "bcolz": bcolz.__version__, "engine_threads": engine.get_nthreads(),
                "quick": args.quick}  # fmt: skip
    comparisons = [comparison("bcolz", "read", "bloscpack", "bcolz", r["dataset"])
                   for r in records if r["contender"] == "bloscpack"]  # fmt: skip
    write_json(args, "bcolz", settings, records, comparisons)


if __name__ == "__main__":
    main()
