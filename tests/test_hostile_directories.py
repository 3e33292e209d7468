"""Directory containers (sparse frames, bcolz) open only regular files for their chunks and
metadata: a directory, a FIFO or a device where a file should be, or a symbolic link out of
the container, gives a one-line ``FormatError`` naming the path, never a hang, an unbounded
read or an exception outside bloscpack's tree."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import bloscpack
from bloscpack.errors import BloscpackError, FormatError

ARRAY = np.arange(60_000, dtype="<f8")
#: A chunk file of each format (the second), relative to the container.
CHUNK = {"sframe": "00000001.chunk", "bcolz": "data/__1.blp"}
#: The index or metadata file each format reads first.
META = {"sframe": "chunks.b2frame", "bcolz": "meta/sizes"}


def written(tmp_path: Path, fmt: str) -> Path:
    path = tmp_path / f"a.{fmt}"
    bloscpack.save(ARRAY, path, format=fmt, chunk_size="64K")
    return path


def replaced(path: Path, member: str, how: str, tmp_path: Path) -> Path:
    target = path / member
    target.unlink()
    if how == "directory":
        target.mkdir()
    elif how == "fifo":
        os.mkfifo(target)
    elif how == "device":
        target.symlink_to("/dev/zero")
    else:  # a symbolic link to a regular file outside the container
        outside = tmp_path / "outside.bin"
        outside.write_bytes(b"\0" * 100)
        target.symlink_to(outside)
    return target


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["directory", "fifo", "device", "outside"])
@pytest.mark.parametrize("fmt", sorted(CHUNK))
def test_a_chunk_file_that_is_not_a_regular_file_inside(tmp_path, fmt, how):
    path = written(tmp_path, fmt)
    target = replaced(path, CHUNK[fmt], how, tmp_path)
    message = ("is a directory" if how == "directory" else
               "symbolic link out of the container" if how == "outside" else
               "is a FIFO or a device")  # fmt: skip
    with pytest.raises(FormatError, match=message) as caught:
        bloscpack.load(path)
    assert str(target) in str(caught.value) and "\n" not in str(caught.value)
    report = bloscpack.verify(path)
    assert report["ok"] is False


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["directory", "fifo", "device"])
@pytest.mark.parametrize("fmt", sorted(META))
def test_a_metadata_file_that_is_not_a_regular_file(tmp_path, fmt, how):
    path = written(tmp_path, fmt)
    replaced(path, META[fmt], how, tmp_path)
    with pytest.raises(BloscpackError):
        bloscpack.load(path)
