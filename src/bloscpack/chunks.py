"""Blosc chunks on their own: compress, decompress, read items, inspect and detect one chunk.

A Blosc chunk is the unit every container of the family stores: a 16-byte (Blosc1) or 32-byte
(Blosc2) header, then the compressed blocks.  Blosc1 chunks (version byte 2) are what bloscpack
0.16, bcolz and C-Blosc 1.x read; Blosc2 chunks (version 5) carry more filters (delta,
trunc_prec, bytedelta), dictionaries and item sizes above 255.

Every chunk is validated before any byte of it reaches C; bad input raises a
:class:`~bloscpack.errors.BloscpackError` subclass naming the field and its value.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from . import engine
from .blosc.header import (
    BLOSC2_HEADER_SIZE,
    FILTER_IDS,
    FLAG_BITSHUFFLE,
    FLAG_DELTA,
    FLAG_MEMCPYED,
    FLAG_SHUFFLE,
    ChunkHeader,
    Filter,
    Special,
)
from .blosc.layout import ChunkKind, check_header, chunk_layout, validate_chunk
from .containers.options import NAMED_VALUES, canonical
from .errors import ArgumentError, BloscpackError, NoSuchCodec

__all__ = [
    "compress_chunk",
    "decompress_chunk",
    "decompress_chunk_items",
    "inspect_chunk",
    "is_chunk",
]

Buffer = Any  # bytes, bytearray, memoryview, numpy array: anything with the buffer protocol

_SHUFFLES: dict[tuple[int, ...], int] = {(): 0, (Filter.SHUFFLE,): 1, (Filter.BITSHUFFLE,): 2}


def _filter_id(f: str | int) -> int:
    if isinstance(f, str):
        try:
            return FILTER_IDS[f.lower()]
        except KeyError:
            known = ", ".join(FILTER_IDS)
            raise ArgumentError(f"unknown filter {f!r}; known: {known}") from None
    if not 0 <= int(f) <= 255:
        raise ArgumentError(f"filter ids are 0..255, got {f}")
    return int(f)


def _slots(values: Sequence[int], what: str) -> list[int]:
    """Right-align up to six pipeline entries into the six filter slots."""
    if len(values) > 6:
        raise ArgumentError(f"at most 6 {what}, got {len(values)}")
    return [0] * (6 - len(values)) + list(values)


def _filter_name(f: int) -> str:
    try:
        return Filter(f).name.lower()
    except ValueError:
        return f"filter{f}"


def compress_chunk(
    data: Buffer,
    typesize: int = 8,
    clevel: int = 5,
    codec: str = "blosclz",
    filters: Sequence[str | int] = ("shuffle",),
    *,
    blosc_version: int = 1,
    filters_meta: Sequence[int] = (),
    codec_meta: int = 0,
    splitmode: str = "auto",
    blocksize: int = 0,
    use_dict: bool = False,
) -> bytes:
    """Compress ``data`` (any contiguous buffer) into one Blosc chunk.

    Parameters
    ----------
    typesize : int
        Item size in bytes for the shuffle filters (Blosc1: 1..255; Blosc2: up to 536866816).
    clevel : int
        Compression level 0..9 (0 stores the data raw).
    codec : str
        ``blosclz``, ``lz4``, ``lz4hc``, ``zlib`` or ``zstd``.
    filters : sequence of str or int
        The filter pipeline in the order it is applied, e.g. ``("delta", "shuffle")``.  Blosc1
        chunks take at most one of ``shuffle``/``bitshuffle``; Blosc2 chunks up to six of
        ``shuffle``, ``bitshuffle``, ``delta``, ``trunc_prec``, ``bytedelta``, ...
    blosc_version : 1 or 2
        1 (default): a version-2 chunk from C-Blosc 1.x, readable by bloscpack 0.16, bcolz and
        every Blosc library.  2: a version-5 chunk from C-Blosc2 (Blosc2-only features).
    filters_meta, codec_meta, splitmode, blocksize, use_dict
        Blosc2 parameters (``filters_meta`` aligns with ``filters``; ``splitmode`` is
        ``auto``/``always``/``never``/``forward_compat``; ``blocksize`` 0 lets Blosc choose).

    Examples
    --------
    >>> import numpy as np
    >>> from bloscpack import compress_chunk, decompress_chunk
    >>> a = np.arange(1000, dtype=np.int64)
    >>> chunk = compress_chunk(a, typesize=8, codec="zstd")
    >>> chunk[0], len(chunk) < a.nbytes
    (2, True)
    >>> bytes(decompress_chunk(chunk)) == a.tobytes()
    True
    """
    codec = canonical(codec, NAMED_VALUES["codec"])
    splitmode = canonical(splitmode, NAMED_VALUES["splitmode"])
    if codec == "snappy":
        raise NoSuchCodec("snappy chunks can be read but not written: C-Blosc2 dropped snappy")
    pipeline = [_filter_id(f) for f in filters]
    if blosc_version == 1:
        ids = tuple(f for f in pipeline if f != Filter.NOFILTER)
        extra = {"filters_meta": tuple(filters_meta), "codec_meta": codec_meta,
                 "splitmode": splitmode, "use_dict": use_dict}  # fmt: skip
        used = [k for k, v in extra.items() if v not in ((), 0, "auto", False)]
        if used:
            raise ArgumentError(f"{', '.join(used)} need blosc_version=2 (Blosc2 chunks)")
        if ids not in _SHUFFLES:
            names = [_filter_name(f) for f in ids]
            raise ArgumentError(
                f"Blosc1 chunks take no filter or one of shuffle/bitshuffle, got {names};"
                " use blosc_version=2 for other filters"
            )
        if codec not in engine.WRITABLE_CODECS:
            raise engine.codec_error(codec, "Blosc1 chunks")
        return engine.compress_blosc1(data, typesize=typesize, clevel=clevel,
                                      shuffle=_SHUFFLES[ids], codec=codec,
                                      blocksize=blocksize)  # fmt: skip
    if blosc_version != 2:
        raise ArgumentError(f"blosc_version must be 1 or 2, got {blosc_version!r}")
    if codec not in engine.WRITABLE_CODECS:
        raise engine.codec_error(codec, "Blosc2 chunks")
    if len(filters_meta) > len(pipeline):
        raise ArgumentError(
            f"filters_meta {list(filters_meta)} has more entries than filters {list(filters)}"
        )
    meta = [0] * (len(pipeline) - len(filters_meta)) + list(filters_meta)
    # bytedelta works on items of filters_meta bytes; python-blosc2 fills in the typesize too
    meta = [
        typesize if f == Filter.BYTEDELTA and m == 0 else m
        for f, m in zip(pipeline, meta, strict=True)
    ]
    chunk = engine.compress_blosc2(
        data, typesize=typesize, clevel=clevel, codec=codec, filters=_slots(pipeline, "filters"),
        filters_meta=_slots(meta, "filters_meta"), codec_meta=codec_meta, splitmode=splitmode,
        blocksize=blocksize, use_dict=use_dict,
    )  # fmt: skip
    return bytes(chunk)


def decompress_chunk(chunk: Buffer, out: Buffer | None = None) -> Any:
    """Decompress a whole chunk: into a new ``bytearray``, or into ``out`` (returned).

    ``out`` is any writable C-contiguous buffer of at least ``nbytes`` bytes, e.g. a numpy
    array of the right dtype and shape, filled in place without an intermediate copy.

    >>> import numpy as np
    >>> from bloscpack import compress_chunk, decompress_chunk
    >>> chunk = compress_chunk(np.arange(10, dtype=np.float32), typesize=4)
    >>> out = np.empty(10, dtype=np.float32)
    >>> decompress_chunk(chunk, out) is out, out[3]
    (True, np.float32(3.0))
    """
    if out is None:
        return engine.decompress(chunk)
    engine.decompress_into(chunk, out)
    return out


def decompress_chunk_items(chunk: Buffer, start: int, nitems: int,
                           out: Buffer | None = None) -> Any:  # fmt: skip
    """Decode items ``[start, start + nitems)`` of a chunk (only the blocks they touch).

    Items are ``typesize`` bytes (the value's size for a repeated-value chunk).  Returns a new
    ``bytearray``, or fills and returns ``out``.

    >>> import numpy as np
    >>> from bloscpack import compress_chunk, decompress_chunk_items
    >>> chunk = compress_chunk(np.arange(100_000, dtype=np.int32), typesize=4)
    >>> np.frombuffer(decompress_chunk_items(chunk, 70_000, 3), dtype=np.int32)
    array([70000, 70001, 70002], dtype=int32)
    """
    header = validate_chunk(chunk)
    try:
        start, nitems = operator.index(start), operator.index(nitems)
    except TypeError:
        raise ArgumentError(f"start and nitems must be ints, got {start!r}, {nitems!r}") from None
    total = header.nbytes // header.real_typesize
    if start < 0 or nitems < 0 or start + nitems > total:
        raise ArgumentError(
            f"items [{start}, {start + nitems}) out of range for a chunk of {total} items"
        )
    target = bytearray(nitems * header.real_typesize) if out is None else out
    engine.getitem_into(chunk, start, nitems, target, validated=True)
    return target


def _flags(h: ChunkHeader) -> dict[str, Any]:
    flags = {
        "memcpyed": bool(h.flags & FLAG_MEMCPYED),
        "split": h.split,
        "codec_format": h.codec_format,
    }
    if h.extended:
        flags["extended_header"] = True
    else:
        flags.update(shuffle=bool(h.flags & FLAG_SHUFFLE),
                     bitshuffle=bool(h.flags & FLAG_BITSHUFFLE),
                     delta=bool(h.flags & FLAG_DELTA))  # fmt: skip
    return flags


def inspect_chunk(chunk: Buffer) -> dict[str, Any]:
    """Describe a chunk as a JSON-able dict: header fields, decoded flags, codec, filters by name,
    special-value kind and the per-block layout (bstarts, stream sizes and kinds).

    The chunk is validated first; a lazy chunk is described (with its frame trailer) although
    it cannot be decoded alone.

    >>> from bloscpack import compress_chunk, inspect_chunk
    >>> info = inspect_chunk(compress_chunk(bytes(1000), typesize=1, codec="lz4"))
    >>> info["codec"], info["nbytes"], info["filters"]
    ('lz4', 1000, [])
    """
    mv = memoryview(chunk).cast("B")
    layout = chunk_layout(mv)
    h = layout.header
    info: dict[str, Any] = {
        "blosc_version": h.blosc_version,
        "version": h.version,
        "versionlz": h.versionlz,
        "header_size": h.size,
        "flags": h.flags,
        "flags_decoded": _flags(h),
        "typesize": h.real_typesize,
        "nbytes": h.nbytes,
        "blocksize": h.blocksize,
        "cbytes": h.cbytes,
        "ratio": round(h.nbytes / h.cbytes, 3),
        "codec": h.codec,
        "filters": [_filter_name(f) for f in h.pipeline if f != Filter.NOFILTER],
        "kind": layout.kind.value,
        "special": Special(h.special).name.lower() if h.special else None,
    }
    if h.extended:
        info.update(
            filters_slots=list(h.filters), filters_meta=list(h.filters_meta),
            udcodec=h.udcodec, compcode_meta=h.compcode_meta, blosc2_flags=h.blosc2_flags,
            blosc2_flags2=h.blosc2_flags2, dictionary=h.dictionary, lazy=h.lazy,
            vl_blocks=h.vl_blocks, big_endian=h.big_endian, instrumented=h.instrumented,
        )  # fmt: skip
    if h.special == Special.VALUE:
        info["value"] = bytes(mv[BLOSC2_HEADER_SIZE : h.cbytes]).hex()
    info["layout"] = layout.as_dict()
    return info


def is_chunk(head: bytes, size: int | None = None) -> bool:
    """Whether ``head`` (the first 16 or more bytes) starts a plausible Blosc chunk.

    With ``size`` (the whole input's length) the chunk must also fill it exactly: ``cbytes ==
    size``, or a lazy chunk's bstarts and trailer.  Never raises.
    """
    try:
        h = check_header(head)
    except BloscpackError:
        return False
    if h.codec_format != 6 and h.versionlz != 1:
        return False
    kind = h.kind
    if kind == ChunkKind.REGULAR and (h.blocksize > h.nbytes or h.size + 4 * h.nblocks > h.cbytes):
        return False
    if size is None:
        return True
    if kind == ChunkKind.LAZY:
        return size == h.size + 8 * h.nblocks + 12
    return size == h.cbytes
