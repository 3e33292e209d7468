"""Fuzz a Blosc2 sparse frame (a directory): its index frame ``chunks.b2frame`` and its chunk
files."""

from __future__ import annotations

import sys

import harness
from harness import DATA

KIND = "sframe"
#: The names a sparse frame's files may have in an input (the index and the first chunks).
NAMES = ["chunks.b2frame", *(f"{i:08X}.chunk" for i in range(16))]


def seeds() -> list[bytes]:
    roots = sorted(p for p in (DATA / "blosc2" / "sframes").iterdir() if p.is_dir())
    return [harness.pack_files(harness.read_tree(root)) for root in roots]


def exercise(data: bytes) -> None:
    harness.exercise_directory(harness.unpack_files(data, NAMES), ".b2sframe")


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
