"""No entry point allocates more than what the caller asked to receive plus what the input's
size justifies: hostile size claims (``tests/data/bad``) are read in a subprocess whose address
space is limited to what it uses after start-up plus :data:`BUDGET`."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import bloscpack

DATA = Path(__file__).parent / "data"
BAD = DATA / "bad"
#: Address space an entry point may add to what the process holds once started.
BUDGET = 256 << 20
MANIFEST = json.loads((BAD / "MANIFEST.json").read_text())["files"]

#: Runs in the subprocess: start up, cap the address space, then call ``CALL`` on ``PATH``.
SCRIPT = textwrap.dedent("""
    import json, resource, sys, numpy as np, bloscpack
    path, budget, call = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open("/proc/self/statm") as fh:
        used = int(fh.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + budget, used + budget))
    if call == "verify":
        print(bloscpack.verify(path)["ok"])
    elif call == "stepped":
        with bloscpack.open(path) as a:
            step = a.shape[0] // 7
            print(a[::step].tolist())
    elif call == "read":  # load, a full read and verify: what they give, or raise
        def full_read(path):
            with bloscpack.open(path) as a:
                return a[...]
        for read in (bloscpack.load, full_read):
            try:
                print(json.dumps(read(path).sum().item()))
            except bloscpack.errors.BloscpackError as exc:
                print(json.dumps([type(exc).__name__, str(exc)]))
        report = bloscpack.verify(path)
        print(json.dumps([report["ok"], report["problems"]]))
    elif call.startswith("convert:"):  # then a stepped read of the output, as bytes
        out, options = sys.argv[4], json.loads(sys.argv[5]) if len(sys.argv) > 5 else {}
        try:
            bloscpack.convert(path, out, format=call.split(":")[1], **options)
        except bloscpack.errors.BloscpackError as exc:
            sys.exit(f"{type(exc).__name__}: {exc}")
        with bloscpack.open(out) as a:
            items = range(0, a.shape[0], a.shape[0] // 7)
            print(json.dumps([[np.asarray(a[i]).tobytes().hex() for i in items],
                              a.dtype.itemsize]))
""")


def run(path: Path, call: str, *more: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path), str(BUDGET), call, *more],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def refused(path: Path, call: str, *more: str) -> str:
    """The one line ``call`` on ``path`` ends with (an error of bloscpack's tree)."""
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path), str(BUDGET), call, *more],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, ""), done.stderr[-2000:]
    return done.stderr


@pytest.mark.parametrize("entry", [e for e in MANIFEST if e["error"] is None],
                         ids=lambda e: e["file"])  # fmt: skip
def test_a_huge_special_chunk_costs_what_a_read_returns(entry):
    path = BAD / entry["file"]
    header = bloscpack.inspect_chunk(path.read_bytes())
    assert header["kind"] == "special" and header["nbytes"] == entry["value"] > 4 * BUDGET
    assert run(path, "verify") == "True"
    values = json.loads(run(path, "stepped"))
    with bloscpack.open(path) as array:  # what the items are, read one at a time
        step = array.shape[0] // 7
        assert values == [int(array[i]) for i in range(0, array.shape[0], step)]
    assert len(values) == 8


@pytest.mark.parametrize("fmt", ["blp", "b2frame", "sframe", "b2nd", "bcolz"])
@pytest.mark.parametrize("entry", [e for e in MANIFEST if e["error"] is None],
                         ids=lambda e: e["file"])  # fmt: skip
