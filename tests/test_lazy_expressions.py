"""python-blosc2 lazy expressions evaluated on request (``bloscpack.load(p, evaluate=True)``):
files python-blosc2 writes give what ``blosc2.open(p, deserialize="full")[:]`` gives, and
crafted files (code instead of an expression, operands outside the file's directory, loops)
are refused by name without running anything or reading anything outside."""

from __future__ import annotations

import os

import blosc2
import numpy as np
import pytest
from blosc2.b2objects import make_b2object_carrier, write_b2object_payload

import bloscpack
from bloscpack import lazyexpr
from bloscpack.errors import UnmodelledFeature

A = np.arange(24, dtype="<f8").reshape(4, 6)
B = np.linspace(-3, 3, 24).reshape(4, 6)
INTS = np.arange(24, dtype="<i4").reshape(4, 6)


@pytest.fixture
def operands(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("sub")
    return {
        "a": blosc2.asarray(A, urlpath="a.b2nd", mode="w", chunks=(2, 6), blocks=(1, 6)),
        "b": blosc2.asarray(B, urlpath="sub/b.b2nd", mode="w", chunks=(2, 6), blocks=(1, 6)),
        "i": blosc2.asarray(INTS, urlpath="i.b2nd", mode="w", chunks=(2, 6), blocks=(1, 6)),
    }


EXPRESSIONS = [
    "a + b",
    "a * 2 - b / 3",
    "sin(a) + cos(b) ** 2",
    "where(a > b, a, b)",
    "(a >= 3) | (b < 1)",
    "where((a >= 3) & (b < 1), a, b)",
    "i // 3 + i % 5",
    "i << 2 ^ i",
    "-a + abs(b)",
    "arctan2(a, b) + sqrt(a) + exp(b) + log1p(a)",
    "sum(a, axis=0) + 1",
]


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_python_blosc2_expressions_evaluate_as_it_does(operands, expression):
    blosc2.lazyexpr(expression, operands=operands).save("ex.b2nd")
    expected = blosc2.open("ex.b2nd", deserialize="full")[:]
    got = bloscpack.load("ex.b2nd", evaluate=True)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    if got.dtype.kind == "f":
        np.testing.assert_array_max_ulp(got, expected, maxulp=4)
    else:
        assert np.array_equal(got, expected)


def test_operator_built_expressions_and_lazy_operands(operands):
    (operands["a"] + operands["b"]).save("first.b2nd")
    first = blosc2.open("first.b2nd", deserialize="full")
    (first * 3).save("second.b2nd")
    assert np.array_equal(bloscpack.load("second.b2nd", evaluate=True), (A + B) * 3)


def test_without_evaluate_it_is_refused(operands):
    (operands["a"] + operands["b"]).save("ex.b2nd")
    with pytest.raises(UnmodelledFeature, match="load it with evaluate=True"):
        bloscpack.load("ex.b2nd")


def crafted(expression, operands, shape=(4, 6), dtype="<f8"):
    """A lazy expression file as python-blosc2 writes one, with any payload."""
    carrier = make_b2object_carrier("lazyexpr", shape, np.dtype(dtype), urlpath="bad.b2nd",
                                    mode="w")  # fmt: skip
    write_b2object_payload(carrier, {"kind": "lazyexpr", "version": 1, "expression": expression,
                                     "operands": operands})  # fmt: skip
    return "bad.b2nd"


def refs(**paths):
    return {key: {"kind": "urlpath", "version": 1, "urlpath": path} for key, path in paths.items()}


REFUSED = [
    ("__import__('os').system('touch owned')", refs(),
     "the function \"__import__('os').system\" is not one of the numpy functions"),
    ("o0.__class__", refs(o0="a.b2nd"), "it uses Attribute ('o0.__class__')"),
    ("(lambda: 1)()", refs(), "the function 'lambda: 1' is not one of the numpy functions"),
    ("o0[0]", refs(o0="a.b2nd"), "it uses Subscript ('o0[0]')"),
    ("open(o0)", refs(o0="a.b2nd"), "the function 'open' is not one of the numpy functions"),
    ("o0 + 'x'", refs(o0="a.b2nd"), "the constant 'x' is not a number"),
    ("o0 and o0", refs(o0="a.b2nd"), "it uses BoolOp"),
    ("o0 +", refs(o0="a.b2nd"), "'o0 +' is not a Python expression"),
    ("sum(o0, dtype=1)", refs(o0="a.b2nd"), "the keyword 'dtype' of sum is not supported"),
    ("o0 + o1", refs(o0="a.b2nd"), "the expression names 'o1', which is no operand"),
    ("o0 * 2", refs(o0="/etc/passwd"), "the operand '/etc/passwd' is not a path relative"),
    ("o0 * 2", refs(o0="../a.b2nd"), "the operand '../a.b2nd' leaves the file's directory"),
    ("o0 * 2", refs(o0="sub/../../a.b2nd"), "leaves the file's directory"),
    ("o0 * 2", refs(o0="http://127.0.0.1:9/a.b2nd"), "is not a path relative to the file"),
    ("o0 * 2", {"o0": {"kind": "c2array", "path": "x", "urlbase": "https://example.com"}},
     "an operand is a 'c2array' reference"),
    ("o0 * 2", refs(o0="bad.b2nd"), "its operand 'bad.b2nd' is itself or an expression it"),
    ("o0 + 1", refs(o0="a.b2nd"), None),  # the control: this one evaluates
    ("sum(o0)", refs(o0="a.b2nd"), "it gives shape (), the file says (4, 6)"),
    ("9 ** 9 ** 9 + o0", refs(o0="a.b2nd"), None),  # numpy's fixed-size numbers: no hang
    ("o0" + " + o0" * 200, refs(o0="a.b2nd"), "nests deeper than 100 operations"),
    ("o0 + " + "(" * 300 + "1" + ")" * 300, refs(o0="a.b2nd"), "is not a Python expression"),
]  # fmt: skip


@pytest.mark.parametrize(("expression", "references", "message"), REFUSED)
def test_crafted_files_are_refused_by_name(operands, expression, references, message):
    path = crafted(expression, references)
    if message is None:
        assert bloscpack.load(path, evaluate=True).shape == (4, 6)
        return
    with pytest.raises(UnmodelledFeature) as caught:
        bloscpack.load(path, evaluate=True)
    assert message in str(caught.value)
    assert str(caught.value).startswith("bad.b2nd")
    assert "\n" not in str(caught.value)
    assert not os.path.exists("owned")


def test_a_symlink_out_of_the_directory_is_refused(operands, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside.b2nd"
    blosc2.asarray(A, urlpath=str(outside), mode="w")
    os.symlink(outside, "link.b2nd")
    with pytest.raises(UnmodelledFeature, match="the operand 'link.b2nd' leaves the file's"):
        bloscpack.load(crafted("o0 + 1", refs(o0="link.b2nd")), evaluate=True)


def test_the_result_gets_the_dtype_the_file_says(operands):
    path = crafted("o0 + 1", refs(o0="i.b2nd"), dtype="<f4")
    got = bloscpack.load(path, evaluate=True)
    assert got.dtype == np.dtype("<f4")
    assert np.array_equal(got, INTS + 1)


def test_functions_are_numpy_functions():
    assert lazyexpr.FUNCTIONS["asin"] is np.arcsin
    assert lazyexpr.FUNCTIONS["where"] is np.where
    assert "eval" not in lazyexpr.FUNCTIONS and "open" not in lazyexpr.FUNCTIONS
