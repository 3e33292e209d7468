"""Writing bcolz directories: byte-identical to bcolz-zipline, opened and appended to by it,
appends that survive interruption, atomic creation, attributes."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from bloscpack import engine
from bloscpack.containers import bcolz as B
from bloscpack.containers.bcolz import append as appending
from bloscpack.errors import (
    ArgumentError,
    AttributeValueError,
    BloscpackError,
    ObjectNumpyArrayRejection,
    UnsupportedError,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    bcolz = pytest.importorskip("bcolz")


def tree(root) -> dict[str, bytes]:
    """Every file under ``root`` by relative path."""
    files = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as fh:
                files[os.path.relpath(path, root)] = fh.read()
    return files


def bcolz_write(array, rootdir, **kwargs):
    """Write ``array`` with bcolz itself."""
    if array.dtype.names:
        return bcolz.ctable(array, rootdir=str(rootdir), **kwargs)
    return bcolz.carray(array, rootdir=str(rootdir), **kwargs)


def bcolz_read(rootdir):
    return bcolz.open(str(rootdir), mode="r")[:]


ARRAYS = {
    "i4_100000": np.arange(100000, dtype="i4"),
    "i8_300000": np.arange(300000, dtype="i8") * 3,
    "f8_random": np.random.default_rng(1).random(50000),
    "f4_3d": np.arange(60, dtype="f4").reshape(5, 3, 4),
    "i2_2d": np.arange(24, dtype="i2").reshape(6, 4),
    "S5": np.array([b"ab", b"cdefg", b""], "S5"),
    "S300": np.array([b"x" * 300, b"y"], "S300"),
    "U3": np.array(["a", "b\u00e9", "xyz"]),
    "M8ns": np.array([0, 10**18, -5], "M8[ns]"),
    "M8D": np.array([0, 365, -1], "M8[D]"),
    "m8ns": np.array([1, 2, 3], "m8[ns]"),
    "be_i4": np.arange(5, dtype=">i4"),
    "f2": np.linspace(0, 1, 5, dtype="f2"),
    "c16": np.array([1 + 2j, 3 - 4j]),
    "V300": np.frombuffer(bytes(range(256)) * 4 + bytes(176), "V300"),
    "bool": np.arange(30) % 3 == 0,
    "u8": np.array([2**64 - 1, 0], "u8"),
    "empty_i4": np.zeros(0, "i4"),
    "empty_2d": np.zeros((0, 3), "f4"),
    "fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    "ct_basic": np.array(
        [(1, 2.5, b"ab"), (2, 3.5, b"cd"), (3, 4.5, b"e")],
        dtype=[("zeta", "i4"), ("alpha", "f8"), ("mid", "S2")],
    ),
    "ct_multidim": np.zeros(4, dtype=[("v", "f4", (3,)), ("i", "i8")]),
    "ct_mixed": np.array(
        [(i, i / 3, str(i).encode(), i % 2 == 0) for i in range(20000)],
        dtype=[("id", "i8"), ("x", "f8"), ("key", "S8"), ("flag", "?")],
    ),
    "ct_unicode": np.zeros(3, dtype=[("h\u00e9llo", "i8")]),
}
BCOLZ_CANNOT_CREATE = {"M8D", "c16"}  # its dflt JSON fails (formats/bcolz-1.x.md section 4)

OPTIONS = {
    "default": {},
    "chunklen4": {"chunklen": 4},
    "zstd_bitshuffle": {"cname": "zstd", "shuffle": 2, "clevel": 9},
    "zlib": {"cname": "zlib"},
    "blosclz_noshuffle": {"cname": "blosclz", "shuffle": 0},
    "lz4hc": {"cname": "lz4hc", "clevel": 3},
    "clevel0": {"clevel": 0},
    "expectedlen": {"expectedlen": 10**7},
}


def bcolz_kwargs(options: dict) -> dict:
    kwargs = {k: v for k, v in options.items() if k in ("chunklen", "expectedlen")}
    cp = {k: options[k] for k in ("clevel", "shuffle", "cname") if k in options}
    if cp:
        kwargs["cparams"] = bcolz.cparams(**cp)
    return kwargs


@pytest.mark.parametrize("name", [n for n in ARRAYS if n not in BCOLZ_CANNOT_CREATE])
def test_byte_identical_to_bcolz(tmp_path, name):
    array = ARRAYS[name]
    B.save_bcolz(array, tmp_path / "ours")
    bcolz_write(array, tmp_path / "theirs")
    assert tree(tmp_path / "ours") == tree(tmp_path / "theirs")


@pytest.mark.parametrize("option", list(OPTIONS))
@pytest.mark.parametrize("name", ["i8_300000", "f8_random", "f4_3d", "U3", "ct_basic"])
def test_byte_identical_with_options(tmp_path, name, option):
    array = ARRAYS[name][:2000] if option == "chunklen4" else ARRAYS[name]
    B.save_bcolz(array, tmp_path / "ours", **OPTIONS[option])
    bcolz_write(array, tmp_path / "theirs", **bcolz_kwargs(OPTIONS[option]))
    assert tree(tmp_path / "ours") == tree(tmp_path / "theirs")


def test_byte_identical_quantize_dflt_attrs(tmp_path):
    data = np.random.default_rng(2).random(1000)
    B.save_bcolz(data, tmp_path / "ours", quantize=2, dflt=float("nan"), attrs={"a": [1, "x"]})
    theirs = bcolz.carray(data, rootdir=str(tmp_path / "theirs"), dflt=float("nan"),
                          cparams=bcolz.cparams(quantize=2))  # fmt: skip
    theirs.attrs["a"] = [1, "x"]
    assert tree(tmp_path / "ours") == tree(tmp_path / "theirs")
    assert not np.array_equal(B.load_bcolz(tmp_path / "ours"), data)  # lossy, as in bcolz
    strings = np.array([b"a", b"b"], "S3")
    B.save_bcolz(strings, tmp_path / "s_ours", dflt=b"zz")
    bcolz.carray(strings, rootdir=str(tmp_path / "s_theirs"), dflt=b"zz")
    assert tree(tmp_path / "s_ours") == tree(tmp_path / "s_theirs")
    big = np.array([1], "u8")
    B.save_bcolz(big, tmp_path / "u_ours", dflt=2**64 - 1)
    bcolz.carray(big, rootdir=str(tmp_path / "u_theirs"), dflt=2**64 - 1)
    assert tree(tmp_path / "u_ours") == tree(tmp_path / "u_theirs")


@pytest.mark.parametrize("name", list(ARRAYS))
def test_bcolz_opens_and_appends_to_what_we_write(tmp_path, name):
    array = ARRAYS[name]
    root = tmp_path / "d"
    B.save_bcolz(array, root, attrs={"unit": "m", "n": [1, 2.5, None]})
    np.testing.assert_array_equal(B.load_bcolz(root), array)
    opened = bcolz.open(str(root), mode="a")
    np.testing.assert_array_equal(opened[:], array)
    assert dict(opened.attrs.attrs) == {"unit": "m", "n": [1, 2.5, None]}
    if len(array):
        opened.append(array[: max(1, len(array) // 2)])
    opened.flush()
    expected = np.concatenate([array, array[: max(1, len(array) // 2)]]) if len(array) else array
    np.testing.assert_array_equal(B.load_bcolz(root), expected)
    assert B.verify(root)["ok"]


@pytest.mark.parametrize("name", ["i4_100000", "S5", "M8ns", "M8D", "c16", "f4_3d", "bool"])
def test_bcolz_resizes_with_our_dflt(tmp_path, name):
    array = ARRAYS[name]
    dflt = {"i4_100000": 7, "S5": b"q", "M8ns": np.datetime64(5, "ns"), "M8D": "2001-01-01",
            "c16": 0, "f4_3d": 9.5, "bool": True}[name]  # fmt: skip
    B.save_bcolz(array, tmp_path / "d", dflt=dflt)
    opened = bcolz.open(str(tmp_path / "d"), mode="a")
    opened.resize(len(array) + 3)
    opened.flush()
    fill = np.zeros((3,) + array.shape[1:], array.dtype)
    fill[...] = dflt
    np.testing.assert_array_equal(B.load_bcolz(tmp_path / "d"), np.concatenate([array, fill]))


def test_datetime_dflt_is_its_integer_count(tmp_path):
    B.save_bcolz(ARRAYS["M8D"], tmp_path / "d", dflt="1970-01-11")
    storage = json.loads((tmp_path / "d/meta/storage").read_text())
    assert storage["dflt"] == 10 and storage["dtype"] == "datetime64[D]"


def test_complex_and_non_ascii_dflt_refused(tmp_path):
    with pytest.raises(ArgumentError, match="non-zero complex default"):
        B.save_bcolz(ARRAYS["c16"], tmp_path / "c", dflt=1j)
    with pytest.raises(ArgumentError, match="byte defaults as ASCII"):
        B.save_bcolz(ARRAYS["S5"], tmp_path / "s", dflt=b"\xfe")
    with pytest.raises(ArgumentError, match="does not fit dtype int32"):
        B.save_bcolz(ARRAYS["i4_100000"], tmp_path / "i", dflt="text")
    assert list(tmp_path.iterdir()) == []


def test_ctable_dflt_mapping(tmp_path):
    B.save_bcolz(ARRAYS["ct_basic"], tmp_path / "t", dflt={"mid": b"zz", "zeta": -1})
    assert json.loads((tmp_path / "t/mid/meta/storage").read_text())["dflt"] == "zz"
    assert json.loads((tmp_path / "t/zeta/meta/storage").read_text())["dflt"] == -1
    assert json.loads((tmp_path / "t/alpha/meta/storage").read_text())["dflt"] == 0.0
    with pytest.raises(ArgumentError, match="unknown columns"):
        B.save_bcolz(ARRAYS["ct_basic"], tmp_path / "u", dflt={"nope": 1})


def test_nested_structured_column_as_bcolz_writes_it(tmp_path):
    array = np.zeros(2, dtype=[("a", "<i2"), ("b", [("x", "<f4"), ("y", "u1")])])
    array["b"]["x"] = [1.5, 2.5]
    B.save_bcolz(array, tmp_path / "t")
    storage = json.loads((tmp_path / "t/b/meta/storage").read_text())
    assert storage["dtype"] == "[('x', '<f4'), ('y', 'u1')]"
    assert storage["dflt"] == [0.0, 0]
    np.testing.assert_array_equal(B.load_bcolz(tmp_path / "t"), array)


# --- chunklen and typesize rules --------------------------------------------------------------

CHUNKLEN_DTYPES = ["i1", "i2", "i4", "i8", "f8", "c16", "S5", "S300", "U3", "V300", "?", "M8[ns]"]


@pytest.mark.parametrize("dtype", CHUNKLEN_DTYPES)
def test_default_chunklen_matches_bcolz(dtype):
    for expectedlen in [0, 1, 3, 100, 4096, 50000, 100000, 10**6, 3 * 10**7, 10**9, 10**12]:
        for row in [(), (3,), (5, 7)]:
            atomsize = np.dtype(dtype).itemsize * math.prod(row)
            theirs = bcolz.carray(np.zeros((0,) + row, dtype), expectedlen=expectedlen).chunklen
            assert B.default_chunklen(atomsize, expectedlen) == theirs, (dtype, row, expectedlen)


def test_default_chunklen_examples():
    assert B.default_chunklen(4, 100000) == 65536
    assert B.default_chunklen(8, 50000) == 32768
    assert B.default_chunklen(4, 0) == 4096
    assert B.default_chunklen(5, 3) == 3276
    assert B.default_chunklen(48, 5) == 682
    assert B.default_chunklen(8, 2**27) == 262144  # 1 GiB of int64: 2 MiB chunks
    assert B.default_chunklen(10**7, 1) == 1  # never less than one row


def test_blosc_typesize_rule():
    cases = {"S7": 1, "U5": 4, "V300": 1, "V255": 255, "?": 1, "M8[ns]": 8, "c16": 16,
             "i4,f8": 12, "O": 1, "f2": 2}  # fmt: skip
    for dtype, typesize in cases.items():
        assert B.blosc_typesize(np.dtype(dtype)) == typesize, dtype
    assert B.blosc_typesize(np.dtype(("f4", (3,)))) == 4


def test_chunk_headers_follow_typesize_rule(tmp_path):
    B.save_bcolz(ARRAYS["V300"], tmp_path / "v")
    assert (tmp_path / "v/data/__0.blp").read_bytes()[19] == 1
    B.save_bcolz(ARRAYS["ct_basic"], tmp_path / "t")
    assert [
        (tmp_path / f"t/{c}/data/__0.blp").read_bytes()[19] for c in ("zeta", "alpha", "mid")
    ] == [4, 8, 1]


# --- refusals and atomic creation ---------------------------------------------------------------


def test_refusals_leave_nothing(tmp_path):
    with pytest.raises(ObjectNumpyArrayRejection):
        B.save_bcolz(np.array([1, "a"], dtype=object), tmp_path / "o")
    with pytest.raises(ArgumentError, match="at least one dimension"):
        B.save_bcolz(np.int64(3), tmp_path / "s")
    with pytest.raises(UnsupportedError, match="codec 'snappy' cannot be written"):
        B.save_bcolz(ARRAYS["i4_100000"], tmp_path / "c", cname="snappy")
    with pytest.raises(ArgumentError, match="clevel"):
        B.save_bcolz(ARRAYS["i4_100000"], tmp_path / "c", clevel=10)
    with pytest.raises(ArgumentError, match="shuffle"):
        B.save_bcolz(ARRAYS["i4_100000"], tmp_path / "c", shuffle=3)
    with pytest.raises(ArgumentError, match="chunklen must be a positive integer"):
        B.save_bcolz(ARRAYS["i4_100000"], tmp_path / "c", chunklen=0)
    with pytest.raises(ArgumentError, match="quantize is only for floating-point"):
        B.save_bcolz(ARRAYS["i4_100000"], tmp_path / "c", quantize=2)
    with pytest.raises(ArgumentError, match="hold no bytes"):
        B.save_bcolz(np.zeros((3, 0)), tmp_path / "z")
    with pytest.raises(ArgumentError, match="'class' is not valid for bcolz"):
        B.save_bcolz(np.zeros(2, [("class", "i4")]), tmp_path / "k")
    with pytest.raises(ArgumentError, match="'2x' is not valid for bcolz"):
        B.save_bcolz(np.zeros(2, [("2x", "i4")]), tmp_path / "k")
    with pytest.raises(ArgumentError, match="must be 1-D"):
        B.save_bcolz(np.zeros((2, 2), [("a", "i4")]), tmp_path / "k")
    with pytest.raises(AttributeValueError, match="numpy.int64"):
        B.save_bcolz(ARRAYS["i4_100000"], tmp_path / "a", attrs={"n": np.int64(1)})
    assert list(tmp_path.iterdir()) == []


def test_existing_directory_kept_unless_overwrite(tmp_path):
    root = tmp_path / "d"
    B.save_bcolz(np.arange(5), root)
    before = tree(root)
    with pytest.raises(FileExistsError, match="already exists"):
        B.save_bcolz(np.arange(7), root)
    assert tree(root) == before
    B.save_bcolz(np.arange(7), root, overwrite=True)
    assert B.load_bcolz(root).tolist() == list(range(7))
    assert sorted(os.listdir(tmp_path)) == ["d"]


def test_failed_write_leaves_no_partial_output(tmp_path, monkeypatch):
    calls = []
    real = engine.blosc1_compressor

    @contextlib.contextmanager
    def failing(**settings):  # the third chunk compressed fails
        with real(**settings) as compress:

            def counting(data):
                calls.append(1)
                if len(calls) == 3:
                    raise RuntimeError("disk on fire")
                return compress(data)

            yield counting

    monkeypatch.setattr(engine, "blosc1_compressor", failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        B.save_bcolz(np.arange(20), tmp_path / "new", chunklen=4)
    assert os.listdir(tmp_path) == []
    B.save_bcolz(np.arange(5), tmp_path / "old")
    before = tree(tmp_path / "old")
    calls.clear()
    with pytest.raises(RuntimeError, match="disk on fire"):
        B.save_bcolz(ARRAYS["ct_basic"], tmp_path / "old", chunklen=1, overwrite=True)
    assert tree(tmp_path / "old") == before
    assert os.listdir(tmp_path) == ["old"]


# --- attributes ---------------------------------------------------------------------------------


def test_attrs_mapping_round_trip_with_bcolz(tmp_path):
    root = tmp_path / "d"
    B.save_bcolz(np.arange(3), root)
    attrs = B.open_bcolz(root).attrs
    attrs["temp"] = 22.5
    attrs["name"] = "h\u00e9llo"
    attrs.update({"tuple": (1, 2), "nan": float("nan"), "big": 2**70}, flag=True)
    del attrs["temp"]
    assert (root / "__attrs__").read_bytes() == (
        b'{"name": "h\\u00e9llo", "tuple": [1, 2], "nan": NaN, "big": 1180591620717411303424,'
        b' "flag": true}\n'
    )
    assert attrs["tuple"] == [1, 2]
    seen = bcolz.open(str(root), mode="r").attrs
    assert seen["name"] == "h\u00e9llo" and seen["big"] == 2**70 and math.isnan(seen["nan"])
    writer = bcolz.open(str(root), mode="a")
    writer.attrs["from_bcolz"] = {"k": [1]}
    assert B.open_bcolz(root).attrs["from_bcolz"] == {"k": [1]}
    assert len(B.open_bcolz(root).attrs) == 6


@pytest.mark.parametrize(
    "value",
    [
        np.int64(1),
        np.float32(1),
        np.bool_(True),
        b"bytes",
        {1, 2},
        np.arange(2),
        {"nested": [1, {"deep": object()}]},
        {1: "int key"},
    ],  # fmt: skip
)
def test_attrs_refused_before_anything_is_written(tmp_path, value):
    root = tmp_path / "d"
    B.save_bcolz(np.arange(3), root, attrs={"keep": 1})
    attrs = B.open_bcolz(root).attrs
    with pytest.raises(AttributeValueError, match="JSON"):
        attrs["bad"] = value
    assert (root / "__attrs__").read_bytes() == b'{"keep": 1}\n'
    assert dict(attrs) == {"keep": 1}
    assert bcolz.open(str(root), mode="r").attrs["keep"] == 1


def test_ctable_and_column_attrs(tmp_path):
    root = tmp_path / "t"
    B.save_bcolz(ARRAYS["ct_basic"], root, attrs={"table": True})
    table = B.open_bcolz(root)
    table.carray("zeta").attrs["unit"] = "s"
    assert bcolz.open(str(root)).attrs["table"] is True
    assert bcolz.open(str(root))["zeta"].attrs["unit"] == "s"
    assert table.attrs.to_dict() == {"table": True}


# --- appending ----------------------------------------------------------------------------------


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.data(),
    dtype=st.sampled_from(["i4", "f8", "S3", "U2", "M8[ns]", "u1"]),
    row=st.sampled_from([(), (3,), (2, 2)]),
    chunklen=st.integers(1, 9),
)
def test_appends_match_bcolz_byte_for_byte(tmp_path_factory, data, dtype, row, chunklen):
    tmp = tmp_path_factory.mktemp("append")
    shapes = st.tuples(st.integers(0, 25)).map(lambda s: s + row)
    if dtype == "M8[ns]":
        elements = hnp.arrays("i8", shapes).map(lambda a: a.view("M8[ns]"))
    elif dtype == "f8":
        elements = hnp.arrays(dtype, shapes, elements=st.floats(allow_nan=False))
    else:
        elements = hnp.arrays(dtype, shapes)
    first = data.draw(elements)
    B.save_bcolz(first, tmp / "ours", chunklen=chunklen)
    bcolz.carray(first, rootdir=str(tmp / "theirs"), chunklen=chunklen)
    expected = [first]
    for _ in range(data.draw(st.integers(1, 3))):
        more = data.draw(elements)
        B.append_bcolz(tmp / "ours", more)
        theirs = bcolz.open(str(tmp / "theirs"), mode="a")
        theirs.append(more)
        theirs.flush()
        expected.append(more)
        assert tree(tmp / "ours") == tree(tmp / "theirs")
    np.testing.assert_array_equal(B.load_bcolz(tmp / "ours"), np.concatenate(expected))


def test_append_to_bcolz_written_dirs(tmp_path):
    bcolz.carray(np.arange(10, dtype="i4"), rootdir=str(tmp_path / "c"), chunklen=4)
    assert B.append_bcolz(tmp_path / "c", np.arange(10, 17)) == 17
    assert B.append_bcolz(tmp_path / "c", 99) == 18
    np.testing.assert_array_equal(bcolz_read(tmp_path / "c"), list(range(17)) + [99])
    table = ARRAYS["ct_basic"]
    bcolz.ctable(table, rootdir=str(tmp_path / "t"), chunklen=2)
    B.append_bcolz(tmp_path / "t", table)
    B.append_bcolz(tmp_path / "t", {"mid": [b"zz"], "alpha": [0.5], "zeta": [9]})
    result = bcolz_read(tmp_path / "t")
    assert result.tolist() == table.tolist() * 2 + [(9, 0.5, b"zz")]
    np.testing.assert_array_equal(B.load_bcolz(tmp_path / "t"), result)


def test_append_refusals_change_nothing(tmp_path):
    B.save_bcolz(np.arange(6, dtype="i4").reshape(3, 2), tmp_path / "c", chunklen=2)
    B.save_bcolz(ARRAYS["ct_basic"], tmp_path / "t")
    before = tree(tmp_path)
    with pytest.raises(ArgumentError, match=r"rows of shape \(3,\) do not match"):
        B.append_bcolz(tmp_path / "c", np.zeros((1, 3), "i4"))
    with pytest.raises(ArgumentError, match="cannot append float64 rows to a int32 carray"):
        B.append_bcolz(tmp_path / "c", np.zeros((1, 2)))
    with pytest.raises(ArgumentError, match="the table has"):
        B.append_bcolz(tmp_path / "t", {"zeta": [1]})
    with pytest.raises(ArgumentError, match="different lengths"):
        B.append_bcolz(tmp_path / "t", {"zeta": [1], "alpha": [1.0, 2.0], "mid": [b"a"]})
    with pytest.raises(ArgumentError, match="structured array or a mapping"):
        B.append_bcolz(tmp_path / "t", [1, 2])
    with pytest.raises(BloscpackError, match="object carray"):
        B.append_bcolz(__import__("conftest").DATA / "bcolz/ca_object", [1])
    assert tree(tmp_path) == before


class Crash(Exception):
    pass


def crash_after(monkeypatch, n_files: int) -> list:
    """Make the module's atomic writes fail after ``n_files`` complete ones."""
    done: list = []
    real = appending.atomic_write

    def counted(path, *args, **kwargs):
        if len(done) >= n_files:
            raise Crash(f"crash before writing {path}")
        done.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(appending, "atomic_write", counted)
    return done


