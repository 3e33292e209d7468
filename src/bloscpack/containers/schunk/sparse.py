"""Blosc2 sparse frames: a directory holding ``chunks.b2frame`` (a frame with frame type 1
and no chunks section: header, index, trailer) and one ``%08X.chunk`` file per stored chunk.

Index entries are chunk-file ids (or the special markers of contiguous frames).  The id rules
are C-Blosc2's: a new chunk gets the highest id in the index + 1, a deleted chunk's file is
removed, an update rewrites the chunk's own file and a special value frees it.  Chunk files and
``chunks.b2frame`` are written through a temporary file and renamed into place.

The storage of every format held in sparse frames: the ``sframe`` format
(:mod:`bloscpack.containers.sframe`), sparse b2nd arrays and :class:`bloscpack.Frame`.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import IO, Any

import numpy as np

from ...blosc import partial
from ...blosc.header import BLOSC2_HEADER_SIZE, ChunkHeader
from ...blosc.layout import check_header
from ...errors import (
    BloscpackError,
    FileChangedError,
    FileNotFound,
    FormatError,
    TruncatedError,
    UnsupportedError,
)
from ...io.durability import fsync_directory, fsync_files, start_writeback
from ...io.locks import FileLock
from ...io.paths import PathLike
from ...io.sources import Directory, file_identity, member_size, open_member
from ...io.staging import StagedOutput, atomic_write, staged_output
from ...journal import Steps
from ..base import WriterBase
from .core import EDGE_READ, decode_checked
from .edit import FrameBase
from .features import refuse_unmodelled
from .params import CParams, compress_vlmeta, new_frame_image
from .reader import unopened_report
from .records import (
    FRAME_SPARSE,
    HEADER_FIXED_LEN,
    INDEX_FILE,
    PUBLISHED_LAST,
    FrameHeader,
    general_flags,
    marker_of,
    sniff_sparse,
)
from .writer import FrameLayout, FrameSettings, FrameTarget, FrameWriter, OnePassWriter

#: The name of a chunk file.
_CHUNK_FILE = re.compile(r"[0-9A-F]{8,}\.chunk")


def chunk_file_name(chunk_id: int) -> str:
    """File name of chunk ``chunk_id`` (uppercase hex, at least 8 digits)."""
    return f"{chunk_id:08X}.chunk"


def sniff_dir(path: PathLike) -> bool:
    """True if ``path`` is a directory holding a sparse frame's ``chunks.b2frame``."""
    index = os.path.join(os.fspath(path), INDEX_FILE)
    return os.path.isfile(index) and sniff_index_file(index)


def sniff_index_file(path: PathLike) -> bool:
    """True if the file at ``path`` starts like a sparse frame's ``chunks.b2frame``."""
    with open(path, "rb") as fh:
        return sniff_sparse(fh.read(HEADER_FIXED_LEN))


