"""Fuzz a bcolz carray (a directory): ``meta/sizes``, ``meta/storage``, ``__attrs__`` and its
chunk files ``data/__N.blp``."""

from __future__ import annotations

import sys

import harness
from harness import DATA

KIND = "bcolz"
#: The names a carray's files may have in an input.
NAMES = ["meta/sizes", "meta/storage", "__attrs__", *(f"data/__{i}.blp" for i in range(16))]


def seeds() -> list[bytes]:
    roots = sorted(p for p in (DATA / "bcolz").iterdir() if (p / "meta").is_dir())
    return [harness.pack_files(harness.read_tree(root)) for root in roots]


def exercise(data: bytes) -> None:
    harness.exercise_directory(harness.unpack_files(data, NAMES), ".bcolz")


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
