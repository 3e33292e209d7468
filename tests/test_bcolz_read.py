"""Reading bcolz directories: the golden corpus written by bcolz-zipline 1.13.0, the snappy
corpus, partial reads, column reads, info, verify and format sniffing."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, load_manifest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloscpack import engine
from bloscpack.containers import bcolz as B
from bloscpack.errors import BloscpackError, ChunkError, UnsupportedError

MANIFEST = load_manifest("bcolz")
CASES = {case["name"]: case for case in MANIFEST["cases"]}
CORPUS = DATA / "bcolz"


def sha256(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def manifest_dtype(case: dict) -> np.dtype:
    descr = case["dtype"]["descr"]
    if isinstance(descr, str):
        return np.dtype(descr)

    def fields(items: list) -> list:
        out = []
        for item in items:
            name, sub = item[0], item[1]
            sub = fields(sub) if isinstance(sub, list) else sub
            out.append((name, sub, tuple(item[2])) if len(item) > 2 else (name, sub))
        return out

    return np.dtype(fields(descr))


def same_json(a: object, b: object) -> bool:
    """Equality that treats NaN as equal to NaN."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


# --- the golden corpus ----------------------------------------------------------------------

READABLE = [name for name, case in CASES.items() if case["dtype"]["str"] != "object"]


def test_corpus_is_complete():
    assert len(CASES) == 42
    assert {p.name for p in CORPUS.iterdir() if p.is_dir()} == set(CASES)
    assert {n for n, c in CASES.items() if c["bcolz_reopen"] != "ok"} == {
        "ca_struct_numeric",
        "ct_nested_field",
    }


@pytest.mark.parametrize("name", READABLE)
def test_corpus_reads_to_manifest(name):
    case = CASES[name]
    array = B.load_bcolz(CORPUS / name)
    assert sha256(array) == case["sha256"]
    assert list(array.shape) == case["shape"]
    assert array.dtype == manifest_dtype(case)
    assert array.flags.c_contiguous


@pytest.mark.parametrize("name", READABLE)
def test_corpus_attrs(name):
    case = CASES[name]
    expected = json.loads(case["attrs_raw"])
    assert same_json(B.open_bcolz(CORPUS / name).attrs.to_dict(), expected)
    if case["attrs"] is not None:
        assert B.open_bcolz(CORPUS / name).attrs.to_dict() == case["attrs"]


def test_corpus_attrs_special_values():
    attrs = B.open_bcolz(CORPUS / "ca_attrs").attrs
    assert attrs["temp"] == 22.5
    assert attrs["name"] == "h\u00e9llo"
    assert attrs["tuple"] == [1, 2]
    assert attrs["nested"] == {"a": [1, {"b": None}], "1": True}
    assert attrs["big"] == 2**70
    assert math.isnan(attrs["nan"])
    assert list(attrs) == ["temp", "name", "tuple", "nested", "big", "nan"]


@pytest.mark.parametrize("name", [n for n in READABLE if CASES[n]["kind"] == "ctable"])
def test_corpus_columns(name):
    case = CASES[name]
    table = B.open_bcolz(CORPUS / name)
    assert isinstance(table, B.CtableReader)
    assert table.names == [column["name"] for column in case["columns"]]
    for column in case["columns"]:
        values = B.read_bcolz_column(CORPUS / name, column["name"])
        assert sha256(values) == column["sha256"]
        assert list(values.shape) == column["shape"]
        assert values.dtype == manifest_dtype(column)


def test_bcolz_unreadable_structured_dtypes_read():
    """bcolz writes str(dtype) for structured dtypes and cannot parse it back; we can."""
    array = B.load_bcolz(CORPUS / "ca_struct_numeric")
    assert array.dtype == np.dtype([("a", "<i4"), ("b", "<f8")])
    storage = json.loads((CORPUS / "ca_struct_numeric/meta/storage").read_text())
    assert storage["dtype"] == "[('a', '<i4'), ('b', '<f8')]"
    nested = B.load_bcolz(CORPUS / "ct_nested_field")
    assert nested.dtype == np.dtype([("a", "<i2"), ("b", [("x", "<f4"), ("y", "u1")])])


