"""In-place mutation of frames with C-Blosc2's rules (:class:`FrameBase`): metalayers and
vlmetalayers, appending, inserting, updating, deleting and reordering chunks, special fills.
The index and header rules are here; subclasses place the chunk bytes (contiguous frames in
the frame itself, sparse frames in chunk files)."""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ...blosc.header import BLOSC2_HEADER_SIZE, MAX_BUFFERSIZE, ChunkHeader, Special
from ...blosc.special import special_chunk
from ...errors import ArgumentError
from ...io.sources import run_inside
from ...journal import Steps
from .core import FrameCore
from .params import compress_vlmeta
from .records import (
    GF_VL_BLOCKS,
    HEADER_FIXED_LEN,
    INDEX_BLOCKSIZE,
    MAX_INDEX_NBYTES,
    MAX_METALAYERS,
    MAX_VLMETALAYERS_WRITE,
    SPECIAL_MARKERS,
    FrameHeader,
    check_name,
    check_new_chunk,
    encode_index,
    forced_blocksize,
    general_flags,
    marker_of,
    next_chunksize,
    pack_metalayers,
    pack_trailer,
    put_field,
    synthesized_chunk,
)

SPECIAL_KINDS = {"zeros": Special.ZEROS, "nan": Special.NAN, "uninit": Special.UNINIT}
INT_MAX = 2**31 - 1


#: A mutation of a frame, run inside :meth:`FrameBase.exclusive` (readers of the file in this
#: and other processes wait, and see it changed afterwards).
_edit = run_inside(lambda frame: frame.exclusive())


