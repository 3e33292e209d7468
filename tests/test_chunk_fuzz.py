"""Hostile chunks: arbitrary, mutated and truncated bytes only ever raise BloscpackError
subclasses, from the validator and from decoding (so no byte that could crash C reaches it)."""

from __future__ import annotations

import contextlib
import struct

import numpy as np
from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bloscpack import engine
from bloscpack.blosc.layout import chunk_layout, validate_chunk
from bloscpack.chunks import decompress_chunk_items, inspect_chunk, is_chunk
from bloscpack.errors import BloscpackError

CORPUS = [p.read_bytes() for p in sorted((DATA / "blosc2" / "chunks").glob("*.chunk"))]
CORPUS += [p.read_bytes() for p in sorted((DATA / "snappy").glob("*/chunks/*.chunk"))]
INTERESTING = [0, 1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 36, 255, 256, 4096, 65535, 2**31 - 1, -1,
               -2, -255, -256, 2**31 - 33, 536866816, 536866817]  # fmt: skip
MAX_DECODE = 1 << 24
SETTINGS = settings(max_examples=400, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


def exercise(chunk: bytes) -> None:
    """Every entry point; anything but a BloscpackError fails the test (a crash kills it)."""
    is_chunk(chunk[:32], len(chunk))
    for describe in (chunk_layout, inspect_chunk):
        with contextlib.suppress(BloscpackError):
            describe(chunk)
    try:
        h = validate_chunk(chunk)
    except BloscpackError:
        return
    if h.nbytes > MAX_DECODE:  # a valid header may claim up to 2 GiB; keep the test small
        return
    with contextlib.suppress(BloscpackError):
        engine.decompress(chunk)
    with contextlib.suppress(BloscpackError):
        engine.decompress_into(chunk, np.empty(h.nbytes, np.uint8))
    total = h.nbytes // h.real_typesize
    for start, n in ((0, min(total, 100)), (total // 3, min(total - total // 3, 7000))):
        with contextlib.suppress(BloscpackError):
            decompress_chunk_items(chunk, start, n)


@SETTINGS
@given(st.binary(max_size=200))
def test_arbitrary_bytes(data: bytes) -> None:
    exercise(data)


@st.composite
def header_like(draw: st.DrawFn) -> bytes:
    """32 header bytes that pass the cheap checks often, then arbitrary body bytes."""
    version = draw(st.sampled_from([1, 2, 3, 5, 6]))
    flags = draw(st.integers(0, 255))
    fields = [draw(st.sampled_from(INTERESTING) | st.integers(-(2**31), 2**31 - 1))
              for _ in range(3)]  # fmt: skip
    tail = draw(st.binary(min_size=16, max_size=16))
    body = draw(st.binary(max_size=300))
    typesize = draw(st.integers(0, 255))
    return struct.pack("<BBBBiii", version, 1, flags, typesize, *fields) + tail + body


@SETTINGS
@given(header_like())
def test_header_like_bytes(data: bytes) -> None:
    exercise(data)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    chunk = bytearray(draw(st.sampled_from(CORPUS)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["i32", "byte", "truncate", "append"]))
        if kind == "i32" and len(chunk) >= 4:
            near = min(len(chunk) - 4, 160)
            offset = draw(st.integers(0, near) | st.integers(0, len(chunk) - 4))
            value = draw(st.sampled_from(INTERESTING) | st.integers(-(2**31), 2**31 - 1))
            struct.pack_into("<i", chunk, offset, value)
        elif kind == "byte" and chunk:
            chunk[draw(st.integers(0, len(chunk) - 1))] = draw(st.integers(0, 255))
        elif kind == "truncate":
            del chunk[draw(st.integers(0, len(chunk))) :]
        else:
            chunk += draw(st.binary(max_size=40))
    return bytes(chunk)


@SETTINGS
@given(mutated())
def test_mutated_corpus_chunks(chunk: bytes) -> None:
    exercise(chunk)


def test_every_truncation_of_every_corpus_chunk() -> None:
    for chunk in CORPUS[:60]:
        for n in sorted({0, 1, 15, 16, 31, 32, 33, len(chunk) // 2, len(chunk) - 1}):
            if n < len(chunk):
                exercise(chunk[:n])
