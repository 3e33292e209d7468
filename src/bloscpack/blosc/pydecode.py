"""Decode a Blosc chunk with numpy, one stream at a time, given a decoder for the codec's streams.

This is how chunks whose codec C-Blosc2 lacks (snappy, dropped from C-Blosc2) are read: the
layout walker finds the streams, ``decode_stream`` inflates each one into its place in a block,
and the filters are undone with numpy (byte shuffle, bit shuffle in the Blosc1 and Blosc2
flavours, trunc_prec needs nothing).  The codec library is passed in, so this module stays pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ChunkError, UnsupportedError
from .header import BLOSC1_VERSION, Filter
from .layout import BlockLayout, ChunkKind, chunk_layout

# decode_stream(compressed, dest): inflate ``compressed`` into ``dest`` (a uint8 array of exactly
# the decoded size) and return the number of bytes written.
StreamDecoder = Callable[[memoryview, np.ndarray], int]

_UNDONE_FILTERS = frozenset({Filter.NOFILTER, Filter.SHUFFLE, Filter.BITSHUFFLE, Filter.TRUNC_PREC})


def unshuffle(src: np.ndarray, typesize: int) -> np.ndarray:
    """Undo Blosc's byte shuffle of one block (trailing ``len % typesize`` bytes stay put)."""
    n = len(src) // typesize
    out = np.empty_like(src)
    out[: n * typesize].reshape(n, typesize)[:] = src[: n * typesize].reshape(typesize, n).T
    out[n * typesize :] = src[n * typesize :]
    return out


def bitunshuffle(src: np.ndarray, typesize: int, chunk_version: int) -> np.ndarray:
    """Undo Blosc's bit shuffle of one block.

    Items are transposed in groups of 8; Blosc1 chunks (version 2) left a block whose item count
    is not a multiple of 8 untouched, later versions transpose the largest multiple of 8.
    """
    n = len(src) // typesize
    if chunk_version <= BLOSC1_VERSION and n % 8:
        return src.copy()
    n8 = n - n % 8
    out = np.empty_like(src)
    size = n8 * typesize
    if n8:
        bits = np.unpackbits(src[:size].reshape(typesize, 8, n8 // 8), axis=-1, bitorder="little")
        out[:size] = np.packbits(bits.transpose(2, 0, 1), axis=-1, bitorder="little").reshape(-1)
    out[size:] = src[size:]
    return out


def _check_filters(filters: tuple[int, ...]) -> None:
    for f in filters:
        if f not in _UNDONE_FILTERS:
            raise UnsupportedError(
                f"filter {f} cannot be undone by the pure-Python Blosc decoder"
                " (it handles shuffle, bitshuffle and trunc_prec)"
            )


def _inflate_block(mv: memoryview, block: BlockLayout, decode_stream: StreamDecoder,
                   index: int) -> np.ndarray:  # fmt: skip
    """The filtered bytes of one block: every stream decoded into its slice."""
    buf = np.zeros(block.nbytes, dtype=np.uint8)
    neblock = block.neblock
    for j, (offset, csize) in enumerate(zip(block.stream_offsets(), block.csizes, strict=True)):
        dest = buf[j * neblock : (j + 1) * neblock]
        if csize < 0:
            dest.fill(-csize)
        elif csize == neblock:
            dest[:] = np.frombuffer(mv, dtype=np.uint8, count=neblock, offset=offset)
        elif csize > 0:
            written = decode_stream(mv[offset : offset + csize], dest)
            if written != neblock:
                raise ChunkError(
                    f"Blosc chunk: block {index} stream {j} decoded to {written} bytes,"
                    f" expected {neblock}"
                )
    return buf


def _unfilter(buf: np.ndarray, filters: tuple[int, ...], filters_meta: tuple[int, ...],
              typesize: int, version: int) -> np.ndarray:  # fmt: skip
    for f, meta in zip(reversed(filters), reversed(filters_meta), strict=True):
        if f == Filter.SHUFFLE and typesize > 1:
            for _ in range(meta + 1):
                buf = unshuffle(buf, typesize)
        elif f == Filter.BITSHUFFLE:
            buf = bitunshuffle(buf, typesize, version)
    return buf


def decode_into(chunk: Any, out: Any, decode_stream: StreamDecoder, start: int = 0,
                stop: int | None = None) -> int:  # fmt: skip
    """Decode bytes ``[start, stop)`` of a regular chunk into ``out``; return the bytes written.

    Only the blocks overlapping the range are decoded.
    """
    layout = chunk_layout(chunk)
    h = layout.header
    if layout.kind != ChunkKind.REGULAR:
        raise ChunkError(
            f"Blosc chunk: the pure-Python decoder reads regular chunks, not {layout.kind.value}"
        )
    _check_filters(h.pipeline)
    stop = h.nbytes if stop is None else stop
    if not 0 <= start <= stop <= h.nbytes:
        raise ValueError(f"byte range [{start}, {stop}) out of range for a chunk of {h.nbytes}")
    dest = np.frombuffer(out, dtype=np.uint8, count=stop - start)
    mv = memoryview(chunk).cast("B")
    meta = h.filters_meta if h.extended else (0,) * 6
    for i, block in enumerate(layout.blocks):
        lo = i * h.blocksize
        hi = lo + block.nbytes
        if hi <= start or lo >= stop:
            continue
        buf = _inflate_block(mv, block, decode_stream, i)
        buf = _unfilter(buf, h.pipeline, meta, h.typesize, h.version)
        a, b = max(lo, start), min(hi, stop)
        dest[a - start : b - start] = buf[a - lo : b - lo]
    return stop - start
