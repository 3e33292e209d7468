"""Property tests of the python-blosc2 store reader: arbitrary bytes and mutated stores (zip
records and fields, an embed store's frame) raise only BloscpackError subclasses (never a
crash, a hang, a MemoryError or a large allocation), and ``verify`` never raises."""

from __future__ import annotations

import contextlib
import struct
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bloscpack
from bloscpack.containers.b2nd import load as load_b2nd
from bloscpack.containers.b2store import StoreReader, verify
from bloscpack.errors import BloscpackError
from bloscpack.io.sources import ByteSource

MEMORY_LIMIT = 64 * 2**20  # bytes any single hostile input may make the reader allocate
FUZZ = settings(max_examples=200, deadline=4000, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """A zip store (two members, attributes) and an EmbedStore, as saved here."""
    root: Path = tmp_path_factory.mktemp("store_seeds")
    arrays = {"x": np.arange(300, dtype="<i4"), "g/y": np.linspace(0, 1, 40).reshape(4, 10)}
    bloscpack.save(arrays, root / "s.b2z", metadata={"a": 1}, chunks=(100,), blocks=(20,))
    bloscpack.save(arrays, root / "s.b2e", chunks=(100,), blocks=(20,))
    return [(root / "s.b2z").read_bytes(), (root / "s.b2e").read_bytes()]


def _exercise(raw: bytes) -> None:
    with contextlib.suppress(BloscpackError), StoreReader(ByteSource(raw)) as store:
        keys = store.keys()
        for key in keys:
            with contextlib.suppress(BloscpackError):
                load_b2nd(store.member(key))
    report = verify(ByteSource(raw))
    assert isinstance(report["ok"], bool)


def _exercise_bounded(raw: bytes) -> None:
    tracemalloc.start()
    try:
        _exercise(raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_LIMIT, f"{peak} bytes allocated for a {len(raw)}-byte input"


@FUZZ
@given(st.binary(max_size=400))
def test_arbitrary_bytes(raw):
    _exercise_bounded(b"PK\x03\x04" + raw)
    _exercise_bounded(raw + b"PK\x05\x06" + bytes(18))


#: Values that make a zip field hostile.
HOSTILE = [0, 1, 29, 30, 2**16 - 1, 2**31 - 1, 2**32 - 1]

mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(1, 255)),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.just(0)),
    # a 4-byte field of the central directory or the end record (from the end of the file)
    st.tuples(st.just("tail32"), st.integers(4, 400), st.sampled_from(HOSTILE)),
    st.tuples(st.just("tail16"), st.integers(2, 400), st.sampled_from(HOSTILE[:5])),
)


def _mutate(raw: bytes, steps: list[tuple[str, int, int]]) -> bytes:
    data = bytearray(raw)
    for kind, where, value in steps:
        if not data:
            break
        if kind == "flip":
            data[where % len(data)] ^= value
        elif kind == "truncate":
            del data[where % len(data) :]
        elif len(data) >= where:
            fmt = "<I" if kind == "tail32" else "<H"
            struct.pack_into(
                fmt, data, len(data) - where, value & (2 ** (8 * struct.calcsize(fmt)) - 1)
            )
    return bytes(data)


@FUZZ
@given(st.integers(0, 1), st.lists(mutation, min_size=1, max_size=3))
def test_mutated_stores(seeds, which, steps):
    _exercise_bounded(_mutate(seeds[which], steps))


def test_the_seeds_read(seeds):
    for raw in seeds:
        with StoreReader(ByteSource(raw)) as store:
            assert store.keys() == ["/g/y", "/x"]
            assert load_b2nd(store.member("/x")).tolist() == list(range(300))
        assert verify(ByteSource(raw))["ok"] is True
