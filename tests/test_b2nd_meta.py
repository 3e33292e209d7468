"""The b2nd metalayer codec: exact bytes against python-blosc2's files, and hostile input."""

from __future__ import annotations

import contextlib
import struct

import numpy as np
import pytest
from conftest import load_manifest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloscpack.containers.b2nd.meta import (
    B2ndMeta,
    dtype_from_string,
    dtype_to_string,
    pack_metalayer,
)
from bloscpack.errors import (
    BloscpackError,
    FormatError,
    ObjectNumpyArrayRejection,
    TruncatedError,
    UnsupportedError,
)

B2ND = load_manifest("b2nd")["files"]
BLOSC2_ND = [e for e in load_manifest("blosc2")["entries"] if e["kind"] == "b2nd"]


@pytest.mark.parametrize("entry", B2ND, ids=[e["file"] for e in B2ND])
def test_corpus_metalayer_decodes_and_reencodes(entry):
    raw = bytes.fromhex(entry["metalayer_hex"])
    meta = B2ndMeta.parse(raw, entry["itemsize"])
    assert meta.shape == tuple(entry["shape"])
    assert meta.chunks == tuple(entry["chunks"])
    assert meta.blocks == tuple(entry["blocks"])
    assert meta.dtype_string == entry["b2nd_dtype_string"]
    assert meta.dtype.itemsize == entry["itemsize"]
    assert meta.pack() == raw
    assert len(raw) == 12 + 19 * meta.ndim + len(meta.dtype_string.encode())
    # a new array with the same geometry and dtype gets the bytes python-blosc2 wrote
    fresh = B2ndMeta.from_array_params(meta.shape, meta.chunks, meta.blocks, meta.dtype)
    assert fresh.pack() == raw


@pytest.mark.parametrize("entry", BLOSC2_ND, ids=[e["path"] for e in BLOSC2_ND])
def test_blosc2_corpus_metalayer(entry):
    (layer,) = entry["metalayers"]
    raw = bytes.fromhex(layer["hex"])
    nd = entry["ndarray"]
    meta = B2ndMeta.parse(raw, nd["itemsize"])
    assert (meta.shape, meta.chunks, meta.blocks) == (
        tuple(nd["shape"]),
        tuple(nd["chunks"]),
        tuple(nd["blocks"]),
    )
    assert meta.dtype == np.dtype([tuple(f) for f in nd["descr"]]) or meta.dtype == np.dtype(
        nd["descr"][0][1]
    )
    assert (
        B2ndMeta.from_array_params(meta.shape, meta.chunks, meta.blocks, meta.dtype).pack() == raw
    )


def test_documented_bytes():
    assert (
        pack_metalayer((), (), (), "<f8").hex(" ") == "97 00 00 90 90 90 00 db 00 00 00 03 3c 66 38"
    )
    raw = pack_metalayer((12, 10), (5, 4), (2, 3), "<f8")
    assert raw.hex() == (
        "970002" "92d3000000000000000cd3000000000000000a" "92d200000005d200000004"
        "92d200000002d200000003" "00db000000033c6638"
    )  # fmt: skip


def test_sixteen_dims_use_marker_a0():
    shape = (1,) * 15 + (3,)
    raw = pack_metalayer(shape, shape, shape, "|u1")
    assert raw[3] == 0xA0  # 0x90 + 16: a msgpack fixstr marker, read by position
    assert B2ndMeta.parse(raw, 1).shape == shape


@pytest.mark.parametrize(
    ("dtype", "text"),
    [
        (np.bool_, "|b1"),
        (np.uint8, "|u1"),
        (">i4", ">i4"),
        (np.float16, "<f2"),
        (np.complex128, "<c16"),
        ("M8[ns]", "<M8[ns]"),
        ("M8[D]", "<M8[D]"),
        ("m8[s]", "<m8[s]"),
        ("S5", "|S5"),
        ("U3", "<U3"),
        ("V8", "|V8"),
        ([("a", "<i4"), ("b", "<f8")], "[('a', '<i4'), ('b', '<f8')]"),
        (
            [("a", "<i4"), ("b", [("x", "u1"), ("y", ">f4")]), ("c", "<i2", (2, 3))],
            "[('a', '<i4'), ('b', [('x', 'u1'), ('y', '>f4')]), ('c', '<i2', (2, 3))]",
        ),
        ([(("T", "a"), "<i4")], "[(('T', 'a'), '<i4')]"),
    ],
)
def test_dtype_strings(dtype, text):
    dt = np.dtype(dtype)
    assert dtype_to_string(dt) == text
    assert dtype_from_string(text) == dt


def test_aligned_struct_keeps_offsets():
    dt = np.dtype([("a", "u1"), ("b", "<i8")], align=True)
    text = dtype_to_string(dt)
    assert text == (
        "{'names': ['a', 'b'], 'formats': ['u1', '<i8'], 'offsets': [0, 8],"
        " 'itemsize': 16, 'aligned': True}"
    )
    assert dtype_from_string(text) == dt and dtype_from_string(text).isalignedstruct


def test_dtype_names_python_blosc2_accepts():
    assert dtype_from_string("float32") == np.float32
    assert dtype_from_string("a5") == np.dtype("S5")  # deprecated alias, still a dtype


def test_missing_dtype_means_bytes_of_typesize():
    raw = pack_metalayer((4,), (2,), (2,), "<f8")
    without = raw[: raw.index(b"\x00\xdb")]
    meta = B2ndMeta.parse(without, 8)
    assert meta.dtype == np.dtype("S8") and meta.dtype_string is None
    with pytest.raises(FormatError, match="no dtype"):
        B2ndMeta.parse(without)


