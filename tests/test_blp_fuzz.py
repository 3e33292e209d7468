"""Property tests of the .blp reader and writer: round trips of arbitrary bytes, settings and
arrays; arbitrary and mutated container bytes raise only BloscpackError subclasses (never a
crash, hang, MemoryError or large allocation), and ``verify`` never raises."""

from __future__ import annotations

import contextlib
import io
import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from bloscpack import api
from bloscpack.containers.bloscpack import BloscpackReader, BloscpackWriter, compress_chunk
from bloscpack.containers.bloscpack import info as blp_info
from bloscpack.containers.bloscpack import verify as blp_verify
from bloscpack.containers.bloscpack.args import BloscArgs, BloscpackArgs, MetadataArgs
from bloscpack.errors import BloscpackError, InvalidCodePoint

MEMORY_LIMIT = 64 * 2**20  # bytes any single hostile input may make the reader allocate
FUZZ = settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow])


class _Pipe(io.RawIOBase):
    """A write-only, unseekable sink (like stdout)."""

    def __init__(self) -> None:
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:  # type: ignore[override]
        self.data += bytes(b)
        return len(b)


def _stream() -> bytes:
    """A stream of unknown length: nchunks -1, no offsets."""
    sink = _Pipe()
    writer = BloscpackWriter(sink, chunk_size=300, last_chunk=-1, nchunks=-1, typesize=2)
    data = b"xy" * 350
    for start in range(0, len(data), 300):
        writer.write_chunk(compress_chunk(data[start : start + 300], BloscArgs(typesize=2)))
    writer.close()
    return bytes(sink.data)


def _seeds() -> list[bytes]:
    data = bytes(range(256)) * 8
    return [
        api.pack_bytes_to_bytes(data, chunk_size=512),
        api.pack_bytes_to_bytes(
            data,
            chunk_size=700,
            metadata={"k": [1, "v"]},
            bloscpack_args=BloscpackArgs(offsets=False, checksum=None),
        ),
        api.pack_bytes_to_bytes(
            data,
            chunk_size=1000,
            metadata={"z": "z" * 100},
            blosc_args=BloscArgs(typesize=1, cname="zstd"),
            bloscpack_args=BloscpackArgs(checksum=None),
            metadata_args=MetadataArgs(meta_checksum="None"),
        ),
        api.pack_bytes_to_bytes(
            data,
            chunk_size=2048,
            blosc_args=BloscArgs(
                typesize=4, cname="lz4", blosc_version=2, filters=["delta", "shuffle"]
            ),
            bloscpack_args=BloscpackArgs(checksum=None),
        ),
        api.pack_ndarray_to_bytes(
            np.arange(300, dtype="<i4").reshape(20, 15),
            chunk_size=400,
            bloscpack_args=BloscpackArgs(checksum=None),
        ),
        api.pack_ndarray_to_bytes(np.zeros(10, dtype=[("a", "<f8"), ("b", "S3")])),
        api.pack_bytes_to_bytes(b""),
        _stream(),
    ]


SEEDS = _seeds()


def _exercise(raw: bytes) -> None:
    """Everything a reader may do with ``raw``; only BloscpackError may escape."""
    report = blp_verify(raw)  # never raises
    assert isinstance(report["ok"], bool)
    assert report["ok"] or report["problems"] or report["bad_chunks"]
    for operation in (api.unpack_bytes_from_bytes, api.unpack_ndarray_from_bytes, blp_info):
        with contextlib.suppress(BloscpackError):
            operation(raw)
    with contextlib.suppress(BloscpackError), BloscpackReader(raw) as reader:
        for index in range(min(len(reader.offsets), 16)):
            with contextlib.suppress(BloscpackError):
                reader.read_chunk(index)


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
    _exercise_bounded(raw)
    _exercise_bounded(b"blpk\x03" + raw)


_INT_FIELDS = [(8, "<i"), (12, "<i"), (16, "<q"), (24, "<q")]

mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(1, 255)),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.just(0)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.integers(0, 255)),
    st.tuples(
        st.just("field"),
        st.sampled_from(range(len(_INT_FIELDS))),
        st.sampled_from([-(2**31), -2, -1, 0, 1, 7, 2**31 - 1, 2**40, 2**62]),
    ),
    st.tuples(
        st.just("int32"),
        st.integers(0, 10**6),
        st.sampled_from([-1, 0, 1, 2**31 - 1, 2**30, 65536]),
    ),
)


