#!/usr/bin/env python
"""Benchmark ``.b2nd`` and ``.blp`` against the tools users pick instead, in one run.

Peers (each skipped, with a line saying so, when it is not installed; ``pip install
bloscpack[bench]`` installs them): zarr-python 3 (``BloscCodec``), h5py with hdf5plugin's
Blosc2 and Blosc filters, python-blosc2 (``blosc2.asarray(urlpath=)``) and tensorstore (zarr3
driver, blosc codec).

Datasets: a float64 random walk, int64 timestamps with jitter and a float32 image 16384
columns wide (4096 x 16384 at the full 256 MiB), each ``--size-mib`` MiB.  Every tool gets the
same codec (``--codecs``: lz4 and zstd), level (``--clevel``), byte shuffle, chunk shape
(``--chunk-rows`` x 16384) and threads (``--nthreads``: C threads of Blosc, and the chunks
zarr and tensorstore process at a time); blocks are each tool's default.

Split streams: ``.b2nd`` is saved with its default ``splitmode="auto"`` (python-blosc2's),
under which C-Blosc2 splits the blocks of zstd at clevel <= 5 (and of lz4) into one stream
per byte of the type; C-Blosc 1 (tensorstore, numcodecs' Blosc for zarr, hdf5plugin's Blosc)
splits lz4 blocks but never zstd ones.  ``splitmode="forward_compat"`` splits zstd at these
levels as ``auto`` does; ``splitmode="never"`` writes C-Blosc 1's zstd streams.  The zstd runs
add the row ``bloscpack .b2nd, splitmode=never (not the default)``: the same ``.b2nd`` with
that non-default setting (faster to compress, a lower ratio on data that shuffles well).

Operations, each starting from the path:

* ``save``: write the array, durably: bloscpack's own ``fsync``; every peer's files (and
  directories) get an ``fsync`` after it returns;
* ``load``: read the whole array;
* ``open + element``: open and read one element;
* ``open + 1 MiB slice``: open and read 1 MiB of whole rows;
* ``open + 512x512 box``: open and read a 512 x 512 box.

Each time is the median of ``--repeat`` interleaved rounds (after a warm-up, so reads find
the file in the page cache); ratio = peer time / bloscpack time (> 1: bloscpack is faster).

    python bench/bench_peers.py --quick                  # 32 MiB per dataset, 3 rounds
    python bench/bench_peers.py                          # 256 MiB, 5 rounds
    python bench/bench_peers.py --peers zarr,tensorstore --codecs lz4
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from timing import (
    add_json_options,
    comparison,
    disk_size,
    fresh,
    median_of,
    record,
    write_json,
)

MiB = 2**20
COLUMNS = 16384
OURS = ("bloscpack .b2nd", "bloscpack .blp")
#: ``.b2nd`` with the non-default ``splitmode="never"`` (C-Blosc 1's zstd streams): zstd only.
NO_SPLIT = "bloscpack .b2nd, splitmode=never (not the default)"
PEERS = ("zarr", "h5py+Blosc2", "h5py+Blosc", "python-blosc2", "tensorstore")
OPERATIONS = ("save", "load", "open + element", "open + 1 MiB slice", "open + 512x512 box")
#: The ``format`` of every JSON record: the contenders' names say which file format each writes.
FORMAT = "2-D array"
#: Operations a ``.blp`` (a flat sequence of byte chunks, no 2-D blocks) is measured in.
BLP_OPERATIONS = ("save", "load", "open + element", "open + 1 MiB slice")


# --- the data ------------------------------------------------------------------------------


def datasets(nbytes: int) -> dict[str, np.ndarray]:
    """The three arrays of about ``nbytes`` each, ``COLUMNS`` wide."""
    rng = np.random.default_rng(20261128)
    rows8, rows4 = max(nbytes // 8 // COLUMNS, 1), max(nbytes // 4 // COLUMNS, 1)
    walk = np.cumsum(rng.standard_normal(rows8 * COLUMNS)).reshape(rows8, COLUMNS)
    steps = 1_000_000 + rng.integers(-500, 500, rows8 * COLUMNS)  # 1 ms apart, in ns, jittered
    stamps = (1_790_000_000_000_000_000 + np.cumsum(steps)).reshape(rows8, COLUMNS)
    y, x = np.ogrid[0:rows4, 0:COLUMNS]
    image = 1000 * np.sin(x / 700.0) * np.cos(y / 300.0) + 50 * rng.standard_normal(
        (rows4, COLUMNS)
    )
    return {
        "float64 random walk": walk.astype("<f8"),
        "int64 timestamps": stamps.astype("<i8"),
        "float32 image": image.astype("<f4"),
    }


def selections(shape: tuple[int, ...], itemsize: int) -> dict[str, Any]:
    """The element, the 1 MiB slice of whole rows and the 512 x 512 box read, away from the
    chunk boundaries."""
    rows = max(MiB // (COLUMNS * itemsize), 1)
    r0 = max(min(shape[0] // 3 + 5, shape[0] - 512), 0)  # (a tiny array: a shorter box)
    return {
        "open + element": (shape[0] // 2 + 1, COLUMNS // 2 + 3),
        "open + 1 MiB slice": (slice(r0, r0 + rows), slice(None)),
        "open + 512x512 box": (slice(r0, min(r0 + 512, shape[0])), slice(5000, 5512)),
    }


def fsync_tree(path: Path) -> None:
    """``fsync`` a file, or every file and directory under ``path``, and its parent."""
    paths = [path] if path.is_file() else [path, *path.rglob("*")]
    for p in [*paths, path.parent]:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# --- the contenders: save(a, path), load(path), read(path, selection) ------------------------


class Contender:
    """One tool: ``save`` writes ``a`` to ``path`` durably, ``read`` opens ``path`` and reads
    ``selection`` (``...``: the whole array)."""

    suffix = ""

    def __init__(self, codec: str, clevel: int, chunks: tuple[int, int], nthreads: int) -> None:
        self.codec, self.clevel, self.chunks, self.nthreads = codec, clevel, chunks, nthreads

    def chunk_shape(self, a: np.ndarray) -> tuple[int, int]:
        """The chunk shape, no taller than ``a`` (HDF5 refuses taller chunks)."""
        return min(self.chunks[0], a.shape[0]), self.chunks[1]

    def save(self, a: np.ndarray, path: Path) -> None:
        raise NotImplementedError

    def read(self, path: Path, selection: Any) -> Any:
        raise NotImplementedError


class B2nd(Contender):
    suffix = ".b2nd"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        import bloscpack
        from bloscpack import engine

        engine.set_nthreads(self.nthreads)
        self.bp = bloscpack

    def save(self, a: np.ndarray, path: Path) -> None:
        self.bp.save(a, path, codec=self.codec, clevel=self.clevel, chunks=self.chunk_shape(a))

    def read(self, path: Path, selection: Any) -> Any:
        if selection is Ellipsis:
            return self.bp.load(path)
        return self.bp.open(path)[selection]


class B2ndNoSplit(B2nd):
    def save(self, a: np.ndarray, path: Path) -> None:
        self.bp.save(a, path, codec=self.codec, clevel=self.clevel, chunks=self.chunk_shape(a),
                     splitmode="never")  # fmt: skip


class Blp(B2nd):
    suffix = ".blp"

    def save(self, a: np.ndarray, path: Path) -> None:
        chunk_size = np.prod(self.chunk_shape(a)) * a.itemsize
        self.bp.save(a, path, codec=self.codec, clevel=self.clevel, chunk_size=chunk_size)


class Zarr(Contender):
    suffix = ".zarr"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        import numcodecs.blosc
        import zarr

        numcodecs.blosc.set_nthreads(self.nthreads)
        zarr.config.set({"threading.max_workers": self.nthreads})
        self.zarr = zarr

    def save(self, a: np.ndarray, path: Path) -> None:
        from zarr.codecs import BloscCodec

        codec = BloscCodec(cname=self.codec, clevel=self.clevel, shuffle="shuffle",
                           typesize=a.itemsize)  # fmt: skip
        z = self.zarr.create_array(str(path), shape=a.shape, dtype=a.dtype,
                                   chunks=self.chunk_shape(a), compressors=[codec],
                                   overwrite=True)  # fmt: skip
        z[...] = a
        fsync_tree(path)

    def read(self, path: Path, selection: Any) -> Any:
        return self.zarr.open_array(str(path), mode="r")[selection]


class H5py(Contender):
    suffix = ".h5"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        os.environ["BLOSC_NTHREADS"] = str(self.nthreads)  # read by both hdf5plugin filters
        import h5py
        import hdf5plugin

        self.h5py, self.plugin = h5py, hdf5plugin

    def filter(self) -> Any:
        return self.plugin.Blosc(cname=self.codec, clevel=self.clevel,
                                 shuffle=self.plugin.Blosc.SHUFFLE)  # fmt: skip

    def save(self, a: np.ndarray, path: Path) -> None:
        with self.h5py.File(path, "w") as f:
            f.create_dataset("x", data=a, chunks=self.chunk_shape(a), **self.filter())
        fsync_tree(path)

    def read(self, path: Path, selection: Any) -> Any:
        with self.h5py.File(path, "r") as f:
            return f["x"][selection]


class H5pyBlosc2(H5py):
    def filter(self) -> Any:
        return self.plugin.Blosc2(cname=self.codec, clevel=self.clevel,
                                  filters=self.plugin.Blosc2.SHUFFLE)  # fmt: skip


class Blosc2(Contender):
    suffix = ".b2nd"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        import blosc2

        blosc2.set_nthreads(self.nthreads)
        self.blosc2 = blosc2
        self.cparams = blosc2.CParams(codec=blosc2.Codec[self.codec.upper()],
                                      clevel=self.clevel, nthreads=self.nthreads)  # fmt: skip
        self.dparams = blosc2.DParams(nthreads=self.nthreads)

    def save(self, a: np.ndarray, path: Path) -> None:
        self.blosc2.asarray(a, urlpath=str(path), mode="w", chunks=self.chunk_shape(a),
                            cparams=self.cparams, dparams=self.dparams)  # fmt: skip
        fsync_tree(path)

    def read(self, path: Path, selection: Any) -> Any:
        return self.blosc2.open(str(path), dparams=self.dparams)[selection]


class Tensorstore(Contender):
    suffix = ".ts.zarr"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        import tensorstore

        self.ts = tensorstore
        self.context = tensorstore.Context({
            "data_copy_concurrency": {"limit": self.nthreads},
            "file_io_concurrency": {"limit": self.nthreads},
        })  # fmt: skip

    def spec(self, path: Path) -> dict[str, Any]:
        return {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}

    def save(self, a: np.ndarray, path: Path) -> None:
        blosc = {"cname": self.codec, "clevel": self.clevel, "shuffle": "shuffle",
                 "typesize": a.itemsize, "blocksize": 0}  # fmt: skip
        metadata = {
            "shape": list(a.shape),
            "data_type": a.dtype.name,
            "chunk_grid": {"name": "regular",
                           "configuration": {"chunk_shape": list(self.chunk_shape(a))}},
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "blosc", "configuration": blosc}],
        }  # fmt: skip
        spec = {**self.spec(path), "metadata": metadata, "create": True, "delete_existing": True}
        store = self.ts.open(spec, context=self.context).result()
        store.write(a).result()
        fsync_tree(path)

    def read(self, path: Path, selection: Any) -> Any:
        store = self.ts.open(self.spec(path), context=self.context, open=True).result()
        return store[selection].read().result()


CONTENDERS: dict[str, type[Contender]] = {
    "bloscpack .b2nd": B2nd,
    "bloscpack .blp": Blp,
    NO_SPLIT: B2ndNoSplit,
    "zarr": Zarr,
    "h5py+Blosc2": H5pyBlosc2,
    "h5py+Blosc": H5py,
    "python-blosc2": Blosc2,
    "tensorstore": Tensorstore,
}


def available(
    names: list[str], settings: tuple[str, int, tuple[int, int], int]
) -> dict[str, Contender]:
    """The contenders that can be imported; a line for each one that cannot."""
    found = {}
    for name in names:
        try:
            found[name] = CONTENDERS[name](*settings)
        except ImportError as exc:
            print(f"{name}: not installed ({exc}), skipped")
    return found


# --- one run ---------------------------------------------------------------------------------


def measure(
    a: np.ndarray, tools: dict[str, Contender], workdir: Path, repeat: int
) -> dict[str, dict[str, float]]:
    """operation -> contender -> median seconds, for one array."""
    paths = {name: workdir / f"{i}{tool.suffix}" for i, (name, tool) in enumerate(tools.items())}
    times: dict[str, dict[str, float]] = {}

    def saver(name: str) -> Callable[[], object]:
        return lambda: tools[name].save(a, fresh(paths[name]))

    times["save"] = median_of(repeat, {name: saver(name) for name in tools})
    whole = {name: np.asarray(tools[name].read(paths[name], ...)) for name in tools}
    for name, got in whole.items():
        if not np.array_equal(got.reshape(a.shape), a):
            raise SystemExit(f"{name}: the array read back differs from the one saved")

    def reader(name: str, selection: Any) -> Callable[[], object]:
        return lambda: tools[name].read(paths[name], selection)

    times["load"] = median_of(repeat, {name: reader(name, ...) for name in tools})
    for op, selection in selections(a.shape, a.itemsize).items():
        names = [n for n in tools if n != "bloscpack .blp" or op in BLP_OPERATIONS]
        for name in names:
            got = np.asarray(tools[name].read(paths[name], selection))
            if not np.array_equal(got, a[selection]):
                raise SystemExit(f"{name}: {op} differs from the array's")
        times[op] = median_of(repeat * 4, {name: reader(name, selection) for name in names})
    times["stored bytes"] = {name: float(disk_size(p)) for name, p in paths.items()}
    for p in paths.values():
        fresh(p)
    return times


def print_tables(results: dict[tuple[str, str], dict[str, dict[str, float]]]) -> None:
    """For each of our formats, the ratio of every peer per operation over all runs."""
    for ours in (*OURS, NO_SPLIT):
        rows = []
        for op in OPERATIONS:
            cells = []
            for peer in PEERS:
                ratios = [t[op][peer] / t[op][ours] for t in results.values()
                          if peer in t[op] and ours in t[op]]  # fmt: skip
                cells.append(f"{min(ratios):.2f}–{max(ratios):.2f}" if ratios else "")
            if any(cells):
                rows.append(f"| {op} | " + " | ".join(cells) + " |")
        if rows:
            print(f"\n{ours}: peer time / ours (min–max over datasets and codecs)\n")
            print("| operation | " + " | ".join(PEERS) + " |")
            print("|---|" + "---:|" * len(PEERS))
            print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mib", type=int, default=256, help="MiB per dataset (256)")
    parser.add_argument("--quick", action="store_true", help="32 MiB per dataset, 3 rounds")
    parser.add_argument("--repeat", type=int, default=5, help="rounds per timing (5)")
    parser.add_argument("--codecs", default="lz4,zstd", help="codecs, comma-separated (lz4,zstd)")
    parser.add_argument("--clevel", type=int, default=5, help="compression level (5)")
    parser.add_argument("--chunk-rows", type=int, default=128, help="rows per chunk (128)")
    parser.add_argument("--nthreads", type=int, default=2, help="threads of every tool (2)")
    parser.add_argument("--peers", default=",".join(PEERS),
                        help=f"peers to run, comma-separated ({','.join(PEERS)})")  # fmt: skip
    parser.add_argument("--no-split-row", action="store_true",
                        help=f"leave out the zstd row {NO_SPLIT!r}")  # fmt: skip
    parser.add_argument("--dir", default=None, help="where to write the files (a temp dir)")
    add_json_options(parser)
    args = parser.parse_args()
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = sorted(set(peers) - set(PEERS))
    if unknown:
        parser.error(f"unknown peers {', '.join(unknown)} (known: {', '.join(PEERS)})")
    size = 32 * MiB if args.quick else args.size_mib * MiB
    repeat = 3 if args.quick else args.repeat
    chunks = (args.chunk_rows, COLUMNS)
    codecs = [c.strip() for c in args.codecs.split(",")]
    arrays = datasets(size)
    print(f"{size / MiB:.0f} MiB per dataset; clevel {args.clevel}, shuffle, chunks {chunks},"
          f" {args.nthreads} threads, median of {repeat} (reads {repeat * 4})")  # fmt: skip
    results: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    workdir = Path(tempfile.mkdtemp(prefix="bench_peers.", dir=args.dir))
    try:
        for codec in codecs:
            extra = [NO_SPLIT] if codec == "zstd" and not args.no_split_row else []
            tools = available([*OURS, *extra, *peers],
                              (codec, args.clevel, chunks, args.nthreads))  # fmt: skip
            for dataset, a in arrays.items():
                t = results[dataset, codec] = measure(a, tools, workdir, repeat)
                print(f"\n{dataset} {a.shape} {a.dtype}, {codec}: ms (ratio peer / .b2nd)")
                for op in OPERATIONS:
                    ref = t[op]["bloscpack .b2nd"]
                    cells = [f"{n} {s * 1e3:.1f}" + ("" if n in OURS else f" ({s / ref:.2f})")
                             for n, s in t[op].items()]  # fmt: skip
                    print(f"  {op}: " + ", ".join(cells))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print_tables(results)

    records, comparisons = [], []
    for (dataset, codec), t in results.items():
        nbytes = arrays[dataset].nbytes
        name = f"{dataset} ({codec})"
        for op in OPERATIONS:
            throughput = op in ("save", "load")
            for who, seconds in t[op].items():
                ratio = nbytes / t["stored bytes"][who]
                records.append(record(name, FORMAT, who, op, seconds,
                                      nbytes if throughput else None, ratio))  # fmt: skip
            for ours in (*OURS, NO_SPLIT):
                for peer in PEERS:
                    if ours in t[op] and peer in t[op]:
                        kind = "throughput" if throughput else "latency"
                        comparisons.append(comparison(FORMAT, op, ours, peer, name, kind))
    settings = {"size_mib": size // MiB, "codecs": codecs, "clevel": args.clevel,
                "shuffle": "byte", "splitmode": "auto (python-blosc2's default)",
                "extra_row": None if args.no_split_row else f"{NO_SPLIT}, zstd runs only",
                "chunks": list(chunks), "blocks": "each tool's default",
                "nthreads": args.nthreads, "repeat": repeat, "quick": args.quick,
                "peers": peers, "statistic": "median"}  # fmt: skip
    write_json(args, "peers", settings, records, comparisons)


if __name__ == "__main__":
    main()
