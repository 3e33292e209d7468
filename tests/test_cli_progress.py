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

from bloscpack.progress import BAR_WIDTH, REDRAW_INTERVAL, ProgressBar, human_bytes, wanted

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
    seen = []
    while True:
        try:
            piece = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not piece:
            break
        seen.append(piece)
    os.close(master)
    rc = proc.wait(timeout=120)
    return rc, stdout.read_bytes(), b"".join(seen).decode()


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
    if args[0] != "c":
        packed = subprocess.run([*BLPK, "c", "-z", "256K", "data.bin", "x.blp"], cwd=work)
        assert packed.returncode == 0
    rc, out, tty = run_with_tty_stderr(*args, cwd=work)
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
    """From a pipe the total is unknown: bytes done and throughput, no percent."""
    master, slave = os.openpty()
    cat = subprocess.Popen(["cat", "data.bin"], stdout=subprocess.PIPE, cwd=work)
    proc = subprocess.Popen([*BLPK, "c", "-", "x.blp"], stdin=cat.stdout, stderr=slave, cwd=work)
    cat.stdout.close()
    os.close(slave)
    seen = b""
    while True:
        try:
            piece = os.read(master, 65536)
        except OSError:
            break
        if not piece:
            break
        seen += piece
    os.close(master)
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
