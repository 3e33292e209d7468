"""Damaged bcolz directories: truncated and missing files, bad JSON, lying metadata and chunk
headers raise only BloscpackError subclasses whose messages name the file, never a crash, a
hang or a huge allocation."""

from __future__ import annotations

import json
import shutil
import struct
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bloscpack.containers import bcolz as B
from bloscpack.errors import (
    BloscpackError,
    FormatError,
    IntegrityError,
    TruncatedError,
    UnsupportedError,
)

CORPUS = DATA / "bcolz"
SMALL = ["ca_i4_chunklen4", "ca_i2_2d", "ca_S5_dflt", "ca_struct_numeric", "ca_f8_zlib",
         "ca_unflushed_append", "ct_basic", "ct_nested_field", "ca_attrs"]  # fmt: skip


def writable_copy(name: str, parent: Path) -> Path:
    """A copy of corpus dir ``name`` under ``parent`` that the test may change."""
    root = parent / name
    shutil.copytree(CORPUS / name, root)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


@pytest.fixture
def copy(tmp_path):
    return lambda name: writable_copy(name, tmp_path)


def every_reader_fails(root: Path, match: str, error: type = BloscpackError) -> None:
    """load, info and verify all report the damage, naming the file; nothing else escapes."""
    with pytest.raises(error) as caught:
        B.load_bcolz(root)
    assert match in str(caught.value), str(caught.value)
    report = B.verify(root)
    assert report["ok"] is False
    messages = [e["error"] for e in report["bad_chunks"]] + report["problems"]
    assert any(match in m for m in messages), report


# --- chunk files ------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [0, 5, 16, 20, 31, 32, 47])
def test_truncated_chunk_file(copy, keep):
    root = copy("ca_i4_chunklen4")
    path = root / "data/__1.blp"
    path.write_bytes(path.read_bytes()[:keep])
    every_reader_fails(root, str(path), (TruncatedError, FormatError))
    assert B.verify(root)["bad_chunks"][0]["index"] == 1


def test_truncated_compressed_chunk(copy):
    root = copy("ca_f8_zlib")
    path = root / "data/__0.blp"
    path.write_bytes(path.read_bytes()[:-1])
    every_reader_fails(root, str(path), TruncatedError)


def test_missing_chunk_file(copy):
    root = copy("ca_i4_chunklen4")
    (root / "data/__2.blp").unlink()
    every_reader_fails(root, f"{root / 'data/__2.blp'}: chunk file missing", FormatError)


def test_chunk_header_lies_about_nbytes(copy):
    root = copy("ca_i4_chunklen4")
    path = root / "data/__0.blp"
    blob = bytearray(path.read_bytes())
    struct.pack_into("<i", blob, 20, 12)  # nbytes 16 -> 12: memcpyed sizes disagree
    path.write_bytes(bytes(blob))
    every_reader_fails(root, str(path))


def test_full_chunk_with_too_few_rows(copy):
    root = copy("ca_i4_chunklen4")
    (root / "data/__1.blp").write_bytes((root / "data/__2.blp").read_bytes())  # 2 rows, not 4
    every_reader_fails(root, "__1.blp: chunk holds 8 bytes, a full chunk of 4 rows", IntegrityError)


def test_leftover_with_too_few_rows(copy):
    root = copy("ca_i4_chunklen4")
    sizes = json.loads((root / "meta/sizes").read_text())
    sizes["shape"] = [11]  # the leftover __2 holds 2 rows, 3 are needed
    (root / "meta/sizes").write_text(json.dumps(sizes))
    every_reader_fails(
        root, "__2.blp: leftover chunk holds 8 bytes, expected 12 to 16", IntegrityError
    )


def test_wrong_typesize_reads_right_and_warns(copy):
    import blosc

    root = copy("ca_i4_chunklen4")
    rows = np.arange(4, 8, dtype="i4")
    chunk = blosc.compress(rows.tobytes(), typesize=1, clevel=0)
    (root / "data/__1.blp").write_bytes(B.BLPK_HEADER + chunk)
    np.testing.assert_array_equal(B.load_bcolz(root), np.arange(10))
    np.testing.assert_array_equal(B.open_bcolz(root).read(5, 7), [5, 6])
    report = B.verify(root)
    assert report["ok"]
    assert "Blosc typesize 1, bcolz uses 4" in report["warnings"][0]


# --- metadata files ---------------------------------------------------------------------------


@pytest.mark.parametrize("meta", ["meta/sizes", "meta/storage"])
def test_missing_meta_file(copy, meta):
    root = copy("ca_i4_chunklen4")
    (root / meta).unlink()
    assert not B.sniff_dir(root)
    every_reader_fails(root, str(root), FormatError)
    with pytest.raises(FormatError, match=f"{root / meta}: missing"):
        B.CarrayReader(root)


