"""The xarray backend (``engine="bloscpack"``) over every format, and DataArrays saved with
their name, dimension names and attributes; what a container cannot keep is refused."""

from __future__ import annotations

from pathlib import Path

import blosc2
import numpy as np
import pytest

import bloscpack
from bloscpack.containers import registry
from bloscpack.errors import ArgumentError, DataLossError

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


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_named_dataarray_keeps_its_name(tmp_path, fmt):
    path = tmp_path / f"file{registry.FORMATS[fmt].extension}"
    bloscpack.save(labelled().rename("temp"), path)
    opened = xr.open_dataarray(path, engine="bloscpack")
    assert opened.name == "temp" and opened.dims == ("time", "x")
    assert opened.attrs == {"units": "m", "scale": 0.5, "tags": ["a", "b"]}
    np.testing.assert_array_equal(opened.values, VALUES)
    assert list(xr.open_dataset(path, engine="bloscpack").data_vars) == ["temp"]
    with bloscpack.open(path) as lazy:
        assert lazy.attrs == {"units": "m", "scale": 0.5, "tags": ["a", "b"],
                              "_ARRAY_DIMENSIONS": ["time", "x"],
                              "_ARRAY_NAME": "temp"}  # fmt: skip


@pytest.mark.parametrize("fmt", FORMATS)
def test_coordinates_are_refused_unless_lossy(tmp_path, fmt):
    path = tmp_path / f"t{registry.FORMATS[fmt].extension}"
    array = labelled().rename("temp").assign_coords(x=np.arange(300) * 2, label=("time",
                                                    np.arange(400)))  # fmt: skip
    with pytest.raises(DataLossError) as raised:
        bloscpack.save(array, path)
    assert str(raised.value) == (
        f"{path}: the DataArray has coordinates (x, label), which a container does not keep:"
        " save each on its own (save(da[name].values, ...)), drop them"
        " (da.drop_vars(list(da.coords))) or pass lossy=True to save without them"
    )
    assert list(tmp_path.iterdir()) == []
    bloscpack.save(array, path, lossy=True)
    opened = xr.open_dataarray(path, engine="bloscpack")
    assert opened.name == "temp" and opened.dims == ("time", "x") and not opened.coords
    np.testing.assert_array_equal(opened.values, VALUES)


def test_a_dataset_is_refused_saying_what_to_do(tmp_path):
    ds = xr.Dataset({"a": labelled(), "b": labelled() * 2}, coords={"x": np.arange(300)})
    with pytest.raises(ArgumentError) as raised:
        bloscpack.save(ds, tmp_path / "d.b2nd")
    assert isinstance(raised.value, TypeError)  # what xarray's own error was
    assert str(raised.value) == (
        f"{tmp_path / 'd.b2nd'}: an xarray Dataset holds several variables, a container one"
        " array: save each variable on its own (for name in ds.variables:"
        " save(ds[name].drop_vars(list(ds[name].coords)), f'{name}.b2nd')), then"
        " xr.merge(xr.open_dataset(p, engine='bloscpack') for p in paths).set_coords(...)"
        " gives it back"
    )
    assert list(tmp_path.iterdir()) == []
    for name in ds.variables:  # what the message says
        bloscpack.save(ds[name].drop_vars(list(ds[name].coords)), tmp_path / f"{name}.b2nd")
    paths = [tmp_path / f"{name}.b2nd" for name in ds.variables]
    back = xr.merge(xr.open_dataset(p, engine="bloscpack") for p in paths).set_coords("x")
    xr.testing.assert_identical(back.load(), ds)


def test_names_kept_twice_and_names_that_are_no_strings_are_refused(tmp_path):
    path = tmp_path / "a.b2nd"
    with pytest.raises(ArgumentError) as raised:
        bloscpack.save(labelled(), path, metadata={"units": "km"})
    assert str(raised.value) == (f"{path}: units given twice (the DataArray's attributes,"
                                 " metadata= and _ARRAY_NAME, _ARRAY_DIMENSIONS are stored"
                                 " together); keep one")  # fmt: skip
    with pytest.raises(ArgumentError) as raised:
        bloscpack.save(labelled().assign_attrs(_ARRAY_NAME="other").rename("temp"), path)
    assert str(raised.value).startswith(f"{path}: _ARRAY_NAME given twice")
    with pytest.raises(ArgumentError) as raised:
        bloscpack.save(labelled().rename(7), path)
    assert str(raised.value) == (f"{path}: the DataArray's name 7 is not a string (the metadata"
                                 " keeps names as strings): rename it (da.rename('...'))"
                                 )  # fmt: skip
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["t.b2z", "t.b2d"])
def test_a_python_blosc2_store_is_a_dataset_of_its_arrays(tmp_path, name):
    """One variable per array, named by its key, each with dimensions of its own; lazy, and
    chunked as stored with ``chunks={}``; the store's attributes are the dataset's."""
    path = tmp_path / name
    arrays = {"/x": np.arange(100, dtype="<i8"), "/g/y": VALUES[:40, :30].copy()}
    with blosc2.TreeStore(str(path), mode="w", threshold=0) as store:
        for key, value in arrays.items():
            store[key] = blosc2.asarray(value, chunks=(10,) * value.ndim,
                                        blocks=(5,) * value.ndim)  # fmt: skip
        store.vlmeta["title"] = "two arrays"
    ds = xr.open_dataset(path, engine="bloscpack")
    assert sorted(ds.data_vars) == ["g/y", "x"]
    assert ds["g/y"].dims == ("g/y_dim_0", "g/y_dim_1") and ds["x"].dims == ("x_dim_0",)
    assert ds.attrs == {"title": "two arrays"}
    np.testing.assert_array_equal(ds["g/y"][5:9, 3:7].values, arrays["/g/y"][5:9, 3:7])
    chunked = xr.open_dataset(path, engine="bloscpack", chunks={}, drop_variables=["x"])
    assert list(chunked.data_vars) == ["g/y"]
    assert chunked["g/y"].chunks == ((10, 10, 10, 10), (10, 10, 10))
    np.testing.assert_array_equal(chunked["g/y"].values, arrays["/g/y"])
