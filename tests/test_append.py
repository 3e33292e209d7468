"""Appending to .blp files: bloscpack 0.16's results byte for byte, and what 0.16 got wrong."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import struct
from pathlib import Path

import pytest
from conftest import DATA, load_manifest

import bloscpack
from bloscpack import engine
from bloscpack.containers.bloscpack.append import (
    JOURNAL_SUFFIX,
    append,
    append_fp,
    journal_path,
    recover,
)
from bloscpack.containers.bloscpack.header import BloscpackHeader
from bloscpack.errors import ChecksumMismatch, NotEnoughSpace

CORPUS = DATA / "bloscpack"
INPUTS = CORPUS / "inputs"
MANIFEST = {entry["file"]: entry for entry in load_manifest("bloscpack")["files"]}


@pytest.fixture(autouse=True)
def one_thread():
    """One C thread, so compressed bytes are reproducible (as in the corpus)."""
    old = engine.set_nthreads(1)
    yield
    engine.set_nthreads(old)


def read_payload(bloscpack016, path: Path) -> tuple[str, object]:
    """(sha256 of the decompressed bytes, metadata) as bloscpack 0.16 reads them."""
    code = (
        "import sys, json, hashlib\n"
        "data, meta = bloscpack.unpack_bytes_from_file(sys.argv[1])\n"
        "print(json.dumps([hashlib.sha256(data).hexdigest(), meta]))\n"
    )
    return tuple(json.loads(bloscpack016.run(code, str(path)).stdout))  # type: ignore[return-value]


def make_016(bloscpack016, tmp_path: Path, name: str, *cli_args: str) -> Path:
    """A file written by bloscpack 0.16's ``blpk -n 1 c``."""
    out = tmp_path / name
    proc = bloscpack016.cli("-n", "1", "c", *cli_args, str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def header_of(path: Path) -> BloscpackHeader:
    return BloscpackHeader.decode(path.read_bytes()[:32])


# --- byte for byte what 0.16 wrote ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "create", "new"),
    [
        ("cli_append_squeeze.blp", ["-z", "64K", "ints_200000.bin"], "small_2000.bin"),
        ("cli_append_newchunks.blp", ["-z", "1000", "small_2000.bin"], "text_5000.txt"),
        ("cli_append_partial_then_new.blp", ["-z", "64K", "ints_200000.bin"], "text_150000.txt"),
        ("cli_append_exhaust.blp", ["-z", "1000", "small_2000.bin"], "ints_20000.bin"),
    ],
)
def test_append_equals_016_bytes(bloscpack016, tmp_path, name, create, new):
    *options, source = create
    path = make_016(bloscpack016, tmp_path, "x.blp", *options, str(INPUTS / source))
    append(path, INPUTS / new)
    assert path.read_bytes() == (CORPUS / name).read_bytes()
    assert not Path(journal_path(path)).exists()


def test_append_truncates_stale_bytes(bloscpack016, tmp_path):
    """0.16 left 479 stale bytes after the shorter re-compressed last chunk; we cut them."""
    path = make_016(
        bloscpack016, tmp_path, "x.blp", "-l", "0", "-z", "1000", str(INPUTS / "zeros_1500.bin")
    )
    append(path, INPUTS / "zeros_100.bin")
    expected = (CORPUS / "cli_append_shrink_garbage.blp").read_bytes()
    entry = MANIFEST["cli_append_shrink_garbage.blp"]
    assert path.read_bytes() == expected[: len(expected) - entry["trailing_bytes"]]
    assert read_payload(bloscpack016, path)[0] == entry["payload_sha256"]


def test_append_twice_api(bloscpack016, tmp_path):
    path = tmp_path / "x.blp"
    code = (
        "import sys\n"
        "data = open(sys.argv[2], 'rb').read()[:3000]\n"
        "bloscpack.pack_bytes_to_file(data, sys.argv[1], chunk_size=1024)\n"
    )
    bloscpack016.run(code, str(path), str(INPUTS / "ints_200000.bin"))
    assert append(path, INPUTS / "text_5000.txt") == 5
    assert append(path, INPUTS / "random_300.bin") == 1
    assert path.read_bytes() == (CORPUS / "api_append_twice.blp").read_bytes()


# --- what 0.16 could not do ---------------------------------------------------------------


def test_append_without_offsets(bloscpack016, tmp_path):
    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_no_offsets.blp", path)
    new = (INPUTS / "text_150000.txt").read_bytes()
    original = (INPUTS / "ints_200000.bin").read_bytes()
    assert append(path, INPUTS / "text_150000.txt") == 2
    header = header_of(path)
    assert (header.offsets, header.nchunks, header.max_app_chunks) == (False, 6, 0)
    assert (header.chunk_size, header.last_chunk) == (65536, (200000 + 150000) % 65536)
    digest, meta = read_payload(bloscpack016, path)
    assert digest == hashlib.sha256(original + new).hexdigest()
    assert meta is None


