"""Every frame and sparse frame of the golden blosc2 corpus, read to its manifest values."""

from __future__ import annotations

import hashlib
import json

import pytest
from conftest import DATA, load_manifest

from bloscpack import Frame
from bloscpack.containers import frame as cframe
from bloscpack.containers import sframe

MANIFEST = load_manifest("blosc2")
FRAMES = [e for e in MANIFEST["entries"] if e["kind"] == "frame"]
SFRAMES = [e for e in MANIFEST["entries"] if e["kind"] == "sframe"]
ROOT = DATA / "blosc2"


def sha(data: bytes | bytearray) -> str:
    return hashlib.sha256(data).hexdigest()


def index_values(frame: Frame) -> list[int | str]:
    return [x if x >= 0 else f"0x{x & (2**64 - 1):016x}" for x in frame.offsets]


def decoded_vlmeta(value: object) -> object:
    """The manifest shows bytes as {"__bytes__": hex}."""
    if isinstance(value, bytes):
        return {"__bytes__": value.hex()}
    if isinstance(value, dict):
        return {k: decoded_vlmeta(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [decoded_vlmeta(v) for v in value]
    return value


def check_entry(frame: Frame, entry: dict) -> None:
    assert frame.nchunks == entry["nchunks"]
    assert frame.nbytes == entry["nbytes"]
    assert frame.typesize == entry["typesize"]
    assert frame.chunksize == entry["chunksize"]
    header = frame.header
    for key, value in entry["header"].items():
        if key in header:
            assert header[key] == value, key
    assert index_values(frame) == (entry["index"] or [])
    for i, chunk in enumerate(entry["chunks"]):
        stored = frame.read_chunk(i)
        assert len(stored) == chunk["get_chunk_len"]
        assert sha(stored) == chunk["get_chunk_sha256"], i
        data = frame.decompress_chunk(i)
        assert len(data) == chunk["nbytes"]
        if chunk["sha256"] is not None:  # None: uninitialised content
            assert sha(data) == chunk["sha256"], i
    assert [(name, frame.meta.raw(name).hex()) for name in frame.meta] == [
        (m["name"], m["hex"]) for m in entry["metalayers"]
    ]
    for m in entry["metalayers"]:
        assert json.loads(json.dumps(decoded_vlmeta(frame.meta[m["name"]]))) == m["decoded"]
    assert list(frame.vlmeta) == [v["name"] for v in entry["vlmeta"]]
    for v in entry["vlmeta"]:
        assert frame.vlmeta.raw(v["name"]).hex() == v["msgpack_hex"]
        assert json.loads(json.dumps(decoded_vlmeta(frame.vlmeta[v["name"]]))) == v["value"]


@pytest.mark.parametrize("entry", FRAMES, ids=[e["path"] for e in FRAMES])
def test_contiguous_frame_matches_manifest(entry: dict) -> None:
    path = ROOT / entry["path"]
    with Frame(path, offset=entry.get("offset", 0)) as frame:
        assert not frame.sparse
        check_entry(frame, entry)
        stored_vlmeta = [(n, c.hex()) for n, c in frame._core.vlmeta]
        assert stored_vlmeta == [(v["name"], v["chunk_hex"]) for v in entry["vlmeta"]]


@pytest.mark.parametrize("entry", FRAMES, ids=[e["path"] for e in FRAMES])
def test_contiguous_frame_from_bytes(entry: dict) -> None:
    data = (ROOT / entry["path"]).read_bytes()[entry.get("offset", 0) :]
    with Frame(data) as frame:
        check_entry(frame, entry)
        assert frame.to_bytes() == data


@pytest.mark.parametrize("entry", SFRAMES, ids=[e["path"] for e in SFRAMES])
def test_sparse_frame_matches_manifest(entry: dict) -> None:
    path = ROOT / entry["path"]
    assert sframe.sniff_dir(path)
    with Frame(path) as frame:
        assert frame.sparse
        check_entry(frame, entry)
        for i, chunk in enumerate(entry["chunks"]):
            if "file" in chunk:
                assert sframe.chunk_file_name(frame.offsets[i]) == chunk["file"]


def test_sparse_frame_via_index_file() -> None:
    path = ROOT / "sframes" / "plain.b2frame" / "chunks.b2frame"
    with Frame(path) as frame:
        assert frame.sparse and frame.nchunks == 12


def test_sniff() -> None:
    assert cframe.sniff((ROOT / "frames" / "one_chunk.b2frame").read_bytes()[:16])
    assert not cframe.sniff(b"\x9e\xa8b2frame")  # too short to hold the magic
    assert not cframe.sniff((ROOT / "frames" / "embedded_offset100.bin").read_bytes()[:16])
    assert not sframe.sniff_dir(ROOT / "frames")
    assert sframe.sniff_dir(ROOT / "sframes" / "delete.b2frame")


def test_info_is_json_and_lists_the_index() -> None:
    entry = next(e for e in FRAMES if e["path"] == "frames/specials_update.b2frame")
    info = cframe.info(ROOT / entry["path"])
    assert json.loads(json.dumps(info)) == info
    assert info["index"] == entry["index"]
    assert info["header"]["cbytes"] == entry["header"]["cbytes"]
    sentry = next(e for e in SFRAMES if e["path"] == "sframes/meta_vlmeta.b2frame")
    sinfo = sframe.info(ROOT / sentry["path"])
    assert [m["name"] for m in sinfo["vlmetalayers"]] == [v["name"] for v in sentry["vlmeta"]]
    assert [m["hex"] for m in sinfo["metalayers"]] == [m["hex"] for m in sentry["metalayers"]]
    assert sinfo["index"] == sentry["index"]


@pytest.mark.parametrize("entry", FRAMES + SFRAMES, ids=[e["path"] for e in FRAMES + SFRAMES])
def test_verify_corpus(entry: dict) -> None:
    if entry.get("offset"):
        pytest.skip("embedded frames are verified through Frame(..., offset=)")
    module = sframe if entry["kind"] == "sframe" else cframe
    report = module.verify(ROOT / entry["path"])
    assert report["format"] == ("sframe" if entry["kind"] == "sframe" else "b2frame")
    assert report["nchunks"] == entry["nchunks"]
    assert report["ok"], report
