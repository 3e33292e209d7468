"""BloscArray on the golden corpora: every file opened lazily reads exactly the bytes the
manifests record, selections equal the same selections of the fully loaded array, and
chunks iterate with the recorded payloads."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from conftest import DATA, load_manifest

import bloscpack
from bloscpack import dispatch
from bloscpack.containers.bloscpack import BloscpackReader
from bloscpack.containers.frame.api import Frame
from bloscpack.errors import BloscpackError, ChecksumMismatch, LazyChunkError, UnsupportedError

SELECTIONS = np.random.default_rng(20240601)


def sha256(a: np.ndarray, order: str = "C") -> str:
    return hashlib.sha256(a.tobytes(order=order)).hexdigest()


def selections(shape: tuple[int, ...], count: int = 25) -> list[tuple]:
    """Integers, and slices with positive and negative steps, on every axis."""
    out = []
    for _ in range(count):
        index = []
        for n in shape:
            if n and SELECTIONS.random() < 0.3:
                index.append(int(SELECTIONS.integers(-n, n)))
            else:
                lo, hi = SELECTIONS.integers(-n - 2, n + 3, size=2)
                index.append(slice(int(lo), int(hi), int(SELECTIONS.choice([-5, -2, -1, 1, 3]))))
        out.append(tuple(index))
    return out


def same_values(got, expected) -> bool:
    """Equal items: bytes compared field by field (padding bytes of structured items are not
    part of their value)."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.dtype.names:
        return all(same_values(got[name], expected[name]) for name in got.dtype.names)
    return got.shape == expected.shape and got.tobytes() == expected.tobytes()


def check_against_load(array: bloscpack.BloscArray, loaded: np.ndarray, undefined=None) -> None:
    """Selections equal those of the fully ``loaded`` array; ``undefined``: a mask of items
    with undefined content (uninitialized chunks), compared only as a whole."""
    assert array.shape == loaded.shape and array.dtype == loaded.dtype
    if undefined is not None:
        got = np.asarray(array)
        np.testing.assert_array_equal(got[~undefined], loaded[~undefined])
        return
    for index in selections(loaded.shape):
        got, expected = array[index], loaded[index]
        assert type(got) is type(expected)
        assert same_values(got, expected), index


# --- .blp ---------------------------------------------------------------------------------

BLP = load_manifest("bloscpack")


@pytest.mark.parametrize("entry", BLP["files"], ids=lambda e: e["file"])
def test_blp_corpus(entry):
    path = DATA / "bloscpack" / entry["file"]
    with bloscpack.open(path) as array:
        assert array.format == "blp"
        assert array.metadata == (entry["expected_metadata"] if entry["kind"] == "bytes"
                                  else array.metadata)  # fmt: skip
        if entry["kind"] == "bytes":
            assert (array.shape, array.dtype) == ((entry["payload_len"],), np.uint8)
        order = array.metadata["order"] if entry["kind"] == "ndarray" else "C"
        assert sha256(np.asarray(array), order) == entry["payload_sha256"]
        if entry["kind"] == "ndarray":
            loaded = dispatch.load(path)
        else:  # (some user metadata looks like numpy metadata: load() refuses it)
            with BloscpackReader(path) as reader:
                loaded = np.frombuffer(reader.read_all(), np.uint8)
        check_against_load(array, loaded)


@pytest.mark.parametrize("entry", BLP["invalid_files"], ids=lambda e: e["file"])
def test_blp_corpus_invalid_files(entry):
    path = DATA / "bloscpack" / entry["file"]
    with pytest.raises(BloscpackError) as info, bloscpack.open(path) as array:
        np.asarray(array)
    if entry["file"].startswith("bad_chunk_"):
        assert isinstance(info.value, ChecksumMismatch)


# --- b2nd ---------------------------------------------------------------------------------

B2ND = load_manifest("b2nd")


