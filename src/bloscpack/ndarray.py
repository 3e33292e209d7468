"""numpy arrays <-> the .blp metadata dict of bloscpack 0.16.

The dict is ``{"dtype": <Python literal string>, "shape": [...], "order": "C"|"F",
"container": "numpy"}``.  ``dtype`` is ``repr(dtype.str)`` for plain dtypes and
``repr(dtype.descr)`` for structured ones, as 0.16 wrote it; a structured dtype that its descr
cannot reproduce exactly (padding, custom offsets, ``align=True``) is written as the literal of
the dict form ``np.dtype`` takes (names, formats, offsets, itemsize, titles, aligned), which
0.16 reads back exactly too.  Reading also accepts the pre-0.7.2 forms (a bare dtype string or
a JSON list descr) and turns 0.16's padding entries (``('', '|V7')``) back into offsets.
"""

from __future__ import annotations

import ast
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.format import descr_to_dtype

from .errors import (
    ArgumentError,
    FormatError,
    InvalidCodePoint,
    NotANumpyArray,
    ObjectNumpyArrayRejection,
    UnsupportedError,
)

CONTAINER = "numpy"
#: The largest Unicode code point: numpy's ``U`` items are UCS-4 code units, and a larger one
#: makes a broken Python ``str`` (numpy itself takes any value, surrogates too).
MAX_CODE_POINT = 0x10FFFF
MAX_BLOSC1_TYPESIZE = 255
_STORABLE_KINDS = set("biufcmMSUV")
#: A plain dtype string such as ``'<f8'``, ``'|u1'`` or ``'<M8[ns]'``: quoted as 0.16 writes it
#: (``repr(dtype.str)``), or bare with a byte order (pre-0.7.2), which is no Python literal.
_PLAIN_DTYPE = re.compile(
    r"(?:(['\"])(?P<quoted>[<>|=]?[A-Za-z][A-Za-z0-9]*(?:\[[A-Za-z0-9]+\])?)\1"
    r"|(?P<bare>[<>|=][A-Za-z][A-Za-z0-9]*(?:\[[A-Za-z0-9]+\])?))",
    re.ASCII,
)


@dataclass(frozen=True)
class ArraySpec:
    """dtype, shape and memory order of a stored array."""

    dtype: np.dtype
    shape: tuple[int, ...]
    order: str

    @property
    def nbytes(self) -> int:
        """Bytes of array data (Python int: no overflow)."""
        return math.prod(self.shape) * self.dtype.itemsize

    def empty(self) -> np.ndarray:
        """A new uninitialised array of this spec."""
        return np.empty(self.shape, dtype=self.dtype, order=self.order)  # type: ignore[call-overload]


# --- dtypes -------------------------------------------------------------------------------


def check_storable(dtype: np.dtype) -> None:
    """Raise unless arrays of ``dtype`` are plain bytes that can be stored and read back."""
    if dtype.hasobject:
        raise ObjectNumpyArrayRejection(
            f"arrays of dtype {dtype} hold Python object references, which cannot be stored"
            " without pickling; convert them to a fixed-size dtype (e.g. 'U' or 'S') first"
        )
    bad = _first_base(dtype, _unstorable)
    if bad is not None:
        raise UnsupportedError(
            f"arrays of dtype {dtype} cannot be stored: kind {bad.kind!r} ({bad}) is not a"
            " fixed-size builtin numpy type"
        )


def check_writable(dtype: np.dtype, name: str) -> None:
    """Raise, naming the output ``name``, unless a new container may hold arrays of ``dtype``:
    storable (:func:`check_storable`), and no long double anywhere in it, whose bytes mean
    other numbers on other machines (80-bit x87 padded on x86, IEEE quad on aarch64 Linux,
    a double on Windows and macOS)."""
    try:
        check_storable(dtype)
    except (ObjectNumpyArrayRejection, UnsupportedError) as exc:
        raise type(exc)(f"{name}: {exc}") from None
    extended = _first_base(dtype, _long_double)
    if extended is not None:
        raise UnsupportedError(
            f"{name}: arrays of dtype {dtype} cannot be stored: {extended} holds long"
            " doubles, whose bytes mean other numbers on other machines; convert it first"
            f" (a.astype({'np.complex128' if extended.kind == 'c' else 'np.float64'}))"
        )


