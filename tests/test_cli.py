"""The ``blpk`` command line, run as a user runs it: subprocesses, real files, exit codes, output.

Files written with ``-n 1`` must equal bloscpack 0.16's byte for byte (the golden corpus holds
the files 0.16's ``blpk`` wrote, with the command lines); messages and exit codes are exact.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, load_manifest

import bloscpack
from bloscpack.cli.options import build_parser

CORPUS = DATA / "bloscpack"
INPUTS = CORPUS / "inputs"
MANIFEST = {entry["file"]: entry for entry in load_manifest("bloscpack")["files"]}


def blpk(*args: str | Path, cwd: Path | None = None, **kwargs) -> subprocess.CompletedProcess:
    """Run ``python -m bloscpack`` (what the ``blpk`` console script runs)."""
    return subprocess.run(
        [sys.executable, "-m", "bloscpack", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        **kwargs,
    )


def assert_one_error(proc: subprocess.CompletedProcess, message: str, rc: int = 1) -> None:
    """Exit code ``rc``, nothing on stdout, exactly ``blpk: error: <message>`` on stderr."""
    assert proc.returncode == rc, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr == f"blpk: error: {message}\n"


def corpus_commands(kind: str) -> list[str]:
    return [
        name
        for name, entry in MANIFEST.items()
        if entry["how"].startswith(f"blpk -n 1 {kind} ") and ";" not in entry["how"]
    ]


def run_how(how: str, tmp_path: Path) -> None:
    """Run a manifest's ``blpk ...`` command line with our blpk, inputs from the corpus."""
    for command in how.split(";"):
        argv = shlex.split(command)
        assert argv[0] == "blpk"
        argv = [str(CORPUS / a) if a.startswith("inputs/") else a for a in argv[1:]]
        proc = blpk(*argv, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == proc.stderr == ""


# --- byte-identical output ----------------------------------------------------------------


@pytest.mark.parametrize("name", corpus_commands("c"))
def test_compress_equals_016(name, tmp_path):
    run_how(MANIFEST[name]["how"], tmp_path)
    assert (tmp_path / name).read_bytes() == (CORPUS / name).read_bytes()


@pytest.mark.parametrize("name", [n for n in MANIFEST if n.startswith("cli_append_")])
def test_append_equals_016(name, tmp_path):
    entry = MANIFEST[name]
    how = entry["how"].split("; (")[0]  # cli_append_exhaust notes a failing third command
    run_how(how, tmp_path)
    expected = (CORPUS / name).read_bytes()
    assert (tmp_path / name).read_bytes() == expected[: len(expected) - entry["trailing_bytes"]]


def test_default_output_name(tmp_path):
    shutil.copy(INPUTS / "small_2000.bin", tmp_path / "data.bin")
    assert blpk("-n", "1", "c", "data.bin", cwd=tmp_path).returncode == 0
    assert (tmp_path / "data.bin.blp").exists()
    (tmp_path / "data.bin").unlink()
    proc = blpk("d", "data.bin.blp", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == ""
    assert (tmp_path / "data.bin").read_bytes() == (INPUTS / "small_2000.bin").read_bytes()


@pytest.mark.parametrize("name", ["cli_metadata.blp", "cli_default.blp", "nd_float64.blp"])
def test_decompress_output_and_metadata_as_016(name, tmp_path, bloscpack016):
    ours = blpk("d", "-e", CORPUS / name, tmp_path / "ours")
    old = bloscpack016.cli("d", "-e", str(CORPUS / name), str(tmp_path / "old"))
    assert ours.returncode == old.returncode == 0
    assert ours.stdout == old.stdout
    assert (tmp_path / "ours").read_bytes() == (tmp_path / "old").read_bytes()


INFO_FILES = [
    "cli_metadata.blp",
    "cli_default.blp",
    "cli_empty.blp",
    "cli_no_offsets.blp",
    "cli_codec_lz4hc.blp",
    "cli_checksum_sha512.blp",
    "nd_unicode_U5.blp",
    "api_bytes_meta_sha256_nocodec.blp",
    "cli_append_shrink_garbage.blp",
]


@pytest.mark.parametrize("name", INFO_FILES)
def test_info_text_as_016(name, bloscpack016):
    """``--legacy``: exactly 0.16's text; ``-v``: the summary, then 0.16's text."""
    ours = blpk("info", "--legacy", CORPUS / name)
    old = bloscpack016.cli("i", str(CORPUS / name))
    assert ours.returncode == old.returncode == 0, ours.stderr
    assert ours.stdout == old.stdout
    assert ours.stderr == ""
    verbose = blpk("-v", "info", CORPUS / name)
    assert verbose.returncode == 0, verbose.stderr
    summary, details = verbose.stdout.split("blpk: details:\n")
    assert details == old.stdout
    assert summary.startswith(f"blpk: file:      {CORPUS / name}\nblpk: format:    blp: ")


def test_info_json_matches_manifest():
    proc = blpk("info", "--json", CORPUS / "cli_metadata.blp")
    assert proc.returncode == 0
    report = json.loads(proc.stdout)
    entry = MANIFEST["cli_metadata.blp"]
    assert report["format"] == "blp"
    for key in (
        "format_version",
        "offsets",
        "metadata",
        "checksum",
        "typesize",
        "chunk_size",
        "last_chunk",
        "nchunks",
        "max_app_chunks",
    ):
        assert report["header"][key] == entry["header"][key]
    assert report["offsets"] == entry["offsets"]
    assert report["metadata"] == entry["expected_metadata"]


# --- new options --------------------------------------------------------------------------


def test_max_app_chunks(tmp_path):
    proc = blpk(
        "-n",
        "1",
        "c",
        "--max-app-chunks",
        "3",
        "-z",
        "1K",
        INPUTS / "small_2000.bin",
        tmp_path / "x.blp",
    )
    assert proc.returncode == 0
    report = json.loads(blpk("i", "--json", tmp_path / "x.blp").stdout)
    assert report["header"]["max_app_chunks"] == 3
    assert report["header"]["nchunks"] == 2
    proc = blpk("a", tmp_path / "x.blp", INPUTS / "text_5000.txt")
    assert_one_error(
        proc,
        f"{tmp_path / 'x.blp'}: not enough space: appending 5000 bytes needs 5 new chunks,"
        " but only 3 offset slots are left; rewrite it with room for more appends: blpk convert"
        f" --max-app-chunks 25 {tmp_path / 'x.blp'} larger.blp",
    )
    larger = blpk("convert", "--max-app-chunks", "25", tmp_path / "x.blp", tmp_path / "l.blp")
    assert larger.returncode == 0
    assert blpk("a", tmp_path / "l.blp", INPUTS / "text_5000.txt").returncode == 0
    expected = (INPUTS / "small_2000.bin").read_bytes() + (INPUTS / "text_5000.txt").read_bytes()
    assert bytes(bloscpack.load(tmp_path / "l.blp")) == expected


def test_metadata_out(tmp_path):
    proc = blpk(
        "-q", "d", "-m", tmp_path / "meta.json", CORPUS / "cli_metadata.blp", tmp_path / "out"
    )
    assert proc.returncode == 0
    assert proc.stdout == proc.stderr == ""
    assert (
        json.loads((tmp_path / "meta.json").read_text())
        == MANIFEST["cli_metadata.blp"]["expected_metadata"]
    )


def test_metadata_out_refuses_to_overwrite(tmp_path):
    (tmp_path / "meta.json").write_text("keep")
    proc = blpk(
        "d", "-e", "-m", tmp_path / "meta.json", CORPUS / "cli_metadata.blp", tmp_path / "out"
    )
    assert_one_error(proc, f"output file '{tmp_path / 'meta.json'}' exists!")
    assert (tmp_path / "meta.json").read_text() == "keep"
    assert not (tmp_path / "out").exists()


def test_quiet_silences_metadata(tmp_path):
    proc = blpk("-q", "d", "-e", CORPUS / "cli_metadata.blp", tmp_path / "out")
    assert proc.returncode == 0 and proc.stdout == proc.stderr == ""


def test_global_options_after_the_subcommand(tmp_path):
    (tmp_path / "out").write_bytes(b"old")
    proc = blpk("d", "-f", "-q", "-e", CORPUS / "cli_metadata.blp", tmp_path / "out")
    assert proc.returncode == 0 and proc.stdout == proc.stderr == ""
    assert (tmp_path / "out").read_bytes() == (INPUTS / "ints_200000.bin").read_bytes()


def test_verbose_goes_to_stderr(tmp_path):
    proc = blpk("-v", "c", INPUTS / "small_2000.bin", tmp_path / "x.blp")
    assert proc.returncode == 0 and proc.stdout == ""
    assert "blpk: input file size: 1.95K (2000B)\n" in proc.stderr
    assert proc.stderr.endswith("blpk: done\n")


def test_verify_ok(tmp_path):
    before = sorted(os.listdir(tmp_path))
    proc = blpk(
        "verify", CORPUS / "cli_checksum_sha256.blp", CORPUS / "nd_float64.blp", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout == (
        f"blpk: {CORPUS / 'cli_checksum_sha256.blp'}: ok (blp, 4 chunks)\n"
        f"blpk: {CORPUS / 'nd_float64.blp'}: ok (blp, 1 chunk)\n"
    )
    assert sorted(os.listdir(tmp_path)) == before


def test_verify_reports_bad_chunks(tmp_path):
    proc = blpk("t", CORPUS / "cli_default.blp", CORPUS / "bad_chunk_data.blp")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0] == f"blpk: {CORPUS / 'cli_default.blp'}: ok (blp, 1 chunk)"
    assert lines[1] == f"blpk: {CORPUS / 'bad_chunk_data.blp'}: FAILED (blp, 1 of 4 chunks bad)"
    assert lines[2].startswith("blpk:   chunk 0: ")
    assert "checksum" in lines[2].lower()
    assert proc.stderr == ""


def test_verify_json(tmp_path):
    proc = blpk("verify", "--json", CORPUS / "bad_chunk_digest.blp")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["file"] == str(CORPUS / "bad_chunk_digest.blp")
    assert (report["format"], report["ok"], report["nchunks"]) == ("blp", False, 4)
    assert [bad["index"] for bad in report["bad_chunks"]] == [0]


# --- errors: one line, exit codes, no partial output ----------------------------------------


def test_no_subcommand_is_a_usage_error():
    proc = blpk()
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("usage: blpk ")
    assert proc.stderr.endswith("blpk: error: too few arguments\n")


Z_RANGE = "argument -z/--chunk-size: must be 1 <= size <= 2147483631"
CODEC_CHOICE = "invalid choice: 'snappy' (choose from 'blosclz', 'lz4', 'lz4hc', 'zlib', 'zstd')"
FORMAT_CHOICE = "unknown format 'zip'; choose one of blp, b2frame, b2nd, sframe, bcolz"
CHECKSUM_CHOICE = (
    "invalid choice: 'foo' (choose from 'None', 'adler32', 'crc32', 'md5', 'sha1', 'sha224',"
    " 'sha256', 'sha384', 'sha512')"
)
OBJECTS = (
    "arrays of dtype object hold Python object references, which cannot be stored without"
    " pickling; convert them to a fixed-size dtype (e.g. 'U' or 'S') first"
)

#: A bad value of every option whose values are checked, and the one line it gets.
BAD_VALUES = [
    (["-n", "0", "i", "x"], "argument -n/--nthreads: -n must be 1 <= n <= 256, got 0"),
    (["i", "-n", "abc", "x"], "argument -n/--nthreads: invalid integer 'abc'"),
    (["c", "-l", "10", "x"], "argument -l/--clevel: clevel must be 0 <= n <= 9, got 10"),
    (["c", "-l", "x", "x"], "argument -l/--clevel: invalid integer 'x'"),
    (["a", "-l", "-1", "x", "y"], "argument -l/--clevel: clevel must be 0 <= n <= 9, got -1"),
    (["c", "-t", "0", "x"], "argument -t/--typesize: typesize must be 1 <= n <= 255, got 0"),
    (["c", "-t", "256", "x"], "argument -t/--typesize: typesize must be 1 <= n <= 255, got 256"),
    (["c", "-z", "0", "x"], f"{Z_RANGE}, got '0'"),
    (["c", "-z", "-5", "x"], f"{Z_RANGE}, got '-5'"),
    (["c", "-z", "3G", "x"], f"{Z_RANGE}, got '3G'"),
    (["c", "-z", "abc", "x"], "argument -z/--chunk-size: invalid size 'abc': use an integer,"
                              " a number with a B/K/M/G/T suffix, or 'max'"),
    (["c", "-c", "snappy", "x"], f"argument -c/--codec: {CODEC_CHOICE}"),
    (["a", "--codec", "snappy", "x", "y"], f"argument -c/--codec: {CODEC_CHOICE}"),
    (["c", "-k", "foo", "x"], f"argument -k/--checksum: {CHECKSUM_CHOICE}"),
    (["c", "--format", "zip", "x"], f"argument --format: {FORMAT_CHOICE}"),
    (["c", "--dtype", "foo", "x"],
     "argument --dtype: dtype 'foo' is not a numpy dtype (e.g. 'f8', '<i4')"),
    (["c", "--dtype", "O", "x"], f"argument --dtype: {OBJECTS}"),
    (["c", "--dtype", "V0", "x"], "argument --dtype: dtype 'V0' has items of 0 bytes"),
    (["c", "--dtype", "f8", "--shape", "3,x", "x"],
     "argument --shape: not a shape: '3,x' (e.g. 1000,3)"),
    (["c", "--dtype", "f8", "--shape", "-3", "x"],
     "argument --shape: not a shape: '-3' (e.g. 1000,3)"),
    (["c", "--max-app-chunks", "-1", "x"],
     "argument --max-app-chunks: max-app-chunks must be 0 <= n <= 4611686018427387904, got -1"),
    (["--storage-option", "anon", "i", "x"],
     "argument --storage-option: not key=value: 'anon' (e.g. anon=true)"),
    (["demo", "--size", "0"], "argument --size: must be 1 <= size <= 2147483631, got '0'"),
    (["convert", "--clevel", "11", "x", "y"],
     "argument --clevel: --clevel must be 0 <= n <= 9, got 11"),
    (["convert", "--codec", "snappy", "x", "y"], f"argument --codec: {CODEC_CHOICE}"),
    (["convert", "--format", "zip", "x", "y"], f"argument --format: {FORMAT_CHOICE}"),
    (["refs", "--zarr-format", "4", "x"],
     "argument --zarr-format: invalid choice: 4 (choose from 2, 3)"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "message"), BAD_VALUES)
def test_bad_option_values_are_usage_errors(args, message, tmp_path):
    proc = blpk(*args, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    usage, error = proc.stderr.split("blpk: error: ")
    assert usage.startswith("usage: blpk ")
    assert error == f"{message}\n"
    assert os.listdir(tmp_path) == []


def test_every_checked_option_has_a_bad_value_case():
    """Every option whose value is checked (a ``type`` or ``choices``) is in ``BAD_VALUES``."""
    given = {arg for args, _ in BAD_VALUES for arg in args if arg.startswith("-")}
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "subcommand")  # noqa: SLF001
    parsers = [parser, *subparsers.choices.values()]
    checked = {tuple(a.option_strings) for p in parsers for a in p._actions  # noqa: SLF001
               if a.option_strings and (a.type is not None or a.choices is not None)}  # fmt: skip
    assert [names for names in checked if not given & set(names)] == []


def test_output_exists(tmp_path):
    (tmp_path / "x.blp").write_bytes(b"keep")
    proc = blpk("c", INPUTS / "small_2000.bin", tmp_path / "x.blp")
    assert_one_error(proc, f"output file '{tmp_path / 'x.blp'}' exists!")
    assert (tmp_path / "x.blp").read_bytes() == b"keep"


def test_missing_inputs(tmp_path):
    missing = tmp_path / "missing.bin"
    assert_one_error(blpk("c", missing), f"input file '{missing}' does not exist!")
    assert_one_error(blpk("d", f"{missing}.blp"), f"input file '{missing}.blp' does not exist!")
    assert_one_error(blpk("i", missing), f"file '{missing}' does not exist!")
    assert_one_error(blpk("t", missing), f"file '{missing}' does not exist!")
    good = CORPUS / "cli_default.blp"
    assert_one_error(
        blpk("a", f"{missing}.blp", good), f"original file '{missing}.blp' does not exist!"
    )
    shutil.copy(good, tmp_path / "x.blp")
    assert_one_error(
        blpk("a", tmp_path / "x.blp", missing), f"new file '{missing}' does not exist!"
    )
    assert os.listdir(tmp_path) == ["x.blp"]


def test_extension_checks(tmp_path):
    raw = INPUTS / "small_2000.bin"
    assert_one_error(
        blpk("d", raw),
        f"input file '{raw}' does not end with '.blp'",
    )
    assert_one_error(
        blpk("d", "-e", CORPUS / "cli_default.blp"),
        "--no-check-extension requires use of <out_file>",
    )
    assert_one_error(
        blpk("a", raw, raw),
        f"original file '{raw}' does not end with '.blp'",
    )


def test_metadata_file_errors(tmp_path):
    missing = tmp_path / "nometa.json"
    proc = blpk("c", "-m", missing, INPUTS / "small_2000.bin", tmp_path / "x.blp")
    assert_one_error(proc, f"metadata file '{missing}' does not exist!")
    (tmp_path / "bad.json").write_text("{not json")
    proc = blpk("c", "-m", tmp_path / "bad.json", INPUTS / "small_2000.bin", tmp_path / "x.blp")
    assert_one_error(
        proc,
        f"metadata file '{tmp_path / 'bad.json'}' is not valid JSON:"
        " Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
    )
    assert sorted(os.listdir(tmp_path)) == ["bad.json"]


@pytest.mark.parametrize(
    "name",
    [
        "bad_chunk_data.blp",
        "bad_chunk_digest.blp",
        "bad_truncated.blp",
        "bad_format_version.blp",
        "bad_meta_checksum.blp",
    ],
)
def test_bad_input_leaves_no_output(name, tmp_path):
    proc = blpk("d", CORPUS / name, tmp_path / "out")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith("blpk: error: ") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr
    assert os.listdir(tmp_path) == []
    # an existing output is neither truncated nor replaced
    (tmp_path / "out").write_bytes(b"keep")
    proc = blpk("-f", "d", CORPUS / name, tmp_path / "out")
    assert proc.returncode == 1
    assert os.listdir(tmp_path) == ["out"]
    assert (tmp_path / "out").read_bytes() == b"keep"


def test_bad_magic(tmp_path):
    path = CORPUS / "bad_magic.blp"
    for args in (["d", path, tmp_path / "out"], ["i", path], ["t", path]):
        proc = blpk(*args)
        assert proc.returncode == 1
        assert proc.stderr.count("\n") <= 1 and "Traceback" not in proc.stderr
    assert os.listdir(tmp_path) == []


def test_debug_shows_tracebacks(tmp_path):
    proc = blpk("-d", "d", CORPUS / "bad_chunk_data.blp", tmp_path / "out")
    assert proc.returncode == 1
    assert "Traceback (most recent call last)" in proc.stderr
    assert proc.stderr.splitlines()[-1].startswith("blpk: error: ")


@pytest.mark.parametrize(
    ("signum", "rc", "message"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
)
def test_interrupt_leaves_no_output(signum, rc, message, tmp_path):
    """Ctrl-C (SIGINT) or SIGTERM while compressing: exit 130 or 143, one line, no output, no
    temporary file."""
    import time

    import numpy as np

    source = tmp_path / "big.bin"
    np.random.default_rng(1).standard_normal(8 * 2**20).tofile(source)  # 64 MiB
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bloscpack",
            "-n",
            "1",
            "c",
            "-c",
            "zlib",
            "-l",
            "9",
            source,
            tmp_path / "big.blp",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not any(p.name.startswith(".big.blp.") for p in tmp_path.iterdir()):
        if proc.poll() is not None:
            raise AssertionError(f"blpk ended early: {proc.returncode} {proc.communicate()}")
        assert time.monotonic() < deadline, "compression never started"
        time.sleep(0.02)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == rc
    assert err == f"blpk: error: {message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.bin"]


def test_console_script_and_version():
    blpk_script = Path(sys.executable).with_name("blpk")
    proc = subprocess.run([str(blpk_script), "--version"], capture_output=True, text=True)
    assert proc.returncode == 0
    import blosc
    import blosc2

    from bloscpack import __version__

    assert proc.stdout == (
        f"bloscpack: '{__version__}' python-blosc: '{blosc.__version__}'"
        f" blosc: '{blosc.BLOSC_VERSION_STRING}' python-blosc2: '{blosc2.__version__}'"
        f" blosc2: '{blosc2.VERSION_STRING}'\n"
    )


# --- other formats ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "suffix"),
    [("b2frame", ".b2frame"), ("b2nd", ".b2nd"), ("sframe", ".b2sframe"), ("bcolz", ".bcolz")],
)
def test_other_formats_round_trip(fmt, suffix, tmp_path):
    source = tmp_path / "data.bin"
    shutil.copy(INPUTS / "ints_200000.bin", source)
    proc = blpk("c", "--format", fmt, "-t", "8", "-l", "9", "-c", "zstd", "-z", "64K", source)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == "", proc.stderr
    packed = tmp_path / f"data.bin{suffix}"
    assert packed.exists()
    report = json.loads(blpk("info", "--json", packed).stdout)
    assert report["format"] in (fmt, "b2nd")  # a sparse frame holding an array reads as b2nd
    assert report["nchunks"] == 4  # 200000 bytes in chunks of 65536
    assert blpk("verify", packed).returncode == 0
    # recognised by its bytes, whatever its name
    renamed = tmp_path / "renamed"
    packed.rename(renamed)
    proc = blpk("d", "-e", renamed, tmp_path / "back.bin")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "back.bin").read_bytes() == source.read_bytes()


