"""The ``b2nd`` metalayer of python-blosc2 NDArray frames: shape, chunks, blocks and dtype.

Pure format code: bytes in, a frozen record out, and back.  The content is a msgpack array of
7 items whose integers all have a fixed width, so the shape can be rewritten in place::

    97 | 00 version | ndim | 90+n (d3 i64)*n shape | 90+n (d2 i32)*n chunks | 90+n (d2 i32)*n blocks
       | 00 dtype format (NumPy) | db u32 len, dtype string

Like C-Blosc2, the reader works by position (for ndim 16 the array marker ``0xa0`` is a msgpack
fixstr, so a generic msgpack decoder cannot read it); unlike C-Blosc2 it checks every marker.
"""

from __future__ import annotations

import ast
import functools
import struct
import warnings
from dataclasses import dataclass

import numpy as np

from ...errors import (
    ArgumentError,
    FormatError,
    ObjectNumpyArrayRejection,
    TruncatedError,
    UnsupportedError,
)
from ..grid import MAX_DIM, check_geometry

METALAYER_NAME = "b2nd"
METALAYER_VERSION = 0
DTYPE_FORMAT_NUMPY = 0
MAX_DTYPE_STRING = 1 << 16  # longer dtype strings are refused before they are parsed

_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")


@dataclass(frozen=True)
class B2ndMeta:
    """The decoded ``b2nd`` metalayer.  ``dtype_string`` is kept as stored, so that an
    encode of a decoded metalayer gives back the same bytes."""

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    blocks: tuple[int, ...]
    dtype: np.dtype
    dtype_string: str | None = None
    version: int = METALAYER_VERSION

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @classmethod
    def from_array_params(
        cls,
        shape: tuple[int, ...],
        chunks: tuple[int, ...],
        blocks: tuple[int, ...],
        dtype: np.dtype,
    ) -> B2ndMeta:
        """A metalayer for a new array, with the dtype string python-blosc2 writes."""
        dtype = np.dtype(dtype)
        meta = cls(tuple(shape), tuple(chunks), tuple(blocks), dtype, dtype_to_string(dtype))
        meta.check()
        return meta

    def check(self) -> None:
        """Check the geometry: ndim, signs, and the uncompressed chunk and block sizes."""
        check_geometry(self.shape, self.chunks, self.blocks, self.dtype.itemsize)

    @classmethod
    def parse(cls, buf: bytes | bytearray | memoryview, typesize: int | None = None) -> B2ndMeta:
        """Decode the metalayer content ``buf``; ``typesize`` (the frame's) is needed only
        when the dtype is absent, and then gives ``|S{typesize}`` as python-blosc2 does.
        Decoded metalayers are cached by their bytes (the record is immutable)."""
        return _parse_cached(bytes(buf), typesize)

    def pack(self) -> bytes:
        """Encode to the fixed-width bytes python-blosc2 writes."""
        return pack_metalayer(
            self.shape, self.chunks, self.blocks, self.dtype_string or dtype_to_string(self.dtype)
        )


def dtype_to_string(dtype: np.dtype) -> str:
    """The dtype string python-blosc2 stores: ``dtype.str``, or ``str(dtype)`` (a Python literal
    that keeps field names, offsets and alignment) for kind ``V``."""
    dtype = np.dtype(dtype)
    if dtype.hasobject:
        raise ObjectNumpyArrayRejection(
            f"dtypes holding Python objects cannot be stored, got {dtype}"
        )
    return str(dtype) if dtype.kind == "V" else dtype.str


def dtype_from_string(text: str) -> np.dtype:
    """Parse a stored dtype string as python-blosc2 does: ``np.dtype(s)``, falling back to
    ``np.dtype(ast.literal_eval(s))`` for structured dtypes."""
    if len(text) > MAX_DTYPE_STRING:
        raise FormatError(f"b2nd metalayer: dtype string of {len(text)} characters is too long")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated aliases still name a dtype
            try:
                dtype = np.dtype(text)
            except (TypeError, ValueError):
                dtype = np.dtype(ast.literal_eval(text))
    except (TypeError, ValueError, SyntaxError, RecursionError, MemoryError) as exc:
        raise FormatError(
            f"b2nd metalayer: cannot understand dtype {text[:200]!r} ({exc})"
        ) from None
    if dtype.hasobject:
        raise ObjectNumpyArrayRejection(f"b2nd metalayer: object dtype {text[:200]!r} is refused")
    return dtype



