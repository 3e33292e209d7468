"""Fuzz a Bloscpack ``.blp`` file: header, metadata section, offsets, chunks and digests."""

from __future__ import annotations

import sys

import harness
from harness import DATA

KIND = "blp"


def seeds() -> list[bytes]:
    return [p.read_bytes() for p in sorted((DATA / "bloscpack").glob("*.blp"))
            if p.stat().st_size <= 1 << 20]  # fmt: skip


def exercise(data: bytes) -> None:
    harness.exercise_file(data, ".blp")


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