class FrameBase(FrameCore):
    """State and rules shared by contiguous and sparse frames: :class:`FrameCore`'s reads
    and the mutations, run inside :meth:`exclusive`.  Subclasses store the chunk bytes
    (``_store_new``, ``_place_update``, ``_write_image``, ``_write_metalayers``)."""

    def exclusive(self) -> contextlib.AbstractContextManager[None]:
        """The block an in-place change runs in: an exclusive lock on the file."""
        return contextlib.nullcontext()

    # --- chunk-size rules ----------------------------------------------------------------

    def _last_nbytes(self) -> int:
        """Uncompressed size of the last chunk (cheap for fixed chunk sizes)."""
        cs = self.header.chunksize
        if cs > 0:
            return self.header.nbytes - (self.nchunks - 1) * cs
        return self.chunk_nbytes(self.nchunks - 1)

    def _chunksize_after(self, op: str, pos: int, nbytes: int) -> int:
        """The frame chunksize after ``op`` ("insert", "append" or "update") at ``pos`` with a
        chunk of ``nbytes`` (see :func:`next_chunksize`)."""
        return next_chunksize(self.header.chunksize, op, pos, self.nchunks, nbytes,
                              self._last_nbytes)  # fmt: skip

    # --- metadata mutation ---------------------------------------------------------------

    def _require_writable(self) -> None:
        if not self.writable:
            raise PermissionError(f"{self.name}: frame is open read-only")

    @_edit
    def set_meta_raw(self, name: str, content: bytes) -> None:
        """Replace metalayer ``name`` with content of the same length (or add one to a frame
        without chunks)."""
        self._require_writable()
        content = bytes(content)
        for k, (n, old) in enumerate(self.metalayers):
            if n == name:
                if len(old) != len(content):
                    raise ArgumentError(
                        f"metalayer {name!r}: new content has {len(content)} bytes, the stored one"
                        f" {len(old)} (the length cannot change)"
                    )
                self.metalayers[k] = (name, content)
                self._write_metalayers(grew=False)
                return
        if self.header.cbytes > 0 or self.nchunks:
            raise ArgumentError(
                f"metalayer {name!r}: metalayers can only be added before chunks are stored"
            )
        if len(self.metalayers) >= MAX_METALAYERS:
            raise ArgumentError(f"at most {MAX_METALAYERS} metalayers")
        check_name(name)
        self.metalayers.append((name, content))
        self._write_metalayers(grew=True)

    @_edit
    def set_vlmeta_raw(self, name: str, content: bytes) -> None:
        """Add or replace vlmetalayer ``name`` with msgpack ``content`` (stored compressed)."""
        self._require_writable()
        chunk = compress_vlmeta(bytes(content))
        for k, (n, _old) in enumerate(self.vlmeta):
            if n == name:
                self.vlmeta[k] = (name, chunk)
                self._write_trailer()
                return
        if len(self.vlmeta) >= MAX_VLMETALAYERS_WRITE:
            raise ArgumentError(f"at most {MAX_VLMETALAYERS_WRITE} vlmetalayers")
        check_name(name)
        self.vlmeta.append((name, chunk))
        self._write_trailer()

    @_edit
    def delete_vlmeta(self, name: str) -> None:
        self._require_writable()
        for k, (n, _old) in enumerate(self.vlmeta):
            if n == name:
                del self.vlmeta[k]
                self._write_trailer()
                return
        raise KeyError(name)

    def _write_metalayers(self, grew: bool) -> None:
        raise NotImplementedError

    def _write_trailer(self) -> None:
        h = self.header
        self._commit(self.offsets, h.nbytes, h.cbytes, h.chunksize, self._vl_blocks())

    # --- chunk mutation (the index rules; subclasses place the chunk bytes) ------------------

    # True when a deleted chunk's bytes stay in the frame (contiguous: a hole counted in cbytes)
    keeps_holes = False

    def append_chunk(self, chunk: Any) -> int:
        """Append a compressed chunk; returns the new number of chunks."""
        return self.insert_chunk(self.nchunks, chunk, op="append")

    @_edit
    def insert_chunk(self, pos: int, chunk: Any, op: str = "insert") -> int:
        """Insert a compressed chunk before chunk ``pos``; zeros / NaN / uninit chunks become
        index markers, other chunks are stored."""
        self._require_writable()
        if not 0 <= pos <= self.nchunks:
            raise IndexError(f"insert position {pos} out of range 0..{self.nchunks}")
        data, header = check_new_chunk(chunk)
        self._insert(pos, header, lambda: self._store_new(data), op)
        return self.nchunks

    def _insert(self, pos: int, header: ChunkHeader, store: Callable[[], int], op: str) -> None:
        """Insert the chunk of ``header`` before chunk ``pos`` (``store()`` stores its bytes
        and returns its index entry, unless it is a special chunk, which becomes a marker)."""
        chunksize = self._chunksize_after(op, pos, header.nbytes)
        vl = self._vl_blocks() or (self.nchunks == 0 and header.vl_blocks)
        cbytes = self.header.cbytes
        entry = marker_of(header)
        if entry is None:
            entry = store()
            cbytes += header.cbytes
        offsets = self._offsets_with(pos, entry)
        self._commit(offsets, self.header.nbytes + header.nbytes, cbytes, chunksize, vl,
                     appended=op == "append")  # fmt: skip

    def refresh(self) -> None:
        """Read the frame's state again, inside :meth:`exclusive` (what another writer changed
        since it was opened; an interrupted :meth:`grow` is rolled back first)."""
        raise NotImplementedError

    @_edit
    def grow(self, first: int, chunks: Iterable[Any], metalayers: dict[str, bytes] | None = None,
             vlmeta: dict[str, bytes] | None = None) -> None:  # fmt: skip
        """Replace chunks ``first`` to the last with the compressed ``chunks`` (stored as they
        come) and set the ``metalayers`` given (same lengths) and ``vlmeta`` (msgpack bytes),
        as one change that an interruption leaves undone or done (see the subclasses'
        ``_grow``)."""
        self._require_writable()
        for name, content in (metalayers or {}).items():
            at = [k for k, (n, old) in enumerate(self.metalayers)
                  if n == name and len(old) == len(content)]  # fmt: skip
            if not at:
                raise ArgumentError(f"{self.name}: no metalayer {name!r} of {len(content)} bytes")
            self.metalayers[at[0]] = (name, bytes(content))
        for name, content in (vlmeta or {}).items():
            packed = compress_vlmeta(bytes(content))
            at = [k for k, (n, _) in enumerate(self.vlmeta) if n == name]
            if at:
                self.vlmeta[at[0]] = (name, packed)
            else:
                self.vlmeta.append((name, packed))
        kept = self.header.nbytes - sum(self.chunk_nbytes(i) for i in range(first, self.nchunks))
        before = [self.chunk_nbytes(first - 1)] if first else []

        def commit(offsets: np.ndarray, sizes: list[int], cbytes: int) -> None:
            chunksize = self._grown_chunksize(before + sizes)
            self._commit(offsets, kept + sum(sizes), cbytes, chunksize, self._vl_blocks())

        self._grow(first, (check_new_chunk(chunk) for chunk in chunks), commit, Steps())

    def _grown_chunksize(self, sizes: list[int]) -> int:
        """The frame chunksize once the chunks from the one before those replaced on hold
        ``sizes`` bytes: kept while every chunk but the last has it (set by the first chunk
        of a frame without one), else 0 (variable)."""
        chunksize = self.header.chunksize
        if chunksize < 0:
            chunksize = sizes[0] if sizes else chunksize
        if chunksize <= 0:
            return chunksize
        if any(n != chunksize for n in sizes[:-1]) or (sizes and sizes[-1] > chunksize):
            return 0
        return chunksize

    def _grow(self, first: int, new: Iterable[tuple[memoryview, ChunkHeader]],
              commit: Callable[[np.ndarray, list[int], int], None],
              steps: Steps) -> None:  # fmt: skip
        """Store ``new`` in place of chunks ``first``... as they come, then ``commit(index,
        the new chunks' sizes, cbytes)`` the frame's new state."""
        raise NotImplementedError

    @_edit
    def update_chunk(self, pos: int, chunk: Any) -> int:
        """Replace chunk ``pos`` with a compressed chunk (a special one becomes a marker)."""
        self._require_writable()
        pos = self._check_index(pos)
        data, header = check_new_chunk(chunk)
        old = ChunkHeader.parse(self.read_chunk(pos)[:BLOSC2_HEADER_SIZE])
        chunksize = self._chunksize_after("update", pos, header.nbytes)
        offsets = self.offsets.copy()
        old_entry = int(offsets[pos])
        marker = marker_of(header)
        cbytes = self._place_update(
            offsets, pos, old.cbytes if old_entry >= 0 else 0, None if marker is not None else data
        )
        if marker is not None:
            offsets[pos] = marker
        nbytes = self.header.nbytes - old.nbytes + header.nbytes
        self._commit(offsets, nbytes, cbytes, chunksize, self._vl_blocks())
        if marker is not None and old_entry >= 0:
            self._release(old_entry)
        return self.nchunks

    @_edit
    def delete_chunk(self, pos: int) -> int:
        """Remove chunk ``pos`` (contiguous frames keep its bytes as a hole, like C-Blosc2)."""
        self._require_writable()
        pos = self._check_index(pos)
        old_entry = int(self.offsets[pos])
        old = ChunkHeader.parse(self.read_chunk(pos)[:BLOSC2_HEADER_SIZE])
        cbytes = self.header.cbytes
        if old_entry >= 0 and not self.keeps_holes:
            cbytes -= old.cbytes
        offsets = np.delete(self.offsets, pos)
        self._commit(offsets, self.header.nbytes - old.nbytes, cbytes, self.header.chunksize,
                     self._vl_blocks(), room=8)  # fmt: skip
        if old_entry >= 0:
            self._release(old_entry)
        return self.nchunks

    @_edit
    def reorder(self, order: Sequence[int]) -> None:
        """Permute the chunks: new chunk ``i`` is old chunk ``order[i]`` (only the index moves)."""
        self._require_writable()
        perm = check_order(order, self.nchunks)
        h = self.header
        self._commit(self.offsets[perm], h.nbytes, h.cbytes, h.chunksize, self._vl_blocks())

    @_edit
    def fill_special(self, nitems: int, kind: Any = "zeros", chunksize: int | None = None) -> int:
        """Fill an empty frame with ``nitems`` items of a special value, as python-blosc2's
        ``SChunk.fill_special`` does: ``kind`` "zeros" / "nan" / "uninit" store one index chunk
        of repeated markers (and set the header blocksize to that of a full chunk); a value
        (see :func:`special_value`) appends repeated-value chunks.  ``chunksize`` is needed
        when the frame has none yet.  Returns the number of chunks."""
        self._require_writable()
        h = self.header
        if h.nbytes > 0 or h.cbytes > 0 or self.nchunks:
            raise ArgumentError(f"{self.name}: fill_special needs an empty frame")
        if chunksize is None:
            chunksize = h.chunksize
        elif h.chunksize > 0 and chunksize != h.chunksize:
            raise ArgumentError(f"chunksize {chunksize} differs from the frame's {h.chunksize}")
        ts = h.typesize
        if chunksize <= 0:
            raise ArgumentError(
                f"{self.name}: fill_special needs a chunk size (the frame has none)"
            )
        if chunksize % ts or chunksize > MAX_BUFFERSIZE:
            raise ArgumentError(
                f"chunksize {chunksize} must be a multiple of typesize {ts} and at most"
                f" {MAX_BUFFERSIZE}"
            )
        nitems = int(nitems)
        if nitems < 0:
            raise ArgumentError(f"nitems must be >= 0, got {nitems}")
        if nitems * ts // chunksize > INT_MAX:
            raise ArgumentError("nitems is too large for this chunk size")
        kind_, value = special_value(kind, ts)
        if nitems == 0:
            return 0
        full, left = divmod(nitems * ts, chunksize)
        if 8 * (full + 1) > MAX_INDEX_NBYTES:
            raise ArgumentError(
                f"fill_special of {full + (1 if left else 0)} chunks: at most"
                f" {MAX_INDEX_NBYTES // 8} (use a larger chunk size)"
            )
        params = self.cparams
        if value is not None:  # python-blosc2 appends repeated-value chunks
            sizes = [chunksize] * full + ([left] if left else [])
            for nbytes in sizes:
                self.append_chunk(special_chunk(kind_, nbytes, ts, value=value, **params.stune()))
            return self.nchunks
        blocksize = forced_blocksize(chunksize, ts, params.blocksize, **params.stune())
        marker = SPECIAL_MARKERS[kind_]
        nchunks = full + (1 if left else 0)
        index_bs = forced_blocksize(8 * nchunks, 8, INDEX_BLOCKSIZE)
        index = special_chunk(Special.VALUE, 8 * nchunks, 8, index_bs,
                              value=struct.pack("<q", marker))  # fmt: skip
        put_field(self.fixed, "blocksize", blocksize)
        offsets = np.full(nchunks, marker, dtype="<i8")
        self._commit(offsets, nitems * ts, 0, chunksize, False, index=index)
        return self.nchunks

    @_edit
    def update_special(self, pos: int, kind: Any = "zeros") -> int:
        """Replace chunk ``pos`` with a special chunk of the same size, as python-blosc2's
        ``SChunk.update_special`` does (``kind`` as for :meth:`fill_special`; a repeated value
        is stored as a chunk built with python-blosc2's default cparams).  Returns the number
        of chunks."""
        self._require_writable()
        pos = self._check_index(pos)
        ts = self.header.typesize
        kind_, value = special_value(kind, ts)
        nbytes = self.chunk_nbytes(pos)
        if kind_ == Special.NAN and ts not in (4, 8):
            chunk = synthesized_chunk(kind_, nbytes, ts, 0)
        else:
            chunk = special_chunk(kind_, nbytes, ts, value=value, codec="zstd", splitmode="auto")
        return self.update_chunk(pos, chunk)

    def _offsets_with(self, pos: int, entry: int) -> np.ndarray:
        """The index with ``entry`` inserted at ``pos`` (appends grow a buffer in place)."""
        n = self.offsets.size
        if pos != n:
            return np.insert(self.offsets, pos, entry)
        buf = self._index_buffer
        if buf is None or n >= buf.size or self.offsets.base is not buf:
            buf = np.empty(max(16, 2 * n), dtype="<i8")
            buf[:n] = self.offsets
            self._index_buffer = buf
        buf[n] = entry
        return buf[: n + 1]

    _index_buffer: np.ndarray | None = None

    def _commit(
        self, offsets: np.ndarray, nbytes: int, cbytes: int, chunksize: int, vl_blocks: bool,
        room: int = 0, appended: bool = False, index: bytes | None = None,
    ) -> None:  # fmt: skip
        """Make ``offsets`` and the header values the frame's state and write index, trailer
        and header.  ``room`` as for :func:`encode_index`; ``index`` replaces the encoded
        offsets; ``appended`` says the change is an append (sparse frames may defer it)."""
        if nbytes == 0:
            offsets, cbytes = offsets[:0], 0
        if index is None:
            index = encode_index(offsets, room=room) if offsets.size else b""
        trailer = pack_trailer(self.vlmeta)
        header = bytearray(self._header_bytes(
            frame_len=0, nbytes=nbytes, cbytes=cbytes, chunksize=chunksize, vl_blocks=vl_blocks,
        ))  # fmt: skip
        frame_len = len(header) + self._section_len(cbytes) + len(index) + len(trailer)
        put_field(header, "frame_len", frame_len)
        self._write_image(bytes(header), index, trailer, frame_len)
        self._reparse_header(bytes(header))
        self.offsets = np.ascontiguousarray(offsets, dtype="<i8")

    def _section_len(self, cbytes: int) -> int:
        """Bytes the chunks section takes in the frame image."""
        raise NotImplementedError

    def _write_image(self, header: bytes, index: bytes, trailer: bytes, frame_len: int) -> None:
        """Write header, index and trailer of the new state."""
        raise NotImplementedError

    def _store_new(self, data: memoryview) -> int:
        """Store a new chunk; return its index entry."""
        raise NotImplementedError

    def _place_update(
        self, offsets: np.ndarray, pos: int, old_cbytes: int, data: memoryview | None
    ) -> int:
        """Store ``data`` (None: the new chunk is a marker) in place of chunk ``pos`` (whose
        stored size is ``old_cbytes``, 0 for a marker), adjusting ``offsets``; return the new
        cbytes."""
        raise NotImplementedError

    def _release(self, entry: int) -> None:
        """A stored chunk left the index (sparse frames remove its file)."""

    # --- building the image --------------------------------------------------------------

    def _vl_blocks(self) -> bool:
        return bool(self.header.general_flags & GF_VL_BLOCKS)

    def _header_bytes(
        self, *, frame_len: int, nbytes: int, cbytes: int, chunksize: int, vl_blocks: bool
    ) -> bytes:
        raw = self.fixed
        raw[25] = general_flags(chunksize, vl_blocks)
        raw[68] = 0xC3 if self.vlmeta else 0xC2
        meta = pack_metalayers(self.metalayers)
        put_field(raw, "header_len", HEADER_FIXED_LEN + len(meta))
        put_field(raw, "frame_len", frame_len)
        put_field(raw, "nbytes", nbytes)
        put_field(raw, "cbytes", cbytes)
        put_field(raw, "chunksize", chunksize)
        return bytes(raw) + meta

    def _reparse_header(self, header_bytes: bytes) -> None:
        self.header = FrameHeader.parse(header_bytes, self.name)
        self.fixed = bytearray(self.header.raw)


