"""Default chunk and block shapes for a new NDArray, from the CPU's cache sizes:
python-blosc2's (``compute_chunks_blocks``), and bloscpack's, which keep its sizes and shape
them for box reads.

Pure code on shapes; no file I/O and no compression.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import ArgumentError
from ..grid import MAX_BLOCK_NBYTES, MAX_CHUNK_NBYTES, Shape


@dataclass(frozen=True)
class CacheSizes:
    """The CPU facts python-blosc2 bases its default chunk and block shapes on."""

    l1_data: int | None
    l2: int | None
    l3: int | None
    machine: str  # platform.machine()
    system: str  # platform.system()

    @classmethod
    def current(cls) -> CacheSizes:
        """This machine, with the cache sizes python-blosc2 detected."""
        import blosc2

        info = blosc2.cpu_info
        return cls(
            info.get("l1_data_cache_size"), info.get("l2_cache_size"), info.get("l3_cache_size"),
            platform.machine(), platform.system(),
        )  # fmt: skip


L3_MINIMUM = 4 * 2**20
L3_MAXIMUM = 2**26
DEFAULT_BLOCK_NBYTES = 32 * 1024
CHUNK_REDUCTION = 4


def _min_block_nbytes(cache: CacheSizes) -> int:
    if cache.machine == "x86_64":
        l2 = cache.l2 or 0
        return (cache.l1_data or 0) * 4 if l2 >= 2**21 else l2 // 4
    if cache.system == "Darwin" and "arm" in cache.machine:
        return cache.l1_data or 0
    if isinstance(cache.l1_data, int):
        return cache.l1_data
    return DEFAULT_BLOCK_NBYTES


def default_block_nbytes(itemsize: int, cache: CacheSizes) -> int:
    """The byte size python-blosc2 gives a default block of items of ``itemsize`` bytes."""
    return max(DEFAULT_BLOCK_NBYTES, _min_block_nbytes(cache), itemsize)


def default_chunk_nbytes(block_nbytes: int, cache: CacheSizes) -> int:
    """Target uncompressed chunk size for blocks of ``block_nbytes`` (python-blosc2's rule)."""
    size = block_nbytes * 32 if block_nbytes * 32 < L3_MAXIMUM else block_nbytes
    if cache.l3 is not None:
        if cache.l3 > 0 and cache.l2 is not None and cache.l3 > cache.l2:
            size = cache.l3
        size //= CHUNK_REDUCTION
    if cache.l2 is not None and cache.l2 > size:
        size = cache.l2 if cache.system == "Darwin" else max(cache.l2 // CHUNK_REDUCTION, size)
    size = min(max(size, L3_MINIMUM), MAX_CHUNK_NBYTES)
    return max(size, block_nbytes)


def nearest_divisor(a: int, b: int, strict: bool = False) -> int:
    """The divisor of ``a`` nearest to ``b``; searching only downwards from ``b`` when ``a`` is
    large or ``strict``.  Ties go to the first divisor met scanning ``i, a//i`` for
    ``i = 1, 2, ...`` (python-blosc2's compiled version)."""
    if a > 100_000 or strict:
        top = b
        while top > 0:
            cand = np.arange(top, max(top - 65536, 0), -1, dtype=np.int64)
            hits = np.flatnonzero(a % cand == 0)
            if hits.size:
                return int(cand[hits[0]])
            top -= 65536
        return 1
    closest, best = 1, a
    found = False
    i = 1
    while i * i <= a:
        if a % i == 0:
            for d in (i, a // i):
                if abs(d - b) < best:
                    best, closest, found = abs(d - b), d, True
        i += 1
    return closest if found else 1


def partition(
    nitems: int, maxshape: Sequence[int], minpart: Sequence[int] | None = None
) -> list[int]:
    """Split a budget of ``nitems`` items over ``maxshape``, from the last dimension: whole
    dimensions while the budget lasts, then the budget, snapped to a divisor of the dimension."""
    if 0 in maxshape:
        raise ArgumentError("shapes with 0 dims are not supported")
    if nitems == 0:
        raise ArgumentError("zero-sized partitions are not supported")
    minpart = list(minpart) if minpart is not None else [1] * len(maxshape)
    budget = nitems
    result = [1] * len(maxshape)
    for i in range(len(maxshape) - 1, -1, -1):
        if budget <= 1:
            break
        size, minsize = maxshape[i], minpart[i]
        part = max(size, minsize)
        if part <= budget:
            part = part if size % part == 0 else nearest_divisor(size, part)
        else:
            part = max(budget, minsize)
            snapped = part if size % part == 0 else nearest_divisor(size, part, strict=True)
            if part // 2 < snapped < part * 2:
                part = snapped
        result[i] = part
        budget //= part
    return result


def default_chunks_blocks(
    shape: Sequence[int],
    itemsize: int,
    chunks: Sequence[int] | None = None,
    blocks: Sequence[int] | None = None,
    cache: CacheSizes | None = None,
) -> tuple[Shape, Shape]:
    """Chunk and block shapes for an array, chosen as python-blosc2 ``compute_chunks_blocks``
    does for the general-purpose codecs (blosclz, lz4, lz4hc, zlib, zstd).  Given values are
    checked; ``blocks`` given without ``chunks`` only sets the block byte size."""
    shape = tuple(int(s) for s in shape)
    if 0 in shape and chunks is None and blocks is None:
        return shape, shape
    for name, given in (("blocks", blocks), ("chunks", chunks)):
        if given is None:
            continue
        if len(given) != len(shape):
            raise ArgumentError(f"{name} {tuple(given)} must have the same length as shape {shape}")
        for g, s in zip(given, shape, strict=True):
            if g < 0 or (g == 0 and s != 0):
                raise ArgumentError(
                    f"{name} {tuple(given)} cannot contain {g} for a dimension of size {s}"
                )
    if chunks is not None and blocks is not None:
        if any(b > c for b, c in zip(blocks, chunks, strict=True)):
            raise ArgumentError(
                f"blocks {tuple(blocks)} cannot be greater than chunks {tuple(chunks)}"
            )
        return tuple(int(c) for c in chunks), tuple(int(b) for b in blocks)
    cache = cache or CacheSizes.current()
    if blocks is None:
        block_nbytes = default_block_nbytes(itemsize, cache)
    else:
        block_nbytes = math.prod(blocks) * itemsize
    if block_nbytes > MAX_BLOCK_NBYTES:
        raise ArgumentError(
            f"blocksize {block_nbytes} exceeds the maximum of {MAX_BLOCK_NBYTES} bytes"
        )
    new_blocks = partition(block_nbytes // itemsize, shape if chunks is None else chunks)
    if chunks is not None:
        return tuple(int(c) for c in chunks), tuple(new_blocks)
    block_nbytes = math.prod(new_blocks) * itemsize
    chunk_nbytes = default_chunk_nbytes(block_nbytes, cache)
    chunk_nbytes -= chunk_nbytes % block_nbytes
    new_chunks = partition(chunk_nbytes // itemsize, shape, new_blocks)
    new_chunks = [
        min(s, -(-c // b) * b) for s, c, b in zip(shape, new_chunks, new_blocks, strict=True)
    ]
    return tuple(new_chunks), tuple(new_blocks)


#: The rows (items along the first axis) a default block of a 2+ dim array holds at least,
#: when the array has them (:func:`box_chunks_blocks`).
BLOCK_ROWS = 32


def _fit(size: int, budget: int) -> int:
    """An extent of at most ``budget`` items for an axis of ``size``: all of it, else the
    largest divisor of ``size`` above half the budget, else ``size`` split into equal
    parts."""
    if size <= budget:
        return size
    divisor = nearest_divisor(size, budget, strict=True)
    return divisor if divisor * 2 > budget else -(-size // -(-size // budget))


def _tile(shape: Sequence[int], budget: int) -> list[int]:
    """A block of about ``budget`` items: at least :data:`BLOCK_ROWS` rows along the first
    axis (if it has them), the rest shaped by the same rule over the other axes."""
    if len(shape) == 1:
        return [_fit(shape[0], max(budget, 1))]
    rows = min(BLOCK_ROWS, shape[0])
    inner = _tile(shape[1:], max(budget // rows, 1))
    return [_fit(shape[0], max(budget // math.prod(inner), 1)), *inner]


def box_chunks_blocks(
    shape: Sequence[int],
    itemsize: int,
    chunks: Sequence[int] | None = None,
    blocks: Sequence[int] | None = None,
    cache: CacheSizes | None = None,
) -> tuple[Shape, Shape]:
    """The chunk and block shapes bloscpack gives a new NDArray: python-blosc2's
    (:func:`default_chunks_blocks`) for 0-d and 1-d arrays, zero-size arrays and whenever
    ``chunks`` or ``blocks`` is given; otherwise python-blosc2's block and chunk byte sizes,
    shaped for box reads.  A block holds at least :data:`BLOCK_ROWS` rows when the array has
    them, and over the other axes the same rule again; each extent is a divisor of the
    array's if one is near, else an equal part.  A chunk stacks whole blocks along the first
    axis, then along the next ones."""
    shape = tuple(int(s) for s in shape)
    if len(shape) < 2 or 0 in shape or chunks is not None or blocks is not None:
        return default_chunks_blocks(shape, itemsize, chunks, blocks, cache)
    cache = cache or CacheSizes.current()
    new_blocks = _tile(shape, default_block_nbytes(itemsize, cache) // itemsize)
    block_items = math.prod(new_blocks)
    chunk_items = default_chunk_nbytes(block_items * itemsize, cache) // itemsize
    per_chunk = max(chunk_items // block_items, 1)  # whole blocks in a chunk
    new_chunks = list(new_blocks)
    for axis, (size, block) in enumerate(zip(shape, new_blocks, strict=True)):
        take = _fit(-(-size // block), per_chunk)
        new_chunks[axis] = min(size, block * take)
        per_chunk //= take
    return tuple(new_chunks), tuple(new_blocks)
