"""BloscFile: the golden corpus read through the file object (paths, file objects, pipes),
byte-exact writes (identical to pack_bytes_to_bytes), streaming containers, appends, the io
protocol (shutil, TextIOWrapper, BufferedReader, numpy.save/load), errors, and proof that a
seek plus a small read decompresses one chunk."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import struct
import subprocess
import sys
import threading
import zipfile

import numpy as np
import pytest
from conftest import DATA, load_manifest

import bloscpack
from bloscpack import api, engine, errors
from bloscpack.containers.bloscpack import BloscpackReader
from bloscpack.containers.bloscpack.append import journal_path
from bloscpack.containers.bloscpack.args import BloscArgs, BloscpackArgs, MetadataArgs
from bloscpack.containers.bloscpack.header import BloscpackHeader

CORPUS = DATA / "bloscpack"
MANIFEST = load_manifest("bloscpack")
FILES = {entry["file"]: entry for entry in MANIFEST["files"]}
PAYLOAD = b"".join(i.to_bytes(4, "little") for i in range(30_000)) + b"text line\n" * 2_000


@pytest.fixture(autouse=True)
def one_thread():
    old = engine.set_nthreads(1)
    yield
    engine.set_nthreads(old)


class Pipe(io.RawIOBase):
    """A readable, non-seekable stream over bytes (like stdin on a pipe)."""

    def __init__(self, data: bytes, piece: int = 1 << 30) -> None:
        self._data = io.BytesIO(data)
        self._piece = piece
        self.name = "<pipe>"

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        view = memoryview(b)[: self._piece]
        return self._data.readinto(view)


class Sink(io.RawIOBase):
    """A writable, non-seekable stream collecting bytes (like stdout on a pipe)."""

    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.data += b
        return len(memoryview(b).cast("B"))


class CountingBytesIO(io.BytesIO):
    """A BytesIO that counts the bytes read from it."""

    bytes_read = 0

    def read(self, n=-1):
        data = super().read(n)
        self.bytes_read += len(data)
        return data

    def readinto(self, b):
        n = super().readinto(b)
        self.bytes_read += n
        return n


def write_file(path, data, **options) -> None:
    with bloscpack.BloscFile(path, "wb", **options) as f:
        assert f.write(data) == len(data)


# --- the golden corpus --------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FILES))
def test_corpus_read_whole(name):
    entry = FILES[name]
    path = CORPUS / name
    with bloscpack.BloscFile(path) as f:
        data = f.read()
        assert f.read() == b""
        assert f.tell() == entry["payload_len"]
        assert f.metadata == entry["expected_metadata"]
    assert len(data) == entry["payload_len"]
    assert hashlib.sha256(data).hexdigest() == entry["payload_sha256"]
    with open(path, "rb") as fp, bloscpack.BloscFile(fp) as f:
        assert f.read() == data
    with bloscpack.BloscFile(io.BytesIO(path.read_bytes())) as f:
        assert f.read() == data
    with bloscpack.BloscFile(io.BufferedReader(Pipe(path.read_bytes(), 777))) as f:
        assert not f.seekable()
        assert f.metadata == entry["expected_metadata"]
        assert f.read() == data


@pytest.mark.parametrize("name", sorted(n for n, e in FILES.items() if e["payload_len"]))
def test_corpus_random_access(name):
    with bloscpack.BloscFile(CORPUS / name) as f:
        whole = f.read()
        size = len(whole)
        rng = np.random.default_rng(len(name))
        for start in [0, size - 1, size // 2, *rng.integers(0, size, 6).tolist()]:
            n = int(rng.integers(1, 5000))
            assert f.seek(start) == start
            assert f.read(n) == whole[start : start + n]
            assert f.tell() == min(size, start + n)
        if size >= 7:
            assert f.seek(-7, io.SEEK_END) == size - 7
            assert f.read() == whole[-7:]


@pytest.mark.parametrize(
    ("name", "error", "message"),
    [
        ("bad_chunk_data.blp", errors.ChecksumMismatch, "Checksum mismatch detected in chunk 0"),
        ("bad_chunk_digest.blp", errors.ChecksumMismatch, "Checksum mismatch detected in chunk 0"),
        ("bad_magic.blp", errors.NotAContainer, "instead we found: b'blpx'"),
        ("bad_format_version.blp", errors.FormatVersionMismatch, "but '2'"),
        ("bad_meta_checksum.blp", errors.ChecksumMismatch, "detected in metadata (adler32)"),
        ("bad_truncated.blp", errors.TruncatedError, "chunk 3"),
    ],
)
def test_corpus_broken_files(name, error, message):
    path = CORPUS / name
    with pytest.raises(error, match="^" + str(path).replace(".", r"\.")) as info:
        bloscpack.BloscFile(path).read()
    assert message in str(info.value)
    with pytest.raises(error) as info:
        bloscpack.BloscFile(io.BufferedReader(Pipe(path.read_bytes()))).read()
    assert str(info.value).startswith("<pipe>: ")
    assert message in str(info.value)


@pytest.mark.parametrize(
    "name",
    [
        "bad/blp_chunk_blocksize_0.blp",
        "bad/blp_chunk_bstart.blp",
        "bad/blp_chunk_typesize_0.blp",
        "bad/blp_chunk_nbytes_2g.blp",
        "bad/blp_chunk_size_2g.blp",
        "bad/blp_meta_comp_size_huge.blp",
        "bloscpack/bad_chunk_data.blp",
        "bloscpack/bad_format_version.blp",
    ],
)
def test_a_defect_has_the_message_of_load_through_a_file_and_a_pipe(name):
    path = DATA / name
    with pytest.raises(errors.BloscpackError) as loaded:
        bloscpack.load(path)
    expected = str(loaded.value).removeprefix(f"{path}: ")
    with pytest.raises(type(loaded.value)) as info:
        bloscpack.BloscFile(path).read()
    assert str(info.value) == f"{path}: {expected}"
    with pytest.raises(type(loaded.value)) as info:
        bloscpack.BloscFile(io.BufferedReader(Pipe(path.read_bytes()))).read()
    assert str(info.value) == f"<pipe>: {expected}"


#: Runs in a subprocess under a 512 MiB address-space limit: a BloscFile read of the file
#: ``argv[1]``, then ``load``; each prints its exception class and message.
HEADER_CLAIM = """
import resource, sys, bloscpack
resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))
read = lambda: getattr(bloscpack.BloscFile(sys.argv[1]), sys.argv[2])(*map(int, sys.argv[3:]))
for call in (read, lambda: bloscpack.load(sys.argv[1])):
    try:
        call()
    except Exception as exc:
        print(type(exc).__name__, exc)
