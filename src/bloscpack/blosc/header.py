"""The Blosc chunk header: 16 bytes (Blosc1, version 2) or 32 bytes (Blosc2, versions 3-6).

Pure format code: bytes in, a frozen record out, and back.  No compression happens here.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from functools import cached_property, lru_cache

from ..errors import ChunkError, TruncatedError

BLOSC1_HEADER_SIZE = 16
BLOSC2_HEADER_SIZE = 32
MAX_BUFFERSIZE = 2147483615  # INT_MAX - BLOSC2_MAX_OVERHEAD
BLOSC1_MAX_BUFFERSIZE = 2147483631  # C-Blosc 1.x: INT_MAX - BLOSC_MAX_OVERHEAD (16)
MAX_BLOCKSIZE = 536866816
MAX_TYPESIZE = 536866816
BLOSC1_VERSION = 2
BLOSC2_VERSION = 5
BLOSC2_VL_VERSION = 6
SNAPPY_FORMAT = 2  # codec format of snappy chunks (flags bits 5-7), which C-Blosc2 cannot read

_BASE = struct.Struct("<BBBBiii")
_EXTENDED = struct.Struct("<6sBB6sBB")

# flags (byte 2)
FLAG_SHUFFLE = 0x01
FLAG_MEMCPYED = 0x02
FLAG_BITSHUFFLE = 0x04
FLAG_DELTA = 0x08
FLAG_NOT_SPLIT = 0x10
EXTENDED_MARK = FLAG_SHUFFLE | FLAG_BITSHUFFLE

# blosc2_flags (byte 31)
B2_DICT = 0x01
B2_BIGENDIAN = 0x02
B2_LAZY = 0x08
B2_INSTRUMENTED = 0x80
# blosc2_flags2 (byte 30)
B2_VL_BLOCKS = 0x01


class Filter(IntEnum):
    """Filter ids of the Blosc2 filter pipeline."""

    NOFILTER = 0
    SHUFFLE = 1
    BITSHUFFLE = 2
    DELTA = 3
    TRUNC_PREC = 4
    NDCELL = 32
    NDMEAN = 33
    BYTEDELTA = 35
    INT_TRUNC = 36


#: Filter ids by lower-case name (``shuffle``: 1, ``delta``: 3, ...).
FILTER_IDS: dict[str, int] = {f.name.lower(): int(f) for f in Filter}


class Special(IntEnum):
    """Special-value kinds (blosc2_flags bits 4-6)."""

    NONE = 0
    ZEROS = 1
    NAN = 2
    VALUE = 3
    UNINIT = 4


class ChunkKind(StrEnum):
    """The layout variant of a chunk."""

    REGULAR = "regular"
    EMPTY = "empty"
    MEMCPYED = "memcpyed"
    SPECIAL = "special"
    VL_BLOCKS = "vlblocks"
    LAZY = "lazy"


# Codec codes as stored in the Blosc2 udcodec byte and frame headers.
CODEC_CODES: dict[str, int] = {
    "blosclz": 0,
    "lz4": 1,
    "lz4hc": 2,
    "snappy": 3,
    "zlib": 4,
    "zstd": 5,
}
CODEC_NAMES: dict[int, str] = {v: k for k, v in CODEC_CODES.items()}
#: The codecs every writer compresses with, Blosc1 and Blosc2 chunks alike: the one list that
#: the writers, the options (``codec``, ``cname``) and ``blpk -c`` take (snappy chunks are
#: only read: no maintained C-Blosc writes them, and C-Blosc2 cannot read them).
WRITABLE_CODECS = tuple(name for name in CODEC_CODES if name != "snappy")
#: The split modes C-Blosc2 compresses with (``splitmode``), by name.
SPLIT_MODES = {"always": 1, "never": 2, "auto": 3, "forward_compat": 4}
# Globally registered codec plugins (udcodec ids; user-defined codecs are 160..255).
REGISTERED_CODEC_NAMES: dict[int, str] = {
    32: "ndlz", 33: "zfp_acc", 34: "zfp_prec", 35: "zfp_rate", 36: "openhtj2k", 37: "grok",
    38: "openzl", 39: "j2k", 40: "htj2k",
}  # fmt: skip
# Codec *format* (flags bits 5-7) of a chunk; lz4 and lz4hc share format 1.
FORMAT_NAMES: dict[int, str] = {
    0: "blosclz", 1: "lz4", 2: "snappy", 3: "zlib", 4: "zstd", 6: "udcodec",
}  # fmt: skip


def codec_name(code: int) -> str:
    """Name of a Blosc2 codec code (``blosclz``, ..., ``zfp_acc``, or ``codec<N>``)."""
    return CODEC_NAMES.get(code) or REGISTERED_CODEC_NAMES.get(code, f"codec{code}")


@dataclass(frozen=True)
class ChunkHeader:
    """A decoded Blosc chunk header, Blosc1 (16 bytes) or Blosc2 (32 bytes).

    ``parse`` and ``pack`` round-trip exactly: every byte is a field.
    """

    version: int
    versionlz: int
    flags: int
    typesize: int
    nbytes: int
    blocksize: int
    cbytes: int
    filters: tuple[int, ...] = field(default=(0, 0, 0, 0, 0, 0))
    udcodec: int = 0
    compcode_meta: int = 0
    filters_meta: tuple[int, ...] = field(default=(0, 0, 0, 0, 0, 0))
    blosc2_flags2: int = 0
    blosc2_flags: int = 0
    extended: bool = False

    @classmethod
    def parse(cls, buf: bytes | bytearray | memoryview) -> ChunkHeader:
        """Decode the header at the start of ``buf``.  Headers are cached by their bytes (a
        header is immutable, and a chunk's header is parsed at every step that handles it)."""
        return _parse(header_bytes(buf))

    def pack(self) -> bytes:
        """Encode the header to its 16 or 32 bytes."""
        base = _BASE.pack(
            self.version, self.versionlz, self.flags, self.typesize,
            self.nbytes, self.blocksize, self.cbytes,
        )  # fmt: skip
        if not self.extended:
            return base
        return base + _EXTENDED.pack(
            bytes(self.filters), self.udcodec, self.compcode_meta,
            bytes(self.filters_meta), self.blosc2_flags2, self.blosc2_flags,
        )  # fmt: skip

    # --- derived properties ---------------------------------------------------------------

    @cached_property
    def size(self) -> int:
        """Header length in bytes (16 or 32)."""
        return BLOSC2_HEADER_SIZE if self.extended else BLOSC1_HEADER_SIZE

    @cached_property
    def memcpyed(self) -> bool:
        """The data is stored raw after the header."""
        return bool(self.flags & FLAG_MEMCPYED)

    @cached_property
    def split(self) -> bool:
        """Blocks are split into one stream per byte of the type."""
        return not self.flags & FLAG_NOT_SPLIT

    @cached_property
    def codec_format(self) -> int:
        """Codec format from flags bits 5-7 (lz4 and lz4hc share 1; 6 = see udcodec)."""
        return self.flags >> 5

    @property
    def codec(self) -> str:
        """Codec name; for Blosc1 headers lz4hc chunks read as ``lz4``."""
        if self.extended:
            return codec_name(self.udcodec)
        return FORMAT_NAMES.get(self.codec_format, f"format{self.codec_format}")

    @cached_property
    def pipeline(self) -> tuple[int, ...]:
        """The six filter slots, also for Blosc1 headers (mapped from their flags)."""
        if self.extended:
            return self.filters
        slots = [0] * 6
        if self.flags & FLAG_SHUFFLE and self.typesize > 1:
            slots[5] = Filter.SHUFFLE
        elif self.flags & FLAG_BITSHUFFLE:
            slots[5] = Filter.BITSHUFFLE
        if self.flags & FLAG_DELTA:
            slots[4] = Filter.DELTA
        return tuple(slots)

    @property
    def shuffle(self) -> int:
        """0 no shuffle, 1 byte shuffle, 2 bit shuffle (the last such filter in the pipeline)."""
        kinds = [f for f in self.pipeline if f in (Filter.SHUFFLE, Filter.BITSHUFFLE)]
        return int(kinds[-1]) if kinds else 0

    @cached_property
    def dictionary(self) -> bool:
        """A compression dictionary follows the bstarts."""
        return bool(self.blosc2_flags & B2_DICT)

    @property
    def big_endian(self) -> bool:
        """The writer was big-endian."""
        return bool(self.blosc2_flags & B2_BIGENDIAN)

    @cached_property
    def lazy(self) -> bool:
        """Lazy chunk: bstarts plus a trailer pointing at the data in its frame."""
        return bool(self.blosc2_flags & B2_LAZY)

    @property
    def instrumented(self) -> bool:
        """The codec was instrumented (output is statistics, not data)."""
        return bool(self.blosc2_flags & B2_INSTRUMENTED)

    @cached_property
    def special(self) -> Special | int:
        """Special-value kind (0 none, 1 zeros, 2 NaN, 3 repeated value, 4 uninit)."""
        kind = (self.blosc2_flags >> 4) & 0x07 if self.extended else 0
        return Special(kind) if kind <= 4 else kind

    @cached_property
    def vl_blocks(self) -> bool:
        """Variable-length blocks (version 6): the blocksize field holds nblocks."""
        return bool(self.blosc2_flags2 & B2_VL_BLOCKS) and self.extended

    @cached_property
    def nblocks(self) -> int:
        """Number of blocks of a regular chunk."""
        if self.vl_blocks:
            return self.blocksize
        if self.blocksize <= 0:
            return 0
        return -(-self.nbytes // self.blocksize)

    @cached_property
    def real_typesize(self) -> int:
        """Typesize to use: a repeated-value chunk stores its value's size as cbytes - 32."""
        if self.special == Special.VALUE:
            return self.cbytes - BLOSC2_HEADER_SIZE
        return self.typesize

    @cached_property
    def kind(self) -> ChunkKind:
        """The layout variant the header announces (special beats lazy, as in C-Blosc2)."""
        if self.special:
            return ChunkKind.SPECIAL
        if self.lazy:
            return ChunkKind.LAZY
        if self.memcpyed:
            return ChunkKind.MEMCPYED
        if self.nbytes == 0:
            return ChunkKind.EMPTY
        if self.vl_blocks:
            return ChunkKind.VL_BLOCKS
        return ChunkKind.REGULAR

    @cached_property
    def blocks_alone(self) -> bool:
        """Each block decodes on its own (C-Blosc2's getitem reads only the header, bstarts
        and the streams of the blocks it decodes): a regular chunk of whole items per block,
        without dictionary, delta or Snappy."""
        ts = max(self.real_typesize, 1)
        return (
            self.kind == ChunkKind.REGULAR
            and not self.dictionary
            and self.codec_format != SNAPPY_FORMAT
            and Filter.DELTA not in self.pipeline
            and self.blocksize > 0
            and self.blocksize % ts == 0
        )

    @property
    def blosc_version(self) -> int:
        """1 for a chunk C-Blosc 1.x can read (version byte <= 2, 16-byte header), else 2."""
        return 1 if self.version <= BLOSC1_VERSION and not self.extended else 2


def header_bytes(buf: bytes | bytearray | memoryview) -> bytes:
    """The bytes a chunk header can occupy at the start of ``buf`` (up to 32): the key of the
    header cache."""
    mv = memoryview(buf)
    if mv.format != "B" or mv.ndim != 1:
        mv = mv.cast("B")
    return bytes(mv[:BLOSC2_HEADER_SIZE])


@lru_cache(maxsize=1024)
def _parse(head: bytes) -> ChunkHeader:
    """Decode the header at the start of ``head`` (at most 32 bytes)."""
    if len(head) < BLOSC1_HEADER_SIZE:
        raise TruncatedError(
            f"Blosc chunk too short: {len(head)} bytes, a header needs {BLOSC1_HEADER_SIZE}"
        )
    version, versionlz, flags, typesize, nbytes, blocksize, cbytes = _BASE.unpack_from(head)
    if version == 0 or version > BLOSC2_VL_VERSION:
        raise ChunkError(f"not a Blosc chunk: header version {version} (expected 1..6)")
    extended = (flags & EXTENDED_MARK) == EXTENDED_MARK and version >= 3
    if not extended:
        return ChunkHeader(version, versionlz, flags, typesize, nbytes, blocksize, cbytes)
    if len(head) < BLOSC2_HEADER_SIZE:
        raise TruncatedError(
            f"Blosc2 chunk too short: {len(head)} bytes, its header needs {BLOSC2_HEADER_SIZE}"
        )
    filters, udcodec, meta, fmeta, flags2, b2flags = _EXTENDED.unpack_from(head, 16)
    return ChunkHeader(
        version, versionlz, flags, typesize, nbytes, blocksize, cbytes,
        tuple(filters), udcodec, meta, tuple(fmeta), flags2, b2flags, True,
    )  # fmt: skip
