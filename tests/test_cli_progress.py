"""The progress bar: drawn on stderr when it is a terminal (tested under a pseudo-terminal), with
``--progress`` / ``--no-progress``, never with ``-q``, never on stdout."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA

from bloscpack.progress import (
    BAR_WIDTH,
    MIN_SECONDS,
    REDRAW_INTERVAL,
    THROUGHPUT,
    ProgressBar,
    expected_seconds,
    human_bytes,
    wanted,
)

BLPK = [sys.executable, "-m", "bloscpack"]
CORPUS = DATA / "bloscpack"
# a finished bar: label, full bar, 100%, bytes done / total, throughput, then the line ends
FINISHED = re.compile(
    r"\rblpk: (\w+) \[#{"
    + str(BAR_WIDTH)
    + r"}\] 100% ([\d.]+ [kMG]?B) / \2 [\d.]+ MB/s\x1b\[K\r?\n"
)


def run_with_tty_stderr(*args: str | Path, cwd: Path) -> tuple[int, bytes, str]:
    """Run blpk with stderr on a pseudo-terminal, stdout on a pipe: ``(rc, stdout, tty text)``."""
    master, slave = os.openpty()
    stdout = cwd.parent / f"{cwd.name}.stdout"  # a file: a full pipe would block the child
    with open(os.devnull, "rb") as source, open(stdout, "w+b") as sink:
        proc = subprocess.Popen(
            [*BLPK, *map(str, args)], stdin=source, stdout=sink, stderr=slave, cwd=cwd
        )
    os.close(slave)
    seen = read_terminal(master)
    rc = proc.wait(timeout=120)
    return rc, stdout.read_bytes(), seen.decode()


def read_terminal(master: int) -> bytes:
    """All a pseudo-terminal shows until its every writer is gone; closes ``master``."""
    seen = b""
    while True:
        try:
            piece = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not piece:
            break
        seen += piece
    os.close(master)
    return seen


@pytest.fixture
def work(tmp_path: Path) -> Path:
    np.cumsum(np.random.default_rng(9).standard_normal(400_000)).tofile(tmp_path / "data.bin")
    return tmp_path


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (["c", "-z", "256K", "data.bin", "x.blp"], "compress"),
        (["c", "--format", "b2nd", "-z", "256K", "data.bin", "x.b2nd"], "compress"),
        (["d", "-e", "x.blp", "out.bin"], "decompress"),
        (["d", "-e", "x.blp", "-"], "decompress"),
        (["verify", "x.blp"], "verify"),
        (["convert", "--recompress", "x.blp", "y.bcolz"], "convert"),
        (["append", "x.blp", "data.bin"], "append"),
    ],
)
def test_bar_on_a_terminal(args, label, work):
    """With ``--progress`` (the 3.2 MB of work is too little for a bar by default)."""
    if args[0] != "c":
        packed = subprocess.run([*BLPK, "c", "-z", "256K", "data.bin", "x.blp"], cwd=work)
        assert packed.returncode == 0
    rc, out, tty = run_with_tty_stderr("--progress", *args, cwd=work)
    assert rc == 0, tty
    finished = FINISHED.findall(tty)
    assert finished == [(label, "3.2 MB")], tty
    assert tty.endswith("\n")
    updates = re.findall(r"\rblpk: \w+ \[[#-]+\] +(\d+)% ", tty)
    assert [int(p) for p in updates] == sorted(int(p) for p in updates)  # percent only grows
    if args[-1] == "-":
        assert out == (work / "data.bin").read_bytes()  # the bar never reaches stdout
    else:
        assert b"\r" not in out and b"MB/s" not in out


def test_stream_of_unknown_size_shows_bytes_and_rate(work):
    """From a pipe the total is unknown: bytes done and throughput, no percent (forced: by
    default a bar of unknown total appears only after a second of work)."""
    master, slave = os.openpty()
    cat = subprocess.Popen(["cat", "data.bin"], stdout=subprocess.PIPE, cwd=work)
    proc = subprocess.Popen(
        [*BLPK, "--progress", "c", "-", "x.blp"], stdin=cat.stdout, stderr=slave, cwd=work
    )
    cat.stdout.close()
    os.close(slave)
    seen = read_terminal(master)
    assert proc.wait(timeout=120) == 0 and cat.wait() == 0
    assert re.fullmatch(
        r"(\rblpk: compress [\d.]+ [kM]?B [\d.]+ MB/s\x1b\[K)+\r\n", seen.decode()
    ), seen
    assert re.search(r"\rblpk: compress 3\.2 MB [\d.]+ MB/s\x1b\[K\r\n$", seen.decode())


@pytest.mark.parametrize("option", [["--no-progress"], ["-q"], ["-q", "--progress"]])
def test_no_bar_with_no_progress_or_quiet(option, work):
    rc, out, tty = run_with_tty_stderr(*option, "c", "data.bin", "x.blp", cwd=work)
    assert (rc, out, tty) == (0, b"", "")


def test_no_bar_without_a_terminal_unless_forced(work):
    proc = subprocess.run([*BLPK, "c", "data.bin", "x.blp"], capture_output=True, cwd=work)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == b""
    proc = subprocess.run(
        [*BLPK, "--progress", "d", "-e", "x.blp", "-"], capture_output=True, cwd=work
    )
    assert proc.returncode == 0
    assert proc.stdout == (work / "data.bin").read_bytes()
    assert FINISHED.findall(proc.stderr.decode()) == [("decompress", "3.2 MB")]
    assert proc.stderr.decode().startswith("\rblpk: decompress [")
    proc = subprocess.run(
        [*BLPK, "c", "-f", "--progress", "data.bin", "x.blp"], capture_output=True, cwd=work
    )  # after the subcommand too
    assert FINISHED.findall(proc.stderr.decode()) == [("compress", "3.2 MB")]


def test_error_erases_the_bar(work):
    shutil.copy(CORPUS / "bad_chunk_data.blp", work / "bad.blp")
    rc, out, tty = run_with_tty_stderr("--progress", "d", "bad.blp", "out", cwd=work)
    assert rc == 1 and out == b""
    assert tty.endswith("\r\n") and tty.count("\n") == 1  # only the error ends a line
    assert tty.split("\r\x1b[K")[-1].startswith("blpk: error: bad.blp: ")
    assert "100%" not in tty
    assert not (work / "out").exists()


def test_compressed_data_is_not_written_to_a_terminal(work):
    master, slave = os.openpty()
    proc = subprocess.run(
        [*BLPK, "c", "data.bin", "-"], stdout=slave, stderr=subprocess.PIPE, cwd=work
    )
    os.close(slave)
    os.close(master)
    assert proc.returncode == 1
    assert (
        proc.stderr == b"blpk: error: compressed data not written to a terminal (use -f to force)\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["c", "data.bin", "x.blp"],
        ["c", "--format", "b2nd", "data.bin", "x.b2nd"],
        ["c", "-", "x.blp"],  # a stream of unknown size, over in less than a second
    ],
)
def test_no_bar_for_work_under_a_second_by_default(args, work):
    """3.2 MB: under THROUGHPUT's 50 MB a second of compression, so no bar on the terminal."""
    master, slave = os.openpty()
    with open(work / "data.bin", "rb") as source:
        proc = subprocess.Popen([*BLPK, *args], stdin=source, stderr=slave, cwd=work)
    os.close(slave)
    assert read_terminal(master) == b""
    assert proc.wait(timeout=120) == 0


