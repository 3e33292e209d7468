"""The .blp format layer: checksums, headers, argument objects, chunking, metadata section,
offsets, and the reader's and writer's handling of every layout and of hostile sizes."""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zlib

import numpy as np
import pytest

from bloscpack import api, engine, errors
from bloscpack.containers.bloscpack import (
    BloscpackReader,
    BloscpackWriter,
    compress_chunk,
    encode_metadata_section,
    encode_offsets,
    info,
    replacement_metadata_section,
    rewrite_metadata,
    sniff,
    verify,
)
from bloscpack.containers.bloscpack.args import (
    BloscArgs,
    BloscpackArgs,
    MetadataArgs,
    calculate_nchunks,
    double_pretty_size,
    handle_max_app_chunks,
    parse_chunk_size,
    pretty_size,
    reverse_pretty,
)
from bloscpack.containers.bloscpack.checksums import CHECKSUMS, CHECKSUMS_AVAIL, get_checksum
from bloscpack.containers.bloscpack.header import BloscpackHeader, MetadataHeader

DATA = bytes(range(256)) * 40  # 10240 bytes


def i32(v: int) -> bytes:
    return struct.pack("<i", v)


def i64(v: int) -> bytes:
    return struct.pack("<q", v)


# --- checksums ----------------------------------------------------------------------------


def test_checksum_table():
    assert CHECKSUMS_AVAIL == [
        "None",
        "adler32",
        "crc32",
        "md5",
        "sha1",
        "sha224",
        "sha256",
        "sha384",
        "sha512",
    ]
    assert [c.size for c in CHECKSUMS] == [0, 4, 4, 16, 20, 28, 32, 48, 64]
    assert get_checksum("adler32")(b"abc") == struct.pack("<I", zlib.adler32(b"abc"))
    assert get_checksum("crc32")(b"abc") == struct.pack("<I", zlib.crc32(b"abc"))
    for name in CHECKSUMS_AVAIL[3:]:
        assert get_checksum(name)(b"abc") == hashlib.new(name, b"abc").digest()
    assert get_checksum(None).name == "None" and get_checksum(None)(b"x") == b""
    assert get_checksum(6).name == "sha256" and get_checksum("sha256").id == 6
    with pytest.raises(errors.NoSuchChecksum, match="checksum id 9 is unknown"):
        get_checksum(9)
    with pytest.raises(errors.NoSuchChecksum, match="'sha3' does not exist"):
        get_checksum("sha3")


# --- headers ------------------------------------------------------------------------------


def test_bloscpack_header_defaults_and_encoding():
    header = BloscpackHeader()
    assert dict(header) == {
        "format_version": 3,
        "offsets": False,
        "metadata": False,
        "checksum": "None",
        "typesize": 0,
        "chunk_size": -1,
        "last_chunk": -1,
        "nchunks": -1,
        "max_app_chunks": 0,
    }
    assert header.encode() == b"blpk\x03\x00\x00\x00" + i32(-1) * 2 + i64(-1) + i64(0)
    full = BloscpackHeader(
        offsets=True,
        metadata=True,
        checksum="sha512",
        typesize=4,
        chunk_size=1024,
        last_chunk=10,
        nchunks=3,
        max_app_chunks=30,
    )
    raw = full.encode()
    assert raw == b"blpk\x03\x03\x08\x04" + i32(1024) + i32(10) + i64(3) + i64(30)
    assert BloscpackHeader.decode(raw) == full
    assert full.total_prospective_chunks == 33
    assert full.checksum_impl.name == "sha512"


def test_bloscpack_header_pformat():
    header = BloscpackHeader(
        offsets=True,
        checksum="adler32",
        typesize=8,
        chunk_size=1048576,
        last_chunk=0,
        nchunks=1,
        max_app_chunks=10,
    )
    assert header.pformat() == (
        "BloscpackHeader:\n    format_version: 3\n    offsets: True\n    metadata: False\n"
        "    checksum: 'adler32'\n    typesize: 8\n    chunk_size: 1.0M (1048576B)\n"
        "    last_chunk: 0B (0B)\n    nchunks: 1\n    max_app_chunks: 10"
    )


