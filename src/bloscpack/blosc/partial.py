"""Reading only the bytes of a stored chunk that decoding some of its items needs.

C-Blosc2's getitem on a regular chunk (no dictionary) reads the header, the bstarts and the
streams of the blocks holding the items, nothing else.  :func:`read_chunk_items` reads just
those with positioned reads into a scratch buffer of the chunk's size, at their offsets, so the
chunk's other blocks are never read from disk (nor mapped and faulted in).  The walk that
checks the bytes read hold the blocks' streams is the layout check of those blocks
(:func:`~bloscpack.blosc.layout.run_ends`); anything it refuses is read whole, whose
validation names what is wrong.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import BloscpackError
from .header import ChunkHeader
from .layout import check_header, run_ends

#: Chunks up to this size are read whole (one positioned read costs little more than two).
MIN_PARTIAL_CBYTES = 256 * 1024

_local = threading.local()


def _scratch(n: int) -> memoryview:
    """``n`` bytes of this thread's scratch buffer, kept between calls: the pages of a new
    buffer fault in on first touch, which costs more than decoding a block."""
    buf: bytearray | None = getattr(_local, "buf", None)
    if buf is None or len(buf) < n:
        buf = _local.buf = bytearray(n)
    return memoryview(buf)[:n]


ReadInto = Callable[[int, memoryview, str], None]


def partial_candidate(header: ChunkHeader, lo: int, hi: int) -> bool:
    """True when decoding bytes ``[lo, hi)`` of a chunk with ``header`` reads only the header,
    bstarts and the streams of the blocks they touch: a regular chunk without dictionary,
    delta or Snappy, and a range of whole addressable items that is not the whole chunk."""
    ts = max(header.real_typesize, 1)
    return (
        header.cbytes > MIN_PARTIAL_CBYTES
        and header.blocks_alone
        and lo % ts == 0
        and hi % ts == 0
        and 0 <= lo < hi <= header.nbytes // ts * ts
        and hi - lo < header.nbytes
    )


def read_chunk_items(read_into: ReadInto, header_bytes: Any, lo: int, hi: int) -> memoryview | None:
    """The chunk whose first bytes are ``header_bytes`` (at least its 16 or 32 header bytes;
    its bstarts are read unless they follow) as a buffer of ``cbytes`` bytes holding its header,
    bstarts and the streams of the blocks that bytes ``[lo, hi)`` touch (its other bytes are
    undefined, and are never read); valid until the next call in the same thread.  None when
    decoding them may need other bytes (read the chunk whole then).  ``read_into(pos, dest,
    what)`` fills ``dest`` with the chunk's bytes from ``pos``."""
    try:
        header = check_header(header_bytes)
    except BloscpackError:
        return None  # the whole-chunk path reports it
    ts = max(header.real_typesize, 1)  # the blocks holding [lo, hi) hold its whole items
    lo, hi = lo // ts * ts, -(-hi // ts) * ts
    if not partial_candidate(header, lo, hi):
        return None
    bs = header.blocksize
    first = lo // bs
    return _read_runs(read_into, header_bytes, header, [(first, -(-hi // bs) - first)])


def checked_chunk_items(
    read_into: ReadInto, header_bytes: Any, lo: int, hi: int, nbytes: int, room: int | None = None
) -> tuple[memoryview, ChunkHeader] | None:
    """:func:`read_chunk_items` and the chunk's checked header, for a chunk that must hold
    ``nbytes`` bytes in at most ``room`` bytes of its input (None: ``read_into`` refuses reads
    past its end with a :class:`~bloscpack.errors.BloscpackError`); the layout of the blocks
    read is checked as they are read.  None when a check fails or the chunk is read whole (the
    general path then reads it, and names what is wrong)."""
    try:
        header = check_header(header_bytes)
    except BloscpackError:
        return None
    ts = max(header.real_typesize, 1)  # the blocks holding [lo, hi) hold its whole items
    lo, hi = lo // ts * ts, -(-hi // ts) * ts
    if (header.nbytes != nbytes or (room is not None and header.cbytes > room)
            or not partial_candidate(header, lo, hi)):  # fmt: skip
        return None
    bs = header.blocksize
    first = lo // bs
    view = _read_runs(read_into, header_bytes, header, [(first, -(-hi // bs) - first)])
    return None if view is None else (view, header)


def read_chunk_blocks(read_into: ReadInto, header_bytes: Any,
                      runs: Sequence[tuple[int, int]]) -> memoryview | None:  # fmt: skip
    """:func:`read_chunk_items` for the blocks of several runs ``(first block, count)``: a
    buffer holding the chunk's header, bstarts and those blocks' streams (one read per run, or
    per group of runs whose streams meet) with those blocks' layout checked (decode them as
    validated), or None (read the chunk whole then: that names what is wrong)."""
    try:
        header = check_header(header_bytes)
    except BloscpackError:
        return None
    bs, nblocks = header.blocksize, header.nblocks
    if not runs or bs <= 0 or not all(0 <= f < f + c <= nblocks for f, c in runs):
        return None
    ts = max(header.real_typesize, 1)
    lo = min(f for f, _ in runs) * bs
    hi = min(max(f + c for f, c in runs) * bs, header.nbytes // ts * ts)
    if lo >= hi or not partial_candidate(header, lo, hi):
        return None
    return _read_runs(read_into, header_bytes, header, runs)


def _read_runs(read_into: ReadInto, header_bytes: Any, header: ChunkHeader,
               runs: Sequence[tuple[int, int]]) -> memoryview | None:  # fmt: skip
    """The buffer of :func:`read_chunk_blocks` for block ``runs`` (in range) of a chunk that
    :func:`partial_candidate` accepts, with the layout of those blocks checked as
    :func:`~bloscpack.blosc.layout.validate_block_runs` checks it (one walk of their streams
    checks them and that the bytes read hold them)."""
    cbytes, nblocks, size = header.cbytes, header.nblocks, header.size
    bstarts_end = size + 4 * nblocks
    if bstarts_end > cbytes:
        return None  # invalid: the whole-chunk path reports it
    view = _scratch(cbytes)
    if len(header_bytes) >= bstarts_end:
        view[:bstarts_end] = header_bytes[:bstarts_end]
    else:
        read_into(0, view[:bstarts_end], "chunk header and bstarts")
    starts = np.frombuffer(view, dtype="<i4", count=nblocks, offset=size).tolist()
    ordered = sorted(set(starts)) if len(runs) > 1 else None
    spans = []  # (first byte, end, first block, stop block) of each run
    for first, count in runs:
        wanted = starts[first : first + count]
        span_lo, top = min(wanted), max(wanted)
        if span_lo < bstarts_end or top >= cbytes:
            return None  # invalid bstarts: the whole-chunk path reports them
        # the wanted blocks' streams end where the next block starts (or at cbytes)
        if ordered is None:
            span_hi = min([s for s in starts if s > top], default=cbytes)
        else:
            k = bisect.bisect_right(ordered, top)
            span_hi = ordered[k] if k < len(ordered) else cbytes
        spans.append((span_lo, span_hi, first, first + count))
    merged: list[list[int]] = []
    for span_lo, span_hi, _, _ in sorted(spans):
        if merged and span_lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], span_hi)
        else:
            merged.append([span_lo, span_hi])
    if sum(end - at for at, end in merged) * 2 > cbytes:
        return None  # most of the chunk: read it whole
    for at, end in merged:
        read_into(at, view[at:end], "chunk blocks")
    ends = run_ends(header, view, runs)  # the decoder's checks, and where the streams end
    if ends is None or any(end > span[1] for end, span in zip(ends, spans, strict=True)):
        return None  # invalid, or streams overlap the next block: the whole-chunk path checks
    return view


#: Bytes read at the start of a chunk whose blocks are read alone: its header and, with up to
#: 1016 blocks, its bstarts (one read instead of two).
CHUNK_HEAD_READ = 4096


def source_chunk_items(source: Any, at: int, size: int, lo: int, hi: int,
                       what: str) -> memoryview | None:  # fmt: skip
    """:func:`read_chunk_items` of the chunk at offset ``at`` of ``source`` (a
    :class:`~bloscpack.io.sources.ByteSource`; ``size``: the bytes the chunk may span there): its
    first :data:`CHUNK_HEAD_READ` bytes are read, then the streams of the blocks that bytes ``[lo,
    hi)`` touch.  ``what`` names the chunk in messages."""
    head = source.read(at, min(CHUNK_HEAD_READ, size), f"{what} header")

    def read_into(pos: int, dest: memoryview, part: str) -> None:
        source.read_into(at + pos, dest, f"{what} {part}")

    return read_chunk_items(read_into, head, lo, hi)
