#!/usr/bin/env python
"""Benchmark reading every format through dask on a ``distributed`` cluster of worker
processes, against a local whole read and against python-blosc2 under dask.

For each format, a float64 random walk saved with its default settings:

* ``bloscpack.to_dask(p).sum().compute()`` on ``LocalCluster(n_workers=2,
  threads_per_worker=1)`` (each worker process opens the file once and reads its chunks);
* ``bloscpack.load(p).sum()`` in this process (all the C threads);
* for ``.b2nd``, ``da.from_array(blosc2.open(p)).sum().compute()`` with dask's threaded
  scheduler (python-blosc2 arrays do not pickle, so they cannot go to worker processes).

``to_dask`` runs with the stored chunks and with ``chunks="auto"`` (dask's chunk size, in
whole stored chunks).  Each timing is the best of ``--repeat`` interleaved rounds; ratios are
the other time / the ``chunks="auto"`` time (> 1: ``to_dask`` is faster).

    python bench/bench_dask.py --size-mib 256
    python bench/bench_dask.py                  # 2 GiB per file
"""

from __future__ import annotations

import argparse
import os
import pickle
import shutil
import tempfile
from pathlib import Path

import blosc2
import dask.array as da
import distributed
import numpy as np
from timing import best_of

import bloscpack
from bloscpack.containers import registry

MiB = 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mib", type=int, default=2048, help="array size in MiB (2048)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per timing (3)")
    parser.add_argument("--dir", default=None, help="where to write (a temporary directory)")
    args = parser.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="bench-dask-"))
    rng = np.random.default_rng(0)
    a = np.cumsum(rng.standard_normal(args.size_mib * MiB // 8)).astype("<f8")
    paths = {fmt: root / f"a{f.extension}" for fmt, f in registry.FORMATS.items()}
    for path in paths.values():
        bloscpack.save(a, path)
    del a
    rows = []
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                 host="127.0.0.1", dashboard_address=None,
                                 silence_logs=40) as cluster,
        distributed.Client(cluster) as client,
    ):  # fmt: skip
        for fmt, path in paths.items():
            x = bloscpack.to_dask(path)
            graph = len(pickle.dumps(dict(x.__dask_graph__())))
            auto = bloscpack.to_dask(path, chunks="auto")
            fns = {
                "to_dask": lambda x=x: client.compute(x.sum()).result(),
                "auto": lambda auto=auto: client.compute(auto.sum()).result(),
                "load": lambda path=path: bloscpack.load(path).sum(),
            }
            if fmt == "b2nd":
                peer = da.from_array(blosc2.open(str(path)))
                # python-blosc2 arrays do not pickle: dask runs them in this process only
                fns["blosc2"] = lambda peer=peer: peer.sum().compute(scheduler="threads")
            rows.append((fmt, x.npartitions, graph, best_of(args.repeat, fns)))
    print(f"{args.size_mib} MiB float64 random walk, LocalCluster(n_workers=2,"
          f" threads_per_worker=1), best of {args.repeat}")  # fmt: skip
    print("| format | chunks | graph KiB | to_dask MB/s | chunks='auto' MB/s | load MB/s |"
          " load / auto | python-blosc2 + dask MB/s | blosc2 / auto |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for fmt, chunks, graph, t in rows:
        mbs = {k: args.size_mib / v for k, v in t.items()}
        peer = (f"{mbs['blosc2']:,.0f} | {t['blosc2'] / t['auto']:.2f}" if "blosc2" in t
                else "| ")  # fmt: skip
        print(f"| {fmt} | {chunks} | {graph / 1024:.0f} | {mbs['to_dask']:,.0f} |"
              f" {mbs['auto']:,.0f} | {mbs['load']:,.0f} | {t['load'] / t['auto']:.2f} |"
              f" {peer} |")  # fmt: skip
    if args.dir is None:
        shutil.rmtree(root)
    os.sync()


if __name__ == "__main__":
    main()