@pytest.mark.parametrize(
    ("raw", "error", "message"),
    [
        (b"blpx" + bytes(28), errors.NotAContainer, "instead we found: b'blpx'"),
        (b"blpk\x03\x04" + bytes(26), errors.FormatError, "reserved bits 2-7 must be 0"),
        (b"blpk\x03\x80" + bytes(26), errors.FormatError, "reserved bits 2-7 must be 0"),
        (b"blpk\x03\x00\x09" + bytes(25), errors.NoSuchChecksum, "checksum id 9 is unknown"),
        (
            b"blpk\x03\x00\x00\x00" + i32(10) + i32(11) + i64(2) + i64(0),
            errors.FormatError,
            r"'last_chunk' \(11\) is larger than 'chunk_size' \(10\)",
        ),
        (
            b"blpk\x03\x00\x00\x00" + i32(-2) + i32(-1) + i64(2) + i64(0),
            errors.FormatError,
            "'chunk_size' must be in the range -1",
        ),
        (
            b"blpk\x03\x00\x00\x00" + i32(-1) + i32(-1) + i64(-1) + i64(3),
            errors.FormatError,
            "'max_app_chunks' can not be non '0' if 'nchunks' is '-1'",
        ),
        (
            b"blpk\x03\x00\x00\x00" + i32(-1) + i32(-1) + i64(2**62) + i64(2**62),
            errors.FormatError,
            "nchunks \\+ max_app_chunks",
        ),
        (b"blpk\x03", errors.TruncatedError, "length '5', not '32'"),
    ],
)
def test_bloscpack_header_decode_errors(raw, error, message):
    with pytest.raises(error, match=message):
        BloscpackHeader.decode(raw)


def test_header_constructor_checks():
    with pytest.raises(errors.ArgumentError, match="'typesize' must be in the range 0 <= n <= 255"):
        BloscpackHeader(typesize=256)
    with pytest.raises(errors.NoSuchChecksum):
        BloscpackHeader(checksum="foo")
    with pytest.raises(errors.ArgumentError, match="must be of type 'int'"):
        BloscpackHeader(chunk_size=1.5)  # type: ignore[arg-type]
    with pytest.raises(errors.NoSuchCodec):
        MetadataHeader(meta_codec="lz4")
    with pytest.raises(errors.ArgumentError, match="max length '8'"):
        MetadataHeader(magic_format=b"123456789")


def test_metadata_header():
    header = MetadataHeader(
        magic_format=b"JSON",
        meta_checksum="adler32",
        meta_codec="zlib",
        meta_level=6,
        meta_size=56,
        max_meta_size=560,
        meta_comp_size=56,
    )
    raw = header.encode()
    assert raw == b"JSON\0\0\0\0\x00\x01\x01\x06" + struct.pack("<III", 56, 560, 56) + bytes(8)
    assert MetadataHeader.decode(raw) == header
    assert MetadataHeader.decode(b"JSON    " + raw[8:]).magic_format == b"JSON"
    assert MetadataHeader().encode() == bytes(32)
    with pytest.raises(errors.FormatError, match="options 0x01"):
        MetadataHeader.decode(raw[:8] + b"\x01" + raw[9:])
    with pytest.raises(errors.NoSuchCodec, match="codec id 2 is unknown"):
        MetadataHeader.decode(raw[:10] + b"\x02" + raw[11:])
    with pytest.raises(errors.NoSuchChecksum, match="metadata header: checksum id 12"):
        MetadataHeader.decode(raw[:9] + b"\x0c" + raw[10:])
    with pytest.raises(errors.FormatError, match="level 10 out of range"):
        MetadataHeader.decode(raw[:11] + b"\x0a" + raw[12:])


# --- argument objects and chunking --------------------------------------------------------


