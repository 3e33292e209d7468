"""What every open frame reads, wherever its chunks are stored (:class:`FrameCore`): the header,
metalayers and vlmetalayers, the index (decoded on first use, single entries before), the
chunks (special entries synthesized like C-Blosc2), ``info`` and ``verify``."""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ... import engine
from ...blosc.header import BLOSC2_HEADER_SIZE, ChunkHeader, Special
from ...blosc.layout import blocks_ok, validate_chunk
from ...errors import (
    BloscpackError,
    FileChangedError,
    FormatError,
    TruncatedError,
    UnsupportedError,
)
from .params import CParams
from .records import (
    EDGE_READ,
    FRAME_CONTIGUOUS,
    FRAME_SPARSE,
    HEADER_FIXED_LEN,
    MARKER_KINDS,
    MAX_METALAYERS,
    MAX_VLMETALAYERS_READ,
    TRAILER_MIN_LEN,
    FrameHeader,
    check_entry,
    check_index,
    chunk_kind,
    decode_index,
    hex_entry,
    index_entry,
    parse_layers,
    synthesized_chunk,
)


def opening_ranges(header: FrameHeader, index_at: int | None = None) -> list[tuple[int, int]]:
    """The ``(pos, length)`` ranges opening the frame whose header is ``header`` reads: its
    header and metalayers, then its index and trailer at once (with the bytes before them
    when they are shorter than :data:`EDGE_READ`).  ``index_at``: where its index starts
    (default: after the chunks, as in a contiguous frame)."""
    if index_at is None:
        index_at = header.header_len + header.cbytes
    end_at = max(header.header_len, min(index_at, header.frame_len - EDGE_READ))
    return [(0, header.header_len), (end_at, header.frame_len - end_at)]


