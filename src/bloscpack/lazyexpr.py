"""python-blosc2 lazy expressions, evaluated on request (``bloscpack.load(path, evaluate=True)``).

A lazy expression file (``(a + b).save("ex.b2nd")``) holds placeholder chunks and, in its
``b2o`` vlmetalayer, the expression text and the paths of its operands.  This module never
runs that text: it parses it into Python's syntax tree and accepts only a small language of
numpy operations (numbers, operand names, arithmetic, comparisons, bitwise operators and the
element-wise functions and reductions in :data:`FUNCTIONS`); anything else is refused by name.
Operands are files named relative to the expression's own directory, inside it: never a URL,
an absolute path, or a path that leaves the directory.
"""

from __future__ import annotations

import ast
import operator
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .errors import UnmodelledFeature

#: The binary operators an expression may use, as numpy applies them.
BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
}
COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_ELEMENTWISE = (
    "abs", "absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "ceil", "conj", "cos", "cosh", "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan",
    "log", "log10", "log1p", "log2", "maximum", "minimum", "negative", "real", "sign", "sin",
    "sinh", "sqrt", "square", "tan", "tanh", "trunc", "where",
)  # fmt: skip
_REDUCTIONS = ("all", "any", "max", "mean", "min", "prod", "std", "sum", "var")
#: The functions an expression may call (by their numpy names; ``arc*`` also as ``a*``, as
#: numexpr spells them), and the keyword reductions take.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{name: getattr(np, name) for name in (*_ELEMENTWISE, *_REDUCTIONS)},
    **{f"a{name[3:]}": getattr(np, name) for name in _ELEMENTWISE if name.startswith("arc")},
}
REDUCTION_KEYWORDS = ("axis",)
#: The syntax an expression may use.
ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Name, ast.Constant,
           ast.Load, ast.keyword, ast.operator, ast.unaryop, ast.cmpop)  # fmt: skip
#: Longest expression text parsed, deepest nesting of its operations, and deepest chain of
#: expressions over expressions.
MAX_TEXT = 64 * 1024
MAX_NESTING = 100
MAX_DEPTH = 16


def _refuse(name: str, why: str) -> UnmodelledFeature:
    return UnmodelledFeature(f"{name}: the lazy expression cannot be evaluated: {why}")


def parse(text: Any, name: str) -> ast.Expression:
    """The syntax tree of the expression ``text`` (from the file ``name``), checked to use
    only what :func:`evaluate` allows."""
    if not isinstance(text, str) or not text or len(text) > MAX_TEXT:
        raise _refuse(name, "the file holds no expression text of at most 64 KiB")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise _refuse(name, f"{text[:80]!r} is not a Python expression") from None
    nodes: list[tuple[ast.AST, int]] = [(tree, 0)]
    while nodes:
        node, depth = nodes.pop()
        if depth > MAX_NESTING:
            raise _refuse(name, f"it nests deeper than {MAX_NESTING} operations")
        _check_node(node, name)
        nodes.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


def _check_node(node: ast.AST, name: str) -> None:
    if not isinstance(node, ALLOWED):
        raise _refuse(name, f"it uses {type(node).__name__} ({ast.unparse(node)[:60]!r}),"
                            " which is not a numpy operation this library evaluates")  # fmt: skip
    if isinstance(node, ast.BinOp) and type(node.op) not in BINARY:
        raise _refuse(name, f"the operator {type(node.op).__name__} is not supported")
    if isinstance(node, ast.UnaryOp) and type(node.op) not in UNARY:
        raise _refuse(name, f"the operator {type(node.op).__name__} is not supported")
    if isinstance(node, ast.Compare) and any(type(op) not in COMPARE for op in node.ops):
        raise _refuse(name, "a comparison it uses is not supported")
    if isinstance(node, ast.Constant) and type(node.value) not in (int, float, complex, bool):
        raise _refuse(name, f"the constant {node.value!r:.60} is not a number")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise _refuse(name, f"the function {ast.unparse(node.func)[:60]!r} is not one of"
                                " the numpy functions this library evaluates")  # fmt: skip
        for keyword in node.keywords:
            if keyword.arg not in REDUCTION_KEYWORDS or not isinstance(keyword.value,
                                                                       ast.Constant):  # fmt: skip
                raise _refuse(name, f"the keyword {keyword.arg!r} of {node.func.id} is not"
                                    " supported")  # fmt: skip