def pack_metalayer(
    shape: tuple[int, ...], chunks: tuple[int, ...], blocks: tuple[int, ...], dtype_string: str
) -> bytes:
    """Encode a ``b2nd`` metalayer (length ``12 + 19*ndim + len(dtype)``)."""
    ndim = len(shape)
    if not 0 <= ndim <= MAX_DIM or len(chunks) != ndim or len(blocks) != ndim:
        raise ArgumentError(
            f"b2nd: bad ndim or lengths: shape {shape}, chunks {chunks}, blocks {blocks}"
        )
    marker = bytes([0x90 + ndim])
    out = bytearray(b"\x97" + bytes([METALAYER_VERSION, ndim]))
    out += marker + b"".join(b"\xd3" + _I64.pack(int(s)) for s in shape)
    out += marker + b"".join(b"\xd2" + _I32.pack(int(c)) for c in chunks)
    out += marker + b"".join(b"\xd2" + _I32.pack(int(b)) for b in blocks)
    text = dtype_string.encode("utf-8")
    out += bytes([DTYPE_FORMAT_NUMPY]) + b"\xdb" + _U32.pack(len(text)) + text
    return bytes(out)


class _Cursor:
    """Reads fixed-width fields of the metalayer by position, naming what is missing."""

    def __init__(self, mv: memoryview) -> None:
        self.mv = mv
        self.pos = 0

    def remaining(self) -> int:
        return len(self.mv) - self.pos

    def take(self, n: int, what: str) -> memoryview:
        if self.remaining() < n:
            raise TruncatedError(
                f"b2nd metalayer truncated: {what} at byte {self.pos} needs {n} bytes,"
                f" {self.remaining()} left of {len(self.mv)}"
            )
        out = self.mv[self.pos : self.pos + n]
        self.pos += n
        return out

    def byte(self, what: str) -> int:
        return self.take(1, what)[0]

    def expect(self, value: int, what: str) -> None:
        got = self.byte(what)
        if got != value:
            raise FormatError(
                f"b2nd metalayer: {what} at byte {self.pos - 1} is 0x{got:02x},"
                f" expected 0x{value:02x}"
            )

    def ints(self, ndim: int, marker: int, fmt: struct.Struct, what: str) -> tuple[int, ...]:
        self.expect(0x90 + ndim, f"{what} array marker")
        values = []
        for i in range(ndim):
            self.expect(marker, f"{what}[{i}] marker")
            values.append(fmt.unpack(self.take(fmt.size, f"{what}[{i}]"))[0])
        return tuple(values)


@functools.lru_cache(maxsize=256)
def _parse_cached(buf: bytes, typesize: int | None) -> B2ndMeta:
    fixed = _fixed_fields(buf)
    if fixed is None:
        return _parse(memoryview(buf), typesize)
    shape, chunks, blocks, dtype_string = fixed
    if dtype_string is None:
        if typesize is None or typesize <= 0:
            raise FormatError("b2nd metalayer has no dtype and the frame typesize is unknown")
        dtype = np.dtype(f"S{typesize}")
    else:
        dtype = dtype_from_string(dtype_string)
    return _checked(shape, chunks, blocks, dtype, dtype_string, typesize)


@functools.lru_cache(maxsize=MAX_DIM + 1)
def _layout(ndim: int) -> tuple[struct.Struct, tuple[int, ...]]:
    """The struct of the fixed-width part of a metalayer of ``ndim`` dimensions (markers,
    version, ndim, shape, chunks, blocks) and the markers expected in it (the odd fields)."""
    fmt = ">BBBB" + "Bq" * ndim + "B" + "Bi" * ndim + "B" + "Bi" * ndim
    array = 0x90 + ndim
    markers = (0x97, array) + (0xD3,) * ndim + (array,) + (0xD2,) * ndim + (array,)
    markers += (0xD2,) * ndim
    return struct.Struct(fmt), markers