def _unstorable(dtype: np.dtype) -> bool:
    return dtype.kind not in _STORABLE_KINDS or type(dtype).__module__ != "numpy.dtypes"


def _long_double(dtype: np.dtype) -> bool:
    return dtype.itemsize > {"f": 8, "c": 16}.get(dtype.kind, dtype.itemsize)


def _first_base(dtype: np.dtype, bad: Any) -> np.dtype | None:
    """The first dtype in ``dtype`` (itself, its fields, its subarrays' bases) that is neither
    structured nor a subarray and for which ``bad`` holds, else None."""
    if dtype.fields is not None:
        for field in dtype.fields.values():
            found = _first_base(field[0], bad)
            if found is not None:
                return found
        return None
    if dtype.subdtype is not None:
        return _first_base(dtype.subdtype[0], bad)
    return dtype if bad(dtype) else None


def _same_dtype(a: np.dtype, b: np.dtype) -> bool:
    return a == b and repr(a) == repr(b)


def _dtype_literal(dtype: np.dtype) -> Any:
    """A Python literal ``x`` with ``np.dtype(x)`` identical to ``dtype``."""
    if dtype.fields is None:
        if dtype.subdtype is not None:
            base, shape = dtype.subdtype
            return (_dtype_literal(base), shape)
        return dtype.str
    try:
        if _same_dtype(np.dtype(dtype.descr), dtype):
            return dtype.descr
    except ValueError:  # numpy has no descr for overlapping or out-of-order fields
        pass
    names = list(dtype.names or ())
    fields = [dtype.fields[name] for name in names]
    spec: dict[str, Any] = {
        "names": names,
        "formats": [_dtype_literal(field[0]) for field in fields],
        "offsets": [field[1] for field in fields],
        "itemsize": dtype.itemsize,
    }
    if any(len(field) > 2 for field in fields):
        spec["titles"] = [field[2] if len(field) > 2 else None for field in fields]
    if dtype.isalignedstruct:
        spec["aligned"] = True
    return spec


def dtype_to_string(dtype: np.dtype) -> str:
    """The ``dtype`` entry of the metadata dict (a Python literal in a string)."""
    if dtype.fields is None:
        return repr(dtype.str)
    return repr(_dtype_literal(dtype))


def _lists_to_tuples(value: Any) -> Any:
    """Pre-0.7.2 JSON descr (lists of lists) -> a numpy descr (list of tuples)."""
    if isinstance(value, list):
        if value and isinstance(value[0], list):
            return [_lists_to_tuples(v) for v in value]
        return tuple(_lists_to_tuples(v) for v in value)
    return value


def _dtype_spec(value: Any) -> Any:
    """What ``np.dtype`` (or, for a list, ``descr_to_dtype``) is given for a metadata ``dtype``
    entry: the value of the Python literal in a string (a plain dtype string is picked out
    directly; other literals go through ``ast.literal_eval``), a string that is no literal as
    it is (a legacy bare dtype string), a JSON descr with its lists turned into tuples."""
    if not isinstance(value, str):
        return _lists_to_tuples(value)
    plain = _PLAIN_DTYPE.fullmatch(value)
    if plain is not None:
        return plain["quoted"] or plain["bare"]
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return value  # a legacy bare dtype string such as 'float64'