def test_argument_objects_are_mutable_mappings():
    args = BloscArgs()
    assert dict(args) == {"typesize": 8, "clevel": 7, "shuffle": True, "cname": "blosclz"}
    assert repr(args) == "BloscArgs(typesize=8, clevel=7, shuffle=True, cname='blosclz')"
    args["clevel"] = 3
    assert args.clevel == 3
    copy = args.copy()
    copy.clevel = 9
    assert args.clevel == 3
    with pytest.raises(KeyError, match="foo not in BloscArgs"):
        args["foo"]
    with pytest.raises(KeyError):
        args["foo"] = 1
    with pytest.raises(NotImplementedError, match="does not support __delitem__"):
        del args["clevel"]
    assert args.pformat() == (
        "BloscArgs:\n    typesize: 8\n    clevel: 3\n    shuffle: True\n    cname: 'blosclz'"
    )
    blosc2 = BloscArgs(blosc_version=2, filters=["delta", "shuffle"])
    assert list(blosc2) == [
        "typesize",
        "clevel",
        "shuffle",
        "cname",
        "blosc_version",
        "filters",
        "filters_meta",
        "use_dict",
        "blocksize",
    ]
    packing = BloscpackArgs(checksum=None)
    assert packing.checksum == "None" and packing.offsets is True
    assert packing.max_app_chunks(7) == 70
    meta = MetadataArgs()
    assert dict(meta, max_meta_size=None) == {
        "magic_format": b"JSON",
        "meta_checksum": "adler32",
        "meta_codec": "zlib",
        "meta_level": 6,
        "max_meta_size": None,
    }
    assert meta.effective_max_meta_size(5) == 50
    assert MetadataArgs(max_meta_size=7).effective_max_meta_size(5) == 7


@pytest.mark.parametrize(
    ("size", "chunk_size", "expected"),
    [
        (0, "1M", (1, 0, 0)),
        (0, "3G", (1, 0, 0)),
        (200000, "64K", (4, 65536, 3392)),
        (200000, "1M", (1, 200000, 200000)),
        (10, 1, (10, 1, 1)),
        (2000, 1000, (2, 1000, 1000)),
        (50000, 1001, (50, 1001, 951)),
        (3 * 2**20, "1.5M", (2, 1572864, 1572864)),
        (100, "max", None),
    ],
)
def test_calculate_nchunks(size, chunk_size, expected):
    if expected is None:
        with pytest.raises(errors.ChunkingException, match="no valid size suffix"):
            calculate_nchunks(size, chunk_size)
    else:
        assert calculate_nchunks(size, chunk_size) == expected


@pytest.mark.parametrize("chunk_size", ["3G", 0, -5, 2147483632, "100", "1m", "xK", "infK", 1.5])
def test_calculate_nchunks_rejects(chunk_size):
    with pytest.raises(errors.ChunkingException):
        calculate_nchunks(100, chunk_size)


def test_sizes_and_chunk_size_parser():
    assert reverse_pretty("64K") == 65536 and reverse_pretty("0.5G") == 2**29
    assert parse_chunk_size("1001") == 1001 and parse_chunk_size("max") == 2147483631
    assert parse_chunk_size(5) == 5 and parse_chunk_size("2M") == 2**21
    with pytest.raises(errors.ChunkingException, match="2147483631"):
        parse_chunk_size("2G")
    assert pretty_size(0) == "0B" and pretty_size(1536) == "1.5K"
    assert double_pretty_size(1048576) == "1.0M (1048576B)"


def test_max_app_chunks():
    assert handle_max_app_chunks(True, 3, lambda n: 10 * n) == 30
    assert handle_max_app_chunks(True, 3, 7) == 7
    assert handle_max_app_chunks(False, 3, 7) == 0
    assert handle_max_app_chunks(True, -1, 7) == 0
    assert handle_max_app_chunks(True, 2**63 - 3, 10) == 2
    with pytest.raises(errors.ArgumentError, match="negative"):
        handle_max_app_chunks(True, 3, lambda n: -1)
    with pytest.raises(errors.ArgumentError, match="neither a callable or an int"):
        handle_max_app_chunks(True, 3, "7")


# --- metadata section and offsets ---------------------------------------------------------


