"""``blpk demo``: every format on a built-in example array."""

from __future__ import annotations

import argparse
import os
import shutil
from typing import Any

from .console import EXIT_OK, CLIError, Console
from .files import _check_output, _size_of
from .options import FORMAT_EXTENSIONS, FORMATS


def example_array(nbytes: int) -> Any:
    """The demo's data: a float64 random walk (cumulative sum of normal steps), fixed seed."""
    import numpy as np

    rng = np.random.default_rng(2024)
    return np.cumsum(rng.standard_normal(max(nbytes // 8, 1)))


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    """``demo``: the quick start on a built-in example array, in every format, offline."""
    import tempfile
    import time

    import numpy as np

    from ..dispatch import load, save, verify

    array = example_array(args.size)
    nbytes = array.nbytes
    rows = []
    ok = True
    with tempfile.TemporaryDirectory(prefix="blpk-demo-") as scratch:
        directory = args.dir or scratch
        os.makedirs(directory, exist_ok=True)
        for fmt in FORMATS:
            _check_output(
                os.path.join(directory, "example" + FORMAT_EXTENSIONS[fmt]), args, console
            )
        console.result(
            f"example: float64 random walk, {array.size} items ({nbytes / 2**20:.1f} MiB),"
            f" written to {directory if args.dir else 'a temporary directory'}"
        )
        for fmt in FORMATS:  # warm up: load the C libraries before anything is timed
            path = os.path.join(scratch, "warm-up" + FORMAT_EXTENSIONS[fmt])
            save(array[:1024], path, format=fmt)
            load(path)
            if os.path.isdir(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        for fmt in FORMATS:
            path = os.path.join(directory, "example" + FORMAT_EXTENSIONS[fmt])
            written = read = float("inf")
            for _ in range(3):  # best of three
                start = time.perf_counter()
                save(array, path, format=fmt)
                written = min(written, time.perf_counter() - start)
                start = time.perf_counter()
                back = load(path)
                read = min(read, time.perf_counter() - start)
            report = verify(path)
            same = back.dtype == array.dtype and np.array_equal(back, array)
            ok = ok and same and bool(report["ok"])
            size = _size_of(path)
            rows.append((fmt, os.path.basename(path), size, nbytes / size, nbytes / written,
                         nbytes / read, "yes" if same and report["ok"] else "NO"))  # fmt: skip
    header = ("format", "file", "bytes", "ratio", "write MB/s", "read MB/s", "verified")
    table = [header] + [
        (f, name, f"{size:,}", f"{ratio:.2f}", f"{w / 2**20:,.0f}", f"{r / 2**20:,.0f}", v)
        for f, name, size, ratio, w, r, v in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for i, row in enumerate(table):
        cells = [
            c.ljust(w) if j < 2 else c.rjust(w)
            for j, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        console.plain("  ".join(cells).rstrip())
        if i == 0:
            console.plain("  ".join("-" * w for w in widths))
    if not ok:
        raise CLIError("the demo found a format that did not round-trip")
    return EXIT_OK
