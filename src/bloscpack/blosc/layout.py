"""Walk and validate the layout of a Blosc chunk before any byte of it reaches C.

A regular chunk is ``header | bstarts[nblocks] | [i32 dsize, dict] | streams``; each block is
one stream, or ``typesize`` streams when split, and each stream is ``i32 csize`` followed by
``csize`` codec bytes (``csize == neblock``: raw; ``0``: a zero run; ``< 0``: a byte run, token
``0x01`` follows).  The variants are memcpyed chunks (raw data after the header), special-value
chunks (header only, or header plus one value), variable-length-block chunks (version 6) and
lazy chunks (bstarts plus a trailer pointing into their frame).

:func:`validate_chunk` checks every size and offset against the buffer, fast enough to run on
every chunk (numpy walks the streams of many blocks at once).  :func:`chunk_layout` returns the
per-block layout for inspection and for the pure-Python decoder.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from ..errors import ChunkError, LazyChunkError, TruncatedError
from .header import (
    BLOSC2_HEADER_SIZE,
    BLOSC2_VL_VERSION,
    MAX_BLOCKSIZE,
    MAX_BUFFERSIZE,
    ChunkHeader,
    ChunkKind,
    Special,
    header_bytes,
)

MAX_DICT_SIZE = 128 * 1024  # BLOSC2_MAXDICTSIZE
RUN_TOKEN = 0x01
MAX_RUN_VALUE = 255
# Walk the streams with numpy from this many streams on (below, Python is faster).
_VECTOR_MIN_STREAMS = 48

_I32 = struct.Struct("<i")
_LAZY_FIXED = struct.Struct("<iq")  # nchunk, offset


class StreamKind(StrEnum):
    """How one stream of a block is stored."""

    COMPRESSED = "compressed"
    RAW = "raw"
    ZERO_RUN = "zero_run"
    BYTE_RUN = "byte_run"


def stream_kind(csize: int, neblock: int) -> StreamKind:
    """The kind of a stream from its ``csize`` and the bytes it decodes to."""
    if csize == 0:
        return StreamKind.ZERO_RUN
    if csize < 0:
        return StreamKind.BYTE_RUN
    return StreamKind.RAW if csize == neblock else StreamKind.COMPRESSED


def chunk_kind(header: ChunkHeader) -> ChunkKind:
    """The layout variant a header announces (special beats lazy, as in C-Blosc2)."""
    return header.kind


@dataclass(frozen=True)
class BlockLayout:
    """One block of a regular chunk: where it starts and how its streams are stored."""

    start: int
    nbytes: int
    csizes: tuple[int, ...]
    end: int

    @property
    def nstreams(self) -> int:
        return len(self.csizes)

    @property
    def neblock(self) -> int:
        """Decoded bytes per stream."""
        return self.nbytes // len(self.csizes)

    @property
    def kinds(self) -> tuple[StreamKind, ...]:
        return tuple(stream_kind(c, self.neblock) for c in self.csizes)

    def stream_offsets(self) -> tuple[int, ...]:
        """Offset of each stream's data (just after its csize, or its run token)."""
        offsets = []
        pos = self.start
        for csize in self.csizes:
            pos += 4
            offsets.append(pos)
            pos += csize if csize > 0 else (1 if csize < 0 else 0)
        return tuple(offsets)


@dataclass(frozen=True)
class VLBlockLayout:
    """One block of a variable-length-block chunk: ``i32 nbytes`` then ``stored`` bytes."""

    start: int
    nbytes: int
    stored: int

    @property
    def raw(self) -> bool:
        return self.stored == self.nbytes


@dataclass(frozen=True)
class LazyTrailer:
    """Where a lazy chunk's blocks are: in chunk ``nchunk`` of its frame, at ``offset``."""

    nchunk: int
    offset: int
    block_csizes: tuple[int, ...]


