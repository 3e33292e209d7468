"""Fuzz a python-blosc2 NDArray (``.b2nd``): the ``b2nd`` metalayer (shape, chunks, blocks,
dtype) and the frame around it."""

from __future__ import annotations

import sys

import harness
from harness import DATA

KIND = "b2nd"


def seeds() -> list[bytes]:
    return [p.read_bytes() for p in sorted((DATA / "b2nd").glob("*.b2nd"))
            if p.is_file() and p.stat().st_size <= 1 << 20]  # fmt: skip


def exercise(data: bytes) -> None:
    harness.exercise_file(data, ".b2nd")


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
