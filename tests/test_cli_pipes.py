"""``blpk`` in shell pipelines: ``-`` as stdin/stdout through real pipes, stdout carrying nothing
but data, errors on bad stdin, ``.npy`` inputs and outputs."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, load_manifest

from bloscpack.containers.bloscpack.header import BLOSCPACK_HEADER_LENGTH, BloscpackHeader

BLPK = [sys.executable, "-m", "bloscpack"]
SHELL_BLPK = " ".join(shlex.quote(a) for a in BLPK)
CORPUS = DATA / "bloscpack"
B2ND = DATA / "b2nd"
B2ND_MANIFEST = {e["file"]: e for e in load_manifest("b2nd")["files"]}


def blpk(*args: str | Path, stdin: bytes | None = None, cwd: Path | None = None):
    """Run blpk with ``stdin`` piped in; stdout and stderr captured as bytes."""
    return subprocess.run(
        [*BLPK, *map(str, args)], input=stdin, capture_output=True, cwd=cwd, timeout=120,
        stdin=subprocess.DEVNULL if stdin is None else None,
    )  # fmt: skip


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """A ``bash -o pipefail`` pipeline; ``blpk`` in it runs this interpreter's bloscpack."""
    command = command.replace("blpk ", SHELL_BLPK + " ")
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], capture_output=True, cwd=cwd, timeout=120
    )


def header_of(blp: bytes) -> BloscpackHeader:
    return BloscpackHeader.decode(blp[:BLOSCPACK_HEADER_LENGTH])


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """~640 kB of a float64 random walk: ten chunks of -z 64K."""
    path = tmp_path / "data.bin"
    np.cumsum(np.random.default_rng(5).standard_normal(80_000)).tofile(path)
    return path


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- pipelines ----------------------------------------------------------------------------