@dataclass(frozen=True)
class ChunkLayout:
    """The decoded layout of a chunk (see :func:`chunk_layout`)."""

    header: ChunkHeader
    kind: ChunkKind
    nblocks: int = 0
    leftover: int = 0
    bstarts: tuple[int, ...] = ()
    dict_offset: int | None = None
    dict_size: int = 0
    blocks: tuple[BlockLayout, ...] = ()
    vlblocks: tuple[VLBlockLayout, ...] = ()
    lazy: LazyTrailer | None = None
    dict_magic: str = field(default="")

    def as_dict(self) -> dict[str, Any] | None:
        """JSON-able layout; ``None`` for chunks without blocks (special, memcpyed, empty)."""
        if self.kind in (ChunkKind.SPECIAL, ChunkKind.MEMCPYED, ChunkKind.EMPTY):
            return None
        out: dict[str, Any] = {"nblocks": self.nblocks}
        if self.kind != ChunkKind.VL_BLOCKS:
            out["leftover"] = self.leftover
        out["bstarts"] = list(self.bstarts)
        if self.dict_offset is not None:
            out.update(dict_offset=self.dict_offset, dict_size=self.dict_size,
                       dict_magic=self.dict_magic)  # fmt: skip
        if self.kind == ChunkKind.LAZY:
            assert self.lazy is not None
            out.update(lazy_nchunk=self.lazy.nchunk, lazy_offset=self.lazy.offset,
                       lazy_block_csizes=list(self.lazy.block_csizes))  # fmt: skip
        elif self.kind == ChunkKind.VL_BLOCKS:
            out["vlblocks"] = [
                {"nbytes": b.nbytes, "stored": b.stored, "raw": b.raw} for b in self.vlblocks
            ]
        else:
            counts = dict.fromkeys((k.value for k in StreamKind), 0)
            blocks = []
            for b in self.blocks:
                kinds = [k.value for k in b.kinds]
                for k in kinds:
                    counts[k] += 1
                blocks.append({"nbytes": b.nbytes, "nstreams": b.nstreams,
                               "csizes": list(b.csizes), "kinds": kinds})  # fmt: skip
            out["blocks"] = blocks
            out["stream_kinds"] = counts
        return out


# --- header-level checks ------------------------------------------------------------------


def _bytes_view(chunk: Any) -> memoryview:
    mv = memoryview(chunk)
    if mv.ndim != 1 or mv.format not in ("B", "b", "c"):
        mv = mv.cast("B") if mv.c_contiguous else memoryview(mv.tobytes())
    return mv


def check_header(buf: Any) -> ChunkHeader:
    """Parse a chunk header and check its fields against each other (not against the body).

    Needs only the header bytes (16 or 32); raises :class:`~bloscpack.errors.ChunkError` naming
    the field.  Checked headers are cached by their bytes.
    """
    return _checked_header(header_bytes(buf))


@functools.lru_cache(maxsize=1024)
def _checked_header(head: bytes) -> ChunkHeader:
    h = ChunkHeader.parse(head)
    if h.typesize == 0:
        raise ChunkError("Blosc chunk: typesize 0")
    if not 0 <= h.nbytes <= MAX_BUFFERSIZE:
        raise ChunkError(f"Blosc chunk: nbytes {h.nbytes} out of range 0..{MAX_BUFFERSIZE}")
    if h.cbytes < h.size:
        raise ChunkError(f"Blosc chunk: cbytes {h.cbytes} smaller than its {h.size}-byte header")
    if not 0 < h.blocksize <= MAX_BLOCKSIZE:
        raise ChunkError(f"Blosc chunk: blocksize {h.blocksize} out of range 1..{MAX_BLOCKSIZE}")
    if h.codec_format in (5, 7):
        raise ChunkError(
            f"Blosc chunk: codec format {h.codec_format} (flags 0x{h.flags:02x})"
            " is not a Blosc codec"
        )
    if h.version <= 2 and h.flags & 0x05 == 0x05:
        raise ChunkError(
            f"Blosc1 chunk: flags 0x{h.flags:02x} set both shuffle and bitshuffle"
            f" (version {h.version})"
        )
    if int(h.special) > Special.UNINIT:
        raise ChunkError(
            f"Blosc chunk: special kind {h.special} (blosc2_flags 0x{h.blosc2_flags:02x}) unknown"
        )
    if h.vl_blocks != (h.version == BLOSC2_VL_VERSION):
        raise ChunkError(
            f"Blosc chunk: version {h.version} with blosc2_flags2 0x{h.blosc2_flags2:02x}"
            " (variable-length blocks need version 6 and flag 0x01)"
        )
    if h.special:
        _check_special(h)
    if h.memcpyed and h.cbytes != h.nbytes + h.size:
        raise ChunkError(
            f"memcpyed Blosc chunk: cbytes {h.cbytes} != nbytes {h.nbytes} + {h.size}-byte header"
        )
    return h