def test_b2nd_written_by_cli_reads_in_python_blosc2(tmp_path):
    import blosc2
    import numpy as np

    array = np.linspace(0, 1, 5000)
    np.save(tmp_path / "a.npy", array)
    meta = tmp_path / "meta.json"
    meta.write_text('{"units": "m"}')
    proc = blpk(
        "c", "--format", "b2nd", "-m", meta, "-z", "8K", tmp_path / "a.npy", tmp_path / "a.b2nd"
    )
    assert proc.returncode == 0, proc.stderr
    stored = blosc2.open(str(tmp_path / "a.b2nd"))
    assert stored.chunks == (1024,)
    assert stored.schunk.vlmeta["units"] == "m"
    np.testing.assert_array_equal(stored[:], array)


def test_bcolz_written_by_cli_reads_in_bcolz(tmp_path):
    import bcolz
    import numpy as np

    proc = blpk(
        "c", "--format", "bcolz", "-t", "4", "-s", INPUTS / "ints_200000.bin", tmp_path / "x.bcolz"
    )
    assert proc.returncode == 0, proc.stderr
    stored = bcolz.open(str(tmp_path / "x.bcolz"), mode="r")
    assert stored.dtype == np.dtype("<u4") and stored.cparams.shuffle == 0
    assert stored[:].tobytes() == (INPUTS / "ints_200000.bin").read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "b2nd", "-k", "md5"], "-k applies to --format blp only"),
        (["--format", "bcolz", "-o"], "-o applies to --format blp only"),
        (
            ["--format", "b2frame", "--max-app-chunks", "3"],
            "--max-app-chunks applies to --format blp only",
        ),
        (["--format", "b2nd", "-t", "3"], "-t must be 1, 2, 4 or 8 for the array formats"),
    ],
)
def test_blp_only_options(args, message, tmp_path):
    proc = blpk("c", *args, INPUTS / "small_2000.bin", tmp_path / "out")
    assert proc.returncode == 2
    assert proc.stderr.endswith(f"blpk: error: {message}\n")
    assert os.listdir(tmp_path) == []


