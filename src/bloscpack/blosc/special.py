"""Special-value chunks (zeros, NaN, uninitialised, repeated value) and C-Blosc2's block sizing.

Special chunks carry no streams: a 32-byte header (plus the value for a repeated-value chunk)
says what every item is.  The builders write them byte for byte as C-Blosc2 does, with the
block size its tuner (``stune``) would choose; :func:`decode_special_into` fills an output buffer
with numpy, without C.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ArgumentError, ChunkError, UnsupportedError
from .header import (
    BLOSC2_HEADER_SIZE,
    BLOSC2_VERSION,
    EXTENDED_MARK,
    MAX_BUFFERSIZE,
    MAX_TYPESIZE,
    ChunkHeader,
    Filter,
    Special,
)

L1 = 32 * 1024
MIN_BLOCKSIZE = 32 * 1024
MAX_SPLIT_BLOCKSIZE = 4 * 1024 * 1024
MAX_SPLIT_TYPESIZE = 16
MIN_SPLIT_ITEMS = 32
HCR_CODECS = frozenset({"lz4hc", "zlib", "zstd"})  # high compression ratio codecs
SPLIT_MODES = {"always": 1, "never": 2, "auto": 3, "forward_compat": 4}
# stune: the L1-based block size is scaled by clevel ...
_CLEVEL_SCALE = (0.25, 0.5, 1, 2, 4, 4, 8, 8, 8, 8)
# ... or, when blocks are split, replaced by this many items (clevel 1..9).
_SPLIT_ITEMS_KIB = (0, 32, 32, 32, 64, 64, 64, 128, 256, 512)
# Quiet NaN bit patterns written by C's nanf("") / nan("").
_NAN_BITS = {4: np.array(0x7FC00000, "<u4"), 8: np.array(0x7FF8000000000000, "<u8")}


def split_block(codec: str, clevel: int, typesize: int, blocksize: int,
                filters: Sequence[int], splitmode: str = "forward_compat") -> bool:  # fmt: skip
    """Whether C-Blosc2 splits blocks of ``blocksize`` into one stream per byte of the type."""
    mode = SPLIT_MODES[splitmode]
    if mode == SPLIT_MODES["always"]:
        return True
    if mode == SPLIT_MODES["never"]:
        return False
    codec_splits = codec in ("blosclz", "lz4") or (codec == "zstd" and clevel <= 5)
    return (
        codec_splits
        and Filter.SHUFFLE in filters
        and typesize <= MAX_SPLIT_TYPESIZE
        and blocksize // typesize >= MIN_SPLIT_ITEMS
    )


def stune_blocksize(nbytes: int, typesize: int, clevel: int = 5, codec: str = "blosclz",
                    filters: Sequence[int] = (0, 0, 0, 0, 0, 1),
                    splitmode: str = "forward_compat", blocksize: int = 0) -> int:  # fmt: skip
    """The block size C-Blosc2 (3.x) picks for a chunk of ``nbytes`` (``blocksize`` 0: automatic).

    ``typesize`` is the real item size, also above 255.
    """
    if nbytes < typesize:
        return 1
    if blocksize:  # used as given (only capped at nbytes)
        return min(blocksize, nbytes)
    bs = nbytes
    if nbytes >= L1:
        bs = L1 * 2 if codec in HCR_CODECS else L1
        scale = 16 if clevel == 9 and codec in HCR_CODECS else _CLEVEL_SCALE[clevel]
        bs = int(bs * scale)
        if clevel > 0 and split_block(codec, clevel, typesize, nbytes, filters, splitmode):
            bs = _SPLIT_ITEMS_KIB[clevel] * 1024 * typesize
            bs = min(max(bs, MIN_BLOCKSIZE), MAX_SPLIT_BLOCKSIZE)
    bs = min(bs, nbytes)
    if bs > typesize:
        bs -= bs % typesize
    return bs


def _check_sizes(nbytes: int, typesize: int) -> None:
    if not 1 <= typesize <= MAX_TYPESIZE:
        raise ArgumentError(f"typesize must be 1..{MAX_TYPESIZE}, got {typesize}")
    if not 0 <= nbytes <= MAX_BUFFERSIZE:
        raise ArgumentError(f"nbytes must be 0..{MAX_BUFFERSIZE}, got {nbytes}")
    if nbytes % typesize:
        raise ArgumentError(f"nbytes {nbytes} is not a multiple of typesize {typesize}")


def special_chunk(kind: Special, nbytes: int, typesize: int, blocksize: int = 0,
                  value: bytes | None = None, *, codec: str = "blosclz", clevel: int = 5,
                  filters: Sequence[int] = (0, 0, 0, 0, 0, 1),
                  splitmode: str = "forward_compat") -> bytes:  # fmt: skip
    """A special-value chunk exactly as C-Blosc2 writes it.

    ``blocksize`` 0 takes stune's choice for the compression parameters (C's defaults, as
    ``blosc2_chunk_zeros`` uses; a frame synthesising a chunk passes its own codec, clevel,
    filters and splitmode).
    """
    kind = Special(kind)
    _check_sizes(nbytes, typesize)
    if kind == Special.NONE:
        raise ArgumentError("special_chunk needs a special kind, not NONE")
    if kind == Special.VALUE:
        if value is None or len(value) != typesize:
            raise ArgumentError(f"a repeated-value chunk needs a {typesize}-byte value")
    elif value is not None:
        raise ArgumentError(f"a {kind.name.lower()} chunk takes no value")
    if kind == Special.NAN and typesize not in _NAN_BITS:
        raise ArgumentError(f"NaN chunks need typesize 4 or 8, got {typesize}")
    payload = bytes(value) if value is not None else b""
    header = ChunkHeader(
        version=BLOSC2_VERSION,
        versionlz=1,
        flags=EXTENDED_MARK,
        typesize=typesize if typesize <= 255 else 1,
        nbytes=nbytes,
        blocksize=blocksize or stune_blocksize(nbytes, typesize, clevel, codec, filters, splitmode),
        cbytes=BLOSC2_HEADER_SIZE + len(payload),
        blosc2_flags=int(kind) << 4,
        extended=True,
    )
    return header.pack() + payload


def zeros_chunk(nbytes: int, typesize: int = 1, blocksize: int = 0) -> bytes:
    """A 32-byte chunk of ``nbytes`` zero bytes."""
    return special_chunk(Special.ZEROS, nbytes, typesize, blocksize)


def nan_chunk(nbytes: int, typesize: int = 8, blocksize: int = 0) -> bytes:
    """A 32-byte chunk of float32 (typesize 4) or float64 (typesize 8) NaNs."""
    return special_chunk(Special.NAN, nbytes, typesize, blocksize)


def uninit_chunk(nbytes: int, typesize: int = 1, blocksize: int = 0) -> bytes:
    """A 32-byte chunk whose ``nbytes`` bytes are undefined (decoding leaves the output as is)."""
    return special_chunk(Special.UNINIT, nbytes, typesize, blocksize)


def value_chunk(value: Any, nbytes: int, blocksize: int = 0) -> bytes:
    """A chunk of ``nbytes`` repeating ``value`` (bytes, or a numpy scalar: its raw bytes)."""
    raw = value.tobytes() if hasattr(value, "tobytes") else bytes(value)
    return special_chunk(Special.VALUE, nbytes, len(raw), blocksize, raw)


def decode_special_into(header: ChunkHeader, chunk: Any, out: Any) -> int:
    """Fill ``out[:nbytes]`` from a validated special chunk with numpy; return nbytes.  A zeros
    or uninitialized chunk fills all its bytes with zeros, also when nbytes is not a multiple of
    the typesize."""
    if header.special in (Special.ZEROS, Special.UNINIT):
        np.frombuffer(out, dtype=np.uint8, count=header.nbytes).fill(0)
        return header.nbytes
    return fill_special_items(header, chunk, out, header.nbytes // header.real_typesize)


def fill_special_items(header: ChunkHeader, chunk: Any, out: Any, nitems: int) -> int:
    """Fill ``out`` with ``nitems`` items of a validated special chunk (all items are equal; an
    uninitialized chunk's items read as zeros, so a read never shows stale memory)."""
    typesize = header.real_typesize
    n = nitems * typesize
    dest = np.frombuffer(out, dtype=np.uint8, count=n)
    kind = header.special
    if kind in (Special.ZEROS, Special.UNINIT):
        dest.fill(0)
    elif kind == Special.NAN:
        if typesize not in _NAN_BITS:
            raise UnsupportedError(f"Blosc NaN chunk with typesize {typesize}: only 4 and 8 decode")
        dest.view(_NAN_BITS[typesize].dtype).fill(_NAN_BITS[typesize])
    elif kind == Special.VALUE:
        value = np.frombuffer(chunk, dtype=np.uint8, count=typesize, offset=BLOSC2_HEADER_SIZE)
        if typesize in (1, 2, 4, 8):
            word = value.view(f"<u{typesize}")[0]
            dest.view(word.dtype).fill(word)
        else:
            dest.reshape(nitems, typesize)[:] = value
    else:
        raise ChunkError(f"Blosc chunk: special kind {int(kind)} unknown")
    return n
