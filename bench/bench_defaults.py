#!/usr/bin/env python
"""Each tool's default chunk (and block) shapes on box, row, column and whole-array reads.

A 4096 x 16384 float32 random walk along rows (256 MiB), written by each tool with its own
default chunk shapes and zstd 5 with shuffle (2 C threads where the tool has them):

* ``bloscpack``: ``bloscpack.save(a, "x.b2nd")`` (:func:`box_chunks_blocks`);
* ``python-blosc2``: ``blosc2.asarray(a, urlpath=...)`` (``compute_chunks_blocks``), read by
  bloscpack and by python-blosc2;
* ``zarr``: ``zarr.create_array`` with its default chunks (and its default zstd codec);
* ``h5py``: ``chunks=True`` (h5py's guess) with hdf5plugin's Blosc2 filter, chunk cache off
  (``rdcc_nbytes=0``: the other tools keep no decoded chunks between reads).

Reads: the whole array (``a[:, :]``), the 512 x 512 box ``[700:1212, 1500:2012]``, row 1000
and column 5000; best of ``--rounds`` interleaved rounds.  Tools that are not installed are skipped.

    python bench/bench_defaults.py
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np
from timing import best_of

import bloscpack

SHAPE = (4096, 16384)
READS: dict[str, Any] = {
    "whole": (slice(None), slice(None)),
    "box": (slice(700, 1212), slice(1500, 2012)),
    "row": 1000,
    "column": (slice(None), 5000),
}


def writers(data: np.ndarray, root: str) -> dict[str, tuple[str, Callable[[], Any]]]:
    """Per case, the chunk shapes it wrote and an opener of the array to read."""
    import blosc2

    cases: dict[str, tuple[str, Callable[[], Any]]] = {}
    ours = os.path.join(root, "ours.b2nd")
    bloscpack.save(data, ours)
    b2 = os.path.join(root, "b2.b2nd")
    blosc2.asarray(data, urlpath=b2, mode="w",
                   cparams={"codec": blosc2.Codec.ZSTD, "clevel": 5, "nthreads": 2})  # fmt: skip
    for name, path in (("bloscpack defaults", ours), ("python-blosc2 defaults", b2)):
        written = blosc2.open(path)
        shapes = f"chunks {written.chunks}, blocks {written.blocks}"
        cases[f"{name}, read by bloscpack"] = (shapes, lambda p=path: bloscpack.open(p))
        cases[f"{name}, read by python-blosc2"] = (shapes, lambda p=path: blosc2.open(p))
    try:
        import zarr
    except ImportError:
        print("zarr is not installed: skipped")
    else:
        path = os.path.join(root, "a.zarr")
        z = zarr.create_array(store=path, shape=data.shape, dtype=data.dtype)
        z[:] = data
        cases["zarr defaults"] = (f"chunks {z.chunks}", lambda p=path: zarr.open_array(p, mode="r"))
    try:
        import h5py
        import hdf5plugin
    except ImportError:
        print("h5py or hdf5plugin is not installed: skipped")
    else:
        path = os.path.join(root, "a.h5")
        blosc = hdf5plugin.Blosc2(cname="zstd", clevel=5, filters=hdf5plugin.Blosc2.SHUFFLE)
        with h5py.File(path, "w") as f:
            chunks = f.create_dataset("a", data=data, chunks=True, **blosc).chunks
        cases["h5py defaults"] = (
            f"chunks {chunks}",
            lambda p=path: h5py.File(p, "r", rdcc_nbytes=0)["a"],
        )
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    bloscpack.engine.set_nthreads(2)
    rng = np.random.default_rng(0)
    data = np.cumsum(rng.standard_normal(SHAPE, dtype=np.float32), axis=1, dtype=np.float32)
    root = tempfile.mkdtemp()
    try:
        cases = writers(data, root)
        del data
        opened = {name: opener() for name, (_, opener) in cases.items()}
        fns = {(name, read): (lambda a=array, s=sel: a[s])
               for name, array in opened.items() for read, sel in READS.items()}  # fmt: skip
        best = best_of(args.rounds, fns)  # type: ignore[arg-type]
    finally:
        shutil.rmtree(root)
    print(f"| defaults | {' | '.join(READS)} |")
    print("|---|" + "---:|" * len(READS))
    for name, (shapes, _) in cases.items():
        times = " | ".join(f"{best[(name, read)] * 1e3:.2f} ms" for read in READS)  # type: ignore[index]
        print(f"| {name} ({shapes}) | {times} |")


if __name__ == "__main__":
    main()