def test_demo(tmp_path):
    proc = blpk("demo", "--size", "1M", "--dir", tmp_path / "demo")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[
        0
    ] == "blpk: example: float64 random walk, 131072 items (1.0 MiB), written to " + str(
        tmp_path / "demo"
    )
    assert lines[1].split() == [
        "format",
        "file",
        "bytes",
        "ratio",
        "write",
        "MB/s",
        "read",
        "MB/s",
        "verified",
    ]
    rows = [line.split() for line in lines[3:]]
    assert [row[0] for row in rows] == ["blp", "b2frame", "b2nd", "sframe", "bcolz"]
    assert all(row[-1] == "yes" for row in rows)
    assert sorted(os.listdir(tmp_path / "demo")) == [
        "example.b2frame",
        "example.b2nd",
        "example.b2sframe",
        "example.bcolz",
        "example.blp",
    ]
    proc = blpk("demo", "--size", "1M", "--dir", tmp_path / "demo")
    assert_one_error(proc, f"output file '{tmp_path / 'demo' / 'example.blp'}' exists!")


def test_raw_chunk_file(tmp_path):
    """``info``, ``verify`` and ``decompress`` also take a single Blosc chunk."""
    import blosc

    data = bytes(range(256)) * 100
    chunk = tmp_path / "one.chunk"
    chunk.write_bytes(blosc.compress(data, typesize=1, clevel=5, cname="lz4"))
    report = json.loads(blpk("info", "--json", chunk).stdout)
    assert (report["format"], report["nbytes"], report["typesize"]) == ("chunk", 25600, 1)
    assert blpk("verify", chunk).stdout == (
        f"blpk: {chunk}: structure ok, data not verifiable (chunk, 1 chunk, no checksums)\n"
    )
    assert blpk("d", "-e", chunk, tmp_path / "raw").returncode == 0
    assert (tmp_path / "raw").read_bytes() == data