def special_value(kind: Any, typesize: int) -> tuple[Special, bytes | None]:
    """``kind`` as (special kind, repeated value bytes or None): ``"zeros"``, ``"nan"``,
    ``"uninit"``, or a value repeated in every item, converted like python-blosc2 does
    (bytes of ``typesize`` length, a numpy scalar, or a Python bool/int/float, which becomes
    a ``typesize``-byte integer or float when its default numpy type has another size)."""
    if isinstance(kind, str):
        if kind not in SPECIAL_KINDS:
            raise ArgumentError(
                f"special kind must be one of {', '.join(SPECIAL_KINDS)} or a value, got {kind!r}"
            )
        return SPECIAL_KINDS[kind], None
    if isinstance(kind, (bytes, bytearray, memoryview)):
        raw = bytes(kind)
    else:
        item = np.array([kind])
        if item.dtype.itemsize != typesize:
            if isinstance(kind, (int, np.integer)) and typesize in (1, 2, 4, 8):
                item = np.array([kind], dtype=f"<i{typesize}")
            elif isinstance(kind, (float, np.floating)) and typesize in (2, 4, 8):
                item = np.array([kind], dtype=f"<f{typesize}")
            else:
                raise ArgumentError(
                    f"value {kind!r} has {item.dtype.itemsize} bytes, the frame's typesize is"
                    f" {typesize}"
                )
        raw = item.tobytes()
    if len(raw) != typesize:
        raise ArgumentError(f"value has {len(raw)} bytes, the frame's typesize is {typesize}")
    return Special.VALUE, raw


def check_order(order: Sequence[int], n: int) -> np.ndarray:
    """Validate a permutation of ``range(n)``."""
    perm = np.asarray(order, dtype=np.int64)
    if perm.shape != (n,) or not np.array_equal(np.sort(perm), np.arange(n)):
        raise ArgumentError(f"order must be a permutation of range({n})")
    return perm