@pytest.mark.parametrize("kind", ["carray", "ctable"])
def test_interrupted_append_keeps_old_rows(tmp_path, monkeypatch, kind):
    if kind == "carray":
        old, new = np.arange(10, dtype="i4"), np.arange(100, 111, dtype="i4")
    else:
        old = np.array([(i, i / 2, b"k%d" % i) for i in range(10)],
                       dtype=[("zeta", "i4"), ("alpha", "f8"), ("mid", "S3")])  # fmt: skip
        new = old[:7].copy()
        new["zeta"] += 100
    pristine = tmp_path / "pristine"
    B.save_bcolz(old, pristine, chunklen=4)
    # count the files one complete append writes
    probe = tmp_path / "probe"
    shutil.copytree(pristine, probe)
    with monkeypatch.context() as m:
        total = crash_after(m, 10**6)
        B.append_bcolz(probe, new)
    assert total[-1].endswith(os.path.join(B.META_DIR, "sizes"))
    for stop in range(len(total)):
        root = tmp_path / f"crash{stop}"
        shutil.copytree(pristine, root)
        with monkeypatch.context() as m:
            crash_after(m, stop)
            with pytest.raises(Crash):
                B.append_bcolz(root, new)
        np.testing.assert_array_equal(B.load_bcolz(root), old)
        np.testing.assert_array_equal(bcolz_read(root), old)
        # the next append starts from the rows that are there
        B.append_bcolz(root, new)
        expected = np.concatenate([old, new])
        np.testing.assert_array_equal(B.load_bcolz(root), expected)
        np.testing.assert_array_equal(bcolz_read(root), expected)
        assert B.verify(root)["ok"]