def test_metadata_section_rules():
    # too small for zlib to help: stored raw, codec None but level kept at 6 (as 0.16)
    section = encode_metadata_section({"a": 1})
    header = MetadataHeader.decode(section[:32])
    assert (header.meta_codec, header.meta_level, header.meta_size) == ("None", 6, 7)
    assert header.max_meta_size == 70 and header.meta_comp_size == 7
    assert section[32:39] == b'{"a":1}' and section[39:102] == bytes(63)
    assert section[102:] == struct.pack("<I", zlib.adler32(b'{"a":1}'))
    # compressible: zlib, digest over the compressed bytes, placed after the padding
    big = {f"k{i}": "value" * 10 for i in range(20)}
    section = encode_metadata_section(big, MetadataArgs(meta_checksum="sha256"))
    header = MetadataHeader.decode(section[:32])
    assert header.meta_codec == "zlib" and header.meta_comp_size < header.meta_size
    stored = section[32 : 32 + header.meta_comp_size]
    assert zlib.decompress(stored) == json.dumps(big, separators=(",", ":")).encode()
    assert section[-32:] == hashlib.sha256(stored).digest()
    assert len(section) == 32 + header.max_meta_size + 32
    # non-ASCII is escaped, keys keep their order, any JSON value is allowed
    section = encode_metadata_section(["αß", {"z": 1, "a": None}], MetadataArgs(meta_codec="None"))
    assert section[32:62] == b'["\\u03b1\\u00df",{"z":1,"a":null}]'[:30]


def test_metadata_section_errors():
    with pytest.raises(errors.MetadataSectionTooSmall, match="required: 7 allocated: 3"):
        encode_metadata_section({"a": 1}, MetadataArgs(max_meta_size=3))
    with pytest.raises(errors.ArgumentError, match="not JSON-serializable"):
        encode_metadata_section({"a": object()})
    with pytest.raises(errors.NoSuchSerializer):
        encode_metadata_section({}, MetadataArgs(magic_format=b"YAML"))
    with pytest.raises(errors.NoSuchCodec):
        encode_metadata_section({}, MetadataArgs(meta_codec="bz2"))
    old = MetadataHeader.decode(encode_metadata_section({"a": 1})[:32])
    assert len(replacement_metadata_section({"b": 2}, old)) == 32 + 70 + 4
    with pytest.raises(errors.ChecksumLengthMismatch, match="different digest sizes"):
        replacement_metadata_section({"b": 2}, old, checksum="md5")
    assert len(replacement_metadata_section({"b": 2}, old, checksum="crc32")) == 106


def test_offsets_encoding():
    assert encode_offsets([120, 300], 4) == i64(120) + i64(300) + i64(-1) * 2
    assert encode_offsets([]) == b""
    with pytest.raises(errors.ArgumentError):
        encode_offsets([1, 2, 3], 2)


# --- reading ------------------------------------------------------------------------------


def packed(data: bytes = DATA, **kwargs) -> bytes:
    kwargs.setdefault("chunk_size", 1024)
    return api.pack_bytes_to_bytes(data, **kwargs)


def test_sniff():
    assert sniff(packed()[:8]) and not sniff(b"blpx") and not sniff(b"")


def test_read_chunk_uses_offsets_and_verifies_its_digest():
    raw = bytearray(packed())
    with BloscpackReader(bytes(raw)) as reader:
        assert len(reader.offsets) == 10
        loc = reader.locate(3)
        assert loc.offset == reader.offsets[3]
        chunk = reader.read_chunk(3)
        assert isinstance(chunk, memoryview)
        assert bytes(chunk) == bytes(raw[loc.offset : loc.offset + loc.cbytes])
        assert engine.decompress(chunk) == DATA[3072:4096]
        assert reader.digest(3) == get_checksum("adler32")(chunk)
        assert reader._locations is None  # random access read no other chunk header
        position = reader.locate(5).offset + 20
    raw[position] ^= 0xFF
    with BloscpackReader(bytes(raw)) as reader:
        assert engine.decompress(reader.read_chunk(4)) == DATA[4096:5120]
        with pytest.raises(errors.ChecksumMismatch, match="chunk 5 \\(adler32\\)"):
            reader.read_chunk(5)
        with pytest.raises(IndexError):
            reader.read_chunk(10)


def _file_with_swapped_chunks() -> bytes:
    """A valid file whose chunk 1 is stored before chunk 0: only offsets tell them apart."""
    sink = io.BytesIO()
    chunks = [compress_chunk(DATA[i : i + 5120], BloscArgs()) for i in (0, 5120)]
    header = BloscpackHeader(
        offsets=True,
        checksum="crc32",
        typesize=8,
        chunk_size=5120,
        last_chunk=5120,
        nchunks=2,
        max_app_chunks=0,
    )
    sink.write(header.encode() + bytes(16))
    positions = {}
    for index in (1, 0):
        positions[index] = sink.tell()
        sink.write(chunks[index] + get_checksum("crc32")(chunks[index]))
    sink.seek(32)
    sink.write(encode_offsets([positions[0], positions[1]]))
    return sink.getvalue()