def _check_special(h: ChunkHeader) -> None:
    name = Special(h.special).name.lower()
    if h.memcpyed:
        raise ChunkError(f"Blosc {name} chunk: flags 0x{h.flags:02x} also say memcpyed")
    if h.special == Special.VALUE:
        value_size = h.cbytes - BLOSC2_HEADER_SIZE
        if value_size < 1:
            raise ChunkError(f"Blosc repeated-value chunk: cbytes {h.cbytes} leaves no value")
        if h.typesize != value_size and not (value_size > 255 and h.typesize == 1):
            raise ChunkError(
                f"Blosc repeated-value chunk: typesize {h.typesize} but a {value_size}-byte value"
            )
        if h.nbytes % value_size:
            raise ChunkError(
                f"Blosc repeated-value chunk: nbytes {h.nbytes} not a multiple of the"
                f" {value_size}-byte value"
            )
    elif h.cbytes != BLOSC2_HEADER_SIZE:
        raise ChunkError(f"Blosc {name} chunk: cbytes {h.cbytes}, expected {BLOSC2_HEADER_SIZE}")
    # C-Blosc2 writes zeros chunks of any nbytes (compress2 of 101 zero bytes with typesize 8)
    # and decodes all their bytes; the other kinds it decodes only in whole items
    if h.nbytes % h.typesize and h.special != Special.ZEROS:
        raise ChunkError(
            f"Blosc {name} chunk: nbytes {h.nbytes} not a multiple of typesize {h.typesize}"
        )


def _check_length(h: ChunkHeader, mv: memoryview) -> None:
    if h.cbytes > len(mv):
        raise TruncatedError(
            f"Blosc chunk truncated: header says cbytes {h.cbytes}, buffer has {len(mv)}"
        )


# --- body: bstarts, dictionary --------------------------------------------------------------


def _nblocks_and_data_start(h: ChunkHeader, mv: memoryview) -> tuple[int, int, int, int]:
    """(nblocks, end of bstarts, dict size, start of the stream data), all checked."""
    nblocks = h.nblocks
    if not h.vl_blocks and h.blocksize > h.nbytes:
        raise ChunkError(f"Blosc chunk: blocksize {h.blocksize} larger than nbytes {h.nbytes}")
    bstarts_end = h.size + 4 * nblocks
    if bstarts_end > h.cbytes:
        raise ChunkError(
            f"Blosc chunk: {nblocks} blocks need bstarts up to byte {bstarts_end},"
            f" beyond cbytes {h.cbytes}"
        )
    data_start, dsize = bstarts_end, 0
    if h.extended and h.dictionary:
        if bstarts_end + 4 > h.cbytes:
            raise ChunkError(
                f"Blosc chunk: dictionary size at {bstarts_end} beyond cbytes {h.cbytes}"
            )
        (dsize,) = _I32.unpack_from(mv, bstarts_end)
        if not 0 < dsize <= MAX_DICT_SIZE:
            raise ChunkError(
                f"Blosc chunk: dictionary size {dsize} out of range 1..{MAX_DICT_SIZE}"
            )
        data_start = bstarts_end + 4 + dsize
        if data_start > h.cbytes:
            raise ChunkError(
                f"Blosc chunk: {dsize}-byte dictionary at {bstarts_end + 4} runs beyond"
                f" cbytes {h.cbytes}"
            )
    return nblocks, bstarts_end, dsize, data_start


def _read_bstarts(h: ChunkHeader, mv: memoryview, nblocks: int, data_start: int) -> np.ndarray:
    bstarts = np.frombuffer(mv, dtype="<i4", count=nblocks, offset=h.size).astype(np.int64)
    bad = (bstarts < data_start) | (bstarts >= h.cbytes)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = int(bstarts[i])
        if value >= h.cbytes:
            where = f"beyond cbytes {h.cbytes}"
        else:
            where = f"before the stream data at {data_start}"
        raise ChunkError(f"Blosc chunk: bstarts[{i}] = {value} {where}")
    return bstarts


# --- body: streams of regular chunks --------------------------------------------------------