CHILD = """
import os, sys
import numpy as np
from bloscpack.containers import bcolz as B
from bloscpack.containers.bcolz import append as appending
root, stop = sys.argv[1], int(sys.argv[2])
real, done = appending.atomic_write, []
def dying(path, *args, **kwargs):
    if len(done) == stop:
        os._exit(9)  # no cleanup, no flush: as a kill -9 would leave it
    done.append(path)
    return real(path, *args, **kwargs)
appending.atomic_write = dying
B.append_bcolz(root, np.arange(1000, 1000 + int(sys.argv[3]), dtype="i4"))
"""


@pytest.mark.parametrize("stop", [0, 1, 2, 3])  # the 4th file written is meta/sizes
def test_killed_append_process_keeps_old_rows(tmp_path, stop):
    import subprocess
    import sys

    root = tmp_path / "c"
    B.save_bcolz(np.arange(10, dtype="i4"), root, chunklen=4)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(root), str(stop), "9"])
    assert proc.returncode == 9
    np.testing.assert_array_equal(B.load_bcolz(root), np.arange(10))
    np.testing.assert_array_equal(bcolz_read(root), np.arange(10))


def test_sigkilled_append_keeps_old_rows(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    code = (
        "import sys, numpy as np\nfrom bloscpack.containers import bcolz as B\n"
        "print('go', flush=True)\n"
        "B.append_bcolz(sys.argv[1], np.arange(10**6, dtype='i4') + 10)\n"
    )
    interrupted = 0
    for delay in (0.0, 0.05, 0.1, 0.2):
        root = tmp_path / f"c{delay}"
        B.save_bcolz(np.arange(10, dtype="i4"), root, chunklen=1000)
        with subprocess.Popen(
            [sys.executable, "-c", code, str(root)], stdout=subprocess.PIPE
        ) as proc:
            assert proc.stdout is not None and proc.stdout.readline() == b"go\n"
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        data = B.load_bcolz(root)
        assert len(data) in (10, 10 + 10**6)
        np.testing.assert_array_equal(data[:10], np.arange(10))
        np.testing.assert_array_equal(bcolz_read(root), data)
        interrupted += len(data) == 10 and len(os.listdir(root / "data")) > 1
    assert interrupted  # at least one kill landed between chunk files


def test_append_conversions(tmp_path):
    B.save_bcolz(np.arange(3, dtype="i2"), tmp_path / "c")
    B.append_bcolz(tmp_path / "c", [7, 8])
    B.append_bcolz(tmp_path / "c", np.array([9], "i8"))
    assert B.load_bcolz(tmp_path / "c").tolist() == [0, 1, 2, 7, 8, 9]
    before = tree(tmp_path)
    with pytest.raises(ArgumentError, match="cannot append int64 rows to a int16 carray: values"):
        B.append_bcolz(tmp_path / "c", np.array([2**20]))
    with pytest.raises(ArgumentError, match="cannot append list rows to a int16 carray"):
        B.append_bcolz(tmp_path / "c", [2**20])
    with pytest.raises(ArgumentError, match="cannot append float64 rows"):
        B.append_bcolz(tmp_path / "c", np.array([1.5]))
    with pytest.raises(ObjectNumpyArrayRejection):
        B.append_bcolz(tmp_path / "c", np.array([1, "a"], dtype=object))
    assert tree(tmp_path) == before
