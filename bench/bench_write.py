#!/usr/bin/env python
"""Benchmark ``bloscpack.save`` against each format's own writer, same settings, one run.

* ``.b2nd``: ``bloscpack.save(a, "x.b2nd")`` vs ``blosc2.asarray(a, urlpath=...)`` (zstd 5,
  shuffle, python-blosc2's default chunks and blocks, the same threads);
* sparse b2nd: the same with ``sparse=True`` vs ``contiguous=False``;
* bcolz: ``bloscpack.save(a, "x.bcolz")`` (durable: every file flushed to disk before the
  rename; and ``durable=False``) vs ``bcolz.carray(a, rootdir=..., mode="w").flush()`` (lz4 5,
  shuffle, bcolz's default chunklen; bcolz flushes nothing to disk).

Each timing is the best of ``--repeat`` interleaved rounds; the ratio is the peer's time /
bloscpack's time (> 1: bloscpack is faster).  ``.blp`` against bloscpack 0.16 is in
``bench_blp.py``.

    python bench/bench_write.py --quick    # 64 MiB
    python bench/bench_write.py            # 512 MiB
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

import blosc2
import numpy as np
from timing import (
    add_json_options,
    best_of,
    comparison,
    disk_size,
    fresh,
    record,
    write_json,
)

import bloscpack
from bloscpack import engine

MiB = 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mib", type=int, default=512, help="array size in MiB (512)")
    parser.add_argument("--quick", action="store_true", help="64 MiB, 2 rounds")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per timing (3)")
    parser.add_argument("--nthreads", type=int, default=os.cpu_count() or 1, help="C threads")
    parser.add_argument("--dir", default=None, help="where to write (a temporary directory)")
    add_json_options(parser)
    args = parser.parse_args()
    size = 64 * MiB if args.quick else args.size_mib * MiB
    repeat = 2 if args.quick else args.repeat
    engine.set_nthreads(args.nthreads)
    blosc2.set_nthreads(args.nthreads)
    rng = np.random.default_rng(0)
    a = np.cumsum(rng.standard_normal(size // 8)).astype("<f8")  # a random walk
    root = Path(args.dir or tempfile.mkdtemp(prefix="bench-write-"))
    cparams = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5, nthreads=args.nthreads)
    rows: list[tuple[str, dict[str, float]]] = []
    #: row -> (format, operation, the peer, the files bloscpack and the peer wrote)
    outputs = {
        "b2nd file": (".b2nd", "write", "python-blosc2", "a.b2nd", "p.b2nd"),
        "b2nd sparse": ("sparse b2nd", "write", "python-blosc2", "s.b2nd", "ps.b2nd"),
        "bcolz (durable)": ("bcolz", "write (durable)", "bcolz", "a.bcolz", "p.bcolz"),
        "bcolz (durable=False)": ("bcolz", "write (durable=False)", "bcolz", "b.bcolz", "p.bcolz"),
    }

    def ours(name: str, **options: object) -> Callable[[], object]:
        return lambda: bloscpack.save(a, fresh(root / name), **options)

    def b2(name: str, contiguous: bool) -> Callable[[], object]:
        return lambda: blosc2.asarray(a, urlpath=str(fresh(root / name)), mode="w",
                                      contiguous=contiguous, cparams=cparams)  # fmt: skip

    rows.append(("b2nd file", best_of(repeat, {
        "bloscpack": ours("a.b2nd", codec="zstd", clevel=5),
        "peer": b2("p.b2nd", True),
    })))  # fmt: skip
    rows.append(("b2nd sparse", best_of(repeat, {
        "bloscpack": ours("s.b2nd", codec="zstd", clevel=5, sparse=True),
        "peer": b2("ps.b2nd", False),
    })))  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import bcolz

    def peer_bcolz() -> None:
        bcolz.carray(a, rootdir=str(fresh(root / "p.bcolz")), mode="w").flush()

    rows.append(("bcolz (durable)", best_of(repeat, {
        "bloscpack": ours("a.bcolz"), "peer": peer_bcolz,
    })))  # fmt: skip
    rows.append(("bcolz (durable=False)", best_of(repeat, {
        "bloscpack": ours("b.bcolz", durable=False), "peer": peer_bcolz,
    })))  # fmt: skip

    print(f"{size / MiB:.0f} MiB float64 random walk, {args.nthreads} threads, best of {repeat}")
    print("| format | bloscpack MB/s | peer MB/s | ratio (peer time / ours) |")
    print("|---|---:|---:|---:|")
    for name, t in rows:
        mbs = {k: size / MiB / v for k, v in t.items()}
        print(f"| {name} | {mbs['bloscpack']:,.0f} | {mbs['peer']:,.0f} |"
              f" {t['peer'] / t['bloscpack']:.2f} |")  # fmt: skip
    records, comparisons = [], []
    for name, t in rows:
        fmt, op, peer, *paths = outputs[name]
        dataset = "float64 random walk"
        for side, who, path in zip(("bloscpack", "peer"), ("bloscpack", peer), paths, strict=True):
            ratio = size / disk_size(root / path)
            records.append(record(dataset, fmt, who, op, t[side], size, ratio))
        comparisons.append(comparison(fmt, op, "bloscpack", peer, dataset))
    settings = {"size_mib": size // MiB, "repeat": repeat, "nthreads": args.nthreads,
                "quick": args.quick}  # fmt: skip
    write_json(args, "write", settings, records, comparisons)
    if args.dir is None:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
