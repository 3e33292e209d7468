"""``blpk convert`` run as a user runs it: subprocesses, real files, exit codes, stdout/stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import blosc2
import numpy as np
import pytest

from bloscpack import api
from bloscpack.blosc.header import ChunkHeader
from bloscpack.containers.bloscpack import BloscpackReader

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    bcolz = pytest.importorskip("bcolz")


def blpk(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bloscpack", *args], capture_output=True, text=True, cwd=cwd,
        timeout=120,
    )  # fmt: skip


@pytest.fixture
def source(tmp_path):
    api.save_blp(np.arange(100000, dtype="<i4"), tmp_path / "a.blp", chunk_size=40000)
    return tmp_path


def test_convert_copies_chunks_and_prints_a_summary(source):
    proc = blpk("convert", "a.blp", "a.bcolz", cwd=source)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "blpk: a.blp (blp) -> a.bcolz (bcolz): 10 chunks copied, 0 recompressed\n"
    assert proc.stderr == ""
    np.testing.assert_array_equal(bcolz.open(str(source / "a.bcolz"), mode="r")[:],
                                  np.arange(100000))  # fmt: skip
    with BloscpackReader(source / "a.blp") as reader:
        first = bytes(reader.read_chunk(0))
    assert (source / "a.bcolz" / "data" / "__0.blp").read_bytes()[16:] == first


def test_convert_json_report_format_and_options(source):
    proc = blpk("convert", "--json", "--format", "b2nd", "--sparse", "--codec", "lz4",
                "--clevel", "3", "a.blp", "out", cwd=source)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "format": "b2nd", "source_format": "blp", "copied_chunks": 0, "recompressed_chunks": 1,
        "dropped": [],
    }  # fmt: skip
    assert os.path.isdir(source / "out")
    arr = blosc2.open(str(source / "out"))
    np.testing.assert_array_equal(arr[:], np.arange(100000))
    assert arr.schunk.cparams.codec == blosc2.Codec.LZ4
    assert arr.schunk.cparams.clevel == 3


def test_convert_recompress_with_codec(source):
    proc = blpk("convert", "--recompress", "--codec", "zstd", "a.blp", "b.blp", cwd=source)
    assert proc.returncode == 0, proc.stderr
    assert "0 chunks copied, 1 recompressed" in proc.stdout
    with BloscpackReader(source / "b.blp") as reader:
        assert ChunkHeader.parse(reader.read_chunk(0)).codec == "zstd"


def test_convert_reports_dropped_metadata(tmp_path):
    arr = blosc2.asarray(np.arange(10.0), urlpath=str(tmp_path / "a.b2nd"), mode="w")
    arr.vlmeta["blob"] = b"\x00"
    del arr
    proc = blpk("convert", "a.b2nd", "a.blp", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == (
        "blpk: dropped: vlmetalayer 'blob': the .blp metadata (JSON) cannot hold it (Object of"
        " type bytes is not JSON serializable)"
    )


def test_convert_errors(source):
    (source / "taken.blp").write_bytes(b"x")
    proc = blpk("convert", "a.blp", "taken.blp", cwd=source)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "blpk: error: output file 'taken.blp' exists!\n"
    assert (source / "taken.blp").read_bytes() == b"x"
    proc = blpk("convert", "-f", "a.blp", "taken.blp", cwd=source)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(api.load_blp(source / "taken.blp"), np.arange(100000))

    proc = blpk("convert", "a.blp", "x.npy", cwd=source)
    assert proc.returncode == 2
    assert proc.stderr.endswith(
        "blpk: error: 'x.npy': .npy is the suffix of another format (written by numpy.save);"
        " name the output with one of .blp, .b2frame, .b2nd, .b2sframe, .bcolz or none\n"
    )
    proc = blpk("convert", "--format", "b2nd", "a.blp", "y.blp", cwd=source)
    assert proc.returncode == 2
    assert proc.stderr.endswith(
        "blpk: error: 'y.blp': format 'b2nd' was asked, but the suffix .blp names 'blp';"
        " drop one or make them agree\n"
    )
    proc = blpk("convert", "missing.blp", "x.blp", cwd=source)
    assert proc.returncode == 1
    assert proc.stderr == "blpk: error: input file 'missing.blp' does not exist!\n"

    data = bytearray((source / "a.blp").read_bytes())
    data[-10] ^= 0xFF  # inside the last chunk
    (source / "bad.blp").write_bytes(bytes(data))
    proc = blpk("convert", "bad.blp", "bad.b2frame", cwd=source)
    assert proc.returncode == 1
    assert proc.stderr.startswith("blpk: error: ") and "Checksum mismatch" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert sorted(os.listdir(source)) == ["a.blp", "bad.blp", "taken.blp"]


def test_getting_started_conversion_compresses_as_compress_does(tmp_path):
    """The getting-started flow: ``blpk compress`` then ``blpk convert`` to a frame stores the
    data about as small as ``blpk c --format b2frame`` does (the typesize 8 is kept)."""
    np.linspace(0, 100, 2_000_000).tofile(tmp_path / "data.bin")
    for args in (("compress", "data.bin"), ("convert", "data.bin.blp", "data.b2frame"),
                 ("c", "--format", "b2frame", "data.bin", "direct.b2frame")):  # fmt: skip
        proc = blpk(*args, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    converted = os.path.getsize(tmp_path / "data.b2frame")
    direct = os.path.getsize(tmp_path / "direct.b2frame")
    assert converted < 2 * direct
    schunk = blosc2.open(str(tmp_path / "data.b2frame"))
    assert schunk.typesize == 8
    assert bytes(schunk[:]) == (tmp_path / "data.bin").read_bytes()