def test_offsets_that_do_not_increase_are_refused():
    """No digest covers the offsets: chunks stored out of order (or one offset repeated)
    would read reordered or duplicated data without an error, so readers refuse them."""
    raw = _file_with_swapped_chunks()
    message = "offsets do not increase: chunk 1 at offset 48 follows chunk 0 at offset 432"
    with pytest.raises(errors.FormatError, match=message):
        api.unpack_bytes_from_bytes(raw)
    report = verify(raw)
    assert report["ok"] is False and message in report["problems"][0]


def test_files_without_offsets_are_read_sequentially():
    raw = packed(bloscpack_args=BloscpackArgs(offsets=False))
    with BloscpackReader(raw) as reader:
        assert reader.offsets == [] and reader.chunks_start == 32
        assert [loc.index for loc in reader.locations()] == list(range(10))
        assert engine.decompress(reader.read_chunk(7)) == DATA[7168:8192]
    assert api.unpack_bytes_from_bytes(raw + b"stale bytes") == (DATA, None)


def test_trailing_bytes_are_ignored():
    raw = packed(metadata={"x": 1})
    assert api.unpack_bytes_from_bytes(raw + bytes(1000)) == (DATA, {"x": 1})
    assert info(raw + b"xyz")["trailing_bytes"] == 3
    assert verify(raw + b"xyz")["ok"] is True


class _Unseekable(io.RawIOBase):
    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:  # type: ignore[override]
        self.data += bytes(b)
        return len(b)


def _stream(fp) -> None:
    with BloscpackWriter(
        fp, chunk_size=4096, last_chunk=-1, nchunks=-1, typesize=8, metadata={"stream": True}
    ) as writer:
        for start in range(0, len(DATA), 4096):
            writer.write_chunk(compress_chunk(DATA[start : start + 4096], BloscArgs()))


def test_streams_of_unknown_length():
    sink = _Unseekable()
    _stream(sink)
    raw = bytes(sink.data)
    header = BloscpackHeader.decode(raw[:32])
    assert (header.nchunks, header.last_chunk, header.offsets) == (-1, -1, False)
    with BloscpackReader(raw) as reader:
        assert reader.nchunks == 3
        assert reader.read_all().tobytes() == DATA
    assert api.unpack_bytes_from_bytes(raw) == (DATA, {"stream": True})
    # a seekable sink gets the real count and last size written back
    seekable = io.BytesIO()
    _stream(seekable)
    header = BloscpackHeader.decode(seekable.getvalue()[:32])
    assert (header.nchunks, header.chunk_size, header.last_chunk) == (3, 4096, 2048)
    assert api.unpack_bytes_from_bytes(seekable.getvalue())[0] == DATA


def test_metadata_magic_padded_with_spaces():
    raw = bytearray(packed(metadata={"a": [1, 2]}))
    assert raw[32:40] == b"JSON\0\0\0\0"
    raw[36:40] = b"    "
    assert api.unpack_bytes_from_bytes(bytes(raw)) == (DATA, {"a": [1, 2]})
    raw[32:36] = b"YAML"
    with pytest.raises(errors.NoSuchSerializer, match="b'YAML' is unknown"):
        api.unpack_bytes_from_bytes(bytes(raw))


def _patched(raw: bytes, offset: int, value: bytes) -> bytes:
    return raw[:offset] + value + raw[offset + len(value) :]


@pytest.mark.parametrize(
    ("offset", "value", "error", "message"),
    [
        (4, b"\x04", errors.FormatVersionMismatch, "not '3' as expected, but '4'"),
        (5, b"\x05", errors.FormatError, "reserved bits"),
        (6, b"\x0a", errors.NoSuchChecksum, "checksum id 10 is unknown"),
        (
            8,
            i32(2000),
            errors.IntegrityError,
            "chunk 0 holds 1024 bytes, the header prescribes 2000",
        ),
        (
            12,
            i32(100),
            errors.IntegrityError,
            "chunk 9 holds 1024 bytes, the header prescribes 100",
        ),
        (16, i64(2**40), errors.TruncatedError, "offsets section of 1099511627876 entries"),
        (24, i64(2**40), errors.TruncatedError, "offsets section"),
        (32, i64(10**6), errors.FormatError, "chunk 1 at offset 1956 follows chunk 0 at offset"
         " 1000000"),
        (40, i64(8), errors.FormatError, "chunk 1 at offset 8 lies outside"),
    ],
)
def test_hostile_headers_and_offsets(offset, value, error, message):
    raw = _patched(packed(), offset, value)
    with pytest.raises(error, match=message):
        api.unpack_bytes_from_bytes(raw)
    assert verify(raw)["ok"] is False


