"""Inputs and outputs that are not regular files: FIFOs, ``/proc`` files, process substitution,
character devices.  An input whose size is unknown is read to its end (never as empty); an
output that is a FIFO or a device is written where it is (never replaced), as ``zstd`` does."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import bloscpack
from bloscpack.api import pack_file_to_file
from bloscpack.cli import main
from bloscpack.io.paths import has_known_size, is_stream
from bloscpack.io.sources import ByteSource
from bloscpack.io.staging import is_written_in_place

FORMATS = ["blp", "b2frame", "b2nd", "sframe", "bcolz"]
FILE_FORMATS = ["blp", "b2frame", "b2nd"]
DIRECTORY_FORMATS = ["sframe", "bcolz"]
SUFFIX = {"blp": ".blp", "b2frame": ".b2frame", "b2nd": ".b2nd", "sframe": ".b2sframe",
          "bcolz": ".bcolz"}  # fmt: skip
DATA = b"".join(b"%d\n" % i for i in range(1, 100_001))  # what `seq 1 100000` prints
BLPK = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "bloscpack"))


class Feeder(threading.Thread):
    """Writes ``data`` into the FIFO ``path`` (opening it blocks until a reader comes)."""

    def __init__(self, path: Path, data: bytes) -> None:
        super().__init__(daemon=True)
        self.path, self.data = path, data

    def run(self) -> None:
        with open(self.path, "wb") as fh:
            fh.write(self.data)


class Drainer(threading.Thread):
    """Reads the FIFO ``path`` to its end into ``self.data``."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path, self.data = path, b""

    def run(self) -> None:
        with open(self.path, "rb") as fh:
            self.data = fh.read()


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def fed(fifo: Path, data: bytes) -> Path:
    """``fifo``, with a thread writing ``data`` into it."""
    Feeder(fifo, data).start()
    return fifo


def raw_back(path: Path, tmp_path: Path) -> bytes:
    """The bytes the container at ``path`` holds, through ``blpk d``."""
    out = tmp_path / "back.raw"
    assert main(["d", "--no-check-extension", "-f", str(path), str(out)]) == 0
    return out.read_bytes()


# --- which files have a known size --------------------------------------------------------


def test_sizes_are_trusted_only_for_regular_files(tmp_path: Path, fifo: Path):
    regular = tmp_path / "r.bin"
    regular.write_bytes(b"x" * 5000)
    assert has_known_size(os.stat(regular))
    assert not is_stream(regular) and not is_stream(tmp_path) and not is_stream(tmp_path / "no")
    assert is_stream(fifo) and is_stream("/proc/version") and is_stream("/dev/null")
    assert os.stat("/proc/version").st_size == 0  # what made it read as empty
    assert is_written_in_place(fifo) and is_written_in_place("/dev/null")
    assert not is_written_in_place(regular) and not is_written_in_place(tmp_path)


def test_a_wholly_sparse_file_has_a_known_size(tmp_path: Path):
    hole = tmp_path / "hole.bin"
    hole.touch()
    os.truncate(hole, 1 << 30)
    assert os.stat(hole).st_blocks == 0
    assert has_known_size(os.stat(hole)) and not is_stream(hole)
    sysfs = Path("/sys/kernel/mm/transparent_hugepage/enabled")  # one page, no blocks
    if sysfs.exists():
        assert is_stream(sysfs)
        with ByteSource(sysfs) as source:
            assert bytes(source.read(0, source.size())) == sysfs.read_bytes() != b""


NOT_A_CONTAINER = "x.blp: not a Blosc container (first bytes " + " ".join(["00"] * 16) + ")"
SPARSE_CALLS = {
    "load": ("api", "load"), "open": ("api", "open"), "verify": ("api", "verify"),
    "info": ("api", "info"), "blpk d": ("cli", "d x.blp x.raw"),
    "blpk info": ("cli", "info x.blp"), "blpk verify": ("cli", "verify x.blp"),
}  # fmt: skip
SPARSE_API = (
    "import sys, bloscpack\n"
    "try:\n    getattr(bloscpack, sys.argv[1])('x.blp')\n"
    "except bloscpack.errors.BloscpackError as exc:\n    print(type(exc).__name__, exc)\n"
)


