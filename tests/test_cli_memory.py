"""``blpk compress`` and ``blpk decompress`` keep their memory flat as the file grows (the full
200 MiB vs 2 GiB check is in bench/bench_blp.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

MiB = 2**20


def peak_rss(argv: list[str], tmp_path: Path) -> int:
    """Peak resident memory (bytes) of a command, measured by a small forked helper so that
    none of this process's memory is counted."""
    helper = (
        "import os, resource, sys\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os.execv(sys.argv[1], sys.argv[1:])\n"
        "_, status = os.waitpid(pid, 0)\n"
        "assert os.waitstatus_to_exitcode(status) == 0\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-S", "-c", helper, *argv], capture_output=True, text=True, check=True
    )
    return int(proc.stdout) * 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB on Linux")
def test_compress_and_decompress_memory_is_flat(tmp_path):
    rng = np.random.default_rng(3)
    peaks = {}
    for mib in (4, 32):
        source = tmp_path / f"walk{mib}.bin"
        np.cumsum(rng.standard_normal(mib * MiB // 4, dtype=np.float32)).tofile(source)
        packed = tmp_path / f"walk{mib}.blp"
        blpk = [sys.executable, "-m", "bloscpack", "-n", "1"]
        compress = peak_rss([*blpk, "c", "-t", "4", str(source), str(packed)], tmp_path)
        os.unlink(source)
        decompress = peak_rss([*blpk, "d", "-f", str(packed)], tmp_path)
        peaks[mib] = (compress, decompress)
    (c_small, d_small), (c_large, d_large) = peaks[4], peaks[32]
    assert c_large - c_small < 8 * MiB, peaks
    assert d_large - d_small < 8 * MiB, peaks


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB on Linux")
def test_npy_memory_is_bounded(tmp_path):
    """A ``.npy`` input is read with file reads (flat memory); a ``.npy`` output is written a
    slab at a time, its input memory-mapped: the growth is at most the compressed input's size
    (file-backed pages the kernel can drop), not the array's."""
    rng = np.random.default_rng(4)
    peaks, inputs = {}, {}
    for mib in (4, 32):
        array = np.cumsum(rng.standard_normal(mib * MiB // 8)).reshape(-1, 1024)
        source = tmp_path / f"walk{mib}.npy"
        np.save(source, array)
        packed = tmp_path / f"walk{mib}.blp"
        blpk = [sys.executable, "-m", "bloscpack", "-n", "1"]
        compress = peak_rss([*blpk, "c", str(source), str(packed)], tmp_path)
        os.unlink(source)
        out = tmp_path / "out.npy"
        to_npy = peak_rss([*blpk, "d", "-f", str(packed), str(out)], tmp_path)
        np.testing.assert_array_equal(np.load(out), array)
        peaks[mib] = (compress, to_npy)
        inputs[mib] = os.path.getsize(packed)
    assert peaks[32][0] - peaks[4][0] < 8 * MiB, peaks
    assert peaks[32][1] - peaks[4][1] < 8 * MiB + inputs[32] - inputs[4], (peaks, inputs)
