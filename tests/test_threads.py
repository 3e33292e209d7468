"""Every reader the library returns is safe to read from many threads at once: lazy arrays of
every format (and ctable columns), ``Frame`` in read mode, ``BloscFile`` in read mode and the
``.blp`` reader.  Eight threads read random slices and single items and compare them with the
numpy truth; dask's threaded scheduler sums each format."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import dask.array as da
import numpy as np
import pytest

import bloscpack
from bloscpack.containers.bloscpack import BloscpackReader

THREADS = 8
READS_PER_THREAD = 60
#: Small chunks: a random slice crosses several of them and threads meet in the same ones.
CHUNK_ROWS = 2_000
TRUTH = np.cumsum(np.random.default_rng(7).standard_normal(200_000))
FORMATS = ["blp", "b2frame", "b2nd", "b2nd-sparse", "sframe", "bcolz"]
SUFFIX = {"blp": ".blp", "b2frame": ".b2frame", "b2nd": ".b2nd", "b2nd-sparse": ".b2nd",
          "sframe": ".b2sframe", "bcolz": ".bcolz"}  # fmt: skip


def write(fmt: str, tmp_path: Path, array: np.ndarray = TRUTH) -> Path:
    """``array`` stored in ``fmt`` with chunks of :data:`CHUNK_ROWS` rows."""
    path = tmp_path / f"truth{SUFFIX[fmt]}"
    rows = CHUNK_ROWS * int(np.prod(array.shape[1:], dtype=np.int64))
    if fmt == "blp":
        bloscpack.save(array, path, chunk_size=rows * array.itemsize)
    elif fmt == "bcolz":
        bloscpack.save(array, path, format="bcolz", chunklen=CHUNK_ROWS)
    elif fmt == "b2frame":
        source = tmp_path / "source.b2nd"
        bloscpack.save(array, source, format="b2nd", chunks=(CHUNK_ROWS, *array.shape[1:]))
        bloscpack.convert(source, path, "b2frame")
    elif fmt == "sframe":
        bloscpack.save(array, path, chunksize=rows * array.itemsize)
    else:  # b2nd, in a file or a sparse directory
        bloscpack.save(array, path, chunks=(CHUNK_ROWS, *array.shape[1:]),
                       sparse=fmt == "b2nd-sparse")  # fmt: skip
    return path


def hammer(read: Callable[[np.random.Generator], tuple[object, object]]) -> None:
    """Run ``read`` (which returns (got, expected)) from :data:`THREADS` threads started
    together; every result must equal its truth."""
    barrier = threading.Barrier(THREADS)

    def worker(seed: int) -> int:
        rng = np.random.default_rng(seed)
        barrier.wait()
        for _ in range(READS_PER_THREAD):
            got, expected = read(rng)
            np.testing.assert_array_equal(got, expected)
        return READS_PER_THREAD

    with ThreadPoolExecutor(THREADS) as pool:
        done = sum(pool.map(worker, range(THREADS)))
    assert done == THREADS * READS_PER_THREAD


def random_read(array: bloscpack.BloscArray, truth: np.ndarray, rng: np.random.Generator):
    """A random slice (a few chunks, sometimes strided) or a single item of ``array``."""
    n = len(truth)
    if rng.random() < 0.3:
        i = int(rng.integers(-n, n))
        return array[i], truth[i]
    start = int(rng.integers(0, n))
    stop = start + int(rng.integers(1, 5 * CHUNK_ROWS))
    step = int(rng.choice([1, 1, 3, 7]))
    return array[start:stop:step], truth[start:stop:step]


@pytest.mark.parametrize("fmt", FORMATS)
def test_lazy_arrays_read_from_many_threads(fmt: str, tmp_path: Path):
    with bloscpack.open(write(fmt, tmp_path)) as array:
        hammer(lambda rng: random_read(array, TRUTH, rng))


def test_ctable_columns_and_rows_read_from_many_threads(tmp_path: Path):
    table = np.zeros(len(TRUTH), dtype=[("x", "<f8"), ("i", "<i4")])
    table["x"], table["i"] = TRUTH, np.arange(len(TRUTH))
    path = write("bcolz", tmp_path, table)
    with bloscpack.open(path) as opened:
        columns = {name: opened[name] for name in ("x", "i")}

        def read(rng: np.random.Generator):
            if rng.random() < 0.5:
                return random_read(opened, table, rng)
            name = str(rng.choice(["x", "i"]))
            return random_read(columns[name], table[name], rng)

        hammer(read)


@pytest.mark.parametrize("fmt", ["b2frame", "sframe"])
def test_frames_decompress_chunks_from_many_threads(fmt: str, tmp_path: Path):
    frame = bloscpack.Frame(write(fmt, tmp_path))
    chunks = [bytes(frame.decompress_chunk(i)) for i in range(frame.nchunks)]

    def read(rng: np.random.Generator):
        i = int(rng.integers(frame.nchunks))
        return frame.decompress_chunk(i), np.frombuffer(chunks[i], np.uint8)

    hammer(read)
    frame.close()


def test_blp_reader_reads_chunks_from_many_threads(tmp_path: Path):
    reader = BloscpackReader(write("blp", tmp_path))
    raw = TRUTH.tobytes()
    size = CHUNK_ROWS * 8

    def read(rng: np.random.Generator):
        i = int(rng.integers(reader.nchunks))
        got = bloscpack.decompress_chunk(reader.read_chunk(i, verify=True))
        return np.frombuffer(got, np.uint8), np.frombuffer(raw[i * size : (i + 1) * size], np.uint8)

    hammer(read)
    reader.close()


def test_blosc_file_reads_are_atomic_across_threads(tmp_path: Path):
    """Threads sharing one ``BloscFile`` each read 1 KiB pieces until the end: every piece is
    the file's bytes at some position, and together they are the file, each byte once."""
    values = np.arange(300_000, dtype="<i8")
    path = tmp_path / "seq.blp"
    bloscpack.pack_bytes_to_file(values.tobytes(), str(path), chunk_size=10_000)
    pieces: list[bytes] = []
    lock = threading.Lock()
    with bloscpack.BloscFile(path) as blp:

        def worker(_: int) -> None:
            while piece := blp.read(1024):
                with lock:
                    pieces.append(piece)

        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(worker, range(THREADS)))
    starts = sorted(int(np.frombuffer(p[:8], "<i8")[0]) for p in pieces)
    assert starts == list(range(0, len(values), 128))
    for piece in pieces:
        first = int(np.frombuffer(piece[:8], "<i8")[0])
        assert piece == values[first : first + 128].tobytes()


@pytest.mark.parametrize("fmt", FORMATS)
def test_dask_threaded_sum(fmt: str, tmp_path: Path):
    with bloscpack.open(write(fmt, tmp_path)) as array:
        for _ in range(3):
            total = da.from_array(array, chunks=CHUNK_ROWS // 2).sum()
            assert total.compute(scheduler="threads") == pytest.approx(TRUTH.sum(), rel=1e-12)