def test_append_uses_the_files_typesize(bloscpack016, tmp_path):
    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_clevel9_typesize4.blp", path)
    append(path, INPUTS / "text_150000.txt")
    data = path.read_bytes()
    header = header_of(path)
    offsets = struct.unpack_from(f"<{header.nchunks}q", data, 32)
    for offset in offsets[3:]:
        assert data[offset + 3] == 4  # Blosc typesize byte of every rewritten/new chunk
    expected = (INPUTS / "ints_200000.bin").read_bytes() + (INPUTS / "text_150000.txt").read_bytes()
    assert read_payload(bloscpack016, path)[0] == hashlib.sha256(expected).hexdigest()


def test_append_explicit_blosc_args(bloscpack016, tmp_path):
    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_chunk_1K.blp", path)
    append(path, INPUTS / "text_5000.txt", blosc_args={"cname": "zstd", "clevel": 9, "typesize": 1})
    data = path.read_bytes()
    header = header_of(path)
    offsets = struct.unpack_from(f"<{header.nchunks}q", data, 32)
    assert all(data[o + 2] >> 5 == 4 and data[o + 3] == 1 for o in offsets[1:])  # zstd, typesize 1
    expected = (INPUTS / "small_2000.bin").read_bytes() + (INPUTS / "text_5000.txt").read_bytes()
    assert read_payload(bloscpack016, path)[0] == hashlib.sha256(expected).hexdigest()


def test_append_to_empty_file(bloscpack016, tmp_path):
    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_empty.blp", path)
    assert append(path, INPUTS / "text_5000.txt") == 0
    header = header_of(path)
    assert (header.chunk_size, header.last_chunk, header.nchunks) == (5000, 5000, 1)
    expected = (INPUTS / "text_5000.txt").read_bytes()
    assert read_payload(bloscpack016, path)[0] == hashlib.sha256(expected).hexdigest()


def test_append_nothing_changes_nothing(tmp_path):
    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_chunk_1K.blp", path)
    assert append(path, INPUTS / "empty.bin") == 0
    assert path.read_bytes() == (CORPUS / "cli_chunk_1K.blp").read_bytes()


def test_not_enough_space_leaves_file_unchanged(tmp_path):
    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_append_exhaust.blp", path)
    with pytest.raises(NotEnoughSpace) as raised:
        append(path, INPUTS / "small_2000.bin")
    assert str(raised.value) == (
        f"{path}: not enough space: appending 2000 bytes needs 2 new chunks, but only 0 offset"
        " slots are left; rewrite it with room for more appends:"
        f" bloscpack.convert({str(path)!r}, 'larger.blp', max_app_chunks=222)"
    )
    assert path.read_bytes() == (CORPUS / "cli_append_exhaust.blp").read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["x.blp"]


def test_bad_last_chunk_checksum_is_refused(tmp_path):
    path = tmp_path / "x.blp"
    data = bytearray((CORPUS / "cli_chunk_1K.blp").read_bytes())
    data[-1] ^= 0xFF  # last byte of the last digest
    path.write_bytes(data)
    with pytest.raises(ChecksumMismatch) as info:
        append(path, INPUTS / "small_2000.bin")
    with pytest.raises(ChecksumMismatch) as loaded:
        bloscpack.load(path)
    assert str(info.value) == str(loaded.value)
    assert str(info.value).startswith(f"{path}: Checksum mismatch detected in chunk 1 (adler32)")
    assert path.read_bytes() == data
    assert sorted(os.listdir(tmp_path)) == ["x.blp"]


def test_append_fp_in_memory(bloscpack016, tmp_path):
    buffer = io.BytesIO((CORPUS / "cli_chunk_1K.blp").read_bytes())
    new = (INPUTS / "text_5000.txt").read_bytes()
    assert append_fp(buffer, io.BytesIO(new), len(new)) == 5
    path = tmp_path / "x.blp"
    path.write_bytes(buffer.getvalue())
    expected = (INPUTS / "small_2000.bin").read_bytes() + new
    assert read_payload(bloscpack016, path)[0] == hashlib.sha256(expected).hexdigest()


def test_append_fp_file_is_journaled(tmp_path):
    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_chunk_1K.blp", path)
    new = (INPUTS / "text_5000.txt").read_bytes()
    with open(path, "r+b") as fp:
        assert append_fp(fp, io.BytesIO(new), len(new)) == 5
    assert sorted(os.listdir(tmp_path)) == ["x.blp"]


def test_short_new_data_rolls_back(tmp_path):
    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_chunk_1K.blp", path)
    new = (INPUTS / "text_5000.txt").read_bytes()
    with open(path, "r+b") as fp, pytest.raises(Exception, match="ended early"):
        append_fp(fp, io.BytesIO(new[:3000]), len(new))
    assert path.read_bytes() == (CORPUS / "cli_chunk_1K.blp").read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["x.blp"]