def test_hostile_sizes_without_offsets():
    raw = packed(bloscpack_args=BloscpackArgs(offsets=False))
    with pytest.raises(errors.TruncatedError, match="announces 4611686018427387904 chunks"):
        api.unpack_bytes_from_bytes(_patched(raw, 16, i64(2**62)))
    with pytest.raises(errors.TruncatedError, match="chunk 10 at offset 10472: the input ends"):
        api.unpack_bytes_from_bytes(_patched(raw, 16, i64(11)))
    # a chunk whose header claims a huge cbytes
    with pytest.raises(errors.TruncatedError, match="chunk 0 at offset 32 needs 2000000000"):
        api.unpack_bytes_from_bytes(_patched(raw, 32 + 12, i32(2_000_000_000)))
    with pytest.raises(errors.ChunkError, match="cbytes 3 is smaller"):
        api.unpack_bytes_from_bytes(_patched(raw, 32 + 12, i32(3)))


def _file_with_metadata_section(section: bytes) -> bytes:
    header = BloscpackHeader(metadata=True, typesize=1, chunk_size=3, last_chunk=3, nchunks=1)
    return header.encode() + section + compress_chunk(b"abc", BloscArgs(typesize=1))


def _raw_section(stored: bytes, meta_size: int, codec: str = "zlib", room: int = 0) -> bytes:
    header = MetadataHeader(
        b"JSON",
        meta_codec=codec,
        meta_level=6,
        meta_size=meta_size,
        max_meta_size=len(stored) + room,
        meta_comp_size=len(stored),
    )
    return header.encode() + stored + bytes(room)


def test_hostile_metadata_sizes():
    raw = packed(metadata={"a": "b" * 50})
    with pytest.raises(errors.TruncatedError, match="metadata section"):
        api.unpack_bytes_from_bytes(_patched(raw, 32 + 16, struct.pack("<I", 2**32 - 1)))
    with pytest.raises(errors.FormatError, match="meta_comp_size 4000 exceeds"):
        api.unpack_bytes_from_bytes(_patched(raw, 32 + 20, struct.pack("<I", 4000)))
    ok = _file_with_metadata_section(_raw_section(zlib.compress(b"[1]"), 3, room=5))
    assert api.unpack_bytes_from_bytes(ok) == (b"abc", [1])
    bomb = _file_with_metadata_section(_raw_section(zlib.compress(b"[" * 10**7), 3))
    with pytest.raises(
        errors.FormatError, match="metadata is 4 bytes, its header says meta_size 3"
    ):
        api.unpack_bytes_from_bytes(bomb)
    short = _file_with_metadata_section(_raw_section(zlib.compress(b"[1, 2]")[:-4], 6))
    with pytest.raises(errors.FormatError, match="cut short"):
        api.unpack_bytes_from_bytes(short)
    deep = _file_with_metadata_section(_raw_section(b"[" * 100000, 100000, codec="None"))
    with pytest.raises(errors.FormatError, match="not valid JSON"):
        api.unpack_bytes_from_bytes(deep)
    latin = _file_with_metadata_section(_raw_section(b'"\xff"', 3, "None"))
    with pytest.raises(errors.FormatError, match="not valid JSON"):
        api.unpack_bytes_from_bytes(latin)


def test_array_metadata_cannot_force_a_huge_allocation():
    metadata = {"dtype": "'<f8'", "shape": [10**15], "order": "C", "container": "numpy"}
    forged = api.pack_bytes_to_bytes(np.arange(10.0).tobytes(), metadata=metadata)
    with pytest.raises(
        errors.IntegrityError, match=r"needs 8000000000000000 bytes, the chunks hold 80"
    ):
        api.unpack_ndarray_from_bytes(forged)
    assert verify(forged)["problems"] == [
        "the array needs 8000000000000000 bytes, the chunks hold 80"
    ]


