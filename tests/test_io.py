"""Atomic writes: all or nothing, existing files kept, pages written back early; files
appended by the kernel."""

from __future__ import annotations

import errno
import os
import threading
import time

import pytest

from bloscpack.io import copies, durability, sources, staging


def test_atomic_write_starts_writeback_of_each_new_range(tmp_path, monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(durability, "_sync_file_range", lambda *args: calls.append(args[1:]) or 0)
    monkeypatch.setattr(durability, "WRITEBACK_STEP", 20_000)
    path = tmp_path / "out.bin"
    parts = [bytes([i]) * 12_000 for i in range(5)]  # larger than the write buffer
    with staging.atomic_write(path) as fh:
        for part in parts:
            fh.write(part)
        fh.seek(0)
        fh.write(b"head")
    assert path.read_bytes() == b"head" + b"".join(parts)[4:]
    assert calls == [(0, 24_000, 2), (24_000, 24_000, 2)]  # the bytes written since the last


def test_writeback_requests_do_not_hold_up_the_writer(tmp_path, monkeypatch) -> None:
    """The kernel may block a writeback request (a full disk queue, a journal commit): the
    requests are made by a thread of their own, the writer goes on, closing waits for them."""
    release, calls = threading.Event(), []

    def held(fd, offset, nbytes, flags):
        calls.append(offset)
        release.wait(30)
        return 0

    monkeypatch.setattr(durability, "_sync_file_range", held)
    monkeypatch.setattr(durability, "WRITEBACK_STEP", 10_000)
    fh = durability.open_new(os.open(tmp_path / "out.bin", os.O_WRONLY | os.O_CREAT), "wb")
    for i in range(5):
        fh.write(bytes([i]) * 12_000)  # each write a new range to hand over
    closing = threading.Thread(target=fh.close)
    closing.start()
    closing.join(0.2)
    assert closing.is_alive() and calls == [0]
    release.set()
    closing.join(30)
    assert not closing.is_alive() and calls == [0, 12_000, 24_000, 36_000, 48_000]
    assert (tmp_path / "out.bin").read_bytes() == b"".join(bytes([i]) * 12_000 for i in range(5))


def test_atomic_write_keeps_the_existing_file_on_error(tmp_path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("precious")
    os.chmod(path, 0o640)
    with pytest.raises(RuntimeError, match="boom"), staging.atomic_write(path, "w") as fh:
        fh.write("partial")
        raise RuntimeError("boom")
    assert path.read_text() == "precious"
    with staging.atomic_write(path, "w") as fh:
        fh.write("new")
    assert path.read_text() == "new" and (path.stat().st_mode & 0o777) == 0o640
    assert os.listdir(tmp_path) == ["out.txt"]


def test_sync_file_range_is_found_on_linux() -> None:
    if os.uname().sysname != "Linux":
        pytest.skip("sync_file_range is Linux only")
    assert durability._sync_file_range is not None


def test_a_file_is_mapped_once_when_threads_read_it_together(tmp_path, monkeypatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "data.bin"
    path.write_bytes(bytes(range(256)) * 4096)  # 1 MiB
    maps = []
    real = sources.mmap.mmap

    def counting(*args, **kwargs):
        maps.append(1)
        time.sleep(0.05)  # the other threads arrive while the file is being mapped
        return real(*args, **kwargs)

    monkeypatch.setattr(sources.mmap, "mmap", counting)
    with sources.ByteSource(path) as source, ThreadPoolExecutor(8) as pool:
        reads = list(pool.map(lambda k: bytes(source.read(k * 65536, 2 * 65536)), range(15)))
    assert maps == [1]
    assert reads[3] == (bytes(range(256)) * 4096)[3 * 65536 : 5 * 65536]


def _append_case(tmp_path) -> tuple[bytes, bytes]:
    """A file with bytes still buffered in this process, then a file appended to it, then
    more bytes: what the kernel copy gives, and what it should."""
    head, run, tail = b"head" * 1000, bytes(range(256)) * 5000, b"tail"
    source = tmp_path / "run"
    source.write_bytes(run)
    out = tmp_path / "out"
    with open(out, "xb") as fh:
        fh.write(head)  # buffered, not yet in the file
        assert copies.append_file(fh, str(source)) == len(run)
        fh.write(tail)
    return out.read_bytes(), head + run + tail


def test_append_file_copies_in_the_kernel(tmp_path, monkeypatch) -> None:
    calls = []
    real = os.copy_file_range

    def counting(*args):
        calls.append(args[2])
        return real(*args)

    monkeypatch.setattr(os, "copy_file_range", counting)
    written, expected = _append_case(tmp_path)
    assert written == expected
    assert sum(calls) >= 256 * 5000


@pytest.mark.parametrize("refused", [["copy_file_range"], ["copy_file_range", "sendfile"]])
def test_append_file_where_the_kernel_does_not_copy(tmp_path, monkeypatch, refused) -> None:
    """Across file systems (EXDEV) ``sendfile`` copies, or else this process."""

    def cross_device(*args):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    for name in refused:
        monkeypatch.setattr(os, name, cross_device)
    written, expected = _append_case(tmp_path)
    assert written == expected


def test_append_file_raises_what_a_copy_midway_raises(tmp_path, monkeypatch) -> None:
    real = os.copy_file_range

    def failing(src, dst, count, offset_src=None):
        if offset_src:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst, min(count, 4096), offset_src)

    monkeypatch.setattr(os, "copy_file_range", failing)
    with pytest.raises(OSError, match="No space left on device"):
        _append_case(tmp_path)


@pytest.mark.parametrize("suffix", [".blp", ".b2frame", ".b2nd"])
def test_a_saved_file_is_handed_to_the_disk_while_written(suffix, tmp_path, monkeypatch) -> None:
    """Every single-file format's save hands each new range of its file to the disk once, in
    order, before the final ``fsync``."""
    import numpy as np

    import bloscpack

    calls = []
    monkeypatch.setattr(durability, "_sync_file_range", lambda *args: calls.append(args[1:]) or 0)
    monkeypatch.setattr(durability, "WRITEBACK_STEP", 100_000)
    rng = np.random.default_rng(5)
    path = tmp_path / f"a{suffix}"
    bloscpack.save(rng.standard_normal(200_000), path, codec="zstd", clevel=1, chunk_size=65_536)
    size = path.stat().st_size
    assert len(calls) >= 5 and {flags for _, _, flags in calls} == {2}
    ends = [offset + n for offset, n, _ in calls]
    assert [offset for offset, _, _ in calls] == [0, *ends[:-1]]
    assert ends[-1] <= size


def _recording_fsync(monkeypatch):
    """os.fsync recording the path of each descriptor it is given, in call order."""
    synced, real = [], os.fsync

    def fsync(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


@pytest.mark.parametrize("threads_start", [True, False])
def test_fsync_tree_flushes_every_file_then_every_directory(
    threads_start, tmp_path, monkeypatch
) -> None:
    """Several at once, or one after the other when no thread can be started (a tight
    address-space limit)."""
    if not threads_start:

        def start(self):
            raise RuntimeError("can't start new thread")

        monkeypatch.setattr(threading.Thread, "start", start)
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    files = [root / "top", *(root / "a" / f"f{i}" for i in range(40)), root / "a" / "b" / "x"]
    for path in files:
        path.write_bytes(b"data")
    synced = _recording_fsync(monkeypatch)
    durability.fsync_tree(root)
    directories = [root, root / "a", root / "a" / "b"]
    assert sorted(synced[: len(files)]) == sorted(map(str, files))
    assert sorted(synced[len(files) :]) == sorted(map(str, directories))


def test_fsync_tree_raises_the_error_of_a_file(tmp_path, monkeypatch) -> None:
    (tmp_path / "d").mkdir()
    for i in range(20):
        (tmp_path / "d" / str(i)).write_bytes(b"x")

    def failing(fd):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(OSError, match="Input/output error"):
        durability.fsync_tree(tmp_path / "d")


@pytest.mark.parametrize("table", [False, True])
def test_a_durable_bcolz_save_flushes_every_file_and_directory(table, tmp_path, monkeypatch):
    """``durable`` (the default) flushes each file and directory of the new bcolz directory
    once before it is renamed into place, and the directory holding it after the rename."""
    import numpy as np

    import bloscpack

    data = np.arange(300_000.0)
    if table:
        data = np.rec.fromarrays([data, data.astype("i4")], names="x,y")
    synced = _recording_fsync(monkeypatch)
    path = tmp_path / "a.bcolz"
    bloscpack.save(data, path, chunklen=10_000)
    staged = synced[0].split("/new/", 1)[0] + "/new"  # where save built it
    written = {str(p.relative_to(path)) for p in path.rglob("*")} | {"."}
    names = [os.path.relpath(s, staged) for s in synced[:-1]]
    assert sorted(names) == sorted(written) and synced[-1] == str(tmp_path)
    assert len([n for n in written if "data/__" in n]) == (60 if table else 30)


@pytest.mark.parametrize(
    "fmt, options",
    [("sframe", {"chunksize": 80_000}), ("b2nd", {"sparse": True, "chunks": (10_000,)})],
)
def test_a_sparse_save_flushes_its_chunk_files_not_the_whole_system(
    fmt, options, tmp_path, monkeypatch
):
    """A sparse frame's chunk files are flushed each (several at once) before
    ``chunks.b2frame`` refers to them; ``os.sync`` (every process's writes) is never called."""
    import numpy as np

    import bloscpack

    def system_wide_sync():
        raise AssertionError("os.sync called")

    monkeypatch.setattr(os, "sync", system_wide_sync, raising=False)
    synced = _recording_fsync(monkeypatch)
    path = tmp_path / "a"
    data = np.arange(300_000.0)
    bloscpack.save(data, path, format=fmt, **options)
    chunk_files = sorted(p.name for p in path.glob("*.chunk"))
    assert len(chunk_files) == 30
    flushed = {os.path.basename(s) for s in synced}
    assert set(chunk_files) <= flushed
    np.testing.assert_array_equal(bloscpack.load(path), data)