def test_not_a_container(tmp_path):
    path = CORPUS / "bad_magic.blp"
    first = "62 6c 70 78 03 01 01 08 00 00 01 00 40 0d 00 00"
    message = f"{path}: not a Blosc container (first bytes {first})"
    assert_one_error(blpk("i", path), message)
    assert_one_error(blpk("d", path, tmp_path / "out"), message)
    proc = blpk("t", path)
    assert proc.returncode == 1
    assert proc.stdout == f"blpk: {path}: FAILED (unknown format, unreadable)\nblpk:   {message}\n"
    assert os.listdir(tmp_path) == []


def test_verify_strict_fails_where_no_checksum_covers_the_chunks(tmp_path):
    data = tmp_path / "data.bin"
    data.write_bytes(bytes(range(256)) * 4000)
    plain, digested = tmp_path / "plain.blp", tmp_path / "digested.blp"
    assert blpk("c", "-k", "None", data, plain).returncode == 0
    assert blpk("c", data, digested).returncode == 0
    done = blpk("verify", plain, digested)
    assert done.returncode == 0
    assert done.stdout == (
        f"blpk: {plain}: structure ok, data not verifiable (blp, 1 chunk, no checksums)\n"
        f"blpk: {digested}: ok (blp, 1 chunk)\n"
    )
    strict = blpk("verify", "--strict", plain, digested)
    assert strict.returncode == 1
    assert strict.stdout == (
        f"blpk: {plain}: FAILED (blp, 1 chunk): strict: data not verifiable (no checksums"
        f" stored for its chunks)\nblpk: {digested}: ok (blp, 1 chunk)\n"
    )