BAD_JSON = [b"", b"{", b'{"shape": [10', b"\xff\xfe{}", b"null", b"[]", b"1" * 5000,
            b"[" * 100000 + b"]" * 100000, b'{"a": NaN']  # fmt: skip


@pytest.mark.parametrize("meta", ["meta/sizes", "meta/storage"])
@pytest.mark.parametrize("content", BAD_JSON, ids=range(len(BAD_JSON)))
def test_bad_json(copy, meta, content):
    root = copy("ca_i4_chunklen4")
    (root / meta).write_bytes(content)
    every_reader_fails(root, str(root / meta), FormatError)


@pytest.mark.parametrize(
    "shape",
    [10, [], [-1], ["10"], [10.0], [True], [None], [2**63], [10] + [1] * 40, {"a": 1}],
)
def test_bad_shape(copy, shape):
    root = copy("ca_i4_chunklen4")
    (root / "meta/sizes").write_text(json.dumps({"shape": shape, "nbytes": 40, "cbytes": 0}))
    every_reader_fails(root, f"{root / 'meta/sizes'}: sizes.shape", FormatError)


@pytest.mark.parametrize("length", [12, 16, 10**9, 10**15, 2**62])
def test_lying_length(copy, length):
    root = copy("ca_i4_chunklen4")
    (root / "meta/sizes").write_text(json.dumps({"shape": [length], "nbytes": 0, "cbytes": 0}))
    tracemalloc.start()
    try:
        every_reader_fails(root, str(root / "data"))
        assert tracemalloc.get_traced_memory()[1] < 16 << 20
    finally:
        tracemalloc.stop()


def test_huge_rows(copy):
    root = copy("ca_i4_chunklen4")
    (root / "meta/sizes").write_text(json.dumps({"shape": [10, 2**40], "nbytes": 0, "cbytes": 0}))
    every_reader_fails(root, "exceed the largest Blosc chunk", FormatError)


@pytest.mark.parametrize(
    "change",
    [
        {"chunklen": 0},
        {"chunklen": -4},
        {"chunklen": "4"},
        {"chunklen": 4.0},
        {"chunklen": 2**40},
        {"chunklen": 3},
        {"chunklen": 5},
        {"dtype": "int64"},
        {"dtype": "int16"},
        {"dtype": "foo"},
        {"dtype": 4},
        {"dtype": "[('a', 'i4'"},
        {"dtype": "[('a', 'O')]"},
        {"dtype": "S0"},
        {"dtype": "__import__('os').system('false')"},
        {"dtype": "[" * 5000},
        {"dtype": "(" * 100 + ")" * 100},
        {"dtype": "x" * 70000},
        {"dtype": "a5"},
        {"dtype": "S"},
        {"dtype": "(2,)i4"},
        {"dtype": "('<i4', (3,))"},
    ],  # fmt: skip
    ids=str,
)
def test_lying_storage(copy, change):
    root = copy("ca_i4_chunklen4")
    storage = json.loads((root / "meta/storage").read_text())
    storage.update(change)
    (root / "meta/storage").write_text(json.dumps(storage))
    every_reader_fails(root, str(root))


def test_missing_storage_keys(copy):
    root = copy("ca_i4_chunklen4")
    for key in ("dtype", "chunklen"):
        storage = json.loads((CORPUS / "ca_i4_chunklen4/meta/storage").read_text())
        del storage[key]
        (root / "meta/storage").write_text(json.dumps(storage))
        every_reader_fails(root, f"{root / 'meta/storage'}: storage has no '{key}'", FormatError)


def test_object_dtype_claimed_is_refused(copy):
    root = copy("ca_i8_clevel0_memcpy")
    storage = json.loads((root / "meta/storage").read_text())
    storage["dtype"] = "object"
    (root / "meta/storage").write_text(json.dumps(storage))
    with pytest.raises(UnsupportedError, match="never unpickles"):
        B.load_bcolz(root)


def test_bad_cparams_only_matter_for_append(copy):
    root = copy("ca_i4_chunklen4")
    storage = json.loads((root / "meta/storage").read_text())
    storage["cparams"] = {"clevel": "high"}
    (root / "meta/storage").write_text(json.dumps(storage))
    np.testing.assert_array_equal(B.load_bcolz(root), np.arange(10))
    report = B.verify(root)
    assert (
        report["ok"]
        and "cparams.clevel 'high' is not 0..9 (appending would fail)" in report["warnings"][0]
    )
    with pytest.raises(FormatError, match=f"{root / 'meta/storage'}: cparams.clevel"):
        B.append_bcolz(root, [1])


