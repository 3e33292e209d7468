"""Directory containers (sparse frames, bcolz) open only regular files for their chunks and
metadata: a directory, a FIFO or a device where a file should be, or a symbolic link out of
the container, gives a one-line ``FormatError`` naming the path, never a hang, an unbounded
read or an exception outside bloscpack's tree."""

from __future__ import annotations

import os
import subprocess
import sys
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
@pytest.mark.parametrize("fmt", sorted(CHUNK))
def test_a_chunk_file_in_a_symbolic_link_loop_gives_one_error_everywhere(tmp_path, fmt):
    """Every filesystem call on a member goes through one check: info raises what load and
    open raise where it reads the chunk files (bcolz sizes them; a sparse frame's info lists
    their ids only), ``blpk info`` too (its summary reads chunk headers), and verify reports
    it."""
    path = written(tmp_path, fmt)
    target = path / CHUNK[fmt]
    target.unlink()
    target.symlink_to(target.name)  # links to itself
    message = f"{target}: cannot open (Too many levels of symbolic links)"

    def full_read(path):
        with bloscpack.open(path) as array:
            return array[...]

    for call in (bloscpack.load, full_read, *([bloscpack.info] if fmt == "bcolz" else [])):
        with pytest.raises(FormatError) as caught:
            call(path)
        assert str(caught.value) == message, call
    report = bloscpack.verify(path)
    assert report["ok"] is False and [e["error"] for e in report["bad_chunks"]] == [message]
    done = subprocess.run([sys.executable, "-m", "bloscpack", "info", str(path)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (done.returncode, done.stderr) == (1, f"blpk: error: {message}\n")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["directory", "fifo", "device"])
@pytest.mark.parametrize("fmt", sorted(META))
def test_a_metadata_file_that_is_not_a_regular_file(tmp_path, fmt, how):
    path = written(tmp_path, fmt)
    target = replaced(path, META[fmt], how, tmp_path)
    with pytest.raises(BloscpackError) as caught:
        bloscpack.load(path)
    # detection already finds no metadata file there: the directory is no container
    assert str(caught.value).startswith(f"{path}: directory is neither a Blosc2 sparse frame")
    assert "\n" not in str(caught.value) and os.path.lexists(target)


TABLE = np.array([(1, 2.5), (3, 4.5)], dtype=[("a", "<i4"), ("b", "<f8")])
#: The metadata files (and a ctable's column directory) each reader opens: (format, member).
METADATA = [("sframe", "chunks.b2frame"), ("bcolz", "meta/sizes"), ("bcolz", "meta/storage"),
            ("bcolz", "__attrs__"), ("ctable", "__rootdirs__"), ("ctable", "a/meta/sizes"),
            ("ctable", "b")]  # fmt: skip


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("fmt", "member"), METADATA)
def test_a_metadata_file_linking_out_of_the_container(tmp_path, fmt, member):
    """A metadata file (or a ctable's column directory) that is a symbolic link out of the
    container: a one-line FormatError naming it from every reader, the file never read."""
    if fmt == "ctable":
        path = tmp_path / "t.bcolz"
        bloscpack.save(TABLE, path, format="bcolz")
    else:
        path = written(tmp_path, fmt)
    target = path / member
    outside = tmp_path / "outside"
    target.rename(outside)  # the same bytes, now outside the container
    target.symlink_to(outside)
    message = f"{target}: a symbolic link out of the container"
    if member == "__attrs__":  # info still describes the array, and says why attrs are missing
        assert bloscpack.info(path)["attrs_error"] == message
        np.testing.assert_array_equal(bloscpack.load(path), ARRAY)  # load reads no attributes
    else:
        for call in (bloscpack.load, bloscpack.info):
            with pytest.raises(FormatError) as caught:
                call(path)
            assert str(caught.value) == message
    report = bloscpack.verify(path)
    assert report["ok"] is False and message in report["problems"]


def test_a_link_inside_the_container_is_read(tmp_path):
    path = written(tmp_path, "bcolz")
    (path / "meta/sizes").rename(path / "sizes.copy")
    (path / "meta/sizes").symlink_to("../sizes.copy")
    np.testing.assert_array_equal(bloscpack.load(path), ARRAY)


def test_a_directory_linking_inside_the_container_is_read(tmp_path):
    """Members below a directory that is a link are checked by where they lead: inside the
    container they are read."""
    path = written(tmp_path, "bcolz")
    (path / "meta").rename(path / "meta.copy")
    (path / "meta").symlink_to("meta.copy")
    np.testing.assert_array_equal(bloscpack.load(path), ARRAY)
    with bloscpack.open(path) as array:
        assert array[7] == ARRAY[7]


def test_a_chunk_file_linking_inside_a_sparse_frame_is_read(tmp_path):
    """A chunk file right in the directory is opened without following links; one that is a
    link into the container is then opened through it (whole and by blocks)."""
    path = written(tmp_path, "sframe")
    (path / CHUNK["sframe"]).rename(path / "copy.bin")
    (path / CHUNK["sframe"]).symlink_to("copy.bin")
    np.testing.assert_array_equal(bloscpack.load(path), ARRAY)
    with bloscpack.open(path) as array:
        np.testing.assert_array_equal(array[..., :3], ARRAY[..., :3])


@pytest.mark.timeout(60)
def test_a_fifo_for_a_column_metadata_file_is_named(tmp_path):
    """A ctable is told by ``__rootdirs__``; a column's ``meta/sizes`` that is a FIFO is then
    refused by its reader as what it is (not as a file too large)."""
    path = tmp_path / "t.bcolz"
    bloscpack.save(TABLE, path, format="bcolz")
    target = path / "a/meta/sizes"
    target.unlink()
    os.mkfifo(target)
    with pytest.raises(FormatError) as caught:
        bloscpack.load(path)
    assert str(caught.value) == f"{target}: is a FIFO or a device, not a regular file"


@pytest.mark.parametrize(
    ("first", "second", "detected"),
    [("b2nd", "bcolz", "b2nd"), ("sframe", "bcolz", "sframe"), ("bcolz", "garbage", "sframe")],
)
def test_a_directory_with_the_members_of_two_formats_is_detected_as_before(
    tmp_path: Path, first: str, second: str, detected: str
) -> None:
    """A crafted directory holding the members of two directory formats is detected as the
    first format in detection order that claims it (a ``chunks.b2frame`` that is no frame:
    a sparse frame, reported as damaged when read)."""
    options = {"sparse": True} if first == "b2nd" else {}
    path = tmp_path / "both"
    bloscpack.save(ARRAY, path, format=first, chunk_size="64K", **options)
    if second == "bcolz":
        other = written(tmp_path, "bcolz")
        (path / "meta").mkdir()
        for name in ("meta/storage", "meta/sizes"):
            (path / name).write_bytes((other / name).read_bytes())
        (path / "__rootdirs__").write_bytes(b"{}")
    else:
        (path / "chunks.b2frame").write_bytes(b"not a frame")
    assert bloscpack.detect(path) == detected