# --- writing ------------------------------------------------------------------------------


def test_writer_checks_what_it_is_given():
    sink = io.BytesIO()
    writer = BloscpackWriter(sink, chunk_size=1024, last_chunk=512, nchunks=2, typesize=8)
    with pytest.raises(
        errors.ArgumentError, match="chunk 0 holds 512 bytes, the header prescribes 1024"
    ):
        writer.write_chunk(compress_chunk(bytes(512), BloscArgs()))
    writer.write_chunk(compress_chunk(bytes(1024), BloscArgs()))
    with pytest.raises(errors.ArgumentError, match="1 chunks were written, the header announces 2"):
        writer.close()
    writer.write_chunk(compress_chunk(bytes(512), BloscArgs()))
    writer.close()
    assert api.unpack_bytes_from_bytes(sink.getvalue()) == (bytes(1536), None)


def test_blosc2_chunks_are_opt_in():
    data = np.arange(5000, dtype="<i4").tobytes()
    args = BloscArgs(typesize=4, cname="zstd", blosc_version=2, filters=["delta", "shuffle"])
    raw = api.pack_bytes_to_bytes(data, chunk_size=8000, blosc_args=args)
    with BloscpackReader(raw) as reader:
        chunk = reader.read_chunk(0)
        assert chunk[0] == 5  # Blosc2 chunk header version
    assert api.unpack_bytes_from_bytes(raw) == (data, None)
    assert set(info(raw)["blosc_versions"]) == {"2"}
    with pytest.raises(errors.ArgumentError, match="pass blosc_version=2"):
        api.pack_bytes_to_bytes(data, blosc_args=BloscArgs(filters=["delta"]))
    with pytest.raises(errors.ArgumentError, match="unknown filter 'foo'"):
        api.pack_bytes_to_bytes(data, blosc_args=BloscArgs(blosc_version=2, filters=["foo"]))
    with pytest.raises(errors.NoSuchCodec, match="snappy"):
        api.pack_bytes_to_bytes(data, blosc_args=BloscArgs(cname="snappy"))


# --- rewriting metadata -------------------------------------------------------------------


def test_rewrite_metadata_in_place(tmp_path):
    path = tmp_path / "m.blp"
    api.pack_bytes_to_file(DATA, path, chunk_size=4096, metadata={"version": 1, "pad": "x" * 40})
    before = path.read_bytes()
    rewrite_metadata(path, {"version": 2})
    after = path.read_bytes()
    assert api.unpack_bytes_from_file(path) == (DATA, {"version": 2})
    assert len(after) == len(before)
    with BloscpackReader(path) as reader:
        end = reader.offsets_offset
    assert after[:32] == before[:32] and after[end:] == before[end:]
    with pytest.raises(errors.NoChangeInMetadata):
        rewrite_metadata(path, {"version": 2})
    with pytest.raises(errors.MetadataSectionTooSmall, match="allocated: 620"):
        rewrite_metadata(path, {"big": list(range(2000))})
    assert path.read_bytes() == after
    plain = tmp_path / "plain.blp"
    api.pack_bytes_to_file(DATA, plain)
    with pytest.raises(errors.NoMetadataFound):
        rewrite_metadata(plain, {"a": 1})


@pytest.mark.parametrize("name, reference", [("adler32", zlib.adler32), ("crc32", zlib.crc32)])
def test_fast_zlib_digests_equal_the_standard_library(name, reference):
    data = np.random.default_rng(7).integers(0, 256, 1 << 20, dtype=np.uint8)
    for piece in (b"", memoryview(data)[:1], memoryview(data)[3:], data):
        expected = struct.pack("<I", reference(piece) & 0xFFFFFFFF)
        assert get_checksum(name)(piece) == expected


# --- what no digest covers: offsets, header counts, the checksum id ----------------------


def _offsets_of(raw: bytes) -> tuple[int, list[int]]:
    with BloscpackReader(raw) as reader:
        return reader.offsets_offset, reader.offsets


