"""bloscpack.convert on the golden corpora: every file converted to every format reads back to
its manifest's SHA-256 (and metadata), the real tools read the outputs, and every invalid
file fails to convert without leaving anything behind."""

from __future__ import annotations

import hashlib
import json
import math
import os
import warnings
from pathlib import Path

import blosc2
import numpy as np
import pytest
from conftest import DATA, load_manifest

import bloscpack
from bloscpack import engine
from bloscpack.api import unpack_bytes_from_file
from bloscpack.containers.bloscpack import read_metadata_section
from bloscpack.convert import NUMPY_KEYS, convert, open_source
from bloscpack.errors import ArgumentError, BloscpackError, UnsupportedError
from bloscpack.ndarray import dtype_from_metadata

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    bcolz = pytest.importorskip("bcolz")

TARGETS = ["blp", "b2frame", "sframe", "b2nd", "bcolz"]
BLP = load_manifest("bloscpack")
B2ND = load_manifest("b2nd")
BCOLZ = load_manifest("bcolz")
BLOSC2 = load_manifest("blosc2")


@pytest.fixture(autouse=True)
def one_thread():
    previous = engine.set_nthreads(1)
    yield
    engine.set_nthreads(previous)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_back(path: Path) -> np.ndarray:
    with bloscpack.open(path) as arr:
        return np.asarray(arr)


def convert_to(src: Path, tmp_path: Path, target: str, shape: tuple[int, ...], itemsize: int):
    """Convert ``src`` to ``target`` in ``tmp_path``; None when bcolz cannot hold the array
    (0-d, or rows of no bytes), which must then be refused with nothing written."""
    out = tmp_path / f"out.{target}"
    options = {"durable": False} if target == "bcolz" else {}
    if target == "bcolz" and (not shape or math.prod(shape[1:]) * itemsize == 0):
        with pytest.raises(ArgumentError):
            convert(src, out, format=target, **options)
        assert not out.exists()
        return None, None
    report = convert(src, out, format=target, **options)
    assert sorted(os.listdir(tmp_path)) == [out.name]
    return out, report


def raw_back(back: np.ndarray, src: Path, target: str) -> np.ndarray:
    """The bytes a raw-bytes source converted to ``target`` reads back as: b2nd and bcolz
    store them as unsigned ints of the typesize of the source's chunks (when they are whole
    items of 2, 4 or 8 bytes), the other formats as bytes."""
    source = open_source(src, bloscpack.detect(src))
    header = source.first_chunk_header()
    source.close()
    typesize = header.typesize if header is not None else 1
    whole = typesize in (2, 4, 8) and back.nbytes % typesize == 0
    kept = whole and target in ("b2nd", "bcolz")
    assert back.dtype == np.dtype(f"<u{typesize}" if kept else "u1")
    return back.view(np.uint8)


def schunk_bytes(path: Path) -> bytes:
    """The data of a frame as python-blosc2 decompresses it, chunk by chunk (its slicing
    crashes on frames of variable-size chunks)."""
    schunk = blosc2.open(str(path))
    return b"".join(bytes(schunk.decompress_chunk(i)) for i in range(schunk.nchunks))


def check_real_tool(out: Path, target: str, back: np.ndarray) -> None:
    """python-blosc2 / bcolz read the same data as bloscpack."""
    if target in ("b2frame", "sframe"):
        assert schunk_bytes(out) == back.tobytes(order="A")
    elif target == "b2nd":
        arr = blosc2.open(str(out))
        data = arr[()] if arr.ndim == 0 else arr[:]
        assert np.asarray(data).tobytes() == np.ascontiguousarray(back).tobytes()
    elif target == "bcolz" and not _nested(back.dtype):  # bcolz cannot reopen those columns
        assert bcolz.open(str(out), mode="r")[:].tobytes() == np.ascontiguousarray(back).tobytes()


def _nested(dtype: np.dtype) -> bool:
    """A structured dtype with a structured field (a ctable column bcolz cannot parse)."""
    return any(dtype[name].base.names for name in dtype.names or ())


