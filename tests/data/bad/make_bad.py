"""Write the crafted bad files of this directory and their MANIFEST.json from the golden files
in ``tests/data``: one hostile field per file.  Run from anywhere; the output is the same bytes
every time (``python tests/data/bad/make_bad.py [output directory]``).

Each entry of the manifest names the file, its format, the field changed and its value, and what
every entry point must do with it (``tests/test_bad_files.py`` checks them all, each under the
memory budget): raise ``error`` (a class of ``bloscpack.errors``) with ``message`` in the text,
from ``load``, from ``open`` or the full read after it, and from ``iter_chunks``; ``verify``
reports ``ok: false`` with ``verify`` (default: ``message``) in one of its entries; ``detect``
names ``format``.  Entries made elsewhere (``origin`` says where, e.g. a fuzz finding) are kept
as they are.
"""

from __future__ import annotations

import json
import shutil
import struct
import sys
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE.parent
GENERATED = "tests/data/bad/make_bad.py"

Mutate = Callable[[Path], None]


def _patch(path: Path, offset: int, fmt: str, value: Any) -> None:
    """Pack ``value`` as ``fmt`` at ``offset`` of the file ``path``."""
    data = bytearray(path.read_bytes())
    struct.pack_into(fmt, data, offset, value)
    path.write_bytes(bytes(data))


def at(offset: int, fmt: str, value: Any) -> Mutate:
    return lambda path: _patch(path, offset, fmt, value)


def in_file(member: str, mutate: Mutate) -> Mutate:
    """Apply ``mutate`` to the file ``member`` of a directory container."""
    return lambda root: mutate(root / member)


def text(content: str) -> Mutate:
    return lambda path: path.write_text(content)


# --- where fields are ---------------------------------------------------------------------------


def frame_fields(path: Path) -> dict[str, int]:
    """Offsets in a contiguous frame (or a sparse frame's index frame): the index chunk, its first
    entry, the trailer and its length field."""
    data = path.read_bytes()
    header_len = struct.unpack_from(">i", data, 11)[0]
    frame_len = struct.unpack_from(">Q", data, 16)[0]
    cbytes = struct.unpack_from(">q", data, 39)[0]
    sparse = data[26] == 1
    index = header_len + (0 if sparse else cbytes)
    trailer_len = struct.unpack_from(">I", data, frame_len - 22)[0]
    flags = data[index + 2]
    entries = index + 32 if flags & 0x02 else None  # a memcpyed index: raw entries after it
    return {"index": index, "entries": entries or -1, "trailer": frame_len - trailer_len,
            "trailer_len": frame_len - 22, "header_len": header_len}  # fmt: skip


def index_entry(k: int, value: int) -> Mutate:
    def mutate(path: Path) -> None:
        entries = frame_fields(path)["entries"]
        assert entries > 0, f"{path}: the index is not stored raw"
        _patch(path, entries + 8 * k, "<q", value)

    return mutate


def frame_field(name: str, delta: int, fmt: str, value: Any) -> Mutate:
    return lambda path: _patch(path, frame_fields(path)[name] + delta, fmt, value)


def first_metalayer_offset(value: int) -> Mutate:
    """The offset of the first metalayer (its ``d2`` i32 after the name in the header map)."""

    def mutate(path: Path) -> None:
        data = path.read_bytes()
        name_len = data[94] & 0x1F  # 87: 93 cd <u16> de <u16 N>, then a0|len name
        _patch(path, 95 + name_len + 1, ">i", value)

    return mutate


def first_vlmeta_offset(value: int) -> Mutate:
    def mutate(path: Path) -> None:
        data = path.read_bytes()
        trailer = frame_fields(path)["trailer"]
        start = trailer + 2  # 94 01
        assert data[start] == 0x93 and data[start + 4] == 0xDE, "no vlmeta map"
        name_len = data[start + 7] & 0x1F
        _patch(path, start + 8 + name_len + 1, ">i", value)

    return mutate


def chunk_bstart(k: int, value: int) -> Mutate:
    """bstarts[k] of a Blosc2 chunk file (32-byte header)."""
    return at(32 + 4 * k, "<i", value)


def first_stream_csize(value: int) -> Mutate:
    def mutate(path: Path) -> None:
        data = path.read_bytes()
        size = 32 if data[2] & 0x05 == 0x05 else 16
        start = struct.unpack_from("<i", data, size)[0]
        _patch(path, start, "<i", value)

    return mutate


