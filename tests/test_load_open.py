"""``load(p)`` and ``open(p)[...]`` give the same array (same dtype, shape and bytes) for every
container: the golden corpora, and files of every format written by ``save``, ``convert`` and
``blpk c``.  Where one of them refuses a file, the other refuses it too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA

import bloscpack
from bloscpack.errors import BloscpackError, NotAContainer

FORMATS = ("blp", "b2frame", "b2nd", "sframe", "bcolz")
SUFFIX = {"blp": ".blp", "b2frame": ".b2frame", "b2nd": ".b2nd", "sframe": ".sframe",
          "bcolz": ".bcolz"}  # fmt: skip


def corpus_containers() -> list[Path]:
    """Every file and directory under tests/data that holds a container."""
    found = []
    for root, dirs, files in os.walk(DATA):
        for name in sorted(dirs) + sorted(files):
            path = Path(root, name)
            try:
                bloscpack.detect(path)
            except (NotAContainer, BloscpackError):
                continue
            found.append(path)
            if name in dirs:
                dirs.remove(name)  # a container directory: not its parts
    return sorted(found)


def outcome(read) -> tuple[str, np.ndarray | None]:
    try:
        return "ok", np.asarray(read())
    except BloscpackError as exc:
        return type(exc).__name__, None


def open_all(path: Path) -> np.ndarray:
    with bloscpack.open(path) as array:
        return array[...]


def assert_same(path: Path) -> None:
    (loaded_kind, loaded), (opened_kind, opened) = (outcome(lambda: bloscpack.load(path)),
                                                    outcome(lambda: open_all(path)))  # fmt: skip
    assert loaded_kind == opened_kind, path
    if loaded is None or opened is None:
        return
    assert (loaded.dtype, loaded.shape) == (opened.dtype, opened.shape)
    assert loaded.tobytes() == opened.tobytes()


CORPUS = corpus_containers()


def test_the_corpus_is_found() -> None:
    assert len(CORPUS) > 300
    kinds = {bloscpack.detect(p) for p in CORPUS}
    assert kinds == {"blp", "b2frame", "b2nd", "sframe", "bcolz", "chunk", "b2store"}


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(DATA)))
def test_corpus(path: Path) -> None:
    assert_same(path)


ARRAYS = {
    "f4_2d": np.arange(500 * 40, dtype=np.float32).reshape(500, 40),
    "i2_3d_fortran": np.asfortranarray(np.arange(6 * 5 * 4, dtype=">i2").reshape(6, 5, 4)),
    "u1_1d": np.arange(1000, dtype=np.uint8),
    "record": np.array([(1, 2.5), (3, -1.0)], dtype=[("a", "<i4"), ("b", "<f8")]),
    "empty": np.zeros((0, 3), dtype=np.int64),
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ARRAYS)
def test_saved_arrays(tmp_path: Path, fmt: str, name: str) -> None:
    array = ARRAYS[name]
    path = tmp_path / f"a{SUFFIX[fmt]}"
    bloscpack.save(array, path, format=fmt)
    assert_same(path)
    loaded = bloscpack.load(path)
    assert loaded.dtype == array.dtype and loaded.shape == array.shape


@pytest.mark.parametrize("fmt", FORMATS)
def test_converted_arrays(tmp_path: Path, fmt: str) -> None:
    array = ARRAYS["f4_2d"]
    src = tmp_path / "a.blp"
    bloscpack.save(array, src)
    dst = tmp_path / f"b{SUFFIX[fmt]}"
    bloscpack.convert(src, dst, format=fmt)
    assert_same(dst)
    loaded = bloscpack.load(dst)
    assert (loaded.dtype, loaded.shape) == (array.dtype, array.shape)
    np.testing.assert_array_equal(loaded, array)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("npy", [True, False], ids=["npy", "bytes"])
def test_cli_compressed(tmp_path: Path, fmt: str, npy: bool) -> None:
    """``blpk c --format F`` of a ``.npy`` file keeps the array; of other bytes, raw bytes."""
    array = np.arange(500 * 1000, dtype=np.float32).reshape(500, 1000)
    src = tmp_path / ("arr.npy" if npy else "arr.bin")
    if npy:
        np.save(src, array)
    else:
        array.tofile(src)
    dst = tmp_path / f"out{SUFFIX[fmt]}"
    subprocess.run([sys.executable, "-m", "bloscpack", "c", "--format", fmt, str(src), str(dst)],
                   check=True, capture_output=True)  # fmt: skip
    assert_same(dst)
    loaded = bloscpack.load(dst)
    expected = array if npy else np.frombuffer(array.tobytes(), np.uint8)
    assert (loaded.dtype, loaded.shape) == (expected.dtype, expected.shape)
    np.testing.assert_array_equal(loaded, expected)
