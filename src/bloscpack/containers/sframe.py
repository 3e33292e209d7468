"""Blosc2 sparse frames: a directory holding ``chunks.b2frame`` (a frame with frame type 1
and no chunks section: header, index, trailer) and one ``%08X.chunk`` file per stored chunk.

Index entries are chunk-file ids (or the special markers of contiguous frames).  The id rules
are C-Blosc2's: a new chunk gets the highest id in the index + 1, a deleted chunk's file is
removed, an update rewrites the chunk's own file and a special value frees it.  Chunk files and
``chunks.b2frame`` are written through a temporary file and renamed into place.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..blosc.header import BLOSC2_HEADER_SIZE, ChunkHeader
from ..errors import BloscpackError, FileNotFound, FormatError, TruncatedError
from ..io import PathLike, atomic_write, fsync_directory
from .frame import (
    FRAME_SPARSE,
    HEADER_FIXED_LEN,
    CParams,
    FrameBase,
    FrameWriter,
    check_new_chunk,
    check_order,
    compress_vlmeta,
    encode_index,
    marker_of,
    new_frame_image,
    pack_trailer,
    sniff,
)

INDEX_FILE = "chunks.b2frame"


def chunk_file_name(chunk_id: int) -> str:
    """File name of chunk ``chunk_id`` (uppercase hex, at least 8 digits)."""
    return f"{chunk_id:08X}.chunk"


def sniff_dir(path: PathLike) -> bool:
    """True if ``path`` is a directory holding a sparse frame's ``chunks.b2frame``."""
    index = os.path.join(os.fspath(path), INDEX_FILE)
    if not os.path.isfile(index):
        return False
    with open(index, "rb") as fh:
        head = fh.read(HEADER_FIXED_LEN)
    return sniff(head) and len(head) > 26 and head[26] == FRAME_SPARSE


class SparseFrame(FrameBase):
    """A sparse frame directory, read-only or mutable in place."""

    sparse = True

    def __init__(self, path: PathLike, *, writable: bool = False) -> None:
        self.path = os.fspath(path)
        self.name = self.path
        self.writable = writable
        index_path = os.path.join(self.path, INDEX_FILE)
        if not os.path.isdir(self.path):
            raise FileNotFound(f"{self.path!r} is not a directory (a sparse frame is one)")
        try:
            with open(index_path, "rb") as fh:
                image = fh.read()
        except FileNotFoundError:
            raise FileNotFound(f"{self.path}: no {INDEX_FILE} (not a sparse frame)") from None
        self._load(_reader(image, index_path), len(image), index_path)

    @classmethod
    def create(
        cls, path: PathLike, cparams: CParams, *, chunksize: int | None = None,
        metalayers: Sequence[tuple[str, bytes]] = (), vlmeta: Sequence[tuple[str, bytes]] = (),
        nthreads: int = 1,
    ) -> SparseFrame:  # fmt: skip
        """Create an empty sparse frame directory at ``path`` (replacing what is there) and
        open it for writing.  ``vlmeta`` values are msgpack bytes."""
        path = os.fspath(path)
        vl = [(name, compress_vlmeta(bytes(content))) for name, content in vlmeta]
        image = new_frame_image(FRAME_SPARSE, cparams, chunksize, metalayers, vl, nthreads)
        parent = os.path.dirname(os.path.abspath(path))
        tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=parent)
        try:
            with atomic_write(os.path.join(tmp, INDEX_FILE)) as fh:
                fh.write(image)
            _replace_dir(tmp, path)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return cls(path, writable=True)

    def close(self) -> None:
        """Nothing stays open between operations."""

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
        return os.path.join(self.path, chunk_file_name(chunk_id))

    def _stored_chunk(self, i: int, entry: int) -> bytes:
        path = self.chunk_path(entry)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
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

    # --- mutation ------------------------------------------------------------------------

    def _new_id(self, offsets: np.ndarray) -> int:
        return int(offsets.max()) + 1 if offsets.size and offsets.max() >= 0 else 0

    def _write_chunk_file(self, chunk_id: int, data: Any) -> None:
        with atomic_write(self.chunk_path(chunk_id)) as fh:
            fh.write(data)

    def append_chunk(self, chunk: Any) -> int:
        return self.insert_chunk(self.nchunks, chunk, op="append")

    def insert_chunk(self, pos: int, chunk: Any, op: str = "insert") -> int:
        self._require_writable()
        if not 0 <= pos <= self.nchunks:
            raise IndexError(f"insert position {pos} out of range 0..{self.nchunks}")
        data, header = check_new_chunk(chunk)
        chunksize = self._chunksize_after(op, pos, header.nbytes)
        vl = self._vl_blocks() or (self.nchunks == 0 and header.vl_blocks)
        cbytes = self.header.cbytes
        marker = marker_of(header)
        if marker is None:
            entry = self._new_id(self.offsets)
            self._write_chunk_file(entry, data)
            cbytes += len(data)
        else:
            entry = marker
        offsets = np.insert(self.offsets, pos, entry)
        self._commit(offsets, self.header.nbytes + header.nbytes, cbytes, chunksize, vl)
        return self.nchunks

    def update_chunk(self, pos: int, chunk: Any) -> int:
        self._require_writable()
        pos = self._check_index(pos)
        data, header = check_new_chunk(chunk)
        old = ChunkHeader.parse(self.read_chunk(pos))
        old_cbytes = 0 if old.cbytes == BLOSC2_HEADER_SIZE else old.cbytes
        chunksize = self._chunksize_after("update", pos, header.nbytes)
        offsets = self.offsets.copy()
        old_entry = int(offsets[pos])
        marker = marker_of(header)
        cbytes = self.header.cbytes - old_cbytes
        if marker is None:
            entry = old_entry if old_entry >= 0 else self._new_id(offsets)
            self._write_chunk_file(entry, data)
            offsets[pos] = entry
            cbytes += len(data)
        else:
            offsets[pos] = marker
        self._commit(
            offsets,
            self.header.nbytes - old.nbytes + header.nbytes,
            cbytes,
            chunksize,
            self._vl_blocks(),
        )
        if marker is not None and old_entry >= 0:
            self._remove_chunk_file(old_entry)
        return self.nchunks

    def delete_chunk(self, pos: int) -> int:
        self._require_writable()
        pos = self._check_index(pos)
        old = ChunkHeader.parse(self.read_chunk(pos))
        old_cbytes = 0 if old.cbytes == BLOSC2_HEADER_SIZE else old.cbytes
        old_entry = int(self.offsets[pos])
        offsets = np.delete(self.offsets, pos)
        nbytes, cbytes = self.header.nbytes - old.nbytes, self.header.cbytes - old_cbytes
        self._commit(offsets, nbytes, cbytes, self.header.chunksize, self._vl_blocks(), room=8)
        if old_entry >= 0:
            self._remove_chunk_file(old_entry)
        return self.nchunks

    def reorder(self, order: Sequence[int]) -> None:
        self._require_writable()
        perm = check_order(order, self.nchunks)
        self._commit(
            self.offsets[perm],
            self.header.nbytes,
            self.header.cbytes,
            self.header.chunksize,
            self._vl_blocks(),
        )

    def _remove_chunk_file(self, chunk_id: int) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.chunk_path(chunk_id))
        fsync_directory(self.path)

    def _commit(
        self,
        offsets: np.ndarray,
        nbytes: int,
        cbytes: int,
        chunksize: int,
        vl_blocks: bool,
        room: int = 0,
    ) -> None:
        """Rewrite ``chunks.b2frame`` (through a temporary file) for the new state."""
        if nbytes == 0:
            offsets = offsets[:0]
        index = encode_index(offsets, room=room) if offsets.size else b""
        trailer = pack_trailer(self.vlmeta)
        header = self._header_bytes(
            frame_len=0, nbytes=nbytes, cbytes=cbytes, chunksize=chunksize, vl_blocks=vl_blocks
        )
        frame_len = len(header) + len(index) + len(trailer)
        header = self._header_bytes(
            frame_len=frame_len,
            nbytes=nbytes,
            cbytes=cbytes,
            chunksize=chunksize,
            vl_blocks=vl_blocks,
        )
        with atomic_write(os.path.join(self.path, INDEX_FILE)) as fh:
            fh.write(header + index + trailer)
        self._reparse_header(header)
        self.offsets = np.ascontiguousarray(offsets, dtype="<i8")

    def _write_trailer(self) -> None:
        self._commit(
            self.offsets,
            self.header.nbytes,
            self.header.cbytes,
            self.header.chunksize,
            self._vl_blocks(),
        )

    def _write_metalayers(self, grew: bool) -> None:
        self._write_trailer()