# --- bloscpack 0.16 files -----------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("entry", BLP["files"], ids=lambda e: e["file"])
def test_bloscpack_corpus(tmp_path, entry, target):
    src = DATA / "bloscpack" / entry["file"]
    metadata = entry["expected_metadata"]
    if entry["kind"] == "ndarray":
        shape, order = tuple(metadata["shape"]), metadata["order"]
        itemsize = dtype_from_metadata(metadata["dtype"]).itemsize
    else:
        shape, order, itemsize = (entry["payload_len"],), "C", 1
    (tmp_path / "o").mkdir()
    out, report = convert_to(src, tmp_path / "o", target, shape, itemsize)
    if out is None:
        return
    if target == "blp" and entry["kind"] == "bytes":  # the metadata is kept as it is
        back = np.frombuffer(unpack_bytes_from_file(out)[0], dtype=np.uint8)
    else:
        back = read_back(out)
    if entry["kind"] == "bytes":
        back = raw_back(back, src, target)
    assert back.shape == shape
    user, dropped = {}, []
    dtype = dtype_from_metadata(metadata["dtype"]) if entry["kind"] == "ndarray" else back.dtype
    if back.dtype != dtype:  # a ctable holds the fields, not the padding of a structure
        assert target == "bcolz"
        dropped.append(
            f"the layout of dtype {dtype} (padding, offsets or titles): a ctable stores the"
            f" fields only and reads back as {back.dtype}"
        )
        original = read_back(src)
        assert sha(original.tobytes(order=order)) == entry["payload_sha256"]
        for name in dtype.names:
            np.testing.assert_array_equal(back[name], original[name])
    else:
        assert sha(back.tobytes(order=order)) == entry["payload_sha256"]
        check_real_tool(out, target, back)
    if entry["kind"] == "bytes" and isinstance(metadata, dict):
        user = dict(metadata)
        if metadata.get("container") == "numpy":
            # 0.16's CLI writes dtype and shape without order: raw bytes, the rest is kept
            dropped.append(
                "metadata key 'container': the numpy metadata is incomplete (numpy metadata"
                " lacks the 'order' entry), so the data is converted as raw bytes"
            )
            del user["container"]
    elif metadata is not None and not isinstance(metadata, dict):
        dropped.append(
            f"metadata {metadata!r}: only the .blp format holds metadata that is not a mapping"
        )
    if target == "blp":
        assert read_metadata_section(out) == metadata
        assert report["dropped"] == []
        return
    if order == "F" and len(shape) > 1 and target in ("b2nd", "bcolz"):
        dropped.append(f"Fortran order: {target} arrays are C-ordered (values are kept)")
    if target != "bcolz":  # frames hold 16 vlmetalayers
        dropped += [f"metadata key {name!r}: a frame holds at most 16 user vlmetalayers here"
                    for name in list(user)[16:]]  # fmt: skip
        user = dict(list(user.items())[:16])
    assert report["dropped"] == dropped
    if target == "bcolz":
        assert json.loads((out / "__attrs__").read_text()) == user
    elif entry["kind"] == "bytes":
        node = blosc2.open(str(out))
        assert (node.schunk if target == "b2nd" else node).vlmeta.getall() == user


ORACLE_READ = """
import json, sys, hashlib, numpy
out = {}
for path in sys.argv[1:]:
    a = bloscpack.unpack_ndarray_from_file(path)
    out[path] = [list(a.shape), hashlib.sha256(a.tobytes(order='A')).hexdigest()]
print(json.dumps(out))
"""


def test_converted_arrays_are_read_by_bloscpack_016(bloscpack016, tmp_path):
    """Arrays from every corpus, converted to .blp, read by bloscpack 0.16 exactly."""
    expected = {}
    for entry in B2ND["files"]:
        out = tmp_path / f"{entry['file']}.blp"
        convert(DATA / "b2nd" / entry["file"], out)
        expected[str(out)] = [entry["shape"], entry["sha256_c_order_array_bytes"]]
    for case in BCOLZ["cases"]:
        if case["name"] == "ca_object":
            continue
        out = tmp_path / f"{case['name']}.blp"
        convert(DATA / "bcolz" / case["name"], out)
        expected[str(out)] = [case["shape"], case["sha256"]]
    for entry in BLP["files"]:
        if entry["kind"] == "ndarray":
            out = tmp_path / f"{entry['file']}.b2frame"
            convert(DATA / "bloscpack" / entry["file"], out, format="b2frame")
            convert(out, tmp_path / f"{entry['file']}.back.blp")
            expected[str(tmp_path / f"{entry['file']}.back.blp")] = [
                entry["expected_metadata"]["shape"], entry["payload_sha256"]
            ]  # fmt: skip
    result = json.loads(bloscpack016.run(ORACLE_READ, *expected).stdout)
    assert result == expected


@pytest.mark.parametrize("entry", BLP["invalid_files"], ids=lambda e: e["file"])
def test_invalid_bloscpack_files_fail_and_leave_nothing(tmp_path, entry):
    with pytest.raises(BloscpackError):
        convert(DATA / "bloscpack" / entry["file"], tmp_path / "out.b2nd")
    assert os.listdir(tmp_path) == []


# --- python-blosc2 NDArrays ---------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("entry", B2ND["files"], ids=lambda e: e["file"])
def test_b2nd_corpus(tmp_path, entry, target):
    src = DATA / "b2nd" / entry["file"]
    (tmp_path / "o").mkdir()
    out, report = convert_to(src, tmp_path / "o", target, tuple(entry["shape"]), entry["itemsize"])
    if out is None:
        return
    back = read_back(out)
    assert back.shape == tuple(entry["shape"])
    assert back.dtype == blosc2.open(str(src)).dtype
    assert sha(np.require(back, requirements="C").tobytes()) == entry["sha256_c_order_array_bytes"]
    assert report["dropped"] == []
    check_real_tool(out, target, back)
    if target == "b2nd":  # same geometry: every chunk is copied
        assert report["recompressed_chunks"] == 0
        arr, orig = blosc2.open(str(out)), blosc2.open(str(src))
        assert (arr.chunks, arr.blocks) == (orig.chunks, orig.blocks)