def dtype_from_metadata(value: Any) -> np.dtype:
    """The dtype of a metadata ``dtype`` entry: a literal string (0.16), or a bare dtype
    string / JSON descr (pre-0.7.2); 0.16's padding entries become offsets."""
    spec = _dtype_spec(value)
    if spec is None:  # numpy would read None as float64
        raise FormatError("metadata dtype None is not a numpy dtype")
    try:
        dtype = descr_to_dtype(spec) if isinstance(spec, list) else np.dtype(spec)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError,
            RecursionError, MemoryError) as exc:  # fmt: skip
        raise FormatError(f"metadata dtype {_short(value)} is not a numpy dtype: {exc}") from None
    check_storable(dtype)
    return dtype


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def blosc1_typesize(dtype: np.dtype) -> int:
    """The Blosc typesize for ``dtype``: its itemsize, or for items wider than a Blosc1 chunk
    allows (255) the element size that shuffles them well: 4 for ``U``, 1 for ``S``/``V``,
    else the largest divisor of the itemsize up to 255."""
    itemsize = dtype.itemsize
    if 1 <= itemsize <= MAX_BLOSC1_TYPESIZE:
        return itemsize
    if itemsize == 0 or dtype.kind in "SV" and dtype.fields is None:
        return 1
    if dtype.kind == "U":
        return 4
    return max(d for d in range(1, MAX_BLOSC1_TYPESIZE + 1) if itemsize % d == 0)


def chunk_typesize(dtype: np.dtype, blosc_version: int) -> int:
    """The typesize chunks of ``dtype`` items are compressed with: :func:`blosc1_typesize`
    for Blosc1 chunks, the item size (at least 1) for Blosc2 chunks."""
    return blosc1_typesize(dtype) if blosc_version == 1 else max(1, dtype.itemsize)


# --- arrays -------------------------------------------------------------------------------


def check_text(array: np.ndarray, name: str) -> np.ndarray:
    """``array``, once its text (``U`` items, in fields too) is checked to hold only Unicode
    code points (one pass over that text); :class:`InvalidCodePoint` naming ``name`` if not."""
    for units in _code_units(array):
        if units.size and (largest := int(units.max())) > MAX_CODE_POINT:
            raise InvalidCodePoint(
                f"{name}: the text data holds an invalid code point ({largest:#x}, above U+10FFFF)"
            )
    return array


def holds_text(dtype: np.dtype) -> bool:
    """Whether items of ``dtype`` hold text (``U``, in fields or subarrays too)."""
    return _first_base(dtype, lambda base: base.kind == "U") is not None


