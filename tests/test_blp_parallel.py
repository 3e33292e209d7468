"""Decoding a .blp payload with several threads: same bytes, same checks, same first error."""

from __future__ import annotations

import numpy as np
import pytest

import bloscpack as bp
from bloscpack import engine
from bloscpack.containers.bloscpack import BloscpackReader
from bloscpack.errors import ChecksumMismatch, ChunkError
from bloscpack.io import ByteSource

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
