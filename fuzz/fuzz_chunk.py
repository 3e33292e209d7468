"""Fuzz one Blosc chunk (Blosc1 and Blosc2 headers): the bytes API and the chunk as a file."""

from __future__ import annotations

import sys

import harness
from harness import DATA, bloscpack, quietly

KIND = "chunk"


def seeds() -> list[bytes]:
    return [p.read_bytes() for p in sorted((DATA / "blosc2" / "chunks").glob("*.chunk"))]


def exercise(data: bytes) -> None:
    header = quietly(lambda: bloscpack.inspect_chunk(data))
    quietly(lambda: bloscpack.is_chunk(data))
    if header is not None and header["nbytes"] <= harness.WHOLE_READ_LIMIT:
        quietly(lambda: bloscpack.decompress_chunk(data))
    quietly(lambda: bloscpack.decompress_chunk_items(data, 1, 3))
    harness.exercise_file(data, ".chunk")


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