def _code_units(array: np.ndarray) -> Iterator[np.ndarray]:
    """Views of every ``U`` part of ``array`` as unsigned 32-bit code units."""
    dtype = array.dtype
    if dtype.names is not None:
        for field in dtype.names:
            yield from _code_units(array[field])
    elif dtype.kind == "U" and dtype.itemsize:
        yield array.view(np.dtype((dtype.str[0] + "u4", (dtype.itemsize // 4,))))


def memory_order(array: np.ndarray) -> str:
    """The order an array is stored in, as 0.16 chose it: ``'F'`` iff F-contiguous and not
    C-contiguous (``numpy.isfortran``), else ``'C'``."""
    return "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"


def contiguous(array: np.ndarray) -> np.ndarray:
    """``array`` if it is C- or F-contiguous, else a C-ordered copy."""
    if array.flags.c_contiguous or array.flags.f_contiguous:
        return array
    return np.ascontiguousarray(array)


def byte_view(array: np.ndarray) -> np.ndarray:
    """A flat ``uint8`` view of the memory of a contiguous array (no copy)."""
    if array.flags.f_contiguous and not array.flags.c_contiguous:
        array = array.T
    if not array.flags.c_contiguous:
        raise ValueError("array must be contiguous")
    flat = array.reshape(-1)
    if flat.dtype.itemsize == 0:
        return np.empty(0, dtype=np.uint8)
    return flat.view(np.uint8)


def encode_metadata(array: np.ndarray) -> dict[str, Any]:
    """The 0.16 metadata dict of ``array`` (dtype checked storable)."""
    check_storable(array.dtype)
    return {
        "dtype": dtype_to_string(array.dtype),
        "shape": list(array.shape),
        "order": memory_order(array),
        "container": CONTAINER,
    }


def is_numpy_metadata(metadata: Any) -> bool:
    """Whether ``metadata`` describes a numpy array."""
    return isinstance(metadata, dict) and metadata.get("container") == CONTAINER


def describes_array(metadata: Any) -> bool:
    """Whether ``metadata`` is complete numpy metadata (container, dtype, shape and order), so
    the data reads as that array; user metadata that only looks like it leaves the data raw."""
    return is_numpy_metadata(metadata) and all(k in metadata for k in ("dtype", "shape", "order"))


def decode_metadata(metadata: Any) -> ArraySpec:
    """dtype, shape and order from a metadata dict (each entry validated)."""
    if metadata is None:
        raise NotANumpyArray("the container holds no metadata, so no numpy array")
    if not is_numpy_metadata(metadata):
        found = metadata.get("container") if isinstance(metadata, dict) else type(metadata).__name__
        raise NotANumpyArray(f"the metadata does not describe a numpy array (container: {found!r})")
    for key in ("dtype", "shape", "order"):
        if key not in metadata:
            raise FormatError(f"numpy metadata lacks the {key!r} entry")
    shape = metadata["shape"]
    if not isinstance(shape, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise FormatError(f"numpy metadata shape {_short(shape)} is not a list of sizes >= 0")
    if len(shape) > 64:
        raise FormatError(f"numpy metadata shape has {len(shape)} dimensions (numpy allows 64)")
    order = metadata["order"]
    if order not in ("C", "F"):
        raise FormatError(f"numpy metadata order {_short(order)} is neither 'C' nor 'F'")
    return ArraySpec(dtype_from_metadata(metadata["dtype"]), tuple(shape), order)


def parse_dtype(value: Any) -> np.dtype:
    """The numpy dtype ``value`` names (``"f8"``, ``"<i4"``, ``"float32"``, a ``np.dtype``),
    checked storable; ``ArgumentError`` for a name numpy does not know."""
    try:
        dtype = np.dtype(value)
    except (TypeError, ValueError):
        raise ArgumentError(f"dtype {value!r} is not a numpy dtype (e.g. 'f8', '<i4')") from None
    check_storable(dtype)
    if dtype.itemsize == 0:
        raise ArgumentError(f"dtype {value!r} has items of 0 bytes")
    return dtype


def raw_array(path: str, dtype: Any, shape: Any = None) -> np.ndarray:
    """The bytes of the file ``path`` as a read-only array of ``dtype`` (memory-mapped), 1-d or
    of ``shape`` (C order); ``ArgumentError`` if its size does not fit."""
    dtype = parse_dtype(dtype)
    size = os.path.getsize(path)
    if size % dtype.itemsize:
        raise ArgumentError(
            f"{path}: {size} bytes are not whole items of dtype {dtype} ({dtype.itemsize} bytes)"
        )
    count = size // dtype.itemsize
    if shape is None:
        shape = (count,)
    try:
        shape = tuple(int(n) for n in shape)
    except (TypeError, ValueError):
        raise ArgumentError(f"shape {shape!r} is not a sequence of integers") from None
    if any(n < 0 for n in shape) or math.prod(shape) != count:
        raise ArgumentError(f"{path}: {count} items of dtype {dtype} do not fill shape {shape}")
    if not size:
        return np.empty(shape, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", shape=shape)


__all__ = [
    "ArraySpec",
    "parse_dtype",
    "raw_array",
    "blosc1_typesize",
    "chunk_typesize",
    "byte_view",
    "check_storable",
    "check_writable",
    "contiguous",
    "decode_metadata",
    "dtype_from_metadata",
    "dtype_to_string",
    "encode_metadata",
    "is_numpy_metadata",
    "describes_array",
    "memory_order",
]
