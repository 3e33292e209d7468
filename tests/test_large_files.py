"""Files larger than 4 GiB in every format (``slow``: ``pytest -m slow``): 2**29 + 2**17 int64
items (4 GiB + 1 MiB, a compressible ramp, so the files stay small on disk) written by
bloscpack from a dask array (never whole in memory) and by the format's own library, each read
by the other: items near the end and across the 4 GiB byte boundary, and ``verify``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import bloscpack

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(autouse=True)
def enough_disk(tmp_path):
    """The files need a few GiB (the .blp test writes the 4 GiB raw ramp)."""
    free = os.statvfs(tmp_path)
    if free.f_bavail * free.f_frsize < 12 << 30:
        pytest.skip("less than 12 GiB free for the files over 4 GiB")

N = 2**29 + 2**17  # int64 items: 4 GiB + 1 MiB
PIECE = 2**24  # items written or compared at a time (128 MiB)
#: Selections checked on each file: the end, and the items around byte 2**32.
SPOTS = [slice(N - 1000, N), slice(2**29 - 3, 2**29 + 3), slice(0, 5)]


def ramp() -> object:
    da = pytest.importorskip("dask.array")
    return da.arange(N, dtype="<i8", chunks=PIECE)


def check_array(array: object) -> None:
    """The items of :data:`SPOTS` of an opened array (any reader with numpy indexing)."""
    for spot in SPOTS:
        np.testing.assert_array_equal(np.asarray(array[spot]), np.arange(spot.start, spot.stop))


def check_raw(path: Path) -> None:
    """A raw little-endian int64 file holds the whole ramp (compared a piece at a time)."""
    assert path.stat().st_size == N * 8
    data = np.memmap(path, dtype="<i8", mode="r")
    for start in range(0, N, PIECE):
        stop = min(N, start + PIECE)
        assert np.array_equal(data[start:stop], np.arange(start, stop)), start
    del data


def write_raw(path: Path) -> None:
    with open(path, "wb") as fh:
        for start in range(0, N, PIECE):
            fh.write(np.arange(start, min(N, start + PIECE), dtype="<i8").tobytes())


def timed(label: str, times: dict[str, float], call: object, *args: object,
          **kwargs: object) -> object:  # fmt: skip
    """``call(*args, **kwargs)``, its duration in ``times[label]``."""
    began = time.perf_counter()
    result = call(*args, **kwargs)  # type: ignore[operator]
    times[label] = round(time.perf_counter() - began, 1)
    return result


def run_python(code: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def report(fmt: str, times: dict[str, float], *paths: Path) -> None:
    sizes = {p.name: sum(f.stat().st_size for f in ([p] if p.is_file() else p.rglob("*"))
                         if f.is_file()) for p in paths}  # fmt: skip
    print(f"\n{fmt}: seconds {times}; bytes on disk {sizes}")


def written_by_us(tmp_path: Path, fmt: str, times: dict[str, float]) -> Path:
    """The ramp saved by bloscpack as ``fmt`` (from dask), read back near the end and verified."""
    path = tmp_path / f"ours.{fmt}"
    timed("save", times, bloscpack.save, ramp(), path, format=fmt)
    with bloscpack.open(path) as array:
        timed("read", times, check_array, array)
    assert timed("verify", times, bloscpack.verify, path)["ok"]
    return path


def test_blp_over_4_gib_with_bloscpack_016(tmp_path, bloscpack016):
    times: dict[str, float] = {}
    ours = written_by_us(tmp_path, "blp", times)
    out = tmp_path / "by016.raw"
    call = "import sys\nfrom bloscpack import {} as f\nf(sys.argv[1], sys.argv[2])"
    timed("016 unpack", times, bloscpack016.run, call.format("unpack_file_from_file"),
          str(ours), str(out))  # fmt: skip
    timed("check 016 output", times, check_raw, out)
    raw = tmp_path / "ramp.raw"
    out.rename(raw)
    theirs = tmp_path / "by016.blp"
    timed("016 pack", times, bloscpack016.run, call.format("pack_file_to_file"),
          str(raw), str(theirs))  # fmt: skip
    with bloscpack.open(theirs) as array:  # raw bytes: the ramp's bytes
        assert array.shape == (N * 8,)
        for spot in SPOTS:
            got = np.asarray(array[spot.start * 8 : spot.stop * 8]).view("<i8")
            np.testing.assert_array_equal(got, np.arange(spot.start, spot.stop))
    assert timed("verify 016 file", times, bloscpack.verify, theirs)["ok"]
    raw.unlink()  # 4 GiB: pytest keeps the directories of the last runs
    report("blp", times, ours, theirs)


@pytest.mark.parametrize("fmt", ["b2frame", "b2nd"])
def test_frame_over_4_gib_with_python_blosc2(tmp_path, fmt):
    pytest.importorskip("blosc2")
    times: dict[str, float] = {}
    ours = written_by_us(tmp_path, fmt, times)
    read = ("import blosc2, sys, json\n"
            "a = blosc2.open(sys.argv[1])\n"
            "n = int(sys.argv[2])\n"
            "get = (lambda s: a[s]) if hasattr(a, 'shape') else (lambda s: __import__('numpy')"
            ".frombuffer(a.get_slice(s.start, s.stop), '<i8'))\n"  # a frame: items of 8 bytes
            "print(json.dumps([get(slice(n - 1000, n)).tolist(),"
            " get(slice(2**29 - 3, 2**29 + 3)).tolist()]))\n")  # fmt: skip
    tail, middle = json.loads(timed("blosc2 read", times, run_python, read,
                                                  str(ours), str(N)))  # fmt: skip
    assert tail == list(range(N - 1000, N)) and middle == list(range(2**29 - 3, 2**29 + 3))
    theirs = tmp_path / f"theirs.{fmt}"
    write = ("import blosc2, numpy as np, sys\n"
             "n, piece, fmt = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]\n"
             "if fmt == 'b2nd':\n"
             "    a = blosc2.empty((n,), dtype='<i8', urlpath=sys.argv[1], chunks=(2**20,))\n"
             "    for s in range(0, n, piece):\n"
             "        a[s:min(n, s + piece)] = np.arange(s, min(n, s + piece), dtype='<i8')\n"
             "else:\n"
             "    sc = blosc2.SChunk(chunksize=2**23, urlpath=sys.argv[1], contiguous=True,\n"
             "                       cparams={'typesize': 8})\n"
             "    for s in range(0, n, 2**20):\n"
             "        sc.append_data(np.arange(s, min(n, s + 2**20), dtype='<i8'))\n")  # fmt: skip
    timed("blosc2 write", times, run_python, write, str(theirs), str(N), str(PIECE), fmt)
    with bloscpack.open(theirs) as array:
        if fmt == "b2nd":
            timed("read theirs", times, check_array, array)
        else:  # a frame without numpy metadata: its bytes
            for spot in SPOTS:
                got = np.asarray(array[spot.start * 8 : spot.stop * 8]).view("<i8")
                np.testing.assert_array_equal(got, np.arange(spot.start, spot.stop))
    assert timed("verify theirs", times, bloscpack.verify, theirs)["ok"]
    report(fmt, times, ours, theirs)


def test_bcolz_over_4_gib_with_bcolz(tmp_path):
    pytest.importorskip("bcolz")
    times: dict[str, float] = {}
    ours = written_by_us(tmp_path, "bcolz", times)
    read = ("import bcolz, sys, json\n"
            "a = bcolz.open(sys.argv[1], mode='r')\n"
            "n = int(sys.argv[2])\n"
            "print(json.dumps([len(a), a[n - 1000:n].tolist(),"
            " a[2**29 - 3:2**29 + 3].tolist()]))\n")  # fmt: skip
    length, tail, middle = json.loads(
        timed("bcolz read", times, run_python, read, str(ours), str(N)))
    assert length == N and tail == list(range(N - 1000, N))
    assert middle == list(range(2**29 - 3, 2**29 + 3))
    theirs = tmp_path / "theirs.bcolz"
    write = ("import bcolz, numpy as np, sys\n"
             "n, piece = int(sys.argv[2]), int(sys.argv[3])\n"
             "a = bcolz.carray(np.empty(0, '<i8'), rootdir=sys.argv[1], mode='w',"
             " expectedlen=n)\n"
             "for s in range(0, n, piece):\n"
             "    a.append(np.arange(s, min(n, s + piece), dtype='<i8'))\n"
             "a.flush()\n")  # fmt: skip
    timed("bcolz write", times, run_python, write, str(theirs), str(N), str(PIECE))
    with bloscpack.open(theirs) as array:
        timed("read theirs", times, check_array, array)
    assert timed("verify theirs", times, bloscpack.verify, theirs)["ok"]
    report("bcolz", times, ours, theirs)

