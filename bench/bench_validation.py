#!/usr/bin/env python
"""Benchmark chunk validation (``blosc.layout``) against decompression of the same chunks.

For each kind of 1 MiB chunk (float64 data: a smooth signal plus low-order noise), in one run:

* ``validate``: :func:`bloscpack.blosc.layout.validate_chunk` (every stream of every block);
* ``decode``: :func:`bloscpack.engine.decompress_into` with ``validated=True`` (C alone);
* ``blocks``: :func:`~bloscpack.blosc.layout.validate_blocks` of one block (what an item read
  checks), and ``item``: :func:`bloscpack.engine.getitem_into` of one item with validation;
* the overhead: validate / decode.

Timings are the best of ``--repeat`` rounds of ``--number`` calls each, with ``--nthreads``
C threads (default 1, so that decode is not shortened by threads the validation cannot use).

    python bench/bench_validation.py --quick
    python bench/bench_validation.py --nthreads 2
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from bloscpack import engine
from bloscpack.blosc.header import ChunkHeader
from bloscpack.blosc.layout import validate_blocks, validate_chunk

MiB = 2**20


def data(nbytes: int = MiB) -> np.ndarray:
    rng = np.random.default_rng(20240601)
    n = nbytes // 8
    return np.linspace(0.0, 1000.0, n) + rng.standard_normal(n) * 1e-3


def chunks() -> dict[str, bytes]:
    """The chunk kinds: Blosc2 defaults, many small split blocks, and .blp's Blosc1 default."""
    x = data()
    zeros_tail = x.copy()
    zeros_tail[len(x) // 2 :] = 0.0
    b2 = engine.compress_blosc2
    return {
        "blosc2 zstd 5 shuffle (auto blocks)": bytes(b2(x, typesize=8, clevel=5, codec="zstd")),
        "blosc2 lz4 5 shuffle (auto blocks)": bytes(b2(x, typesize=8, clevel=5, codec="lz4")),
        "blosc2 blosclz 5, half zeros": bytes(b2(zeros_tail, typesize=8, clevel=5,
                                                 codec="blosclz")),  # fmt: skip
        "blosc2 lz4 256 split 4 KiB blocks": bytes(
            b2(x, typesize=8, clevel=5, codec="lz4", blocksize=4096, splitmode="always")
        ),
        "blosc2 zstd 1 256 split 4 KiB ts4": bytes(
            b2(x.astype(np.float32), typesize=4, clevel=1, codec="zstd", blocksize=4096,
               splitmode="always")
        ),  # fmt: skip
        "blosc2 lz4 1024 unsplit 1 KiB blocks": bytes(
            b2(x, typesize=8, clevel=5, codec="lz4", blocksize=1024, splitmode="never")
        ),
        "blosc1 blosclz 7 shuffle (.blp default)": engine.compress_blosc1(x, typesize=8),
    }


def best(repeat: int, number: int, fn: Callable[[], object]) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--repeat", type=int, default=7, help="rounds (7)")
    parser.add_argument("--number", type=int, default=200, help="calls per round (200)")
    parser.add_argument("--nthreads", type=int, default=1, help="C threads (1)")
    args = parser.parse_args()
    repeat, number = (3, 50) if args.quick else (args.repeat, args.number)
    engine.set_nthreads(args.nthreads)

    out = np.empty(MiB, dtype=np.uint8)
    item = np.empty(8, dtype=np.uint8)
    print(f"1 MiB float64 chunks, {args.nthreads} C thread(s); microseconds per call\n")
    print(f"{'chunk':<42}{'blocks':>7}{'streams':>8}{'validate':>10}{'decode':>9}"
          f"{'overhead':>10}{'1 block':>9}{'item':>8}")  # fmt: skip
    for name, chunk in chunks().items():
        h = ChunkHeader.parse(chunk)
        nstreams = h.nblocks * (h.typesize if h.split and h.typesize > 1 else 1)
        t_valid = best(repeat, number, lambda c=chunk: validate_chunk(c))
        t_decode = best(repeat, number,
                        lambda c=chunk: engine.decompress_into(c, out, validated=True))  # fmt: skip
        mid = h.nblocks // 2
        t_block = best(repeat, number * 5,
                       lambda c=chunk, h=h, m=mid: validate_blocks(c, m, m + 1, h))  # fmt: skip
        start = mid * h.blocksize // 8
        t_item = best(repeat, number, lambda c=chunk, s=start: engine.getitem_into(c, s, 1, item))
        print(f"{name:<42}{h.nblocks:>7}{nstreams:>8}{t_valid * 1e6:>10.1f}{t_decode * 1e6:>9.1f}"
              f"{t_valid / t_decode:>10.1%}{t_block * 1e6:>9.1f}{t_item * 1e6:>8.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
