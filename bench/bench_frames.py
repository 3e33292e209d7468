#!/usr/bin/env python
"""Benchmark bloscpack's Blosc2 frames against python-blosc2, in one run.

* open + read one chunk: ``Frame(path).decompress_chunk(i)`` vs
  ``blosc2.open(path).decompress_chunk(i)`` on frames of 100 and 10 000 chunks written by
  python-blosc2 (contiguous file and sparse directory), a different chunk each round;
* write: ``containers.frame.save_bytes(data, path)`` vs ``blosc2.SChunk(data=..., urlpath=...)``;
* read: ``containers.frame.load_bytes(path)`` (bytes) and ``Frame(path).read_all()`` (a numpy
  array) vs ``blosc2.open(path)[:]`` (bytes);
* sparse write: ``SparseFrameWriter`` vs ``blosc2.SChunk(..., contiguous=False)`` appends.

Both sides use the same codec (zstd), clevel (5), filters (shuffle), typesize (8), chunk size
and number of C threads.  Each timing is the best of ``--repeat`` rounds, the two sides
interleaved; ratios are python-blosc2 time / bloscpack time (> 1: bloscpack is faster).

    python bench/bench_frames.py --quick     # 16 MiB of data, a few seconds
    python bench/bench_frames.py             # 256 MiB of data
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from itertools import count
from pathlib import Path

import blosc2
import numpy as np
from timing import best_of

from bloscpack import Frame, engine
from bloscpack.containers.frame import CParams, load_bytes, save_bytes
from bloscpack.containers.sframe import SparseFrameWriter

MiB = 2**20
CHUNKSIZE = 4 * MiB


def many_chunk_frame(path: Path, nchunks: int, sparse: bool) -> None:
    """A python-blosc2 frame of ``nchunks`` chunks of 1000 float64 each."""
    cparams = blosc2.CParams(typesize=8, codec=blosc2.Codec.ZSTD, clevel=5, nthreads=1)
    s = blosc2.SChunk(chunksize=8000, urlpath=str(path), contiguous=not sparse, cparams=cparams)
    base = np.arange(1000, dtype=np.float64)
    for i in range(nchunks):
        s.append_data(base + i)


def open_and_read_one(path: Path, nchunks: int, repeat: int) -> dict[str, float]:
    """Best time to open the frame at ``path`` and decompress one chunk (another each round)."""
    picks = count(7, 7919)

    def ours() -> bytearray:
        with Frame(path) as f:
            return f.decompress_chunk(next(picks) % nchunks)

    def theirs() -> bytes:
        return blosc2.open(str(path)).decompress_chunk(next(picks) % nchunks)

    with Frame(path) as f:
        last = blosc2.open(str(path)).decompress_chunk(nchunks - 1)
        assert bytes(f.decompress_chunk(nchunks - 1)) == last
    return best_of(repeat, {"python-blosc2": theirs, "bloscpack": ours})


def open_and_read(workdir: Path, repeat: int) -> list[tuple[str, float, float]]:
    rows = []
    for sparse in (False, True):
        kind = "sparse" if sparse else "contiguous"
        for nchunks in (100, 10_000):
            path = workdir / f"many{nchunks}{kind}.b2frame"
            many_chunk_frame(path, nchunks, sparse)
            best = open_and_read_one(path, nchunks, repeat * 20)
            rows.append((f"open+read 1 chunk, {nchunks} chunks, {kind}",
                         best["python-blosc2"], best["bloscpack"]))  # fmt: skip
    return rows


def make_data(nbytes: int) -> np.ndarray:
    """float64 integers with a slow trend: about 15 % of their size with zstd/5 + shuffle."""
    n = nbytes // 8
    rng = np.random.default_rng(20240601)
    return np.cumsum(rng.integers(0, 4, n)).astype(np.float64)


def throughput(workdir: Path, size: int, repeat: int, nthreads: int) -> list[tuple]:
    data = make_data(size)
    cparams = blosc2.CParams(typesize=8, codec=blosc2.Codec.ZSTD, clevel=5, nthreads=nthreads)
    dparams = blosc2.DParams(nthreads=nthreads)
    theirs, ours = workdir / "blosc2.b2frame", workdir / "bloscpack.b2frame"

    def save_theirs() -> None:
        blosc2.SChunk(chunksize=CHUNKSIZE, data=data, urlpath=str(theirs), contiguous=True,
                      mode="w", cparams=cparams, dparams=dparams)  # fmt: skip

    def save_ours() -> None:
        save_bytes(data, ours, chunksize=CHUNKSIZE, typesize=8, codec="zstd", clevel=5)

    write = best_of(repeat, {"python-blosc2": save_theirs, "bloscpack": save_ours})
    assert bytes(blosc2.open(str(ours))[:]) == data.tobytes()
    read = best_of(repeat, {
        "python-blosc2": lambda: blosc2.open(str(theirs), dparams=dparams)[:],
        "bloscpack": lambda: load_bytes(theirs),
        "bloscpack read_all": lambda: load_array(theirs),
    })  # fmt: skip
    assert load_bytes(theirs) == data.tobytes()
    assert np.array_equal(load_array(theirs).view(np.float64), data)

    chunks = [bytes(blosc2.compress2(data[i : i + CHUNKSIZE // 8], cparams=cparams))
              for i in range(0, data.size, CHUNKSIZE // 8)]  # fmt: skip
    sparse_theirs, sparse_ours = workdir / "blosc2_sparse", workdir / "bloscpack_sparse"

    def sparse_write_theirs() -> None:
        s = blosc2.SChunk(chunksize=CHUNKSIZE, urlpath=str(sparse_theirs), contiguous=False,
                          mode="w", cparams=cparams)  # fmt: skip
        for c in chunks:
            s.append_chunk(c)

    def sparse_write_ours() -> None:
        with SparseFrameWriter(sparse_ours, CParams.make(typesize=8), chunksize=CHUNKSIZE,
                               nthreads=nthreads) as writer:  # fmt: skip
            for c in chunks:
                writer.append_chunk(c)

    sparse = best_of(repeat, {"python-blosc2": sparse_write_theirs, "bloscpack": sparse_write_ours})
    assert load_bytes_sparse(sparse_ours) == data.tobytes()
    ratio = os.path.getsize(theirs) / data.nbytes
    print(f"data {data.nbytes / MiB:.0f} MiB float64, chunks of {CHUNKSIZE // MiB} MiB, zstd/5"
          f" shuffle, {nthreads} C threads, compressed to {ratio:.1%}")  # fmt: skip
    return [
        ("save_bytes (MiB/s)", write["python-blosc2"], write["bloscpack"]),
        ("load_bytes (MiB/s)", read["python-blosc2"], read["bloscpack"]),
        ("Frame.read_all, numpy array (MiB/s)", read["python-blosc2"], read["bloscpack read_all"]),
        ("sparse write, stored chunks (MiB/s)", sparse["python-blosc2"], sparse["bloscpack"]),
    ]


def load_array(path: Path) -> np.ndarray:
    with Frame(path) as f:
        return f.read_all()


def load_bytes_sparse(path: Path) -> bytes:
    with Frame(path) as f:
        return bytes(f.read_all())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mib", type=int, default=256, help="data size in MiB (256)")
    parser.add_argument("--quick", action="store_true", help="16 MiB, 2 rounds")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per timing (3)")
    parser.add_argument("--nthreads", type=int, default=os.cpu_count() or 1, help="C threads")
    parser.add_argument("--dir", default=None, help="where to write the files (a temp dir)")
    args = parser.parse_args()
    size = 16 * MiB if args.quick else args.size_mib * MiB
    repeat = 2 if args.quick else args.repeat

    engine.set_nthreads(args.nthreads)
    blosc2.set_nthreads(args.nthreads)
    workdir = Path(tempfile.mkdtemp(prefix="bench_frames.", dir=args.dir))
    try:
        latency = open_and_read(workdir, repeat)
        rates = throughput(workdir, size, repeat, args.nthreads)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    mib = size / MiB
    print(f"\n{'operation':<44}{'python-blosc2':>15}{'bloscpack':>12}{'ratio':>8}")
    for name, t_ref, t_ours in latency:
        print(f"{name:<44}{t_ref * 1e3:>12.3f} ms{t_ours * 1e3:>9.3f} ms{t_ref / t_ours:>7.2f}x")
    for name, t_ref, t_ours in rates:
        print(f"{name:<44}{mib / t_ref:>15.0f}{mib / t_ours:>12.0f}{t_ref / t_ours:>7.2f}x")


if __name__ == "__main__":
    main()