def _reader(image: bytes, name: str) -> Any:
    view = memoryview(image)

    def read(pos: int, n: int, what: str) -> memoryview:
        if pos < 0 or n < 0 or pos + n > len(view):
            raise TruncatedError(
                f"{name}: {what} at offset {pos} needs {n} bytes, the file has {len(view)}"
            )
        return view[pos : pos + n]

    return read


def _replace_dir(new: str, path: str) -> None:
    """Move directory ``new`` to ``path``, replacing a sparse frame (or empty directory) there."""
    if os.path.lexists(path):
        if not os.path.isdir(path):
            raise FileExistsError(f"{path!r} exists and is not a directory")
        if os.listdir(path) and not sniff_dir(path):
            raise FileExistsError(
                f"{path!r} is a non-empty directory that is not a sparse frame; not replacing it"
            )
        old = tempfile.mkdtemp(
            prefix=f".{os.path.basename(path)}.",
            suffix=".old",
            dir=os.path.dirname(os.path.abspath(path)),
        )
        os.rmdir(old)
        os.rename(path, old)
        os.rename(new, path)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(new, path)
    fsync_directory(os.path.dirname(os.path.abspath(path)))


def info(path: PathLike) -> dict[str, Any]:
    """JSON-able description of the sparse frame at ``path`` (header, metalayers,
    vlmetalayers, index = chunk-file ids)."""
    return SparseFrame(path).info()


def verify(path: PathLike) -> dict[str, Any]:
    """Decode every chunk of the sparse frame at ``path``; ``{"format": "sframe", "ok", ...}``."""
    try:
        frame = SparseFrame(path)
    except BloscpackError as exc:
        return {
            "format": "sframe",
            "ok": False,
            "nchunks": 0,
            "bad_chunks": [],
            "problems": [str(exc)],
        }
    report = frame.verify()
    stored = {int(x) for x in frame.offsets if x >= 0}
    total = 0
    for chunk_id in stored:
        with contextlib.suppress(OSError):
            total += os.path.getsize(frame.chunk_path(chunk_id))
    if not report["bad_chunks"] and total != frame.header.cbytes:
        report["problems"].append(
            f"chunk files hold {total} bytes, the header says cbytes {frame.header.cbytes}"
        )
        report["ok"] = False
    return {"format": "sframe", **report}


__all__ = ["SparseFrame", "chunk_file_name", "info", "sniff_dir", "verify"]