def test_round_trip_through_a_shell_pipeline(data, tmp_path):
    proc = shell("cat data.bin | blpk c -z 64K - - | blpk d - - | sha256sum", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == f"{sha256(data.read_bytes())}  -\n"
    assert proc.stderr == b""


def test_compress_pipe_to_pipe_is_a_stream_of_unknown_length(data):
    """stdin and stdout both pipes: header with nchunks -1, no offsets; chunks as they come."""
    proc = subprocess.Popen(
        [*BLPK, "-n", "1", "c", "-z", "64K", "-", "-"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    out, err = proc.communicate(data.read_bytes(), timeout=120)
    assert proc.returncode == 0 and err == b""
    header = header_of(out)
    assert (header.nchunks, header.offsets, header.chunk_size, header.last_chunk) == (
        -1, False, 65536, -1,
    )  # fmt: skip
    back = blpk("d", "-", "-", stdin=out)
    assert back.returncode == 0 and back.stderr == b""
    assert back.stdout == data.read_bytes()


def test_stdin_to_a_file_gets_offsets_and_equals_the_file_to_file_result(data, tmp_path):
    """With a file (or a redirected stdout) as output the chunks are spooled, and the header
    gets its real count and offsets: the bytes of ``blpk c data.bin out.blp``."""
    assert blpk("-n", "1", "c", "-z", "64K", data, tmp_path / "ref.blp").returncode == 0
    reference = (tmp_path / "ref.blp").read_bytes()
    assert header_of(reference).nchunks == 10 and header_of(reference).offsets
    proc = blpk("-n", "1", "c", "-z", "64K", "-", tmp_path / "a.blp", stdin=data.read_bytes())
    assert proc.returncode == 0 and proc.stdout == proc.stderr == b""
    assert (tmp_path / "a.blp").read_bytes() == reference
    proc = shell("cat data.blp 2>/dev/null; blpk -n 1 c -z 64K - - < data.bin > b.blp", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "b.blp").read_bytes() == reference


def test_file_to_pipe_has_a_known_count_and_no_offsets(data, tmp_path, bloscpack016):
    """``blpk c data.bin - | ...``: nchunks known, no offsets section, readable by 0.16."""
    proc = shell("blpk -n 1 c -z 64K data.bin - | cat > piped.blp", tmp_path)
    assert proc.returncode == 0 and proc.stderr == b""
    assert blpk("-n", "1", "c", "-o", "-z", "64K", data, tmp_path / "ref.blp").returncode == 0
    piped = (tmp_path / "piped.blp").read_bytes()
    assert piped == (tmp_path / "ref.blp").read_bytes()
    assert (header_of(piped).nchunks, header_of(piped).offsets) == (10, False)
    old = bloscpack016.cli("d", str(tmp_path / "piped.blp"), str(tmp_path / "old.bin"))
    assert old.returncode == 0, old.stderr
    assert (tmp_path / "old.bin").read_bytes() == data.read_bytes()


def test_decompress_to_a_pipe(data, tmp_path):
    assert blpk("c", "-z", "64K", data, tmp_path / "x.blp").returncode == 0
    proc = shell("blpk d x.blp - | sha256sum", tmp_path)
    assert proc.returncode == 0 and proc.stderr == b""
    assert proc.stdout.decode() == f"{sha256(data.read_bytes())}  -\n"
    proc = shell("cat x.blp | blpk d - - | sha256sum", tmp_path)
    assert proc.stdout.decode() == f"{sha256(data.read_bytes())}  -\n"
    proc = shell("blpk d - out.bin < x.blp && cmp out.bin data.bin", tmp_path)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == b""


def test_stdin_defaults_to_stdout(data, tmp_path):
    proc = shell("blpk c < data.bin - | blpk d - | cmp - data.bin", tmp_path)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == b""


def test_reading_stops_when_the_reader_goes_away(tmp_path):
    """A closed pipe (``| head``) ends blpk quietly (exit 1, no message)."""
    np.arange(2_000_000, dtype="<i8").tofile(tmp_path / "big.bin")
    assert blpk("c", tmp_path / "big.bin", tmp_path / "big.blp").returncode == 0
    proc = shell("blpk d big.blp - | head -c 10 > head.bin; echo ${PIPESTATUS[0]}", tmp_path)
    assert (tmp_path / "head.bin").read_bytes() == bytes(8) + b"\x01\x00"
    assert proc.stdout == b"1\n" and proc.stderr == b""


# --- stdout carries nothing but data --------------------------------------------------------


def test_metadata_and_messages_go_to_stderr_when_stdout_is_data(tmp_path):
    source = CORPUS / "cli_metadata.blp"
    expected = (CORPUS / "inputs" / "ints_200000.bin").read_bytes()
    for args in (["d", source, "-"], ["-v", "d", source, "-"], ["d", "-", "-"]):
        proc = blpk(*args, stdin=source.read_bytes() if args[-2] == "-" else None)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == expected  # exactly the data, nothing else
        assert b"blpk: Metadata:" in proc.stderr
    proc = blpk("-q", "d", source, "-")
    assert proc.stdout == expected and proc.stderr == b""


def test_compress_to_stdout_is_exactly_the_container(data, tmp_path):
    proc = blpk("-v", "-n", "1", "c", "-z", "64K", data, "-")
    assert proc.returncode == 0
    assert blpk("-n", "1", "c", "-o", "-z", "64K", data, tmp_path / "ref.blp").returncode == 0
    assert proc.stdout == (tmp_path / "ref.blp").read_bytes()
    assert b"blpk: input file size: " in proc.stderr and proc.stderr.endswith(b"blpk: done\n")


# --- bad input on stdin ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"garbage\n", "<stdin>: not a Blosc container (first bytes 67 61 72 62 61 67 65 0a)"),
        (b"", "<stdin>: empty file, not a Blosc container"),
    ],
)
def test_not_a_container_on_stdin(content, message, tmp_path):
    for out in (tmp_path / "out.bin", "-"):
        proc = blpk("d", "-", out, stdin=content)
        assert proc.returncode == 1
        assert proc.stdout == b""
        assert proc.stderr.decode() == f"blpk: error: {message}\n"
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "name", ["bad_chunk_digest.blp", "bad_chunk_data.blp", "bad_truncated.blp"]
)
def test_damaged_blp_on_stdin(name, tmp_path):
    """One error line naming <stdin>, exit 1, no output file (an existing one is kept)."""
    damaged = (CORPUS / name).read_bytes()
    proc = blpk("d", "-", tmp_path / "out.bin", stdin=damaged)
    assert proc.returncode == 1 and proc.stdout == b""
    line = proc.stderr.decode()
    assert line.startswith("blpk: error: <stdin>: ") and line.count("\n") == 1
    assert os.listdir(tmp_path) == []
    (tmp_path / "out.bin").write_bytes(b"keep")
    proc = blpk("-f", "d", "-", tmp_path / "out.bin", stdin=damaged)
    assert proc.returncode == 1 and (tmp_path / "out.bin").read_bytes() == b"keep"