def _streams_per_block(h: ChunkHeader) -> int:
    """Streams in each full block (the short last block always has one)."""
    return h.typesize if h.split else 1


def _stream_error(block: int, stream: int, message: str) -> ChunkError:
    return ChunkError(f"Blosc chunk: block {block} stream {stream}: {message}")


def _walk_block(mv: memoryview, index: int, start: int, nstreams: int, neblock: int,
                cbytes: int) -> tuple[int, list[int]]:  # fmt: skip
    """Walk the streams of one block; return (end offset, csizes)."""
    pos = start
    csizes = []
    for j in range(nstreams):
        if pos + 4 > cbytes:
            raise _stream_error(index, j, f"csize at {pos} beyond cbytes {cbytes}")
        (csize,) = _I32.unpack_from(mv, pos)
        pos += 4
        if csize > 0:  # may exceed neblock: C-Blosc 1.x kept 3 snappy bytes for 1 byte
            if pos + csize > cbytes:
                message = f"csize {csize} at {pos - 4} runs beyond cbytes {cbytes}"
                raise _stream_error(index, j, message)
            pos += csize
        elif csize < 0:
            if csize < -MAX_RUN_VALUE:
                raise _stream_error(index, j, f"run value {-csize} out of range 1..{MAX_RUN_VALUE}")
            if pos >= cbytes:
                raise _stream_error(index, j, f"run token at {pos} beyond cbytes {cbytes}")
            if mv[pos] != RUN_TOKEN:
                raise _stream_error(index, j, f"run token {mv[pos]} at {pos} (only token 1 exists)")
            pos += 1
        csizes.append(csize)
    return pos, csizes


def _walk_blocks_vector(mv: memoryview, first: int, starts: np.ndarray, nstreams: int,
                        neblock: int, cbytes: int) -> np.ndarray:  # fmt: skip
    """Walk the streams of many equal blocks at once (:func:`_vector_ends`); return their end
    offsets.  On any problem the scalar walker (:func:`_walk_block`) names the first bad
    stream, so messages match."""
    ends = _vector_ends(mv, starts, nstreams, cbytes)
    if ends is not None:
        return ends
    for k, start in enumerate(starts.tolist()):
        _walk_block(mv, first + k, start, nstreams, neblock, cbytes)
    raise AssertionError("vector and scalar stream walks disagree")


def _check_no_overlap(starts: np.ndarray, ends: np.ndarray) -> None:
    """Blocks may be stored in any order (threaded writers) but must not overlap."""
    if (ends[:-1] <= starts[1:]).all():  # in order, as one thread writes them
        return
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    bad = e[:-1] > s[1:]
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ChunkError(
            f"Blosc chunk: block {int(order[k])} (bytes {int(s[k])}..{int(e[k])}) overlaps"
            f" block {int(order[k + 1])} at {int(s[k + 1])}"
        )


def _check_regular(h: ChunkHeader, mv: memoryview) -> None:
    if _regular_ok(h, mv):
        return
    _check_regular_named(h, mv)


def _data_start(h: ChunkHeader, mv: memoryview) -> int:
    """Where the streams of a regular chunk may start (after bstarts and dictionary), or -1 if
    a check of :func:`_nblocks_and_data_start` fails."""
    cbytes = h.cbytes
    data_start = h.size + 4 * h.nblocks
    if h.blocksize > h.nbytes or data_start > cbytes:
        return -1
    if h.extended and h.dictionary:
        if data_start + 4 > cbytes:
            return -1
        (dsize,) = _I32.unpack_from(mv, data_start)
        data_start += 4 + dsize
        if not 0 < dsize <= MAX_DICT_SIZE or data_start > cbytes:
            return -1
    return data_start


def _bstarts_ok(h: ChunkHeader, mv: memoryview, data_start: int) -> Any:
    """The bstarts (a tuple for few blocks, else an int64 array) if every one lies in
    ``[data_start, cbytes)``, else None (the checks of :func:`_read_bstarts`)."""
    nblocks, cbytes = h.nblocks, h.cbytes
    if nblocks < len(_BSTARTS):
        starts = _BSTARTS[nblocks].unpack_from(mv, h.size)
        if nblocks and (min(starts) < data_start or max(starts) >= cbytes):
            return None
        return starts
    array = np.frombuffer(mv, dtype="<i4", count=nblocks, offset=h.size).astype(np.int64)
    if array.min() < data_start or array.max() >= cbytes:
        return None
    return array