def test_object_carray_refused_without_unpickling(monkeypatch):
    import pickle

    def forbidden(*args, **kwargs):
        raise AssertionError("unpickling attempted")

    monkeypatch.setattr(pickle, "loads", forbidden)
    with pytest.raises(UnsupportedError, match="object carray: its chunks are pickled") as info:
        B.load_bcolz(CORPUS / "ca_object")
    assert str(CORPUS / "ca_object") in str(info.value)
    reader = B.open_bcolz(CORPUS / "ca_object")
    assert reader.is_object and len(reader) == 4 and reader.nchunks == 4
    assert B.info(CORPUS / "ca_object")["storage_dtype"] == "object"
    report = B.verify(CORPUS / "ca_object")
    assert report["ok"] and report["nchunks"] == 4
    assert "pickles" in report["warnings"][0]


def test_length_comes_from_sizes_not_files():
    # shape 10, chunklen 4: __2 is a full 4-row chunk and __3 exists (unflushed append)
    data = B.load_bcolz(CORPUS / "ca_unflushed_append")
    assert len(data) == 10
    assert sorted(p.name for p in (CORPUS / "ca_unflushed_append/data").iterdir()) == [
        "__0.blp", "__1.blp", "__2.blp", "__3.blp",
    ]  # fmt: skip
    # shape 12, exact multiple of chunklen 4: __3 is stale
    assert len(B.load_bcolz(CORPUS / "ca_trim_stale")) == 12
    assert B.open_bcolz(CORPUS / "ca_trim_stale").nchunks == 3


def test_empty_arrays_without_data_dir():
    """git drops empty directories: an empty carray without data/ still reads."""
    assert not (CORPUS / "ca_empty_i4/data").exists()
    empty = B.load_bcolz(CORPUS / "ca_empty_i4")
    assert empty.shape == (0,) and empty.dtype == np.int32
    assert B.load_bcolz(CORPUS / "ca_f4_empty_2d").shape == (0, 3)
    report = B.verify(CORPUS / "ca_empty_i4")
    assert report["ok"] and report["nchunks"] == 0
    assert report["warnings"] == [
        f"{CORPUS / 'ca_empty_i4' / 'data'}: missing (bcolz cannot open it)"
    ]


# --- partial reads ----------------------------------------------------------------------------

PARTIAL = ["ca_i8_multichunk", "ca_i4_chunklen4", "ca_i2_2d", "ca_f4_3d_dflt9", "ca_S5_dflt",
           "ca_U3", "ca_V300", "ca_unflushed_append", "ca_bool_chunklen7", "ca_struct_numeric",
           "ca_reopen_append", "ca_be_i4"]  # fmt: skip


@pytest.mark.parametrize("name", PARTIAL)
@settings(max_examples=25, deadline=None)
@given(start=st.integers(-40, 300_000), stop=st.integers(-40, 300_000))
def test_partial_reads_match_slices(name, start, stop):
    reader = B.open_bcolz(CORPUS / name)
    whole = B.load_bcolz(CORPUS / name)
    part = reader.read(start, stop)
    np.testing.assert_array_equal(part, whole[start:stop])
    assert part.dtype == whole.dtype


def test_partial_read_touches_only_its_chunks(tmp_path):
    root = tmp_path / "c"
    shutil.copytree(CORPUS / "ca_i4_chunklen4", root)
    (root / "data/__0.blp").unlink()
    (root / "data/__2.blp").unlink()
    reader = B.open_bcolz(root)
    np.testing.assert_array_equal(reader.read(4, 8), np.arange(4, 8, dtype="i4"))
    with pytest.raises(BloscpackError, match=r"__2\.blp: chunk file missing"):
        reader.read(4, 9)