def blp_meta(field_offset: int, value: int) -> Mutate:
    """A field of the metadata header of a ``.blp`` (it starts at byte 32)."""
    return at(32 + field_offset, "<I", value)


def blp_offset(k: int, value: int) -> Mutate:
    """Offset entry ``k`` of a ``.blp`` without metadata."""
    return at(32 + 8 * k, "<q", value)


def blp_swap_with_order_record(i: int, j: int) -> Mutate:
    """Give a ``.blp`` without metadata (4-byte digests, offsets) an order record, then swap
    chunks ``i`` and ``j`` (of the same size) together with their digests."""

    def mutate(path: Path) -> None:
        data = bytearray(path.read_bytes())
        (nchunks,) = struct.unpack_from("<q", data, 16)
        offsets = struct.unpack_from(f"<{nchunks}q", data, 32)
        spans = [(at, at + struct.unpack_from("<i", data, at + 12)[0] + 4) for at in offsets]
        tags = b"".join(data[end - 4 : end] for _, end in spans)
        head = struct.pack("<qqI", nchunks, len(data), 4)
        crc = zlib.crc32(tags + head) & 0xFFFFFFFF
        data += tags + head + struct.pack("<I8s", crc, b"BLPORDER")
        (a, b), (c, d) = spans[i], spans[j]
        data[a:b], data[c:d] = data[c:d], data[a:b]
        path.write_bytes(data)

    return mutate


def bcolz_sizes(shape: list[int]) -> Mutate:
    return in_file("meta/sizes", text(json.dumps({"shape": shape, "nbytes": 40, "cbytes": 80})))


def bcolz_storage(**changes: Any) -> Mutate:
    def mutate(root: Path) -> None:
        storage = json.loads((root / "meta/storage").read_text())
        storage.update(changes)
        (root / "meta/storage").write_text(json.dumps(storage))

    return mutate


#: The embed.b2e of an empty DictStore, as python-blosc2 4.14.1 writes it
#: (``blosc2.DictStore("x.b2z", mode="w").close()``).
EMBED_B2E = bytes.fromhex(
    "9ea862326672616d6500d20000007ccf00000000000000f5a412005502d30000000000000000d30000000000"
    "000000d200000001d200000000d200002000d10002d10002c3d8060000000000010500000000000000000093"
    "cd0013de0001a6623264696374d20000006ddc0001c60000000a81a776657273696f6e01940193cd001bde00"
    "01af6573746f72655f6d65746164617461d200000021dc0001c60000003c050107011c0000001c0000003c00"
    "00000000000000010500000000000000000082a9656d6265645f6d617080ae63757272656e745f6f66667365"
    "7400ce00000079d80000000000000000000000000000000000"
)


def b2z(*names: str) -> Mutate:
    """Replace the file (an NDArray) by a python-blosc2 zip store (``.b2z``) holding it as each
    member of ``names``, then ``embed.b2e``: stored members, fixed dates."""

    def mutate(path: Path) -> None:
        data = path.read_bytes()
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
            for name in (*names, "embed.b2e"):
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                archive.writestr(info, EMBED_B2E if name == "embed.b2e" else data)

    return mutate


def zip_end(path: Path) -> int:
    """The offset of the end of central directory record of a zip without a comment."""
    return path.stat().st_size - 22


def end_entries(n: int) -> Mutate:
    """Set the number of members the end record announces (on this disk and in all) to ``n``."""

    def mutate(path: Path) -> None:
        at = zip_end(path)
        _patch(path, at + 8, "<H", n)
        _patch(path, at + 10, "<H", n)

    return mutate


def central(k: int, offset: int, fmt: str, value: Any) -> Mutate:
    """Pack ``value`` at ``offset`` of the zip's central directory entry ``k``."""

    def mutate(path: Path) -> None:
        data = path.read_bytes()
        pos = struct.unpack_from("<I", data, zip_end(path) + 16)[0]
        for _ in range(k):
            pos += 46 + sum(struct.unpack_from("<3H", data, pos + 28))
        _patch(path, pos + offset, fmt, value)

    return mutate


