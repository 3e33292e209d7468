"""A real ``blpk append`` killed (SIGKILL) after each of its writes, fsyncs and renames: the next
open must see the file exactly as before or completely appended, with no journal left over."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA

from bloscpack.containers.bloscpack.append import KILL_AFTER_ENV, journal_path, recover

CORPUS = DATA / "bloscpack"
INPUTS = CORPUS / "inputs"


def run_append(
    path: Path, new: Path, kill_after: int | None, *options: str
) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop(KILL_AFTER_ENV, None)
    if kill_after is not None:
        env[KILL_AFTER_ENV] = str(kill_after)
    return subprocess.run(
        [sys.executable, "-m", "bloscpack", "-n", "1", "append", *options, str(path), str(new)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def decoded(path: Path) -> bytes:
    """The payload, read the way a fresh reader opens a file (recovering first)."""
    from bloscpack.api import unpack_bytes_from_file

    data, _ = unpack_bytes_from_file(str(path))
    return bytes(data)


@pytest.mark.parametrize(
    ("base", "new", "options"),
    [
        ("cli_checksum_sha256.blp", "text_150000.txt", ()),  # offsets, partial last chunk
        ("cli_no_offsets.blp", "text_5000.txt", ()),  # no offsets section
        ("cli_append_shrink_garbage.blp", "zeros_100.bin", ()),  # stale bytes truncated
        ("cli_metadata.blp", "small_2000.bin", ("-m", str(INPUTS / "meta2.json"))),
    ],
)
def test_kill_at_every_step(tmp_path, base, new, options):
    kill_at_every_step(tmp_path, CORPUS / base, INPUTS / new, options)


def test_kill_at_every_step_of_an_array_append(tmp_path_factory, tmp_path):
    """An array file grows by whole rows: killed anywhere, it is the old array or the new."""
    import numpy as np

    import bloscpack

    inputs = tmp_path_factory.mktemp("inputs")
    rows = np.arange(30_000, dtype="<i4").reshape(-1, 3)
    bloscpack.save(rows, inputs / "rows.blp", chunk_size=16_000)
    (rows[:7_000] * 2).tofile(inputs / "more.bin")
    kill_at_every_step(tmp_path, inputs / "rows.blp", inputs / "more.bin", ())
    np.testing.assert_array_equal(
        bloscpack.load(tmp_path / "x.blp"), np.concatenate([rows, rows[:7_000] * 2])
    )


def kill_at_every_step(tmp_path, base, new, options):
    """Append ``new`` to a copy of ``base``, killed after step 1, 2, ...: each time the file
    is exactly before or after; in the end, the file is appended."""
    before = base.read_bytes()
    path = tmp_path / "x.blp"
    shutil.copy(base, path)
    done = run_append(path, new, None, *options)
    assert done.returncode == 0, done.stderr
    after = path.read_bytes()
    assert after != before

    outcomes = []
    for k in range(1, 100):
        shutil.copy(base, path)
        proc = run_append(path, new, k, *options)
        if proc.returncode == 0:  # k is past the last step: nothing left to kill
            assert path.read_bytes() == after
            break
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        recover(path)
        state = path.read_bytes()
        assert state in (before, after), f"killed after step {k}: file is neither before nor after"
        assert not Path(journal_path(path)).exists()
        assert sorted(os.listdir(tmp_path)) == ["x.blp"]
        outcomes.append("before" if state == before else "after")
    else:
        pytest.fail("the append never completed")
    assert len(outcomes) >= 8
    assert outcomes[0] == "before" and outcomes[-1] == "after"


def test_reader_recovers_on_open(tmp_path):
    """Opening a file after a killed append rolls it back without an explicit recover()."""
    base = CORPUS / "cli_checksum_adler32.blp"
    path = tmp_path / "x.blp"
    shutil.copy(base, path)
    proc = run_append(path, INPUTS / "text_150000.txt", 6)
    assert proc.returncode == -signal.SIGKILL
    assert Path(journal_path(path)).exists()
    expected = (INPUTS / "ints_200000.bin").read_bytes()
    assert hashlib.sha256(decoded(path)).digest() == hashlib.sha256(expected).digest()
    assert path.read_bytes() == base.read_bytes()
    assert not Path(journal_path(path)).exists()


def copy_container(src: Path, dst: Path) -> None:
    """``dst`` becomes a copy of the file or directory ``src``."""
    if dst.is_dir():
        shutil.rmtree(dst)
    elif dst.exists():
        dst.unlink()
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        shutil.copy(src, dst)


@pytest.mark.parametrize(
    "case", ["b2frame", "b2frame bytes", "sframe", "b2nd", "b2nd sparse", "bcolz carray",
             "bcolz ctable"],
)  # fmt: skip
def test_kill_at_every_step_of_any_format(tmp_path_factory, tmp_path, case):
    """``blpk a`` killed after each durable step of an append to a frame, a sparse frame, an
    NDArray or a bcolz directory: what load and the format's peer read is the old data or the
    new, a file is byte for byte one or the other, no journal is left, and the append done
    again afterwards gives what it gives uninterrupted."""
    import numpy as np
    from test_append_formats import CASES, RAW, more_rows, peer_read, tree

    import bloscpack

    fmt, make, held = CASES[case]
    base = make(tmp_path_factory.mktemp("base"))
    rows = more_rows(held, 777, 1)
    new = tmp_path_factory.mktemp("new") / "rows.npy"
    if held.dtype == np.uint8:
        rows, new = np.frombuffer(RAW[:777], np.uint8), new.with_suffix(".bin")
        new.write_bytes(rows.tobytes())
    else:
        np.save(new, rows)
    after = np.concatenate([held, rows])
    path = tmp_path / base.name
    copy_container(base, path)
    assert run_append(path, new, None).returncode == 0
    appended = tree(path)
    outcomes = []
    for k in range(1, 200):
        copy_container(base, path)
        proc = run_append(path, new, k)
        if proc.returncode == 0:  # past the last step
            assert tree(path) == appended
            break
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        got = bloscpack.load(path)  # rolls a journal back first
        state = "before" if np.array_equal(got, held) else "after"
        np.testing.assert_array_equal(got, held if state == "before" else after)
        np.testing.assert_array_equal(peer_read(path, fmt, held, None), got)
        if path.is_file():  # byte for byte
            assert tree(path) == (tree(base) if state == "before" else appended)
        assert not Path(journal_path(path)).exists()
        outcomes.append(state)
        if state == "before":  # what is left of the interrupted append is cleaned up
            assert run_append(path, new, None).returncode == 0
            assert tree(path) == appended
    else:
        pytest.fail("the append never completed")
    assert outcomes[0] == "before" and outcomes[-1] == "after", outcomes
    assert len(outcomes) >= 3
