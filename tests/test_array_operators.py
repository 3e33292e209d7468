"""Python operators on a lazy array never give a silently wrong answer: each raises a
``TypeError`` that says to read the data first; numpy's functions and operators with a numpy
operand on the left read the array and give numpy's answer."""

from __future__ import annotations

import operator
import re
from pathlib import Path

import numpy as np
import pytest

import bloscpack

FORMATS = ("blp", "b2frame", "b2nd", "sframe", "bcolz")
DATA = np.arange(60, dtype=np.int64).reshape(6, 10) - 20

BINARY = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge, "+": operator.add, "-": operator.sub,
    "*": operator.mul, "@": operator.matmul, "/": operator.truediv, "//": operator.floordiv,
    "%": operator.mod, "**": operator.pow, "<<": operator.lshift, ">>": operator.rshift,
    "&": operator.and_, "|": operator.or_, "^": operator.xor, "divmod()": divmod,
}  # fmt: skip
INPLACE = {
    "+": operator.iadd, "-": operator.isub, "*": operator.imul, "@": operator.imatmul,
    "/": operator.itruediv, "//": operator.ifloordiv, "%": operator.imod, "**": operator.ipow,
    "<<": operator.ilshift, ">>": operator.irshift, "&": operator.iand, "|": operator.ior,
    "^": operator.ixor,
}  # fmt: skip
UNARY = {"unary -": operator.neg, "unary +": operator.pos, "abs()": abs, "~": operator.invert,
         "bool()": bool}  # fmt: skip


@pytest.fixture(params=FORMATS)
def lazy(request, tmp_path: Path):
    path = tmp_path / f"a.{request.param}"
    bloscpack.save(DATA, path, format=request.param)
    with bloscpack.open(path) as array:
        yield array


def refused(symbol: str):
    return pytest.raises(TypeError, match=rf"^{re.escape(symbol)} is not supported"
                         r" on a lazy BloscArray: read the data first \(x\[\.\.\.\]")  # fmt: skip


@pytest.mark.parametrize("symbol", BINARY)
def test_binary_operators_refuse(lazy, symbol: str) -> None:
    op = BINARY[symbol]
    other = 2 if symbol != "@" else np.ones((10, 2), np.int64).tolist()
    with refused(symbol):
        op(lazy, other)
    mirrored = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(symbol, symbol)
    with refused(mirrored):  # an int on the left: Python asks the array (2 < x is x > 2)
        op(other if symbol != "@" else 3, lazy)
    with refused(symbol):
        op(lazy, lazy)


@pytest.mark.parametrize("symbol", INPLACE)
def test_inplace_operators_refuse(lazy, symbol: str) -> None:
    target = lazy
    with refused(symbol):
        INPLACE[symbol](target, 2)
    assert target is lazy


@pytest.mark.parametrize("symbol", UNARY)
def test_unary_operators_refuse(lazy, symbol: str) -> None:
    with refused(symbol):
        UNARY[symbol](lazy)


def test_membership_refuses(lazy) -> None:
    with refused("in"):
        _ = 5 in lazy


def test_identity_is_kept(lazy) -> None:
    assert lazy in [lazy] and {lazy: 1}[lazy] == 1
    assert lazy is not None


@pytest.mark.parametrize("symbol", ["==", "<", "+", "*", "-", "&"])
def test_numpy_on_the_left_reads_the_data(lazy, symbol: str) -> None:
    op = BINARY[symbol]
    np.testing.assert_array_equal(op(np.int64(3), lazy), op(np.int64(3), DATA))
    np.testing.assert_array_equal(op(np.full((6, 10), 3), lazy), op(np.full((6, 10), 3), DATA))


def test_numpy_functions_read_the_data(lazy) -> None:
    assert np.sum(lazy) == DATA.sum()
    np.testing.assert_array_equal(np.add(lazy, 1), DATA + 1)
    np.testing.assert_array_equal(np.equal(lazy, 5), DATA == 5)
    np.testing.assert_array_equal(lazy[...] == 5, DATA == 5)