def test_a_repeated_offset_is_refused():
    raw = packed()
    start, offsets = _offsets_of(raw)
    raw = _patched(raw, start + 8 * 3, i64(offsets[2]))  # chunk 3 points at chunk 2
    message = f"chunk 3 at offset {offsets[2]} follows chunk 2 at offset {offsets[2]}"
    with pytest.raises(errors.FormatError, match=message):
        api.unpack_bytes_from_bytes(raw)


def test_a_chunk_running_into_the_next_is_refused():
    raw = packed()
    start, offsets = _offsets_of(raw)
    raw = _patched(raw, start + 8 * 5, i64(offsets[4] + 16))  # inside chunk 4
    message = f"chunk 4 at offset {offsets[4]} ends at {offsets[5]}, after chunk 5 begins"
    with BloscpackReader(raw) as reader, pytest.raises(errors.FormatError, match=message):
        reader.locate(4)
    with pytest.raises(errors.FormatError, match="after chunk 5 begins"):
        api.unpack_bytes_from_bytes(raw)


def test_verify_reports_unreferenced_bytes_between_chunks():
    raw = packed(bloscpack_args=BloscpackArgs(max_app_chunks=0))
    start, offsets = _offsets_of(raw)
    # chunk 6 moved 8 bytes further: a gap after chunk 5 (its bytes copied along)
    shifted = raw[: offsets[6]] + bytes(8) + raw[offsets[6] :]
    moved = [o + 8 if i >= 6 else o for i, o in enumerate(offsets)]
    shifted = _patched(shifted, start, b"".join(i64(o) for o in moved))
    assert api.unpack_bytes_from_bytes(shifted) == (DATA, None)  # the data itself is whole
    report = verify(shifted)
    assert report["ok"] is False
    assert report["problems"] == [
        f"8 unreferenced bytes between chunk 5 and chunk 6 (offsets {offsets[6]} to"
        f" {offsets[6] + 8})"
    ]


def test_verify_finds_a_chunk_the_header_does_not_count():
    """nchunks lowered (to 0 as well): the chunks after it are data nobody reads."""
    raw = packed(bloscpack_args=BloscpackArgs(offsets=False))
    for nchunks in (9, 0):
        cut = _patched(raw, 16, i64(nchunks))
        cut = _patched(cut, 12, i32(1024 if nchunks else 0))  # last_chunk
        report = verify(cut)
        assert report["ok"] is False
        assert report["problems"][-1].startswith("an unreferenced Blosc chunk of")
        assert report["problems"][-1].endswith(f"after the {nchunks} chunks the header counts")


def test_verify_names_stale_bytes_and_files_without_checksums():
    raw = packed(bloscpack_args=BloscpackArgs(checksum="None"))
    report = verify(raw + b"stale")
    assert report["ok"] is True and report["verifiable"] is False
    assert report["notes"] == [
        "5 bytes after the last chunk are ignored (stale bytes, as bloscpack 0.16's append"
        " leaves them)",
    ]
    with_digests = verify(packed())
    assert with_digests["verifiable"] is True and with_digests["notes"] == []


@pytest.mark.parametrize(("nchunks", "last_chunk"), [(10, -1), (-1, 1000)])
def test_verify_notes_nchunks_and_last_chunk_that_disagree(nchunks, last_chunk):
    """One of nchunks and last_chunk unknown (-1), the other not: the last chunk's size goes
    unchecked, which a note says (``--strict`` fails it)."""
    raw = packed(bloscpack_args=BloscpackArgs(offsets=False, max_app_chunks=0))
    assert verify(raw)["notes"] == []
    report = verify(_patched(_patched(raw, 16, i64(nchunks)), 12, i32(last_chunk)))
    assert (report["ok"], report["problems"], report["bad_chunks"]) == (True, [], [])
    assert report["notes"] == [
        f"the header's nchunks {nchunks} and last_chunk {last_chunk} disagree: only one of them"
        " is -1 (unknown); the last chunk holds 1024 bytes"
    ]


def test_verify_sees_a_checksum_id_changed_to_none():
    raw = _patched(packed(), 6, b"\x00")  # the digests become bytes between chunks
    report = verify(raw)
    assert report["ok"] is False and report["verifiable"] is False
    assert report["problems"][0].startswith("4 unreferenced bytes between chunk 0 and chunk 1")
