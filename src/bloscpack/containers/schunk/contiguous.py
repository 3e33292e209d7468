"""Contiguous frames (:class:`ContiguousFrame`): the chunks stored in the frame itself, a file
(optionally at an offset in a larger file), bytes, or a
:class:`~bloscpack.io.sources.ByteSource`."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ...blosc import partial
from ...blosc.header import BLOSC2_HEADER_SIZE, ChunkHeader
from ...blosc.layout import check_header
from ...blosc.partial import CHUNK_HEAD_READ
from ...errors import ArgumentError, BloscpackError, FormatError
from ...io.paths import PathLike
from ...io.sources import ByteSource
from ...io.staging import atomic_write
from ...journal import Steps, remove_journal, roll_back, write_journal
from .core import decode_checked
from .edit import FrameBase
from .params import CParams, compress_vlmeta, new_frame_image
from .records import (
    FRAME_CONTIGUOUS,
    HEADER_FIXED_LEN,
    marker_of,
    pack_metalayers,
    pack_trailer,
)
from .storage import FrameStorage


class ContiguousFrame(FrameBase):
    """A contiguous frame in a file (optionally at ``offset`` in a larger file), in memory, or
    in a :class:`~bloscpack.io.sources.ByteSource` (read-only; the frame closes it).

    ``writable`` frames are mutated in place with C-Blosc2's layout rules; in-memory frames are
    copied into a ``bytearray`` first (see :meth:`to_bytes`).
    """

    def __init__(
        self,
        source: PathLike | bytes | bytearray | memoryview | ByteSource,
        *,
        writable: bool = False,
        offset: int = 0,
    ) -> None:
        if isinstance(source, ByteSource):  # read-only; the frame closes it
            if writable:
                raise ArgumentError("a frame read from a ByteSource cannot be writable")
            self.name = source.name
        elif isinstance(source, (bytes, bytearray, memoryview)):
            self.name = "<bytes>"
            if offset:
                source = memoryview(source)[offset:]
                offset = 0
            if writable:
                source = bytearray(source)
        else:
            self.name = os.fspath(source)
        if offset < 0:
            raise ArgumentError(f"offset must be >= 0, got {offset}")
        self.writable = writable
        self._storage = FrameStorage(source, offset, writable, self.name)
        self._partial_reads = 0
        try:
            with self._storage.consistent():
                self._trailer_at, self._trailer_len = self._load(
                    self._storage.read, self._storage.size(), self.name
                )
        except BaseException:
            self._storage.close()
            raise

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        return self._storage.consistent()

    def exclusive(self) -> contextlib.AbstractContextManager[None]:
        return self._storage.exclusive()

    @classmethod
    def create(
        cls, target: PathLike | None, cparams: CParams, *, chunksize: int | None = None,
        metalayers: Sequence[tuple[str, bytes]] = (), vlmeta: Sequence[tuple[str, bytes]] = (),
        nthreads: int = 1,
    ) -> ContiguousFrame:  # fmt: skip
        """Create an empty frame at ``target`` (atomically; None = in memory) and open it for
        writing.  ``vlmeta`` values are msgpack bytes."""
        vl = [(name, compress_vlmeta(bytes(content))) for name, content in vlmeta]
        image = new_frame_image(FRAME_CONTIGUOUS, cparams, chunksize, metalayers, vl, nthreads)
        if target is None:
            return cls(bytearray(image), writable=True)
        with atomic_write(target) as fh:
            fh.write(image)
        return cls(target, writable=True)

    def close(self) -> None:
        self._storage.close()

    def to_bytes(self) -> bytes:
        return bytes(self._storage.read(0, self.header.frame_len, "frame"))

    def _stored_chunk(self, i: int, entry: int) -> memoryview | bytes:
        _, pos, chunk_header = self.stored_span(i, entry)
        return self._storage.read(pos, chunk_header.cbytes, f"chunk {i}")

    def stored_span(self, i: int, entry: int) -> tuple[str, int, ChunkHeader]:
        header = self.header
        pos = header.header_len + entry
        chunk_header = ChunkHeader.parse(
            self._storage.read(pos, BLOSC2_HEADER_SIZE, f"chunk {i} header")
        )
        cbytes = chunk_header.cbytes
        if cbytes < BLOSC2_HEADER_SIZE:
            raise FormatError(
                f"{self.name}: chunk {i} at offset {entry}: cbytes {cbytes} is smaller than"
                f" its {BLOSC2_HEADER_SIZE}-byte header"
            )
        if entry + cbytes > header.cbytes:
            raise FormatError(
                f"{self.name}: chunk {i} at offset {entry} with cbytes {cbytes} runs past the"
                f" chunks section ({header.cbytes} bytes)"
            )
        return self.name, pos, chunk_header

    @property
    def ranged(self) -> bool:  # type: ignore[override]
        source = self._storage.source
        return source is not None and source.remote

    def _prefetch_open(self, ranges: list[tuple[int, int]]) -> None:
        source = self._storage.source
        if source is not None and source.remote:
            at, size = self._storage.offset, self._storage.size()
            source.prefetch([(at + p, n) for p, n in ranges if p >= 0 and p + n <= size])

    def prefetch(self, indices: Sequence[int]) -> None:
        """Fetch chunks ``indices`` of a remote frame at once: each from its offset to the
        next chunk's (or the end of the chunks section)."""
        source = self._storage.source
        if source is None or not source.remote:
            return
        stored = np.unique(self.offsets[self.offsets >= 0])
        ends = np.append(stored[1:], self.header.cbytes)
        start = self._storage.offset + self.header.header_len
        ranges = []
        for i in indices:
            entry = self._entry(i) if 0 <= i < self.nchunks else -1
            if entry >= 0:
                end = int(ends[np.searchsorted(stored, entry)])
                ranges.append((start + entry, end - entry))
        source.prefetch(ranges)

    #: Chunks smaller than this stay mapped after :meth:`release` (the call would cost more).
    RELEASE_MIN = 1 << 20

    def release(self, i: int, chunk: Any) -> None:
        source = self._storage.source
        if source is None or memoryview(chunk).nbytes < self.RELEASE_MIN:
            return
        entry = self._entry(i)
        if entry >= 0:
            at = self._storage.offset + self.header.header_len + entry
            source.release(at, memoryview(chunk).nbytes)

    #: Item reads of a newly opened frame that read only the blocks they need; later ones map
    #: the file, whose mapping then serves every read without copies (mapping costs more than
    #: one positioned read of a block, less than several).  A remote source never maps: its
    #: item reads always fetch only the blocks they need.
    PARTIAL_READS = 1

    def read_chunk_items(self, i: int, lo: int, hi: int) -> memoryview | bytes:
        i = self._check_index(i)
        entry = self._entry(i)
        source = self._storage.source
        if entry < 0 or source is None or (self._partial_reads >= self.PARTIAL_READS
                                           and not source.remote):  # fmt: skip
            return self.chunk_at(i, entry)
        self._partial_reads += 1
        header = self.header
        pos = header.header_len + entry
        if header.cbytes - entry < BLOSC2_HEADER_SIZE:
            return self.chunk_at(i, entry)  # which reports it
        # at a URL, the fixed header first: a small chunk (maybe fetched already with its
        # neighbours) is then read whole
        head = self._storage.read(
            pos, BLOSC2_HEADER_SIZE if source.remote else min(CHUNK_HEAD_READ,
                                                               header.cbytes - entry),
            f"chunk {i} header",
        )  # fmt: skip
        cbytes = ChunkHeader.parse(head).cbytes
        if (cbytes < BLOSC2_HEADER_SIZE or entry + cbytes > header.cbytes
                or (source.remote and cbytes <= partial.MIN_PARTIAL_CBYTES)):  # fmt: skip
            return self.chunk_at(i, entry)  # which reports a bad one
        if source.remote:
            head = self._storage.read(
                pos, min(CHUNK_HEAD_READ, header.cbytes - entry), f"chunk {i} header"
            )

        def read_into(at: int, dest: memoryview, what: str) -> None:
            self._storage.read_into(pos + at, dest, f"chunk {i} {what}")

        part = partial.read_chunk_items(read_into, head, lo, hi)
        return self.chunk_at(i, entry) if part is None else part

    def decode_chunk_items(self, i: int, lo: int, hi: int, nbytes: int, dest: np.ndarray) -> bool:
        """Decode bytes ``[lo, hi)`` (whole items) of chunk ``i``, which must hold ``nbytes``,
        into ``dest`` in one pass (see :meth:`FrameCore.decode_chunk_items`): the chunk's
        header, bstarts and the blocks they touch read by offset (the first reads of a local
        frame) or from the file's mapping, checked, then decoded."""
        source = self._storage.source
        if source is None or source.remote or not 0 <= i < self.nchunks:
            return False
        entry = self._entry(i)
        header = self.header
        room = header.cbytes - entry
        if entry < 0 or room < BLOSC2_HEADER_SIZE:
            return False
        pos = header.header_len + entry
        head = None
        if self._partial_reads < self.PARTIAL_READS:
            self._partial_reads += 1
            head = self._storage.read(pos, min(CHUNK_HEAD_READ, room), f"chunk {i} header")

            def read_into(at: int, part: memoryview, what: str) -> None:
                self._storage.read_into(pos + at, part, f"chunk {i} {what}")

            got = partial.checked_chunk_items(read_into, head, lo, hi, nbytes, room)
            if got is not None and got[1].cbytes >= BLOSC2_HEADER_SIZE:
                return decode_checked(got[0], got[1], lo, hi, dest, checked=True)
        if head is None:
            head = self._storage.read(pos, BLOSC2_HEADER_SIZE, f"chunk {i} header")
        try:
            chunk_header = check_header(head)
        except BloscpackError:
            return False
        cbytes = chunk_header.cbytes
        if (chunk_header.nbytes != nbytes or not BLOSC2_HEADER_SIZE <= cbytes <= room
                or not chunk_header.blocks_alone):  # fmt: skip
            return False
        if cbytes > len(head):
            head = self._storage.read(pos, cbytes, f"chunk {i}")
        chunk = head[:cbytes]
        return decode_checked(chunk, chunk_header, lo, hi, dest)

    # --- mutation (C-Blosc2's layout; the index rules are in FrameBase) --------------------

    keeps_holes = True

    def _section_len(self, cbytes: int) -> int:
        return cbytes

    def _store_new(self, data: memoryview) -> int:
        """A new chunk goes to the end of the chunks section."""
        cbytes = self.header.cbytes
        self._storage.write(self.header.header_len + cbytes, data)
        return cbytes

    def _place_update(
        self, offsets: np.ndarray, pos: int, old_cbytes: int, data: memoryview | None
    ) -> int:
        """A stored old chunk is overwritten in place (the rest of the chunks section moves by
        the size difference); after a marker the new bytes are appended."""
        cbytes = self.header.cbytes
        hl = self.header.header_len
        old_entry = int(offsets[pos])
        new_len = 0 if data is None else len(data)
        if old_entry < 0:
            if data is not None:
                self._storage.write(hl + cbytes, data)
                offsets[pos] = cbytes
            return cbytes + new_len
        delta = new_len - old_cbytes
        tail_src, tail_dst = old_entry + old_cbytes, old_entry + new_len
        if cbytes > tail_src and delta:
            tail = bytes(self._storage.read(hl + tail_src, cbytes - tail_src, "chunks"))
            self._storage.write(hl + tail_dst, tail)
        offsets[(offsets > old_entry) & (offsets >= 0)] += delta
        if data is not None:
            self._storage.write(hl + old_entry, data)
        return cbytes + delta

    def refresh(self) -> None:
        if self._storage.fd is not None:
            with os.fdopen(os.dup(self._storage.fd), "r+b") as fp:
                roll_back(self.name, fp)
        self._trailer_at, self._trailer_len = self._load(
            self._storage.read, self._storage.size(), self.name
        )
        self._index_buffer = None

    def _grow(self, first: int, new: Iterable[tuple[memoryview, ChunkHeader]],
              commit: Callable[[np.ndarray, list[int], int], None],
              steps: Steps) -> None:  # fmt: skip
        """The new chunks go where the chunks they replace began when those end the chunks
        section (else after it, leaving them as holes, as C-Blosc2 does), then index, trailer
        and header; a file is changed under the rollback journal of :mod:`bloscpack.journal`."""
        keep, dropped = self.offsets[:first], self.offsets[first:]
        kept, dropped = keep[keep >= 0], dropped[dropped >= 0]
        at = self.header.cbytes
        if dropped.size and (not kept.size or kept.max() < dropped.min()):
            at = int(dropped.min())
        hl = self.header.header_len
        with self._journaled(hl + at, steps):
            entries, sizes = [], []
            for data, header in new:
                entry = marker_of(header)
                if entry is None:
                    self._storage.write(hl + at, data)
                    entry, at = at, at + len(data)
                    steps.done()
                entries.append(entry)
                sizes.append(header.nbytes)
            commit(np.concatenate([keep, np.asarray(entries, dtype="<i8")]), sizes, at)
            steps.done()

    @contextlib.contextmanager
    def _journaled(self, tail: int, steps: Steps) -> Iterator[None]:
        """A change of the frame's header and of its bytes from ``tail`` on: a frame in a file
        is changed under a rollback journal beside it (written and synced first, removed once
        the file is synced), so that an interrupted change is rolled back by the next reader
        or writer (:func:`bloscpack.journal.recover`); a failed one is rolled back here."""
        storage = self._storage
        if storage.fd is None:
            yield
            return
        size = storage.size()
        regions = [(storage.offset + pos, bytes(storage.read(pos, n, "frame")))
                   for pos, n in ((0, self.header.header_len), (tail, size - tail))]  # fmt: skip
        with os.fdopen(os.dup(storage.fd), "r+b") as fp:
            write_journal(self.name, fp, regions, steps)
            try:
                yield
                os.fsync(storage.fd)
                steps.done()
            except BaseException:
                roll_back(self.name, fp)
                self.refresh()
                raise
            remove_journal(self.name, steps)

    def _write_image(self, header: bytes, index: bytes, trailer: bytes, frame_len: int) -> None:
        """Write index, trailer and header and truncate the file to the new frame length."""
        hl = self.header.header_len
        if len(header) != hl:
            raise AssertionError("header length changed during a chunk operation")
        self._storage.write(frame_len - len(trailer) - len(index), index + trailer)
        self._storage.write(0, header)
        self._storage.truncate(frame_len)
        self._trailer_at, self._trailer_len = frame_len - len(trailer), len(trailer)

    def _write_metalayers(self, grew: bool) -> None:
        if grew:
            # Only possible without chunks: the frame is just header + trailer.
            trailer = pack_trailer(self.vlmeta)
            meta_len = len(pack_metalayers(self.metalayers))
            frame_len = HEADER_FIXED_LEN + meta_len + len(trailer)
            header = self._header_bytes(
                frame_len=frame_len,
                nbytes=0,
                cbytes=0,
                chunksize=self.header.chunksize,
                vl_blocks=self._vl_blocks(),
            )
            self._storage.write(0, header + trailer)
            self._storage.truncate(frame_len)
            self._reparse_header(header)
            self._trailer_at, self._trailer_len = frame_len - len(trailer), len(trailer)
            return
        header = self._header_bytes(
            frame_len=self.header.frame_len, nbytes=self.header.nbytes, cbytes=self.header.cbytes,
            chunksize=self.header.chunksize, vl_blocks=self._vl_blocks(),
        )  # fmt: skip
        self._storage.write(0, header)
        self._reparse_header(header)
