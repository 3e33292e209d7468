"""Blosc2 contiguous frames (``.b2frame``, ``.b2nd``, frames in memory): reader, writer and
in-place mutation with C-Blosc2's layout rules.

A frame is ``header | chunks | index chunk | trailer``:

* the header is a 14-element msgpack array (87 fixed bytes) followed by the metalayers
  (``93 cd <map_size> de <n> {name: d2 offset} dc <n> (c6 len content)``, offsets absolute);
* chunks are stored back to back from ``header_len``; the index chunk (a Blosc2 chunk of i64
  offsets relative to ``header_len``, negative = special chunk) sits at ``header_len + cbytes``;
* the trailer holds the vlmetalayers (each a Blosc2 chunk of msgpack), its own length and an
  empty fingerprint.

Every length and offset read from the input is checked against the input before it is used.
:class:`FrameBase` holds what contiguous and sparse frames share (header fields, metalayers,
vlmetalayers, the index, the chunk-size rules); :class:`ContiguousFrame` stores the chunks in
the frame itself.  Sparse frames (``containers/sframe.py``) store them in files.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Self

import msgpack
import numpy as np

from .. import engine
from ..blosc import partial
from ..blosc.header import (
    BLOSC2_HEADER_SIZE,
    CODEC_NAMES,
    FLAG_MEMCPYED,
    MAX_BUFFERSIZE,
    ChunkHeader,
    Special,
)
from ..blosc.layout import check_header, validate_chunk
from ..blosc.special import special_chunk, stune_blocksize
from ..errors import (
    ArgumentError,
    BloscpackError,
    FileChangedError,
    FormatError,
    TruncatedError,
    UnsupportedError,
)
from ..io import ByteSource, FileLock, PathLike, atomic_write, run_inside
from .base import NUMPY_KEYS, ArrayDescription, ChunkSizes, ReaderBase, StoredMetadata
from .options import CompressionParams, chunk_nbytes
from .target import (
    FRAME_CHUNK_NBYTES,
    Target,
    flat_spans,
    kept_metalayers,
    marker_fits,
    numpy_metadata,
    take_options,
    unreserved_user,
)

MAGIC = b"\xa8b2frame\x00"
HEADER_FIXED_LEN = 87
TRAILER_MIN_LEN = 35
FINGERPRINT_LEN = 18  # d8 00 + 16 bytes
MAX_METALAYERS = 16
MAX_VLMETALAYERS_READ = 8192
MAX_VLMETALAYERS_WRITE = 16
MAX_NAME_LEN = 31
# The index is decoded whole on first use; refuse to allocate more than this for it unless the
# input is large enough to justify it (a tiny repeated-value index may claim any number of chunks).
MAX_INDEX_NBYTES = 64 * 1024 * 1024
INDEX_BLOCKSIZE = 16 * 1024
#: Bytes read at once at the start and at the end of a frame (header and metalayers; trailer
#: and index): what is beyond them is read when needed.
EDGE_READ = 4096
#: Bytes read at the start of a chunk whose blocks are read alone: its header and, with up to
#: 1016 blocks, its bstarts (one read instead of two).
CHUNK_HEAD_READ = 4096

FRAME_CONTIGUOUS = 0
FRAME_SPARSE = 1
GF_VARIABLE_CHUNKS = 0x40
GF_VL_BLOCKS = 0x80
GF_OFFSETS_64 = 0x10
BLOSC_LAST_CODEC = 6  # codec codes >= this go to the udcodec byte (codec nibble 6)

# Index entries of special chunks: bit 63 plus the special kind in bits 56-58.
SPECIAL_MARKERS: dict[int, int] = {
    Special.ZEROS: -(1 << 63) + (Special.ZEROS << 56),
    Special.NAN: -(1 << 63) + (Special.NAN << 56),
    Special.UNINIT: -(1 << 63) + (Special.UNINIT << 56),
}
MARKER_KINDS: dict[int, Special] = {0x81: Special.ZEROS, 0x82: Special.NAN, 0x84: Special.UNINIT}

SPLITMODE_NAMES = {1: "always", 2: "never", 3: "auto", 4: "forward_compat"}
SPLITMODE_CODES = {name: code for code, name in SPLITMODE_NAMES.items()}

# (offset of the msgpack marker, marker byte, struct format of the value that follows)
_FIELDS: dict[str, tuple[int, int, str]] = {
    "header_len": (10, 0xD2, ">i"),
    "frame_len": (15, 0xCF, ">Q"),
    "nbytes": (29, 0xD3, ">q"),
    "cbytes": (38, 0xD3, ">q"),
    "typesize": (47, 0xD2, ">i"),
    "blocksize": (52, 0xD2, ">i"),
    "chunksize": (57, 0xD2, ">i"),
    "nthreads_comp": (62, 0xD1, ">h"),
    "nthreads_decomp": (65, 0xD1, ">h"),
}


# The 87 fixed bytes as (marker, value) pairs of the integer fields, in _FIELDS order; the
# bytes between them (flags, has_vlmetalayers, the filter pipeline) are read by position.
_FIXED = struct.Struct(">10xBi BQ 5xBq Bq Bi Bi Bi Bh Bh 19x")


#: Checked fixed headers by their bytes (a header is immutable; a file opened again, or
#: sniffed then opened, has its header parsed once).
_HEADERS: dict[bytes, FrameHeader] = {}
MAX_CACHED_HEADERS = 256


def _markers_ok(raw: bytes) -> bool:
    """Every msgpack marker of the fixed header is where and what a frame writer puts."""
    return (
        raw[10] == 0xD2 and raw[15] == 0xCF and raw[24] == 0xA4 and raw[29] == 0xD3
        and raw[38] == 0xD3 and raw[47] == 0xD2 and raw[52] == 0xD2 and raw[57] == 0xD2
        and raw[62] == 0xD1 and raw[65] == 0xD1 and raw[68] in (0xC2, 0xC3)
        and raw[69] == 0xD8 and raw[70] <= 6
    )  # fmt: skip


def sniff(head: bytes) -> bool:
    """True if ``head`` (the first bytes of a file) starts a Blosc2 frame."""
    return len(head) >= 10 and head[0] == 0x9E and bytes(head[1:10]) == MAGIC


# --- the fixed header --------------------------------------------------------------------


@dataclass(frozen=True)
class FrameHeader:
    """The 87 fixed bytes of a frame header, decoded (``raw`` keeps them for exact rewrites)."""

    raw: bytes
    header_len: int
    frame_len: int
    general_flags: int
    frame_type: int
    codec_flags: int
    other_flags: int
    nbytes: int
    cbytes: int
    typesize: int
    blocksize: int
    chunksize: int
    nthreads_comp: int
    nthreads_decomp: int
    has_vlmetalayers: bool
    filters: tuple[int, ...]
    udcodec: int
    codec_meta: int
    filters_meta: tuple[int, ...]
    other_flags2: int
    reserved: int

    @classmethod
    def parse(cls, buf: Any, where: str = "frame") -> FrameHeader:
        """Decode and check the fixed header at the start of ``buf``."""
        mv = memoryview(buf).cast("B")
        if len(mv) < HEADER_FIXED_LEN:
            raise TruncatedError(
                f"{where}: {len(mv)} bytes, a frame header needs {HEADER_FIXED_LEN}"
            )
        raw = bytes(mv[:HEADER_FIXED_LEN])
        if raw[0] != 0x9E or raw[1:10] != MAGIC:
            raise FormatError(f"{where}: not a Blosc2 frame (starts with {raw[:10].hex()})")
        cached = _HEADERS.get(raw)
        if cached is not None and type(cached) is cls:
            return cached
        if _markers_ok(raw):
            (header_len, frame_len, nbytes, cbytes, typesize, blocksize, chunksize,
             nthreads_comp, nthreads_decomp) = _FIXED.unpack(raw)[1::2]  # fmt: skip
            header = cls(
                raw, header_len, frame_len, raw[25], raw[26], raw[27], raw[28], nbytes, cbytes,
                typesize, blocksize, chunksize, nthreads_comp, nthreads_decomp, raw[68] == 0xC3,
                tuple(raw[71:77]), raw[77], raw[78], tuple(raw[79:85]), raw[85], raw[86],
            )  # fmt: skip
            header.check(where)
            if len(_HEADERS) >= MAX_CACHED_HEADERS:
                _HEADERS.clear()
            _HEADERS[raw] = header
            return header
        values: dict[str, int] = {}  # a marker is wrong: find it and name it
        for name, (pos, marker, fmt) in _FIELDS.items():
            if raw[pos] != marker:
                raise FormatError(
                    f"{where}: frame header field {name}: marker 0x{raw[pos]:02x},"
                    f" expected 0x{marker:02x}"
                )
            values[name] = struct.unpack_from(fmt, raw, pos + 1)[0]
        if raw[24] != 0xA4:
            raise FormatError(f"{where}: frame header flags: marker 0x{raw[24]:02x}, expected 0xa4")
        if raw[68] not in (0xC2, 0xC3):
            raise FormatError(
                f"{where}: frame header has_vlmetalayers: 0x{raw[68]:02x} is not a msgpack bool"
            )
        if raw[69] != 0xD8 or raw[70] > 6:
            raise FormatError(
                f"{where}: frame header filter pipeline: {raw[69:71].hex()} (expected d8 0..6)"
            )
        header = cls(
            raw=raw, general_flags=raw[25], frame_type=raw[26], codec_flags=raw[27],
            other_flags=raw[28], has_vlmetalayers=raw[68] == 0xC3,
            filters=tuple(raw[71:77]), udcodec=raw[77], codec_meta=raw[78],
            filters_meta=tuple(raw[79:85]), other_flags2=raw[85], reserved=raw[86], **values,
        )  # fmt: skip
        header.check(where)
        return header

    def check(self, where: str) -> None:
        """Reject field values no frame can have."""
        if self.general_flags & 0x0F > 3:
            raise UnsupportedError(
                f"{where}: frame format version {self.general_flags & 0x0F} (known: <= 3)"
            )
        if (self.general_flags >> 4) & 0x03 != 1:
            raise UnsupportedError(
                f"{where}: offsets width code {(self.general_flags >> 4) & 3} (only 1, 64-bit)"
            )
        if self.frame_type not in (FRAME_CONTIGUOUS, FRAME_SPARSE):
            raise FormatError(f"{where}: frame type {self.frame_type} (0 contiguous, 1 sparse)")
        if self.header_len < HEADER_FIXED_LEN + 10:
            raise FormatError(
                f"{where}: header_len {self.header_len} is smaller than a frame header"
            )
        if self.frame_len < self.header_len + TRAILER_MIN_LEN:
            raise FormatError(
                f"{where}: frame_len {self.frame_len} leaves no room for the header"
                f" ({self.header_len} bytes) and a trailer"
            )
        if self.typesize <= 0:
            raise FormatError(f"{where}: typesize {self.typesize} must be > 0")
        if self.nbytes < 0 or self.cbytes < 0:
            raise FormatError(f"{where}: negative nbytes ({self.nbytes}) or cbytes ({self.cbytes})")
        if self.blocksize < 0:
            raise FormatError(f"{where}: blocksize {self.blocksize} must be >= 0")
        if self.chunksize < -1 or (self.chunksize == -1 and self.nbytes > 0):
            raise FormatError(f"{where}: chunksize {self.chunksize} with nbytes {self.nbytes}")

    @property
    def codec(self) -> int:
        """Codec code (0 blosclz, 1 lz4, 2 lz4hc, 4 zlib, 5 zstd, >= 32 registered codecs)."""
        nibble = self.codec_flags & 0x0F
        return self.udcodec if nibble == BLOSC_LAST_CODEC else nibble

    @property
    def clevel(self) -> int:
        return self.codec_flags >> 4

    @property
    def splitmode(self) -> int:
        return (self.other_flags & 0x03) + 1

    @property
    def use_dict(self) -> bool:
        return bool(self.other_flags2 & 0x01)

    def to_dict(self) -> dict[str, Any]:
        """The header fields as a JSON-able dict."""
        return {
            "header_len": self.header_len, "frame_len": self.frame_len,
            "general_flags": self.general_flags, "frame_type": self.frame_type,
            "codec_flags": self.codec_flags, "other_flags": self.other_flags,
            "nbytes": self.nbytes, "cbytes": self.cbytes, "typesize": self.typesize,
            "blocksize": self.blocksize, "chunksize": self.chunksize,
            "nthreads_comp": self.nthreads_comp, "nthreads_decomp": self.nthreads_decomp,
            "has_vlmetalayers": self.has_vlmetalayers, "filters": list(self.filters),
            "udcodec": self.udcodec, "codec_meta": self.codec_meta,
            "filters_meta": list(self.filters_meta), "other_flags2": self.other_flags2,
            "reserved": self.reserved,
        }  # fmt: skip


def build_fixed_header(
    *, frame_type: int, typesize: int, codec: int, clevel: int, splitmode: int,
    filters: Sequence[int], filters_meta: Sequence[int], codec_meta: int, use_dict: bool,
    blocksize: int, chunksize: int, nthreads: int,
) -> bytearray:  # fmt: skip
    """The 87 fixed header bytes of a new, empty frame (lengths are patched later)."""
    raw = bytearray(HEADER_FIXED_LEN)
    raw[0] = 0x9E
    raw[1:10] = MAGIC
    for pos, marker, _fmt in _FIELDS.values():
        raw[pos] = marker
    raw[24] = 0xA4
    raw[26] = frame_type
    raw[27] = ((clevel & 0x0F) << 4) | (codec if codec < BLOSC_LAST_CODEC else BLOSC_LAST_CODEC)
    raw[28] = splitmode - 1
    raw[68] = 0xC2
    raw[69] = 0xD8
    raw[70] = 6
    raw[71:77] = bytes(_six(filters))
    raw[77] = codec
    raw[78] = codec_meta
    raw[79:85] = bytes(_six(filters_meta))
    raw[85] = 1 if use_dict else 0
    _put(raw, "typesize", typesize)
    _put(raw, "blocksize", blocksize)
    _put(raw, "chunksize", chunksize)
    _put(raw, "nthreads_comp", nthreads)
    _put(raw, "nthreads_decomp", nthreads)
    return raw


def _six(values: Sequence[int]) -> list[int]:
    out = [int(v) & 0xFF for v in values]
    if len(out) > 6:
        raise ArgumentError(f"at most 6 filter slots, got {len(out)}")
    return out + [0] * (6 - len(out))


def _put(raw: bytearray, name: str, value: int) -> None:
    pos, _marker, fmt = _FIELDS[name]
    struct.pack_into(fmt, raw, pos + 1, value)


def general_flags(chunksize: int, vl_blocks: bool) -> int:
    """The general_flags byte C-Blosc2 writes for a chunk size and VL-block mode."""
    flags = (3 if chunksize == 0 or vl_blocks else 2) | GF_OFFSETS_64
    if chunksize == 0:
        flags |= GF_VARIABLE_CHUNKS
    if vl_blocks:
        flags |= GF_VL_BLOCKS
    return flags


# --- metalayers and vlmetalayers ---------------------------------------------------------


def _check_name(name: str) -> bytes:
    encoded = name.encode("utf-8")
    if not 0 < len(encoded) <= MAX_NAME_LEN:
        raise ArgumentError(f"metalayer name {name!r} must be 1..{MAX_NAME_LEN} bytes of UTF-8")
    return encoded


def _pack_layers(layers: Sequence[tuple[str, bytes]], base: int) -> tuple[bytes, int]:
    """``93 cd map_size de n {name: offset} dc n (c6 len content)``; offsets are ``base`` + the
    position in the returned bytes.  Returns (bytes, end of the offsets map)."""
    names = [_check_name(name) for name, _ in layers]
    map_end = 1 + 3 + 3 + sum(1 + len(n) + 5 for n in names)
    out = bytearray(b"\x93\xcd\x00\x00\xde")
    out += struct.pack(">H", len(layers))
    value_pos = map_end + 3
    for name, (_n, content) in zip(names, layers, strict=True):
        out += bytes([0xA0 + len(name)]) + name + b"\xd2" + struct.pack(">i", base + value_pos)
        value_pos += 5 + len(content)
    out += b"\xdc" + struct.pack(">H", len(layers))
    for _name, content in layers:
        out += b"\xc6" + struct.pack(">I", len(content)) + bytes(content)
    return bytes(out), map_end


def pack_metalayers(layers: Sequence[tuple[str, bytes]]) -> bytes:
    """The metalayers block that follows the 87 fixed header bytes."""
    if len(layers) > MAX_METALAYERS:
        raise ArgumentError(f"at most {MAX_METALAYERS} metalayers, got {len(layers)}")
    block, map_end = _pack_layers(layers, HEADER_FIXED_LEN)
    return block[:2] + struct.pack(">H", map_end) + block[4:]


def pack_trailer(vlmeta: Sequence[tuple[str, bytes]]) -> bytes:
    """The whole trailer: version 1, vlmetalayers, trailer length, empty fingerprint."""
    block, map_end = _pack_layers(vlmeta, 2)
    block = block[:2] + struct.pack(">H", map_end - 1) + block[4:]  # counted from the cd byte
    length = 2 + len(block) + 5 + FINGERPRINT_LEN
    return b"\x94\x01" + block + b"\xce" + struct.pack(">I", length) + b"\xd8\x00" + bytes(16)


#: Parsed layers blocks of at most this many bytes are kept, by their bytes (a frame sniffed
#: then opened, or opened again, has its metalayers parsed once).
MAX_CACHED_LAYERS_LEN = 4096
_LAYERS: dict[tuple[bytes, int, int, int], tuple[tuple[str, bytes, int], ...]] = {}


def parse_layers(
    buf: Any, start: int, base: int, limit: int, what: str
) -> list[tuple[str, bytes, int]]:
    """Read a ``93 cd .. de ..`` layers block at ``start`` of ``buf``; value offsets are relative
    to ``base`` of ``buf``.  Returns ``(name, content, offset)`` in map order."""
    mv = memoryview(buf).cast("B")
    if len(mv) > MAX_CACHED_LAYERS_LEN:
        return _parse_layers(mv, start, base, limit, what)
    key = (bytes(mv), start, base, limit)
    layers = _LAYERS.get(key)
    if layers is None:
        layers = tuple(_parse_layers(mv, start, base, limit, what))
        if len(_LAYERS) >= MAX_CACHED_HEADERS:
            _LAYERS.clear()
        _LAYERS[key] = layers
    return list(layers)


def _parse_layers(
    mv: memoryview, start: int, base: int, limit: int, what: str
) -> list[tuple[str, bytes, int]]:
    end = len(mv)

    def need(pos: int, n: int, item: str) -> None:
        if pos < 0 or pos + n > end:
            raise TruncatedError(
                f"{what}: {item} at {pos - base} needs {n} bytes, {end - base} available"
            )

    need(start, 7, "layers header")
    if mv[start] != 0x93 or mv[start + 1] != 0xCD or mv[start + 4] != 0xDE:
        raise FormatError(f"{what}: bad layers header {bytes(mv[start : start + 5]).hex()}")
    (count,) = struct.unpack_from(">H", mv, start + 5)
    if count > limit:
        raise FormatError(f"{what}: {count} entries (at most {limit})")
    pos = start + 7
    layers: list[tuple[str, bytes, int]] = []
    for i in range(count):
        need(pos, 1, f"name {i}")
        marker = mv[pos]
        if marker & 0xE0 != 0xA0:
            raise FormatError(f"{what}: entry {i} name marker 0x{marker:02x} is not a fixstr")
        nlen = marker & 0x1F
        need(pos + 1, nlen + 5, f"entry {i}")
        try:
            name = bytes(mv[pos + 1 : pos + 1 + nlen]).decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(f"{what}: entry {i} name is not UTF-8") from None
        pos += 1 + nlen
        if mv[pos] != 0xD2:
            raise FormatError(
                f"{what}: entry {name!r} offset marker 0x{mv[pos]:02x}, expected 0xd2"
            )
        (offset,) = struct.unpack_from(">i", mv, pos + 1)
        pos += 5
        at = base + offset
        if offset < 0:
            raise FormatError(f"{what}: entry {name!r} offset {offset} is negative")
        need(at, 5, f"entry {name!r} value")
        if mv[at] != 0xC6:
            raise FormatError(f"{what}: entry {name!r} value marker 0x{mv[at]:02x}, expected 0xc6")
        (clen,) = struct.unpack_from(">I", mv, at + 1)
        need(at + 5, clen, f"entry {name!r} content")
        layers.append((name, bytes(mv[at + 5 : at + 5 + clen]), offset))
    return layers


def pack_value(value: Any) -> bytes:
    """msgpack-encode a metadata value the way python-blosc2 does (tuples as ``["__tuple__",
    ...]``, bytes as bin, numpy scalars as Python numbers)."""

    def default(obj: Any) -> Any:
        if isinstance(obj, tuple):
            return ["__tuple__", *obj]
        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, np.integer):
            return int(obj)
        if isinstance(obj, np.floating):
            return float(obj)
        if isinstance(obj, np.bytes_):
            return bytes(obj)
        if isinstance(obj, np.str_):
            return str(obj)
        raise ArgumentError(f"cannot store {type(obj).__name__} in frame metadata")

    packed: bytes = msgpack.packb(value, default=default, strict_types=True, use_bin_type=True)
    return packed


def unpack_value(raw: Any, what: str) -> Any:
    """Decode a msgpack metadata value; extension types come back as ``msgpack.ExtType``."""

    def tuples(items: list[Any]) -> Any:
        if items and isinstance(items[0], str) and items[0] == "__tuple__":
            return tuple(items[1:])
        return items

    try:
        return msgpack.unpackb(bytes(raw), list_hook=tuples, strict_map_key=False, raw=False)
    except Exception as exc:  # msgpack raises many types for malformed input
        raise FormatError(f"{what}: invalid msgpack content ({exc})") from None


# --- special chunks and the index --------------------------------------------------------

SPECIAL_KINDS = {"zeros": Special.ZEROS, "nan": Special.NAN, "uninit": Special.UNINIT}
INT_MAX = 2**31 - 1


def forced_blocksize(nbytes: int, typesize: int, blocksize: int, **params: Any) -> int:
    """The block size of a special chunk C-Blosc2 builds (``blosc2_chunk_zeros`` and friends):
    stune's choice for ``params`` (codec, clevel, filters, splitmode), or a given ``blocksize``
    capped at ``nbytes`` and rounded down to a multiple of the typesize."""
    bs = stune_blocksize(nbytes, typesize, blocksize=blocksize, **params)
    return bs - bs % typesize if bs > typesize else bs


def synthesized_chunk(kind: Special, nbytes: int, typesize: int, blocksize: int) -> bytes:
    """The 32-byte chunk C-Blosc2 returns for a zeros / NaN / uninit index entry.

    C builds it with its default cparams (blosclz, clevel 5, shuffle, forward-compat split),
    whatever the frame's codec, and with the frame's typesize and blocksize field (0: stune).
    A NaN entry of a frame whose typesize is not 4 or 8 still gives a chunk (that does not
    decode), as in C.
    """
    bs = forced_blocksize(nbytes, typesize, blocksize)
    if kind == Special.NAN and typesize not in (4, 8):
        chunk = bytearray(special_chunk(Special.ZEROS, nbytes, typesize, bs))
        chunk[BLOSC2_HEADER_SIZE - 1] = int(Special.NAN) << 4
        return bytes(chunk)
    return special_chunk(kind, nbytes, typesize, bs)


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


def encode_index(offsets: np.ndarray, *, room: int = 0) -> bytes:
    """Compress an index as C-Blosc2 does (blosclz, clevel 5, typesize 8, blocksize 16 KiB,
    never split).  ``room`` is the spare destination space C had: on delete it compresses
    n - 1 offsets into a buffer sized for n, so an incompressible one-block index becomes a raw
    stream (``nbytes + 40`` bytes) instead of a memcpyed chunk."""
    data = np.ascontiguousarray(offsets, dtype="<i8")
    chunk = bytes(
        engine.compress_blosc2(
            data,
            typesize=8,
            clevel=5,
            codec="blosclz",
            filters=(0, 0, 0, 0, 0, 1),
            splitmode="never",
            blocksize=INDEX_BLOCKSIZE,
        )  # fmt: skip
    )
    header = ChunkHeader.parse(chunk)
    if room >= 8 and header.memcpyed and 32 <= data.nbytes <= INDEX_BLOCKSIZE:
        raw = replace(
            header,
            flags=header.flags & ~FLAG_MEMCPYED,
            blocksize=data.nbytes,
            cbytes=data.nbytes + 40,
        )
        shuffled = data.view(np.uint8).reshape(-1, 8).T.tobytes()
        return raw.pack() + struct.pack("<ii", BLOSC2_HEADER_SIZE + 4, data.nbytes) + shuffled
    return chunk


def check_index(chunk: Any, nchunks: int | None, where: str, source_size: int) -> ChunkHeader:
    """Check the header of the index chunk ``chunk`` (its bytes up to the trailer) and return it;
    ``nchunks`` is the count the frame header implies (None: variable chunk sizes, the index
    says).  Its blocks are checked when they are decoded."""
    header = check_header(chunk)
    if header.cbytes > len(chunk):
        raise TruncatedError(
            f"{where}: index chunk of {header.cbytes} bytes, only {len(chunk)} before the trailer"
        )
    if header.nbytes % 8:
        raise FormatError(f"{where}: index chunk holds {header.nbytes} bytes, not a multiple of 8")
    if nchunks is not None and header.nbytes != 8 * nchunks:
        raise FormatError(
            f"{where}: index chunk holds {header.nbytes // 8} offsets,"
            f" the header implies {nchunks} chunks"
        )
    if header.nbytes > max(MAX_INDEX_NBYTES, 64 * source_size):
        raise FormatError(
            f"{where}: index chunk claims {header.nbytes} bytes of offsets, too many for the input"
        )
    return header


def decode_index(chunk: Any, nchunks: int | None, where: str, source_size: int) -> np.ndarray:
    """Decode the index chunk (see :func:`check_index`; the size is checked before allocating).
    An index of 8-byte items is decoded with getitem, which keeps the decoder's block buffers
    (a whole-chunk decode would shrink them to the index's small blocks)."""
    header = check_index(chunk, nchunks, where, source_size)
    validate_chunk(chunk)
    out = np.empty(header.nbytes // 8, dtype="<i8")
    if header.real_typesize == 8:
        engine.getitem_into(chunk, 0, out.size, out, validated=True)
    else:
        engine.decompress_into(chunk, out, validated=True)
    return out


def index_entry(chunk: Any, header: ChunkHeader, i: int) -> int | None:
    """Entry ``i`` of an index chunk whose header :func:`check_index` returned, decoding (and
    validating) only the block that holds it; None when the index is not made of 8-byte items
    (decode it whole then)."""
    if header.real_typesize != 8 or not 0 <= i < header.nbytes // 8:
        return None
    out = np.empty(1, dtype="<i8")
    engine.getitem_into(chunk, i, 1, out)
    return int(out[0])


def check_entry(i: int, entry: int, chunks_cbytes: int | None, where: str) -> int:
    """``entry`` (index entry of chunk ``i``) when it is an offset at which a chunk header fits
    in a chunks section of ``chunks_cbytes`` bytes (None: sparse frames, where it is a chunk
    file id) or a special marker."""
    if entry < 0:
        if (entry >> 56) & 0xFF not in MARKER_KINDS:
            raise FormatError(f"{where}: index entry {i} ({_hex(entry)}) is not a special marker")
    elif chunks_cbytes is not None and entry > chunks_cbytes - BLOSC2_HEADER_SIZE:
        raise FormatError(
            f"{where}: chunk {i} at offset {entry} lies beyond the chunks section"
            f" ({chunks_cbytes} bytes)"
        )
    return entry


def _hex(entry: Any) -> str:
    return f"0x{int(entry) & (2**64 - 1):016x}"


def chunk_kind(entry: int) -> Special:
    """Special kind of a negative index entry."""
    kind = MARKER_KINDS.get((entry >> 56) & 0xFF)
    if kind is None:
        raise FormatError(f"index entry {_hex(entry)} is neither an offset nor a special marker")
    return kind


def check_new_chunk(chunk: Any) -> tuple[memoryview, ChunkHeader]:
    """Validate a chunk handed to a writer; return (exactly its bytes, header)."""
    mv = memoryview(chunk).cast("B")
    header = validate_chunk(mv)
    if not header.extended:
        raise ArgumentError(
            "frames store Blosc2 chunks (32-byte header); compress with compress_blosc2"
        )
    if header.lazy:
        raise ArgumentError("a lazy chunk has no data and cannot be stored in a frame")
    if header.nbytes == 0:
        raise ArgumentError("an empty chunk (nbytes 0) cannot be stored in a frame")
    return mv[: header.cbytes], header


def marker_of(header: ChunkHeader) -> int | None:
    """The index marker a chunk is stored as (zeros / NaN / uninit), or None."""
    kind = header.special
    return SPECIAL_MARKERS.get(int(kind)) if kind in SPECIAL_MARKERS else None


def next_chunksize(
    chunksize: int, op: str, pos: int, nchunks: int, nbytes: int, last_nbytes: Callable[[], int]
) -> int:
    """The frame chunksize after inserting (``op`` "insert"/"append") or updating (``op``
    "update") chunk ``pos`` of ``nchunks`` with a chunk of ``nbytes``, following C-Blosc2: the
    first chunk sets it (from -1); anything that breaks the fixed-size pattern (full chunks and
    at most one short last chunk) makes it 0 for good.  ``last_nbytes()`` gives the size of the
    current last chunk (called only when needed)."""
    if chunksize == -1:
        return nbytes
    if chunksize <= 0:
        return chunksize
    if nbytes > chunksize:
        return 0
    if op == "update":
        return 0 if nbytes < chunksize and pos != nchunks - 1 else chunksize
    if nchunks > 0 and last_nbytes() < chunksize:
        return 0
    if nbytes < chunksize and pos != nchunks:
        return 0
    return chunksize


# --- cparams -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CParams:
    """Compression parameters of a frame (written to its header, used by ``append_data``)."""

    typesize: int = 1
    codec: int = 5
    clevel: int = 5
    filters: tuple[int, ...] = (0, 0, 0, 0, 0, 1)
    filters_meta: tuple[int, ...] = (0, 0, 0, 0, 0, 0)
    codec_meta: int = 0
    splitmode: int = 3
    blocksize: int = 0
    use_dict: bool = False

    @classmethod
    def make(cls, **options: Any) -> CParams:
        """Build from keyword options (codec by name or code, splitmode by name or code)."""
        codec = options.pop("codec", 5)
        if isinstance(codec, str):
            codec = engine.codec_code(codec)
        splitmode = options.pop("splitmode", 3)
        if isinstance(splitmode, str):
            if splitmode not in SPLITMODE_CODES:
                raise ArgumentError(
                    f"splitmode must be one of {sorted(SPLITMODE_CODES)}, got {splitmode!r}"
                )
            splitmode = SPLITMODE_CODES[splitmode]
        params = cls(
            typesize=int(options.pop("typesize", 1)), codec=int(codec),
            clevel=int(options.pop("clevel", 5)),
            filters=tuple(_six(options.pop("filters", (0, 0, 0, 0, 0, 1)))),
            filters_meta=tuple(_six(options.pop("filters_meta", (0, 0, 0, 0, 0, 0)))),
            codec_meta=int(options.pop("codec_meta", 0)), splitmode=int(splitmode),
            blocksize=int(options.pop("blocksize", 0)),
            use_dict=bool(options.pop("use_dict", False)),
        )  # fmt: skip
        if options:
            raise ArgumentError(f"unknown frame options: {', '.join(sorted(options))}")
        if not 1 <= params.typesize <= 536866816:
            raise ArgumentError(f"typesize must be 1..536866816, got {params.typesize}")
        if not 0 <= params.clevel <= 9:
            raise ArgumentError(f"clevel must be 0..9, got {params.clevel}")
        if params.splitmode not in SPLITMODE_NAMES:
            raise ArgumentError(f"splitmode must be 1..4, got {params.splitmode}")
        if not 0 <= params.codec <= 255:
            raise ArgumentError(f"codec code must be 0..255, got {params.codec}")
        if params.blocksize < 0:
            raise ArgumentError(f"blocksize must be >= 0, got {params.blocksize}")
        return params

    @classmethod
    def from_header(cls, header: FrameHeader) -> CParams:
        return cls(
            typesize=header.typesize, codec=header.codec, clevel=header.clevel,
            filters=header.filters, filters_meta=header.filters_meta,
            codec_meta=header.codec_meta, splitmode=header.splitmode,
            blocksize=header.blocksize, use_dict=header.use_dict,
        )  # fmt: skip

    def compress(self, data: Any) -> bytearray:
        """Compress ``data`` into one chunk with these parameters."""
        return engine.compress_blosc2(
            data, typesize=self.typesize, clevel=self.clevel, codec=self.codec,
            filters=self.filters, filters_meta=self.filters_meta, codec_meta=self.codec_meta,
            splitmode=SPLITMODE_NAMES[self.splitmode], blocksize=self.blocksize,
            use_dict=self.use_dict,
        )  # fmt: skip

    def stune(self) -> dict[str, Any]:
        """The parameters C-Blosc2's block-size tuner uses, as keyword arguments of
        :func:`~bloscpack.blosc.special.stune_blocksize` and ``special_chunk``."""
        return {
            "codec": CODEC_NAMES.get(self.codec, f"codec {self.codec}"), "clevel": self.clevel,
            "filters": self.filters, "splitmode": SPLITMODE_NAMES[self.splitmode],
        }  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {
            "typesize": self.typesize, "codec": self.codec, "clevel": self.clevel,
            "filters": list(self.filters), "filters_meta": list(self.filters_meta),
            "codec_meta": self.codec_meta, "splitmode": SPLITMODE_NAMES[self.splitmode],
            "blocksize": self.blocksize, "use_dict": self.use_dict,
        }  # fmt: skip


def compress_vlmeta(content: bytes) -> bytes:
    """A vlmetalayer value as python-blosc2 stores it: a Blosc2 chunk (zstd, clevel 5,
    typesize 1) of the msgpack bytes."""
    return bytes(engine.compress_blosc2(content, typesize=1, clevel=5, codec="zstd"))


# --- shared frame logic ------------------------------------------------------------------


#: A mutation of a frame, run inside :meth:`FrameBase.exclusive` (readers of the file in this
#: and other processes wait, and see it changed afterwards).
_edit = run_inside(lambda frame: frame.exclusive())


class FrameBase:
    """State and rules shared by contiguous and sparse frames.

    Subclasses provide chunk storage (``_stored_chunk``) and the mutations.  ``offsets`` holds
    the decoded index (int64; negative = special marker), decoded on first use; until then
    :meth:`entry` decodes single entries.
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
        """The block a read runs in (see :meth:`bloscpack.io.ByteSource.consistent`)."""
        return contextlib.nullcontext()

    def exclusive(self) -> contextlib.AbstractContextManager[None]:
        """The block an in-place change runs in: an exclusive lock on the file."""
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
        if header.header_len <= len(first):
            head = first[: header.header_len]
        else:
            head = read(0, header.header_len, "frame header and metalayers")
        layers = parse_layers(head, HEADER_FIXED_LEN, 0, MAX_METALAYERS, f"{where}: metalayers")
        # index and trailer end the frame: read them at once (with the bytes before them when
        # they are shorter than EDGE_READ)
        end_at = max(header.header_len, min(self._index_at(header), header.frame_len - EDGE_READ))
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
        return check_entry(i, entry, None if self.sparse else self.header.cbytes, where)

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

    def chunk_at(self, i: int, entry: int) -> memoryview | bytes:
        """:meth:`read_chunk` of chunk ``i`` whose index entry (from :meth:`entry`) is
        ``entry``."""
        if entry < 0:
            return self._synthesize(i, chunk_kind(entry))
        return self._stored_chunk(i, entry)

    def read_chunk_items(self, i: int, lo: int, hi: int) -> memoryview | bytes:
        """Chunk ``i``, or when decoding its bytes ``[lo, hi)`` needs only some of its blocks and
        the frame can read them alone, a buffer of the chunk's size holding its header, bstarts
        and those blocks' streams (see :mod:`bloscpack.blosc.partial`)."""
        return self.read_chunk(i)

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
            "index": [int(x) if x >= 0 else _hex(x) for x in self.offsets],
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
                out = self.decompress_chunk(i)
                nbytes = len(out)
                total += nbytes
                if chunksize > 0 and nbytes != chunksize and i != self.nchunks - 1:
                    bad.append(
                        {
                            "index": i,
                            "error": f"chunk holds {nbytes} bytes, frame chunksize is {chunksize}",
                        }
                    )
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
        _check_name(name)
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
        _check_name(name)
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
        chunksize = self._chunksize_after(op, pos, header.nbytes)
        vl = self._vl_blocks() or (self.nchunks == 0 and header.vl_blocks)
        cbytes = self.header.cbytes
        entry = marker_of(header)
        if entry is None:
            entry = self._store_new(data)
            cbytes += len(data)
        offsets = self._offsets_with(pos, entry)
        self._commit(offsets, self.header.nbytes + header.nbytes, cbytes, chunksize, vl,
                     appended=op == "append")  # fmt: skip
        return self.nchunks

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
        _put(self.fixed, "blocksize", blocksize)
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
        _put(header, "frame_len", frame_len)
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
        _put(raw, "header_len", HEADER_FIXED_LEN + len(meta))
        _put(raw, "frame_len", frame_len)
        _put(raw, "nbytes", nbytes)
        _put(raw, "cbytes", cbytes)
        _put(raw, "chunksize", chunksize)
        return bytes(raw) + meta

    def _reparse_header(self, header_bytes: bytes) -> None:
        self.header = FrameHeader.parse(header_bytes, self.name)
        self.fixed = bytearray(self.header.raw)


# --- contiguous frames -------------------------------------------------------------------


class _Storage:
    """Random access to the bytes of a contiguous frame: a file (read-only mmap, or read/write
    by offset) or a ``bytearray``."""

    def __init__(self, source: Any, offset: int, writable: bool, name: str) -> None:
        self.name = name
        self.offset = offset
        self.buffer: bytearray | None = None
        self.source: ByteSource | None = None
        self.fd: int | None = None
        self._edit_lock: FileLock | None = None
        if isinstance(source, bytearray) and writable:
            self.buffer = source
        elif writable:
            path = os.fspath(source)
            try:
                self.fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
            except FileNotFoundError:
                from ..errors import FileNotFound

                raise FileNotFound(f"file {path!r} does not exist") from None
            self._edit_lock = FileLock(self.fd, exclusive=True)
        else:
            self.source = (
                ByteSource(source, name=name) if not isinstance(source, ByteSource) else source
            )

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        if self.source is None:
            return contextlib.nullcontext()
        return self.source.consistent()

    def exclusive(self) -> contextlib.AbstractContextManager[None]:
        """An exclusive ``flock`` on a file changed in place."""
        if self._edit_lock is None:
            return contextlib.nullcontext()
        return self._edit_lock.held()

    def size(self) -> int:
        if self.buffer is not None:
            return len(self.buffer)
        if self.source is not None:  # fixed once the first read block has begun
            return self.source.size() - self.offset
        assert self.fd is not None
        return os.fstat(self.fd).st_size - self.offset

    def read(self, pos: int, n: int, what: str) -> memoryview | bytes:
        size = self.size()
        if pos < 0 or n < 0 or pos + n > size:
            raise TruncatedError(
                f"{self.name}: {what} at offset {pos} needs {n} bytes, the frame has {size}"
            )
        if self.buffer is not None:
            return bytes(self.buffer[pos : pos + n])  # a copy: the buffer may be resized later
        if self.source is not None:
            return self.source.read(self.offset + pos, n, what)
        assert self.fd is not None
        data = os.pread(self.fd, n, self.offset + pos)
        if len(data) != n:
            raise TruncatedError(f"{self.name}: short read of {what} at {pos}")
        return data

    def read_into(self, pos: int, dest: memoryview, what: str) -> None:
        """Fill ``dest`` with the bytes at ``pos`` (positioned reads of an unmapped file)."""
        if self.source is not None:
            if pos < 0 or pos + dest.nbytes > self.size():
                raise TruncatedError(
                    f"{self.name}: {what} at offset {pos} needs {dest.nbytes} bytes, the frame"
                    f" has {self.size()}"
                )
            self.source.read_into(self.offset + pos, dest, what)
        else:
            dest[:] = self.read(pos, dest.nbytes, what)

    def write(self, pos: int, data: Any) -> None:
        if self.buffer is not None:
            end = pos + len(data)
            if end > len(self.buffer):
                self.buffer.extend(bytes(end - len(self.buffer)))
            self.buffer[pos:end] = data
            return
        assert self.fd is not None
        mv = memoryview(data).cast("B")
        while mv:
            written = os.pwrite(self.fd, mv, self.offset + pos)
            mv = mv[written:]
            pos += written

    def truncate(self, length: int) -> None:
        if self.buffer is not None:
            del self.buffer[length:]
        else:
            assert self.fd is not None
            os.ftruncate(self.fd, self.offset + length)

    def close(self) -> None:
        if self.source is not None:
            self.source.close()
            self.source = None
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.fsync(fd)
            assert self._edit_lock is not None
            self._edit_lock.close(lambda: os.close(fd))


class ContiguousFrame(FrameBase):
    """A contiguous frame in a file (optionally at ``offset`` in a larger file), in memory, or
    in a :class:`~bloscpack.io.ByteSource` (read-only; the frame closes it).

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
        self._storage = _Storage(source, offset, writable, self.name)
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
        header = self.header
        pos = header.header_len + entry
        chunk_header = ChunkHeader.parse(
            self._storage.read(pos, BLOSC2_HEADER_SIZE, f"chunk {i} header")
        )
        cbytes = chunk_header.cbytes
        if cbytes < BLOSC2_HEADER_SIZE or entry + cbytes > header.cbytes:
            raise FormatError(
                f"{self.name}: chunk {i} at offset {entry} with cbytes {cbytes} runs past the"
                f" chunks section ({header.cbytes} bytes)"
            )
        return self._storage.read(pos, cbytes, f"chunk {i}")

    #: Item reads of a newly opened frame that read only the blocks they need; later ones map
    #: the file, whose mapping then serves every read without copies (mapping costs more than
    #: one positioned read of a block, less than several).
    PARTIAL_READS = 1

    def read_chunk_items(self, i: int, lo: int, hi: int) -> memoryview | bytes:
        i = self._check_index(i)
        entry = self._entry(i)
        if entry < 0 or self._storage.source is None or self._partial_reads >= self.PARTIAL_READS:
            return self.chunk_at(i, entry)
        self._partial_reads += 1
        header = self.header
        pos = header.header_len + entry
        head = self._storage.read(
            pos, min(CHUNK_HEAD_READ, header.cbytes - entry), f"chunk {i} header"
        )
        cbytes = ChunkHeader.parse(head).cbytes
        if cbytes < BLOSC2_HEADER_SIZE or entry + cbytes > header.cbytes:
            return self.chunk_at(i, entry)  # which reports it

        def read_into(at: int, dest: memoryview, what: str) -> None:
            self._storage.read_into(pos + at, dest, f"chunk {i} {what}")

        part = partial.read_chunk_items(read_into, head, lo, hi)
        return self.chunk_at(i, entry) if part is None else part

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


def check_order(order: Sequence[int], n: int) -> np.ndarray:
    """Validate a permutation of ``range(n)``."""
    perm = np.asarray(order, dtype=np.int64)
    if perm.shape != (n,) or not np.array_equal(np.sort(perm), np.arange(n)):
        raise ArgumentError(f"order must be a permutation of range({n})")
    return perm


def new_frame_image(
    frame_type: int, cparams: CParams, chunksize: int | None,
    metalayers: Sequence[tuple[str, bytes]], vlmeta_chunks: Sequence[tuple[str, bytes]],
    nthreads: int,
) -> bytes:  # fmt: skip
    """The bytes of an empty frame (header with metalayers, no index, trailer); vlmetalayer
    values are given as stored (compressed) chunks."""
    cs = -1 if chunksize is None else int(chunksize)
    if cs < -1 or cs > MAX_BUFFERSIZE:
        raise ArgumentError(
            f"chunksize must be 0 (variable) or 1..{MAX_BUFFERSIZE}, got {chunksize}"
        )
    if len(vlmeta_chunks) > MAX_VLMETALAYERS_WRITE:
        raise ArgumentError(f"at most {MAX_VLMETALAYERS_WRITE} vlmetalayers")
    raw = build_fixed_header(
        frame_type=frame_type, typesize=cparams.typesize, codec=cparams.codec,
        clevel=cparams.clevel, splitmode=cparams.splitmode, filters=cparams.filters,
        filters_meta=cparams.filters_meta, codec_meta=cparams.codec_meta,
        use_dict=cparams.use_dict, blocksize=cparams.blocksize, chunksize=cs, nthreads=nthreads,
    )  # fmt: skip
    layers = [(name, bytes(content)) for name, content in metalayers]
    names = [n for n, _ in layers]
    if len(set(names)) != len(names):
        raise ArgumentError("metalayer names must be unique")
    meta = pack_metalayers(layers)
    vl = [(name, bytes(chunk)) for name, chunk in vlmeta_chunks]
    trailer = pack_trailer(vl)
    raw[25] = general_flags(cs, False)
    raw[68] = 0xC3 if vl else 0xC2
    _put(raw, "header_len", HEADER_FIXED_LEN + len(meta))
    _put(raw, "frame_len", HEADER_FIXED_LEN + len(meta) + len(trailer))
    return bytes(raw) + meta + trailer


# --- streaming writer --------------------------------------------------------------------


class OnePassWriter:
    """What the one-pass frame writers share: ``append_data`` and the context-manager protocol
    (``close`` when the block succeeds, ``abort`` when it raises)."""

    cparams: CParams

    def append_chunk(self, chunk: Any) -> int:
        raise NotImplementedError

    def append_data(self, data: Any) -> int:
        """Compress ``data`` with the frame's cparams and append it."""
        return self.append_chunk(self.cparams.compress(data))

    def close(self) -> Any:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


class FrameWriter(OnePassWriter):
    """Write a new contiguous frame in one pass: chunks are streamed to a temporary file next
    to ``path`` and the index, trailer and header are written by :meth:`close`, which renames
    the file into place (a failed write leaves nothing behind).  ``path=None`` builds the frame
    in memory (:meth:`close` returns its bytes).

    The result is byte-identical to appending the same chunks one by one with C-Blosc2
    (header ``nthreads`` fields aside, which are given here).
    """

    def __init__(
        self, path: PathLike | None, cparams: CParams, *, chunksize: int | None = None,
        metalayers: Sequence[tuple[str, bytes]] = (), vlmeta: Sequence[tuple[str, bytes]] = (),
        nthreads: int = 1, vlmeta_chunks: Sequence[tuple[str, bytes]] = (),
    ) -> None:  # fmt: skip
        self.cparams = cparams
        vl = [(name, compress_vlmeta(bytes(content))) for name, content in vlmeta]
        vl += [(name, bytes(chunk)) for name, chunk in vlmeta_chunks]
        empty = new_frame_image(FRAME_CONTIGUOUS, cparams, chunksize, metalayers, vl, nthreads)
        head = FrameHeader.parse(empty)
        self._fixed = bytearray(head.raw)
        self._meta = empty[HEADER_FIXED_LEN : head.header_len]
        self._trailer = empty[head.header_len :]
        self._chunksize = head.chunksize
        self._offsets: list[int] = []
        self._nbytes = 0
        self._cbytes = 0
        self._last_nbytes = 0
        self._vl_blocks = False
        self._path = path
        self._cm: Any = atomic_write(path) if path is not None else None
        self._fh: Any = self._cm.__enter__() if self._cm is not None else None
        self._buffer = bytearray()
        self._out(empty[: head.header_len])
        self._closed = False

    def _out(self, data: Any) -> None:
        if self._fh is not None:
            self._fh.write(data)
        else:
            self._buffer += data

    @property
    def nchunks(self) -> int:
        return len(self._offsets)

    def append_chunk(self, chunk: Any) -> int:
        """Append a compressed Blosc2 chunk; returns the number of chunks."""
        data, header = check_new_chunk(chunk)
        n = len(self._offsets)
        self._chunksize = next_chunksize(self._chunksize, "append", n, n, header.nbytes,
                                         lambda: self._last_nbytes)  # fmt: skip
        if n == 0:
            self._vl_blocks = header.vl_blocks
        marker = marker_of(header)
        if marker is None:
            self._out(data)
            self._offsets.append(self._cbytes)
            self._cbytes += len(data)
        else:
            self._offsets.append(marker)
        self._nbytes += header.nbytes
        self._last_nbytes = header.nbytes
        return len(self._offsets)

    def close(self) -> bytes | None:
        """Finish the frame; returns its bytes when it was built in memory."""
        if self._closed:
            return None
        self._closed = True
        try:
            index = encode_index(np.asarray(self._offsets, dtype="<i8")) if self._offsets else b""
            self._out(index + self._trailer)
            raw = self._fixed
            raw[25] = general_flags(self._chunksize, self._vl_blocks)
            hl = HEADER_FIXED_LEN + len(self._meta)
            _put(raw, "frame_len", hl + self._cbytes + len(index) + len(self._trailer))
            _put(raw, "nbytes", self._nbytes)
            _put(raw, "cbytes", self._cbytes)
            _put(raw, "chunksize", self._chunksize)
            if self._fh is not None:
                self._fh.seek(0)
                self._fh.write(raw)
                self._cm.__exit__(None, None, None)
                return None
            self._buffer[:HEADER_FIXED_LEN] = raw
            return bytes(self._buffer)
        except BaseException as exc:
            if self._cm is not None:
                self._cm.__exit__(type(exc), exc, exc.__traceback__)
            raise

    def abort(self) -> None:
        """Discard the frame being written."""
        if not self._closed and self._cm is not None:
            self._closed = True
            err = RuntimeError("frame write aborted")
            with contextlib.suppress(RuntimeError):
                self._cm.__exit__(RuntimeError, err, None)


# --- module-level helpers for integration ------------------------------------------------


def info(path: PathLike) -> dict[str, Any]:
    """JSON-able description of the contiguous frame at ``path``."""
    frame = ContiguousFrame(path)
    try:
        with frame.consistent():
            return frame.info()
    finally:
        frame.close()


def verify(path: PathLike) -> dict[str, Any]:
    """Decode every chunk of the frame at ``path``; ``{"format": "b2frame", "ok", ...}``."""
    try:
        frame = ContiguousFrame(path)
    except BloscpackError as exc:
        return {
            "format": "b2frame",
            "ok": False,
            "nchunks": 0,
            "bad_chunks": [],
            "problems": [str(exc)],
        }
    try:
        with frame.consistent():
            return {"format": "b2frame", **frame.verify()}
    finally:
        frame.close()


DEFAULT_CHUNKSIZE = 4 * 1024 * 1024


def save_bytes(
    data: Any, path: PathLike, chunksize: int = DEFAULT_CHUNKSIZE, **cparams: Any
) -> None:
    """Store the raw bytes of ``data`` (any buffer) in a new contiguous frame at ``path``,
    ``chunksize`` bytes per chunk; ``cparams`` as for :class:`CParams` (typesize default 1)."""
    params = CParams.make(**cparams)
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    mv = memoryview(data).cast("B")
    chunksize = int(chunksize)
    if not 0 < chunksize <= MAX_BUFFERSIZE:
        raise ArgumentError(f"chunksize must be 1..{MAX_BUFFERSIZE}, got {chunksize}")
    chunksize -= chunksize % params.typesize or 0
    if chunksize <= 0:
        raise ArgumentError(f"chunksize must hold at least one item of typesize {params.typesize}")
    with FrameWriter(path, params, chunksize=chunksize) as writer:
        for start in range(0, len(mv), chunksize):
            writer.append_data(mv[start : start + chunksize])


class FrameReader(ReaderBase):
    """A contiguous or sparse frame through the container protocol (``format`` ``b2frame`` or
    ``sframe``): its chunks, special entries synthesized; numpy metadata in its vlmetalayers
    (as :func:`bloscpack.save` writes them) make it an array, else its bytes are 1-d uint8."""

    def __init__(self, core: Any) -> None:
        """``core``: an open :class:`ContiguousFrame` or sparse frame, which the reader owns."""
        self.core = core
        try:
            self.format = "sframe" if core.sparse else "b2frame"
            self.name = core.name
            self.nchunks = n = core.nchunks
            header = core.header
            if header.chunksize > 0:
                if n and not (n - 1) * header.chunksize < header.nbytes <= n * header.chunksize:
                    raise FormatError(
                        f"{core.name}: {n} chunks of chunksize {header.chunksize} cannot hold"
                        f" the {header.nbytes} bytes the header announces"
                    )
                self.sizes = ChunkSizes.uniform(header.chunksize, header.nbytes)
            else:
                self.sizes = ChunkSizes.listed([core.chunk_nbytes(i) for i in range(n)])
                if self.sizes.total != header.nbytes:
                    raise FormatError(
                        f"{core.name}: chunks hold {self.sizes.total} bytes, the header"
                        f" announces {header.nbytes}"
                    )
            names = {name for name, _ in core.vlmeta}
            numpy = self._vlmeta() if names.issuperset(NUMPY_KEYS) else None
            self.description = ArrayDescription.from_metadata(numpy, header.nbytes)
            self._numpy = numpy
        except BaseException:
            core.close()
            raise

    def _vlmeta(self) -> dict[str, Any]:
        return {name: value for name, (_, value) in vlmeta_items(self.core).items()}

    def stored_chunk(self, index: int) -> memoryview | bytes:
        return self.core.read_chunk(index)

    def stored_chunk_items(self, index: int, lo: int, hi: int) -> memoryview | bytes:
        return self.core.read_chunk_items(index, lo, hi)

    def metadata(self) -> dict[str, Any]:
        """The numpy metadata when the vlmetalayers hold it, else all vlmetalayers."""
        return self._numpy if self._numpy is not None else self._vlmeta()

    def stored_metadata(self) -> StoredMetadata:
        items = vlmeta_items(self.core)
        stored = StoredMetadata.of_bytes_or_array(
            {name: value for name, (_, value) in items.items()}, "vlmetalayer",
            metalayers=list(self.core.metalayers), typesize=self.core.header.typesize,
        )  # fmt: skip
        stored.packed = {name: items[name][0] for name in stored.user}
        return stored

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        return self.core.consistent()

    def close(self) -> None:
        self.core.close()


def vlmeta_items(core: FrameBase) -> dict[str, tuple[bytes, Any]]:
    """Every vlmetalayer of a frame: its stored msgpack bytes and its value."""
    items = {}
    for name, _ in core.vlmeta:
        packed = bytes(core.vlmeta_raw(name))
        items[name] = packed, unpack_value(packed, f"{core.name}: vlmetalayer {name!r}")
    return items


def own_options(params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
    """The common options as a frame writer's: ``chunks`` as ``chunksize`` (bytes),
    ``filters`` as filter ids."""
    return params.own(rest, chunks=("chunksize", lambda c: chunk_nbytes(c, dtype, shape, "frame")),
                      filters=("filters", list))  # fmt: skip


def open_reader(source: Any) -> FrameReader:
    """The contiguous frame ``source`` (a path, bytes, a :class:`~bloscpack.io.ByteSource` or
    an open frame, which the reader then owns) as a
    :class:`~bloscpack.containers.base.ContainerReader`."""
    return FrameReader(source if isinstance(source, FrameBase) else ContiguousFrame(source))


def load_bytes(path: PathLike) -> bytes:
    """The concatenated data of every chunk of the frame at ``path``."""
    frame = ContiguousFrame(path)
    try:
        return read_all(frame).tobytes()
    finally:
        frame.close()


def read_all(frame: FrameBase, out: Any = None) -> Any:
    """Decompress every chunk of ``frame`` into ``out`` (a writable buffer of ``nbytes``) or a
    new uint8 numpy array; returns the destination.  Sizes are checked against nbytes."""
    total = frame.header.nbytes
    if out is None:
        try:
            out = np.empty(total, dtype=np.uint8)
        except MemoryError:
            raise FormatError(
                f"{frame.name}: header announces {total} bytes of data, too many to allocate"
            ) from None
    view = memoryview(out).cast("B")
    if len(view) < total:
        raise ArgumentError(f"out holds {len(view)} bytes, the frame has {total}")
    pos = 0
    for i in range(frame.nchunks):
        chunk = frame.read_chunk(i)
        header = validate_chunk(chunk)
        if pos + header.nbytes > total:
            raise FormatError(
                f"{frame.name}: chunks hold more than the {total} bytes the header announces"
            )
        engine.decompress_into(chunk, view[pos : pos + header.nbytes], validated=True)
        pos += header.nbytes
    if pos != total:
        raise FormatError(f"{frame.name}: chunks hold {pos} bytes, the header announces {total}")
    return out


def packed_user(source: Any, dropped: list[str], room: int, reserved: Sequence[str] = ()
                 ) -> list[tuple[str, bytes]]:  # fmt: skip
    """User metadata as frame vlmetalayers (msgpack bytes), at most ``room`` of them."""
    layers: list[tuple[str, bytes]] = []
    for name, value in unreserved_user(source, dropped, reserved):
        if len(name.encode("utf-8")) > MAX_NAME_LEN:
            dropped.append(f"{source.meta.entry} {name!r}: frame vlmetalayer names hold at most"
                           f" {MAX_NAME_LEN} bytes")  # fmt: skip
            continue
        if len(layers) >= room:
            dropped.append(f"{source.meta.entry} {name!r}: a frame holds at most {room} user"
                           " vlmetalayers here")  # fmt: skip
            continue
        packed = source.meta.packed.get(name)
        if packed is None:
            try:
                packed = pack_value(value)
            except (TypeError, ValueError, OverflowError) as exc:
                dropped.append(f"{source.meta.entry} {name!r}: msgpack cannot hold it ({exc})")
                continue
        layers.append((name, packed))
    return layers


class FrameTarget(Target):
    """A contiguous frame of flat chunks (the base of the sparse frame's); an array's numpy
    metadata goes to the vlmetalayers ``dtype``, ``shape``, ``order``, ``container``."""

    fmt = "b2frame"

    OPTIONS = {
        "chunksize": None, "typesize": None, "codec": "zstd", "clevel": 5,
        "filters": (0, 0, 0, 0, 0, 1), "filters_meta": (0, 0, 0, 0, 0, 0), "codec_meta": 0,
        "splitmode": "auto", "blocksize": 0, "use_dict": False, "nthreads": 1,
    }  # fmt: skip

    def __init__(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> None:
        super().__init__(source, copy_chunks)
        opts = take_options(options, self.OPTIONS, self.fmt)
        spec = source.spec
        itemsize = max(spec.dtype.itemsize, 1)
        typesize = opts.pop("typesize") or source.meta.typesize or min(itemsize, 255)
        self.nthreads = int(opts.pop("nthreads"))
        chunksize = opts.pop("chunksize")
        try:
            self.cparams = CParams.make(typesize=typesize, **opts)
        except BloscpackError:
            raise
        except (TypeError, ValueError) as exc:
            raise ArgumentError(str(exc)) from None
        if chunksize is None and source.spans and self._copyable(source.first_chunk_header()):
            self.spans = [span for span in source.spans if span[1]]  # the source's layout
        else:
            size = FRAME_CHUNK_NBYTES if chunksize is None else int(chunksize)
            if size < 1:
                raise ArgumentError(f"chunksize must be a positive number of bytes, got {size}")
            size = max(itemsize, size - size % itemsize)
            self.spans = flat_spans(source.nbytes, size)
        vl: list[tuple[str, bytes]] = []
        if source.meta.is_array:
            vl = [(k, pack_value(v)) for k, v in numpy_metadata(spec).items()]
        reserved = NUMPY_KEYS if source.meta.is_array else ()
        self.vlmeta = vl + packed_user(
            source, self.dropped, MAX_VLMETALAYERS_WRITE - len(vl), reserved
        )
        self.layers = kept_metalayers(source, self.dropped, MAX_METALAYERS, True)

    def accepts_format(self, header: ChunkHeader) -> bool:
        return (
            header.extended
            and not header.lazy
            and header.nbytes > 0
            and marker_fits(header, self.cparams.typesize)
        )

    def write(self, path: str) -> None:
        with self.writer(path, self.cparams, None, self.layers, self.vlmeta,
                         self.nthreads) as append:  # fmt: skip
            self._write_spans(
                self.spans, False, append, lambda data: append(self.cparams.compress(data))
            )

    @staticmethod
    @contextlib.contextmanager
    def writer(path: str, cparams: CParams, chunksize: int | None,
               metalayers: list[tuple[str, bytes]], vlmeta: list[tuple[str, bytes]],
               nthreads: int) -> Iterator[Callable[[Any], Any]]:  # fmt: skip
        """A function appending one chunk to a new frame at ``path`` (the frame is complete
        when the block ends)."""
        with FrameWriter(path, cparams, chunksize=chunksize, metalayers=metalayers,
                         vlmeta=vlmeta, nthreads=nthreads) as writer:  # fmt: skip
            yield writer.append_chunk


ConversionTarget = FrameTarget


__all__ = [
    "CParams", "ContiguousFrame", "ConversionTarget", "FrameBase", "FrameHeader",
    "FrameReader", "FrameTarget", "FrameWriter", "OnePassWriter", "info", "load_bytes",
    "open_reader", "own_options", "packed_user", "read_all", "save_bytes", "sniff", "verify",
    "vlmeta_items",
]  # fmt: skip
