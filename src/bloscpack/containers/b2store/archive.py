"""The zip archive of a ``.b2z`` store, read where its members lie: :func:`read_members` parses
the central directory (zip64 too) and every local header, checking that each member is
stored (not deflated), lies whole between the start of the file and the central directory,
overlaps no other and has a safe name; :class:`MemberSource` is a
:class:`~bloscpack.io.ByteSource` over one member's bytes (a window of the archive's source),
so that a member's reader reads only what it needs, without extracting anything."""

from __future__ import annotations

import contextlib
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from ...errors import FormatError, TruncatedError
from ...io.sources import ByteSource

#: The signatures of the zip records read here.
LOCAL = b"PK\x03\x04"
CENTRAL = b"PK\x01\x02"
END = b"PK\x05\x06"
END64 = b"PK\x06\x06"
LOCATOR64 = b"PK\x06\x07"
#: Fixed sizes of the records.
LOCAL_LEN, CENTRAL_LEN, END_LEN, END64_LEN, LOCATOR64_LEN = 30, 46, 22, 56, 20
#: The longest zip comment: the end record lies in the last ``END_LEN + MAX_COMMENT`` bytes.
MAX_COMMENT = 0xFFFF
#: The extra field that holds a member's 64-bit sizes and offset.
ZIP64_EXTRA = 0x0001
#: General-purpose flag bits: encrypted, names in UTF-8.
ENCRYPTED, UTF8 = 0x1, 0x800
#: Bytes read at a time when a member's CRC-32 is checked.
CRC_STEP = 4 << 20


@dataclass(frozen=True)
class Member:
    """One member of the archive: its ``name``, where its bytes lie (``offset``, ``size``), its
    local header's offset and its stored CRC-32."""

    name: str
    offset: int
    size: int
    header: int
    crc: int

    @property
    def end(self) -> int:
        return self.offset + self.size


def is_zip(head: bytes) -> bool:
    """Whether a file beginning with ``head`` is a zip archive (a member first, or empty)."""
    return head[:4] in (LOCAL, END)


def _end_record(source: ByteSource) -> tuple[int, int, int, int]:
    """``(entries, cd_offset, cd_size, end_at)`` from the end of central directory record (and
    its zip64 record when the 32-bit fields overflow)."""
    size = source.size()
    tail_at = max(0, size - END_LEN - MAX_COMMENT)
    tail = bytes(source.read(tail_at, size - tail_at, "the end of the zip archive"))
    found = -1
    pos = len(tail) - END_LEN
    while pos >= 0:
        pos = tail.rfind(END, 0, pos + 4)
        if pos < 0:
            break
        (comment,) = struct.unpack_from("<H", tail, pos + 20)
        if pos + END_LEN + comment == len(tail):
            found = pos
            break
        pos -= 1
    if found < 0:
        raise FormatError(f"{source.name}: no end of central directory record: the zip archive"
                          " is truncated or damaged")  # fmt: skip
    disk, cd_disk, _, entries, cd_size, cd_offset = struct.unpack_from("<4H2I", tail, found + 4)
    end_at = tail_at + found
    if disk or cd_disk:
        raise FormatError(f"{source.name}: a multi-disk zip archive, which a store never is")
    if 0xFFFF in (entries,) or 0xFFFFFFFF in (cd_size, cd_offset):
        locator_at = end_at - LOCATOR64_LEN
        locator = bytes(source.read(locator_at, LOCATOR64_LEN, "the zip64 locator")) \
            if locator_at >= 0 else b""  # fmt: skip
        if locator[:4] != LOCATOR64:
            raise FormatError(f"{source.name}: the zip64 end record locator is missing")
        (end64_at,) = struct.unpack_from("<Q", locator, 8)
        if end64_at + END64_LEN > locator_at:
            raise FormatError(f"{source.name}: the zip64 end record at {end64_at} lies past its"
                              " locator")  # fmt: skip
        record = bytes(source.read(end64_at, END64_LEN, "the zip64 end record"))
        if record[:4] != END64:
            raise FormatError(f"{source.name}: no zip64 end record at offset {end64_at}")
        entries, _, cd_size, cd_offset = struct.unpack_from("<4Q", record, 24)
        end_at = end64_at
    if cd_offset + cd_size > end_at:
        raise FormatError(
            f"{source.name}: the central directory ({cd_size} bytes at offset {cd_offset}) runs"
            f" past the end record at {end_at}: the zip archive is truncated or damaged"
        )
    return entries, cd_offset, cd_size, end_at