def decode_checked(chunk: Any, header: ChunkHeader, lo: int, hi: int, dest: np.ndarray,
                   checked: bool = False) -> bool:  # fmt: skip
    """Decode bytes ``[lo, hi)`` of ``chunk``, whose ``header`` passed ``check_header`` and
    whose blocks decode alone, into ``dest`` after checking the layout of the blocks holding
    them (``checked``: they were, by :func:`~bloscpack.blosc.partial.checked_chunk_items`)
    (False, nothing decoded: a check fails, or the bytes reach past the last whole item)."""
    ts, bs = max(header.real_typesize, 1), header.blocksize
    first, last = lo // ts, -(-hi // ts)
    if last * ts > header.nbytes or not (checked or blocks_ok(chunk, header, first * ts // bs,
                                                              -(-last * ts // bs))):  # fmt: skip
        return False
    if first * ts == lo and last * ts == hi:
        engine.getitem_into(chunk, first, last - first, dest, validated=True, header=header)
    else:
        part = np.empty((last - first) * ts, dtype=np.uint8)
        engine.getitem_into(chunk, first, last - first, part, validated=True, header=header)
        dest[:] = part[lo - first * ts : hi - first * ts]
    return True


class FrameCore:
    """The state and reads shared by contiguous and sparse frames.

    Subclasses provide chunk storage (``_stored_chunk``).  ``offsets`` holds the decoded index
    (int64; negative = special marker), decoded on first use; until then :meth:`entry` decodes
    single entries.
    """

    sparse = False
    name: str
    header: FrameHeader
    fixed: bytearray  # the 87 fixed header bytes, patched on every rewrite
    metalayers: list[tuple[str, bytes]]
    vlmeta: list[tuple[str, bytes]]
    writable: bool
    _opened_header: FrameHeader
    _cparams: CParams | None

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        """The block a read runs in (see :meth:`bloscpack.io.sources.ByteSource.consistent`)."""
        return contextlib.nullcontext()

    # --- reading ---------------------------------------------------------------------------

    def _load(self, read: Any, size: int, where: str) -> tuple[int, int]:
        """Parse header, metalayers, trailer and index through ``read(pos, n, what)`` (the
        frame's bytes, ``size`` of them available).  Returns (trailer offset, trailer length)."""
        if size < HEADER_FIXED_LEN:
            raise TruncatedError(f"{where}: {max(size, 0)} bytes, too short for a Blosc2 frame")
        first = read(0, min(size, EDGE_READ), "frame header")
        header = FrameHeader.parse(first, where)
        expected = FRAME_SPARSE if self.sparse else FRAME_CONTIGUOUS
        if header.frame_type != expected:
            raise FormatError(
                f"{where}: frame type {header.frame_type} where {expected} "
                f"({'sparse' if self.sparse else 'contiguous'}) was expected"
            )
        if header.frame_len > size:
            raise TruncatedError(
                f"{where}: header says frame_len {header.frame_len}, only {size} bytes are there"
            )
        ranges = opening_ranges(header, self._index_at(header))
        end_at = ranges[1][0]
        # a remote frame fetches what the header says the rest of its opening reads at once
        self._prefetch_open(ranges)
        if header.header_len <= len(first):
            head = first[: header.header_len]
        else:
            head = read(0, header.header_len, "frame header and metalayers")
        layers = parse_layers(head, HEADER_FIXED_LEN, 0, MAX_METALAYERS, f"{where}: metalayers")
        end = read(end_at, header.frame_len - end_at, "frame end")

        def read_end(pos: int, n: int, what: str) -> Any:
            if pos < end_at:
                return read(pos, n, what)
            return end[pos - end_at : pos - end_at + n]

        tail = read_end(header.frame_len - 23, 23, "frame trailer end")
        if tail[0] != 0xCE or tail[5] != 0xD8:
            raise FormatError(
                f"{where}: no frame trailer at the end (bytes {bytes(tail[:7]).hex()})"
            )
        (trailer_len,) = struct.unpack_from(">I", tail, 1)
        if tail[6] != 0:
            raise UnsupportedError(
                f"{where}: fingerprint type {tail[6]} (only 0, none, is defined)"
            )
        if not TRAILER_MIN_LEN <= trailer_len <= header.frame_len - header.header_len:
            raise FormatError(f"{where}: trailer length {trailer_len} out of range")
        trailer_at = header.frame_len - trailer_len
        trailer = read_end(trailer_at, trailer_len - 23, "frame trailer")
        if trailer[0] != 0x94 or trailer[1] != 0x01:
            raise FormatError(
                f"{where}: trailer starts with {bytes(trailer[:2]).hex()}, expected 94 01"
            )
        vl = parse_layers(trailer, 2, 0, MAX_VLMETALAYERS_READ, f"{where}: vlmetalayers")
        self.header = header
        self._opened_header = header
        self._cparams = None
        self.fixed = bytearray(header.raw)
        self.metalayers = [(n, c) for n, c, _ in layers]
        self.vlmeta = [(n, c) for n, c, _ in vl]
        self._open_index(read_end, trailer_at, size, where)
        return trailer_at, trailer_len

    def _prefetch_open(self, ranges: list[tuple[int, int]]) -> None:
        """Hint: opening reads the frame's ``(pos, length)`` ``ranges`` next (a remote frame
        fetches those it lacks in one round; nothing elsewhere)."""

    def _index_at(self, header: FrameHeader) -> int:
        """Where the index chunk starts (after the chunks section of a contiguous frame)."""
        return header.header_len if self.sparse else header.header_len + header.cbytes

    def _open_index(self, read: Any, trailer_at: int, source_size: int, where: str) -> None:
        """Find the index chunk and check its header; its entries are decoded when used (see
        :meth:`entry`; a writable frame decodes them all now)."""
        header = self.header
        self._offsets = None
        self._index = None
        self._index_where = where
        self._lazy_entries = 0
        self._looked_up: tuple[int, int] | None = None  # the last entry read alone
        if header.nbytes == 0:
            self._offsets = np.empty(0, dtype="<i8")
            return
        index_at = self._index_at(header)
        if index_at + BLOSC2_HEADER_SIZE > trailer_at:
            raise FormatError(
                f"{where}: index chunk at {index_at} does not fit before the trailer"
                f" at {trailer_at}"
                f" (header_len {header.header_len}, cbytes {header.cbytes})"
            )
        nchunks = -(-header.nbytes // header.chunksize) if header.chunksize > 0 else None
        index = read(index_at, trailer_at - index_at, "index chunk")
        self._index_header = check_index(index, nchunks, f"{where}: index", source_size)
        self._index = (index, source_size)
        if self.writable:
            self._decode_offsets()

    def _decode_offsets(self) -> np.ndarray:
        """Decode the whole index and check every entry (once: threads reading chunks of the
        same frame may get here together)."""
        stored = self._index
        if stored is None:  # decoded meanwhile: _offsets is set before _index is cleared
            assert self._offsets is not None
            return self._offsets
        where = self._index_where
        index, source_size = stored
        try:  # the header passed check_index on open: what fails here is in the blocks
            offsets = decode_index(index, self.nchunks, f"{where}: index", source_size)
        except BloscpackError as exc:
            raise type(exc)(f"{where}: index: {exc}") from None
        negative = offsets < 0
        if negative.any():
            tops = (offsets[negative].view("<u8") >> np.uint64(56)).astype(np.int64)
            bad = ~np.isin(tops, list(MARKER_KINDS))
            if bad.any():
                i = int(np.flatnonzero(negative)[np.flatnonzero(bad)[0]])
                check_entry(i, int(offsets[i]), None, where)
        if not self.sparse and offsets.size:
            beyond = offsets > self.header.cbytes - BLOSC2_HEADER_SIZE
            if beyond.any():
                i = int(np.flatnonzero(beyond)[0])
                check_entry(i, int(offsets[i]), self.header.cbytes, where)
        self._offsets = offsets
        self._index = None
        return offsets

    #: Index entries read alone after open, each decoding only the index block that holds it,
    #: before the whole index is decoded: the first chunk read after open decodes no more of
    #: the index than it needs.
    LAZY_ENTRIES = 1

    _offsets: np.ndarray | None
    _index: tuple[Any, int] | None  # (stored index chunk, input size) while not decoded
    _index_header: ChunkHeader

    @property
    def offsets(self) -> np.ndarray:
        """The decoded index (int64; negative = special marker), decoded on first use."""
        offsets = self._offsets
        return self._decode_offsets() if offsets is None else offsets

    @offsets.setter
    def offsets(self, value: np.ndarray) -> None:
        self._offsets = value
        self._index = None

    @property
    def nchunks(self) -> int:
        offsets = self._offsets
        return self._index_header.nbytes // 8 if offsets is None else int(offsets.size)

    def entry(self, i: int) -> int:
        """The checked index entry of chunk ``i`` (an offset, a chunk-file id for sparse
        frames, or a negative special marker)."""
        return self._entry(self._check_index(i))

    def _entry(self, i: int) -> int:
        offsets = self._offsets
        if offsets is not None:
            return int(offsets[i])
        index = self._index
        looked_up = self._looked_up
        if looked_up is not None and looked_up[0] == i:
            return looked_up[1]
        if index is None or self._lazy_entries >= self.LAZY_ENTRIES:
            return int(self.offsets[i])
        self._lazy_entries += 1
        where = self._index_where
        try:
            entry = index_entry(index[0], self._index_header, i)
        except BloscpackError as exc:
            raise type(exc)(f"{where}: index: {exc}") from None
        if entry is None:
            return int(self.offsets[i])
        entry = check_entry(i, entry, None if self.sparse else self.header.cbytes, where)
        self._looked_up = (i, entry)
        return entry

    @property
    def cparams(self) -> CParams:
        """The compression parameters of new chunks: the header's as it was opened (like a
        C-Blosc2 schunk, ``fill_special`` changes the header blocksize but not these)."""
        if self._cparams is None:
            self._cparams = CParams.from_header(self._opened_header)
        return self._cparams

    def _check_index(self, i: int) -> int:
        n = self.nchunks
        if not -n <= i < n:
            raise IndexError(f"chunk {i} out of range for a frame of {n} chunks")
        return i + n if i < 0 else i

    def chunk_nbytes(self, i: int) -> int:
        """Uncompressed size of chunk ``i``."""
        return ChunkHeader.parse(self.read_chunk(i)).nbytes

    def read_chunk(self, i: int) -> memoryview | bytes:
        """The stored bytes of chunk ``i`` (a chunk synthesized like C-Blosc2 for special
        entries), validated against the frame."""
        i = self._check_index(i)
        return self.chunk_at(i, self._entry(i))

    #: Whether reading a chunk's blocks alone saves requests and bytes (a contiguous frame at a
    #: URL), so that even boxes read only the blocks they need.
    ranged = False

    @property
    def at_url(self) -> bool:
        """Whether the frame is read from a URL (every read costs a request)."""
        return self.ranged

    def prefetch(self, indices: Sequence[int]) -> None:
        """Hint that chunks ``indices`` are read next, whole (a remote frame fetches them at
        once)."""

    def release(self, i: int, chunk: Any) -> None:
        """Hint that chunk ``i`` (``chunk``, what :meth:`chunk_at` gave) is not read again
        soon: the pages of a mapped file holding it leave this process's memory (they stay in
        the page cache)."""

    def chunk_at(self, i: int, entry: int) -> memoryview | bytes:
        """:meth:`read_chunk` of chunk ``i`` whose index entry (from :meth:`entry`) is
        ``entry``."""
        if entry < 0:
            return self._synthesize(i, chunk_kind(entry))
        return self._stored_chunk(i, entry)

    def decode_chunk_items(self, i: int, lo: int, hi: int, nbytes: int, dest: np.ndarray) -> bool:
        """Decode bytes ``[lo, hi)`` (whole items) of chunk ``i``, which must hold ``nbytes``,
        into ``dest`` (a byte array of ``hi - lo``) in one pass: its index entry, then only its
        header, bstarts and the streams of the blocks they touch, checked as a read through
        :meth:`read_chunk_items` checks them.  False: nothing was decoded (a special entry, a
        check failed, a chunk better read whole): read it that way, which names what is
        wrong."""
        return False

    def read_chunk_items(self, i: int, lo: int, hi: int) -> memoryview | bytes:
        """Chunk ``i``, or when decoding its bytes ``[lo, hi)`` needs only some of its blocks and
        the frame can read them alone, a buffer of the chunk's size holding its header, bstarts
        and those blocks' streams (see :mod:`bloscpack.blosc.partial`)."""
        return self.read_chunk(i)

    def read_chunk_blocks(self, i: int, runs: Sequence[tuple[int, int]]) -> memoryview | None:
        """A buffer of chunk ``i``'s size holding its header, bstarts and the streams of its
        block ``runs`` ``(first, count)``, read alone (from a local chunk file of a sparse
        frame, see :func:`bloscpack.blosc.partial.read_chunk_blocks`); None: read it whole (a
        contiguous frame's file is mapped, which then serves every chunk without copies)."""
        return None

    def _synthesize(self, i: int, kind: Special) -> bytes:
        header = self.header
        if header.chunksize <= 0:
            raise UnsupportedError(
                f"{self.name}: chunk {i} is a special ({kind.name}) entry of a"
                " variable-chunksize frame;"
                " its size is unknown (C-Blosc2 cannot synthesize it either)"
            )
        nbytes = header.chunksize
        if i == self.nchunks - 1 and header.nbytes % header.chunksize:
            nbytes = header.nbytes % header.chunksize
        return synthesized_chunk(kind, nbytes, header.typesize, header.blocksize)

    def _stored_chunk(self, i: int, entry: int) -> memoryview | bytes:
        raise NotImplementedError

    def stored_span(self, i: int, entry: int) -> tuple[str, int, ChunkHeader]:
        """Where chunk ``i``, stored at index entry ``entry`` (not a special one), lies: the
        file that holds it, its offset there and its header, checked as reads check them."""
        raise NotImplementedError

    def decompress_chunk(self, i: int, out: Any = None) -> Any:
        """Decompress chunk ``i`` into ``out`` (any writable buffer) or a new ``bytearray``;
        returns the destination."""
        chunk = self.read_chunk(i)
        header = validate_chunk(chunk)
        if out is None:
            out = bytearray(header.nbytes)
        engine.decompress_into(chunk, out, validated=True)
        return out

    def iter_chunks(self) -> Iterator[memoryview | bytes]:
        for i in range(self.nchunks):
            yield self.read_chunk(i)

    def meta_raw(self, name: str) -> bytes:
        for n, content in self.metalayers:
            if n == name:
                return content
        raise KeyError(name)

    def vlmeta_raw(self, name: str) -> bytes:
        """The decompressed (msgpack) content of vlmetalayer ``name``."""
        for n, chunk in self.vlmeta:
            if n == name:
                return bytes(engine.decompress(chunk))
        raise KeyError(name)

    def info(self) -> dict[str, Any]:
        """JSON-able description: header fields, metalayers, vlmetalayers, the index."""
        return {
            "header": self.header.to_dict(),
            "cparams": self.cparams.to_dict(),
            "nchunks": self.nchunks,
            "metalayers": [{"name": n, "hex": c.hex()} for n, c in self.metalayers],
            "vlmetalayers": [{"name": n, "cbytes": len(c)} for n, c in self.vlmeta],
            "index": [int(x) if x >= 0 else hex_entry(x) for x in self.offsets],
        }

    def verify(self) -> dict[str, Any]:
        """Decode every chunk and check sizes and index/header consistency."""
        bad: list[dict[str, Any]] = []
        problems: list[str] = []
        total = 0
        chunksize = self.header.chunksize
        for i in range(self.nchunks):
            try:
                chunk = self.read_chunk(i)
                nbytes = validate_chunk(chunk).nbytes
                last = i == self.nchunks - 1
                if chunksize > 0 and (nbytes > chunksize or (nbytes != chunksize and not last)):
                    error = f"chunk holds {nbytes} bytes, frame chunksize is {chunksize}"
                    bad.append({"index": i, "error": error})
                    continue  # not decoded: its size is already wrong
                total += engine.check_decodes(chunk)
                del chunk
            except FileChangedError:
                raise  # not a bad chunk: the caller reads the frame again
            except BloscpackError as exc:
                bad.append({"index": i, "error": str(exc)})
        if not bad and total != self.header.nbytes:
            problems.append(
                f"chunks hold {total} bytes, the header says nbytes {self.header.nbytes}"
            )
        for name, _chunk in self.vlmeta:
            try:
                self.vlmeta_raw(name)
            except BloscpackError as exc:
                problems.append(f"vlmetalayer {name!r}: {exc}")
        return {
            "ok": not bad and not problems,
            "nchunks": self.nchunks,
            "bad_chunks": bad,
            "problems": problems,
        }
