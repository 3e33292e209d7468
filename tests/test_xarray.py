"""The xarray backend (``engine="bloscpack"``) over every format, and DataArrays saved with
their dimension names and attributes."""

from __future__ import annotations

from pathlib import Path

import blosc2
import numpy as np
import pytest

import bloscpack
from bloscpack.containers import registry
from bloscpack.errors import ArgumentError

xr = pytest.importorskip("xarray")

FORMATS = list(registry.FORMATS)
DATA = Path(__file__).parent / "data"
VALUES = np.arange(120_000, dtype="<f8").reshape(400, 300) / 7


def labelled() -> object:
    attrs = {"units": "m", "scale": np.float32(0.5), "tags": ["a", "b"]}
    return xr.DataArray(VALUES, dims=("time", "x"), attrs=attrs)


def written(tmp_path: Path, fmt: str) -> Path:
    path = tmp_path / f"walk{registry.FORMATS[fmt].extension}"
    bloscpack.save(labelled(), path, chunks=(100, 150) if fmt == "b2nd" else 100)
    return path


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_dataarray_comes_back_with_its_dims_and_attrs(tmp_path, fmt):
    path = written(tmp_path, fmt)
    for opened in (xr.open_dataarray(path, engine="bloscpack"), xr.open_dataarray(path)):
        assert opened.name == "walk" and opened.dims == ("time", "x")
        assert opened.attrs == {"units": "m", "scale": 0.5, "tags": ["a", "b"]}
        np.testing.assert_array_equal(opened.isel(time=slice(37, 251, 3), x=[5, 17, 299]),
                                      VALUES[37:251:3][:, [5, 17, 299]])  # fmt: skip
        np.testing.assert_array_equal(opened.values, VALUES)
    chunked = xr.open_dataarray(path, engine="bloscpack", chunks={})
    assert chunked.chunks == ((100,) * 4, (150, 150) if fmt == "b2nd" else (300,))
    assert float(chunked.sum()) == pytest.approx(VALUES.sum())


def test_variables_are_lazy(tmp_path):
    """Selecting rows reads only their chunks: the others may be missing."""
    path = written(tmp_path, "bcolz")
    (path / "data" / "__3.blp").unlink()  # rows 300-399
    opened = xr.open_dataarray(path, engine="bloscpack")
    np.testing.assert_array_equal(opened.isel(time=slice(0, 300)).values, VALUES[:300])
    with pytest.raises(bloscpack.BloscpackError):
        opened.values  # noqa: B018


def test_a_ctable_is_a_dataset_of_its_columns(tmp_path):
    table = np.zeros(5000, dtype=[("a", "<i4"), ("b", "<f8"), ("c", "<i2", (3,))])
    table["a"] = np.arange(5000)
    table["b"] = np.linspace(0, 1, 5000)
    table["c"] = np.arange(15000).reshape(5000, 3)
    bloscpack.save(table, tmp_path / "t.bcolz", metadata={"source": "test"})
    ds = xr.open_dataset(tmp_path / "t.bcolz", engine="bloscpack")
    assert list(ds.data_vars) == ["a", "b", "c"] and ds.attrs == {"source": "test"}
    assert ds["a"].dims == ("dim_0",) and ds["c"].dims == ("dim_0", "c_dim_1")
    for name in "abc":
        np.testing.assert_array_equal(ds[name].values, table[name])
    kept = xr.open_dataset(tmp_path / "t.bcolz", engine="bloscpack", drop_variables=["b"])
    assert list(kept.data_vars) == ["a", "c"]


def test_files_of_other_tools_get_default_dimensions():
    path = DATA / "b2nd" / "i3d_int16.b2nd"  # written by python-blosc2
    opened = xr.open_dataarray(path, engine="bloscpack")
    assert opened.dims == ("dim_0", "dim_1", "dim_2") and opened.name == "i3d_int16"
    np.testing.assert_array_equal(opened.values, blosc2.open(str(path))[:])


def test_dimension_names_that_do_not_fit_are_refused(tmp_path):
    bloscpack.save(VALUES, tmp_path / "a.b2nd", metadata={"_ARRAY_DIMENSIONS": ["only_one"]})
    with pytest.raises(ArgumentError, match="must name the 2 dimensions, got"):
        xr.open_dataarray(tmp_path / "a.b2nd", engine="bloscpack")
