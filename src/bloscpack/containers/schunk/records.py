"""The records of a Blosc2 frame, parsed and built with C-Blosc2's layout rules: the fixed
header, the metalayers and vlmetalayers, the trailer, the offsets index and the special-chunk
markers in it.

A frame is ``header | chunks | index chunk | trailer``:

* the header is a 14-element msgpack array (87 fixed bytes) followed by the metalayers
  (``93 cd <map_size> de <n> {name: d2 offset} dc <n> (c6 len content)``, offsets absolute);
* chunks are stored back to back from ``header_len``; the index chunk (a Blosc2 chunk of i64
  offsets relative to ``header_len``, negative = special chunk) sits at ``header_len + cbytes``;
* the trailer holds the vlmetalayers (each a Blosc2 chunk of msgpack), its own length and an
  empty fingerprint.

Every length and offset read from the input is checked against the input before it is used.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import msgpack
import numpy as np

from ... import engine
from ...blosc import layout
from ...blosc.header import BLOSC2_HEADER_SIZE, FLAG_MEMCPYED, ChunkHeader, Special
from ...blosc.layout import check_header, validate_chunk
from ...blosc.special import special_chunk, stune_blocksize
from ...errors import ArgumentError, FormatError, TruncatedError, UnsupportedError

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
#: The index file of a sparse frame (a directory): a frame with no chunks section.
INDEX_FILE = "chunks.b2frame"
#: The file that makes a sparse frame's directory readable (it indexes the others): written
#: last where the files appear one by one (uploads to a URL).
PUBLISHED_LAST = (INDEX_FILE,)

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


def sniff_sparse(head: bytes) -> bool:
    """True if ``head`` (the first bytes of a file) starts a sparse frame's index file
    (``chunks.b2frame``): a Blosc2 frame of frame type 1."""
    return sniff(head) and len(head) > 26 and head[26] == FRAME_SPARSE


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
    raw[71:77] = bytes(filter_slots(filters))
    raw[77] = codec
    raw[78] = codec_meta
    raw[79:85] = bytes(filter_slots(filters_meta))
    raw[85] = 1 if use_dict else 0
    put_field(raw, "typesize", typesize)
    put_field(raw, "blocksize", blocksize)
    put_field(raw, "chunksize", chunksize)
    put_field(raw, "nthreads_comp", nthreads)
    put_field(raw, "nthreads_decomp", nthreads)
    return raw


def filter_slots(values: Sequence[int]) -> list[int]:
    out = [int(v) & 0xFF for v in values]
    if len(out) > 6:
        raise ArgumentError(f"at most 6 filter slots, got {len(out)}")
    return out + [0] * (6 - len(out))


def put_field(raw: bytearray, name: str, value: int) -> None:
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


def check_name(name: str) -> bytes:
    encoded = name.encode("utf-8")
    if not 0 < len(encoded) <= MAX_NAME_LEN:
        raise ArgumentError(f"metalayer name {name!r} must be 1..{MAX_NAME_LEN} bytes of UTF-8")
    return encoded


def _pack_layers(layers: Sequence[tuple[str, bytes]], base: int) -> tuple[bytes, int]:
    """``93 cd map_size de n {name: offset} dc n (c6 len content)``; offsets are ``base`` + the
    position in the returned bytes.  Returns (bytes, end of the offsets map)."""
    names = [check_name(name) for name, _ in layers]
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


_ENTRY = struct.Struct("<q")


def index_entry(chunk: Any, header: ChunkHeader, i: int) -> int | None:
    """Entry ``i`` of an index chunk whose header :func:`check_index` returned, decoding (and
    validating) only the block that holds it; None when the index is not made of 8-byte items
    (decode it whole then)."""
    if header.real_typesize != 8 or not 0 <= i < header.nbytes // 8:
        return None
    if header.kind == layout.ChunkKind.MEMCPYED:  # stored as they are (the
        return int(_ENTRY.unpack_from(chunk, header.size + 8 * i)[0])  # header was checked)
    out = np.empty(1, dtype="<i8")
    block = 8 * i // header.blocksize
    if header.blocks_alone and layout.blocks_ok(chunk, header, block, block + 1):
        engine.getitem_into(chunk, i, 1, out, validated=True, header=header)
    else:  # which checks (and names what fails) as it decodes
        engine.getitem_into(chunk, i, 1, out)
    return int(out[0])


def check_entry(i: int, entry: int, chunks_cbytes: int | None, where: str) -> int:
    """``entry`` (index entry of chunk ``i``) when it is an offset at which a chunk header fits
    in a chunks section of ``chunks_cbytes`` bytes (None: sparse frames, where it is a chunk
    file id) or a special marker."""
    if entry < 0:
        if (entry >> 56) & 0xFF not in MARKER_KINDS:
            raise FormatError(
                f"{where}: index entry {i} ({hex_entry(entry)}) is not a special marker"
            )
    elif chunks_cbytes is not None and entry > chunks_cbytes - BLOSC2_HEADER_SIZE:
        raise FormatError(
            f"{where}: chunk {i} at offset {entry} lies beyond the chunks section"
            f" ({chunks_cbytes} bytes)"
        )
    return entry


def hex_entry(entry: Any) -> str:
    return f"0x{int(entry) & (2**64 - 1):016x}"


def chunk_kind(entry: int) -> Special:
    """Special kind of a negative index entry."""
    kind = MARKER_KINDS.get((entry >> 56) & 0xFF)
    if kind is None:
        raise FormatError(
            f"index entry {hex_entry(entry)} is neither an offset nor a special marker"
        )
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
    """The index marker a chunk is stored as (zeros / NaN / uninit), or None (also for one
    of a partial item: a marker reads back as whole items, so that chunk is stored)."""
    kind = header.special
    if kind not in SPECIAL_MARKERS or header.nbytes % max(header.typesize, 1):
        return None
    return SPECIAL_MARKERS.get(int(kind))


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