@pytest.fixture
def big(tmp_path: Path) -> Path:
    """64 MiB: over a second of zlib compression (THROUGHPUT: 50 MB/s)."""
    np.cumsum(np.random.default_rng(3).standard_normal(8 * 2**20)).tofile(tmp_path / "big.bin")
    return tmp_path


def test_bar_by_default_for_long_work(big):
    rc, out, tty = run_with_tty_stderr("c", "-c", "zlib", "big.bin", "x.blp", cwd=big)
    assert rc == 0, tty
    assert FINISHED.findall(tty) == [("compress", "67.1 MB")]


def test_two_in_a_pipe_never_draw_over_each_other(big):
    """``blpk c ... - | blpk d - out``: the first writes the data to the pipe, so it draws no
    bar; only the last of a pipe may draw (here after a second of work of unknown size)."""
    master, slave = os.openpty()
    first = subprocess.Popen(
        [*BLPK, "c", "-c", "zlib", "big.bin", "-"], stdout=subprocess.PIPE, stderr=slave, cwd=big
    )
    second = subprocess.Popen(
        [*BLPK, "d", "-", "out.bin"], stdin=first.stdout, stderr=slave, cwd=big
    )
    first.stdout.close()
    os.close(slave)
    tty = read_terminal(master).decode()
    assert first.wait(timeout=300) == 0 and second.wait(timeout=300) == 0
    assert "compress" not in tty
    assert set(re.findall(r"\rblpk: (\w+) ", tty)) <= {"decompress"}
    assert (big / "out.bin").read_bytes() == (big / "big.bin").read_bytes()