@pytest.mark.parametrize("entry", B2ND["files"], ids=lambda e: e["file"])
def test_b2nd_corpus(entry):
    path = DATA / "b2nd" / entry["file"]
    with bloscpack.open(path) as array:
        assert array.format == "b2nd"
        assert (list(array.shape), array.chunks) == (entry["shape"], tuple(entry["chunks"]))
        data = np.asarray(array)
        assert hashlib.sha256(data.tobytes()).hexdigest() == entry["sha256_c_order_array_bytes"]
        check_against_load(array, dispatch.load(path))


# --- bcolz --------------------------------------------------------------------------------

BCOLZ = load_manifest("bcolz")


@pytest.mark.parametrize("case", BCOLZ["cases"], ids=lambda c: c["name"])
def test_bcolz_corpus(case):
    path = DATA / "bcolz" / case["name"]
    if case["dtype"]["str"] == "object":
        with pytest.raises(UnsupportedError, match="object carray"):
            bloscpack.open(path)
        return
    with bloscpack.open(path) as array:
        assert array.format == "bcolz" and list(array.shape) == case["shape"]
        if case["attrs"] is not None:  # None: attributes JSON cannot compare (NaN)
            assert array.metadata == case["attrs"]
        assert sha256(np.ascontiguousarray(np.asarray(array))) == case["sha256"]
        for column in case.get("columns", []):
            data = np.asarray(array[column["name"]])
            assert sha256(np.ascontiguousarray(data)) == column["sha256"], column["name"]
        check_against_load(array, dispatch.load(path))


# --- Blosc2 chunks, frames, sparse frames, NDArrays -----------------------------------------

BLOSC2 = load_manifest("blosc2")


@pytest.mark.parametrize("entry", BLOSC2["entries"], ids=lambda e: e["path"])
def test_blosc2_corpus(entry):
    path = DATA / "blosc2" / entry["path"]
    if "offset" in entry:  # a frame embedded in a larger file: open it from a file object
        with open(path, "rb") as fh:
            fh.seek(entry["offset"])
            with bloscpack.open(fh) as array:
                with Frame(path, offset=entry["offset"]) as frame:
                    loaded = np.frombuffer(frame.read_all(), np.uint8)
                check_raw_frame(array, entry, loaded)
        return
    with bloscpack.open(path) as array:
        assert array.format == {"frame": "b2frame"}.get(entry["kind"], entry["kind"])
        if entry["kind"] == "chunk":
            payload = entry["payload"]
            assert (array.shape, array.dtype) == ((payload["nbytes"],), np.uint8)
            if "lazy" in entry:  # its blocks are in its frame: not decodable alone
                with pytest.raises(LazyChunkError, match="cannot be decoded alone"):
                    array[0]
                return
            if payload["sha256"] is None:  # an uninitialized chunk: undefined content
                return
            assert sha256(np.asarray(array)) == payload["sha256"]
            check_against_load(array, dispatch.load(path))
        elif entry["kind"] == "b2nd":
            nd = entry["ndarray"]
            assert (list(array.shape), array.chunks) == (nd["shape"], tuple(nd["chunks"]))
            assert sha256(np.asarray(array)) == nd["sha256"]
            check_against_load(array, dispatch.load(path))
        else:
            check_raw_frame(array, entry, dispatch.load(path))


def check_raw_frame(array, entry, loaded) -> None:
    """A raw frame reads as its chunks' bytes: each chunk's payload (by iter_chunks) and
    every selection (uninitialized chunks excluded)."""
    assert (array.shape, array.dtype) == ((entry["nbytes"],), np.uint8)
    pieces = list(array.iter_chunks())
    undefined = np.zeros(array.shape, dtype=bool)
    pos = 0
    for piece, chunk in zip(pieces, entry["chunks"], strict=True):
        assert piece.nbytes == chunk["nbytes"]
        if chunk["sha256"] is None:
            undefined[pos : pos + chunk["nbytes"]] = True
        else:
            assert sha256(piece) == chunk["sha256"]
        pos += chunk["nbytes"]
    check_against_load(array, loaded, undefined if undefined.any() else None)
