"""Files over 4 GiB in every format, both ways with the real tools.

The data is 4 GiB + 64 MiB of int64 zeros with a distinct marker in every 64 MiB (so in every
chunk: a chunk read in the wrong place shows) and near the end, read from a sparse file (no
disk used for the input, and the containers stay small): the sizes, item positions and offsets
of such files pass 2^32, so any 32-bit truncation shows up as a wrong marker, a wrong length or
an error.  Each test writes with one implementation, reads the markers back with the other
(random access near the end), and checks the whole container chunk by chunk (``iter_chunks``,
bounded memory) and with ``verify``."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bloscpack

pytestmark = pytest.mark.slow

MiB = 1 << 20
SIZE = 4 * 1024 * MiB + 64 * MiB  # bytes: over 2^32
ITEMS = SIZE // 8
MARKS = {i * (64 * MiB // 8) + 3 * i: (i + 1) * 1_000_003 for i in range(SIZE // (64 * MiB))}
MARKS |= {ITEMS - 1: 7_777_777, ITEMS - 4097: 5_555_555, (1 << 29) + 1: 3_333_333}
CHUNK_ITEMS = 8 * MiB  # 64 MiB chunks: 65 of them


@pytest.fixture(scope="module")
def big_input(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sparse input file: zeros except the markers."""
    path = tmp_path_factory.mktemp("large") / "big.bin"
    with open(path, "wb") as fh:
        fh.truncate(SIZE)
        for item, value in MARKS.items():
            fh.seek(item * 8)
            fh.write(np.int64(value).tobytes())
    return path


@pytest.fixture(scope="module")
def big_array(big_input: Path) -> np.memmap:
    return np.memmap(big_input, dtype="<i8", mode="r")


def expected(start: int, stop: int) -> np.ndarray:
    out = np.zeros(stop - start, dtype="<i8")
    for item, value in MARKS.items():
        if start <= item < stop:
            out[item - start] = value
    return out


def input_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while piece := fh.read(64 * MiB):
            digest.update(piece)
    return digest.hexdigest()


def int64_items(x: bloscpack.BloscArray, start: int, stop: int) -> np.ndarray:
    """Items [start, stop) of the int64 data, whether ``x`` holds the array or its raw bytes."""
    if x.dtype == np.uint8:
        return np.asarray(x[start * 8: stop * 8]).view("<i8")
    assert x.dtype == np.dtype("<i8") and x.shape == (ITEMS,)
    return np.asarray(x[start:stop])


