#!/usr/bin/env python
"""Benchmark reading containers from S3 (moto on loopback, behind a proxy that counts requests
and bytes and adds a fixed latency to each request).

* ``.b2nd``: open, open + one item, open + one row, open + one block-sized box, and the whole
  array, through ``bloscpack.open(url)`` and python-blosc2's ``blosc2.open(url, lazy=True)``:
  requests, bytes fetched and wall time;
* every format (``.blp``, ``.b2frame``, contiguous and sparse ``.b2nd``, a sparse frame, a bcolz
  carray and ctable, a raw chunk): ``bloscpack.open(url)`` + one item and
  ``bloscpack.load(url)`` against downloading every object of the container (``fs.get``) and
  loading the local copy.

Each measurement is the best of ``--repeat`` rounds that interleave the compared calls (the
machine's load then weighs on each alike); requests and bytes are those of one call.

    python bench/bench_remote.py --quick                  # 16 MiB, 10 ms per request
    python bench/bench_remote.py --size-mib 64 --latency-ms 20
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import blosc2
import numpy as np
from signals import smooth_array
from timing import best_of

import bloscpack

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from remote_servers import s3_server  # noqa: E402

MiB = 2**20
FORMATS = ("a.blp", "a.b2frame", "a.b2nd", "sparse.b2nd", "a.b2sframe", "a.bcolz", "t.bcolz",
           "a.chunk")  # fmt: skip


def measure(server, fns: dict[str, Callable[[], object]], repeat: int
            ) -> dict[str, tuple[float, int, int]]:  # fmt: skip
    """Best wall time of each of ``fns`` over ``repeat`` interleaved rounds (after a warm-up
    round, which also counts the requests and bytes of one call)."""
    counts = {}
    for name, fn in fns.items():
        server.counter.reset()
        fn()
        counts[name] = (server.counter.requests, server.counter.bytes)
    best = best_of(repeat, fns)
    return {name: (best[name], *counts[name]) for name in fns}


def row(name: str, figures: tuple[float, int, int]) -> str:
    seconds, requests, nbytes = figures
    return f"| {name} | {requests} | {nbytes / MiB:.3f} | {seconds * 1000:.1f} |"


def save_all(data: np.ndarray, work: Path, chunks: tuple[int, int],
             blocks: tuple[int, int]) -> None:  # fmt: skip
    """Every format of :data:`FORMATS` in ``work``."""
    for name in ("a.blp", "a.b2frame", "a.b2sframe", "a.bcolz"):
        bloscpack.save(data, work / name)
    bloscpack.save(data, work / "a.b2nd", chunks=chunks, blocks=blocks)
    bloscpack.save(data, work / "sparse.b2nd", sparse=True, chunks=chunks, blocks=blocks)
    flat = data.reshape(-1)
    half = len(flat) // 2
    table = np.empty(half, dtype=[("x", "<f8"), ("y", "<f8")])
    table["x"], table["y"] = flat[:half], flat[half : 2 * half]
    bloscpack.save(table, work / "t.bcolz")
    (work / "a.chunk").write_bytes(bloscpack.compress_chunk(data.tobytes(), typesize=8,
                                                            blocksize=1 << 20))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 MiB of data")
    parser.add_argument("--size-mib", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=None, help="per request (10/20)")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds (best kept)")
    args = parser.parse_args()
    size = 16 if args.quick else args.size_mib
    latency = (args.latency_ms if args.latency_ms is not None else 10 if args.quick else 20) / 1000
    data = smooth_array(size * MiB)
    work = Path(tempfile.mkdtemp(prefix="bench-remote-"))
    rows, cols = data.shape
    chunks, blocks = (max(rows // 8, 1), cols), (max(rows // 64, 1), cols)
    try:
        save_all(data, work, chunks, blocks)
        import boto3

        with s3_server(latency=latency) as server:
            client = boto3.client("s3", endpoint_url=server.direct, region_name="us-east-1",
                                  aws_access_key_id="testing",
                                  aws_secret_access_key="testing")  # fmt: skip
            client.create_bucket(Bucket="bench")
            for path in work.rglob("*"):
                if path.is_file():
                    client.upload_file(str(path), "bench", path.relative_to(work).as_posix())
            options = server.options()
            options.pop("skip_instance_cache")  # one filesystem for all reads, as blosc2 has
            print(f"{size} MiB float64 {data.shape}, chunks {chunks}, blocks {blocks},"
                  f" {latency * 1000:.0f} ms per request, best of {args.repeat}\n")  # fmt: skip
            url = "s3://bench/a.b2nd"
            i, j = rows * 5 // 8 + 3, cols // 3
            box = (slice(i - i % blocks[0], i - i % blocks[0] + blocks[0]), slice(None))
            print("| .b2nd | requests | MiB fetched | ms |\n|---|---|---|---|")
            cases = {
                "open": lambda a: None,
                "open + item": lambda a: a[i, j],
                "open + row": lambda a: a[i],
                "open + block": lambda a: a[box],
                "open + whole": lambda a: a[...],
            }
            for what, read in cases.items():
                got = measure(server, {
                    "bloscpack": lambda read=read: read(
                        bloscpack.open(url, storage_options=options)),
                    "blosc2.open(lazy=True)": lambda read=read: read(
                        blosc2.open(url, lazy=True, storage_options=options)),
                }, args.repeat)  # fmt: skip
                for who, figures in got.items():
                    print(row(f"{what}: {who}", figures))
            print("\n| format | how | requests | MiB fetched | ms | load / (download + load) |"
                  "\n|---|---|---|---|---|---|")  # fmt: skip
            import fsspec

            fs = fsspec.filesystem("s3", **options)
            for name in FORMATS:
                url = f"s3://bench/{name}"
                local = work / "download" / name
                flat = i * cols + j
                item = {"t.bcolz": (flat // 2,), "a.chunk": (flat,)}.get(name, (i, j))

                def download(url: str = url, local: Path = local) -> None:
                    shutil.rmtree(local.parent, ignore_errors=True)
                    local.parent.mkdir()
                    fs.get(url, str(local), recursive=True)
                    bloscpack.load(local)

                got = measure(server, {
                    "open + item": lambda url=url, item=item: bloscpack.open(
                        url, storage_options=options)[item],
                    "load": lambda url=url: bloscpack.load(url, storage_options=options),
                    "download + load": download,
                }, args.repeat)  # fmt: skip
                ratio = got["load"][0] / got["download + load"][0]
                for how, figures in got.items():
                    extra = f" {ratio:.2f}× |" if how == "load" else " |"
                    print(f"| {name} " + row(how, figures) + extra)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
