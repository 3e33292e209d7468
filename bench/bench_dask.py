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

Then writes: ``bloscpack.save(x, p)`` of a ``--write-mib`` float64 random walk held by the
workers (a persisted dask array in 4 MiB chunks; each worker compresses chunks, the directory
formats' workers write their chunk files, the file formats' workers write their runs of
chunks to files next to the output, which the kernel copies into it) against
``bloscpack.save(a, p)`` of the same numpy array in this process (all its C threads), each
format's defaults; the ratio is the dask time / the local time (< 1: dask is faster).  For
the file formats the same run also times the dask save that sends every compressed chunk
through the scheduler to this process (``STAGE_RUNS = False``, before the staged runs).
Each dask save runs once more under ``tracemalloc`` for the peak of the memory this process
allocates meanwhile (the scheduler runs in it too), which stays flat as the array grows.

``--no-malloc-trim`` starts the workers without the ``MALLOC_TRIM_THRESHOLD_=65536`` that
dask's nannies set by default.  With that setting glibc maps every buffer of 128 KiB or more
afresh and faults in its pages; that is most of the remaining gap for bcolz and ``.blp``,
whose chunks python-blosc compresses into a new buffer each.

    python bench/bench_dask.py --size-mib 256
    python bench/bench_dask.py                  # 2 GiB per file
    python bench/bench_dask.py --writes-only --write-mib 256
    python bench/bench_dask.py --writes-only --write-mib 256 --no-malloc-trim
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pickle
import shutil
import tempfile
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import blosc2
import dask
import dask.array as da
import distributed
import numpy as np
from timing import best_of

import bloscpack
from bloscpack.containers import registry
from bloscpack.integrations import dask as dask_integration

MiB = 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mib", type=int, default=2048, help="array size in MiB (2048)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per timing (3)")
    parser.add_argument("--dir", default=None, help="where to write (a temporary directory)")
    parser.add_argument("--write-mib", type=int, default=256, help="array size of the writes"
                        " in MiB (256)")  # fmt: skip
    parser.add_argument("--writes-only", action="store_true", help="time the writes only")
    parser.add_argument("--no-malloc-trim", action="store_true", help="workers without dask's"
                        " MALLOC_TRIM_THRESHOLD_ setting")  # fmt: skip
    args = parser.parse_args()
    if args.no_malloc_trim:
        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    root = Path(args.dir or tempfile.mkdtemp(prefix="bench-dask-"))
    if args.writes_only:
        with _cluster() as client:
            writes = write_rows(root, args.write_mib, args.repeat, client)
        print_writes(writes, args.write_mib, args.repeat)
        if args.dir is None:
            shutil.rmtree(root)
        return
    rng = np.random.default_rng(0)
    a = np.cumsum(rng.standard_normal(args.size_mib * MiB // 8)).astype("<f8")
    paths = {fmt: root / f"a{f.extension}" for fmt, f in registry.FORMATS.items()}
    for path in paths.values():
        bloscpack.save(a, path)
    del a
    rows = []
    with _cluster() as client:
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
        writes = write_rows(root, args.write_mib, args.repeat, client)
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
    print()
    print_writes(writes, args.write_mib, args.repeat)
    if args.dir is None:
        shutil.rmtree(root)
    os.sync()


@contextlib.contextmanager
def _cluster() -> Iterator[distributed.Client]:
    """A client of ``LocalCluster(n_workers=2, threads_per_worker=1)`` (worker processes)."""
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                 host="127.0.0.1", dashboard_address=":0",
                                 silence_logs=40) as cluster,
        distributed.Client(cluster) as client,
    ):  # fmt: skip
        yield client


def print_writes(writes: list[tuple[str, dict[str, float]]], mib: int, repeat: int) -> None:
    """The table of :func:`write_rows`."""
    print(f"{mib} MiB float64 random walk held by the workers, best of {repeat}")
    print("| format | dask `save` (2 workers) MB/s | local `save` MB/s | dask time / local time |"
          " this process's peak MiB | chunks sent to this process: MB/s | time / local time |"
          " peak MiB |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for fmt, t in writes:
        mbs = {k: mib / t[k] for k in ("dask", "local", "sent") if k in t}
        sent = (f"{mbs['sent']:,.0f} | {t['sent'] / t['local']:.2f} | {t['sent peak'] / MiB:.1f}"
                if "sent" in t else "| |")  # fmt: skip
        print(f"| {fmt} | {mbs['dask']:,.0f} | {mbs['local']:,.0f} |"
              f" {t['dask'] / t['local']:.2f} | {t['peak'] / MiB:.1f} | {sent} |")  # fmt: skip


def write_rows(root: Path, mib: int, repeat: int, client: distributed.Client
               ) -> list[tuple[str, dict[str, float]]]:  # fmt: skip
    """Each format's dask and local ``save`` times of a ``mib`` MiB random walk."""
    n = mib * MiB // 8
    walk = da.random.default_rng(0).standard_normal(n, chunks=MiB // 2).cumsum(axis=0)
    x = client.persist(walk)
    distributed.wait(x)
    a = x.compute()
    rows = []
    for fmt, f in registry.FORMATS.items():
        fns = {
            "dask": lambda f=f: bloscpack.save(x, root / f"w-dask{f.extension}"),
            "local": lambda f=f: bloscpack.save(a, root / f"w-local{f.extension}"),
        }
        if not f.directory:
            fns["sent"] = lambda f=f: _sent(x, root / f"w-sent{f.extension}")
        times = best_of(repeat, fns)
        times["peak"] = _peak(fns["dask"])
        if "sent" in fns:
            times["sent peak"] = _peak(fns["sent"])
        rows.append((fmt, times))
    return rows


def _peak(fn: Callable[[], object]) -> int:
    """The peak of the memory this process allocates (Python objects and numpy arrays, as
    ``tracemalloc`` sees them) while ``fn`` runs, in bytes."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _sent(x: da.Array, path: Path) -> None:
    """``bloscpack.save(x, path)`` sending every compressed chunk to this process."""
    dask_integration.STAGE_RUNS = False
    try:
        bloscpack.save(x, path)
    finally:
        dask_integration.STAGE_RUNS = True


if __name__ == "__main__":
    main()
