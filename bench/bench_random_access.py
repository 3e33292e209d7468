#!/usr/bin/env python
"""Benchmark random access through ``bloscpack.open()`` on a 1 GiB ``.blp`` and a 1 GiB ``.b2nd``.

For each file, in one run:

* ``load``: the whole array, ``numpy.asarray(bloscpack.open(path))``;
* ``10 items``: 10 random single elements ``a[i, j]`` of an open array (new positions every
  round), and their time as a fraction of ``load`` (the target is <= 1 %);
* ``open + 1st item``: ``bloscpack.open(path)[i, j]``, with the decoder calls it makes counted:
  none on open, then at most one index read (the element's chunk's entry of the frame index of
  a ``.b2nd``; a ``.blp`` keeps its offsets uncompressed) and one decode of at most one block;
* against python-blosc2 on the same ``.b2nd`` file: ``blosc2.open(path)[i, j]`` for
  ``open + 1st item``, and 10 random elements of an open ``blosc2.open(path)``; the ratio is
  python-blosc2 time / bloscpack time (>= 1.0 means bloscpack is as fast or faster).

Both libraries use the same number of C threads.  Timings are the best of ``--repeat`` rounds
(``load``) or of ``--item-rounds`` rounds (``10 items``, ``open + 1st item``: each round its own
random positions, the same for both libraries, drawn before timing).

    python bench/bench_random_access.py --quick    # 64 MiB files, a few seconds
    python bench/bench_random_access.py            # 1 GiB files
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import blosc2
import numpy as np
from signals import smooth_array
from timing import add_json_options, comparison, record, write_json

import bloscpack
from bloscpack import engine
from bloscpack.containers.b2nd import save_b2nd
from bloscpack.containers.bloscpack import save_blp

MiB = 2**20
ITEMS = 10


def best(repeat: int, fn: Callable[[int], object]) -> float:
    """Best wall time of ``fn(round)`` over ``repeat`` rounds (after one warm-up round)."""
    fn(-1)
    times = []
    for k in range(repeat):
        t0 = time.perf_counter()
        fn(k)
        times.append(time.perf_counter() - t0)
    return min(times)


class DecodeCounter:
    """Counts the C decoder calls of the engine and the bytes they produce."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []
        self._whole, self._items = engine.decompress_into, engine.getitem_into

    def __enter__(self) -> DecodeCounter:
        def whole(chunk, out, **kw):  # type: ignore[no-untyped-def]
            n = self._whole(chunk, out, **kw)
            self.calls.append(("chunk", n))
            return n

        def items(chunk, start, nitems, out, **kw):  # type: ignore[no-untyped-def]
            n = self._items(chunk, start, nitems, out, **kw)
            self.calls.append(("items", n))
            return n

        engine.decompress_into, engine.getitem_into = whole, items
        return self

    def __exit__(self, *exc: object) -> None:
        engine.decompress_into, engine.getitem_into = self._whole, self._items

    def take(self) -> list[tuple[str, int]]:
        calls, self.calls = self.calls, []
        return calls


def positions(shape: tuple[int, int], rounds: int) -> list[list[tuple[int, int]]]:
    """``ITEMS`` random positions for each of ``rounds`` rounds (the last one serves the warm-up
    round too)."""
    rng = np.random.default_rng(1000)
    return [
        [(int(rng.integers(shape[0])), int(rng.integers(shape[1]))) for _ in range(ITEMS)]
        for _ in range(rounds)
    ]


def measure(path: Path, array: np.ndarray, repeat: int, rounds: int) -> dict[str, object]:
    """Timings and decode counts of one file read through bloscpack.open()."""
    table = positions(array.shape, rounds)
    load = best(repeat, lambda _: np.asarray(bloscpack.open(path)))
    with bloscpack.open(path) as lazy:
        items = best(rounds, lambda k: [lazy[p] for p in table[k]])
        for p in table[0]:
            assert lazy[p] == array[p]
        chunks = lazy.chunks
    first = best(rounds, lambda k: bloscpack.open(path)[table[k][0]])
    with DecodeCounter() as counter:
        opened = bloscpack.open(path)
        on_open = counter.take()
        assert opened[table[7][0]] == array[table[7][0]]
        on_item = counter.take()
        opened.close()
    return {"load": load, "items": items, "first": first, "on_open": on_open,
            "on_item": on_item, "chunks": chunks}  # fmt: skip