def test_cut_stream_is_an_error(data, tmp_path):
    packed = blpk("c", "-z", "64K", "-", "-", stdin=data.read_bytes()).stdout
    proc = blpk("d", "-", tmp_path / "out.bin", stdin=packed[:5000])
    assert proc.returncode == 1
    assert proc.stderr.decode().startswith("blpk: error: <stdin>: the rest of chunk 0 (")
    assert os.listdir(tmp_path) == ["data.bin"]


# --- info and verify read stdin -------------------------------------------------------------


def test_info_and_verify_of_stdin(tmp_path):
    source = CORPUS / "cli_checksum_sha256.blp"
    proc = blpk("verify", "-", stdin=source.read_bytes())
    assert (proc.returncode, proc.stdout) == (0, b"blpk: -: ok (blp, 4 chunks)\n")
    proc = blpk("t", "--json", "-", stdin=(CORPUS / "bad_chunk_digest.blp").read_bytes())
    report = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert (report["file"], report["ok"], [b["index"] for b in report["bad_chunks"]]) == (
        "-", False, [0],
    )  # fmt: skip
    assert "/tmp" not in proc.stdout.decode()  # the spooled copy is named <stdin>
    ours = blpk("i", "--legacy", "-", stdin=source.read_bytes())
    assert ours.returncode == 0 and ours.stdout == blpk("i", "--legacy", source).stdout
    ours = blpk("i", "-", stdin=source.read_bytes())  # the summary names it <stdin>
    theirs = blpk("i", source)
    assert ours.returncode == 0 and ours.stdout.startswith(b"blpk: file:      <stdin>\n")
    assert ours.stdout.splitlines()[1:] == theirs.stdout.splitlines()[1:]
    proc = blpk("i", "-", stdin=b"nope")
    assert proc.stderr == b"blpk: error: <stdin>: not a Blosc container (first bytes 6e 6f 70 65)\n"


# --- other formats ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(B2ND_MANIFEST))
def test_decompress_b2nd_corpus_to_stdout(name):
    """Any format to stdout: the array's bytes in C order (hashes from the corpus manifest)."""
    proc = blpk("d", "-e", B2ND / name, "-")
    assert proc.returncode == 0, proc.stderr
    assert sha256(proc.stdout) == B2ND_MANIFEST[name]["sha256_c_order_array_bytes"]
    if (B2ND / name).is_dir():  # a sparse frame: a directory cannot come through a pipe
        return
    piped = blpk("d", "-", "-", stdin=(B2ND / name).read_bytes())
    assert piped.returncode == 0 and piped.stdout == proc.stdout


@pytest.mark.parametrize("fmt", ["b2frame", "b2nd", "sframe", "bcolz"])
def test_other_formats_from_stdin_and_to_stdout(fmt, data, tmp_path):
    raw = data.read_bytes()
    proc = blpk("c", "--format", fmt, "-z", "64K", "-", tmp_path / "x", stdin=raw)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == b"", proc.stderr
    back = blpk("d", "-e", tmp_path / "x", "-")
    assert back.returncode == 0 and back.stdout == raw
    if fmt in ("sframe", "bcolz"):  # directories
        proc = blpk("c", "--format", fmt, data, "-")
        assert proc.returncode == 2 and proc.stdout == b""
        assert proc.stderr.endswith(
            f"blpk: error: --format {fmt} writes a directory, which cannot go to stdout\n".encode()
        )
        return
    proc = shell(f"blpk c --format {fmt} -z 64K data.bin - | blpk d - - | cmp - data.bin", tmp_path)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == b""


