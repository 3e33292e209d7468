"""``bloscpack.to_dask``: every format as a dask array, computed on a real ``distributed``
cluster of worker processes (``LocalCluster(processes=True)`` on 127.0.0.1)."""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

import bloscpack
from bloscpack.containers import registry
from bloscpack.errors import ArgumentError

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

FORMATS = list(registry.FORMATS)
ARRAY = np.arange(600_000, dtype="<f8").reshape(3000, 200) * 0.5


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=2, processes=True, host="127.0.0.1",
        dashboard_address=":0", silence_logs=40,
    )  # fmt: skip
    with cluster, distributed.Client(cluster) as connected:
        yield connected


def written(tmp_path: Path, fmt: str, array: np.ndarray = ARRAY) -> Path:
    path = tmp_path / f"a{registry.FORMATS[fmt].extension}"
    chunks = (700, 80) if fmt == "b2nd" else 700
    bloscpack.save(array, path, chunks=chunks)
    return path


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_computes_on_worker_processes(client, tmp_path, fmt):
    path = written(tmp_path, fmt)
    x = bloscpack.to_dask(path)
    assert (x.shape, x.dtype) == (ARRAY.shape, ARRAY.dtype)
    # the stored chunks: 700 rows (b2nd: 700 x 80 boxes)
    assert x.chunks[0] == (700, 700, 700, 700, 200)
    assert x.chunks[1] == ((80, 80, 40) if fmt == "b2nd" else (200,))
    assert client.compute(x.sum()).result() == ARRAY.sum()
    np.testing.assert_array_equal(client.compute(x[1234:2345:3, 17:190]).result(),
                                  ARRAY[1234:2345:3, 17:190])  # fmt: skip
    np.testing.assert_array_equal(client.compute(x.T[5]).result(), ARRAY.T[5])
    pids = client.run(os.getpid)
    assert os.getpid() not in pids.values()  # the work ran in other processes


@pytest.mark.parametrize("fmt", FORMATS)
def test_chunks_that_split_the_stored_chunks(client, tmp_path, fmt):
    x = bloscpack.to_dask(written(tmp_path, fmt), chunks=(250, 64))
    assert x.chunks[0][:2] == (250, 250) and x.chunks[1] == (64, 64, 64, 8)
    np.testing.assert_array_equal(client.compute(x).result(), ARRAY)


def test_the_graph_holds_the_path_not_the_data(tmp_path):
    """1,000 stored chunks: the graph pickles to well under 100 KiB (it names the file)."""
    array = np.arange(1_000_000, dtype="<f8")
    path = tmp_path / "many.blp"
    bloscpack.save(array, path, chunks=1000)
    x = bloscpack.to_dask(path)
    assert x.npartitions == 1000
    graph = pickle.dumps(dict(x.__dask_graph__()))
    assert len(graph) < 100 * 1024
    assert str(path).encode() in graph and array.tobytes()[8:64] not in graph


def test_ctable_columns_become_one_array_each(client, tmp_path):
    table = np.zeros(5000, dtype=[("a", "<i4"), ("b", "<f8"), ("c", "<i2", (3,))])
    table["a"] = np.arange(5000)
    table["b"] = np.linspace(0, 1, 5000)
    table["c"] = np.arange(15000).reshape(5000, 3)
    path = tmp_path / "t.bcolz"
    bloscpack.save(table, path, chunks=1000)
    columns = bloscpack.to_dask(path)
    assert list(columns) == ["a", "b", "c"]
    for name, x in columns.items():
        assert x.chunks[0] == (1000,) * 5
        np.testing.assert_array_equal(client.compute(x).result(), table[name])
    assert list(bloscpack.to_dask(path, columns=["c", "a"])) == ["c", "a"]
    with pytest.raises(ArgumentError, match="no column 'zz'; the table has a, b, c"):
        bloscpack.to_dask(path, columns=["a", "zz"])
    with pytest.raises(ArgumentError, match="only a table .* has columns"):
        bloscpack.to_dask(written(tmp_path, "b2nd"), columns=["a"])


def test_a_rewritten_container_is_read_anew(client, tmp_path):
    path = written(tmp_path, "blp")
    assert client.compute(bloscpack.to_dask(path).sum()).result() == ARRAY.sum()
    bloscpack.save(ARRAY * 2, path, chunks=700)
    assert client.compute(bloscpack.to_dask(path).sum()).result() == 2 * ARRAY.sum()


def test_a_ctable_as_a_dask_dataframe(client, tmp_path):
    pd = pytest.importorskip("pandas")
    table = np.zeros(5000, dtype=[("a", "<i4"), ("b", "<f8"), ("s", "<U4")])
    table["a"] = np.arange(5000)
    table["b"] = np.linspace(0, 1, 5000)
    table["s"] = [f"k{i % 50}" for i in range(5000)]
    path = tmp_path / "t.bcolz"
    bloscpack.save(table, path, chunks=1200)
    frame = bloscpack.to_dask_dataframe(path)
    assert frame.npartitions == 5 and frame.divisions == (0, 1200, 2400, 3600, 4800, 4999)
    assert list(frame.columns) == ["a", "b", "s"]
    pd.testing.assert_frame_equal(client.compute(frame).result(), bloscpack.read_table(path),
                                  check_dtype=False)  # dask keeps text as arrow strings
    assert client.compute(frame["a"].sum()).result() == table["a"].sum()
    shutil.rmtree(path / "b" / "data")  # only the asked columns are read
    picked = bloscpack.to_dask_dataframe(path, columns=["s", "a"], rows=1000)
    assert picked.npartitions == 5
    result = client.compute(picked).result()
    assert list(result.columns) == ["s", "a"] and result["s"].tolist() == table["s"].tolist()
    with pytest.raises(ArgumentError, match="only a table .* is read as a DataFrame"):
        bloscpack.to_dask_dataframe(written(tmp_path, "blp"))


def test_a_missing_extra_is_named():
    from bloscpack.integrations import optional

    message = r"this needs no_such_module: pip install 'bloscpack\[dask\]'"
    with pytest.raises(bloscpack.UnsupportedError, match=message):
        optional("no_such_module.array", "dask")


@pytest.mark.parametrize("fmt", FORMATS)
def test_auto_chunks_are_whole_stored_chunks(tmp_path, fmt):
    import dask

    path = written(tmp_path, fmt)
    with dask.config.set({"array.chunk-size": "4MiB"}):
        x = bloscpack.to_dask(path, chunks="auto")
    stored = bloscpack.to_dask(path).chunks
    for axis, (auto, kept) in enumerate(zip(x.chunks, stored, strict=True)):
        assert len(auto) < len(kept) or auto == kept, axis
        assert all(n % kept[0] == 0 for n in auto[:-1]), (axis, auto, kept)
    assert x.chunks != stored  # 4 MiB holds several stored chunks
    np.testing.assert_array_equal(x.compute(scheduler="threads"), ARRAY)


def test_xarray_variables_compute_on_worker_processes(client, tmp_path):
    xr = pytest.importorskip("xarray")
    path = tmp_path / "t.b2nd"
    bloscpack.save(xr.DataArray(ARRAY, dims=("time", "x")), path, chunks=(700, 80))
    opened = xr.open_dataarray(path, engine="bloscpack", chunks={})
    assert opened.chunks == ((700, 700, 700, 700, 200), (80, 80, 40))
    assert client.compute(opened.sum()).result() == ARRAY.sum()
    np.testing.assert_array_equal(client.compute(opened.isel(time=slice(5, 900, 7))).result(),
                                  ARRAY[5:900:7])  # fmt: skip