def chained(*mutations: Mutate) -> Mutate:
    def mutate(path: Path) -> None:
        for m in mutations:
            m(path)

    return mutate


# --- the entries --------------------------------------------------------------------------------

CHUNK = "blosc2/chunks/m_lz4_shuffle.chunk"  # 16384 bytes, 1 block of 4 split streams, 4209 bytes
BLP = "bloscpack/cli_chunk_1K.blp"  # 2 chunks of 1024 + 976 bytes, offsets, adler32, no metadata
BLP_META = "bloscpack/cli_metadata.blp"  # metadata (zlib), offsets
BLP_PLAIN = "bloscpack/cli_checksum_None.blp"  # 4 chunks of 65536 bytes, no checksums
#: Where chunk 0 of BLP_PLAIN starts: after the header and 4 + 40 offset slots.
BLP_AT = 32 + 44 * 8
FRAME = "blosc2/frames/many_chunks.b2frame"  # 3000 chunks of 64 bytes, a compressed index
FRAME_RAW = "blosc2/frames/meta1.b2frame"  # one metalayer, a memcpyed index
VLMETA = "blosc2/frames/vlmeta.b2frame"
B2ND = "blosc2/frames/nd_1d_i64.b2nd"
SFRAME = "blosc2/sframes/insert.b2frame"  # 5 chunk files, a memcpyed index
BCOLZ = "bcolz/ca_i4_chunklen4"  # arange(10) int32, chunklen 4: __0, __1 full, __2 2 rows
BCOLZ_OBJECT = "bcolz/ca_object"
#: A frame index entry with bit 63 set and special kind 7 (none exists).
NOT_A_CHUNK = "not a Blosc container"
FILL_VALUE = "blosc2/frames/fill_value_f64.b2frame"  # repeated-value chunks (8000 bytes) inline
#: Where the first chunk of FRAME_RAW starts (its header_len): zstd, typesize 4, 4000 bytes.
AT = 117
UNKNOWN_SPECIAL = struct.unpack("<q", struct.pack("<Q", 0x87 << 56))[0]

