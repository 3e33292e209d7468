"""Readers in other processes while a process appends to a ``.blp`` file or edits a frame in
place: every read sees the file as it was before or after one change, never an error; an array
opened before a change keeps its data or raises ``FileChangedError`` (nothing else)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import bloscpack
from bloscpack.containers.bloscpack.append import append
from bloscpack.errors import BloscpackError, FileChangedError

ROWS = 4_000  # rows of 2 int64 per append: the data is always 0, 1, 2, ... in order
CHANGES = 60

READER = textwrap.dedent(
    """
    import os, sys, numpy as np, bloscpack
    from bloscpack.errors import FileChangedError
    path, done = sys.argv[1], sys.argv[2]
    while True:  # an array opened before a change raises FileChangedError
        early = bloscpack.open(path)
        try:
            first = early[...]
            break
        except FileChangedError:
            early.close()
    reads = changed = 0
    def check(values):
        flat = np.asarray(values).reshape(-1)
        if flat.dtype == np.uint8:  # a frame of raw bytes
            flat = flat.view("<i8")
        assert np.array_equal(flat, np.arange(flat.size)), "wrong data"
    while not os.path.exists(done) or reads < 5:
        check(bloscpack.load(path))
        report = bloscpack.verify(path)
        assert report["ok"], report
        assert bloscpack.info(path)["format"] in ("blp", "b2frame", "sframe")
        try:
            with bloscpack.open(path) as opened:
                check(opened[...])
        except FileChangedError:
            changed += 1
        try:
            assert np.array_equal(early[...], first), "the early array changed its data"
        except FileChangedError as exc:
            assert "was changed" in str(exc) and "open it again" in str(exc)
            changed += 1
        reads += 1
    print(reads, changed)
    """
)


def start_readers(path: Path, done: Path, n: int = 3) -> list[subprocess.Popen]:
    return [
        subprocess.Popen([sys.executable, "-c", READER, str(path), str(done)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        for _ in range(n)
    ]


def finish(readers: list[subprocess.Popen], done: Path) -> list[tuple[int, int]]:
    done.touch()
    counts = []
    for reader in readers:
        out, err = reader.communicate(timeout=300)
        assert reader.returncode == 0, err
        reads, changed = map(int, out.split())
        counts.append((reads, changed))
    return counts


def test_readers_while_a_process_appends(tmp_path: Path):
    path = tmp_path / "grow.blp"
    bloscpack.save(np.arange(2 * ROWS, dtype="<i8").reshape(ROWS, 2), path, chunk_size=48_000,
                   max_app_chunks=CHANGES * 4)  # fmt: skip
    done = tmp_path / "done"
    readers = start_readers(path, done)
    appender = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, numpy as np
            from bloscpack.containers.bloscpack.append import append
            for k in range(1, {CHANGES} + 1):
                start = 2 * {ROWS} * k
                rows = np.arange(start, start + 2 * {ROWS}, dtype="<i8").reshape(-1, 2)
                append(sys.argv[1], rows)
            """), str(path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert appender.returncode == 0, appender.stderr
    counts = finish(readers, done)
    assert all(reads >= 5 for reads, _ in counts)
    assert bloscpack.load(path).shape == ((CHANGES + 1) * ROWS, 2)


@pytest.mark.parametrize("sparse", [False, True], ids=["b2frame", "sframe"])
def test_readers_while_a_process_edits_a_frame(tmp_path: Path, sparse: bool):
    path = tmp_path / ("grow.b2sframe" if sparse else "grow.b2frame")
    values = np.arange(2 * ROWS, dtype="<i8")
    with bloscpack.Frame(path, "w", typesize=8, chunksize=values.nbytes, sparse=sparse) as frame:
        frame.append_data(values)
    done = tmp_path / "done"
    readers = start_readers(path, done)
    editor = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, numpy as np, bloscpack
            frame = bloscpack.Frame(sys.argv[1], "a")
            for k in range(1, {CHANGES} + 1):
                start = 2 * {ROWS} * k
                frame.append_data(np.arange(start, start + 2 * {ROWS}, dtype="<i8"))
            frame.close()
            """), str(path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert editor.returncode == 0, editor.stderr
    counts = finish(readers, done)
    assert all(reads >= 5 for reads, _ in counts)
    data = bloscpack.load(path)
    assert np.array_equal(data.view("<i8"), np.arange(2 * ROWS * (CHANGES + 1)))


def test_an_array_opened_before_an_append_raises_file_changed(tmp_path: Path):
    path = tmp_path / "a.blp"
    rows = np.arange(3000, dtype="<f8")
    bloscpack.save(rows, path, chunk_size=8000)
    with bloscpack.open(path) as early:
        np.testing.assert_array_equal(early[:10], rows[:10])
        append(path, rows[:500])
        with pytest.raises(FileChangedError, match="was changed .* open it again"):
            early[...]
        with pytest.raises(FileChangedError):
            early[2999]
    assert issubclass(FileChangedError, BloscpackError)
    assert bloscpack.FileChangedError is FileChangedError
    np.testing.assert_array_equal(bloscpack.load(path), np.concatenate([rows, rows[:500]]))


def test_a_blosc_file_opened_before_an_append_raises_file_changed(tmp_path: Path):
    path = tmp_path / "b.blp"
    bloscpack.pack_bytes_to_file(bytes(range(256)) * 100, str(path), chunk_size=1000)
    raw = tmp_path / "more.bin"
    raw.write_bytes(b"x" * 5000)
    with bloscpack.BloscFile(path) as early:
        assert early.read(10) == bytes(range(10))
        append(path, raw)
        early.seek(20_000)
        with pytest.raises(FileChangedError):
            early.read()


@pytest.mark.parametrize("sparse", [False, True], ids=["b2frame", "sframe"])
def test_a_frame_opened_before_an_edit_raises_file_changed(tmp_path: Path, sparse: bool):
    path = tmp_path / "f.b2frame"
    with bloscpack.Frame(path, "w", typesize=1, chunksize=1000, sparse=sparse) as frame:
        frame.append_data(bytes(1000))
    reader = bloscpack.Frame(path)
    early = bloscpack.open(path)
    assert reader.decompress_chunk(0) == bytes(1000)
    assert early[:1000].tobytes() == bytes(1000)
    with bloscpack.Frame(path, "a") as editor:
        editor.update_chunk(0, editor.read_chunk(0))  # same data, rewritten
        editor.append_data(b"\x01" * 1000)
    with pytest.raises(FileChangedError, match="was changed .* since it was opened; open it again"):
        reader.decompress_chunk(0)
    with pytest.raises(FileChangedError):
        early[:1000]
    reader.close()
    early.close()
    with bloscpack.Frame(path) as again:
        assert again.decompress_chunk(1) == b"\x01" * 1000


def test_reader_threads_while_a_thread_appends(tmp_path: Path):
    """The same rule inside one process: the locks are per open file, not per process."""
    import threading

    path = tmp_path / "threads.blp"
    bloscpack.save(np.arange(1000, dtype="<i8"), path, chunk_size=4000, max_app_chunks=200)
    done = threading.Event()
    failures: list[BaseException] = []

    def read() -> None:
        try:
            while not done.is_set():
                values = bloscpack.load(path)
                assert np.array_equal(values, np.arange(values.size)), "wrong data"
                assert bloscpack.verify(path)["ok"]
        except BaseException as exc:  # reported below
            failures.append(exc)

    readers = [threading.Thread(target=read) for _ in range(3)]
    for reader in readers:
        reader.start()
    for k in range(1, 11):
        append(path, np.arange(1000 * k, 1000 * (k + 1), dtype="<i8"))
    done.set()
    for reader in readers:
        reader.join()
    assert failures == []
    assert np.array_equal(bloscpack.load(path), np.arange(11_000))