def measure_blosc2(path: Path, array: np.ndarray, rounds: int) -> dict[str, float]:
    table = positions(array.shape, rounds)
    ref = blosc2.open(str(path))
    for p in table[0]:
        assert ref[p] == array[p]
    items = best(rounds, lambda k: [ref[p] for p in table[k]])
    first = best(rounds, lambda k: blosc2.open(str(path))[table[k][0]])
    return {"items": items, "first": first, "blocks": ref.blocks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mib", type=int, default=1024, help="array size in MiB (1024)")
    parser.add_argument("--quick", action="store_true", help="64 MiB files, 2 rounds of 'load'")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of 'load' (3)")
    parser.add_argument("--item-rounds", type=int, default=200,
                        help="rounds of '10 items' and 'open + 1st item' (200)")  # fmt: skip
    parser.add_argument("--nthreads", type=int, default=os.cpu_count() or 1, help="C threads")
    parser.add_argument("--dir", default=None, help="where to write the files (a temp dir)")
    add_json_options(parser)
    args = parser.parse_args()
    size = 64 * MiB if args.quick else args.size_mib * MiB
    repeat = 2 if args.quick else args.repeat

    engine.set_nthreads(args.nthreads)
    blosc2.set_nthreads(args.nthreads)
    workdir = Path(tempfile.mkdtemp(prefix="bench_random_access.", dir=args.dir))
    try:
        array = smooth_array(size)
        blp, b2nd = workdir / "a.blp", workdir / "a.b2nd"
        save_blp(array, blp)
        save_b2nd(array, b2nd)
        ratios = {".blp": array.nbytes / os.path.getsize(blp),
                  ".b2nd": array.nbytes / os.path.getsize(b2nd)}  # fmt: skip
        print(
            f"array {array.shape} float64, {array.nbytes / MiB:.0f} MiB; {args.nthreads} C"
            f" threads; .blp {os.path.getsize(blp) / MiB:.0f} MiB (default: 1 MiB chunks,"
            f" blosclz), .b2nd {os.path.getsize(b2nd) / MiB:.0f} MiB (python-blosc2's"
            " default chunks and blocks, zstd)"
        )
        rounds = args.item_rounds
        results = {".blp": measure(blp, array, repeat, rounds),
                   ".b2nd": measure(b2nd, array, repeat, rounds)}  # fmt: skip
        theirs = measure_blosc2(b2nd, array, rounds)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"\n{'bloscpack.open()':<18}{'load':>10}{'10 items':>12}{'ratio':>9}"
          f"{'open + 1st item':>18}  decodes on open / for the item")  # fmt: skip
    for name, r in results.items():
        ratio = r["items"] / r["load"]  # type: ignore[operator]
        print(
            f"{name:<18}{r['load']:>9.3f}s{r['items'] * 1e3:>10.3f}ms{ratio:>8.4%}"  # type: ignore[operator]
            f"{r['first'] * 1e3:>16.3f}ms  {r['on_open']} / {r['on_item']}"  # type: ignore[operator]
        )
    ours = results[".b2nd"]
    print(f"\n.b2nd vs python-blosc2 (blocks {theirs['blocks']}){'python-blosc2':>16}"
          f"{'bloscpack':>12}{'ratio':>8}")  # fmt: skip
    for label, key in (("10 random items", "items"), ("open + 1st item", "first")):
        t_ref, t_ours = theirs[key], ours[key]
        print(f"{label:<42}{t_ref * 1e3:>14.3f}ms{t_ours * 1e3:>10.3f}ms"  # type: ignore[operator]
              f"{t_ref / t_ours:>7.2f}x")  # type: ignore[operator]  # fmt: skip
    write_json(args, "random_access", {
        "size_mib": size // MiB, "shape": list(array.shape), "dtype": "float64",
        "repeat": repeat, "item_rounds": rounds, "items": ITEMS, "nthreads": args.nthreads,
        "quick": args.quick,
    }, json_records(array, results, theirs, ratios), [
        comparison(".b2nd", op, "bloscpack", "python-blosc2", DATASET, "latency")
        for op in (f"{ITEMS} random items", "open + 1st item")
    ])  # fmt: skip


DATASET = "float64 smooth signal"


def json_records(
    array: np.ndarray,
    results: dict[str, dict[str, object]],
    theirs: dict[str, float],
    ratios: dict[str, float],
) -> list[dict[str, object]]:
    """The measurements as ``timing.record``s: ``load`` a throughput, the others latencies."""
    out = []
    for fmt, r in results.items():
        seconds: dict[str, float] = {key: r[key] for key in ("load", "items", "first")}  # type: ignore[misc]
        out += [
            record(DATASET, fmt, "bloscpack", "load", seconds["load"], array.nbytes, ratios[fmt]),
            record(DATASET, fmt, "bloscpack", f"{ITEMS} random items", seconds["items"],
                   ratio=ratios[fmt]),
            record(DATASET, fmt, "bloscpack", "open + 1st item", seconds["first"],
                   ratio=ratios[fmt], decodes_on_open=r["on_open"], decodes_for_item=r["on_item"]),
        ]  # fmt: skip
    ratio = ratios[".b2nd"]
    out += [
        record(DATASET, ".b2nd", "python-blosc2", f"{ITEMS} random items", theirs["items"],
               ratio=ratio),
        record(DATASET, ".b2nd", "python-blosc2", "open + 1st item", theirs["first"],
               ratio=ratio),
    ]  # fmt: skip
    return out


if __name__ == "__main__":
    main()