# --- bcolz directories --------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", BCOLZ["cases"], ids=lambda c: c["name"])
def test_bcolz_corpus(tmp_path, case, target):
    src = DATA / "bcolz" / case["name"]
    (tmp_path / "o").mkdir()
    if case["name"] == "ca_object":
        with pytest.raises(UnsupportedError, match="pickled Python objects"):
            convert(src, tmp_path / "o" / "x", format=target)
        assert os.listdir(tmp_path / "o") == []
        return
    dtype = bloscpack.open(src).dtype
    out, report = convert_to(src, tmp_path / "o", target, tuple(case["shape"]), dtype.itemsize)
    if out is None:
        return
    back = read_back(out)
    assert back.shape == tuple(case["shape"])
    assert sha(np.ascontiguousarray(back).tobytes()) == case["sha256"]
    check_real_tool(out, target, back)
    attrs = json.loads(case["attrs_raw"])  # the manifest cannot hold NaN
    if target == "bcolz":
        kept = json.loads((out / "__attrs__").read_text())
    else:
        if target == "blp":
            kept = read_metadata_section(out)
        else:
            node = blosc2.open(str(out))
            kept = (node.schunk if target == "b2nd" else node).vlmeta.getall()
        if target != "b2nd":  # the array's numpy metadata comes first
            assert list(kept)[:4] == list(NUMPY_KEYS)
            kept = {k: v for k, v in kept.items() if k not in NUMPY_KEYS}
    too_big = [k for k, v in attrs.items() if isinstance(v, int) and v >= 1 << 64]
    if target in ("b2frame", "sframe", "b2nd"):  # msgpack holds 64-bit integers only
        for name in too_big:
            assert (
                report["dropped"].pop(0).startswith(f"attribute {name!r}: msgpack cannot hold it")
            )
            del attrs[name]
    assert report["dropped"] == []
    assert json.dumps(kept, sort_keys=True) == json.dumps(attrs, sort_keys=True)


# --- python-blosc2 frames -----------------------------------------------------------------

FRAMES = [e for e in BLOSC2["entries"] if e["kind"] != "chunk" and not e["path"].endswith(".bin")]
# a sparse frame rewrites its index on every append: 3000 chunks take too long for a unit test
SLOW = {("frames/many_chunks.b2frame", "sframe")}


@pytest.mark.parametrize(
    ("entry", "target"),
    [(e, t) for e in FRAMES for t in TARGETS if (e["path"], t) not in SLOW],
    ids=lambda x: x if isinstance(x, str) else x["path"],
)
def test_blosc2_frame_corpus(tmp_path, entry, target):
    src = DATA / "blosc2" / entry["path"]
    (tmp_path / "o").mkdir()
    with bloscpack.open(src) as arr:
        shape, itemsize = arr.shape, arr.dtype.itemsize
    out, report = convert_to(src, tmp_path / "o", target, shape, itemsize)
    if out is None:
        return
    back = read_back(out)
    if entry["kind"] != "b2nd":
        back = raw_back(back, src, target)
    assert back.shape == shape
    data = np.require(back, requirements="C").tobytes()
    if entry["kind"] == "b2nd":
        assert data == np.require(blosc2.open(str(src))[()], requirements="C").tobytes()
    else:  # every chunk's bytes, UNINIT chunks (undefined content) aside
        assert len(data) == entry["nbytes"]
        pos = 0
        for chunk in entry["chunks"]:
            if chunk["sha256"] is not None:
                assert sha(data[pos : pos + chunk["nbytes"]]) == chunk["sha256"]
            pos += chunk["nbytes"]
    if not any(chunk["sha256"] is None for chunk in entry["chunks"]):
        check_real_tool(out, target, back)
    source_vlmeta = {item["name"]: item["value"] for item in entry["vlmeta"]}
    if target in ("b2frame", "sframe", "b2nd"):
        node = blosc2.open(str(out))
        kept = (node.schunk if target == "b2nd" else node).vlmeta.getall()
        assert {k: v for k, v in kept.items() if k in source_vlmeta} == {
            k: bytes.fromhex(v["__bytes__"]) if isinstance(v, dict) and "__bytes__" in v else v
            for k, v in source_vlmeta.items()
        }
        metalayers = {m["name"] for m in entry["metalayers"]} - {"b2nd"}
        assert set((node.schunk if target == "b2nd" else node).meta.keys()) >= metalayers
    else:
        assert all(line.startswith(("metalayer ", "vlmetalayer ")) for line in report["dropped"]), (
            report["dropped"]
        )
        dropped_layers = [line for line in report["dropped"] if line.startswith("metalayer ")]
        assert len(dropped_layers) == len([m for m in entry["metalayers"] if m["name"] != "b2nd"])