def _zip64(extra: bytes, fields: list[int], name: str, where: str) -> list[int]:
    """``fields`` (uncompressed size, compressed size, local header offset) with those stored
    as 0xFFFFFFFF taken from the zip64 extra field, in that order."""
    pos = 0
    while pos + 4 <= len(extra):
        kind, length = struct.unpack_from("<2H", extra, pos)
        if kind == ZIP64_EXTRA:
            values = extra[pos + 4 : pos + 4 + length]
            out, at = [], 0
            for value in fields:
                if value == 0xFFFFFFFF:
                    if at + 8 > len(values):
                        raise FormatError(f"{where}: member {name!r}: its zip64 field is short")
                    (value,) = struct.unpack_from("<Q", values, at)
                    at += 8
                out.append(value)
            return out
        pos += 4 + length
    if 0xFFFFFFFF in fields:
        raise FormatError(f"{where}: member {name!r}: 64-bit sizes without a zip64 field")
    return fields


def is_safe(name: str) -> bool:
    """Whether ``name`` is a relative path that stays inside the store: not absolute, without
    ``.``, ``..`` or empty parts, backslashes or control characters."""
    parts = name.split("/")
    return not (name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts)
                or any(ord(c) < 32 for c in name))  # fmt: skip


def check_name(name: str, where: str) -> None:
    """Refuse a member name that could point outside the store (:func:`is_safe`)."""
    if not is_safe(name):
        raise FormatError(f"{where}: member name {name!r} is not a safe relative path")


def _central_entries(source: ByteSource, directory: bytes, entries: int
                     ) -> Iterator[tuple[str, int, int, int, int]]:  # fmt: skip
    """``(name, method, size, header offset, crc)`` of each central directory entry."""
    where = source.name
    pos = 0
    for index in range(entries):
        if directory[pos : pos + 4] != CENTRAL or pos + CENTRAL_LEN > len(directory):
            raise FormatError(f"{where}: central directory entry {index} of {entries} is missing"
                              " or damaged: the zip archive is truncated")  # fmt: skip
        (flags, method, crc, csize, usize, name_len, extra_len, comment_len, disk, _, _,
         header) = struct.unpack_from("<8x2H4x3I5H2I", directory, pos)  # fmt: skip
        end = pos + CENTRAL_LEN + name_len + extra_len + comment_len
        if end > len(directory):
            raise FormatError(f"{where}: central directory entry {index} runs past the directory")
        raw = directory[pos + CENTRAL_LEN : pos + CENTRAL_LEN + name_len]
        name = raw.decode("utf-8" if flags & UTF8 else "cp437", "replace")
        extra = directory[pos + CENTRAL_LEN + name_len : pos + CENTRAL_LEN + name_len + extra_len]
        usize, csize, header = _zip64(extra, [usize, csize, header], name, where)
        if flags & ENCRYPTED:
            raise FormatError(f"{where}: member {name!r} is encrypted")
        if method != 0:
            raise FormatError(
                f"{where}: member {name!r} is compressed (zip method {method}); a store is read"
                " where its members lie, so they must be stored uncompressed: unzip it and"
                " read the directory instead"
            )
        if csize != usize:
            raise FormatError(f"{where}: member {name!r} is stored with {csize} bytes but"
                              f" announces {usize}")  # fmt: skip
        if disk:
            raise FormatError(f"{where}: member {name!r} lies on another disk")
        check_name(name, where)
        yield name, method, csize, header, crc
        pos = end
    if pos != len(directory):
        raise FormatError(f"{where}: the central directory holds {len(directory) - pos} bytes"
                          f" after its {entries} entries")  # fmt: skip