def test_a_huge_special_chunk_converts_within_the_budget(entry, fmt, tmp_path):
    """A special chunk is expanded a piece at a time, as the output's chunks need it (or
    copied as it is)."""
    path = BAD / entry["file"]
    found, itemsize = json.loads(run(path, f"convert:{fmt}", str(tmp_path / f"out.{fmt}")))
    data = path.read_bytes()
    with bloscpack.open(path) as source:  # the same bytes, read a few at a time
        n = source.shape[0] // itemsize
        expected = [bytes(source[i * itemsize : (i + 1) * itemsize]).hex()
                    for i in range(0, n, n // 7)]  # fmt: skip
    assert found == expected and len(found) == 8 and len(data) <= 40


def test_an_output_chunk_that_does_not_fit_in_memory_is_refused(tmp_path):
    path = BAD / "special_value_1g.chunk"  # 1084231584 bytes: two chunks of up to 1 GiB
    out = tmp_path / "out.b2frame"
    message = refused(path, "convert:b2frame", str(out), json.dumps({"chunksize": 2**30}))
    assert message == (
        f"UnsupportedError: {path}: a chunk of 1073741824 bytes to compress does not fit in"
        " memory; give a smaller chunk size\n"
    )
    assert list(tmp_path.iterdir()) == []  # nothing left behind


#: The members of sparse frames and sparse b2nd arrays that are read by what they hold.
SPARSE_MEMBERS = [("sframe", "00000001.chunk"), ("sframe", "chunks.b2frame"),
                  ("b2nd", "00000001.chunk"), ("b2nd", "chunks.b2frame")]  # fmt: skip


@pytest.mark.parametrize(("fmt", "member"), SPARSE_MEMBERS)
def test_a_member_file_extended_to_1_tib_is_read_as_far_as_it_holds_data(tmp_path, fmt, member):
    """A chunk file or ``chunks.b2frame`` made 1 TiB long (a hole after its bytes) is read as
    far as its header says (the chunk's cbytes, the frame's frame_len), not whole."""
    array = np.arange(60_000, dtype="<f8").reshape(600, 100)
    path = tmp_path / f"a.{fmt}"
    options = ({"sparse": True, "chunks": (100, 100), "blocks": (10, 100)} if fmt == "b2nd"
               else {"chunk_size": "64K"})  # fmt: skip
    bloscpack.save(array, path, format=fmt, **options)
    stored = (path / "00000001.chunk").stat().st_size
    cbytes = bloscpack.info(path)["header"]["cbytes"]
    os.truncate(path / member, 2**40)
    lines = [json.loads(line) for line in run(path, "read").splitlines()]
    problems = []  # bytes after the frame in the index file are ignored
    if member != "chunks.b2frame":  # bytes after a chunk in its file are reported
        total = cbytes - stored + 2**40
        problems.append(f"chunk files hold {total} bytes, the header says cbytes {cbytes}")
    assert lines == [array.sum(), array.sum(), [not problems, problems]]


@pytest.mark.parametrize("fmt", ["blp", "chunk", "b2frame", "b2nd"])
def test_a_file_with_a_1_gib_hole_after_its_data_is_read_without_mapping_it_all(tmp_path, fmt):
    """A file 1 GiB longer than its data (a hole) cannot be mapped whole within the budget:
    reads fall back to positioned reads, and a raw chunk is read as far as its cbytes."""
    if fmt == "chunk":
        path = tmp_path / "a.chunk"
        path.write_bytes((DATA / "blosc2/chunks/m_lz4_shuffle.chunk").read_bytes())
    else:
        path = tmp_path / f"a.{fmt}"
        bloscpack.save(np.random.default_rng(1).integers(0, 1000, 2_000_000), path)
    total = int(bloscpack.load(path).sum())
    os.truncate(path, path.stat().st_size + 2**30)
    lines = [json.loads(line) for line in run(path, "read").splitlines()]
    assert lines == [total, total, [True, []]]


def test_a_chunk_claim_the_file_holds_but_memory_cannot_is_refused(tmp_path):
    """A raw chunk whose cbytes claims 2 GiB in a file made 1 TiB long: the bytes are
    there, the memory is not; our error, not a MemoryError."""
    data = bytearray((DATA / "blosc2/chunks/m_lz4_shuffle.chunk").read_bytes())
    struct.pack_into("<i", data, 12, 2**31 - 1)  # cbytes
    path = tmp_path / "a.chunk"
    path.write_bytes(data)
    os.truncate(path, 2**40)
    message = f"{path}: Blosc chunk at offset 0: its 2147483647 bytes do not fit in memory"
    lines = [json.loads(line) for line in run(path, "read").splitlines()]
    assert lines == [["UnsupportedError", message]] * 2 + [[False, []]]
