"""Decoding every chunk of the golden corpora: C-Blosc2, numpy special/memcpyed paths, snappy."""

from __future__ import annotations

import ast
import builtins
import hashlib
import os
import random
import re
import subprocess
import sys
import weakref
from pathlib import Path

import blosc2
import numpy as np
import pytest
from conftest import DATA, load_manifest

from bloscpack import engine
from bloscpack.blosc import pydecode
from bloscpack.blosc.header import ChunkHeader
from bloscpack.errors import ArgumentError, ChunkError, LazyChunkError, UnsupportedError

BLOSC2 = [e for e in load_manifest("blosc2")["entries"] if e["kind"] == "chunk"]
DECODABLE = [e for e in BLOSC2 if not e["header"]["lazy"]]
SNAPPY = load_manifest("snappy")["entries"]


def sha(data: object) -> str:
    return hashlib.sha256(memoryview(data).cast("B")).hexdigest()  # type: ignore[arg-type]


def read(entry: dict) -> bytes:
    return (DATA / "blosc2" / entry["path"]).read_bytes()


@pytest.mark.parametrize("entry", DECODABLE, ids=[e["path"] for e in DECODABLE])
def test_corpus_payloads(entry: dict) -> None:
    chunk = read(entry)
    out = engine.decompress(chunk)
    assert len(out) == entry["payload"]["nbytes"]
    if entry["payload"]["sha256"] is not None:  # UNINIT: undefined content, compare nbytes only
        assert sha(out) == entry["payload"]["sha256"]
        assert bytes(out) == blosc2.decompress2(chunk)