def _fixed_fields(
    buf: bytes,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], str | None] | None:
    """``(shape, chunks, blocks, dtype string or None)`` of a well-formed metalayer read at
    fixed offsets, or None when anything differs from the fixed layout (the cursor parser
    then names the problem)."""
    if len(buf) < 3 or buf[0] != 0x97 or buf[1] != METALAYER_VERSION or buf[2] > MAX_DIM:
        return None
    ndim = buf[2]
    layout, markers = _layout(ndim)
    if len(buf) < layout.size:
        return None
    values = layout.unpack_from(buf)
    # values: 0x97, version, ndim, marker, then (marker, value) pairs and array markers
    found = (values[0], values[3]) + values[4 : 4 + 2 * ndim : 2]
    at = 4 + 2 * ndim
    found += (values[at],) + values[at + 1 : at + 1 + 2 * ndim : 2]
    at += 1 + 2 * ndim
    found += (values[at],) + values[at + 1 : at + 1 + 2 * ndim : 2]
    if found != markers:
        return None
    shape = values[5 : 5 + 2 * ndim : 2]
    chunks = values[6 + 2 * ndim : 6 + 4 * ndim : 2]
    blocks = values[7 + 4 * ndim : 7 + 6 * ndim : 2]
    rest = buf[layout.size :]
    if not rest:
        return shape, chunks, blocks, None
    if len(rest) < 6 or rest[0] != DTYPE_FORMAT_NUMPY or rest[1] != 0xDB:
        return None
    (length,) = _U32.unpack_from(rest, 2)
    if length != len(rest) - 6 or length > MAX_DTYPE_STRING:
        return None
    try:
        return shape, chunks, blocks, rest[6:].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _checked(
    shape: tuple[int, ...], chunks: tuple[int, ...], blocks: tuple[int, ...], dtype: np.dtype,
    dtype_string: str | None, typesize: int | None,
) -> B2ndMeta:  # fmt: skip
    if typesize is not None and dtype.itemsize != typesize:
        raise FormatError(
            f"b2nd metalayer: dtype {dtype} has itemsize {dtype.itemsize},"
            f" the frame typesize is {typesize}"
        )
    check_geometry(shape, chunks, blocks, dtype.itemsize)
    return B2ndMeta(shape, chunks, blocks, dtype, dtype_string, METALAYER_VERSION)


def _parse(mv: memoryview, typesize: int | None) -> B2ndMeta:
    cur = _Cursor(mv)
    cur.expect(0x97, "fixarray(7) marker")
    version = cur.byte("version")
    if version != METALAYER_VERSION:
        raise UnsupportedError(
            f"b2nd metalayer version {version} is not supported (expected {METALAYER_VERSION})"
        )
    ndim = cur.byte("ndim")
    if ndim > MAX_DIM:
        raise FormatError(f"b2nd metalayer: ndim {ndim} exceeds the maximum of {MAX_DIM}")
    shape = cur.ints(ndim, 0xD3, _I64, "shape")
    chunks = cur.ints(ndim, 0xD2, _I32, "chunks")
    blocks = cur.ints(ndim, 0xD2, _I32, "blocks")
    if cur.remaining() == 0:
        if typesize is None or typesize <= 0:
            raise FormatError("b2nd metalayer has no dtype and the frame typesize is unknown")
        dtype_string = None
        dtype = np.dtype(f"S{typesize}")
    else:
        dtype_format = cur.byte("dtype format")
        if dtype_format != DTYPE_FORMAT_NUMPY:
            raise UnsupportedError(
                f"b2nd dtype format {dtype_format} is not supported (only 0, NumPy)"
            )
        cur.expect(0xDB, "dtype str32 marker")
        (length,) = _U32.unpack(cur.take(4, "dtype length"))
        if length != cur.remaining():
            raise FormatError(
                f"b2nd metalayer: dtype length {length} does not match the"
                f" {cur.remaining()} bytes left"
            )
        try:
            dtype_string = bytes(cur.take(length, "dtype")).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"b2nd metalayer: dtype string is not UTF-8 ({exc})") from None
        dtype = dtype_from_string(dtype_string)
    return _checked(shape, chunks, blocks, dtype, dtype_string, typesize)