def read_members(source: ByteSource) -> list[Member]:
    """The members of the zip archive ``source``, in the order of their bytes; every one
    checked (see the module)."""
    where = source.name
    entries, cd_offset, cd_size, _ = _end_record(source)
    if entries * CENTRAL_LEN > cd_size:
        raise FormatError(f"{where}: {entries} members cannot fit a central directory of"
                          f" {cd_size} bytes")  # fmt: skip
    directory = bytes(source.read(cd_offset, cd_size, "the central directory"))
    listed = list(_central_entries(source, directory, entries))
    source.prefetch([(h, LOCAL_LEN) for *_, h, _ in listed if h + LOCAL_LEN <= cd_offset])
    members: list[Member] = []
    seen: set[str] = set()
    for name, _, size, header, crc in listed:
        if name in seen:
            raise FormatError(f"{where}: member {name!r} is listed twice")
        seen.add(name)
        if header + LOCAL_LEN > cd_offset:
            raise FormatError(f"{where}: member {name!r}: its local header at offset {header}"
                              " lies outside the archive's data")  # fmt: skip
        local = bytes(source.read(header, LOCAL_LEN, f"the local header of {name!r}"))
        method, name_len, extra_len = *struct.unpack_from("<H", local, 8), \
            *struct.unpack_from("<2H", local, 26)  # fmt: skip
        if local[:4] != LOCAL:
            raise FormatError(f"{where}: member {name!r}: no local header at offset {header}")
        if method != 0:
            raise FormatError(f"{where}: member {name!r} is compressed in its local header (zip"
                              f" method {method})")  # fmt: skip
        offset = header + LOCAL_LEN + name_len + extra_len
        if offset + size > cd_offset:
            raise FormatError(
                f"{where}: member {name!r} ({size} bytes at offset {offset}) runs past the"
                f" archive's data, which ends at the central directory ({cd_offset})"
            )
        members.append(Member(name, offset, size, header, crc))
    members.sort(key=lambda m: m.header)
    for before, after in zip(members, members[1:], strict=False):
        if before.end > after.header:
            raise FormatError(f"{where}: members {before.name!r} and {after.name!r} overlap")
    return members


def crc_of(source: ByteSource, member: Member) -> int:
    """The CRC-32 of ``member``'s bytes, read a piece at a time."""
    crc = 0
    for start in range(member.offset, member.end, CRC_STEP):
        n = min(CRC_STEP, member.end - start)
        crc = zlib.crc32(source.peek(start, n), crc)
    return crc


class MemberSource(ByteSource):
    """The bytes of one member of an archive: a window ``[offset, offset + size)`` of the
    archive's source, which it reads (and does not close: the archive's reader does)."""

    def __init__(self, archive: ByteSource, offset: int, size: int, name: str) -> None:
        self._archive = archive
        self._offset = offset
        self._size = size
        self.name = name
        self.remote = archive.remote

    def size(self) -> int:
        return self._size

    def located(self) -> tuple[str, int]:
        file, offset = self._archive.located()
        return file, offset + self._offset

    @contextlib.contextmanager
    def consistent(self) -> Iterator[None]:
        """The archive's :meth:`~bloscpack.io.ByteSource.consistent` block."""
        with self._archive.consistent():
            yield

    def _check(self, offset: int, n: int, what: str) -> None:
        if offset < 0 or n < 0 or offset + n > self._size:
            raise TruncatedError(
                f"{self.name}: {what} at offset {offset} needs {n} bytes,"
                f" but the member has {self._size}"
            )

    def read(self, offset: int, n: int, what: str = "data") -> memoryview:
        self._check(offset, n, what)
        return self._archive.read(self._offset + offset, n, what)

    def read_into(self, offset: int, dest: memoryview, what: str = "data") -> None:
        self._check(offset, dest.nbytes, what)
        self._archive.read_into(self._offset + offset, dest, what)

    def peek(self, offset: int, n: int) -> bytes:
        offset = max(0, min(offset, self._size))
        return self._archive.peek(self._offset + offset, max(0, min(n, self._size - offset)))

    def prefetch(self, ranges: list[tuple[int, int]]) -> None:
        self._archive.prefetch([(self._offset + at, n) for at, n in ranges])

    def release(self, offset: int, n: int) -> None:
        self._archive.release(self._offset + offset, n)

    def close(self) -> None:
        """Nothing: the archive's source is closed with the store."""