@pytest.mark.parametrize("call", SPARSE_CALLS)
def test_a_one_tib_hole_is_refused_without_a_copy(call: str, tmp_path: Path):
    """A regular file is never a stream: a 1 TiB hole is read where it is, not copied to
    ``$TMPDIR`` first (which would write 1 TiB)."""
    try:
        (tmp_path / "x.blp").touch()
        os.truncate(tmp_path / "x.blp", 1 << 40)
    except OSError:
        pytest.skip("the temporary filesystem holds no 1 TiB file")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    kind, what = SPARSE_CALLS[call]
    args = ["-c", SPARSE_API, what] if kind == "api" else ["-m", "bloscpack", *what.split()]
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    done = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert list(tmpdir.iterdir()) == []
    if kind == "api":
        assert (done.returncode, done.stdout) == (0, f"NotAContainer {NOT_A_CONTAINER}\n")
    elif call == "blpk verify":
        message = f"blpk: x.blp: FAILED (unknown format, unreadable)\nblpk:   {NOT_A_CONTAINER}\n"
        assert (done.returncode, done.stdout, done.stderr) == (1, message, "")
    else:
        assert (done.returncode, done.stderr) == (1, f"blpk: error: {NOT_A_CONTAINER}\n")


def test_byte_source_reads_a_fifo_and_a_proc_file_to_their_end(fifo: Path):
    with ByteSource(fed(fifo, DATA)) as source:
        assert source.size() == len(DATA)
        assert bytes(source.read(0, len(DATA))) == DATA
    expected = Path("/proc/version").read_bytes()
    with ByteSource("/proc/version") as source:
        assert bytes(source.read(0, source.size())) == expected != b""


# --- non-regular inputs, through the CLI ----------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_compress_from_a_fifo_keeps_every_byte(fmt: str, fifo: Path, tmp_path: Path):
    out = tmp_path / f"out{SUFFIX[fmt]}"
    assert main(["c", "--format", fmt, str(fed(fifo, DATA)), str(out)]) == 0
    assert raw_back(out, tmp_path) == DATA


@pytest.mark.parametrize("fmt", FORMATS)
def test_compress_a_proc_file_keeps_every_byte(fmt: str, tmp_path: Path):
    out = tmp_path / f"version{SUFFIX[fmt]}"
    assert main(["c", "--format", fmt, "/proc/version", str(out)]) == 0
    assert raw_back(out, tmp_path) == Path("/proc/version").read_bytes()


def test_compress_proc_self_status_is_not_empty(tmp_path: Path):
    out = tmp_path / "status.blp"
    assert main(["c", "/proc/self/status", str(out)]) == 0
    assert raw_back(out, tmp_path).startswith(b"Name:\t")


@pytest.mark.parametrize("fmt", FORMATS)
def test_compress_from_bash_process_substitution(fmt: str, tmp_path: Path):
    command = f"{BLPK} c --format {fmt} <(seq 1 100000) out{SUFFIX[fmt]}"
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert raw_back(tmp_path / f"out{SUFFIX[fmt]}", tmp_path) == DATA