def test_iter_chunks():
    reader = B.open_bcolz(CORPUS / "ca_i4_chunklen4")
    pieces = [(row, rows.copy()) for row, rows in reader.iter_chunks(3, 10)]
    assert [row for row, _ in pieces] == [3, 4, 8]
    np.testing.assert_array_equal(np.concatenate([r for _, r in pieces]), np.arange(3, 10))


def test_ctable_column_reads_only_that_column(tmp_path):
    root = tmp_path / "t"
    shutil.copytree(CORPUS / "ct_basic", root)
    shutil.rmtree(root / "alpha")
    shutil.rmtree(root / "mid")
    np.testing.assert_array_equal(B.read_bcolz_column(root, "zeta"), [1, 2, 3])
    table = B.open_bcolz(root)
    np.testing.assert_array_equal(table.column("zeta", 1), [2, 3])
    picked = B.load_bcolz(CORPUS / "ct_basic", columns=["mid", "zeta"])
    assert picked.dtype.names == ("mid", "zeta")
    np.testing.assert_array_equal(picked["mid"], [b"ab", b"cd", b"e"])
    with pytest.raises(BloscpackError, match=r"alpha.*missing"):
        B.load_bcolz(root)


def test_ctable_partial_rows():
    table = B.open_bcolz(CORPUS / "ct_mixed_20000")
    whole = table.read()
    np.testing.assert_array_equal(table.read(start=4095, stop=12000), whole[4095:12000])
    np.testing.assert_array_equal(table.read(["key"], 19990), whole[["key"]][19990:])


def test_unknown_column():
    with pytest.raises(BloscpackError, match="no column 'nope'; columns: zeta, alpha, mid"):
        B.load_bcolz(CORPUS / "ct_basic", columns=["nope"])
    with pytest.raises(BloscpackError, match="a carray has no columns"):
        B.read_bcolz_column(CORPUS / "ca_i4_default", "x")


# --- metadata variants bcolz tolerates ------------------------------------------------------


def test_old_storage_without_cname_quantize(tmp_path):
    root = tmp_path / "old"
    shutil.copytree(CORPUS / "ca_f8_blosclz_noshuffle", root)
    storage = json.loads((root / "meta/storage").read_text())
    storage["cparams"] = {"clevel": 5, "shuffle": False}
    (root / "meta/storage").write_text(json.dumps(storage))
    np.testing.assert_array_equal(
        B.load_bcolz(root), B.load_bcolz(CORPUS / "ca_f8_blosclz_noshuffle")
    )
    assert B.open_bcolz(root).cparams == B.Cparams(clevel=5, shuffle=0, cname="blosclz", quantize=0)
    storage["cparams"] = {"clevel": 5, "shuffle": True, "quantize": None}
    (root / "meta/storage").write_text(json.dumps(storage))
    assert B.open_bcolz(root).cparams.shuffle == 1


def test_json_nan_infinity_and_extra_keys(tmp_path):
    root = tmp_path / "inf"
    shutil.copytree(CORPUS / "ca_f8_nan_dflt", root)
    (root / "meta/storage").write_text(
        '{ "extra": [1], "dflt": -Infinity, "chunklen": 2048, "expectedlen": 3,'
        ' "cparams": {"clevel": 5, "shuffle": 1, "cname": "lz4", "quantize": 0},'
        ' "dtype": "float64"}'
    )
    np.testing.assert_array_equal(B.load_bcolz(root), B.load_bcolz(CORPUS / "ca_f8_nan_dflt"))
    described = B.info(root)
    assert described["dflt"] == "-Infinity"
    json.dumps(described, allow_nan=False)
    assert B.info(CORPUS / "ca_f8_nan_dflt")["dflt"] == "NaN"


