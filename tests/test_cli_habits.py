"""``blpk`` as people use gzip and bloscpack 0.16: the info summary, verifying several files,
refusing to compress a container again, signals from the first moments of start-up, and
messages that name real files and say what to do."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA
from test_cli import CORPUS, INPUTS, assert_one_error, blpk

import bloscpack
from bloscpack.cli.console import Console
from bloscpack.cli.info import SUMMARY_LABELS, summarize
from bloscpack.containers import registry
from bloscpack.errors import BloscpackError, NotAContainer
from bloscpack.io.staging import destination_names

# --- info: the summary ----------------------------------------------------------------------

SUMMARIES = {
    "bloscpack/nd_float64.blp": [
        "format:    blp: Bloscpack file",
        "array:     float64, shape (20000,)",
        "size:      160.0 kB (160000 bytes)",
        "chunks:    1 of 160.0 kB (160000 bytes)",
        "codec:     blosclz",
        "filters:   shuffle",
        "clevel:    not stored (Blosc chunks do not record it)",
        "stored:    46.8 kB (46796 bytes)",
        "ratio:     3.42",
        "checksums: adler32 (chunks), adler32 (metadata)",
    ],
    "bloscpack/cli_codec_lz4hc.blp": [
        "format:    blp: Bloscpack file",
        "array:     none: raw bytes",
        "size:      150.0 kB (150000 bytes)",
        "chunks:    3 of 65.5 kB (65536 bytes), the last 18.9 kB (18928 bytes)",
        "codec:     lz4 or lz4hc",
        "filters:   shuffle",
        "clevel:    not stored (Blosc chunks do not record it)",
        "stored:    141.4 kB (141383 bytes)",
        "ratio:     1.06",
        "checksums: adler32 (chunks)",
    ],
    "blosc2/sframes/nd_2d.b2nd": [
        "format:    b2nd: python-blosc2 NDArray",
        "array:     int32, shape (40, 60)",
        "size:      9.6 kB (9600 bytes)",
        "chunks:    6 of 2.0 kB (2048 bytes), each of shape (16, 32)",
        "codec:     zstd",
        "filters:   shuffle",
        "clevel:    5",
        "stored:    5.5 kB (5476 bytes)",
        "ratio:     1.75",
        "checksums: none (the format stores none)",
    ],
    "blosc2/frames/codec_zlib.b2frame": [
        "format:    b2frame: Blosc2 contiguous frame",
        "array:     none: raw bytes",
        "size:      36.0 kB (36000 bytes)",
        "chunks:    3 of 12.0 kB (12000 bytes)",
        "codec:     zlib",
        "filters:   trunc_prec + shuffle",
        "clevel:    3",
        "stored:    11.5 kB (11461 bytes)",
        "ratio:     3.14",
        "checksums: none (the format stores none)",
    ],
    "blosc2/sframes/plain.b2frame": [
        "format:    sframe: Blosc2 sparse frame (a directory)",
        "array:     none: raw bytes",
        "size:      48.0 kB (48000 bytes)",
        "chunks:    12 of 4.0 kB (4000 bytes)",
        "codec:     zstd",
        "filters:   shuffle",
        "clevel:    5",
        "stored:    12.3 kB (12331 bytes)",
        "ratio:     3.89",
        "checksums: none (the format stores none)",
    ],
    "bcolz/ca_f8_zlib": [
        "format:    bcolz: bcolz carray or ctable (a directory)",
        "array:     float64, shape (3000,)",
        "size:      24.0 kB (24000 bytes)",
        "chunks:    1 of 24.0 kB (24000 bytes)",
        "codec:     zlib",
        "filters:   shuffle",
        "clevel:    1",
        "stored:    1.1 kB (1083 bytes)",
        "ratio:     22.16",
        "checksums: none (the format stores none)",
    ],
    "blosc2/chunks/m_lz4_shuffle.chunk": [
        "format:    chunk: one Blosc chunk",
        "array:     none: raw bytes",
        "size:      16.4 kB (16384 bytes)",
        "chunks:    1 of 16.4 kB (16384 bytes)",
        "codec:     lz4",
        "filters:   shuffle",
        "clevel:    not stored (Blosc chunks do not record it)",
        "stored:    4.2 kB (4209 bytes)",
        "ratio:     3.89",
        "checksums: none (the format stores none)",
    ],
}


@pytest.mark.parametrize("name", SUMMARIES)
def test_info_summary_first_then_details(name):
    path = DATA / name
    proc = blpk("info", path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    lines = proc.stdout.splitlines()
    expected = [f"file:      {path}", *SUMMARIES[name], "details:"]
    assert lines[: len(expected)] == [f"blpk: {line}" for line in expected]
    legacy = blpk("info", "--legacy", path)  # the details are the generic text, as before
    if not name.endswith(".blp"):
        assert proc.stdout.endswith(legacy.stdout)


def corpus_containers() -> list[Path]:
    """Every file or directory of the golden corpora but their manifests and inputs."""
    found = []
    for folder in ("bloscpack", "b2nd", "bcolz", "blosc2/chunks", "blosc2/frames",
                   "blosc2/sframes", "bad", "snappy"):  # fmt: skip
        for entry in sorted((DATA / folder).iterdir()):
            if entry.suffix not in (".json", ".md") and entry.name not in ("inputs", "expected"):
                found.append(entry)
    return found


@pytest.mark.parametrize("path", corpus_containers(), ids=lambda p: str(p.relative_to(DATA)))
def test_summary_has_the_same_lines_for_every_format(path):
    """One summary for every format: the same labels in the same order, codecs by name."""
    try:
        fmt = registry.detect(path)
        report = registry.describe(path, fmt)
    except BloscpackError:
        fmt, report = None, None
    if fmt is None:
        return  # not a container: info says so in one line (test_cli.test_not_a_container)
    lines, problem = summarize(path, fmt, str(path), report)
    if report is None or problem is not None:  # damaged: what could be read, in order
        labels = [label for label, _ in lines]
        assert labels == [label for label in SUMMARY_LABELS if label in labels]
        return
    assert [label for label, _ in lines] == list(SUMMARY_LABELS)
    facts = dict(lines)
    assert facts["format"].startswith(f"{fmt}: ")
    codecs = {"blosclz", "lz4", "lz4 or lz4hc", "lz4hc", "zlib", "zstd", "snappy", "-", "none"}
    first = facts["codec"].split(";")[0].split(" (")[0].split(",")[0]
    assert first in codecs or first.startswith(("zfp", "ndlz", "codec")), facts["codec"]


def test_info_of_a_damaged_file_shows_what_it_read_then_the_error():
    path = CORPUS / "bad_truncated.blp"
    proc = blpk("info", path)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f"blpk: file:      {path}",
        "blpk: format:    blp: Bloscpack file",
        "blpk: array:     none: raw bytes",
        "blpk: size:      200.0 kB (200000 bytes)",
        "blpk: chunks:    4 of 65.5 kB (65536 bytes), the last 3.4 kB (3392 bytes)",
        "blpk: codec:     blosclz",
        "blpk: filters:   shuffle",
        "blpk: stored:    5.1 kB (5105 bytes)",
    ]
    assert proc.stderr == (
        f"blpk: error: {path}: chunk 3 at offset 4717 needs 394 bytes plus a 4-byte digest,"
        " but the input has 5105\n"
    )


def test_info_of_a_truncated_frame(tmp_path):
    cut = tmp_path / "cut.b2nd"
    cut.write_bytes((DATA / "b2nd" / "f2d_float64.b2nd").read_bytes()[:1500])
    proc = blpk("info", cut)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f"blpk: file:      {cut}",
        "blpk: format:    b2nd: python-blosc2 NDArray",
        "blpk: stored:    1.5 kB (1500 bytes)",
    ]
    assert proc.stderr == (
        f"blpk: error: {cut}: header says frame_len 2131, only 1500 bytes are there\n"
    )


def test_info_json_and_legacy_exclude_each_other():
    proc = blpk("info", "--json", "--legacy", CORPUS / "cli_default.blp")
    assert proc.returncode == 2
    assert proc.stderr.endswith(
        "blpk: error: argument --legacy: not allowed with argument --json\n"
    )


# --- verify: every file ---------------------------------------------------------------------


def test_verify_checks_every_file_like_gzip_t(tmp_path):
    good, bad = CORPUS / "cli_default.blp", CORPUS / "bad_chunk_digest.blp"
    missing, frame = tmp_path / "missing.blp", DATA / "b2nd" / "f2d_float64.b2nd"
    proc = blpk("t", good, missing, bad, frame)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0] == f"blpk: {good}: ok (blp, 1 chunk)"
    assert lines[1] == f"blpk: {bad}: FAILED (blp, 1 of 4 chunks bad)"
    assert lines[2].startswith("blpk:   chunk 0: ")
    assert lines[3:] == [
        f"blpk: {frame}: structure ok, data not verifiable (b2nd, 9 chunks, no checksums)"
    ]
    assert proc.stderr == f"blpk: error: file '{missing}' does not exist!\n"
    both = blpk("verify", good, frame)
    assert both.returncode == 0 and both.stderr == ""
    assert both.stdout.count("\n") == 2


# --- compress: not twice --------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".blp", ".b2frame", ".b2nd", ".b2sframe", ".bcolz", ".BLP"])
def test_compress_refuses_a_container_suffix(suffix, tmp_path):
    name = tmp_path / f"x{suffix}"
    name.write_bytes(b"already packed")
    proc = blpk("c", name)
    assert_one_error(
        proc,
        f"{name} already has the {suffix.lower()} suffix -- unchanged (use -f to compress it"
        " again)",
    )
    assert sorted(os.listdir(tmp_path)) == [name.name]
    forced = blpk("c", "-f", name)
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / f"x{suffix}.blp").exists()


# --- messages -------------------------------------------------------------------------------


def test_empty_input_says_empty_file(tmp_path):
    empty = tmp_path / "empty.blp"
    empty.write_bytes(b"")
    message = f"{empty}: empty file, not a Blosc container"
    assert_one_error(blpk("d", empty, tmp_path / "out"), message)
    assert_one_error(blpk("i", empty), message)
    proc = blpk("t", empty)
    assert proc.stdout == f"blpk: {empty}: FAILED (unknown format, unreadable)\nblpk:   {message}\n"
    with pytest.raises(NotAContainer, match=f"^{message}$"):
        import bloscpack

        bloscpack.load(empty)
    with open(empty, "rb") as stdin:
        from_stdin = blpk("d", "-", tmp_path / "out", stdin=stdin)
    assert_one_error(from_stdin, "<stdin>: empty file, not a Blosc container")
    assert sorted(os.listdir(tmp_path)) == ["empty.blp"]


def test_a_npy_file_says_what_reads_it(tmp_path):
    import bloscpack

    npy = tmp_path / "a.npy"
    np.save(npy, np.arange(5))
    assert_one_error(
        blpk("d", npy),
        f"input file '{npy}' is a NumPy .npy file, not a Blosc container: read it with"
        " numpy.load, or compress it with blpk c",
    )
    said = (
        f"{npy}: a NumPy .npy file, not a Blosc container: read it with numpy.load, or"
        " compress it with bloscpack.save / blpk c"
    )
    assert_one_error(blpk("d", "-e", npy, tmp_path / "out"), said)
    assert_one_error(blpk("i", npy), said)
    with pytest.raises(NotAContainer) as raised:
        bloscpack.load(npy)
    assert str(raised.value) == said


def test_invalid_subcommand_names_the_argument():
    proc = blpk("unpack", "x")
    assert proc.returncode == 2
    assert proc.stderr.endswith(
        "blpk: error: argument <subcommand>: invalid choice: 'unpack' (choose from 'compress',"
        " 'c', 'decompress', 'd', 'append', 'a', 'info', 'i', 'verify', 't', 'convert',"
        " 'refs', 'demo')\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["c", "-9", "data.bin"], "blpk c sets the level with -l 9"),
        (["-n", "1", "compress", "-1", "data.bin"], "blpk compress sets the level with -l 1"),
        (["a", "-5", "x.blp", "data.bin"], "blpk a sets the level with -l 5"),
        (["convert", "-9", "x.blp", "y.b2nd"], "blpk convert sets the level with --clevel 9"),
    ],
)
def test_gzip_level_flags_say_which_option_sets_the_level(args, message, tmp_path):
    shutil_copy(INPUTS / "small_2000.bin", tmp_path / "data.bin")
    proc = blpk(*args, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("usage: blpk ")
    flag = next(a for a in args if a[1:].isdigit())
    assert proc.stderr.endswith(
        f"blpk: error: no such option: {flag} (gzip's compression level): {message}\n"
    )
    assert sorted(os.listdir(tmp_path)) == ["data.bin"]


def test_a_file_named_like_a_level_is_still_an_input_as_in_016(tmp_path):
    shutil_copy(INPUTS / "small_2000.bin", tmp_path / "-9")
    proc = blpk("c", "-9", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["-9", "-9.blp"]
    proc = blpk("c", "-l", "9", "--", "-9", "again.blp", cwd=tmp_path)  # a value, then --
    assert proc.returncode == 0, proc.stderr


def shutil_copy(src: Path, dst: Path) -> None:
    dst.write_bytes(src.read_bytes())


def test_messages_never_show_temporary_names():
    assert (
        destination_names("'/data/run/.x.blp.0123456789ab.tmp/new': No space left on device")
        == "'/data/run/x.blp': No space left on device"
    )
    assert destination_names(".y.bcolz.00112233aabb.tmp/new/data/__0.blp: bad") == (
        "y.bcolz/data/__0.blp: bad"
    )
    err = io.StringIO()
    Console(err=err).error("[Errno 28] No space left on device: 'out/.a.b2nd.abcdefabcdef.tmp'")
    assert err.getvalue() == "blpk: error: [Errno 28] No space left on device: 'out/a.b2nd'\n"


def test_library_messages_name_a_stream_not_its_copy(tmp_path):
    """A stream (here stdin) is copied to a temporary file to be read; messages name it."""
    code = "import bloscpack; bloscpack.load('/dev/stdin')"
    with open(CORPUS / "bad_magic.blp", "rb") as stdin:
        proc = subprocess.run(
            [sys.executable, "-c", code], stdin=stdin, capture_output=True, text=True
        )
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        "bloscpack.errors.NotAContainer: /dev/stdin: not a Blosc container (first bytes 62 6c"
        " 70 78 03 01 01 08 00 00 01 00 40 0d 00 00)"
    )
    assert "blpk-" not in proc.stderr


# --- signals --------------------------------------------------------------------------------

EXPECTED = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}


def handles(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler for ``signum`` (Linux: SigCgt in its status)."""
    with open(f"/proc/{pid}/status") as status:
        caught = next(line for line in status if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signum - 1)))


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("delay", [0.0, 0.05, 0.2])
def test_signal_during_start_up(signum, delay, tmp_path):
    """From the moment blpk's handler is installed (before the package's heavy imports: numpy,
    the Blosc libraries), a signal ends it with one line and 130 or 143; nothing is written."""
    (tmp_path / "data.bin").write_bytes(bytes(1000))
    proc = subprocess.Popen(
        [sys.executable, "-m", "bloscpack", "c", "data.bin"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not handles(proc.pid, signal.SIGTERM):  # only blpk's own handler catches SIGTERM
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.001)
    time.sleep(delay)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    rc, message = EXPECTED[signum]
    if proc.returncode in (0, -signum) and (out, err) == ("", ""):
        # a slow signal found the work done (1000 bytes): it came after blpk's exit, or while
        # the interpreter shut down (which gives the signals their default action back)
        assert bloscpack.load(tmp_path / "data.bin.blp").tobytes() == bytes(1000)
        pytest.skip("blpk finished before the signal arrived")
    assert (proc.returncode, out, err) == (rc, "", f"blpk: error: {message}\n")
    assert os.listdir(tmp_path) == ["data.bin"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_mid_write_of_a_stream(signum, tmp_path):
    """Compressing stdin, half the data written: the output being built is removed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "bloscpack", "c", "-", "out.blp"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
    )  # fmt: skip
    proc.stdin.write(np.arange(2**21, dtype="<i8").tobytes())  # 16 MiB, then blpk waits
    proc.stdin.flush()
    deadline = time.monotonic() + 60
    while not any(p.name.startswith(".out.blp.") for p in tmp_path.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.2)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    rc, message = EXPECTED[signum]
    assert (proc.returncode, out, err) == (rc, b"", f"blpk: error: {message}\n".encode())
    assert os.listdir(tmp_path) == []


def test_info_at_a_server_that_serves_no_ranges(tmp_path):
    """The report is read, the chunks cannot be: the lines the reader gives say unknown, once
    with the reason; the command succeeds, as it did before the summary existed."""
    from remote_servers import http_server

    import bloscpack

    bloscpack.save(np.linspace(0, 1, 50_000).reshape(500, 100), tmp_path / "grid.b2nd")
    stored = (tmp_path / "grid.b2nd").stat().st_size  # default blocks: the machine's caches
    with http_server(str(tmp_path), ranges=False) as server:
        url = f"{server.url}/grid.b2nd"
        proc = blpk("info", url)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split(":")[1].strip() for line in lines[:11]] == list(SUMMARY_LABELS)
    assert lines[2].startswith(f"blpk: array:     unknown ({url}: ")
    assert lines[3:7] == [f"blpk: {label + ':':<11}unknown" for label in
                          ("size", "chunks", "codec", "filters")]  # fmt: skip
    assert lines[7:11] == [
        "blpk: clevel:    5",
        f"blpk: stored:    {stored / 1000:.1f} kB ({stored} bytes)",
        "blpk: ratio:     unknown",
        "blpk: checksums: none (the format stores none)",
    ]


# --- an output that is a directory, as cp takes it ------------------------------------------

ARRAY = np.arange(12_000, dtype="<f8").reshape(4000, 3)


@pytest.mark.parametrize("fmt", list(registry.FORMATS))
def test_an_output_directory_gets_the_output_inside_it(fmt, tmp_path):
    """``c``, ``convert`` and ``d`` into an existing directory write in it, named as when no
    output is given (the directory's own suffix names no format); a directory is never
    replaced, a container directory is (with ``-f``)."""
    ext = registry.FORMATS[fmt].extension
    np.save(tmp_path / "a.npy", ARRAY)
    for name in ("out", "conv", "back", "data.b2nd"):
        (tmp_path / name).mkdir()
    for args in (["c", "--format", fmt, "a.npy", "out"], ["convert", f"out/a.npy{ext}", "conv"],
                 ["-f", "d", "conv/a.npy.blp", "back"], ["c", "a.npy", "data.b2nd"]):  # fmt: skip
        proc = blpk(*args, cwd=tmp_path)
        assert (proc.returncode, proc.stderr) == (0, ""), args
    assert registry.detect(tmp_path / "out" / f"a.npy{ext}") == fmt
    assert np.array_equal(bloscpack.load(tmp_path / "out" / f"a.npy{ext}"), ARRAY)
    assert np.array_equal(bloscpack.load(tmp_path / "conv" / "a.npy.blp"), ARRAY)
    assert np.array_equal(np.load(tmp_path / "back" / "a.npy"), ARRAY)
    assert registry.detect(tmp_path / "data.b2nd" / "a.npy.blp") == "blp"
    proc = blpk("c", "--format", fmt, "a.npy", "out", cwd=tmp_path)
    assert_one_error(proc, f"output file 'out/a.npy{ext}' exists!")
    proc = blpk("-f", "c", "a.npy", "back", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert sorted(p.name for p in (tmp_path / "back").iterdir()) == ["a.npy", "a.npy.blp"]
    bloscpack.save(ARRAY * 2, tmp_path / "old.bcolz")
    (tmp_path / "old.bcolz").rename(tmp_path / "old")  # a container, named as none
    proc = blpk("-f", "convert", "--format", fmt, f"out/a.npy{ext}", "old", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert registry.detect(tmp_path / "old") == fmt
    assert np.array_equal(bloscpack.load(tmp_path / "old"), ARRAY)


def test_a_directory_is_never_replaced_nor_named_for_the_user(tmp_path):
    np.save(tmp_path / "a.npy", ARRAY)
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    (tmp_path / "out" / "a").mkdir(parents=True)
    for force in ([], ["-f"]):
        proc = blpk(*force, "d", "a.blp", "out", cwd=tmp_path)
        assert_one_error(proc, "output 'out/a' is a directory; not replacing it")
        proc = blpk(*force, "d", "a.blp", "out/a/", "-m", "out", cwd=tmp_path)
        assert_one_error(proc, "output 'out' is a directory; not replacing it")
    unnamed = "output 'out' is a directory: name the file to write in it"
    with open(tmp_path / "a.npy", "rb") as stdin:
        assert_one_error(blpk("c", "-", "out", cwd=tmp_path, stdin=stdin), unnamed)
    assert_one_error(blpk("d", "-e", "a.blp", "out", cwd=tmp_path), unnamed)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "a.blp", "a.npy", "out"]