def _regular_ok(h: ChunkHeader, mv: memoryview) -> bool:
    """The checks of :func:`_check_regular_named` with fewer calls: True if the chunk passes all
    of them (False means that one of them may fail: the named walk then finds which)."""
    cbytes, nblocks = h.cbytes, h.nblocks
    data_start = _data_start(h, mv)
    nstreams = _streams_per_block(h)
    if data_start < 0 or h.blocksize < nstreams:
        return False
    starts = _bstarts_ok(h, mv, data_start)
    if starts is None:
        return False
    nfull = nblocks - (1 if h.nbytes % h.blocksize else 0)
    if nfull * nstreams < _VECTOR_MIN_STREAMS:
        ends = []
        for i in range(nblocks):
            end = _block_end(mv, int(starts[i]), nstreams if i < nfull else 1, cbytes)
            if end < 0:
                return False
            ends.append(end)
        if nblocks > 1:
            spans = sorted(zip([int(b) for b in starts], ends, strict=True))
            return all(spans[k][1] <= spans[k + 1][0] for k in range(nblocks - 1))
        return True
    starts = np.asarray(starts, dtype=np.int64)
    ends_array = _vector_ends(mv, starts[:nfull], nstreams, cbytes)
    if ends_array is None:
        return False
    if nfull < nblocks:
        last = _block_end(mv, int(starts[-1]), 1, cbytes)
        if last < 0:
            return False
        ends_array = np.append(ends_array, last)
    if nblocks > 1 and not (ends_array[:-1] <= starts[1:]).all():
        order = np.argsort(starts, kind="stable")
        return bool((ends_array[order][:-1] <= starts[order][1:]).all())
    return True


def _blocks_ok(h: ChunkHeader, mv: memoryview, first: int, stop: int) -> bool:
    """The checks of :func:`validate_blocks` with fewer calls (False: one of them may fail)."""
    data_start = _data_start(h, mv)
    nstreams = _streams_per_block(h)
    if data_start < 0 or h.blocksize < nstreams or not 0 <= first <= stop <= h.nblocks:
        return False
    starts = _bstarts_ok(h, mv, data_start)
    if starts is None:
        return False
    nfull = h.nblocks - (1 if h.nbytes % h.blocksize else 0)
    for i in range(first, stop):
        if _block_end(mv, int(starts[i]), nstreams if i < nfull else 1, h.cbytes) < 0:
            return False
    return True


#: Structs of the bstarts of chunks with few blocks.
_BSTARTS = [struct.Struct(f"<{n}i") for n in range(128)]


def _block_end(mv: memoryview, pos: int, nstreams: int, cbytes: int) -> int:
    """The end of a block's streams from ``pos``, or -1 if a stream is out of bounds or a run
    is malformed (the checks of :func:`_walk_block`)."""
    unpack = _I32.unpack_from
    for _ in range(nstreams):
        if pos + 4 > cbytes:
            return -1
        (csize,) = unpack(mv, pos)
        pos += 4
        if csize > 0:
            pos += csize
            if pos > cbytes:
                return -1
        elif csize < 0:
            if csize < -MAX_RUN_VALUE or pos >= cbytes or mv[pos] != RUN_TOKEN:
                return -1
            pos += 1
    return pos


def _vector_ends(mv: memoryview, starts: np.ndarray, nstreams: int,
                 cbytes: int) -> np.ndarray | None:  # fmt: skip
    """The ends of many equal blocks walked at once (one step per stream index over all
    blocks), or None if a stream is out of bounds or a run is malformed."""
    if not len(starts):
        return starts
    i32 = np.ndarray(shape=(cbytes - 3,), dtype="<i4", buffer=mv, strides=(1,))  # no copy
    # pos holds (offset of the j-th csize) - 4 * j: read through a view shifted by 4 * j
    pos = starts.copy()
    runs: list[tuple[np.ndarray, np.ndarray]] = []  # (csizes, token offsets) of steps with runs
    try:
        for j in range(nstreams):
            csize = i32[4 * j :][pos]  # IndexError: a csize beyond cbytes
            if csize.min() < 0:  # byte runs: the token byte follows, nothing else
                runs.append((csize, pos + 4 * (j + 1)))
                csize = np.where(csize < 0, 1, csize)
            pos += csize
        pos += 4 * nstreams
        if pos.max() > cbytes:
            return None
        if runs:
            sizes = np.concatenate([r[0] for r in runs])
            if sizes.min() < -MAX_RUN_VALUE:
                return None
            tokens = np.concatenate([r[1] for r in runs])[sizes < 0]
            # IndexError: a token at cbytes
            if (np.frombuffer(mv, np.uint8, cbytes)[tokens] != RUN_TOKEN).any():
                return None
    except IndexError:
        return None
    return pos