def test_foreign_chunks_read(tmp_path):
    """Any Blosc chunk with the right sizes reads: python-blosc, Blosc2, raw memcpyed."""
    import blosc2

    root = tmp_path / "mixed"
    shutil.copytree(CORPUS / "ca_i4_chunklen4", root)
    rows = np.arange(4, 8, dtype="<i4")
    (root / "data/__1.blp").write_bytes(
        b"XXXX\x09\xff\xff\xff" + b"\xff" * 8 + blosc2.compress(rows)
    )
    np.testing.assert_array_equal(B.load_bcolz(root), np.arange(10, dtype="i4"))
    raw = bytes([2, 1, 0x02, 4]) + np.array([16, 16, 32], "<i4").tobytes() + rows.tobytes()
    (root / "data/__1.blp").write_bytes(B.BLPK_HEADER + raw + b"trailing bytes")
    np.testing.assert_array_equal(B.load_bcolz(root), np.arange(10, dtype="i4"))


# --- info, verify, sniff ----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CASES))
def test_info_is_json_and_verify_ok(name):
    case = CASES[name]
    described = B.info(CORPUS / name)
    json.dumps(described, allow_nan=False)
    assert described["format"] == "bcolz"
    assert described["kind"] == case["kind"]
    assert described["shape"] == case["shape"]
    report = B.verify(CORPUS / name)
    assert report["ok"], report
    assert report["bad_chunks"] == [] and report["problems"] == []
    assert B.sniff_dir(CORPUS / name)


def test_info_fields():
    described = B.info(CORPUS / "ca_i4_default")
    assert described == {
        "format": "bcolz", "kind": "carray", "path": str(CORPUS / "ca_i4_default"),
        "shape": [100000], "dtype": "<i4", "storage_dtype": "int32", "chunklen": 65536,
        "nchunks": 2, "typesize": 4, "nbytes": 400000, "cbytes": 2394 + 1426,
        "cparams": {"clevel": 5, "shuffle": 1, "cname": "lz4", "quantize": 0},
        "expectedlen": 100000, "dflt": 0, "bcolz_can_open": True, "attrs": {},
    }  # fmt: skip
    table = B.info(CORPUS / "ct_basic")
    assert table["names"] == ["zeta", "alpha", "mid"]
    assert table["dtype"] == [["zeta", "<i4"], ["alpha", "<f8"], ["mid", "|S2"]]
    assert [c["chunklen"] for c in table["columns"]] == [4096, 2048, 8192]
    assert table["attrs"] == {"k": 1}
    assert B.info(CORPUS / "ca_struct_numeric")["bcolz_can_open"] is False


def test_verify_counts_chunks_of_all_columns():
    assert B.verify(CORPUS / "ct_mixed_20000")["nchunks"] == 4
    assert B.verify(CORPUS / "ca_i8_multichunk")["nchunks"] == 10


def test_sniff_dir(tmp_path):
    assert not B.sniff_dir(tmp_path)
    assert not B.sniff_dir(tmp_path / "missing")
    assert not B.sniff_dir(CORPUS / "MANIFEST.json")
    assert not B.sniff_dir(CORPUS / "ca_i4_default" / "data")
    assert B.sniff_dir(CORPUS / "ct_basic" / "zeta")


# --- snappy chunks (C-Blosc 1.x builds with snappy) -----------------------------------------

SNAPPY = DATA / "snappy"
SNAPPY_DIRS = sorted(p.relative_to(SNAPPY).as_posix() for p in SNAPPY.glob("*/bcolz/*"))


def engine_decodes_snappy() -> bool:
    chunk = (SNAPPY / SNAPPY_DIRS[0] / "data/__0.blp").read_bytes()[16:]
    try:
        engine.decompress(chunk)
    except (ChunkError, UnsupportedError):
        return False
    return True


def test_snappy_corpus_present():
    assert len(SNAPPY_DIRS) == 7


@pytest.mark.parametrize("rel", SNAPPY_DIRS)
def test_snappy_dirs(rel):
    entries = {e["path"]: e for e in load_manifest("snappy")["entries"]}
    entry = entries[rel]
    root = SNAPPY / rel
    assert B.sniff_dir(root)
    assert B.info(root)["shape"] == entry["shape"]
    if not engine_decodes_snappy():
        with pytest.raises(BloscpackError, match=r"__0\.blp"):
            B.load_bcolz(root)
        pytest.skip("the engine cannot decode snappy chunks")
    array = B.load_bcolz(root)
    assert sha256(array) == entry["sha256_c_order_array_bytes"]
    assert list(array.shape) == entry["shape"]
    assert B.verify(root)["ok"]