def operand_path(reference: Any, directory: str, name: str) -> str:
    """The local path of the operand ``reference`` (python-blosc2's ``{"kind": "urlpath",
    "urlpath": ...}``) of the expression file ``name`` in ``directory``: relative, inside it."""
    if not isinstance(reference, Mapping) or reference.get("kind") != "urlpath":
        kind = reference.get("kind") if isinstance(reference, Mapping) else type(reference).__name__
        raise _refuse(name, f"an operand is a {kind!r} reference; only files beside it are read")
    relative = reference.get("urlpath")
    if not isinstance(relative, str) or not relative:
        raise _refuse(name, "an operand names no path")
    if "://" in relative or os.path.isabs(relative) or relative.startswith("~"):
        raise _refuse(name, f"the operand {relative[:80]!r} is not a path relative to the file;"
                            " operands are read only from beside it")  # fmt: skip
    root = os.path.realpath(directory)
    path = os.path.realpath(os.path.join(root, relative))
    if os.path.commonpath([root, path]) != root:
        raise _refuse(name, f"the operand {relative[:80]!r} leaves the file's directory")
    return path


def evaluate(payload: Mapping[str, Any], name: str, load: Callable[[str], np.ndarray],
             expected: tuple[np.dtype, tuple[int, ...]] | None = None) -> np.ndarray:  # fmt: skip
    """The array the lazy expression ``payload`` (the ``b2o`` vlmetalayer of the file ``name``)
    stands for, its operands read with ``load(path)``; of the ``(dtype, shape)`` the file
    says it has, when ``expected``."""
    tree = parse(payload.get("expression"), name)
    operands = payload.get("operands")
    if not isinstance(operands, Mapping):
        raise _refuse(name, "the file lists no operands")
    names = {node.id for node in ast.walk(tree)
             if isinstance(node, ast.Name) and node.id not in FUNCTIONS}  # fmt: skip
    missing = sorted(names - set(operands))
    if missing:
        raise _refuse(name, f"the expression names {missing[0]!r}, which is no operand")
    directory = os.path.dirname(os.path.abspath(name))
    values = {key: load(operand_path(operands[key], directory, name)) for key in sorted(names)}
    try:
        with np.errstate(all="ignore"):  # as numpy and numexpr: inf and nan, no error
            result = np.asarray(_value(tree.body, values))
    except (ArithmeticError, TypeError, ValueError) as exc:
        raise _refuse(name, f"evaluating it failed: {str(exc).splitlines()[0][:120]}") from None
    if expected is None:
        return result
    dtype, shape = expected
    if result.shape != tuple(shape):
        raise _refuse(name, f"it gives shape {result.shape}, the file says {tuple(shape)}")
    return result.astype(dtype, copy=False)


def _value(node: ast.AST, values: Mapping[str, np.ndarray]) -> Any:
    """The value of the checked node ``node`` over the operand arrays ``values``."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left, values), _value(node.right, values)
        if not isinstance(left, (np.ndarray, np.generic)) and not isinstance(
            right, (np.ndarray, np.generic)
        ):  # two numbers: numpy's fixed-size arithmetic, never an unbounded Python int
            left, right = np.asarray(left)[()], np.asarray(right)[()]
        return BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp):
        return UNARY[type(node.op)](_value(node.operand, values))
    if isinstance(node, ast.Compare):
        left = _value(node.left, values)
        result: Any = True
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _value(right_node, values)
            result = result & COMPARE[type(op)](left, right)
            left = right
        return result
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    args = [_value(arg, values) for arg in node.args]
    keywords = {k.arg: _value(k.value, values) for k in node.keywords if k.arg is not None}
    return FUNCTIONS[node.func.id](*args, **keywords)


__all__ = ["FUNCTIONS", "MAX_DEPTH", "evaluate", "operand_path", "parse"]
