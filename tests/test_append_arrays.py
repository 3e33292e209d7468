"""Appending to a ``.blp`` file that holds a numpy array: whole rows grow its first axis (the
shape in its metadata follows, in the same crash-safe append); anything else is refused before
the file is touched.  No append that succeeds leaves a file that load, open or verify reject."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import bloscpack
from bloscpack.cli import main
from bloscpack.containers.bloscpack.append import append
from bloscpack.errors import ArgumentError

ARRAYS = {
    "float64 1-d": np.cumsum(np.random.default_rng(1).standard_normal(1000)),
    "int32 rows of 3": np.arange(3000, dtype="<i4").reshape(1000, 3),
    "uint8 3-d": np.arange(40 * 5 * 6, dtype="u1").reshape(40, 5, 6),
    "structured": np.array([(i, i / 2) for i in range(500)], dtype=[("a", "<i2"), ("b", "<f8")]),
}


def more_rows(array: np.ndarray, n: int) -> np.ndarray:
    """``n`` new rows fitting ``array`` (its values, shifted)."""
    rows = np.resize(array, (n, *array.shape[1:]))
    if rows.dtype.names:
        rows["a"] += 1
        return rows
    return rows + 1


def check_readable(path: Path, expected: np.ndarray) -> None:
    """load, open, verify and ``blpk t``/``blpk d`` all accept the file and agree."""
    np.testing.assert_array_equal(bloscpack.load(path), expected)
    with bloscpack.open(path) as opened:
        assert opened.shape == expected.shape and opened.dtype == expected.dtype
        np.testing.assert_array_equal(opened[...], expected)
    assert bloscpack.verify(path)["ok"]
    assert main(["t", str(path)]) == 0
    out = path.with_suffix(".npy")
    assert main(["d", "-f", str(path), str(out)]) == 0
    np.testing.assert_array_equal(np.load(out), expected)


def test_the_readme_sequence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``blpk c walk.npy`` then ``blpk a walk.npy.blp more.bin``."""
    monkeypatch.chdir(tmp_path)
    walk = ARRAYS["float64 1-d"]
    np.save("walk.npy", walk)
    more = np.linspace(0, 1, 250)
    more.tofile("more.bin")
    assert main(["c", "walk.npy"]) == 0
    assert main(["a", "walk.npy.blp", "more.bin"]) == 0
    check_readable(tmp_path / "walk.npy.blp", np.concatenate([walk, more]))


@pytest.mark.parametrize("name", ARRAYS)
@pytest.mark.parametrize("nrows", [1, 7, 200])
def test_whole_rows_grow_the_first_axis(name: str, nrows: int, tmp_path: Path):
    array = ARRAYS[name]
    path = tmp_path / "a.blp"
    bloscpack.save(array, path, chunk_size=array.itemsize * max(1, array.size // 3))
    rows = more_rows(array, nrows)
    raw = tmp_path / "rows.bin"
    raw.write_bytes(rows.tobytes())
    assert main(["a", str(path), str(raw)]) == 0
    grown = np.concatenate([array, rows])
    check_readable(path, grown)
    append(path, rows)  # the Python API takes the array itself
    check_readable(path, np.concatenate([grown, rows]))


@pytest.mark.parametrize(
    ("array", "nbytes", "message"),
    [
        (ARRAYS["float64 1-d"], 12, "the 12 bytes to append are not whole rows of 8 bytes"),
        (ARRAYS["int32 rows of 3"], 8, "the 8 bytes to append are not whole rows of 12 bytes"),
        (np.asfortranarray(ARRAYS["int32 rows of 3"]), 12, "holds a Fortran-order array"),
        (np.array(5.0), 8, "holds a 0-d array"),
    ],
    ids=["partial item", "partial row", "fortran", "0-d"],
)
def test_other_bytes_are_refused_before_the_file_is_touched(
    array: np.ndarray, nbytes: int, message: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
):  # fmt: skip
    path = tmp_path / "a.blp"
    bloscpack.save(array, path)
    before = path.read_bytes()
    raw = tmp_path / "odd.bin"
    raw.write_bytes(bytes(range(nbytes)))
    with pytest.raises(ArgumentError, match=message):
        append(path, raw)
    assert main(["a", str(path), str(raw)]) == 1
    assert message in capsys.readouterr().err
    assert path.read_bytes() == before
    check_readable(path, array)


@pytest.mark.parametrize(
    "rows",
    [np.ones((2, 4), "<i4"), np.ones((2, 3), "<f4"), np.ones(6, "<i4"), np.int32(1)],
    ids=["trailing shape", "dtype", "ndim", "scalar"],
)
def test_arrays_that_do_not_fit_are_refused(rows: np.ndarray, tmp_path: Path):
    array = ARRAYS["int32 rows of 3"]
    path = tmp_path / "a.blp"
    bloscpack.save(array, path)
    before = path.read_bytes()
    with pytest.raises(ArgumentError, match="do not fit it"):
        append(path, np.asarray(rows))
    assert path.read_bytes() == before


def test_metadata_cannot_be_given_for_an_array_file(tmp_path: Path):
    path = tmp_path / "a.blp"
    bloscpack.save(ARRAYS["float64 1-d"], path)
    raw = tmp_path / "more.bin"
    raw.write_bytes(bytes(80))
    before = path.read_bytes()
    with pytest.raises(ArgumentError, match="metadata cannot be given"):
        append(path, raw, metadata={"user": 1})
    assert path.read_bytes() == before


def test_bloscpack_016_reads_the_grown_array(tmp_path: Path, bloscpack016):
    array = ARRAYS["int32 rows of 3"]
    path = tmp_path / "a.blp"
    bloscpack.save(array, path, chunk_size=5000)
    rows = more_rows(array, 333)
    append(path, rows)
    out = tmp_path / "by016.npy"
    bloscpack016.run(
        "import sys, numpy as np\n"
        "np.save(sys.argv[2], bloscpack.unpack_ndarray_file(sys.argv[1]))\n",
        str(path), str(out),
    )  # fmt: skip
    np.testing.assert_array_equal(np.load(out), np.concatenate([array, rows]))