def test_snappy_storage_cname_reads(tmp_path):
    """A carray whose storage names snappy (which bcolz-zipline cannot open) reads when its
    chunks do not need snappy, and appending refuses to write snappy chunks."""
    root = tmp_path / "c"
    shutil.copytree(CORPUS / "ca_i4_chunklen4", root)
    storage = json.loads((root / "meta/storage").read_text())
    storage["cparams"]["cname"] = "snappy"
    (root / "meta/storage").write_text(json.dumps(storage))
    np.testing.assert_array_equal(B.load_bcolz(root), np.arange(10))
    with pytest.raises(UnsupportedError, match="codec 'snappy'"):
        B.append_bcolz(root, [1])
    assert B.load_bcolz(root).tolist() == list(range(10))


def test_path_types():
    assert B.load_bcolz(str(CORPUS / "ca_i4_chunklen4")).tolist() == list(range(10))
    assert isinstance(B.open_bcolz(Path(CORPUS / "ct_basic")), B.CtableReader)
    assert np.asarray(B.open_bcolz(CORPUS / "ca_i4_chunklen4")).tolist() == list(range(10))


def test_format_independent_api(tmp_path):
    import bloscpack

    assert bloscpack.detect(CORPUS / "ct_basic") == "bcolz"
    np.testing.assert_array_equal(bloscpack.load(CORPUS / "ca_i2_2d"), np.arange(24).reshape(6, 4))
    bloscpack.save(np.arange(5, dtype="u2"), tmp_path / "x.bcolz", format="bcolz", chunklen=2)
    assert B.open_bcolz(tmp_path / "x.bcolz").chunklen == 2
    assert bloscpack.info(tmp_path / "x.bcolz")["shape"] == [5]
    assert bloscpack.verify(CORPUS / "ct_mixed_20000")["ok"]


def test_benchmark_script_runs():
    import subprocess
    import sys

    bench = Path(__file__).parent.parent / "bench" / "bench_bcolz.py"
    proc = subprocess.run([sys.executable, str(bench), "--sizes", "1", "--repeat", "1"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["size_mib"] == 1 and result["speedup"] > 0


def test_a_chunk_file_is_opened_once_per_read(monkeypatch):
    """The chunk source takes the descriptor open_member checked: one open per chunk read."""
    import builtins
    import os

    import bloscpack

    opened: list[str] = []
    real_os_open, real_open = os.open, builtins.open

    def os_open(path, *args, **kwargs):
        opened.append(os.fspath(path))
        return real_os_open(path, *args, **kwargs)

    def open_(file, *args, **kwargs):
        if not isinstance(file, int):
            opened.append(os.fspath(file))
        return real_open(file, *args, **kwargs)

    root = CORPUS / "ca_i4_chunklen4"
    with bloscpack.open(root) as array:
        monkeypatch.setattr(os, "open", os_open)
        monkeypatch.setattr(builtins, "open", open_)
        assert array[5] == 5
        monkeypatch.undo()
    assert [p for p in opened if p.endswith(".blp")] == [str(root / "data" / "__1.blp")]


@pytest.mark.parametrize("present", [(), ("storage",), ("sizes",)])
def test_a_directory_without_both_metadata_files_is_not_a_carray(tmp_path, present):
    """Opened as bcolz, a directory with no ``__rootdirs__`` needs both ``meta/storage`` and
    ``meta/sizes``; without them it is refused before either is read."""
    root = tmp_path / "x.bcolz"
    (root / "meta").mkdir(parents=True)
    for name in present:
        (root / "meta" / name).write_text("{}")
    with pytest.raises(BloscpackError) as caught:
        B.open_bcolz(str(root))
    assert type(caught.value).__name__ == "FormatError"
    assert str(caught.value) == (
        f"{root}: not a bcolz directory (it has no __rootdirs__, nor meta/storage and meta/sizes)"
    )