#: (file, format, source, field, value, mutation, error, message, more).
ENTRIES: list[tuple[str, str, str, str, Any, Mutate, str, str, dict[str, Any]]] = [
    # raw chunks
    ("chunk_nbytes_2g_cbytes_2g.chunk", "chunk", CHUNK, "nbytes and cbytes of the chunk header",
     [2147483000, 2147483600], chained(at(4, "<i", 2147483000), at(12, "<i", 2147483600)),
     "TruncatedError", "header says cbytes 2147483600, buffer has 4209", {}),
    ("chunk_nbytes_2g.chunk", "chunk", CHUNK, "nbytes of the chunk header", 2147483000,
     at(4, "<i", 2147483000), "NotAContainer", NOT_A_CHUNK, {"detect": "NotAContainer"}),
    ("chunk_typesize_0.chunk", "chunk", CHUNK, "typesize of the chunk header", 0,
     at(3, "<B", 0), "NotAContainer", NOT_A_CHUNK, {"detect": "NotAContainer"}),
    ("chunk_blocksize_0.chunk", "chunk", CHUNK, "blocksize of the chunk header", 0,
     at(8, "<i", 0), "NotAContainer", NOT_A_CHUNK, {"detect": "NotAContainer"}),
    ("chunk_blocksize_huge.chunk", "chunk", CHUNK, "blocksize of the chunk header", 2**30,
     at(8, "<i", 2**30), "NotAContainer", NOT_A_CHUNK, {"detect": "NotAContainer"}),
    ("chunk_cbytes_small.chunk", "chunk", CHUNK, "cbytes of the chunk header", 20,
     at(12, "<i", 20), "NotAContainer", NOT_A_CHUNK, {"detect": "NotAContainer"}),
    ("chunk_bstart_beyond.chunk", "chunk", CHUNK, "bstarts[0]", 1 << 30,
     chunk_bstart(0, 1 << 30), "ChunkError", "bstarts[0] = 1073741824", {}),
    ("chunk_stream_csize_huge.chunk", "chunk", CHUNK, "csize of the first stream", 1 << 30,
     first_stream_csize(1 << 30), "ChunkError", "csize 1073741824", {}),
    ("chunk_special_zeros_cbytes.chunk", "chunk", "blosc2/chunks/allzero_zstd.chunk",
     "cbytes of a special (zeros) chunk", 40, chained(at(12, "<i", 40)),
     "NotAContainer", NOT_A_CHUNK, {"detect": "NotAContainer"}),
    ("chunk_dict_size_huge.chunk", "chunk", "blosc2/chunks/dict_zstd.chunk",
     "dictionary size (after the 8 bstarts)", 1 << 20, at(64, "<i", 1 << 20), "ChunkError",
     "dictionary size 1048576 out of range 1..131072", {}),
    # .blp
    ("blp_chunk_size_2g.blp", "blp", BLP, "chunk_size of the .blp header", 2130771968,
     at(8, "<i", 2130771968), "IntegrityError", "the header prescribes 2130771968", {}),
    ("blp_nchunks_huge.blp", "blp", BLP, "nchunks of the .blp header", 2**62,
     at(16, "<q", 2**62), "TruncatedError", "offsets section of 4611686018427387924 entries", {}),
    ("blp_offset_beyond.blp", "blp", BLP, "offsets[1]", 1 << 40,
     blp_offset(1, 1 << 40), "FormatError",
     "chunk 1 at offset 1099511627776 lies outside the chunk area [208, 535)", {}),
    ("blp_offset_negative.blp", "blp", BLP, "offsets[0]", -5,
     blp_offset(0, -5), "FormatError", "chunk 0 at offset -5 lies outside the chunk area", {}),
    ("blp_chunks_swapped.blp", "blp", "bloscpack/api_bytes_maxapp0.blp",
     "chunks 0 and 1 (443 bytes each) swapped with their digests, in a file with an order record",
     [0, 1], blp_swap_with_order_record(0, 1), "IntegrityError",
     "chunk 0 is not where it was written", {}),
    ("blp_meta_size_huge.blp", "blp", BLP_META, "meta_size of the metadata header", 2**31,
     blp_meta(12, 2**31), "FormatError", "its header says meta_size 2147483648", {}),
    ("blp_max_meta_size_huge.blp", "blp", BLP_META, "max_meta_size of the metadata header",
     2**32 - 1, blp_meta(16, 2**32 - 1), "TruncatedError",
     "metadata section at offset 32 needs 4294967331 bytes, but the input has 5711", {}),
    ("blp_meta_comp_size_huge.blp", "blp", BLP_META, "meta_comp_size of the metadata header",
     2**32 - 1, blp_meta(20, 2**32 - 1), "FormatError",
     "meta_comp_size 4294967295 exceeds its max_meta_size 560", {}),
    ("blp_last_chunk_huge.blp", "blp", BLP, "last_chunk of the .blp header", 2**31 - 1,
     at(12, "<i", 2**31 - 1), "FormatError",
     "'last_chunk' must be in the range -1 <= n <= 2147483631, not '2147483647'", {}),
    ("blp_chunk_typesize_0.blp", "blp", BLP_PLAIN, "typesize of chunk 0", 0,
     at(BLP_AT + 3, "<B", 0), "ChunkError", "Blosc chunk: typesize 0", {}),
    ("blp_chunk_nbytes_2g.blp", "blp", BLP_PLAIN, "nbytes of chunk 0", 2147483000,
     at(BLP_AT + 4, "<i", 2147483000), "IntegrityError",
     "chunk 0 holds 2147483000 bytes, the", {}),
    ("blp_chunk_blocksize_0.blp", "blp", BLP_PLAIN, "blocksize of chunk 0", 0,
     at(BLP_AT + 8, "<i", 0), "ChunkError", "blocksize 0 out of range 1..536866816", {}),
    ("blp_chunk_cbytes_huge.blp", "blp", BLP_PLAIN, "cbytes of chunk 0", 2**31 - 1,
     at(BLP_AT + 12, "<i", 2**31 - 1), "TruncatedError",
     "chunk 0 at offset 384 needs 2147483647 bytes plus a 0-byte digest, but the input has 5099",
     {}),
    ("blp_chunk_bstart.blp", "blp", BLP_PLAIN, "bstarts[0] of chunk 0", 1 << 30,
     at(BLP_AT + 16, "<i", 1 << 30), "ChunkError",
     "Blosc chunk: bstarts[0] = 1073741824 beyond cbytes 1437", {}),
    # contiguous frames
    ("frame_typesize_0.b2frame", "b2frame", FRAME_RAW, "typesize of the frame header", 0,
     at(48, ">i", 0), "FormatError", "typesize 0 must be > 0", {}),
    ("frame_chunksize_huge.b2frame", "b2frame", FRAME, "chunksize of the frame header",
     2**31 - 1, at(58, ">i", 2**31 - 1), "FormatError",
     "index chunk holds 3000 offsets, the header implies 1 chunks", {}),
    ("frame_header_len_huge.b2frame", "b2frame", FRAME_RAW, "header_len of the frame header",
     2**31 - 1, at(11, ">i", 2**31 - 1), "FormatError",
     "frame_len 1166 leaves no room for the header (2147483647 bytes)", {}),
    ("frame_frame_len_huge.b2frame", "b2frame", FRAME_RAW, "frame_len of the frame header",
     2**40, at(16, ">Q", 2**40), "TruncatedError",
     "header says frame_len 1099511627776, only 1166 bytes are there", {}),
    ("frame_trailer_len_huge.b2frame", "b2frame", FRAME_RAW, "trailer_len of the trailer",
     2**31, frame_field("trailer_len", 0, ">I", 2**31), "FormatError",
     "trailer length 2147483648 out of range", {}),
    ("frame_nbytes_huge.b2frame", "b2frame", FRAME_RAW, "nbytes of the frame header", 2**40,
     at(30, ">q", 2**40), "FormatError",
     "index chunk holds 1 offsets, the header implies 274877907 chunks", {}),
    ("frame_metalayer_offset.b2frame", "b2frame", FRAME_RAW, "offset of the first metalayer",
     2**31 - 1, first_metalayer_offset(2**31 - 1), "TruncatedError",
     "metalayers: entry 'shape' value at 2147483647 needs 5 bytes, 117 available", {}),
    ("frame_vlmeta_offset.b2frame", "b2frame", VLMETA, "offset of the first vlmetalayer",
     2**31 - 1, first_vlmeta_offset(2**31 - 1), "TruncatedError",
     "vlmetalayers: entry 'str' value at 2147483647 needs 5 bytes, 551 available", {}),
    ("frame_index_entry_beyond.b2frame", "b2frame", FRAME_RAW, "index entry 0", 1 << 40,
     index_entry(0, 1 << 40), "FormatError",
     "chunk 0 at offset 1099511627776 lies beyond the chunks section (974 bytes)", {}),
    ("frame_index_entry_special.b2frame", "b2frame", FRAME_RAW,
     "index entry 0: an unknown special kind", UNKNOWN_SPECIAL, index_entry(0, UNKNOWN_SPECIAL),
     "FormatError", "index entry 0 (0x8700000000000000) is not a special marker", {}),
    ("frame_index_cbytes.b2frame", "b2frame", FRAME, "cbytes of the index chunk", 2**31 - 1,
     frame_field("index", 12, "<i", 2**31 - 1), "TruncatedError",
     "index chunk of 2147483647 bytes, only 3031 before the trailer", {}),
    # the chunks of a frame (no checksum stands before their fields)
    ("frame_chunk_typesize_0.b2frame", "b2frame", FRAME_RAW, "typesize of chunk 0", 0,
     at(AT + 3, "<B", 0), "ChunkError", "typesize 0", {}),
    ("frame_chunk_nbytes_2g.b2frame", "b2frame", FRAME_RAW, "nbytes of chunk 0", 2147483000,
     at(AT + 4, "<i", 2147483000), "IntegrityError",
     "chunk 0 holds 2147483000 bytes, the layout needs 4000",
     {"verify": "536871 blocks need bstarts up to byte 2147516, beyond cbytes 974"}),
    ("frame_chunk_blocksize_0.b2frame", "b2frame", FRAME_RAW, "blocksize of chunk 0", 0,
     at(AT + 8, "<i", 0), "ChunkError", "blocksize 0", {}),
    ("frame_chunk_cbytes_huge.b2frame", "b2frame", FRAME_RAW, "cbytes of chunk 0", 2**31 - 1,
     at(AT + 12, "<i", 2**31 - 1), "FormatError",
     "chunk 0 at offset 0 with cbytes 2147483647 runs past the chunks section (974 bytes)", {}),
    ("frame_chunk_cbytes_small.b2frame", "b2frame", FRAME_RAW, "cbytes of chunk 0", 20,
     at(AT + 12, "<i", 20), "FormatError", "cbytes 20 is smaller than its 32-byte header", {}),
    ("frame_chunk_bstart.b2frame", "b2frame", FRAME_RAW, "bstarts[0] of chunk 0", 1 << 30,
     at(AT + 32, "<i", 1 << 30), "ChunkError", "bstarts[0] = 1073741824", {}),
    ("frame_chunk_stream_csize.b2frame", "b2frame", FRAME_RAW,
     "csize of the first stream of chunk 0", 1 << 30, at(AT + 36, "<i", 1 << 30),
     "ChunkError", "csize 1073741824", {}),
    ("frame_special_value_nbytes_2g.b2frame", "b2frame", FILL_VALUE,
     "nbytes of an inline repeated-value chunk", 2147480000, at(97 + 4, "<i", 2147480000),
     "IntegrityError", "chunk 0 holds 2147480000 bytes, the layout needs 8000",
     {"verify": "chunk holds 2147480000 bytes, frame chunksize is 8000"}),
    ("frame_special_value_typesize.b2frame", "b2frame", FILL_VALUE,
     "typesize of an inline repeated-value chunk (its value has 8 bytes)", 4,
     at(97 + 3, "<B", 4), "ChunkError", "typesize 4 but a 8-byte value", {}),
    # b2nd
    ("b2nd_shape_huge.b2nd", "b2nd", B2ND, "b2nd metalayer: shape[0]", 2**62,
     lambda p: _patch(p, p.read_bytes().index(bytes.fromhex("91d3")) + 2, ">q", 2**62),
     "FormatError", "frame holds 4 chunks, the b2nd shape (4611686018427387904,) with chunks"
     " (300,) needs 15372286728091294", {}),
    ("b2nd_chunk_nbytes_2g.b2nd", "b2nd", B2ND, "nbytes of chunk 0", 2147483000,
     at(146 + 4, "<i", 2147483000), "FormatError",
     "chunk 0 holds 2147483000 bytes, the b2nd geometry needs 2560",
     {"verify": "4194303 blocks need bstarts up to byte 16777244, beyond cbytes 746"}),
    ("b2nd_chunkshape_0.b2nd", "b2nd", B2ND, "b2nd metalayer: chunkshape[0]", 0,
     lambda p: _patch(p, p.read_bytes().index(bytes.fromhex("91d20000012c")) + 2, ">i", 0),
     "FormatError", "b2nd: dim 0 of size 1000 has chunks 0 and blocks 64; both must be > 0", {}),
    # sparse frames
    ("sframe_chunk_nbytes_2g.b2frame", "sframe", SFRAME, "nbytes of chunk file 00000000.chunk",
     2147483000, in_file("00000000.chunk", at(4, "<i", 2147483000)),
     "IntegrityError", "chunk 0 holds 2147483000 bytes, the layout needs 4000",
     {"verify": "536871 blocks need bstarts up to byte 2147516, beyond cbytes 1018"}),
    ("sframe_index_entry_huge.b2frame", "sframe", SFRAME, "index entry 0 (a chunk file id)",
     2**40, in_file("chunks.b2frame", index_entry(0, 2**40)), "FileNotFound",
     "chunk 0 is stored in 10000000000.chunk, which is missing", {}),
    # python-blosc2 stores (zip archives of NDArray members)
    ("store_member_outside.b2z", "b2store", B2ND,
     "local header offset of the first member in the central directory", 1 << 30,
     chained(b2z("x.b2nd"), central(0, 42, "<I", 1 << 30)), "FormatError",
     "member 'x.b2nd': its local header at offset 1073741824 lies outside the archive's data",
     {}),
    ("store_members_overlap.b2z", "b2store", B2ND,
     "local header offset of the second member (that of the first)", 0,
     chained(b2z("a.b2nd", "b.b2nd"), central(1, 42, "<I", 0)), "FormatError",
     "members 'a.b2nd' and 'b.b2nd' overlap", {}),
    ("store_member_deflated.b2z", "b2store", B2ND,
     "compression method of the first member (8: deflated)", 8,
     chained(b2z("x.b2nd"), central(0, 10, "<H", 8)), "FormatError",
     "member 'x.b2nd' is compressed (zip method 8); a store is read where its members lie", {}),
    ("store_key_dotdot.b2z", "b2store", B2ND, "the name of the first member", "../x.b2nd",
     b2z("../x.b2nd"), "FormatError",
     "member name '../x.b2nd' is not a safe relative path", {}),
    ("store_central_count.b2z", "b2store", B2ND,
     "the number of members the end record announces (the directory holds 2)", 3,
     chained(b2z("x.b2nd"), end_entries(3)), "FormatError",
     "3 members cannot fit a central directory of 107 bytes", {}),
    ("store_central_truncated.b2z", "b2store", B2ND,
     "the file's length (cut in the central directory)", -30,
     chained(b2z("x.b2nd"), lambda p: p.write_bytes(p.read_bytes()[:-30])), "FormatError",
     "no end of central directory record: the zip archive is truncated or damaged", {}),
    # bcolz
    ("bcolz_sizes_shape_huge", "bcolz", BCOLZ, "meta/sizes shape[0]", 2**31 - 1,
     bcolz_sizes([2**31 - 1]), "IntegrityError",
     "__2.blp: chunk holds 8 bytes, a full chunk of 4 rows of 4 bytes needs 16", {}),
    ("bcolz_sizes_shape_huge_all_full", "bcolz", BCOLZ,
     "meta/sizes shape[0] (the chunk files present are all full)", 2**31 - 1,
     chained(bcolz_sizes([2**31 - 1]),
             lambda root: shutil.copy(root / "data/__1.blp", root / "data/__2.blp")),
     "FormatError", "__3.blp: chunk file missing", {}),
    ("bcolz_sizes_shape_negative", "bcolz", BCOLZ, "meta/sizes shape[0]", -1,
     bcolz_sizes([-1]), "FormatError", "is not a list of sizes", {}),
    ("bcolz_storage_chunklen_0", "bcolz", BCOLZ, "meta/storage chunklen", 0,
     bcolz_storage(chunklen=0), "FormatError", "chunklen 0 is not a positive integer", {}),
    ("bcolz_storage_chunklen_huge", "bcolz", BCOLZ, "meta/storage chunklen", 2**40,
     bcolz_storage(chunklen=2**40), "FormatError", "exceed the largest Blosc chunk", {}),
    ("bcolz_storage_dtype", "bcolz", BCOLZ, "meta/storage dtype", "V99999999999",
     bcolz_storage(dtype="V99999999999"), "FormatError", "V99999999999", {}),
    ("bcolz_chunk_nbytes_2g", "bcolz", BCOLZ, "nbytes of the Blosc chunk of data/__0.blp",
     2147483000, in_file("data/__0.blp", at(20, "<i", 2147483000)), "IntegrityError",
     "holds 2147483000 bytes", {}),
    ("bcolz_object_chunk_nbytes_2g", "bcolz", BCOLZ_OBJECT,
     "nbytes of the Blosc chunk of data/__0.blp (an object carray)", 2147483000,
     in_file("data/__0.blp", at(20, "<i", 2147483000)), "UnsupportedError", "object carray",
     {"verify": "cbytes 21 != nbytes 2147483000"}),
]  # fmt: skip


def make(entry: tuple[Any, ...], out: Path = HERE) -> dict[str, Any]:
    """Write the file of ``entry`` into ``out``; its manifest entry."""
    name, fmt, source, field, value, mutate, error, message, more = entry
    target = out / name
    if target.is_dir():
        shutil.rmtree(target)
    if (DATA / source).is_dir():
        shutil.copytree(DATA / source, target)
    else:
        shutil.copyfile(DATA / source, target)
    mutate(target)
    return {"file": name, "format": fmt, "origin": f"{GENERATED} from tests/data/{source}",
            "field": field, "value": value, "error": error, "message": message, **more}  # fmt: skip


def main(out: Path = HERE) -> None:
    """Write every file and the manifest into ``out`` (the entries made elsewhere are taken
    from this directory's manifest, their files are not copied)."""
    manifest = json.loads((HERE / "MANIFEST.json").read_text())
    kept = [e for e in manifest["files"] if not e.get("origin", "").startswith(GENERATED)]
    made = [make(entry, out) for entry in ENTRIES]
    manifest["files"] = kept + made
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"{len(made)} files written, {len(kept)} kept", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