# --- attributes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("content", [b"", b"[1]", b"{", b"\xff"])
def test_unreadable_attrs(copy, content):
    """bcolz empties __attrs__ when a value fails to encode: the data still reads."""
    root = copy("ca_attrs")
    (root / "__attrs__").write_bytes(content)
    np.testing.assert_array_equal(B.load_bcolz(root), np.arange(5))
    with pytest.raises(FormatError, match=str(root / "__attrs__")):
        B.open_bcolz(root).attrs  # noqa: B018
    report = B.verify(root)
    assert not report["ok"] and str(root / "__attrs__") in report["problems"][0]
    described = B.info(root)
    assert described["attrs"] is None and str(root / "__attrs__") in described["attrs_error"]


def test_missing_attrs_reads_as_empty(copy):
    root = copy("ca_i4_chunklen4")
    (root / "__attrs__").unlink()
    assert B.open_bcolz(root).attrs.to_dict() == {}
    assert B.verify(root)["warnings"] == [f"{root / '__attrs__'}: missing (bcolz cannot open it)"]


# --- ctables -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "names",
    [[], ["../ca_i4_chunklen4"], ["a/b"], [".."], ["zeta", "zeta"], [1], "zeta", None, ["gone"]],
    ids=str,
)
def test_bad_rootdirs(copy, names):
    root = copy("ct_basic")
    (root / "__rootdirs__").write_text(json.dumps({"names": names}))
    every_reader_fails(root, str(root), FormatError)


def test_short_column(copy):
    root = copy("ct_basic")
    sizes = json.loads((root / "alpha/meta/sizes").read_text())
    sizes["shape"] = [2]
    (root / "alpha/meta/sizes").write_text(json.dumps(sizes))
    every_reader_fails(
        root, f"{root / 'alpha'}: column 'alpha' has 2 rows, the table", IntegrityError
    )
    np.testing.assert_array_equal(B.read_bcolz_column(root, "zeta"), [1, 2, 3])


def test_long_column_is_cut_to_the_table(copy):
    """A column longer than the first (an interrupted append) reads to the table length."""
    root = copy("ct_basic")
    B.append_bcolz(root / "alpha", [9.5])
    data = B.load_bcolz(root)
    assert data["alpha"].tolist() == [2.5, 3.5, 4.5]
    report = B.verify(root)
    assert report["ok"] and "column 'alpha' has 4 rows, the table 3" in report["warnings"][0]


# --- arbitrary damage -----------------------------------------------------------------------------


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _check_readers(root: Path) -> None:
    """Every reader succeeds or raises a BloscpackError naming the directory, within 64 MiB."""
    tracemalloc.start()
    try:
        for action in (B.load_bcolz, B.info, B.verify, lambda r: B.open_bcolz(r).attrs.to_dict()):
            try:
                action(root)
            except BloscpackError as exc:
                assert str(root) in str(exc), str(exc)
        assert tracemalloc.get_traced_memory()[1] < 64 << 20
    finally:
        tracemalloc.stop()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(SMALL),
    which=st.integers(0, 10**6),
    kind=st.sampled_from(["truncate", "overwrite", "append", "delete", "replace"]),
    where=st.integers(0, 10**6),
    junk=st.binary(min_size=1, max_size=40),
)
def test_arbitrary_damage_raises_only_bloscpack_errors(name, which, kind, where, junk):
    with tempfile.TemporaryDirectory() as tmp:
        root = writable_copy(name, Path(tmp))
        files = _files(root)
        target = files[which % len(files)]
        blob = target.read_bytes()
        at = where % (len(blob) + 1)
        if kind == "truncate":
            target.write_bytes(blob[:at])
        elif kind == "overwrite":
            target.write_bytes(blob[:at] + junk + blob[at + len(junk) :])
        elif kind == "append":
            target.write_bytes(blob + junk)
        elif kind == "delete":
            target.unlink()
        else:
            target.write_bytes(junk)
        _check_readers(root)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    meta=st.sampled_from(["meta/sizes", "meta/storage", "__attrs__"]),
    key=st.sampled_from(["shape", "nbytes", "dtype", "chunklen", "cparams", "dflt", "extra"]),
    value=JSON_VALUES
    | st.sampled_from(["int8", "<f8", "|S3", "[('a', '<i2')]", "M8[s]"])
    | st.lists(st.integers(-3, 2**40), max_size=3),
)
def test_arbitrary_metadata_values(meta, key, value):
    with tempfile.TemporaryDirectory() as tmp:
        root = writable_copy("ca_i4_chunklen4", Path(tmp))
        data = json.loads((root / meta).read_text())
        data[key] = value
        (root / meta).write_text(json.dumps(data))
        _check_readers(root)