"""


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (8, struct.pack("<i", 2**30), "IntegrityError x.blp: chunk 0 holds 1024 bytes, the header"
         " prescribes 1073741824 (chunk_size 1073741824, last_chunk 1024)"),
        (16, struct.pack("<q", 2**40), "TruncatedError x.blp: offsets section of 1099511627796"
         " entries at offset 32 needs 8796093022368 bytes, but the input has 2296"),
    ],
    ids=["chunk_size", "nchunks"],
)  # fmt: skip
@pytest.mark.parametrize("read", [["read"], ["read", "100"], ["read1"], ["peek"]], ids=str)
def test_header_claims_are_checked_before_a_read_allocates(tmp_path, field, value, message, read):
    """A 2 KiB file whose header claims 1 GiB: the read raises load's error, no MemoryError."""
    bloscpack.pack_bytes_to_file(bytes(range(256)) * 8, tmp_path / "x.blp", chunk_size=1024)
    data = bytearray((tmp_path / "x.blp").read_bytes())
    data[field : field + len(value)] = value
    (tmp_path / "x.blp").write_bytes(data)
    done = subprocess.run([sys.executable, "-c", HEADER_CLAIM, "x.blp", *read], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{message}\n" * 2, "")


# --- writing ------------------------------------------------------------------------------

SETTINGS = [
    {},
    {"chunk_size": 1},
    {"chunk_size": 1000},
    {"chunk_size": 4096, "codec": "zstd", "clevel": 9, "shuffle": False, "typesize": 4},
    {"chunk_size": "8K", "checksum": "sha256", "offsets": False},
    {"chunk_size": 333, "checksum": None, "max_app_chunks": 3},
    {"chunk_size": 10_000, "metadata": {"name": "ints", "n": [1, 2]}},
    {
        "chunk_size": 10_000,
        "blosc_args": BloscArgs(typesize=2, clevel=1, cname="lz4"),
        "bloscpack_args": BloscpackArgs(checksum="crc32", max_app_chunks=0),
        "metadata": ["x"],
        "metadata_args": MetadataArgs(meta_codec="None", max_meta_size=100),
    },
]


def _pack_args(settings: dict) -> dict:
    """The pack_bytes_to_bytes arguments equivalent to BloscFile options."""
    blosc = dict(settings.get("blosc_args") or BloscArgs())
    for key in ("typesize", "clevel", "shuffle"):
        if key in settings:
            blosc[key] = settings[key]
    if "codec" in settings:
        blosc["cname"] = settings["codec"]
    container = dict(settings.get("bloscpack_args") or BloscpackArgs())
    for key in ("checksum", "offsets", "max_app_chunks"):
        if key in settings:
            container[key] = settings[key]
    return {
        "chunk_size": settings.get("chunk_size", "1M"),
        "metadata": settings.get("metadata"),
        "blosc_args": BloscArgs(**blosc),
        "bloscpack_args": BloscpackArgs(**container),
        "metadata_args": settings.get("metadata_args"),
    }


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: repr(sorted(s))[:60])
@pytest.mark.parametrize("data", [b"", b"x", PAYLOAD[:4096], PAYLOAD], ids=len)
def test_written_bytes_equal_pack_bytes_to_bytes(tmp_path, settings, data):
    if settings.get("chunk_size") == 1 and len(data) > 4096:
        data = data[:5000]
    expected = api.pack_bytes_to_bytes(data, **_pack_args(settings))
    path = tmp_path / "out.blp"
    write_file(path, data, **settings)
    assert path.read_bytes() == expected
    assert api.unpack_bytes_from_file(path) == (data, settings.get("metadata"))
    sink = io.BytesIO(b"prefix")
    sink.seek(6)
    with bloscpack.BloscFile(sink, "wb", **settings) as f:
        for start in range(0, len(data), 777):
            f.write(data[start : start + 777])
        assert f.tell() == len(data)
        sink.seek(0)  # the container goes where the file object was when opened
    assert not sink.closed
    assert sink.getvalue() == b"prefix" + expected
    sink.seek(6)
    with bloscpack.BloscFile(sink) as f:
        assert f.read() == data