@pytest.mark.parametrize("fmt", FILE_FORMATS)  # a directory cannot come through a FIFO
def test_decompress_info_verify_and_convert_read_a_container_from_a_fifo(
    fmt: str, fifo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    container = tmp_path / f"c{SUFFIX[fmt]}"
    assert main(["c", "--format", fmt, str(fed(fifo, DATA)), str(container)]) == 0
    blob = container.read_bytes()
    out = tmp_path / "out.raw"
    assert main(["d", "--no-check-extension", str(fed(fifo, blob)), str(out)]) == 0
    assert out.read_bytes() == DATA
    capsys.readouterr()
    assert main(["t", str(fed(fifo, blob))]) == 0
    status = "ok" if fmt == "blp" else "structure ok, data not verifiable"  # checksums
    assert capsys.readouterr().out.startswith(f"blpk: {fifo}: {status} ({fmt}, ")
    assert main(["info", "--json", str(fed(fifo, blob))]) == 0
    assert f'"format": "{fmt}"' in capsys.readouterr().out
    converted = tmp_path / "converted.b2nd"
    assert main(["convert", str(fed(fifo, blob)), str(converted)]) == 0
    assert bloscpack.load(converted).tobytes() == DATA


def test_append_reads_the_new_data_from_a_fifo(fifo: Path, tmp_path: Path):
    original = tmp_path / "a.blp"
    head, tail = DATA[:50_000], DATA[50_000:150_000]
    pack_file_to_file(fed(fifo, head), original)
    assert main(["a", str(original), str(fed(fifo, tail))]) == 0
    assert raw_back(original, tmp_path) == head + tail


def test_append_to_a_device_is_refused(fifo: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["a", "--no-check-extension", "/dev/null", str(fifo)]) == 1
    assert "/dev/null: not a regular file, cannot be appended to" in capsys.readouterr().err


# --- non-regular inputs, through the Python API ----------------------------------------------


def test_pack_file_to_file_reads_a_fifo_and_a_proc_file(fifo: Path, tmp_path: Path):
    out = tmp_path / "p.blp"
    pack_file_to_file(fed(fifo, DATA), out)
    assert bloscpack.load(out).tobytes() == DATA
    pack_file_to_file("/proc/version", out)
    assert bloscpack.load(out).tobytes() == Path("/proc/version").read_bytes()


@pytest.mark.parametrize("fmt", FORMATS)
def test_compress_file_reads_a_fifo(fmt: str, fifo: Path, tmp_path: Path):
    out = tmp_path / f"c{SUFFIX[fmt]}"
    bloscpack.dispatch.compress_file(fed(fifo, DATA), out, format=fmt)
    assert raw_back(out, tmp_path) == DATA


@pytest.mark.parametrize("fmt", FORMATS)
def test_convert_load_open_info_and_verify_read_a_fifo(fmt: str, fifo: Path, tmp_path: Path):
    array = np.arange(30_000, dtype="<i4").reshape(300, 100)
    source = tmp_path / "source.b2nd"
    bloscpack.save(array, source, format="b2nd")
    blob = source.read_bytes()
    out = tmp_path / f"out{SUFFIX[fmt]}"
    bloscpack.convert(fed(fifo, blob), out, fmt)
    np.testing.assert_array_equal(bloscpack.load(out), array)
    np.testing.assert_array_equal(bloscpack.load(fed(fifo, blob)), array)
    with bloscpack.open(fed(fifo, blob)) as opened:
        np.testing.assert_array_equal(opened[10:20], array[10:20])
    assert bloscpack.info(fed(fifo, blob))["format"] == "b2nd"
    assert bloscpack.verify(fed(fifo, blob))["ok"]


# --- outputs that are FIFOs or devices ------------------------------------------------------


@pytest.mark.parametrize("force", [[], ["-f"]])
def test_decompress_into_a_fifo_writes_in_place(force: list[str], fifo: Path, tmp_path: Path):
    container = tmp_path / "c.blp"
    container.write_bytes(b"")
    pack_file_to_file(fed(fifo, DATA), container)
    reader = Drainer(fifo)
    reader.start()
    assert main(["d", *force, str(container), str(fifo)]) == 0
    reader.join(10)
    assert reader.data == DATA
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("fmt", FILE_FORMATS)
def test_compress_and_convert_into_a_fifo_write_in_place(fmt: str, fifo: Path, tmp_path: Path):
    raw = tmp_path / "data.raw"
    raw.write_bytes(DATA)
    for argv in (["c", "--format", fmt, str(raw), str(fifo)],
                 ["convert", "--format", fmt, str(_blp_of(raw, tmp_path)), str(fifo)]):  # fmt: skip
        reader = Drainer(fifo)
        reader.start()
        assert main(argv) == 0
        reader.join(10)
        got = tmp_path / f"got{SUFFIX[fmt]}"
        got.write_bytes(reader.data)
        assert raw_back(got, tmp_path) == DATA
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def _blp_of(raw: Path, tmp_path: Path) -> Path:
    out = tmp_path / "raw.blp"
    if not out.exists():
        pack_file_to_file(raw, out)
    return out


@pytest.mark.parametrize("fmt", DIRECTORY_FORMATS)
def test_a_directory_format_into_a_fifo_is_refused(
    fmt: str, fifo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    raw = tmp_path / "data.raw"
    raw.write_bytes(DATA)
    assert main(["c", "-f", "--format", fmt, str(raw), str(fifo)]) == 1
    assert f"'{fifo}' is not a regular file: {fmt} writes a directory" in capsys.readouterr().err
    assert main(["convert", "-f", "--format", fmt, str(_blp_of(raw, tmp_path)), str(fifo)]) == 1
    assert f"{fmt} writes a directory" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.fixture
def null_clone(tmp_path: Path) -> Iterator[Path]:
    """A character device like ``/dev/null`` (1, 3) made in the test's directory."""
    path = tmp_path / "null"
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device file needs CAP_MKNOD")
    yield path


@pytest.mark.parametrize("device", ["clone", "/dev/null"])
@pytest.mark.parametrize("force", [[], ["-f"]])
def test_a_character_device_output_stays_a_device(
    device: str, force: list[str], null_clone: Path, tmp_path: Path
):
    target = str(null_clone) if device == "clone" else device
    raw = tmp_path / "data.raw"
    raw.write_bytes(DATA)
    container = _blp_of(raw, tmp_path)
    for argv in (["d", *force, str(container), target],
                 ["c", *force, str(raw), target],
                 ["c", *force, "--format", "b2nd", str(raw), target],
                 ["convert", *force, "--format", "b2frame", str(container), target]):  # fmt: skip
        assert main(argv) == 0, argv
        status = os.stat(target)
        assert stat.S_ISCHR(status.st_mode) and status.st_rdev == os.makedev(1, 3)


def test_the_python_api_writes_a_device_in_place(null_clone: Path, tmp_path: Path):
    raw = tmp_path / "data.raw"
    raw.write_bytes(DATA)
    pack_file_to_file(raw, null_clone)
    bloscpack.api.unpack_file_from_file(_blp_of(raw, tmp_path), null_clone)
    bloscpack.save(np.arange(10), null_clone, format="b2nd")
    bloscpack.convert(_blp_of(raw, tmp_path), null_clone, "b2frame", overwrite=False)
    assert stat.S_ISCHR(os.stat(null_clone).st_mode)


@pytest.mark.parametrize("argv", [["d"], ["c"], ["c", "--format", "b2nd"]])
def test_a_full_device_gives_one_clear_error(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    raw = tmp_path / "data.raw"
    raw.write_bytes(DATA)
    source = _blp_of(raw, tmp_path) if argv == ["d"] else raw
    assert main([*argv, str(source), "/dev/full"]) == 1
    assert capsys.readouterr().err == "blpk: error: '/dev/full': No space left on device\n"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_the_shared_lock_never_opens_a_fifo(tmp_path):
    """Opening a FIFO would count as its reader: a writer could then write, close and leave
    the real reader waiting forever for a partner."""
    import errno

    from bloscpack.io.locks import shared_lock

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with shared_lock(fifo):
        with pytest.raises(OSError) as caught:  # no reader: a non-blocking writer is refused
            os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        assert caught.value.errno == errno.ENXIO
