"""Appending data to a ``.blp`` file in place, crash-safely.

:func:`append` and :func:`append_fp` keep bloscpack 0.16's signatures and behaviour (the last
chunk is topped up to the chunk size, then new chunks follow; offsets and header are updated),
and fix its gaps: files without an offsets section can be appended to, the old last chunk's
checksum is verified before anything is written, the file's own typesize is the default, bytes
no longer needed are truncated, and the metadata can be replaced in the same step.

Crash safety comes from a rollback journal beside the file (``<file>.journal``).  Before the
file is touched, the journal records the file's length and the original bytes of every region
the append overwrites; it is written to a temporary name, fsynced and renamed into place.  The
file is then changed and fsynced, and only then the journal is removed.  :func:`recover` (called
by readers when they open a file, and by every append) puts the recorded bytes back and truncates
the file to its old length if a journal is left over: whenever the process dies, the next open
sees the file either exactly as before the append or completely appended.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
from collections.abc import Mapping
from typing import IO, Any

import numpy as np

from ... import ndarray as nd
from ...blosc.header import ChunkHeader
from ...errors import (
    ArgumentError,
    BloscpackError,
    FormatError,
    NotAContainer,
    NotEnoughSpace,
    TruncatedError,
    UnsupportedError,
)
from ...io.copies import sized_input
from ...io.paths import PathLike, is_stream
from ...io.sources import FileObjectSource
from ...journal import (
    JOURNAL_SUFFIX,
    KILL_AFTER_ENV,
    Steps,
    journal_path,
    locked,
    needs_recovery,
    recover,
    remove_journal,
    roll_back,
    write_journal,
)
from ...url import local_output
from .args import (
    DEFAULT_CHUNK_SIZE,
    DEFAULT_CLEVEL,
    DEFAULT_CNAME,
    DEFAULT_SHUFFLE,
    BloscArgs,
    calculate_nchunks,
)
from .checksums import Hash
from .header import BLOSCPACK_HEADER_LENGTH, MAGIC
from .preamble import encode_metadata_section, encode_offsets
from .reader import CHUNK_HEADER_PEEK, BloscpackReader, reading
from .writer import add_order_record, check_blosc_args, compress_chunk

# --- append -------------------------------------------------------------------------------


class _Existing:
    """What an append needs to know about an existing ``.blp`` file, as the format's reader
    finds it (:class:`~.reader.BloscpackReader`, with its checks and messages): the preamble,
    every chunk's location and size, the last chunk decoded (digest verified) and the
    metadata."""

    def __init__(self, fp: IO[bytes], name: str) -> None:
        fp.seek(0)
        _check_magic(fp.read(len(MAGIC)), name)
        fp.seek(0)
        source = FileObjectSource(fp, name)  # positioned reads: the file is locked for writing
        with contextlib.closing(source), BloscpackReader(source) as reader:
            self.name, self.size = name, reader.size
            self.header = header = reader.header
            if header.nchunks < 1:
                raise UnsupportedError(
                    f"{name}: cannot append to a file with an unknown number of chunks"
                    f" ({header.nchunks})"
                )
            self.checksum: Hash = reader.checksum
            self.metadata_header = reader.metadata_header
            self.metadata_pos = reader.metadata_offset or BLOSCPACK_HEADER_LENGTH
            self.metadata = reader.metadata
            self.offsets_pos = reader.offsets_offset
            reader.check_sizes()
            last = reader.locate(header.nchunks - 1)
            self.last_pos, self.last_end = last.offset, last.end
            self.last_header = ChunkHeader.parse(reader.source.peek(last.offset, CHUNK_HEADER_PEEK))
            self.last_data = bytearray(last.nbytes)
            reader.decompress_chunk_into(last.index, self.last_data)


def _check_magic(head: bytes, name: str) -> None:
    """Refuse a file that is no ``.blp`` file (``head``: its first bytes), saying what appends
    to the other formats."""
    if head[:4] != MAGIC:
        raise NotAContainer(
            f"{name}: not a .blp file (the magic marker {MAGIC!r} is missing), which this append"
            " of bloscpack 0.16's takes; bloscpack.append(path, data) appends to every format"
            " that grows"
        )


def _has_fileno(fp: IO[bytes]) -> bool:
    try:
        fp.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


def _read_exactly(fp: IO[bytes], offset: int, n: int, size: int, name: str, what: str) -> bytes:
    if offset < 0 or n < 0 or offset + n > size:
        raise TruncatedError(
            f"{name}: {what} at offset {offset} needs {n} bytes, the file has {size}"
        )
    fp.seek(offset)
    data = fp.read(n)
    if len(data) != n:
        raise TruncatedError(f"{name}: {what} at offset {offset} needs {n} bytes, read {len(data)}")
    return data


def _resolve_blosc_args(
    blosc_args: Mapping[str, Any] | None, layout: _Existing, last: ChunkHeader
) -> BloscArgs:
    """0.16's rule: unset arguments are the file's typesize, clevel 7, shuffle, blosclz.  A file
    of Blosc2 chunks gets Blosc2 chunks (with the last chunk's filters unless told otherwise)."""
    given = {k: v for k, v in dict(blosc_args or {}).items() if v is not None}
    version = given.get("blosc_version") or last.blosc_version
    extra: dict[str, Any] = {}
    if version == 2:
        extra = {
            k: given[k] for k in ("filters", "filters_meta", "use_dict", "blocksize") if k in given
        }
        if "filters" not in extra and "shuffle" not in given:
            extra["filters"], extra["filters_meta"] = list(last.pipeline), list(last.filters_meta)
    args = BloscArgs(
        typesize=given.get("typesize", layout.header.typesize or last.typesize or 1),
        clevel=given.get("clevel", DEFAULT_CLEVEL),
        shuffle=given.get("shuffle", DEFAULT_SHUFFLE),
        cname=given.get("cname", DEFAULT_CNAME),
        blosc_version=version,
        **extra,
    )
    check_blosc_args(args)
    return args


class _Plan:
    """Sizes of an append, computed (and checked) before anything is written."""

    def __init__(self, layout: _Existing, last_nbytes: int, new_size: int) -> None:
        header = layout.header
        chunk_size = header.chunk_size
        if chunk_size == 0 and last_nbytes == 0:  # an empty file: chunk the new data afresh
            chunk_size = calculate_nchunks(new_size, DEFAULT_CHUNK_SIZE)[1] if new_size else 0
        elif chunk_size < last_nbytes or chunk_size <= 0:
            raise FormatError(
                f"{layout.name}: the last chunk holds {last_nbytes} bytes, more than the chunk"
                f" size {chunk_size} of the header"
            )
        self.chunk_size = chunk_size
        self.room = chunk_size - last_nbytes
        fill = min(self.room, new_size)
        rest = new_size - fill
        self.fill = fill
        self.new_chunks = -(-rest // chunk_size) if rest else 0
        self.last_chunk = (
            (rest - (self.new_chunks - 1) * chunk_size) if rest else last_nbytes + fill
        )
        if header.offsets and self.new_chunks > header.max_app_chunks:
            problem = (
                f"{layout.name}: not enough space: appending {new_size} bytes needs"
                f" {self.new_chunks} new chunks, but only {header.max_app_chunks} offset slots"
                " are left; rewrite it with room for more appends"
            )
            room = self.new_chunks + 10 * header.nchunks
            raise NotEnoughSpace(
                f"{problem}: bloscpack.convert({layout.name!r}, 'larger.blp',"
                f" max_app_chunks={room})",
                f"{problem}: blpk convert --max-app-chunks {room} {layout.name} larger.blp",
            )


def _metadata_section(layout: _Existing, metadata: Any, new_size: int) -> bytes | None:
    """The new metadata section (same size as the old one), or None if nothing changes: the
    ``metadata`` given, or for a file that holds a numpy array, its metadata with the shape
    grown by the rows appended (refused unless ``new_size`` bytes are whole rows)."""
    header = layout.metadata_header
    if header is None:
        if metadata is None:
            return None
        raise UnsupportedError(
            f"{layout.name}: the file has no metadata section, so metadata cannot be added in place"
        )
    current = layout.metadata
    if nd.describes_array(current):
        if metadata is not None:
            raise ArgumentError(
                f"{layout.name}: holds a numpy array, whose metadata (dtype and shape) the append"
                " keeps up to date: metadata cannot be given"
            )
        metadata = _grown_array_metadata(current, new_size, layout.name)
    if metadata is None or metadata == current:
        return None
    return encode_metadata_section(metadata, header)


def _grown_array_metadata(metadata: dict[str, Any], new_size: int, name: str) -> dict[str, Any]:
    """The numpy ``metadata`` of a file after ``new_size`` bytes of rows are appended to it."""
    spec = nd.decode_metadata(metadata)
    shape = spec.shape
    if not new_size:
        return metadata
    if not shape or (spec.order == "F" and len(shape) > 1):
        kind = "a 0-d array" if not shape else "a Fortran-order array"
        raise ArgumentError(f"{name}: holds {kind}, which cannot grow by appending rows")
    row = spec.dtype.itemsize * math.prod(shape[1:])
    if row == 0 or new_size % row:
        raise ArgumentError(
            f"{name}: holds a numpy array of dtype {spec.dtype} and shape {tuple(shape)}: the"
            f" {new_size} bytes to append are not whole rows of {row} bytes"
        )
    return {**metadata, "shape": [shape[0] + new_size // row, *shape[1:]]}


def append_fp(
    orig_fp: IO[bytes],
    new_fp: IO[bytes],
    new_size: int,
    blosc_args: Mapping[str, Any] | None = None,
    *,
    metadata: Any = None,
) -> int:
    """Append ``new_size`` bytes read from ``new_fp`` to the ``.blp`` file open in ``orig_fp``
    (``r+b``); return the number of chunks added.

    ``blosc_args`` (``BloscArgs`` or dict; missing/None entries: the file's typesize, clevel 7,
    shuffle, blosclz) compress the rewritten last chunk and the new ones.  ``metadata``, if
    given, replaces the file's metadata in the same step.  When ``orig_fp`` is a file on disk
    the append is crash-safe (see the module docstring).
    """
    name = getattr(orig_fp, "name", None)
    path = name if isinstance(name, str) and os.path.isfile(name) else None
    steps = Steps()
    if path is None:
        return _append(orig_fp, None, new_fp, new_size, blosc_args, metadata, steps)
    with locked(orig_fp):
        roll_back(path, orig_fp)
        return _append(orig_fp, path, new_fp, new_size, blosc_args, metadata, steps)


def append(
    orig_file: PathLike,
    new_file: PathLike | np.ndarray,
    blosc_args: Mapping[str, Any] | None = None,
    *,
    metadata: Any = None,
) -> int:
    """Append the bytes of the file ``new_file`` to the ``.blp`` file ``orig_file``, in place
    and crash-safely; return the number of chunks added.  See :func:`append_fp`.

    When ``orig_file`` holds a numpy array, the bytes must be whole rows of it (C order): its
    first axis grows, and its metadata says so.  ``new_file`` may also be a numpy array, of the
    file's dtype and trailing shape.  A file with an order record (``order_record=True``)
    gets one for its new state."""
    orig_file = local_output(orig_file, "append to")
    if is_stream(orig_file):
        raise ArgumentError(f"{os.fspath(orig_file)}: not a regular file, cannot be appended to")
    ordered = _has_order_record(orig_file)
    added = _append_to(orig_file, new_file, blosc_args, metadata)
    if ordered:  # the append truncated the record after the old last chunk
        add_order_record(orig_file)
    return added


def _has_order_record(path: PathLike) -> bool:
    """Whether the ``.blp`` file ``path`` ends in an intact order record of its state (False
    for a file the append then refuses)."""
    try:
        with BloscpackReader(path) as reader:
            return reader.order_tags() is not None
    except BloscpackError:
        return False


def _append_to(orig_file: PathLike, new_file: PathLike | np.ndarray,
               blosc_args: Mapping[str, Any] | None, metadata: Any) -> int:  # fmt: skip
    if isinstance(new_file, np.ndarray):
        with open(orig_file, "rb") as head:
            _check_magic(head.read(4), os.fspath(orig_file))
        rows = _rows_for(orig_file, new_file)
        with open(orig_file, "r+b") as orig_fp:
            new = io.BufferedReader(_ViewReader(rows))
            return append_fp(orig_fp, new, len(rows), blosc_args, metadata=metadata)
    with sized_input(new_file) as sized:
        new_size = os.path.getsize(sized)
        with open(orig_file, "r+b") as orig_fp, open(sized, "rb") as new_fp:
            return append_fp(orig_fp, new_fp, new_size, blosc_args, metadata=metadata)


def append_rows(path: PathLike, rows: np.ndarray, *, blosc_args: Mapping[str, Any] | None = None,
                metadata: Any = None) -> None:  # fmt: skip
    """:func:`bloscpack.append` for ``.blp`` files: :func:`append` of ``rows`` (bytes as
    ``uint8``), which says how to make room when the offsets section has none left."""
    append(path, rows, blosc_args, metadata=metadata)


class _ViewReader(io.RawIOBase):
    """A binary stream of the bytes of a buffer, read without copying it first."""

    def __init__(self, data: memoryview) -> None:
        super().__init__()
        self._data, self._pos = data, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), len(self._data) - self._pos)
        memoryview(buffer).cast("B")[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        return n


def _rows_for(path: PathLike, rows: np.ndarray) -> memoryview:
    """The bytes of ``rows`` (C order), checked to be rows of the array ``path`` holds."""
    nd.check_storable(rows.dtype)
    with reading(path) as reader:
        metadata = reader.metadata
    if nd.describes_array(metadata):
        spec = nd.decode_metadata(metadata)
        if rows.dtype != spec.dtype or rows.shape[1:] != tuple(spec.shape[1:]) or not rows.ndim:
            raise ArgumentError(
                f"{os.fspath(path)}: holds an array of dtype {spec.dtype} and shape"
                f" {tuple(spec.shape)}; rows of dtype {rows.dtype} and shape {rows.shape} do not"
                " fit it"
            )
    return nd.byte_view(np.ascontiguousarray(rows)).data


def _append(
    fp: IO[bytes],
    path: str | None,
    new_fp: IO[bytes],
    new_size: int,
    blosc_args: Mapping[str, Any] | None,
    metadata: Any,
    steps: Steps,
) -> int:
    name = path or getattr(fp, "name", "<file>")
    layout = _Existing(fp, str(name))
    last_data = layout.last_data
    plan = _Plan(layout, len(last_data), new_size)
    args = _resolve_blosc_args(blosc_args, layout, layout.last_header)
    new_metadata = _metadata_section(layout, metadata, new_size)
    if new_size == 0 and new_metadata is None:
        return 0

    header = layout.header
    # Like 0.16, the last chunk is always re-compressed (full or not), so the bytes match.
    write_from = layout.last_pos if new_size else layout.last_end
    offsets_len = 8 * (header.nchunks + header.max_app_chunks) if header.offsets else 0
    regions = [(0, BLOSCPACK_HEADER_LENGTH)]
    if new_metadata is not None:
        regions.append((layout.metadata_pos, len(new_metadata)))
    if offsets_len and plan.new_chunks:
        regions.append((layout.offsets_pos, offsets_len))
    if write_from < layout.size:
        regions.append((write_from, layout.size - write_from))
    originals = [
        (offset, _read_exactly(fp, offset, n, layout.size, layout.name, "journal region"))
        for offset, n in regions
    ]
    if path is not None:
        write_journal(path, fp, originals, steps)
    try:
        _write_append(
            fp, layout, plan, args, last_data, new_fp, new_size, write_from, new_metadata, steps
        )
    except BaseException:
        if path is None:
            raise
        roll_back(path, fp)
        raise
    if path is not None:
        remove_journal(path, steps)
    return plan.new_chunks


def _write_append(
    fp: IO[bytes],
    layout: _Existing,
    plan: _Plan,
    args: BloscArgs,
    last_data: bytearray,
    new_fp: IO[bytes],
    new_size: int,
    write_from: int,
    new_metadata: bytes | None,
    steps: Steps,
) -> None:
    """Write the chunks, offsets, metadata and header of a planned append, then fsync."""
    header, checksum = layout.header, layout.checksum
    fp.seek(write_from)
    if new_size:
        last_data += _read_new(new_fp, plan.fill, layout.name)
        compressed = compress_chunk(last_data, args)
        fp.write(compressed)
        fp.write(checksum(compressed))
        steps.done()
    new_offsets = []
    position = fp.tell()
    buffer = bytearray(plan.chunk_size) if plan.new_chunks else bytearray()
    remaining = new_size - plan.fill
    for _ in range(plan.new_chunks):
        n = min(plan.chunk_size, remaining)
        view = memoryview(buffer)[:n]
        _readinto_exactly(new_fp, view, layout.name)
        compressed = compress_chunk(view, args)
        fp.write(compressed)
        fp.write(checksum(compressed))
        steps.done()
        new_offsets.append(position)
        position += len(compressed) + checksum.size
        remaining -= n
    end = position
    if new_offsets and header.offsets:
        fp.seek(layout.offsets_pos + 8 * header.nchunks)
        fp.write(encode_offsets(new_offsets))
        steps.done()
    if new_metadata is not None:
        fp.seek(layout.metadata_pos)
        fp.write(new_metadata)
        steps.done()
    header.nchunks += plan.new_chunks
    if header.offsets:
        header.max_app_chunks -= plan.new_chunks
    header.chunk_size = plan.chunk_size
    header.last_chunk = plan.last_chunk
    fp.seek(0)
    fp.write(header.encode())
    steps.done()
    fp.truncate(end)
    steps.done()
    fp.flush()
    if _has_fileno(fp):
        os.fsync(fp.fileno())
    steps.done()


def _read_new(new_fp: IO[bytes], n: int, name: str) -> bytes:
    data = new_fp.read(n)
    if len(data) != n:
        raise TruncatedError(f"{name}: the data to append ended early ({len(data)} of {n} bytes)")
    return data


def _readinto_exactly(new_fp: IO[bytes], view: memoryview, name: str) -> None:
    got = 0
    while got < len(view):
        n = new_fp.readinto(view[got:]) if hasattr(new_fp, "readinto") else None
        if n is None:
            data = new_fp.read(len(view) - got)
            n = len(data)
            view[got : got + n] = data
        if n == 0:
            raise TruncatedError(f"{name}: the data to append ended early")
        got += n


__all__ = [
    "JOURNAL_SUFFIX",
    "KILL_AFTER_ENV",
    "append",
    "append_fp",
    "journal_path",
    "needs_recovery",
    "recover",
]