def _check_regular_named(h: ChunkHeader, mv: memoryview) -> None:
    """Walk a regular chunk check by check, raising the error that names the first problem."""
    nblocks, _, _, data_start = _nblocks_and_data_start(h, mv)
    starts = _read_bstarts(h, mv, nblocks, data_start)
    leftover = h.nbytes % h.blocksize
    nfull = nblocks - (1 if leftover else 0)
    nstreams = _streams_per_block(h)
    neblock = _neblock(h.blocksize, nstreams)
    ends = np.empty(nblocks, dtype=np.int64)
    if nfull * nstreams >= _VECTOR_MIN_STREAMS:
        ends[:nfull] = _walk_blocks_vector(mv, 0, starts[:nfull], nstreams, neblock, h.cbytes)
    else:
        for i in range(nfull):
            ends[i] = _walk_block(mv, i, int(starts[i]), nstreams, neblock, h.cbytes)[0]
    if leftover:
        ends[-1] = _walk_block(mv, nblocks - 1, int(starts[-1]), 1, leftover, h.cbytes)[0]
    if nblocks > 1:
        _check_no_overlap(starts, ends)


def _neblock(bsize: int, nstreams: int) -> int:
    neblock = bsize // nstreams
    if neblock == 0:
        raise ChunkError(f"Blosc chunk: a {bsize}-byte block cannot hold {nstreams} streams")
    return neblock


# --- body: variable-length blocks, lazy trailer --------------------------------------------