# --- the journal --------------------------------------------------------------------------


def test_recover_without_journal_is_a_no_op(tmp_path):
    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_chunk_1K.blp", path)
    assert recover(path) is False
    assert recover(tmp_path / "missing.blp") is False


def test_torn_journal_is_dropped(tmp_path):
    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_chunk_1K.blp", path)
    Path(journal_path(path)).write_bytes(b"BLPKJRNL\x01\x00")
    Path(journal_path(path) + ".tmp").write_bytes(b"BLPK")
    assert recover(path) is False
    assert path.read_bytes() == (CORPUS / "cli_chunk_1K.blp").read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["x.blp"]


def test_stale_journal_of_a_replaced_file_is_dropped(tmp_path):
    """A journal left by an append to a file that was since replaced must not touch the new one."""
    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_chunk_1K.blp", path)
    env = dict(os.environ, BLOSCPACK_APPEND_KILL_AFTER="5")
    import subprocess
    import sys

    code = (
        "import sys; from bloscpack.containers.bloscpack.append import append;"
        " append(sys.argv[1], sys.argv[2])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path), str(INPUTS / "text_5000.txt")],
        env=env,
        capture_output=True,
    )
    assert proc.returncode == -9
    assert Path(journal_path(path)).exists()
    replacement = tmp_path / "new.blp"
    shutil.copy(CORPUS / "cli_chunk_max.blp", replacement)
    os.replace(replacement, path)
    assert recover(path) is False
    assert path.read_bytes() == (CORPUS / "cli_chunk_max.blp").read_bytes()
    assert not Path(journal_path(path)).exists()


def test_journal_suffix():
    assert JOURNAL_SUFFIX == ".journal"
    assert journal_path("a/b.blp") == "a/b.blp.journal"


def test_append_with_new_metadata_equals_016(bloscpack016, tmp_path):
    """0.16's ``blpk a -c zstd -l 9 -m meta2.json``: data appended and metadata rewritten."""
    path = make_016(bloscpack016, tmp_path, "x.blp", "-m", str(INPUTS / "meta.json"), "-z", "1000",
                    str(INPUTS / "small_2000.bin"))  # fmt: skip
    metadata = json.loads((INPUTS / "meta2.json").read_text())
    append(path, INPUTS / "ints_1500.bin", {"cname": "zstd", "clevel": 9}, metadata=metadata)
    assert path.read_bytes() == (CORPUS / "cli_append_codec_meta.blp").read_bytes()


def test_same_metadata_is_not_an_error(tmp_path):
    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_metadata.blp", path)
    metadata = MANIFEST["cli_metadata.blp"]["expected_metadata"]
    assert append(path, INPUTS / "empty.bin", metadata=metadata) == 0
    assert path.read_bytes() == (CORPUS / "cli_metadata.blp").read_bytes()


def test_metadata_too_large_leaves_file_unchanged(tmp_path):
    from bloscpack.errors import MetadataSectionTooSmall

    path = tmp_path / "x.blp"
    shutil.copy(CORPUS / "cli_metadata.blp", path)
    with pytest.raises(MetadataSectionTooSmall):
        append(path, INPUTS / "small_2000.bin", metadata={"k": os.urandom(600).hex()})
    assert path.read_bytes() == (CORPUS / "cli_metadata.blp").read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["x.blp"]


def test_blosc2_file_gets_blosc2_chunks(tmp_path):
    """A file of Blosc2 chunks (delta filter) keeps its chunk format and filters."""
    from bloscpack.api import pack_bytes_to_file, unpack_bytes_from_file
    from bloscpack.containers.bloscpack.args import BloscArgs

    data = struct.pack("<2000q", *range(0, 20000, 10))
    path = tmp_path / "x.blp"
    args = BloscArgs(blosc_version=2, filters=["delta", "shuffle"], cname="zstd")
    pack_bytes_to_file(data, str(path), chunk_size=4096, blosc_args=args)
    more = struct.pack("<1000q", *range(20000, 30000, 10))
    (tmp_path / "more.bin").write_bytes(more)
    assert append(path, tmp_path / "more.bin") == 2  # 384 bytes fill chunk 3, then 4096 + 3520
    raw = path.read_bytes()
    header = header_of(path)
    offsets = struct.unpack_from(f"<{header.nchunks}q", raw, 32)
    for offset in offsets[-3:]:
        assert raw[offset] >= 3  # Blosc2 chunk header version
        assert raw[offset + 16 : offset + 22] == bytes([0, 0, 0, 0, 3, 1])  # delta, shuffle
    assert unpack_bytes_from_file(str(path))[0] == data + more
