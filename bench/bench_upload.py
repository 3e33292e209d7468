"""Writing to S3: ``bloscpack.save`` of one array in every format to a local moto S3 server
(its own process), against the same save to a local path: time, the requests the server
received (PUTs, parts of multipart uploads, others) and the objects written, and the peak
memory of the writing process above what it used before (``VmHWM`` after resetting it).

    python bench/bench_upload.py              # 256 MiB array
    python bench/bench_upload.py --mib 1024   # memory stays flat as the array grows

The array is a float64 random walk (compresses about 1:1.3 with the defaults: most bytes go
over the wire).  Needs moto[server], s3fs and boto3.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORMATS = {"blp": ".blp", "b2frame": ".b2frame", "b2nd": ".b2nd", "sframe": ".b2sframe",
           "bcolz": ".bcolz"}  # fmt: skip

SERVER = textwrap.dedent(
    """
    import json, logging, sys
    from moto.server import ThreadedMotoServer
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    app, log = server._server.app, open(sys.argv[1], "a", buffering=1)
    def logged(environ, start_response):
        log.write(json.dumps([environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""),
                              environ.get("QUERY_STRING", "")]) + "\\n")
        return app(environ, start_response)
    server._server.app = logged
    print("%s:%d" % server.get_host_and_port(), flush=True)
    sys.stdin.read()
    """
)

WRITER = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    import bloscpack
    def status(key):
        with open("/proc/self/status") as fh:
            return next(int(l.split()[1]) * 1024 for l in fh if l.startswith(key))
    mib, dst, options = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
    rng = np.random.default_rng(0)
    array = np.cumsum(rng.standard_normal(mib * 2**20 // 8))
    bloscpack.save(array[:1000], dst + ".warm", storage_options=options or None)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    before = status("VmRSS:")
    t0 = time.perf_counter()
    bloscpack.save(array, dst, storage_options=options or None)
    elapsed = time.perf_counter() - t0
    print(json.dumps({"seconds": elapsed, "extra": status("VmHWM:") - before}))
    """
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=256, help="array size (MiB)")
    parser.add_argument("--formats", default=",".join(FORMATS), help="comma-separated")
    args = parser.parse_args()
    formats = {f: FORMATS[f] for f in args.formats.split(",")}
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), AWS_ACCESS_KEY_ID="testing",
               AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1")  # fmt: skip
    with tempfile.TemporaryDirectory() as work:
        log = Path(work) / "requests.jsonl"
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(log)], env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            endpoint = "http://" + server.stdout.readline().strip()  # type: ignore[union-attr]
            import boto3

            boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                         aws_access_key_id="testing",
                         aws_secret_access_key="testing").create_bucket(Bucket="bench")  # fmt: skip
            options = {"endpoint_url": endpoint, "key": "testing", "secret": "testing"}
            print(f"{args.mib} MiB float64 random walk, moto S3 on loopback")
            print("| format | local s | S3 s | S3 MB/s | object PUTs | part PUTs | other requests"
                  " | objects | extra memory local | extra memory S3 |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            for fmt, suffix in formats.items():
                local = _run(env, args.mib, str(Path(work) / f"a{suffix}"), {})
                done = len(log.read_text().splitlines()) if log.exists() else 0
                remote = _run(env, args.mib, f"s3://bench/{fmt}/a{suffix}", options)
                requests = [json.loads(line) for line in log.read_text().splitlines()[done:]]
                puts = [r for r in requests if r[0] == "PUT" and f"/{fmt}/a{suffix}" in r[1]
                        and ".warm" not in r[1]]  # fmt: skip
                parts = [r for r in puts if "partNumber" in r[2]]
                objects = len({r[1] for r in puts})
                other = len(requests) - len(puts)
                print(f"| {fmt} | {local['seconds']:.2f} | {remote['seconds']:.2f}"
                      f" | {args.mib / remote['seconds']:.0f} | {len(puts) - len(parts)}"
                      f" | {len(parts)} | {other} | {objects}"
                      f" | {local['extra'] / 2**20:.0f} MiB | {remote['extra'] / 2**20:.0f} MiB |")
        finally:
            server.stdin.close()  # type: ignore[union-attr]
            server.wait(timeout=30)


def _run(env: dict[str, str], mib: int, dst: str, options: dict[str, str]) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", WRITER, str(mib), dst, json.dumps(options)],
                          env=env, capture_output=True, text=True, check=False)  # fmt: skip
    if proc.returncode:
        raise SystemExit(f"{dst}: {proc.stderr.strip().splitlines()[-1]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s)")