def check_ours(path: Path) -> None:
    """Our reader: the markers by random access, the end, every chunk, and verify."""
    with bloscpack.open(path) as x:
        assert x.nbytes == SIZE
        for item, value in MARKS.items():
            assert int(int64_items(x, item, item + 1)[0]) == value, item
        assert np.array_equal(int64_items(x, ITEMS - 5000, ITEMS), expected(ITEMS - 5000, ITEMS))
        done = 0
        for chunk in x.iter_chunks():
            flat = np.ascontiguousarray(chunk).reshape(-1).view(np.uint8)
            assert flat.size % 8 == 0
            assert np.array_equal(flat.view("<i8"), expected(done // 8, (done + flat.size) // 8))
            done += flat.size
        assert done == SIZE
    report = bloscpack.verify(path)
    assert report["ok"], report


def run_peer(code: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_blp_both_ways_with_bloscpack_016(tmp_path: Path, big_input: Path, big_array: np.memmap,
                                          bloscpack016) -> None:  # fmt: skip
    ours = tmp_path / "ours.blp"
    bloscpack.save(big_array, ours, chunk_size=64 * MiB)
    header = bloscpack.info(ours)
    assert header["nchunks"] == SIZE // (64 * MiB) and header["nbytes"] == SIZE
    check_ours(ours)
    # 0.16 decodes the whole file (to a pipe): the same bytes as the input
    code = ("import sys, hashlib, bloscpack\n"
            "bloscpack.unpack_file(sys.argv[1], '/dev/stdout')\n")  # fmt: skip
    digest = hashlib.sha256()
    with subprocess.Popen([sys.executable, "-S", "-c", bloscpack016.PRELUDE + code, str(ours)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env={"PYTHONPATH": str(bloscpack016.target)}) as proc:  # fmt: skip
        assert proc.stdout is not None and proc.stderr is not None
        while piece := proc.stdout.read(16 * MiB):
            digest.update(piece)
        errors = proc.stderr.read()
    assert proc.returncode == 0, errors
    assert digest.hexdigest() == input_sha256(big_input)
    # 0.16 writes raw bytes; we read them
    theirs = tmp_path / "theirs.blp"
    bloscpack016.run("bloscpack.pack_file(sys.argv[1], sys.argv[2], chunk_size=64 * 2**20)\n"
                     .replace("sys.argv", "__import__('sys').argv"), str(big_input), str(theirs))
    assert bloscpack.detect(theirs) == "blp"
    check_ours(theirs)


def test_b2frame_both_ways_with_python_blosc2(tmp_path: Path, big_input: Path,
                                              big_array: np.memmap) -> None:  # fmt: skip
    ours = tmp_path / "ours.b2frame"
    bloscpack.save(big_array, ours, chunk_size=64 * MiB)
    check_ours(ours)
    code = ("import sys, blosc2, numpy as np\n"
            "s = blosc2.open(sys.argv[1])\n"
            "marks = [int(m) for m in sys.argv[2].split(',')]\n"
            "values = [np.frombuffer(s.get_slice(m, m + 1), '<i8')[0] for m in marks]\n"
            "print(s.nbytes, *[int(v) for v in values])\n")  # fmt: skip
    marks = sorted(MARKS)
    out = run_peer(code, str(ours), ",".join(str(m) for m in marks)).split()
    assert [int(v) for v in out] == [SIZE] + [MARKS[m] for m in marks]
    theirs = tmp_path / "theirs.b2frame"
    run_peer("import sys, blosc2, numpy as np\n"
             "a = np.memmap(sys.argv[1], dtype='<i8', mode='r')\n"
             "s = blosc2.SChunk(chunksize=64 * 2**20, urlpath=sys.argv[2], mode='w',"
             " cparams={'typesize': 8})\n"
             "for i in range(0, a.size, 8 * 2**20):\n"
             "    s.append_data(np.ascontiguousarray(a[i:i + 8 * 2**20]))\n",
             str(big_input), str(theirs))  # fmt: skip
    check_ours(theirs)


def assert_peer_reads(path: Path, opening: str) -> None:
    """The peer's array ``a`` (``opening`` makes it of ``sys.argv[1]``) has the input's length,
    its markers and the sum of its last 5000 items."""
    marks = sorted(MARKS)
    code = (f"import sys\n{opening}\n"
            "marks = [int(m) for m in sys.argv[2].split(',')]\n"
            "print(len(a), *[int(a[m]) for m in marks], int(a[-5000:].sum()))\n")  # fmt: skip
    out = run_peer(code, str(path), ",".join(str(m) for m in marks)).split()
    tail = int(expected(ITEMS - 5000, ITEMS).sum())
    assert [int(v) for v in out] == [ITEMS] + [MARKS[m] for m in marks] + [tail]


def test_b2nd_both_ways_with_python_blosc2(tmp_path: Path, big_input: Path,
                                           big_array: np.memmap) -> None:  # fmt: skip
    ours = tmp_path / "ours.b2nd"
    bloscpack.save(big_array, ours, chunks=(CHUNK_ITEMS,), blocks=(MiB // 8,))
    check_ours(ours)
    assert_peer_reads(ours, "import blosc2\na = blosc2.open(sys.argv[1])")
    theirs = tmp_path / "theirs.b2nd"
    run_peer("import sys, blosc2, numpy as np\n"
             "a = np.memmap(sys.argv[1], dtype='<i8', mode='r')\n"
             "blosc2.asarray(a, urlpath=sys.argv[2], mode='w', chunks=(8 * 2**20,),"
             " blocks=(2**17,))\n", str(big_input), str(theirs))  # fmt: skip
    check_ours(theirs)


def test_bcolz_both_ways_with_bcolz(tmp_path: Path, big_input: Path,
                                    big_array: np.memmap) -> None:  # fmt: skip
    pytest.importorskip("bcolz")
    ours = tmp_path / "ours.bcolz"
    bloscpack.save(big_array, ours, chunks=CHUNK_ITEMS)
    check_ours(ours)
    assert_peer_reads(ours, "import bcolz\na = bcolz.open(sys.argv[1], mode='r')")
    theirs = tmp_path / "theirs.bcolz"
    run_peer("import sys, bcolz, numpy as np\n"
             "a = np.memmap(sys.argv[1], dtype='<i8', mode='r')\n"
             "c = bcolz.carray(np.empty(0, '<i8'), rootdir=sys.argv[2], mode='w',"
             " chunklen=8 * 2**20)\n"
             "for i in range(0, a.size, 8 * 2**20):\n"
             "    c.append(a[i:i + 8 * 2**20])\n"
             "c.flush()\n", str(big_input), str(theirs))  # fmt: skip
    check_ours(theirs)