@pytest.mark.parametrize("dtype", ["O", "T"])
def test_object_dtypes_refused(dtype):
    with pytest.raises(ObjectNumpyArrayRejection):
        dtype_to_string(np.dtype(dtype))
    with pytest.raises(ObjectNumpyArrayRejection):
        B2ndMeta.parse(pack_metalayer((1,), (1,), (1,), "|O"))


def _meta(**changes):
    raw = bytearray(pack_metalayer((10, 20), (5, 8), (5, 4), "<i4"))
    for offset, value in changes.get("bytes", {}).items():
        raw[offset] = value
    return bytes(raw)


@pytest.mark.parametrize(
    ("raw", "error", "message"),
    [
        (b"", TruncatedError, "fixarray"),
        (_meta(bytes={0: 0x96}), FormatError, "fixarray.7. marker .* 0x96"),
        (_meta(bytes={1: 1}), UnsupportedError, "version 1"),
        (_meta(bytes={2: 17}), FormatError, "ndim 17 exceeds"),
        (_meta(bytes={2: 3}), FormatError, "shape array marker"),
        (_meta(bytes={4: 0xCF}), FormatError, r"shape\[0\] marker"),
        (
            pack_metalayer((10, 20), (5, 8), (5, 4), "<i4").replace(b"\x00\xdb", b"\x01\xdb"),
            UnsupportedError,
            "dtype format 1",
        ),
        (
            pack_metalayer((10,), (5,), (5,), "<i4") + b"x",
            FormatError,
            "dtype length 3 does not match the 4",
        ),
        (
            pack_metalayer((10,), (5,), (5,), "<i4")[:-1],
            FormatError,
            "dtype length 3 does not match the 2",
        ),
        (pack_metalayer((10,), (5,), (5,), "<q9"), FormatError, "cannot understand dtype"),
        (pack_metalayer((10,), (5,), (5,), "[('a', "), FormatError, "cannot understand dtype"),
        (pack_metalayer((-1,), (5,), (5,), "<i4"), FormatError, "negative size"),
        (pack_metalayer((10,), (0,), (5,), "<i4"), FormatError, "dim 0 of size 10 has chunks 0"),
        (
            pack_metalayer((2**62, 2**62), (2**30, 2**30), (1, 1), "<i4"),
            FormatError,
            "more than 2147483615",
        ),
        (pack_metalayer((2**40,), (2**28,), (2**28,), "<i4"), FormatError, "more than 536866816"),
    ],
)
def test_bad_metalayers(raw, error, message):
    with pytest.raises(error, match=message):
        B2ndMeta.parse(raw, 4)


def test_non_utf8_dtype():
    raw = pack_metalayer((10,), (5,), (5,), "<i4")[:-3] + b"\xff\xfe\xfd"
    with pytest.raises(FormatError, match="not UTF-8"):
        B2ndMeta.parse(raw, 4)


def test_typesize_must_match_dtype():
    with pytest.raises(FormatError, match="itemsize 4, the frame typesize is 8"):
        B2ndMeta.parse(pack_metalayer((10,), (5,), (5,), "<i4"), 8)


def test_overlong_dtype_string_refused_before_parsing():
    text = "[" + "(" * 70000
    raw = pack_metalayer((1,), (1,), (1,), text)
    with pytest.raises(FormatError, match="too long"):
        B2ndMeta.parse(raw, 1)


def test_deeply_nested_dtype_string():
    text = "[('a', " * 3000 + "'<i4'" + ")]" * 3000
    with pytest.raises(FormatError, match="cannot understand dtype"):
        B2ndMeta.parse(pack_metalayer((1,), (1,), (1,), text), 4)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.integers(1, 300))
def test_arbitrary_bytes_raise_only_bloscpack_errors(raw, typesize):
    with contextlib.suppress(BloscpackError):
        B2ndMeta.parse(raw, typesize)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([e["metalayer_hex"] for e in B2ND]),
    st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), min_size=1, max_size=4),
    st.integers(0, 200),
)
def test_mutated_corpus_metalayers_raise_only_bloscpack_errors(hexstr, flips, cut):
    raw = bytearray.fromhex(hexstr)
    for offset, value in flips:
        raw[offset % len(raw)] = value
    for candidate in (bytes(raw), bytes(raw[: cut % (len(raw) + 1)])):
        try:
            meta = B2ndMeta.parse(candidate)
        except BloscpackError:
            continue
        assert meta.ndim <= 16 and all(s >= 0 for s in meta.shape)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2**40), st.integers(1, 64), st.integers(1, 64)), max_size=16),
    st.sampled_from(["<f8", "|b1", ">i2", "<U3", "[('a', '<i4'), ('b', '<f8')]"]),
)
def test_pack_parse_round_trip(dims, dtype_string):
    shape = tuple(d[0] for d in dims)
    chunks = tuple(max(d[1], d[2]) for d in dims)
    blocks = tuple(d[2] for d in dims)
    raw = pack_metalayer(shape, chunks, blocks, dtype_string)
    try:
        meta = B2ndMeta.parse(raw)
    except FormatError as exc:
        assert "more than" in str(exc)  # chunk or block too large for C-Blosc2
        return
    assert (meta.shape, meta.chunks, meta.blocks, meta.dtype_string) == (
        shape,
        chunks,
        blocks,
        dtype_string,
    )
    assert meta.pack() == raw
    assert struct.unpack(
        ">I", raw[len(raw) - len(dtype_string) - 4 : len(raw) - len(dtype_string)]
    )[0] == len(dtype_string)
