"""Decoding a .blp payload with several threads: same bytes, same checks, same first error."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import bloscpack as bp
from bloscpack import engine
from bloscpack.containers.bloscpack import BloscpackReader
from bloscpack.errors import ChecksumMismatch, ChunkError
from bloscpack.io.sources import ByteSource

CHUNK = 128 * 1024


@pytest.fixture
def two_threads():
    old = engine.set_nthreads(2)
    yield
    engine.set_nthreads(old)


def _incompressible(n: int) -> np.ndarray:
    return np.random.default_rng(7).integers(0, 2**63, n // 8, dtype=np.int64)


def _random_walk(n: int) -> np.ndarray:
    steps = np.random.default_rng(7).standard_normal(n // 4, dtype=np.float32)
    return np.cumsum(steps, dtype=np.float32)


def _packed(array: np.ndarray) -> bytearray:
    return bytearray(bp.pack_ndarray_to_bytes(array, chunk_size=CHUNK))


def _chunk_offsets(buf: bytearray) -> list[tuple[int, int]]:
    with BloscpackReader(ByteSource(bytes(buf))) as reader:
        return [(loc.offset, loc.cbytes) for loc in reader.locations()]


@pytest.mark.usefixtures("two_threads")
def test_parallel_round_trip_exact(monkeypatch) -> None:
    calls = []
    run_workers = engine.run_workers
    monkeypatch.setattr(
        engine, "run_workers", lambda work, n: (calls.append(n), run_workers(work, n))
    )
    array = _incompressible(7 * CHUNK + 4096)
    out = bp.unpack_ndarray_from_bytes(_packed(array))
    assert out.dtype == array.dtype and np.array_equal(out, array)
    assert calls == [2]


@pytest.mark.usefixtures("two_threads")
def test_parallel_round_trip_from_file(tmp_path) -> None:
    array = _incompressible(9 * CHUNK)
    path = tmp_path / "a.blp"
    bp.pack_ndarray_to_file(array, path, chunk_size=CHUNK)
    assert np.array_equal(bp.unpack_ndarray_from_file(path), array)


@pytest.mark.usefixtures("two_threads")
def test_parallel_reports_first_bad_digest() -> None:
    buf = _packed(_incompressible(8 * CHUNK))
    offsets = _chunk_offsets(buf)
    for index in (5, 2):  # chunk 2 is decoded by another thread than chunk 5
        offset, cbytes = offsets[index]
        buf[offset + cbytes - 1] ^= 0xFF
    with pytest.raises(
        ChecksumMismatch, match=r"Checksum mismatch detected in chunk 2 \(adler32\)"
    ):
        bp.unpack_ndarray_from_bytes(buf)


@pytest.mark.usefixtures("two_threads")
def test_parallel_reports_first_bad_chunk_without_digest() -> None:
    array = _random_walk(12 * CHUNK)  # compressed (with block starts), not memcpyed
    buf = bytearray(
        bp.pack_ndarray_to_bytes(
            array, chunk_size=2 * CHUNK, bloscpack_args=bp.BloscpackArgs(checksum="None")
        )
    )
    assert bp.unpack_ndarray_from_bytes(buf).tobytes() == array.tobytes()
    offsets = _chunk_offsets(buf)
    for index in (4, 3):
        offset, _ = offsets[index]
        buf[offset + 16 : offset + 20] = (2**31 - 1).to_bytes(4, "little")  # block 0 start
    with pytest.raises(ChunkError, match="chunk 3 "):
        bp.unpack_ndarray_from_bytes(buf)


# --- compressing several chunks at once ----------------------------------------------------


def _serially(packer, *args, **kwargs):
    old = engine.set_nthreads(1)
    try:
        return packer(*args, **kwargs)
    finally:
        engine.set_nthreads(old)


@pytest.mark.usefixtures("two_threads")
@pytest.mark.parametrize(
    "blosc_args",
    [
        bp.BloscArgs(),
        bp.BloscArgs(cname="lz4", clevel=5, shuffle=2),
        bp.BloscArgs(cname="zstd", clevel=3, blocksize=16384),
        bp.BloscArgs(blosc_version=2, cname="zstd", filters=["bytedelta"]),
    ],
    ids=["blosc1-default", "blosc1-lz4-bitshuffle", "blosc1-blocksize", "blosc2"],
)
def test_parallel_packing_writes_the_same_bytes(blosc_args) -> None:
    array = _random_walk(9 * CHUNK + 1000)
    pack = bp.pack_ndarray_to_bytes
    expected = _serially(pack, array, chunk_size=CHUNK, blosc_args=blosc_args)
    assert pack(array, chunk_size=CHUNK, blosc_args=blosc_args) == expected
    assert np.array_equal(bp.unpack_ndarray_from_bytes(expected), array)


@pytest.mark.usefixtures("two_threads")
def test_parallel_file_packing_reuses_its_buffers_safely(tmp_path) -> None:
    data = _random_walk(13 * CHUNK + 12).tobytes()
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    _serially(bp.pack_file_to_file, src, tmp_path / "serial.blp", chunk_size=CHUNK)
    bp.pack_file_to_file(src, tmp_path / "parallel.blp", chunk_size=CHUNK)
    assert (tmp_path / "parallel.blp").read_bytes() == (tmp_path / "serial.blp").read_bytes()
    bp.unpack_file_from_file(tmp_path / "parallel.blp", tmp_path / "out.bin")
    assert (tmp_path / "out.bin").read_bytes() == data


@pytest.mark.usefixtures("two_threads")
def test_parallel_blosc1_compression_restores_python_blosc_settings() -> None:
    import blosc

    from bloscpack.containers.bloscpack.writer import compress_chunks

    chunks = compress_chunks([bytes(1000)] * 4, bp.BloscArgs(), 4)
    next(chunks)
    assert blosc.set_releasegil(True) == 1  # released while the chunks are made
    chunks.close()  # leaving early gives python-blosc back to other compressions
    assert blosc.set_releasegil(False) == 0
    assert blosc.set_blocksize(0) is None and not engine._blosc1_lock.locked()
    assert engine.compress_blosc1(bytes(1000), typesize=1)[:2] == b"\x02\x01"


@pytest.mark.usefixtures("two_threads")
def test_parallel_unpacking_to_a_file_reports_the_first_bad_chunk(tmp_path) -> None:
    buf = _packed(_incompressible(8 * CHUNK))
    for index in (6, 3):
        offset, cbytes = _chunk_offsets(buf)[index]
        buf[offset + cbytes - 1] ^= 0xFF
    path = tmp_path / "bad.blp"
    path.write_bytes(bytes(buf))
    with pytest.raises(ChecksumMismatch, match=r"in chunk 3 \(adler32\)"):
        bp.unpack_file_from_file(path, tmp_path / "out.bin")
    assert not (tmp_path / "out.bin").exists()


def test_map_in_order_keeps_order_and_raises_the_first_error() -> None:
    def square(x: int) -> int:
        if x in (7, 5):
            raise ValueError(f"bad {x}")
        return x * x

    assert list(engine.map_in_order(square, range(5), 3)) == [0, 1, 4, 9, 16]
    with pytest.raises(ValueError, match="bad 5"):
        list(engine.map_in_order(square, range(10), 3))


@pytest.mark.usefixtures("two_threads")
def test_a_single_many_block_chunk_does_not_depend_on_threads() -> None:
    array = _random_walk(2 * 1024 * 1024)  # one chunk of 8 lz4 blocks
    args = bp.BloscArgs(cname="lz4", blocksize=65536)
    expected = _serially(bp.pack_ndarray_to_bytes, array, chunk_size="2M", blosc_args=args)
    header = bp.ChunkHeader.parse(BloscpackReader(ByteSource(expected)).read_chunk(0))
    assert header.nbytes // header.blocksize == 8
    for _ in range(5):
        assert bp.pack_ndarray_to_bytes(array, chunk_size="2M", blosc_args=args) == expected


@pytest.mark.usefixtures("two_threads")
def test_a_lone_blosc2_chunk_is_compressed_with_the_c_threads(monkeypatch) -> None:
    """One Blosc2 chunk: all C threads compress it, and the bytes are those of one thread."""
    array = _random_walk(2 * 1024 * 1024)  # one chunk of 32 lz4 blocks
    args = bp.BloscArgs(cname="lz4", blocksize=65536, blosc_version=2)
    expected = _serially(bp.pack_ndarray_to_bytes, array, chunk_size="2M", blosc_args=args)
    calls = []
    compress = engine.compress_blosc2

    def spy(data, **settings):
        calls.append(settings.get("nthreads"))
        return compress(data, **settings)

    monkeypatch.setattr(engine, "compress_blosc2", spy)
    for _ in range(5):
        assert bp.pack_ndarray_to_bytes(array, chunk_size="2M", blosc_args=args) == expected
    assert calls == [None] * 5


@pytest.mark.usefixtures("two_threads")
def test_parallel_errors_name_the_chunk_once() -> None:
    buf = _packed(_incompressible(8 * CHUNK))
    offset, cbytes = _chunk_offsets(buf)[6]
    buf[offset + cbytes - 1] ^= 0xFF
    with pytest.raises(ChecksumMismatch) as info:
        bp.unpack_ndarray_from_bytes(buf)
    assert str(info.value).startswith("<bytes>: Checksum mismatch detected in chunk 6 (adler32)")


def test_decoding_runs_cover_the_chunks_longest_first() -> None:
    from bloscpack.containers.bloscpack.reader import _runs

    runs = _runs(256, 1 << 20, 2)
    assert runs[0] == (0, 64) and runs[-1] == (252, 256)
    assert [stop for _, stop in runs[:-1]] == [first for first, _ in runs[1:]]
    sizes = [stop - first for first, stop in runs]
    assert sizes == sorted(sizes, reverse=True) and min(sizes) == 4  # 4 MiB at least
    assert _runs(3, 100, 2) == [(0, 3)]
    assert _runs(0, 100, 2) == []
    assert _runs(5, 8 << 20, 4) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]


@pytest.mark.usefixtures("two_threads")
@pytest.mark.parametrize("write", [
    lambda array, path: bp.pack_ndarray_to_file(array, str(path), chunk_size=CHUNK),
    lambda array, path: bp.save(array, path.with_suffix(".bcolz"), chunklen=CHUNK // 4),
], ids=["blp-pack", "bcolz-save"])  # fmt: skip
def test_blosc1_writers_need_no_shared_pool_thread(tmp_path, write) -> None:
    """The writers that hold python-blosc's settings while several threads compress use
    threads of their own: Blosc1 work on the shared pool's threads, which waits for those
    settings, cannot stall them (with such work on every pool thread, it was a deadlock)."""
    release = threading.Event()
    pool = engine._shared_pool(2)
    busy = [pool.submit(release.wait, 60) for _ in range(engine._pool_size)]
    array = _random_walk(9 * CHUNK + 1000)
    done = threading.Event()
    writer = threading.Thread(target=lambda: (write(array, tmp_path / "a.blp"), done.set()))
    try:
        writer.start()
        assert done.wait(30)
    finally:
        release.set()
        writer.join()
    assert all(future.result() for future in busy)
