#!/usr/bin/env python
"""Benchmark bloscpack's NDArray (.b2nd) reader and writer against python-blosc2, in one run.

* read:  ``bloscpack.containers.b2nd.load_b2nd(path)`` vs ``blosc2.open(path)[:]`` on a file
  written by python-blosc2 (``blosc2.asarray(a, urlpath=...)``, default chunks and blocks);
* write: ``save_b2nd(a, path)`` vs ``blosc2.asarray(a, urlpath=path)``, both with
  python-blosc2's default chunks and blocks;
* slice: a small box read with ``read_b2nd_selection`` vs ``blosc2.open(path)[box]``.

Both sides use the same codec (zstd), clevel (5), filters (shuffle) and number of threads:
``--nthreads`` C threads per call, or (the "chunks" rows) ``--nthreads`` chunks at a time with
one C thread each.
Each timing is the best of ``--repeat`` runs, the two sides interleaved; ratios are
python-blosc2 time / bloscpack time (> 1 means bloscpack is faster).

    python bench/bench_b2nd.py --quick     # 64 MiB, a few seconds
    python bench/bench_b2nd.py             # 1 GiB
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import blosc2
import numpy as np
from signals import smooth_array
from timing import add_json_options, best_of, comparison, record, write_json

from bloscpack import engine
from bloscpack.containers.b2nd import load_b2nd, read_b2nd_selection, save_b2nd
from bloscpack.containers.b2nd.layout import default_chunks_blocks

MiB = 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mib", type=int, default=1024, help="array size in MiB (1024)")
    parser.add_argument("--quick", action="store_true", help="64 MiB, 2 rounds")
    parser.add_argument("--repeat", type=int, default=5, help="rounds per timing (5)")
    parser.add_argument("--nthreads", type=int, default=os.cpu_count() or 1, help="C threads")
    parser.add_argument("--dir", default=None, help="where to write the files (a temp dir)")
    add_json_options(parser)
    args = parser.parse_args()
    size = 64 * MiB if args.quick else args.size_mib * MiB
    repeat = 2 if args.quick else args.repeat

    engine.set_nthreads(args.nthreads)
    blosc2.set_nthreads(args.nthreads)
    cparams = blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5, nthreads=args.nthreads)
    dparams = blosc2.DParams(nthreads=args.nthreads)
    workdir = Path(tempfile.mkdtemp(prefix="bench_b2nd.", dir=args.dir))
    try:
        array = smooth_array(size)
        theirs, ours = workdir / "blosc2.b2nd", workdir / "bloscpack.b2nd"
        blosc2.asarray(array, urlpath=str(theirs), mode="w", cparams=cparams, dparams=dparams)
        ref = blosc2.open(str(theirs))
        ratio = array.nbytes / os.path.getsize(theirs)
        layout = {"chunks": list(ref.chunks), "blocks": list(ref.blocks)}
        print(
            f"array {array.shape} float64, {array.nbytes / MiB:.0f} MiB; chunks {ref.chunks},"
            f" blocks {ref.blocks}; zstd clevel 5 shuffle; {args.nthreads} C threads;"
            f" file {os.path.getsize(theirs) / MiB:.0f} MiB"
        )
        del ref

        n = args.nthreads

        def chunk_parallel(fn: Callable[[], object]) -> Callable[[], object]:
            """``fn`` with one C thread per call (it runs ``n`` chunks at a time)."""

            def run() -> object:
                previous = engine.set_nthreads(1)
                try:
                    return fn()
                finally:
                    engine.set_nthreads(previous)

            return run

        shapes = default_chunks_blocks(array.shape, array.itemsize)  # python-blosc2's
        same = {"codec": "zstd", "clevel": 5, "chunks": shapes[0], "blocks": shapes[1]}
        write = best_of(repeat, {
            "python-blosc2": lambda: blosc2.asarray(
                array, urlpath=str(theirs), mode="w", cparams=cparams, dparams=dparams),
            "bloscpack": lambda: save_b2nd(array, ours, **same),
            "bloscpack (chunks)": chunk_parallel(
                lambda: save_b2nd(array, ours, nthreads=n, **same)),
        })  # fmt: skip
        written = {"python-blosc2": ratio, "bloscpack": array.nbytes / os.path.getsize(ours)}
        out = np.empty_like(array)
        read = best_of(repeat, {
            "python-blosc2": lambda: blosc2.open(str(theirs), dparams=dparams)[:],
            "bloscpack": lambda: load_b2nd(theirs),
            "bloscpack (out=)": lambda: load_b2nd(theirs, out=out),
            "bloscpack (chunks)": chunk_parallel(lambda: load_b2nd(theirs, nthreads=n)),
        })  # fmt: skip
        assert np.array_equal(load_b2nd(theirs), array)
        assert np.array_equal(blosc2.open(str(ours))[:], array)
        box = (slice(array.shape[0] // 3, array.shape[0] // 3 + 100), slice(1000, 1500))
        part = best_of(repeat * 5, {
            "python-blosc2": lambda: blosc2.open(str(theirs), dparams=dparams)[box],
            "bloscpack": lambda: read_b2nd_selection(theirs, box),
        })  # fmt: skip
        assert np.array_equal(read_b2nd_selection(theirs, box), array[box])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    mib = size / MiB
    chunks_label = f"{args.nthreads} chunks x 1 C thread"
    print(f"\n{'operation':<40}{'python-blosc2':>16}{'bloscpack':>16}{'ratio':>8}")
    rows = [
        ("write (save_b2nd)", write["python-blosc2"], write["bloscpack"], True),
        (f"write ({chunks_label})", write["python-blosc2"], write["bloscpack (chunks)"], True),
        ("read (load_b2nd)", read["python-blosc2"], read["bloscpack"], True),
        ("read (load_b2nd, out=)", read["python-blosc2"], read["bloscpack (out=)"], True),
        (f"read ({chunks_label})", read["python-blosc2"], read["bloscpack (chunks)"], True),
        ("read a 100x500 box", part["python-blosc2"], part["bloscpack"], False),
    ]
    for name, t_ref, t_ours, throughput in rows:
        if throughput:
            ref_s, ours_s = f"{mib / t_ref:.0f} MiB/s", f"{mib / t_ours:.0f} MiB/s"
        else:
            ref_s, ours_s = f"{t_ref * 1e3:.2f} ms", f"{t_ours * 1e3:.2f} ms"
        print(f"{name:<40}{ref_s:>16}{ours_s:>16}{t_ref / t_ours:>7.2f}x")

    dataset = "float64 smooth signal"
    box_op = f"read a {box[0].stop - box[0].start}x{box[1].stop - box[1].start} box"
    records = [record(dataset, ".b2nd", who, "read", t, size, ratio) for who, t in read.items()]
    records += [
        record(dataset, ".b2nd", who, "write", t, size, written[who.split(" (")[0]])
        for who, t in write.items()
    ]
    records += [record(dataset, ".b2nd", who, box_op, t, ratio=ratio) for who, t in part.items()]
    comparisons = [
        comparison(".b2nd", "write", "bloscpack", "python-blosc2", dataset),
        comparison(".b2nd", "read", "bloscpack", "python-blosc2", dataset),
        comparison(".b2nd", box_op, "bloscpack", "python-blosc2", dataset, "latency"),
    ]
    settings = {"size_mib": size // MiB, "shape": list(array.shape), "codec": "zstd",
                "clevel": 5, "repeat": repeat, "nthreads": args.nthreads, "quick": args.quick,
                **layout}  # fmt: skip
    write_json(args, "b2nd", settings, records, comparisons)


if __name__ == "__main__":
    main()
