"""Fuzz a Blosc2 contiguous frame (``.b2frame``): header, metalayers, vlmetalayers, chunks,
index and trailer."""

from __future__ import annotations

import sys

import harness
from harness import DATA

KIND = "frame"


def seeds() -> list[bytes]:
    return [p.read_bytes() for p in sorted((DATA / "blosc2" / "frames").glob("*.b2frame"))
            if p.stat().st_size <= 1 << 20]  # fmt: skip


def exercise(data: bytes) -> None:
    harness.exercise_file(data, ".b2frame")


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