def test_convert_from_stdin(tmp_path):
    source = CORPUS / "nd_float64.blp"
    proc = blpk("convert", "-", tmp_path / "x.b2nd", stdin=source.read_bytes())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"blpk: - (blp) -> " + str(tmp_path / "x.b2nd").encode() + (
        b" (b2nd): 0 chunks copied, 1 recompressed\n"
    )
    import bloscpack

    np.testing.assert_array_equal(bloscpack.load(tmp_path / "x.b2nd"), bloscpack.load(source))
    proc = blpk("convert", source, "-")
    assert proc.returncode == 2
    assert proc.stderr.endswith(b"blpk: error: convert writes files and directories, not stdout\n")


# --- .npy in and out ----------------------------------------------------------------------

ARRAYS = {
    "f8_2d": np.linspace(0, 1, 60_000).reshape(300, 200),
    "i2_fortran_bigendian": np.asfortranarray(np.arange(30_000, dtype=">i2").reshape(150, 200)),
    "structured": np.zeros(5000, dtype=[("a", "<i4"), ("b", "S3"), ("c", "<f8", (2,))]),
    "unicode": np.array(["ab", "cde", "f"] * 1000),
    "0d": np.array(3.5),
    "empty": np.zeros((0, 4), dtype="<u2"),
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_npy_input_is_stored_as_an_array(name, tmp_path, bloscpack016):
    import bloscpack

    array = ARRAYS[name]
    np.save(tmp_path / "a.npy", array)
    chunk_size = "69000"  # whole items of 2, 8, 12 and 23 bytes
    proc = blpk("-n", "1", "c", "-z", chunk_size, "a.npy", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == b"", proc.stderr
    stored = tmp_path / "a.npy.blp"
    back = bloscpack.load(stored)
    assert back.dtype == array.dtype and back.shape == array.shape
    np.testing.assert_array_equal(back, array)
    reference = tmp_path / "ref.blp"
    bloscpack.pack_ndarray_to_file(
        np.load(tmp_path / "a.npy"), reference, chunk_size=int(chunk_size)
    )
    assert stored.read_bytes() == reference.read_bytes()  # 0.16's numpy metadata and layout
    old = bloscpack016.run(
        "import sys, numpy as np\n"
        "a = bloscpack.unpack_ndarray_from_file(sys.argv[1])\n"
        "b = np.load(sys.argv[2])\n"
        "assert a.dtype == b.dtype and a.shape == b.shape and (a == b).all()\n",
        str(stored), str(tmp_path / "a.npy"),
    )  # fmt: skip
    assert old.returncode == 0


def test_npy_input_to_stdout_and_option_errors(tmp_path):
    import bloscpack

    np.save(tmp_path / "a.npy", ARRAYS["f8_2d"])
    proc = shell("blpk c a.npy - | cat > piped.blp", tmp_path)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(bloscpack.load(tmp_path / "piped.blp"), ARRAYS["f8_2d"])
    proc = blpk("c", "-t", "4", "a.npy", "out.blp", cwd=tmp_path)
    message = "-t does not apply to .npy input: its dtype is used"
    assert proc.returncode == 2 and proc.stderr.endswith(f"blpk: error: {message}\n".encode())
    assert not (tmp_path / "out.blp").exists()
    (tmp_path / "meta.json").write_text('{"dtype": "x"}')
    proc = blpk("c", "-m", "meta.json", "a.npy", "out.blp", cwd=tmp_path)
    message = "metadata key 'dtype': the name is taken by the numpy metadata"
    assert proc.returncode == 1 and proc.stderr.endswith(f"blpk: error: {message}\n".encode())
    assert not (tmp_path / "out.blp").exists()
    # user entries go beside the numpy metadata, which bloscpack 0.16 ignores
    (tmp_path / "meta.json").write_text('{"units": "m"}')
    proc = blpk("c", "-m", "meta.json", "a.npy", "out.blp", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    with bloscpack.open(tmp_path / "out.blp") as lazy:
        assert lazy.attrs == {"units": "m"}
        np.testing.assert_array_equal(lazy[...], ARRAYS["f8_2d"])


@pytest.mark.parametrize("fmt", ["blp", "b2frame", "b2nd", "sframe", "bcolz"])
@pytest.mark.parametrize("name", ["f8_2d", "i2_fortran_bigendian", "structured"])
def test_decompress_to_npy_from_every_format(fmt, name, tmp_path):
    array = ARRAYS[name]
    np.save(tmp_path / "a.npy", array)
    proc = blpk("c", "--format", fmt, "a.npy", "x", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = blpk("d", "-e", "x", "out.npy", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == b"", proc.stderr
    back = np.load(tmp_path / "out.npy")
    assert back.dtype == array.dtype and back.shape == array.shape
    np.testing.assert_array_equal(back, array)
    c_order = tmp_path / "c.npy"
    np.save(c_order, np.ascontiguousarray(array))
    assert (tmp_path / "out.npy").read_bytes() == c_order.read_bytes()  # np.save's bytes


@pytest.mark.parametrize("name", ["f2d_float64.b2nd", "i3d_int16.b2nd", "bigendian_i4.b2nd"])
def test_golden_b2nd_to_npy(name, tmp_path):
    proc = blpk("d", "-e", B2ND / name, tmp_path / "out.npy")
    assert proc.returncode == 0, proc.stderr
    entry = B2ND_MANIFEST[name]
    back = np.load(tmp_path / "out.npy")
    assert list(back.shape) == entry["shape"] and back.dtype.str == entry["b2nd_dtype_string"]
    assert sha256(back.tobytes()) == entry["sha256_c_order_array_bytes"]


def test_raw_blp_to_npy_is_uint8(tmp_path):
    proc = blpk("d", "-e", CORPUS / "cli_default.blp", tmp_path / "out.npy")
    assert proc.returncode == 0
    back = np.load(tmp_path / "out.npy")
    assert back.dtype == np.uint8
    assert back.tobytes() == blpk("d", "-e", CORPUS / "cli_default.blp", "-").stdout


def test_blp_stream_to_npy(tmp_path):
    """A .npy output from stdin: the stream is spooled, then read as an array."""
    np.save(tmp_path / "a.npy", ARRAYS["f8_2d"])
    proc = shell("blpk c a.npy - | blpk d - out.npy", tmp_path)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), ARRAYS["f8_2d"])


def test_stdin_and_stdout_pipes_get_a_larger_buffer(tmp_path):
    fcntl = pytest.importorskip("fcntl")
    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("pipe sizes are Linux only")
    from bloscpack.streaming import PIPE_SIZE, widen_pipe

    read_end, write_end = os.pipe()
    try:
        with os.fdopen(read_end, "rb", closefd=False) as fp:
            widen_pipe(fp)
        assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) == PIPE_SIZE
    finally:
        os.close(read_end)
        os.close(write_end)
    path = tmp_path / "regular.bin"
    path.write_bytes(b"x")
    with open(path, "rb") as fp:
        widen_pipe(fp)  # not a pipe: left alone
    widen_pipe(io.BytesIO(b"no descriptor"))
    code = (
        "import fcntl, sys; from bloscpack.cli import files; files._stdin(); files._stdout();"
        "print(fcntl.fcntl(0, fcntl.F_GETPIPE_SZ), fcntl.fcntl(1, fcntl.F_GETPIPE_SZ),"
        " file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], input=b"", capture_output=True)
    assert proc.stderr.split() == [str(PIPE_SIZE).encode()] * 2