@pytest.mark.parametrize("entry", DECODABLE, ids=[e["path"] for e in DECODABLE])
def test_corpus_items(entry: dict) -> None:
    """Item ranges at block edges and across blocks equal slices of the whole payload."""
    chunk = read(entry)
    h = ChunkHeader.parse(chunk)
    whole = np.frombuffer(engine.decompress(chunk), np.uint8)
    ts = h.real_typesize
    total = h.nbytes // ts
    per_block = max(h.blocksize // ts, 1) if not h.vl_blocks else 97
    starts = sorted({0, 1, per_block - 1, per_block, total // 2, max(total - 3, 0)})
    for start in (s for s in starts if s <= total):
        n = min(per_block + 3, total - start)
        out = np.full(n * ts + 5, 0xEE, np.uint8)
        assert engine.getitem_into(chunk, start, n, out) == n * ts
        if entry["payload"]["sha256"] is not None:
            assert bytes(out[: n * ts]) == bytes(whole[start * ts : (start + n) * ts])
        assert (out[n * ts :] == 0xEE).all()


def test_lazy_chunks_are_refused() -> None:
    lazy = [e for e in BLOSC2 if e["header"]["lazy"]]
    assert len(lazy) == 2
    for entry in lazy:
        with pytest.raises(LazyChunkError, match="cannot be decoded alone"):
            engine.decompress(read(entry))
        with pytest.raises(LazyChunkError):
            engine.getitem_into(read(entry), 0, 1, bytearray(4))


def test_decompress_into_numpy_and_views() -> None:
    chunk = (DATA / "blosc2/chunks/delta_shuffle_multiblock.chunk").read_bytes()
    want = blosc2.decompress2(chunk)
    out = np.empty(4096, dtype=np.float64)
    assert engine.decompress_into(chunk, out) == 32768
    assert out.tobytes() == want
    out2d = np.empty((64, 64), dtype="<i8")  # any C-contiguous array, any dtype
    engine.decompress_into(memoryview(chunk), out2d)
    assert out2d.tobytes() == want
    with pytest.raises(ArgumentError, match="destination holds 32767 bytes, 32768 are needed"):
        engine.decompress_into(chunk, bytearray(32767))
    with pytest.raises(ArgumentError, match="read-only"):
        engine.decompress_into(chunk, bytes(32768))
    with pytest.raises(ArgumentError, match="C-contiguous"):
        engine.decompress_into(chunk, np.empty((64, 128), "<i8")[:, ::2])


def test_empty_chunks() -> None:
    for chunk in (blosc2.compress2(b""), bytes.fromhex("02011301000000000100000010000000")):
        assert engine.decompress(chunk) == bytearray()
        assert engine.decompress_into(chunk, bytearray()) == 0
        assert engine.getitem_into(chunk, 0, 0, bytearray()) == 0


def test_memcpyed_chunks_are_copied_without_c(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "_libblosc2", lambda: pytest.fail("C was called"))
    chunk = (DATA / "blosc2/chunks/clevel0_memcpy.chunk").read_bytes()
    assert engine.decompress(chunk) == chunk[32:]
    out = bytearray(8)
    engine.getitem_into(chunk, 10, 2, out)
    assert out == chunk[32 + 40 : 32 + 48]


def test_special_chunks_are_filled_without_c(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "_libblosc2", lambda: pytest.fail("C was called"))
    chunk = (DATA / "blosc2/chunks/special_value_f64.chunk").read_bytes()
    out = np.empty(500, np.float64)
    engine.decompress_into(chunk, out)
    assert (out == np.frombuffer(chunk[32:40], np.float64)[0]).all()


def test_uninit_reads_as_zeros() -> None:
    """An uninitialized chunk never shows stale memory: it decodes as zeros, whole or in part."""
    chunk = (DATA / "blosc2/chunks/special_uninit.chunk").read_bytes()
    out = bytearray(b"\x5a" * 4004)
    assert engine.decompress_into(chunk, out) == 4000
    assert out == bytes(4000) + b"\x5a" * 4
    out = bytearray(b"\x5a" * 12)
    assert engine.getitem_into(chunk, 5, 2, out) == 8
    assert out == bytes(8) + b"\x5a" * 4


def test_nan_chunk_with_typesize_2_is_unsupported() -> None:
    chunk = bytearray((DATA / "blosc2/chunks/special_nan_f32.chunk").read_bytes())
    chunk[3] = 2
    with pytest.raises(UnsupportedError, match="NaN chunk with typesize 2"):
        engine.decompress(bytes(chunk))


def test_corrupt_stream_is_a_chunk_error() -> None:
    chunk = bytearray((DATA / "blosc2/chunks/m_zstd_nofilter.chunk").read_bytes())
    chunk[40:60] = bytes(20)  # inside the zstd frame
    with pytest.raises(ChunkError, match="failed to decompress .C-Blosc2 returned -"):
        engine.decompress(bytes(chunk))


def _blocked_chunk(clevel: int = 5) -> tuple[np.ndarray, bytes]:
    """A chunk of 16 blocks of 1024 float32 items (the last one short)."""
    items = np.arange(16 * 1024 - 100, dtype=np.float32)
    return items, blosc2.compress2(items, typesize=4, blocksize=4096, clevel=clevel,
                                   codec=blosc2.Codec.LZ4)  # fmt: skip


@pytest.mark.parametrize("clevel", [5, 0])  # regular, memcpyed
@pytest.mark.parametrize("nthreads", [1, 2])
def test_decompress_blocks_into_decodes_only_the_runs(clevel: int, nthreads: int) -> None:
    """The blocks of the runs land in their places (the short last one too); every other
    byte of the destination is left as it was."""
    items, chunk = _blocked_chunk(clevel)
    assert ChunkHeader.parse(chunk).memcpyed == (clevel == 0)
    out = np.full(items.size, -1, np.float32)
    with engine.threads(nthreads):
        n = engine.decompress_blocks_into(chunk, out, [(1, 2), (15, 1)])
    assert n == items.nbytes
    wanted = np.zeros(items.size, bool)
    wanted[1024:3072] = wanted[15 * 1024 :] = True
    assert np.array_equal(out[wanted], items[wanted])
    assert (out[~wanted] == -1).all()
    # the mask applies to that call only
    whole = np.empty_like(items)
    engine.decompress_into(chunk, whole)
    assert np.array_equal(whole, items)


def test_decompress_blocks_into_checks_only_the_decoded_blocks() -> None:
    items, chunk = _blocked_chunk()
    header = ChunkHeader.parse(chunk)
    starts = np.frombuffer(chunk, "<i4", count=16, offset=header.size)
    damaged = bytearray(chunk)
    damaged[int(starts[3]) : int(starts[3]) + 4] = (1 << 30).to_bytes(4, "little")  # block 3
    out = np.zeros(items.size, np.float32)
    engine.decompress_blocks_into(bytes(damaged), out, [(0, 3), (4, 12)])
    assert np.array_equal(out[:3072], items[:3072])
    with pytest.raises(ChunkError, match="block 3"):
        engine.decompress_blocks_into(bytes(damaged), out, [(2, 2)])
    with pytest.raises(IndexError, match=r"blocks \[15, 17\) out of range for a chunk of 16"):
        engine.decompress_blocks_into(chunk, out, [(15, 2)])


def test_decompress_blocks_into_decodes_special_chunks_whole() -> None:
    chunk = (DATA / "blosc2/chunks/special_value_f64.chunk").read_bytes()
    out = np.empty(500, np.float64)
    engine.decompress_blocks_into(chunk, out, [(0, 1)])
    assert (out == np.frombuffer(chunk[32:40], np.float64)[0]).all()


# --- snappy ---------------------------------------------------------------------------------


def _chunks_in(data: bytes, headers: list[dict]) -> list[bytes]:
    """The Blosc chunks of a container file, located by their headers (given in the manifest)."""
    chunks, pos = [], 0
    for header in headers:
        at = data.index(bytes.fromhex(header["hex"]), pos)
        chunks.append(data[at : at + header["cbytes"]])
        pos = at + header["cbytes"]
    return chunks


def _decode_files(paths: list[Path], headers: list[dict]) -> bytes:
    """Decode bcolz data files: one chunk each, headers in file order."""
    out = b""
    for path, header in zip(paths, headers, strict=True):
        (chunk,) = _chunks_in(path.read_bytes(), [header])
        out += bytes(engine.decompress(chunk))
    return out


def _data_files(directory: Path) -> list[Path]:
    names = sorted(os.listdir(directory), key=lambda n: int(re.findall(r"\d+", n)[0]))
    return [directory / n for n in names]


@pytest.mark.parametrize("entry", SNAPPY, ids=[e["path"] for e in SNAPPY])
def test_snappy_corpus(entry: dict) -> None:
    """Every chunk, .blp file, bcolz carray and ctable of the snappy corpus decodes exactly."""
    path = DATA / "snappy" / entry["path"]
    headers = entry["chunk_headers"]
    if entry["kind"] in ("blosc1_chunk", "bloscpack"):
        chunks = _chunks_in(path.read_bytes(), headers)
        out = b"".join(bytes(engine.decompress(c)) for c in chunks)
        assert sha(out) == entry["sha256_payload"]
    elif entry["kind"] == "bcolz_carray":
        out = _decode_files(_data_files(path / "data"), headers)
        assert sha(out[: entry["payload_nbytes"]]) == entry["sha256_payload"]
    else:
        remaining = list(headers)
        dtype = np.dtype(ast.literal_eval(entry["dtype"]))  # a list of (name, format) pairs
        for column, digest in entry["column_sha256"].items():
            files = _data_files(path / column / "data")
            out = _decode_files(files, remaining[: len(files)])
            del remaining[: len(files)]
            size = entry["shape"][0] * dtype[column].itemsize
            assert sha(out[:size]) == digest


def test_snappy_items_and_numpy_output() -> None:
    path = DATA / "snappy/pyblosc-1.5.1_cblosc-1.11.3_snappy-1.1.1/chunks"
    chunk = (path / "ch16_ts8_shuffle_300000B_partial_lastblock.chunk").read_bytes()
    whole = engine.decompress(chunk)
    out = np.empty(37500, dtype=np.float64)
    engine.decompress_into(chunk, out)
    assert out.tobytes() == whole
    items = bytearray(8 * 5000)
    engine.getitem_into(chunk, 33000, 4500, items)
    assert items[: 8 * 4500] == whole[8 * 33000 : 8 * 37500]


def test_snappy_without_cramjam(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_cramjam(name: str, *args: object, **kwargs: object) -> object:
        if name == "cramjam":
            raise ImportError("No module named 'cramjam'")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_cramjam)
    path = DATA / "snappy/pyblosc-1.11.4_cblosc-1.21.7dev_snappy-1.1.9/chunks"
    chunk = (path / "ch04_ts4_shuffle_i4_256K.chunk").read_bytes()
    with pytest.raises(UnsupportedError, match=r"pip install 'bloscpack\[snappy\]'"):
        engine.decompress(chunk)
    memcpyed = (path / "ch14_ts4_clevel0_memcpyed.chunk").read_bytes()
    assert len(engine.decompress(memcpyed)) == ChunkHeader.parse(memcpyed).nbytes


def test_corrupt_snappy_stream() -> None:
    path = DATA / "snappy/pyblosc-1.11.4_cblosc-1.21.7dev_snappy-1.1.9/chunks"
    chunk = bytearray((path / "ch08_ts8_noshuffle_f8.chunk").read_bytes())
    chunk[24] ^= 0xFF  # the varint length that opens the first snappy stream
    with pytest.raises(ChunkError, match="block 0 stream 0"):
        engine.decompress(bytes(chunk))


# --- the pure decoder on codecs the standard library has: checks the filters and layout -----


def _zlib_stream(compressed: memoryview, dest: np.ndarray) -> int:
    import zlib

    data = zlib.decompress(compressed)
    dest[: len(data)] = np.frombuffer(data, np.uint8)[: len(dest)]
    return len(data)


ZLIB = [e for e in BLOSC2 if e["header"]["codec_format"] == 3 and e["layout"]]


@pytest.mark.parametrize("entry", ZLIB, ids=[e["path"] for e in ZLIB])
def test_pure_decoder_matches_c(entry: dict) -> None:
    chunk = read(entry)
    out = bytearray(entry["payload"]["nbytes"])
    pydecode.decode_into(chunk, out, _zlib_stream)
    assert sha(out) == entry["payload"]["sha256"]


@pytest.mark.parametrize("shuffle", [0, 1, 2])
@pytest.mark.parametrize(
    ("typesize", "nitems"), [(1, 1000), (4, 1001), (8, 333), (3, 77), (16, 64)]
)
def test_pure_decoder_filters_on_zlib(shuffle: int, typesize: int, nitems: int) -> None:
    """zlib chunks from C-Blosc 1.x and C-Blosc2: shuffle and bitshuffle undone with numpy."""
    counter = np.arange(nitems)
    items = np.zeros((nitems, typesize), np.uint8)  # little-endian counters: shuffle matters
    items[:, 0] = counter % 256
    items[:, min(1, typesize - 1)] |= (counter // 256).astype(np.uint8)
    data = items.reshape(-1)
    decoded = 0
    chunks = [engine.compress_blosc1(data, typesize=typesize, clevel=9, shuffle=shuffle,
                                     codec="zlib", blocksize=blocksize)
              for blocksize in (0, 256)]  # fmt: skip
    for blocksize in (0, typesize * 64, typesize * 256):
        chunks.append(engine.compress_blosc2(data, typesize=typesize, clevel=9, codec="zlib",
                                             filters=[0, 0, 0, 0, 0, shuffle],
                                             blocksize=blocksize, splitmode="always"))  # fmt: skip
    for chunk in chunks:
        if not ChunkHeader.parse(chunk).memcpyed:  # tiny blocks may not compress
            out = bytearray(len(data))
            pydecode.decode_into(chunk, out, _zlib_stream)
            assert out == data.tobytes()
            decoded += 1
    assert decoded >= 3


def test_corrupt_delta_chunk_does_not_deadlock() -> None:
    """With threads, C-Blosc2 waits forever for a DELTA chunk's failed block 0: decode such
    chunks with one C thread.  Run in a subprocess so that a deadlock fails, not hangs."""
    path = str(DATA / "blosc2/chunks/delta_only_lz4.chunk")
    code = (
        "from bloscpack import engine\n"
        "from bloscpack.errors import ChunkError\n"
        "engine.set_nthreads(2)\n"
        f"chunk = bytearray(open({path!r}, 'rb').read())\n"
        "chunk[48:52] = b'\\xff' * 4  # block 0: an lz4 token that runs past its input\n"
        "for _ in range(3000):\n"
        "    try:\n"
        "        engine.decompress(bytes(chunk))\n"
        "    except ChunkError:\n"
        "        pass\n"
        "print('done')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.stdout.strip() == "done", proc.stderr


def test_context_reuse_in_any_order() -> None:
    """A C context decodes chunk after chunk: no state (filters_meta, dictionary, split)
    carries over from one chunk to the next, whatever the order."""
    entries = [e for e in DECODABLE if e["payload"]["sha256"]]
    chunks = {e["path"]: read(e) for e in entries}
    rng = random.Random(7)
    for _ in range(3):
        rng.shuffle(entries)
        for entry in entries:
            chunk = chunks[entry["path"]]
            whole = engine.decompress(chunk)
            assert sha(whole) == entry["payload"]["sha256"], entry["path"]
            ts = ChunkHeader.parse(chunk).real_typesize
            n = min(len(whole) // ts, 300)
            items = bytearray(n * ts)
            engine.getitem_into(chunk, 0, n, items)
            assert items == whole[: n * ts], entry["path"]


@pytest.mark.parametrize("splitmode", ["always", "never"])
def test_blosc2_chunk_bytes_do_not_depend_on_the_thread_count(splitmode):
    """C threads store each block where the output stands when it is done; the engine puts
    the blocks back in order: the bytes of one thread, whatever the scheduling."""
    data = np.cumsum(np.random.default_rng(3).normal(size=1 << 19)).astype("<f4")
    settings = {"typesize": 4, "codec": "lz4", "blocksize": 8192, "splitmode": splitmode}
    one = bytes(engine.compress_blosc2(data, **settings, nthreads=1))
    assert ChunkHeader.parse(one).nblocks == 256
    for _ in range(10):
        assert bytes(engine.compress_blosc2(data, **settings, nthreads=4)) == one


def test_compress_into_gives_the_bytes_of_compress_in_any_room():
    """A chunk that does not shrink is stored as it is whatever room the destination has
    (C-Blosc2 would try a bigger compressed chunk in more room): the bytes of
    ``compress_blosc2``; too little room is refused."""
    data = np.random.default_rng(4).integers(0, 256, 40, dtype=np.uint8)
    expected = bytes(engine.compress_blosc2(data, typesize=4, codec="zstd"))
    assert len(expected) == 40 + 32
    dest = np.full(1000, 7, np.uint8)
    n = engine.compress_blosc2_into(data, dest, typesize=4, codec="zstd")
    assert bytes(dest[:n]) == expected and bool(np.all(dest[n:] == 7))
    with pytest.raises(ArgumentError, match="a chunk of 40 bytes needs a destination of at"
                       " least 72 bytes, got 71"):  # fmt: skip
        engine.compress_blosc2_into(data, bytearray(71), typesize=4)


def test_compress_in_order_reuses_its_buffers_and_raises_the_first_error():
    """Results come in order, each in one of ``IN_FLIGHT_PER_WORKER * workers`` buffers
    (valid until the next is asked for), none of which outlives the call; the first error,
    in order, is raised, also one of the items' iterator."""
    data = [np.full(1000, i, np.uint8) for i in range(12)]
    buffers: dict[int, weakref.ref[np.ndarray]] = {}

    def compress(i: int, dest: np.ndarray) -> int:
        buffers.setdefault(id(dest.base), weakref.ref(dest.base))
        return engine.compress_blosc2_into(data[i], dest, typesize=1, nthreads=1)

    seen = set()
    for i, view in enumerate(engine.compress_in_order(compress, range(12), 1032, 2)):
        assert bytes(view) == bytes(engine.compress_blosc2(data[i], typesize=1, nthreads=1))
        seen.add(np.frombuffer(view, np.uint8).__array_interface__["data"][0])
    del view
    assert len(seen) == engine.IN_FLIGHT_PER_WORKER * 2 == len(buffers)
    assert [ref() is None for ref in buffers.values()] == [True] * len(buffers)

    def failing(i: int, dest: np.ndarray) -> int:
        if i in (5, 7):
            raise OSError(f"chunk {i}")
        return compress(i, dest)

    done = []
    with pytest.raises(OSError, match="^chunk 5$"):
        for view in engine.compress_in_order(failing, range(12), 1032, 2):
            done.append(bytes(view))
    assert len(done) == 5

    def items():
        yield from range(3)
        raise OSError("no item 3")

    done.clear()
    with pytest.raises(OSError, match="^no item 3$"):
        for view in engine.compress_in_order(compress, items(), 1032, 2):
            done.append(bytes(view))
    assert len(done) == 3