def _vl_blocks(h: ChunkHeader, mv: memoryview) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bstarts, uncompressed sizes, stored sizes) of a VL-block chunk, checked."""
    nblocks, _, _, data_start = _nblocks_and_data_start(h, mv)
    starts = _read_bstarts(h, mv, nblocks, data_start)
    nexts = np.append(starts[1:], h.cbytes)
    stored = nexts - starts - 4
    bad = stored < 1
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ChunkError(
            f"Blosc VL-block chunk: bstarts[{i}] = {int(starts[i])} leaves {int(stored[i])}"
            f" bytes before {int(nexts[i])} (bstarts must increase)"
        )
    i32 = np.ndarray(shape=(h.cbytes - 3,), dtype="<i4", buffer=mv, strides=(1,))
    sizes = i32[starts].astype(np.int64)
    bad = (sizes < 1) | (sizes > MAX_BLOCKSIZE) | (stored > sizes)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ChunkError(
            f"Blosc VL-block chunk: block {i} nbytes {int(sizes[i])} with {int(stored[i])}"
            " stored bytes"
        )
    total = int(sizes.sum())
    if total != h.nbytes:
        raise ChunkError(f"Blosc VL-block chunk: blocks hold {total} bytes, nbytes says {h.nbytes}")
    return starts, sizes, stored


def _lazy_trailer(h: ChunkHeader, mv: memoryview) -> tuple[np.ndarray, LazyTrailer]:
    nblocks = h.nblocks
    need = h.size + 8 * nblocks + _LAZY_FIXED.size
    if len(mv) < need:
        raise TruncatedError(
            f"lazy Blosc chunk truncated: {nblocks} blocks need {need} bytes, buffer has {len(mv)}"
        )
    starts = np.frombuffer(mv, dtype="<i4", count=nblocks, offset=h.size).astype(np.int64)
    at = h.size + 4 * nblocks
    nchunk, offset = _LAZY_FIXED.unpack_from(mv, at)
    csizes = np.frombuffer(mv, dtype="<i4", count=nblocks, offset=at + _LAZY_FIXED.size)
    return starts, LazyTrailer(nchunk, offset, tuple(csizes.tolist()))


# --- public ---------------------------------------------------------------------------------


def validate_chunk(chunk: Any) -> ChunkHeader:
    """Check a chunk's header, bstarts, dictionary and every stream size against its buffer.

    Returns the parsed header.  Raises :class:`~bloscpack.errors.ChunkError` naming the field and
    its value, :class:`~bloscpack.errors.TruncatedError` when the buffer is shorter than cbytes,
    and :class:`~bloscpack.errors.LazyChunkError` for a lazy chunk (it must be read from its
    frame).
    """
    mv = _bytes_view(chunk)
    h = check_header(mv)
    kind = h.kind
    if kind == ChunkKind.LAZY:
        trailer = _lazy_trailer(h, mv)[1]
        raise LazyChunkError(
            f"lazy Blosc chunk (nchunk {trailer.nchunk}, offset {trailer.offset}): its blocks are"
            " in its frame file, so it cannot be decoded alone; read the chunk from its frame"
        )
    _check_length(h, mv)
    if kind == ChunkKind.REGULAR:
        _check_regular(h, mv)
    elif kind == ChunkKind.VL_BLOCKS:
        _vl_blocks(h, mv)
    return h


def validate_blocks(
    chunk: Any, first: int, stop: int, header: ChunkHeader | None = None
) -> ChunkHeader:
    """:func:`validate_chunk` for decoding only blocks ``[first, stop)`` of a regular chunk:
    header, bstarts, dictionary and the streams of those blocks (C-Blosc2's getitem reads no
    other stream).  Chunks of other kinds are validated whole.  ``header``: the chunk's
    header as :func:`check_header` returned it (not checked again)."""
    mv = _bytes_view(chunk)
    h = check_header(mv) if header is None else header
    if h.kind != ChunkKind.REGULAR:
        return validate_chunk(mv)
    _check_length(h, mv)
    if _blocks_ok(h, mv, first, stop):
        return h
    nblocks, _, _, data_start = _nblocks_and_data_start(h, mv)
    if not 0 <= first <= stop <= nblocks:
        raise IndexError(f"blocks [{first}, {stop}) out of range for a chunk of {nblocks}")
    starts = _read_bstarts(h, mv, nblocks, data_start)
    leftover = h.nbytes % h.blocksize
    nstreams = _streams_per_block(h)
    neblock = _neblock(h.blocksize, nstreams)
    for i in range(first, stop):
        if leftover and i == nblocks - 1:
            _walk_block(mv, i, int(starts[i]), 1, leftover, h.cbytes)
        else:
            _walk_block(mv, i, int(starts[i]), nstreams, neblock, h.cbytes)
    return h


def blocks_ok(mv: memoryview, h: ChunkHeader, first: int, stop: int) -> bool:
    """Whether blocks ``[first, stop)`` of the regular chunk ``mv`` with the checked header
    ``h`` pass :func:`validate_blocks` (False: it names what fails)."""
    return h.cbytes <= len(mv) and _blocks_ok(h, mv, first, stop)


def validate_block_runs(
    chunk: Any, runs: Sequence[tuple[int, int]], header: ChunkHeader | None = None
) -> ChunkHeader:
    """:func:`validate_blocks` for the blocks of several ``runs`` ``(first, count)`` at once:
    header, bstarts and dictionary checked once, then the streams of those blocks."""
    mv = _bytes_view(chunk)
    h = check_header(mv) if header is None else header
    if h.kind != ChunkKind.REGULAR:
        return validate_chunk(mv)
    _check_length(h, mv)
    if not _runs_ok(h, mv, runs):
        for first, count in runs:  # the walk that names the problem
            validate_blocks(mv, first, first + count, h)
    return h


def _runs_blocks(h: ChunkHeader, mv: memoryview, runs: Sequence[tuple[int, int]]
                 ) -> tuple[Any, int, int] | None:  # fmt: skip
    """The block starts, streams per block and number of whole blocks of the regular chunk
    ``mv`` (header ``h``), if its header and block starts pass the checks and the block
    ``runs`` ``(first, count)`` are within it, else None."""
    data_start = _data_start(h, mv)
    nstreams = _streams_per_block(h)
    if data_start < 0 or h.blocksize < nstreams:
        return None
    if not all(0 <= first <= first + count <= h.nblocks for first, count in runs):
        return None
    starts = _bstarts_ok(h, mv, data_start)
    if starts is None:
        return None
    return starts, nstreams, h.nblocks - (1 if h.nbytes % h.blocksize else 0)


def _runs_ok(h: ChunkHeader, mv: memoryview, runs: Sequence[tuple[int, int]]) -> bool:
    """The checks of :func:`validate_block_runs` with fewer calls (False: one may fail)."""
    found = _runs_blocks(h, mv, runs)
    if found is None:
        return False
    starts, nstreams, nfull = found
    wanted = [i for first, count in runs for i in range(first, first + count)]
    short = [i for i in wanted if i >= nfull]
    full = [i for i in wanted if i < nfull]
    if short and _block_end(mv, int(starts[short[0]]), 1, h.cbytes) < 0:
        return False
    if len(full) * nstreams < _VECTOR_MIN_STREAMS:
        return all(_block_end(mv, int(starts[i]), nstreams, h.cbytes) >= 0 for i in full)
    chosen = np.asarray(starts, dtype=np.int64)[full]
    return _vector_ends(mv, chosen, nstreams, h.cbytes) is not None


def run_ends(h: ChunkHeader, mv: memoryview, runs: Sequence[tuple[int, int]]) -> list[int] | None:
    """The end of the furthest stream of each of the block ``runs`` ``(first, count)`` of the
    regular chunk ``mv`` with the checked header ``h``, if those blocks pass
    :func:`validate_block_runs`'s checks, else None (that check names what fails).  One walk of
    the streams both checks them and says which bytes they span."""
    cbytes = h.cbytes
    found = None if cbytes > len(mv) else _runs_blocks(h, mv, runs)
    if found is None:
        return None
    starts, nstreams, nfull = found
    ends = []
    for first, count in runs:
        end = 0
        for i in range(first, first + count):
            pos = _block_end(mv, int(starts[i]), nstreams if i < nfull else 1, cbytes)
            if pos < 0:
                return None
            if pos > end:
                end = pos
        ends.append(end)
    return ends


def chunk_layout(chunk: Any) -> ChunkLayout:
    """The validated layout of a chunk: bstarts, dictionary, per-block streams and their kinds.

    Lazy chunks are described (bstarts and trailer) rather than rejected.
    """
    mv = _bytes_view(chunk)
    h = check_header(mv)
    kind = h.kind
    if kind in (ChunkKind.SPECIAL, ChunkKind.MEMCPYED, ChunkKind.EMPTY):
        _check_length(h, mv)
        return ChunkLayout(h, kind)
    if kind == ChunkKind.LAZY:
        starts, trailer = _lazy_trailer(h, mv)
        return ChunkLayout(h, kind, h.nblocks, h.nbytes % h.blocksize, tuple(starts.tolist()),
                           lazy=trailer)  # fmt: skip
    _check_length(h, mv)
    nblocks, bstarts_end, dsize, data_start = _nblocks_and_data_start(h, mv)
    dict_args: dict[str, Any] = {}
    if dsize:
        magic = bytes(mv[bstarts_end + 4 : bstarts_end + 8]).hex()
        dict_args = {"dict_offset": bstarts_end + 4, "dict_size": dsize, "dict_magic": magic}
    if kind == ChunkKind.VL_BLOCKS:
        starts, sizes, stored = _vl_blocks(h, mv)
        vl = tuple(
            VLBlockLayout(s, n, t)
            for s, n, t in zip(starts.tolist(), sizes.tolist(), stored.tolist(), strict=True)
        )
        return ChunkLayout(h, kind, nblocks, 0, tuple(starts.tolist()), vlblocks=vl, **dict_args)
    _check_regular(h, mv)
    starts = _read_bstarts(h, mv, nblocks, data_start)
    leftover = h.nbytes % h.blocksize
    blocks = []
    for i, start in enumerate(starts.tolist()):
        last_short = leftover and i == nblocks - 1
        bsize = leftover if last_short else h.blocksize
        nstreams = 1 if last_short else _streams_per_block(h)
        end, csizes = _walk_block(mv, i, start, nstreams, _neblock(bsize, nstreams), h.cbytes)
        blocks.append(BlockLayout(start, bsize, tuple(csizes), end))
    return ChunkLayout(h, kind, nblocks, leftover, tuple(starts.tolist()), blocks=tuple(blocks),
                       **dict_args)  # fmt: skip
