"""BloscFile against the real bloscpack 0.16: what BloscFile writes (to paths, to file objects,
by appending, through numpy.save and TextIOWrapper) 0.16 reads back exactly, byte-identical to
what 0.16 itself writes for the same bytes and settings; what 0.16 writes BloscFile reads with
random access."""

from __future__ import annotations

import hashlib
import io
import json

import numpy as np
import pytest

import bloscpack
from bloscpack import engine

PAYLOAD = (np.arange(40_000, dtype="<i4") % 977).tobytes() + b"last line\n" * 300

# name -> (BloscFile options, the same settings for 0.16's pack_bytes_to_file)
CASES: dict[str, tuple[dict, dict]] = {
    "default": ({}, {}),
    "chunks_1000": ({"chunk_size": 1000}, {"chunk_size": 1000}),
    "zstd_typesize4": (
        {"chunk_size": "16K", "codec": "zstd", "typesize": 4, "clevel": 9},
        {"chunk_size": "16K", "blosc": {"cname": "zstd", "typesize": 4, "clevel": 9}},
    ),
    "sha512_no_offsets": (
        {"chunk_size": 7777, "checksum": "sha512", "offsets": False},
        {"chunk_size": 7777, "pack": {"checksum": "sha512", "offsets": False}},
    ),
    "no_checksum_noshuffle": (
        {"chunk_size": "32K", "checksum": None, "shuffle": False, "max_app_chunks": 2},
        {
            "chunk_size": "32K",
            "pack": {"checksum": "None", "max_app_chunks": 2},
            "blosc": {"shuffle": False},
        },
    ),
    "metadata": (
        {"chunk_size": 50_000, "metadata": {"name": "ints", "list": [1, 2.5, None]}},
        {"chunk_size": 50_000, "metadata": {"name": "ints", "list": [1, 2.5, None]}},
    ),
}

ORACLE_WRITE = """
import json, sys, blosc
blosc.set_nthreads(1)
cases, payload, out_dir = json.load(open(sys.argv[1])), open(sys.argv[2], 'rb').read(), sys.argv[3]
for name, s in cases.items():
    bloscpack.pack_bytes_to_file(
        payload, out_dir + '/' + name + '.blp', chunk_size=s.get('chunk_size', '1M'),
        metadata=s.get('metadata'), blosc_args=bloscpack.BloscArgs(**s.get('blosc', {})),
        bloscpack_args=bloscpack.BloscpackArgs(**s.get('pack', {})))
"""

ORACLE_READ = """
import json, sys, hashlib
out = {}
for path in sys.argv[1:]:
    data, metadata = bloscpack.unpack_bytes_from_file(path)
    out[path] = [hashlib.sha256(data).hexdigest(), len(data), metadata]
print(json.dumps(out))
"""


@pytest.fixture(autouse=True)
def one_thread():
    old = engine.set_nthreads(1)
    yield
    engine.set_nthreads(old)


def test_016_reads_what_bloscfile_writes_and_writes_the_same_bytes(bloscpack016, tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    for name, (options, _) in CASES.items():
        with bloscpack.BloscFile(ours / f"{name}.blp", "wb", **options) as f:
            for start in range(0, len(PAYLOAD), 3333):
                f.write(PAYLOAD[start : start + 3333])
    spec = tmp_path / "cases.json"
    spec.write_text(json.dumps({name: settings for name, (_, settings) in CASES.items()}))
    (tmp_path / "payload.bin").write_bytes(PAYLOAD)
    bloscpack016.run(ORACLE_WRITE, str(spec), str(tmp_path / "payload.bin"), str(theirs))
    paths = [str(ours / f"{name}.blp") for name in CASES]
    read_by_016 = json.loads(bloscpack016.run(ORACLE_READ, *paths).stdout)
    digest = hashlib.sha256(PAYLOAD).hexdigest()
    for name, (options, _) in CASES.items():
        mine = ours / f"{name}.blp"
        assert read_by_016[str(mine)] == [digest, len(PAYLOAD), options.get("metadata")], name
        assert mine.read_bytes() == (theirs / f"{name}.blp").read_bytes(), name


def test_016_reads_file_objects_appends_numpy_and_text(bloscpack016, tmp_path):
    to_fileobj = io.BytesIO()
    with bloscpack.BloscFile(to_fileobj, "wb", chunk_size=4096) as f:
        f.write(PAYLOAD)
    (tmp_path / "fileobj.blp").write_bytes(to_fileobj.getvalue())

    appended = tmp_path / "appended.blp"
    with bloscpack.BloscFile(appended, "wb", chunk_size=5000) as f:
        f.write(PAYLOAD[:12_345])
    with bloscpack.BloscFile(appended, "ab") as f:
        f.write(PAYLOAD[12_345:])

    array = np.arange(20_000, dtype=">f8").reshape(100, 200)
    with bloscpack.BloscFile(tmp_path / "array.blp", "wb", chunk_size="8K") as f:
        np.save(f, array)
    npy = io.BytesIO()
    np.save(npy, array)

    text = "".join(f"{i}: ünïcode\n" for i in range(3000))
    with bloscpack.open_file(tmp_path / "text.blp", "wt", encoding="utf-8") as f:
        f.write(text)

    names = ["fileobj", "appended", "array", "text"]
    read_by_016 = json.loads(
        bloscpack016.run(ORACLE_READ, *(str(tmp_path / f"{n}.blp") for n in names)).stdout
    )
    expected = {
        "fileobj": PAYLOAD,
        "appended": PAYLOAD,
        "array": npy.getvalue(),
        "text": text.encode("utf-8"),
    }
    for name in names:
        data = expected[name]
        assert read_by_016[str(tmp_path / f"{name}.blp")] == [
            hashlib.sha256(data).hexdigest(),
            len(data),
            None,
        ], name


ORACLE_WRITE_FILES = """
import sys, blosc, numpy
blosc.set_nthreads(1)
payload = open(sys.argv[1], 'rb').read()
bloscpack.pack_bytes_to_file(payload, sys.argv[2] + '/bytes.blp', chunk_size=3000,
                             metadata={'k': 'v'})
bloscpack.pack_bytes_to_file(payload, sys.argv[2] + '/nooffsets.blp', chunk_size=2500,
                             bloscpack_args=bloscpack.BloscpackArgs(offsets=False))
"""


def test_bloscfile_reads_what_016_writes_with_random_access(bloscpack016, tmp_path):
    (tmp_path / "payload.bin").write_bytes(PAYLOAD)
    bloscpack016.run(ORACLE_WRITE_FILES, str(tmp_path / "payload.bin"), str(tmp_path))
    rng = np.random.default_rng(16)
    for name, metadata in [("bytes", {"k": "v"}), ("nooffsets", None)]:
        with bloscpack.BloscFile(tmp_path / f"{name}.blp") as f:
            assert f.metadata == metadata
            for start in rng.integers(0, len(PAYLOAD), 20).tolist():
                f.seek(start)
                assert f.read(5000) == PAYLOAD[start : start + 5000]
            f.seek(0)
            assert f.read() == PAYLOAD