def _mutate(raw: bytes, steps: list[tuple[str, int, int]]) -> bytes:
    data = bytearray(raw)
    for kind, where, value in steps:
        if kind == "field":
            offset, fmt = _INT_FIELDS[where]
            size = struct.calcsize(fmt)
            if fmt == "<i":
                value = max(-(2**31), min(value, 2**31 - 1))
            data[offset : offset + size] = struct.pack(fmt, value)
            continue
        if not data:
            break
        position = where % len(data)
        if kind == "flip":
            data[position] ^= value
        elif kind == "truncate":
            del data[position:]
        elif kind == "insert":
            data.insert(position, value)
        else:
            data[position : position + 4] = struct.pack("<i", value)
    return bytes(data)


@FUZZ
@given(st.sampled_from(range(len(SEEDS))), st.lists(mutation, min_size=1, max_size=4))
def test_mutated_containers(seed, steps):
    _exercise_bounded(_mutate(SEEDS[seed], steps))


def test_seeds_are_valid():
    for raw in SEEDS:
        assert blp_verify(raw)["ok"], blp_verify(raw)


# --- round trips --------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    data=st.binary(max_size=5000),
    chunk_size=st.integers(1, 3000),
    cname=st.sampled_from(["blosclz", "lz4", "lz4hc", "zlib", "zstd"]),
    typesize=st.integers(1, 16),
    shuffle=st.sampled_from([True, False, 2]),
    checksum=st.sampled_from(["None", "adler32", "crc32", "md5", "sha512"]),
    offsets=st.booleans(),
    blosc_version=st.sampled_from([1, 2]),
    metadata=st.none() | st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5)),
)
def test_bytes_round_trip(
    data, chunk_size, cname, typesize, shuffle, checksum, offsets, blosc_version, metadata
):
    blosc_args = BloscArgs(
        typesize=typesize, cname=cname, shuffle=shuffle, blosc_version=blosc_version
    )
    packed = api.pack_bytes_to_bytes(
        data,
        chunk_size=chunk_size,
        metadata=metadata,
        blosc_args=blosc_args,
        bloscpack_args=BloscpackArgs(offsets=offsets, checksum=checksum),
    )
    assert api.unpack_bytes_from_bytes(packed) == (data, metadata)
    assert blp_verify(packed)["ok"]


_leaf_dtypes = st.one_of(
    hnp.scalar_dtypes(),
    hnp.byte_string_dtypes(max_len=300),
    hnp.unicode_string_dtypes(max_len=80),
    st.sampled_from([np.dtype("V4"), np.dtype(">c16"), np.dtype("<M8[us]"), np.dtype(">m8[D]")]),
)
_dtypes = st.one_of(
    _leaf_dtypes,
    hnp.array_dtypes(_leaf_dtypes, min_size=1, max_size=4),
    hnp.nested_dtypes(_leaf_dtypes, max_leaves=6, max_itemsize=600),
    st.builds(lambda d: np.dtype(d, align=True), hnp.array_dtypes(_leaf_dtypes, max_size=4)),
)


@settings(max_examples=80, deadline=None)
def _invalid_text(array: np.ndarray) -> bool:
    """Whether ``array`` holds ``U`` items (in fields too) above U+10FFFF, found by numpy."""
    fields = array.dtype.fields
    if fields:
        return any(_invalid_text(array[name]) for name in fields)
    if array.dtype.kind != "U" or not array.size:
        return False
    return bool((np.ascontiguousarray(array).view(np.uint32) > 0x10FFFF).any())


@given(
    dtype=_dtypes,
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6),
    order=st.sampled_from(["C", "F", "noncontiguous"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_array_round_trip(dtype, shape, order, seed):
    size = int(np.prod(shape)) * dtype.itemsize
    raw = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes()
    array = np.frombuffer(raw, dtype=dtype).reshape(shape)
    if order == "F":
        array = np.asfortranarray(array)
    elif order == "noncontiguous" and array.ndim:
        array = np.repeat(array, 2, axis=0)[::2]
    packed = api.pack_ndarray_to_bytes(array)
    if _invalid_text(array):  # random bytes as text: code points above U+10FFFF
        with pytest.raises(InvalidCodePoint, match=r"^<bytes>: the text data holds an invalid"):
            api.unpack_ndarray_from_bytes(packed)
        return
    back = api.unpack_ndarray_from_bytes(packed)
    assert repr(back.dtype) == repr(array.dtype)
    assert back.shape == array.shape
    assert np.ascontiguousarray(back).tobytes() == np.ascontiguousarray(array).tobytes()