def test_data_on_stdout_to_a_pipe_draws_no_bar_unless_forced(work):
    subprocess.run([*BLPK, "c", "data.bin", "x.blp"], cwd=work, check=True)
    for forced, expected in (([], b""), (["--progress"], b"decompress")):
        master, slave = os.openpty()
        proc = subprocess.Popen(
            [*BLPK, *forced, "d", "x.blp", "-"], stdout=subprocess.PIPE, stderr=slave, cwd=work
        )
        os.close(slave)
        with proc.stdout:
            data = proc.stdout.read()
        tty = read_terminal(master)
        assert proc.wait(timeout=120) == 0
        assert data == (work / "data.bin").read_bytes()
        assert (expected in tty) if expected else tty == b""


def test_thresholds():
    assert expected_seconds("compress", 50_000_000) == pytest.approx(1.0)
    assert expected_seconds("decompress", 100_000_000) == pytest.approx(0.5)
    assert expected_seconds("verify", None) is None
    assert THROUGHPUT == {
        "compress": 50e6, "convert": 50e6, "append": 50e6, "decompress": 200e6, "verify": 250e6,
    }  # fmt: skip

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert wanted(None, False, Tty(), seconds=MIN_SECONDS)
    assert not wanted(None, False, Tty(), seconds=0.99)
    assert not wanted(None, False, Tty(), data_out=True)
    assert wanted(True, False, io.StringIO(), data_out=True, seconds=0.0)


def test_delayed_bar_never_drawn_when_work_ends_first():
    clock, stream = Clock(), io.StringIO()
    bar = ProgressBar("blpk: x", None, stream, clock=clock, delay=1.0)
    clock.now += 0.5
    bar.advance(10)
    bar.finish()
    assert stream.getvalue() == ""
    bar = ProgressBar("blpk: x", None, stream, clock=clock, delay=1.0)
    clock.now += 1.0
    bar.advance(10)
    bar.finish()
    assert stream.getvalue() == "\rblpk: x 10 B 0.0 MB/s\x1b[K\rblpk: x 10 B 0.0 MB/s\x1b[K\n"


# --- the bar itself -------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_line_text():
    clock = Clock()
    bar = ProgressBar("blpk: x", 2_000_000, io.StringIO(), clock=clock)
    clock.now += 2.0
    bar.done = 1_000_000
    half = "#" * (BAR_WIDTH // 2) + "-" * (BAR_WIDTH // 2)
    assert bar.line() == f"blpk: x [{half}]  50% 1.0 MB / 2.0 MB 0.5 MB/s"
    unknown = ProgressBar("blpk: y", None, io.StringIO(), clock=clock)
    unknown.done = 1500
    assert unknown.line(clock.now + 1) == "blpk: y 1.5 kB 0.0 MB/s"


def test_redraws_at_most_ten_times_a_second():
    clock, stream = Clock(), io.StringIO()
    bar = ProgressBar("blpk: x", 10_000, stream, clock=clock)
    for _ in range(1000):  # within one redraw interval: one draw
        bar.advance(1)
        clock.now += REDRAW_INTERVAL / 2000
    assert stream.getvalue().count("\r") == 1
    for _ in range(50):  # 5 seconds, in steps of 0.1 s: one draw each
        clock.now += REDRAW_INTERVAL
        bar.advance(10)
    assert stream.getvalue().count("\r") == 51
    bar.finish()
    text = stream.getvalue()
    assert text.endswith(f"[{'#' * BAR_WIDTH}] 100% 10.0 kB / 10.0 kB 0.0 MB/s\x1b[K\n")
    bar.advance(5)  # after finish: counted, never drawn
    assert stream.getvalue() == text


def test_clear_erases_only_a_drawn_bar():
    stream = io.StringIO()
    bar = ProgressBar("blpk: x", 10, stream)
    bar.clear()
    assert stream.getvalue() == ""
    bar = ProgressBar("blpk: x", 10, stream)
    bar.advance(3)
    bar.clear()
    assert stream.getvalue().endswith("\r\x1b[K")


def test_wanted_and_human_bytes():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert wanted(None, False, Tty()) and not wanted(None, False, io.StringIO())
    assert wanted(True, False, io.StringIO()) and not wanted(False, False, Tty())
    assert not wanted(True, True, Tty())
    assert [human_bytes(n) for n in (0, 999, 1000, 1_234_567, 5e9, 7e12, 8e15)] == [
        "0 B", "999 B", "1.0 kB", "1.2 MB", "5.0 GB", "7.0 TB", "8000.0 TB",
    ]  # fmt: skip