class SparseFrame(FrameBase):
    """A sparse frame directory, read-only or mutable in place.

    With ``defer_appends`` (frames made by :meth:`create`), appended chunks are written to
    their files at once but ``chunks.b2frame`` only by :meth:`flush`, :meth:`close` or the
    next other change, so N appends do not rewrite it N times.
    """

    sparse = True

    def __init__(self, path: PathLike | Directory, *, writable: bool = False,
                 defer_appends: bool = False) -> None:  # fmt: skip
        #: A remote directory (a prefix at a URL), read-only; None for a local one.
        self.remote = path if isinstance(path, Directory) and path.remote else None
        if self.remote is not None:
            self._open_remote(self.remote, writable)
            return
        self.path = os.fspath(path)  # type: ignore[arg-type]
        self.name = self.path
        self.writable = writable
        self.defer_appends = defer_appends and writable
        self._pending = False  # appends not yet in chunks.b2frame
        # chunk files written without fsync since the last index write
        self._unsynced: list[str] = []
        self._id_next: int | None = None  # cached id of the next new chunk file
        self._index_path = os.path.join(self.path, INDEX_FILE)
        try:
            flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
            self._dir_fd: int | None = os.open(self.path, flags)
        except (FileNotFoundError, NotADirectoryError):
            message = f"{self.path!r} is not a directory (a sparse frame is one)"
            raise FileNotFound(message) from None
        # Edits hold the directory's lock exclusively, reads share it (see FrameBase.exclusive).
        self._lock = FileLock(self._dir_fd, exclusive=writable)
        try:
            with self._lock.held():
                image, size = self._read_index()
                self._load(_reader(image, self._index_path), size, self._index_path)
        except BaseException:
            self._release_dir()
            raise

    def _open_remote(self, directory: Directory, writable: bool) -> None:
        """Open the sparse frame at a URL: its ``chunks.b2frame``, one request."""
        if writable:
            raise UnsupportedError(f"{directory.name}: a sparse frame at a URL is read-only")
        self.path = self.name = directory.name
        self.writable = self.defer_appends = self._pending = False
        self._unsynced = []
        self._id_next, self._dir_fd = None, None
        self._index_path = directory.join(INDEX_FILE)
        image, size = self._read_index()
        self._load(_reader(image, self._index_path), size, self._index_path)

    def _read_index(self) -> tuple[bytes, int]:
        """The bytes of ``chunks.b2frame`` (locally: as many as its header's ``frame_len``
        says, whatever the file's size) and the file's size, and the identity of the file
        they were read from."""
        if self.remote is not None:
            try:
                image = self.remote.read_bytes(INDEX_FILE)
            except FileNotFoundError:
                raise FileNotFound(f"{self.path}: no {INDEX_FILE} (not a sparse frame)") from None
            return image, len(image)
        try:
            fd = open_member(self._index_path, self.path)
        except FileNotFoundError:
            raise FileNotFound(f"{self.path}: no {INDEX_FILE} (not a sparse frame)") from None
        try:
            status = os.fstat(fd)
            self._identity = file_identity(status)
            head = os.pread(fd, EDGE_READ, 0)  # what opening the frame reads first
            try:
                frame_len = FrameHeader.parse(head, self._index_path).frame_len
            except BloscpackError:  # opening the frame says what is wrong
                return head, status.st_size
            if frame_len > status.st_size:  # so does this
                return head, status.st_size
            more = os.pread(fd, max(frame_len - len(head), 0), len(head))
            image = (head + more)[:frame_len]
            return image, len(image)
        finally:
            os.close(fd)

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        """A read block: edits by this library wait for it, and a frame changed since it was
        opened (``chunks.b2frame`` replaced) raises ``FileChangedError``."""
        if self.writable or self.remote is not None:  # the editor itself, or a URL
            return contextlib.nullcontext()
        return _ReadBlock(self)

    def _check_identity(self) -> None:
        try:
            identity = file_identity(os.stat(self._index_path))
        except FileNotFoundError:
            identity = None
        if identity != self._identity:
            raise FileChangedError.since_opened(self.path)

    def exclusive(self) -> contextlib.AbstractContextManager[None]:
        return self._lock.held() if self.writable else contextlib.nullcontext()

    def _release_dir(self) -> None:
        """Close the directory (and so release its lock)."""
        fd, self._dir_fd = getattr(self, "_dir_fd", None), None
        if fd is not None:
            self._lock.close(lambda: os.close(fd))

    def __del__(self) -> None:
        try:  # noqa: SIM105 (contextlib may be gone at interpreter exit)
            self._release_dir()
        except Exception:  # noqa: S110
            pass

    @classmethod
    def create(
        cls, path: PathLike, cparams: CParams, *, chunksize: int | None = None,
        metalayers: Sequence[tuple[str, bytes]] = (), vlmeta: Sequence[tuple[str, bytes]] = (),
        nthreads: int = 1, vlmeta_chunks: Sequence[tuple[str, bytes]] = (),
    ) -> SparseFrame:  # fmt: skip
        """Create an empty sparse frame directory at ``path`` (replacing what is there) and
        open it for writing, with deferred appends.  ``vlmeta`` values are msgpack bytes,
        ``vlmeta_chunks`` values stored (compressed) chunks."""
        path = os.fspath(path)
        with staged_output(path, replaces=sniff_dir, what=SPARSE_FRAME) as new:
            _new_frame_dir(new, cparams, chunksize, metalayers, vlmeta, nthreads, vlmeta_chunks)
        return cls(path, writable=True, defer_appends=True)

    def flush(self) -> None:
        """Write ``chunks.b2frame`` if appends are pending."""
        if self._pending:
            h = self.header
            with self.exclusive():
                self._commit(self.offsets, h.nbytes, h.cbytes, h.chunksize, self._vl_blocks())

    def close(self) -> None:
        """Write pending appends and release the directory."""
        try:
            self.flush()
        finally:
            self._release_dir()

    def info(self) -> dict[str, Any]:
        self.flush()
        return super().info()

    def to_bytes(self) -> bytes:
        """The same data as one contiguous frame (chunks appended in order)."""
        writer = FrameWriter(
            None, self.cparams, chunksize=self.header.chunksize if self.nchunks else None,
            metalayers=self.metalayers, vlmeta_chunks=self.vlmeta,
            nthreads=self.header.nthreads_comp,
        )  # fmt: skip
        for i in range(self.nchunks):
            writer.append_chunk(self.read_chunk(i))
        data = writer.close()
        assert data is not None
        return data

    def chunk_path(self, chunk_id: int) -> str:
        if self.remote is not None:
            return self.remote.join(chunk_file_name(chunk_id))
        return os.path.join(self.path, chunk_file_name(chunk_id))

    @property
    def at_url(self) -> bool:
        return self.remote is not None

    @property
    def ranged(self) -> bool:  # type: ignore[override]
        """At a URL, with chunks large enough to read some blocks alone."""
        chunksize = self.header.chunksize
        return self.remote is not None and not 0 < chunksize <= partial.MIN_PARTIAL_CBYTES

    def chunk_size(self, chunk_id: int) -> int:
        """Bytes in the file of chunk ``chunk_id``."""
        if self.remote is not None:
            return self.remote.size(chunk_file_name(chunk_id))
        return member_size(self.chunk_path(chunk_id), self.path)

    def prefetch(self, indices: Sequence[int]) -> None:
        """Hint that chunks ``indices`` are read next: a remote frame fetches their files at
        once."""
        if self.remote is not None:
            entries = (int(self.offsets[i]) for i in indices if 0 <= i < self.nchunks)
            self.remote.prefetch([chunk_file_name(e) for e in entries if e >= 0])

    def read_chunk_items(self, i: int, lo: int, hi: int) -> memoryview | bytes:
        """From a large chunk file only its header and bstarts, then the blocks that bytes
        ``[lo, hi)`` touch (at a URL: two requests, two rounds); else the whole chunk."""
        remote, chunksize = self.remote, self.header.chunksize
        if 0 < chunksize <= partial.MIN_PARTIAL_CBYTES or (hi - lo) * 2 > chunksize:
            return self.read_chunk(i)  # most of a chunk is read whole
        entry = self._entry(self._check_index(i))
        if entry < 0:
            return self.read_chunk(i)
        part = None
        if remote is None:
            part = self._local_chunk_part(
                i, entry, lambda read_into, head: partial.read_chunk_items(read_into, head, lo, hi)
            )
        elif not remote.holds(chunk_file_name(entry)):
            try:
                with remote.source(chunk_file_name(entry), head=partial.CHUNK_HEAD_READ) as src:
                    part = partial.source_chunk_items(src, 0, src.size(), lo, hi, f"chunk {i}")
            except BloscpackError:
                pass  # missing or damaged: reading the whole chunk says how
        return self.read_chunk(i) if part is None else part

    def decode_chunk_items(self, i: int, lo: int, hi: int, nbytes: int, dest: np.ndarray) -> bool:
        """:meth:`FrameCore.decode_chunk_items` of a chunk file of a local frame: of a large
        one, its header, bstarts and the blocks that bytes ``[lo, hi)`` touch, read by offset;
        a small one read whole."""
        if self.remote is not None or not 0 <= i < self.nchunks:
            return False
        entry = self._entry(i)
        if entry < 0:
            return False

        def read(read_into: partial.ReadInto, head: bytes) -> Any:
            return partial.checked_chunk_items(read_into, head, lo, hi, nbytes)

        got = self._local_chunk_part(i, entry, read)
        if got is not None:
            return decode_checked(got[0], got[1], lo, hi, dest, checked=True)
        chunk = self.read_chunk(i)  # a small chunk file, read whole (or one to report)
        try:
            header = check_header(chunk)
        except BloscpackError:
            return False
        if header.nbytes != nbytes or not header.blocks_alone:
            return False
        return decode_checked(chunk, header, lo, hi, dest)

    def read_chunk_blocks(self, i: int, runs: Sequence[tuple[int, int]]) -> memoryview | None:
        if self.remote is not None:
            return None
        entry = self._entry(self._check_index(i))
        if entry < 0:
            return None
        return self._local_chunk_part(
            i, entry, lambda read_into, head: partial.read_chunk_blocks(read_into, head, runs)
        )

    def _local_chunk_part(self, i: int, entry: int, read: Callable[[partial.ReadInto, bytes], Any]
                          ) -> Any:  # fmt: skip
        """``read(read_into, head)`` (a :mod:`bloscpack.blosc.partial` reader) of the file of
        chunk ``i``, by positioned reads, or None (read it whole then: that reports what is
        wrong)."""
        path = self.chunk_path(entry)
        with self.consistent():
            try:
                fd = open_member(path, self.path)
            except (BloscpackError, OSError):
                return None
            try:
                head = os.pread(fd, partial.CHUNK_HEAD_READ, 0)

                def read_into(pos: int, dest: memoryview, what: str) -> None:
                    if os.preadv(fd, [dest], pos) != dest.nbytes:
                        raise TruncatedError(f"{path}: chunk {i} {what}: the file ends first")

                return read(read_into, head)
            except BloscpackError:
                return None
            finally:
                os.close(fd)

    def _read_chunk_file(self, entry: int) -> bytes:
        if self.remote is not None:
            return self.remote.read_bytes(chunk_file_name(entry))
        path = self.chunk_path(entry)
        with self.consistent(), os.fdopen(open_member(path, self.path), "rb") as fh:
            head = fh.read(BLOSC2_HEADER_SIZE)  # then as much as it says, if the file has it
            if len(head) < BLOSC2_HEADER_SIZE:
                return head
            cbytes = ChunkHeader.parse(head).cbytes
            size = os.fstat(fh.fileno()).st_size
            more = _read_claimed(fh, min(cbytes, size) - len(head), path,
                                 f"chunk header says cbytes {cbytes}")  # fmt: skip
            return head + more

    def _stored_chunk(self, i: int, entry: int) -> bytes:
        path = self.chunk_path(entry)
        try:
            data = self._read_chunk_file(entry)
        except FileNotFoundError:
            raise FileNotFound(
                f"{self.path}: chunk {i} is stored in {chunk_file_name(entry)}, which is missing"
            ) from None
        if len(data) < BLOSC2_HEADER_SIZE:
            raise TruncatedError(f"{path}: {len(data)} bytes, too short for chunk {i}")
        cbytes = ChunkHeader.parse(data).cbytes
        if not BLOSC2_HEADER_SIZE <= cbytes <= len(data):
            raise FormatError(
                f"{path}: chunk {i} header says cbytes {cbytes}, the file has {len(data)} bytes"
            )
        return data[:cbytes] if cbytes < len(data) else data

    def stored_span(self, i: int, entry: int) -> tuple[str, int, ChunkHeader]:
        chunk = self._stored_chunk(i, entry)
        return self.chunk_path(entry), 0, ChunkHeader.parse(chunk)

    # --- mutation (C-Blosc2's id rules; the index rules are in FrameBase) ---------------------

    def _section_len(self, cbytes: int) -> int:
        return 0  # chunks live in their own files

    def _next_id(self) -> int:
        """Id of a new chunk file: the highest id in the index + 1."""
        if self._id_next is None:
            ids = self.offsets[self.offsets >= 0]
            self._id_next = int(ids.max()) + 1 if ids.size else 0
        return self._id_next

    def _store_new(self, data: memoryview) -> int:
        chunk_id = self._next_id()
        if self.defer_appends:
            # Not referenced by chunks.b2frame before the next index write, which syncs it.
            path = self.chunk_path(chunk_id)
            try:
                with open(path, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    start_writeback(fh.fileno())  # the disk works while chunks are made
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(path)
                raise
            self._unsynced.append(path)
        else:
            self._write_chunk_file(chunk_id, data)
        self._id_next = chunk_id + 1
        return chunk_id

    def append_stored(self, head: bytes, name: str | None) -> None:
        """Append the chunk whose header is ``head`` and whose file a task wrote as ``name``
        in the directory (renamed to the chunk's id here); ``name`` None: a special chunk,
        stored as its index marker."""

        def adopt() -> int:
            assert name is not None
            chunk_id = self._next_id()
            path = self.chunk_path(chunk_id)
            os.replace(os.path.join(self.path, name), path)
            self._id_next = chunk_id + 1
            self._unsynced.append(path)
            return chunk_id

        with self.exclusive():
            self._insert(self.nchunks, ChunkHeader.parse(head), adopt, "append")

    def _place_update(
        self, offsets: np.ndarray, pos: int, old_cbytes: int, data: memoryview | None
    ) -> int:
        """An update rewrites the chunk's own file (a marker before gets a new id)."""
        cbytes = self.header.cbytes - old_cbytes
        if data is not None:
            old_entry = int(offsets[pos])
            chunk_id = old_entry if old_entry >= 0 else self._next_id()
            self._write_chunk_file(chunk_id, data)
            offsets[pos] = chunk_id
            cbytes += len(data)
        return cbytes

    def refresh(self) -> None:
        image, size = self._read_index()
        self._load(_reader(image, self._index_path), size, self._index_path)
        self._id_next = None
        self._index_buffer = None

    def _grow(self, first: int, new: Iterable[tuple[memoryview, ChunkHeader]],
              commit: Callable[[np.ndarray, list[int], int], None],
              steps: Steps) -> None:  # fmt: skip
        """New chunks go to files of new ids, then ``chunks.b2frame`` is replaced (the step
        that makes the change), then the files of the chunks replaced are removed: an
        interruption leaves the frame as it was or as it became, and stray chunk files (of
        an interrupted change) are removed first."""
        self._remove_strays()
        dropped = [int(e) for e in self.offsets[first:] if e >= 0]
        cbytes = self.header.cbytes - sum(
            ChunkHeader.parse(self.read_chunk(i)[:BLOSC2_HEADER_SIZE]).cbytes
            for i in range(first, self.nchunks) if self.offsets[i] >= 0
        )  # fmt: skip
        entries: list[int] = []
        sizes: list[int] = []
        try:
            for data, header in new:
                entry = marker_of(header)
                if entry is None:
                    entry = self._next_id()
                    self._write_chunk_file(entry, data)
                    self._id_next = entry + 1
                    cbytes += header.cbytes
                    steps.done()
                entries.append(entry)
                sizes.append(header.nbytes)
            offsets = np.concatenate([self.offsets[:first], np.asarray(entries, dtype="<i8")])
            commit(offsets, sizes, cbytes)
        except BaseException:
            for entry in entries:
                if entry >= 0:
                    with contextlib.suppress(OSError):
                        os.unlink(self.chunk_path(entry))
            self.refresh()
            raise
        steps.done()
        for entry in dropped:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.chunk_path(entry))
        fsync_directory(self.path)
        steps.done()

    def _remove_strays(self) -> None:
        """Remove the chunk files no index entry names (left by an interrupted change)."""
        used = {chunk_file_name(int(e)) for e in self.offsets if e >= 0}
        strays = [name for name in os.listdir(self.path)
                  if _CHUNK_FILE.fullmatch(name) and name not in used]  # fmt: skip
        for name in strays:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.path, name))
        if strays:
            fsync_directory(self.path)

    def _write_chunk_file(self, chunk_id: int, data: Any) -> None:
        with atomic_write(self.chunk_path(chunk_id)) as fh:
            fh.write(data)

    def _release(self, entry: int) -> None:
        path = self.chunk_path(entry)
        if path in self._unsynced:
            self._unsynced.remove(path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        fsync_directory(self.path)

    def _commit(
        self, offsets: np.ndarray, nbytes: int, cbytes: int, chunksize: int, vl_blocks: bool,
        room: int = 0, appended: bool = False, index: bytes | None = None,
    ) -> None:  # fmt: skip
        if appended and self.defer_appends:
            self.offsets = offsets
            self.header = replace(
                self.header, nbytes=nbytes, cbytes=cbytes, chunksize=chunksize,
                general_flags=general_flags(chunksize, vl_blocks),
            )  # fmt: skip
            self._pending = True
            return
        super()._commit(offsets, nbytes, cbytes, chunksize, vl_blocks, room=room, index=index)
        self._pending = False
        self._id_next = None

    def _write_image(self, header: bytes, index: bytes, trailer: bytes, frame_len: int) -> None:
        """Rewrite ``chunks.b2frame`` through a temporary file (chunk files first on disk)."""
        if self._unsynced:
            fsync_files(self._unsynced)
            fsync_directory(self.path)
            self._unsynced = []
        with atomic_write(os.path.join(self.path, INDEX_FILE)) as fh:
            fh.write(header + index + trailer)

    def _write_metalayers(self, grew: bool) -> None:
        self._write_trailer()


#: What the writers of sparse frames replace, for messages.
SPARSE_FRAME = "a sparse frame"


class SparseFrameWriter(OnePassWriter):
    """Write a new sparse frame in one pass: chunk files go to a directory staged next to
    ``path`` (:func:`~bloscpack.io.staging.staged_output`) and :meth:`close` writes
    ``chunks.b2frame`` once and renames the directory into place (replacing a sparse frame or empty
    directory there).  A failed write leaves nothing behind.  Same files as appending the chunks one
    by one with C-Blosc2."""

    def __init__(
        self, path: PathLike, cparams: CParams, *, chunksize: int | None = None,
        metalayers: Sequence[tuple[str, bytes]] = (), vlmeta: Sequence[tuple[str, bytes]] = (),
        nthreads: int = 1, vlmeta_chunks: Sequence[tuple[str, bytes]] = (),
    ) -> None:  # fmt: skip
        self.path = os.fspath(path)
        self.cparams = cparams
        self._staged = StagedOutput(self.path, replaces=sniff_dir, what=SPARSE_FRAME)
        self._closed = False
        try:
            self._tmp = self._staged.open()
            _new_frame_dir(self._tmp, cparams, chunksize, metalayers, vlmeta, nthreads,
                           vlmeta_chunks)  # fmt: skip
            self.frame = SparseFrame(self._tmp, writable=True, defer_appends=True)
        except BaseException:
            self.abort()
            raise

    @property
    def nchunks(self) -> int:
        return self.frame.nchunks

    def append_chunk(self, chunk: Any) -> int:
        """Append a compressed Blosc2 chunk; returns the number of chunks."""
        return self.frame.append_chunk(chunk)

    def close(self) -> None:
        """Finish the frame and move it to ``path``."""
        if self._closed:
            return
        try:
            self.frame.close()
            self._staged.commit()
        except BaseException:
            self.abort()
            raise
        self._closed = True

    def abort(self) -> None:
        """Discard the frame being written."""
        if not self._closed:
            self._closed = True
            if hasattr(self, "frame"):
                self.frame._release_dir()
            self._staged.abort()


class SparseLayout(FrameLayout):
    """A sparse frame's chunks of an array: those of a contiguous frame, each stored in a
    file of its own by whoever compresses it."""

    def store_chunk(self, directory: str, index: int, data: Any) -> tuple[bytes, str | None]:
        """Compress chunk ``index`` into a file of ``directory`` (:func:`store_chunk`)."""
        chunk = self.cparams.compress_view(np.ascontiguousarray(data).view(np.uint8))
        return store_chunk(directory, index, chunk)


def store_chunk(directory: str, index: int, chunk: Any) -> tuple[bytes, str | None]:
    """Store the compressed chunk ``index`` in a file of ``directory`` named after the index
    (its id is given on :meth:`SparseFrame.append_stored`); returns its header and the file
    name (None for a special chunk, which has no file)."""
    header = ChunkHeader.parse(chunk)
    if marker_of(header) is not None:
        return bytes(chunk[:BLOSC2_HEADER_SIZE]), None
    name = f"{index:08X}.part"
    with open(os.path.join(directory, name), "xb") as fh:
        fh.write(memoryview(chunk)[: header.cbytes])
        fh.flush()
        start_writeback(fh.fileno())  # the commit's sync finds it (mostly) on disk
    return bytes(chunk[:BLOSC2_HEADER_SIZE]), name


class SparseArrayWriter(WriterBase):
    """A new sparse frame of an array (:func:`open_writer`): ``layout`` compresses and stores
    its chunks (``store_chunk``), after the ``metalayers``."""

    def __init__(self, output: StagedOutput, layout: Any, settings: FrameSettings,
                 vlmeta: list[tuple[str, bytes]],
                 metalayers: Sequence[tuple[str, bytes]] = ()) -> None:  # fmt: skip
        super().__init__(output)
        self.layout = layout
        self.directory = output.path
        self.frame = new_sparse_frame(self.directory, settings, metalayers, vlmeta)

    def append_chunk(self, chunk: Any) -> None:
        self.frame.append_chunk(chunk)

    def append_stored(self, index: int, stored: Any) -> None:
        self.frame.append_stored(*stored)

    def _finish(self) -> None:
        self.frame.close()

    def _discard(self) -> None:
        self.frame._release_dir()


def _new_frame_dir(
    path: str, cparams: CParams, chunksize: int | None, metalayers: Sequence[tuple[str, bytes]],
    vlmeta: Sequence[tuple[str, bytes]], nthreads: int, vlmeta_chunks: Sequence[tuple[str, bytes]],
) -> None:  # fmt: skip
    """Make ``path`` a new directory holding an empty sparse frame."""
    vl = [(name, compress_vlmeta(bytes(content))) for name, content in vlmeta]
    vl += [(name, bytes(chunk)) for name, chunk in vlmeta_chunks]
    image = new_frame_image(FRAME_SPARSE, cparams, chunksize, metalayers, vl, nthreads)
    os.mkdir(path)
    with atomic_write(os.path.join(path, INDEX_FILE)) as fh:
        fh.write(image)


class _ReadBlock:
    """:meth:`SparseFrame.consistent` of a local frame open for reading: the directory's lock
    held, ``chunks.b2frame`` checked to be the one opened."""

    __slots__ = ("_frame",)

    def __init__(self, frame: SparseFrame) -> None:
        self._frame = frame

    def __enter__(self) -> None:
        lock = self._frame._lock
        if not lock.enter():
            return  # inside a block of another (or this) thread, which checked the frame
        try:
            self._frame._check_identity()
        except BaseException:
            lock.__exit__(None, None, None)
            raise

    def __exit__(self, *exc: object) -> None:
        self._frame._lock.__exit__(*exc)


def _read_claimed(fh: IO[bytes], n: int, path: str, claim: str) -> bytes:
    """The next ``n`` bytes of the file ``fh`` (fewer at its end), which ``claim`` (a header
    field, for the message) announces: a :class:`FormatError` where they cannot be allocated."""
    try:
        return fh.read(max(n, 0))
    except (MemoryError, OverflowError):
        raise FormatError(f"{path}: {claim}, too many bytes to allocate") from None


def _reader(image: bytes, name: str) -> Any:
    view = memoryview(image)

    def read(pos: int, n: int, what: str) -> memoryview:
        if pos < 0 or n < 0 or pos + n > len(view):
            raise TruncatedError(
                f"{name}: {what} at offset {pos} needs {n} bytes, the file has {len(view)}"
            )
        return view[pos : pos + n]

    return read


def verify(path: PathLike | Directory) -> dict[str, Any]:
    """Decode every chunk of the sparse frame at ``path``; ``{"format": "sframe", "ok", ...}``."""
    try:
        frame = SparseFrame(path)
    except BloscpackError as exc:
        return unopened_report("sframe", exc)
    with contextlib.closing(frame), frame.consistent():
        try:
            refuse_unmodelled(frame)
        except BloscpackError as exc:
            return unopened_report("sframe", exc)
        report = frame.verify()
        stored = {int(x) for x in frame.offsets if x >= 0}
        total = 0
        for chunk_id in stored:
            with contextlib.suppress(OSError, BloscpackError):  # a bad chunk, reported
                total += frame.chunk_size(chunk_id)
    if not report["bad_chunks"] and total != frame.header.cbytes:
        report["problems"].append(
            f"chunk files hold {total} bytes, the header says cbytes {frame.header.cbytes}"
        )
        report["ok"] = False
    return {"format": "sframe", **report}


def new_sparse_frame(path: str, settings: FrameSettings, metalayers: Sequence[tuple[str, bytes]],
                     vlmeta: Sequence[tuple[str, bytes]]) -> SparseFrame:  # fmt: skip
    """The one writer of a new sparse frame of flat chunks at ``path`` (a new private
    directory), open for writing with deferred appends."""
    _new_frame_dir(path, settings.cparams, None, metalayers, vlmeta, settings.header_nthreads(), ())
    return SparseFrame(path, writable=True, defer_appends=True)


class SparseFrameTarget(FrameTarget):
    """A sparse frame (a directory) of flat chunks, as :class:`FrameTarget` writes them."""

    fmt = "sframe"

    @contextlib.contextmanager
    def writer(self, path: str) -> Iterator[Callable[[Any], Any]]:
        """A function appending one chunk to the new sparse frame at ``path``."""
        frame = new_sparse_frame(path, self.settings, self.layers, self.vlmeta)
        yield frame.append_chunk
        frame.close()


__all__ = [
    "INDEX_FILE", "PUBLISHED_LAST", "SPARSE_FRAME", "SparseArrayWriter", "SparseFrame",
    "SparseFrameTarget", "SparseFrameWriter", "SparseLayout", "chunk_file_name", "sniff_dir",
    "sniff_index_file", "verify",
]  # fmt: skip
