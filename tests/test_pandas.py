"""DataFrames saved as tables and tables read as DataFrames, both ways with bcolz's own
``ctable.fromdataframe`` / ``todataframe``."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import bloscpack
from bloscpack.errors import ArgumentError

pd = pytest.importorskip("pandas")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import bcolz

N = 20_000


def frame() -> object:
    rng = np.random.default_rng(3)
    return pd.DataFrame({
        "i": np.arange(N, dtype="<i8"),
        "f": rng.standard_normal(N).astype("<f4"),
        "b": np.arange(N) % 3 == 0,
        "t": pd.date_range("2020-01-01", periods=N, freq="min").values,
        "s": [f"name-{k % 97}" for k in range(N)],
        "nan": np.where(np.arange(N) % 5 == 0, np.nan, 1.5),
    })  # fmt: skip


def test_a_dataframe_becomes_a_ctable_bcolz_reads(tmp_path: Path):
    df = frame()
    bloscpack.save(df, tmp_path / "t.bcolz", chunks=4096)
    table = bcolz.open(str(tmp_path / "t.bcolz"), mode="r")
    assert table.names == list(df.columns)
    assert table.dtype["s"] == np.dtype("<U7") and table["i"].chunklen == 4096
    back = table.todataframe()
    for name in df.columns:
        np.testing.assert_array_equal(back[name].to_numpy(), df[name].to_numpy())
    ours = bloscpack.read_table(tmp_path / "t.bcolz")
    assert list(ours.columns) == list(df.columns)
    pd.testing.assert_frame_equal(ours, df, check_dtype=False)
    assert ours["f"].dtype == np.float32 and ours["t"].dtype == df["t"].dtype


def test_bcolz_fromdataframe_is_read_as_a_dataframe(tmp_path: Path):
    # bcolz stores text as pickled objects (refused) and cannot store datetimes
    df = frame().drop(columns=["s", "t"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bcolz.ctable.fromdataframe(df, rootdir=str(tmp_path / "b.bcolz"), mode="w").flush()
    pd.testing.assert_frame_equal(bloscpack.read_table(tmp_path / "b.bcolz"), df)
    picked = bloscpack.read_table(tmp_path / "b.bcolz", columns=["nan", "i"])
    pd.testing.assert_frame_equal(picked, df[["nan", "i"]])


def test_only_the_asked_columns_are_read(tmp_path: Path):
    bloscpack.save(frame(), tmp_path / "t.bcolz")
    shutil.rmtree(tmp_path / "t.bcolz" / "f" / "data")  # column f can no longer be read
    picked = bloscpack.read_table(tmp_path / "t.bcolz", columns=["s", "i"])
    assert list(picked.columns) == ["s", "i"] and picked["i"].sum() == N * (N - 1) // 2
    with pytest.raises(bloscpack.BloscpackError):
        bloscpack.read_table(tmp_path / "t.bcolz")


@pytest.mark.parametrize(("column", "message"), [
    (pd.Categorical(["a", "b"] * (N // 2)), "column 'x' is categorical"),
    (pd.array([1, None] * (N // 2), dtype="Int64"), "column 'x' has missing values"),
    (["a", None] * (N // 2), "column 'x' has missing values"),
    ([{"k": 1}, 2] * (N // 2), "column 'x' holds Python objects"),
])  # fmt: skip
def test_columns_a_table_cannot_hold_are_refused(tmp_path: Path, column, message):
    df = pd.DataFrame({"ok": np.arange(N), "x": column})
    with pytest.raises(ArgumentError, match=message):
        bloscpack.save(df, tmp_path / "t.bcolz")
    assert list(tmp_path.iterdir()) == []


def test_read_table_errors_and_other_formats(tmp_path: Path):
    df = frame().drop(columns=["s"])
    bloscpack.save(df, tmp_path / "t.b2nd")  # a structured array in another format
    pd.testing.assert_frame_equal(bloscpack.read_table(tmp_path / "t.b2nd"), df)
    with pytest.raises(ArgumentError, match="no column 'zz'; the table has i, f, b, t, nan"):
        bloscpack.read_table(tmp_path / "t.b2nd", columns=["i", "zz"])
    bloscpack.save(np.arange(10.0), tmp_path / "a.blp")
    with pytest.raises(ArgumentError, match="not a table: read it with bloscpack.load"):
        bloscpack.read_table(tmp_path / "a.blp")
    wide = np.zeros(4, dtype=[("v", "<f8", (3,))])
    bloscpack.save(wide, tmp_path / "w.bcolz")
    with pytest.raises(ArgumentError, match=r"column 'v' holds items of shape \(3,\)"):
        bloscpack.read_table(tmp_path / "w.bcolz")


@pytest.mark.parametrize("kind", ["pandas", "dask"])
def test_timezone_aware_datetimes_are_refused_saying_what_to_do(tmp_path: Path, kind: str):
    df = pd.DataFrame({"i": np.arange(4), "when": pd.date_range("2020", periods=4, tz="UTC")})
    given = df
    if kind == "dask":
        given = pytest.importorskip("dask.dataframe").from_pandas(df, npartitions=2)
    with pytest.raises(ArgumentError) as raised:
        bloscpack.save(given, tmp_path / "t.bcolz")
    assert str(raised.value) == (
        f"{tmp_path / 't.bcolz'}: column 'when' holds timezone-aware datetimes"
        f" (datetime64[{df['when'].dt.unit}, UTC]), which a table cannot hold: store them in"
        " UTC without a zone (series.dt.tz_convert(None)) or as int64"
        f" {df['when'].dt.unit} since the epoch (series.astype('int64')), and the zone (UTC)"
        " as metadata"
    )
    assert list(tmp_path.iterdir()) == []
    df["when"] = df["when"].dt.tz_convert(None)  # what the message says
    bloscpack.save(df, tmp_path / "t.bcolz", metadata={"tz": "UTC"})
    pd.testing.assert_frame_equal(bloscpack.read_table(tmp_path / "t.bcolz"), df)


def test_pandas_types_without_a_numpy_dtype_are_refused(tmp_path: Path):
    df = pd.DataFrame({"p": pd.period_range("2020-01", periods=3, freq="M")})
    with pytest.raises(ArgumentError) as raised:
        bloscpack.save(df, tmp_path / "t.bcolz")
    assert str(raised.value) == (
        f"{tmp_path / 't.bcolz'}: column 'p' holds pandas period[M] values, which have no numpy"
        " dtype a table can hold: convert the column (series.astype(...)) first"
    )