@pytest.mark.parametrize("chunk_size", [1, 7, 64, 1000, 4096, 100_000])
@pytest.mark.parametrize("pattern", ["one", "bytes", "small", "chunk", "mixed"])
def test_write_patterns_round_trip(tmp_path, chunk_size, pattern):
    data = PAYLOAD[:3000] if chunk_size < 64 else PAYLOAD
    sizes = {
        "one": [len(data)],
        "bytes": [1] * min(len(data), 3000),
        "small": [13] * (len(data) // 13 + 1),
        "chunk": [chunk_size] * (len(data) // chunk_size + 1),
        "mixed": [1, chunk_size - 1, chunk_size, 3 * chunk_size + 5, 2, 999_999],
    }[pattern]
    path = tmp_path / "out.blp"
    written = bytearray()
    with bloscpack.BloscFile(path, "wb", chunk_size=chunk_size) as f:
        position = 0
        for size in sizes:
            piece = data[position : position + size]
            if not piece:
                break
            f.write(memoryview(piece))
            written += piece
            position += size
    assert api.unpack_bytes_from_file(path)[0] == bytes(written)
    with bloscpack.BloscFile(path) as f:
        assert f.read() == bytes(written)


def test_write_accepts_any_buffer(tmp_path):
    array = np.arange(1000, dtype=">i4").reshape(10, 100)
    with bloscpack.BloscFile(tmp_path / "a.blp", "wb", chunk_size=999) as f:
        assert f.write(array) == 4000
        assert f.write(bytearray(b"ab")) == 2
        assert f.write(memoryview(b"xyz")[1:]) == 2
    assert bloscpack.unpack_bytes_from_file(tmp_path / "a.blp")[0] == array.tobytes() + b"abyz"


def test_write_to_a_path_is_atomic(tmp_path):
    path = tmp_path / "out.blp"
    with pytest.raises(KeyError), bloscpack.BloscFile(path, "wb", chunk_size=100) as f:
        f.write(PAYLOAD)
        raise KeyError("stop")
    assert os.listdir(tmp_path) == []
    write_file(path, b"old contents")
    before = path.read_bytes()
    with pytest.raises(KeyError), bloscpack.BloscFile(path, "wb") as f:
        f.write(PAYLOAD)
        assert path.read_bytes() == before  # nothing is visible before close
        raise KeyError("stop")
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["out.blp"]


def test_failed_open_leaves_nothing(tmp_path, monkeypatch):
    def no_space(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(
        "bloscpack.containers.bloscpack.sinks.tempfile.SpooledTemporaryFile", no_space
    )
    with pytest.raises(OSError, match="No space left"):
        bloscpack.BloscFile(tmp_path / "out.blp", "wb")
    assert os.listdir(tmp_path) == []


def test_failed_write_commits_nothing(tmp_path, monkeypatch):
    path = tmp_path / "out.blp"
    f = bloscpack.BloscFile(path, "wb", chunk_size=100)
    f.write(b"a" * 150)

    def broken(data, blosc_args):
        raise errors.ArgumentError("compression failed")

    monkeypatch.setattr("bloscpack.containers.bloscpack.sinks.compress_chunk", broken)
    with pytest.raises(errors.ArgumentError, match="compression failed"):
        f.write(b"b" * 100)
    f.close()
    assert f.closed
    assert os.listdir(tmp_path) == []


def test_streaming_write_to_a_pipe():
    sink = Sink()
    with bloscpack.BloscFile(sink, "wb", chunk_size=1000, metadata={"a": 1}) as f:
        assert not f.seekable()
        f.write(PAYLOAD[:2500])
        f.flush()  # whole chunks are out, the rest waits for close
        assert len(sink.data) > 0
        f.write(PAYLOAD[2500:])
    header = BloscpackHeader.decode(bytes(sink.data[:32]))
    assert (header.nchunks, header.offsets, header.chunk_size, header.last_chunk) == (
        -1,
        False,
        1000,
        -1,
    )
    assert header.max_app_chunks == 0
    assert api.unpack_bytes_from_bytes(bytes(sink.data)) == (PAYLOAD, {"a": 1})
    with bloscpack.BloscFile(io.BufferedReader(Pipe(bytes(sink.data), 100))) as f:
        assert f.read(3) == PAYLOAD[:3]
        assert f.read() == PAYLOAD[3:]
    with bloscpack.BloscFile(io.BytesIO(bytes(sink.data))) as f:
        f.seek(-1000, io.SEEK_END)
        assert f.read() == PAYLOAD[-1000:]


@pytest.mark.parametrize("data", [b"", b"z", PAYLOAD[:1000], PAYLOAD[:1001]], ids=len)
def test_streaming_sizes(data):
    sink = Sink()
    with bloscpack.BloscFile(sink, "wb", chunk_size=1000) as f:
        f.write(data)
    with BloscpackReader(bytes(sink.data)) as reader:
        assert [loc.nbytes for loc in reader.locations()] == (
            [len(data)] if len(data) <= 1000 else [1000, len(data) - 1000]
        )
    with bloscpack.BloscFile(io.BufferedReader(Pipe(bytes(sink.data)))) as f:
        assert f.read() == data


def test_real_os_pipe_both_ways(tmp_path):
    read_fd, write_fd = os.pipe()

    def produce():
        with open(write_fd, "wb") as out, bloscpack.BloscFile(out, "wb", chunk_size=4096) as f:
            for start in range(0, len(PAYLOAD), 5000):
                f.write(PAYLOAD[start : start + 5000])

    thread = threading.Thread(target=produce)
    thread.start()
    with open(read_fd, "rb") as pipe, bloscpack.BloscFile(pipe) as f:
        assert not f.seekable()
        with pytest.raises(io.UnsupportedOperation):
            f.seek(0)
        assert f.readline() == PAYLOAD[: PAYLOAD.index(b"\n") + 1]
        rest = f.read()
    thread.join()
    assert PAYLOAD.index(b"\n") + 1 + len(rest) == len(PAYLOAD)


# --- append -------------------------------------------------------------------------------


def test_append_to_a_path(tmp_path):
    path = tmp_path / "a.blp"
    write_file(path, PAYLOAD[:5000], chunk_size=1000, metadata={"v": 1})
    with bloscpack.BloscFile(path, "ab", clevel=1) as f:
        assert f.writable() and not f.readable()
        f.write(PAYLOAD[5000:7000])
        f.write(PAYLOAD[7000:7500])
        assert f.tell() == 2500
    assert api.unpack_bytes_from_file(path) == (PAYLOAD[:7500], {"v": 1})
    with bloscpack.BloscFile(path, "ab", metadata={"v": 2}) as f:
        f.write(b"!")
    assert api.unpack_bytes_from_file(path) == (PAYLOAD[:7500] + b"!", {"v": 2})
    with BloscpackReader(path) as reader:
        assert reader.header.nchunks == 8
        assert reader.header.chunk_size == 1000
        assert reader.header.last_chunk == 501


def test_append_creates_a_missing_file(tmp_path):
    path = tmp_path / "new.blp"
    with bloscpack.BloscFile(path, "ab", chunk_size=100) as f:
        f.write(b"abc" * 100)
    assert api.unpack_bytes_from_file(path)[0] == b"abc" * 100


def test_append_is_all_or_nothing(tmp_path):
    path = tmp_path / "a.blp"
    write_file(path, PAYLOAD[:3000], chunk_size=1000)
    before = path.read_bytes()
    with pytest.raises(KeyError), bloscpack.BloscFile(path, "ab") as f:
        f.write(PAYLOAD[3000:9000])
        raise KeyError("stop")
    assert path.read_bytes() == before
    assert not os.path.exists(journal_path(path))
    with bloscpack.BloscFile(path, "ab") as f:
        pass
    assert path.read_bytes() == before


def test_append_to_a_file_object(tmp_path):
    path = tmp_path / "a.blp"
    write_file(path, PAYLOAD[:3000], chunk_size=1000, offsets=False)
    with open(path, "r+b") as fp:
        with bloscpack.BloscFile(fp, "ab") as f:
            f.write(PAYLOAD[3000:4321])
        assert not fp.closed
    assert api.unpack_bytes_from_file(path)[0] == PAYLOAD[:4321]
    empty = io.BytesIO()
    with bloscpack.BloscFile(empty, "ab", chunk_size=10) as f:
        f.write(b"0123456789abc")
    assert api.unpack_bytes_from_bytes(empty.getvalue())[0] == b"0123456789abc"


@pytest.mark.parametrize(
    "option",
    [{"chunk_size": 10}, {"checksum": "md5"}, {"offsets": False}, {"max_app_chunks": 1}],
)
def test_append_rejects_fixed_options(tmp_path, option):
    path = tmp_path / "a.blp"
    write_file(path, b"abc")
    with pytest.raises(errors.ArgumentError, match="cannot change when appending"):
        bloscpack.BloscFile(path, "ab", **option)


def test_append_to_not_a_container(tmp_path):
    path = tmp_path / "a.blp"
    path.write_bytes(b"not a container at all")
    with pytest.raises(errors.NotAContainer):
        bloscpack.BloscFile(path, "ab")
    with pytest.raises(errors.NotAContainer):
        bloscpack.BloscFile(io.BytesIO(b"nope, not this either"), "ab")


# --- the io protocol ----------------------------------------------------------------------


def test_attributes(tmp_path):
    path = tmp_path / "a.blp"
    f = bloscpack.BloscFile(path, "wb")
    assert isinstance(f, io.BufferedIOBase) and isinstance(f, io.IOBase)
    assert (f.name, f.mode, f.closed) == (str(path), "wb", False)
    assert (f.readable(), f.writable(), f.seekable()) == (False, True, False)
    with pytest.raises(io.UnsupportedOperation):
        f.fileno()
    with pytest.raises(io.UnsupportedOperation):
        f.read(1)
    with pytest.raises(io.UnsupportedOperation):
        f.seek(0)
    with pytest.raises(io.UnsupportedOperation):
        f.truncate()
    assert f.isatty() is False
    f.write(b"abc")
    f.close()
    f.close()
    assert f.closed
    for call in (lambda: f.write(b"x"), f.tell, f.flush, f.writable, lambda: f.read(1)):
        with pytest.raises(ValueError, match="closed file"):
            call()
    with bloscpack.open_file(path, "r") as f:
        assert (f.name, f.mode) == (str(path), "rb")
        assert (f.readable(), f.writable(), f.seekable()) == (True, False, True)
        with pytest.raises(io.UnsupportedOperation):
            f.write(b"x")
        with pytest.raises(io.UnsupportedOperation):
            f.fileno()
        assert repr(f) == f"<bloscpack.BloscFile {str(path)!r} mode='rb'>"
    with pytest.raises(ValueError, match="closed file"):
        f.read()
    with open(path, "rb") as fp, bloscpack.BloscFile(fp) as f:
        assert f.name == str(path)


def test_seek_rules(tmp_path):
    path = tmp_path / "a.blp"
    write_file(path, PAYLOAD, chunk_size=1000)
    with bloscpack.BloscFile(path) as f:
        assert f.seek(10) == 10
        assert f.seek(5, io.SEEK_CUR) == 15
        assert f.read(3) == PAYLOAD[15:18]
        assert f.seek(0, io.SEEK_END) == len(PAYLOAD)
        assert f.read(10) == b""
        assert f.seek(len(PAYLOAD) + 100) == len(PAYLOAD) + 100
        assert f.read() == b""
        assert f.tell() == len(PAYLOAD) + 100
        with pytest.raises(ValueError, match="negative seek position -1"):
            f.seek(-1)
        with pytest.raises(ValueError, match="invalid whence"):
            f.seek(0, 3)
        f.seek(999)
        assert f.peek(1)[:2] == PAYLOAD[999:1001][:1]
        assert f.read1(5000) == PAYLOAD[999:1000]
        assert f.read1() == PAYLOAD[1000:2000]
        buffer = bytearray(1500)
        assert f.readinto(buffer) == 1500
        assert buffer == PAYLOAD[2000:3500]
        assert f.readinto1(buffer) == 500
        assert buffer[:500] == PAYLOAD[3500:4000]


def test_lines_and_iteration(tmp_path):
    text = b"".join(b"line %d " % i + b"x" * (i % 50) + b"\n" for i in range(3000)) + b"end"
    path = tmp_path / "a.blp"
    write_file(path, text, chunk_size=1000)
    with bloscpack.BloscFile(path) as f:
        assert list(f) == text.splitlines(keepends=True)
        f.seek(2)
        assert f.readline(3) == b"ne "
        assert f.readline() == b"0 \n"
        assert f.readlines(10) == [b"line 1 x\n", b"line 2 xx\n"]
        f.seek(len(text) - 3)
        assert f.readline() == b"end"
        assert f.readline() == b""


def test_shutil_copyfileobj_both_ways(tmp_path):
    source = tmp_path / "in.bin"
    source.write_bytes(PAYLOAD)
    with open(source, "rb") as src, bloscpack.BloscFile(tmp_path / "c.blp", "wb") as dst:
        shutil.copyfileobj(src, dst, 10_000)
    with bloscpack.BloscFile(tmp_path / "c.blp") as src, open(tmp_path / "out", "wb") as dst:
        shutil.copyfileobj(src, dst)
    assert (tmp_path / "out").read_bytes() == PAYLOAD
    with bloscpack.BloscFile(tmp_path / "c.blp") as src:
        out = io.BytesIO()
        shutil.copyfileobj(src, out, 333)
        assert out.getvalue() == PAYLOAD


def test_text_wrapper(tmp_path):
    path = tmp_path / "t.blp"
    lines = [f"{i} ünïcode ✓\n" for i in range(5000)]
    with io.TextIOWrapper(bloscpack.BloscFile(path, "wb", chunk_size=4096), "utf-8") as f:
        f.writelines(lines)
    with io.TextIOWrapper(bloscpack.BloscFile(path), "utf-8") as f:
        assert f.readlines() == lines
    with bloscpack.open_file(path, "rt", encoding="utf-8") as f:
        assert isinstance(f, io.TextIOWrapper)
        assert f.readline() == lines[0]
        f.seek(0)
        assert f.read() == "".join(lines)
    with bloscpack.open_file(path, "at", encoding="utf-8", newline="\r\n") as f:
        f.write("more\n")
    assert api.unpack_bytes_from_file(path)[0].endswith("✓\nmore\r\n".encode())


def test_open_file_modes(tmp_path):
    path = tmp_path / "a.blp"
    with bloscpack.open_file(path, "w") as f:
        assert isinstance(f, bloscpack.BloscFile)
        f.write(b"abc")
    with pytest.raises(ValueError, match="both text and binary"):
        bloscpack.open_file(path, "rbt")
    with pytest.raises(ValueError, match="only to text modes"):
        bloscpack.open_file(path, "rb", encoding="utf-8")
    with pytest.raises(ValueError, match="invalid mode 'x'"):
        bloscpack.BloscFile(path, "x")
    with pytest.raises(errors.ArgumentError, match="only when writing"):
        bloscpack.BloscFile(path, "rb", clevel=3)
    with pytest.raises(TypeError, match="unexpected option"):
        bloscpack.BloscFile(path, "wb", compression=3)
    with pytest.raises(TypeError, match="path or a binary file object"):
        bloscpack.BloscFile(42)


def test_buffered_reader_on_top(tmp_path):
    path = tmp_path / "a.blp"
    write_file(path, PAYLOAD, chunk_size=999)
    with io.BufferedReader(bloscpack.BloscFile(path), 4096) as f:
        f.seek(12345)
        assert f.read(10) == PAYLOAD[12345:12355]
        f.seek(0)
        assert f.read() == PAYLOAD


ARRAYS = {
    "f8_2d": np.linspace(0, 1, 30_000).reshape(100, 300),
    "fortran": np.asfortranarray(np.arange(6000, dtype="<i2").reshape(60, 100)),
    "record": np.array([(1, 2.5, b"ab")] * 500, dtype=[("a", "<i4"), ("b", ">f8"), ("c", "S2")]),
    "empty": np.zeros((0, 3), dtype="u1"),
    "scalar": np.array(3.5),
    "unicode": np.array(["ä", "bcd"] * 100),
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_numpy_save_and_load(tmp_path, name):
    array = ARRAYS[name]
    path = tmp_path / "a.blp"
    with bloscpack.BloscFile(path, "wb", chunk_size=1000) as f:
        np.save(f, array)
    reference = io.BytesIO()
    np.save(reference, array)
    assert api.unpack_bytes_from_file(path)[0] == reference.getvalue()
    with bloscpack.BloscFile(path) as f:
        back = np.load(f)
        assert f.read() == b""
    assert back.dtype == array.dtype and back.shape == array.shape
    np.testing.assert_array_equal(back, array)
    assert back.flags.f_contiguous == array.flags.f_contiguous


def test_numpy_savez_read_back_by_random_access(tmp_path):
    path = tmp_path / "a.blp"
    with bloscpack.BloscFile(path, "wb", chunk_size="16K") as f:
        np.savez(f, a=ARRAYS["f8_2d"], b=ARRAYS["record"])
    with bloscpack.BloscFile(path) as f, np.load(f) as archive:
        np.testing.assert_array_equal(archive["b"], ARRAYS["record"])
        np.testing.assert_array_equal(archive["a"], ARRAYS["f8_2d"])
    with bloscpack.BloscFile(path) as f, zipfile.ZipFile(f) as archive:
        assert archive.namelist() == ["a.npy", "b.npy"]


# --- errors on bad inputs -----------------------------------------------------------------


def test_bad_inputs_raise_bloscpack_errors(tmp_path):
    path = tmp_path / "a.blp"
    path.write_bytes(b"")
    with pytest.raises(errors.NotAContainer, match="instead we found: b''"):
        bloscpack.BloscFile(path)
    with pytest.raises(errors.FileNotFound):
        bloscpack.BloscFile(tmp_path / "missing.blp")
    with pytest.raises(errors.NotAContainer):
        bloscpack.BloscFile(io.BufferedReader(Pipe(b"blp")))
    good = api.pack_bytes_to_bytes(PAYLOAD, chunk_size=1000)
    with BloscpackReader(good) as reader:
        boundary = reader.locate(40).offset
    with bloscpack.BloscFile(io.BufferedReader(Pipe(good[:boundary]))) as f:
        assert f.read(40_000) == PAYLOAD[:40_000]  # chunks are read on demand
        with pytest.raises(errors.TruncatedError, match="stream ended after 40 of 140 chunks"):
            f.read(1)
    with pytest.raises(errors.TruncatedError, match="the rest of chunk 40 "):
        bloscpack.BloscFile(io.BufferedReader(Pipe(good[: boundary + 20]))).read()
    with pytest.raises(errors.TruncatedError, match="offsets section"):
        bloscpack.BloscFile(io.BufferedReader(Pipe(good[:100])))


def test_header_sizes_are_checked_against_chunks(tmp_path):
    data = api.pack_bytes_to_bytes(PAYLOAD[:5000], chunk_size=1000)
    header = BloscpackHeader.decode(data[:32])
    header.chunk_size, header.last_chunk = 1250, 0
    bad = header.encode() + data[32:]
    for source in (io.BytesIO(bad), io.BufferedReader(Pipe(bad))):
        with pytest.raises(errors.IntegrityError, match="chunk 0 holds 1000 bytes"):
            bloscpack.BloscFile(source).read()


# --- laziness -----------------------------------------------------------------------------


@pytest.fixture
def decompressions(monkeypatch):
    """Every chunk decompression: (bytes written, destination buffer)."""
    calls = []
    real = engine.decompress_into

    def recording(chunk, out, **kwargs):
        n = real(chunk, out, **kwargs)
        calls.append((n, out))
        return n

    monkeypatch.setattr(engine, "decompress_into", recording)
    return calls


@pytest.mark.parametrize("offsets", [True, False])
def test_seek_and_small_read_decompress_one_chunk(tmp_path, decompressions, offsets):
    data = os.urandom(64 * 1024) * 16  # 1 MiB in 256 chunks of 4 KiB
    path = tmp_path / "big.blp"
    write_file(path, data, chunk_size="4K", offsets=offsets)
    with bloscpack.BloscFile(path) as f:
        assert decompressions == []
        f.seek(600_000)
        assert f.read(10) == data[600_000:600_010]
        assert [n for n, _ in decompressions] == [4096]
        f.seek(600_100)
        assert f.read(100) == data[600_100:600_200]  # the same chunk: from the cache
        assert [n for n, _ in decompressions] == [4096]
        f.seek(4096 * 200 - 5)
        assert f.read(10) == data[4096 * 200 - 5 : 4096 * 200 + 5]
        assert [n for n, _ in decompressions] == [4096] * 3
        assert f.seek(0, io.SEEK_END) == len(data)
        assert len(decompressions) == 3


def test_random_access_reads_only_what_it_needs_from_a_file_object(decompressions):
    data = os.urandom(4096) * 256
    source = CountingBytesIO(api.pack_bytes_to_bytes(data, chunk_size="4K"))
    with bloscpack.BloscFile(source) as f:
        opened = source.bytes_read
        assert opened == 4 + 32 + 8 * 256  # magic, header and the offsets in use
        f.seek(777_777)
        assert f.read(3) == data[777_777:777_780]
        with BloscpackReader(source.getvalue()) as reader:
            chunk = reader.locate(777_777 // 4096)
        per_chunk = chunk.cbytes + chunk.digest_size + 2 * 32  # two header peeks
        assert source.bytes_read - opened <= per_chunk
    assert [n for n, _ in decompressions] == [4096]


def test_file_object_source_overrides_every_byte_source_method():
    from bloscpack.io.sources import ByteSource, FileObjectSource

    public = {name for name in vars(ByteSource) if not name.startswith("_")}
    assert public <= set(vars(FileObjectSource))


@pytest.mark.parametrize("stream", [False, True])
def test_whole_chunk_reads_go_straight_into_the_buffer(tmp_path, decompressions, stream):
    path = tmp_path / "a.blp"
    write_file(path, PAYLOAD, chunk_size=1000)
    buffer = np.zeros(3000, dtype=np.uint8)
    source = io.BufferedReader(Pipe(path.read_bytes())) if stream else path
    with bloscpack.BloscFile(source) as f:
        assert f.read(1000) == PAYLOAD[:1000]
        decompressions.clear()
        assert f.readinto(buffer) == 3000
    assert buffer.tobytes() == PAYLOAD[1000:4000]
    assert [n for n, _ in decompressions] == [1000] * 3
    assert all(np.shares_memory(np.asarray(out), buffer) for _, out in decompressions)


#: Runs in a subprocess under a 512 MiB address-space limit: ``argv[1]`` (a .blp followed by a
#: 1 GiB hole) opened as a file object by BloscFile and by open(); prints what each reads.
FILE_OBJECT_HOLE = """
import resource, sys, bloscpack
resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))
with open(sys.argv[1], "rb") as fh:
    print(bloscpack.BloscFile(fh).read(5))
with open(sys.argv[1], "rb") as fh, bloscpack.open(fh) as array:
    print(array[2:5].tolist(), array.shape, array.info()["format"])
"""


def test_a_file_object_too_large_to_map_is_read_with_positioned_reads(tmp_path):
    """A file object whose file cannot be mapped whole (ENOMEM) reads only what is asked."""
    bloscpack.save(np.arange(100, dtype=np.uint8), tmp_path / "x.blp")
    with open(tmp_path / "x.blp", "r+b") as fh:
        fh.truncate(fh.seek(0, io.SEEK_END) + (1 << 30))
    done = subprocess.run([sys.executable, "-c", FILE_OBJECT_HOLE, "x.blp"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "b'\\x00\\x01\\x02\\x03\\x04'\n[2, 3, 4] (100,) blp\n", "")  # fmt: skip
