"""Property tests of BloscFile: random write sizes give the bytes pack_bytes_to_bytes gives,
random seek/read sequences match an io.BytesIO model, and arbitrary or mutated input raises
only BloscpackError subclasses (through random access and through a stream)."""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bloscpack
from bloscpack import api, engine, errors

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    old = engine.set_nthreads(1)
    yield
    engine.set_nthreads(old)


class Pipe(io.RawIOBase):
    """A readable, non-seekable stream over bytes, handing out at most ``piece`` at a time."""

    def __init__(self, data: bytes, piece: int) -> None:
        self._data = io.BytesIO(data)
        self._piece = piece

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        return self._data.readinto(memoryview(b)[: self._piece])


payloads = st.binary(max_size=3000) | st.builds(
    lambda line, n: line * n, st.binary(min_size=1, max_size=40), st.integers(0, 200)
)


@FAST
@given(
    data=payloads,
    chunk_size=st.integers(1, 700),
    cuts=st.lists(st.integers(0, 3000), max_size=12),
    offsets=st.booleans(),
)
def test_random_write_sizes(data, chunk_size, cuts, offsets):
    boundaries = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    sink = io.BytesIO()
    with bloscpack.BloscFile(sink, "wb", chunk_size=chunk_size, offsets=offsets) as f:
        for start, end in zip(boundaries, boundaries[1:], strict=False):
            assert f.write(data[start:end]) == end - start
            assert f.tell() == end
    expected = api.pack_bytes_to_bytes(
        data,
        chunk_size=chunk_size,
        bloscpack_args=bloscpack.BloscpackArgs(offsets=offsets),
    )
    assert sink.getvalue() == expected
    stream = io.BytesIO()
    stream.seekable = lambda: False  # a pipe: the streaming container
    with bloscpack.BloscFile(stream, "wb", chunk_size=chunk_size) as f:
        for start, end in zip(boundaries, boundaries[1:], strict=False):
            f.write(data[start:end])
    assert api.unpack_bytes_from_bytes(stream.getvalue())[0] == data


operations = st.lists(
    st.one_of(
        st.tuples(st.just("read"), st.integers(-1, 900) | st.none()),
        st.tuples(st.just("readinto"), st.integers(0, 900)),
        st.tuples(st.just("readline"), st.integers(-1, 300)),
        st.tuples(st.just("read1"), st.integers(-1, 900)),
        st.tuples(st.just("seek"), st.integers(-3500, 3500), st.sampled_from([0, 1, 2])),
        st.tuples(st.just("tell")),
    ),
    max_size=30,
)


def _apply(f, model: io.BytesIO, op: tuple):
    """Run ``op`` on the BloscFile and on the model; both must agree."""
    name, *args = op
    if name == "seek":
        offset, whence = args
        target = offset + [0, model.tell(), len(model.getvalue())][whence]
        if target < 0:  # BytesIO clamps some of these to 0; files refuse them
            with pytest.raises(ValueError, match=f"negative seek position {target}"):
                f.seek(offset, whence)
        else:
            assert f.seek(offset, whence) == model.seek(target) == target
    elif name == "read":
        assert f.read(*args) == model.read(*args)
    elif name == "readinto":
        ours, theirs = bytearray(args[0]), bytearray(args[0])
        assert f.readinto(ours) == model.readinto(theirs)
        assert ours == theirs
    elif name == "readline":
        assert f.readline(*args) == model.readline(*args)
    elif name == "read1":  # at most one chunk: a prefix of what the model reads
        piece = f.read1(*args)
        rest = model.getvalue()[model.tell() :]
        assert piece == rest[: len(piece)]
        assert piece or not rest or args[0] == 0
        model.seek(len(piece), io.SEEK_CUR)
    assert f.tell() == model.tell()


@FAST
@given(data=payloads, chunk_size=st.integers(1, 500), offsets=st.booleans(), ops=operations)
def test_random_access_matches_bytesio(data, chunk_size, offsets, ops):
    container = api.pack_bytes_to_bytes(
        data, chunk_size=chunk_size, bloscpack_args=bloscpack.BloscpackArgs(offsets=offsets)
    )
    model = io.BytesIO(data)
    with bloscpack.BloscFile(io.BytesIO(container)) as f:
        for op in ops:
            _apply(f, model, op)


@FAST
@given(data=payloads, chunk_size=st.integers(1, 500), piece=st.integers(1, 700), ops=operations)
def test_stream_reads_match_bytesio(data, chunk_size, piece, ops):
    container = api.pack_bytes_to_bytes(data, chunk_size=chunk_size)
    model = io.BytesIO(data)
    with bloscpack.BloscFile(io.BufferedReader(Pipe(container, piece))) as f:
        for op in ops:
            if op[0] not in ("seek", "tell"):
                _apply(f, model, op)
        assert f.read() == model.read()


def _read_everything(source) -> None:
    """Open and read ``source``: nothing but a BloscpackError may come out."""
    with contextlib.suppress(errors.BloscpackError), bloscpack.BloscFile(source) as f:
        f.read(10)
        if f.seekable():
            f.seek(-5, io.SEEK_END)
        f.read()


VALID = api.pack_bytes_to_bytes(bytes(range(256)) * 20, chunk_size=700, metadata={"k": [1]})


@FAST
@given(data=st.binary(max_size=600) | st.builds(lambda b: b"blpk\x03" + b, st.binary(max_size=600)))
def test_arbitrary_bytes_raise_only_bloscpack_errors(data):
    for source in (io.BytesIO(data), io.BufferedReader(Pipe(data, 97))):
        _read_everything(source)


@FAST
@given(
    flips=st.lists(
        st.tuples(st.integers(0, len(VALID) - 1), st.integers(1, 255)), min_size=1, max_size=6
    ),
    cut=st.integers(0, len(VALID)),
)
def test_mutated_containers_raise_only_bloscpack_errors(flips, cut):
    data = bytearray(VALID)
    for position, xor in flips:
        data[position] ^= xor
    for candidate in (bytes(data), bytes(data[:cut])):
        for source in (io.BytesIO(candidate), io.BufferedReader(Pipe(candidate, 333))):
            _read_everything(source)
