#!/usr/bin/env python
"""Benchmark reading containers from S3 (moto on loopback, behind a proxy that counts requests
and bytes and adds a fixed latency to each request).

* ``.b2nd``: open, open + one item, open + one row, open + one block-sized box, and the whole
  array, through ``bloscpack.open(url)`` and python-blosc2's ``blosc2.open(url, lazy=True)``:
  requests, bytes fetched and wall time;
* every format: ``bloscpack.open(url)`` + one item and ``bloscpack.load(url)`` against
  downloading every object of the container (``fs.get``) and loading the local copy.

    python bench/bench_remote.py --quick                  # 16 MiB, 10 ms per request
    python bench/bench_remote.py --size-mib 64 --latency-ms 20
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import blosc2
from signals import smooth_array

import bloscpack

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from remote_servers import s3_server  # noqa: E402

MiB = 2**20
FORMATS = ("a.blp", "a.b2frame", "a.b2nd", "a.b2sframe", "a.bcolz")


def measure(server, fn: Callable[[], object], repeat: int = 3) -> tuple[float, int, int]:
    """Best wall time of ``repeat`` calls of ``fn`` (after one more), and the requests and
    bytes of one call."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        server.counter.reset()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best, server.counter.requests, server.counter.bytes


def row(name: str, figures: tuple[float, int, int]) -> str:
    seconds, requests, nbytes = figures
    return f"| {name} | {requests} | {nbytes / MiB:.3f} | {seconds * 1000:.1f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 MiB of data")
    parser.add_argument("--size-mib", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=None, help="per request (10/20)")
    args = parser.parse_args()
    size = 16 if args.quick else args.size_mib
    latency = (args.latency_ms if args.latency_ms is not None else 10 if args.quick else 20) / 1000
    data = smooth_array(size * MiB)
    work = Path(tempfile.mkdtemp(prefix="bench-remote-"))
    rows, cols = data.shape
    chunks, blocks = (max(rows // 8, 1), cols), (max(rows // 64, 1), cols)
    try:
        for name in FORMATS:
            options = {"chunks": chunks, "blocks": blocks} if name.endswith(".b2nd") else {}
            bloscpack.save(data, work / name, **options)
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
                  f" {latency * 1000:.0f} ms per request\n")  # fmt: skip
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
                ours = measure(server, lambda read=read: read(bloscpack.open(url, options)))
                theirs = measure(server, lambda read=read: read(
                    blosc2.open(url, lazy=True, storage_options=options)))
                print(row(f"{what}: bloscpack", ours))
                print(row(f"{what}: blosc2.open(lazy=True)", theirs))
            print("\n| format | how | requests | MiB fetched | ms |\n|---|---|---|---|---|")
            import fsspec

            fs = fsspec.filesystem("s3", **options)
            for name in FORMATS:
                url = f"s3://bench/{name}"
                first = measure(server, lambda url=url: bloscpack.open(url, options)[i, j])
                whole = measure(server, lambda url=url: bloscpack.load(url, options))
                local = work / "download" / name

                def download(url: str = url, local: Path = local) -> None:
                    shutil.rmtree(local.parent, ignore_errors=True)
                    local.parent.mkdir()
                    fs.get(url, str(local), recursive=True)
                    bloscpack.load(local)

                copied = measure(server, download)
                for how, figures in (("open + item", first), ("load", whole),
                                     ("download + load", copied)):  # fmt: skip
                    print(f"| {name.split('.')[1]} " + row(how, figures))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
