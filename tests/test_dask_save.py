"""``bloscpack.save(dask_array, ...)``: every format written in parallel on a real
``distributed`` cluster of worker processes, byte for byte what saving the computed array
writes, readable by the reference implementations; failures leave nothing behind."""

from __future__ import annotations

import os
import re
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import bloscpack
from bloscpack import chunkmanagers
from bloscpack.containers import registry
from bloscpack.containers.base import WriterBase
from bloscpack.errors import ArgumentError, UnsupportedError
from bloscpack.integrations import dask as dask_integration

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

FORMATS = list(registry.FORMATS)
ARRAY = np.cumsum(np.arange(1_200_000, dtype="<f8") % 7).reshape(1500, 800)
ARRAY[:1100] = 0  # whole chunks of zeros: special chunks (frame index markers)
OPTIONS = {"chunk_size": "1M"}
MiB = 2**20


@pytest.fixture(scope="module")
def client():
    # a task whose worker dies fails at once (not retried on the other workers)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address=":0", silence_logs=50,
        )  # fmt: skip
        with cluster, distributed.Client(cluster) as connected:
            yield connected


def path_of(root: Path, fmt: str, name: str = "a") -> Path:
    return root / f"{name}{registry.FORMATS[fmt].extension}"


def contents(path: Path) -> dict[str, bytes]:
    """A file's bytes, or every file of a directory by its relative name."""
    if path.is_file():
        return {"": path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def odd_chunks(array: np.ndarray) -> da.Array:
    """A dask array whose chunks match no format's storage chunks."""
    return da.from_array(array, chunks=(333, 301))


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_bytes_of_numpy_save(client, tmp_path, fmt):
    expected, written = path_of(tmp_path, fmt, "np"), path_of(tmp_path, fmt, "da")
    bloscpack.save(ARRAY, expected, **OPTIONS)
    bloscpack.save(odd_chunks(ARRAY), written, **OPTIONS)
    assert contents(written) == contents(expected)
    np.testing.assert_array_equal(bloscpack.load(written), ARRAY)
    assert sorted(os.listdir(tmp_path)) == sorted([expected.name, written.name])


@pytest.mark.parametrize("fmt", FORMATS)
def test_default_options_and_the_local_scheduler(tmp_path, fmt):
    a = np.random.default_rng(1).integers(0, 1000, (400, 300, 7), dtype="<i4")
    expected, written = path_of(tmp_path, fmt, "np"), path_of(tmp_path, fmt, "da")
    bloscpack.save(a, expected)
    with dask.config.set(scheduler="threads"):
        bloscpack.save(da.from_array(a, chunks=(50, 100, 3)), written)
    assert contents(written) == contents(expected)


@pytest.mark.parametrize("fmt", ["b2nd", "b2frame", "sframe"])
def test_python_blosc2_reads_them(client, tmp_path, fmt):
    blosc2 = pytest.importorskip("blosc2")
    path = path_of(tmp_path, fmt)
    bloscpack.save(odd_chunks(ARRAY), path, **OPTIONS)
    stored = blosc2.open(str(path))
    if fmt == "b2nd":
        np.testing.assert_array_equal(stored[:], ARRAY)
    else:
        assert bytes(stored[:]) == ARRAY.tobytes()


def test_bcolz_reads_it(client, tmp_path):
    bcolz = pytest.importorskip("bcolz")
    path = path_of(tmp_path, "bcolz")
    bloscpack.save(odd_chunks(ARRAY), path, **OPTIONS)
    np.testing.assert_array_equal(bcolz.open(str(path), mode="r")[:], ARRAY)


FILE_FORMATS = [fmt for fmt, f in registry.FORMATS.items() if not f.directory]


def _counting_runs(monkeypatch) -> list[int]:
    """The number of chunks of each run appended from a file a task wrote."""
    runs: list[int] = []
    real = WriterBase.append_run

    def counting(self, path, receipts):
        assert os.path.isfile(path)
        runs.append(len(receipts))
        return real(self, path, receipts)

    monkeypatch.setattr(WriterBase, "append_run", counting)
    return runs


@pytest.mark.parametrize("fmt", FILE_FORMATS)
def test_file_formats_copy_the_runs_tasks_wrote(client, tmp_path, monkeypatch, fmt):
    runs = _counting_runs(monkeypatch)
    monkeypatch.setattr(dask_integration, "TASK_NBYTES", 2 * 2**20)  # runs of 2 chunks
    monkeypatch.setattr(dask_integration, "BATCH_NBYTES", 4 * 2**20)  # batches of 2 runs
    expected, written = path_of(tmp_path, fmt, "np"), path_of(tmp_path, fmt, "da")
    bloscpack.save(ARRAY, expected, **OPTIONS)
    bloscpack.save(odd_chunks(ARRAY), written, **OPTIONS)
    assert contents(written) == contents(expected)
    assert len(runs) == 5
    assert sum(runs) == bloscpack.info(expected)["nchunks"] > len(runs)
    assert sorted(os.listdir(tmp_path)) == sorted([expected.name, written.name])


@pytest.mark.parametrize(("fmt", "staged"), [(fmt, True) for fmt in FORMATS]
                         + [(fmt, False) for fmt in FILE_FORMATS])  # fmt: skip
def test_the_callers_memory_is_flat_in_the_array_size(client, tmp_path, monkeypatch, fmt,
                                                      staged):  # fmt: skip
    """The caller holds at most two batches of chunks (or of their receipts) at a time:
    saving 4 times as much incompressible data takes hardly more of its memory (the
    scheduler's state per task)."""
    monkeypatch.setattr(dask_integration, "TASK_NBYTES", MiB)  # runs of one 1 MiB chunk
    monkeypatch.setattr(dask_integration, "BATCH_NBYTES", 2 * MiB)  # batches of two runs
    monkeypatch.setattr(dask_integration, "STAGE_RUNS", staged)
    bloscpack.save(da.zeros(10, chunks=5), path_of(tmp_path, fmt, "warm"), **OPTIONS)  # imports
    peaks = {}
    for mib in (16, 64):
        x = da.random.default_rng(mib).random(mib * MiB // 8, chunks=MiB // 8)  # on the workers
        tracemalloc.start()
        try:
            bloscpack.save(x, path_of(tmp_path, fmt, f"m{mib}"), **OPTIONS)
            peaks[mib] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peaks[64] < peaks[16] + 4 * MiB
    assert peaks[64] < 16 * MiB


@pytest.mark.parametrize("fmt", FILE_FORMATS)
def test_tasks_on_another_machine_send_their_chunks(client, tmp_path, monkeypatch, fmt):
    """A task that does not find the file this process made next to the output sends its
    chunks, as does every task with ``STAGE_RUNS = False``."""
    runs = _counting_runs(monkeypatch)
    real = dask_integration._stage

    def elsewhere(writer):
        directory, _token = real(writer)
        return directory, "made-on-another-machine.here"

    monkeypatch.setattr(dask_integration, "_stage", elsewhere)
    expected, written = path_of(tmp_path, fmt, "np"), path_of(tmp_path, fmt, "da")
    bloscpack.save(ARRAY, expected, **OPTIONS)
    bloscpack.save(odd_chunks(ARRAY), written, **OPTIONS)
    assert contents(written) == contents(expected)
    monkeypatch.setattr(dask_integration, "STAGE_RUNS", False)
    bloscpack.save(odd_chunks(ARRAY), written, **OPTIONS)
    assert contents(written) == contents(expected)
    assert runs == []


def test_b2nd_chunk_boxes(client, tmp_path):
    expected, written = path_of(tmp_path, "b2nd", "np"), path_of(tmp_path, "b2nd", "da")
    options = {"chunks": (400, 300), "blocks": (100, 64)}
    bloscpack.save(ARRAY, expected, **options)
    bloscpack.save(odd_chunks(ARRAY), written, **options)
    assert written.read_bytes() == expected.read_bytes()


def _die_on_chunk(block: np.ndarray, kill: int, block_info: dict | None = None) -> np.ndarray:
    if block_info is not None and block_info[0]["chunk-location"][0] == kill:
        os._exit(1)
    return block


def _fail_on_chunk(block: np.ndarray, kill: int, block_info: dict | None = None) -> np.ndarray:
    if block_info is not None and block_info[0]["chunk-location"][0] == kill:
        raise ValueError("no data for this chunk")
    return block


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_failed_task_leaves_the_old_container(client, tmp_path, fmt):
    path = path_of(tmp_path, fmt)
    bloscpack.save(ARRAY[:10], path)
    before = contents(path)
    x = odd_chunks(ARRAY).map_blocks(_fail_on_chunk, 2, dtype=ARRAY.dtype)
    with pytest.raises(ValueError, match="no data for this chunk"):
        bloscpack.save(x, path, **OPTIONS)
    assert contents(path) == before
    assert os.listdir(tmp_path) == [path.name]


def test_overwrite_false_refuses_before_computing(client, tmp_path):
    path = path_of(tmp_path, "blp")
    bloscpack.save(ARRAY[:10], path)
    with pytest.raises(bloscpack.OutputExistsError):
        bloscpack.save(odd_chunks(ARRAY), path, overwrite=False)


METADATA = {"units": "m", "levels": [1, 2, {"deep": 1.5}], "note": "é"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_metadata_the_bytes_of_numpy_save(client, tmp_path, fmt):
    expected, written = path_of(tmp_path, fmt, "np"), path_of(tmp_path, fmt, "da")
    bloscpack.save(ARRAY, expected, metadata=METADATA, **OPTIONS)
    bloscpack.save(odd_chunks(ARRAY), written, metadata=METADATA, **OPTIONS)
    assert contents(written) == contents(expected)
    plain = path_of(tmp_path, fmt, "plain")
    bloscpack.save(ARRAY, plain, **OPTIONS)
    assert contents(plain) != contents(written)  # the metadata is in the bytes


@pytest.mark.parametrize("fmt", FORMATS)
def test_metadata_default_options_and_a_table(tmp_path, fmt):
    expected, written = path_of(tmp_path, fmt, "np"), path_of(tmp_path, fmt, "da")
    with dask.config.set(scheduler="threads"):
        bloscpack.save(TABLE, expected, metadata=METADATA)
        bloscpack.save(da.from_array(TABLE, chunks=3001), written, metadata=METADATA)
    assert contents(written) == contents(expected)


@pytest.mark.parametrize(("fmt", "metadata", "message"), [
    ("blp", {"dtype": 1}, "metadata key 'dtype': the name is taken by the numpy metadata"),
    ("blp", {"s": {1, 2}}, "format 'blp' cannot store the metadata: metadata key 's': the .blp"
                           " metadata (JSON) cannot hold it (Object of type set is not JSON"
                           " serializable)"),
    ("b2frame", {"x" * 40: 1}, "format 'b2frame' cannot store the metadata: metadata key"
                               f" {'x' * 40!r}: frame vlmetalayer names hold at most 31 bytes"),
    ("bcolz", {"s": b"raw"}, "format 'bcolz' cannot store the metadata: metadata key 's':"
                             " bcolz attributes (JSON) cannot hold it (Object of type bytes is"
                             " not JSON serializable)"),
    ("b2nd", [("a", 1)], "metadata must be a mapping, got list"),
])  # fmt: skip
def test_metadata_refused_as_numpy_save_refuses_it(tmp_path, fmt, metadata, message):
    for array in (ARRAY[:10], da.from_array(ARRAY[:10], chunks=5)):
        with pytest.raises(ArgumentError) as raised:
            bloscpack.save(array, path_of(tmp_path, fmt), metadata=metadata)
        assert str(raised.value) == message
    assert os.listdir(tmp_path) == []


def test_metadata_and_the_format_options_that_hold_it(tmp_path):
    x = da.from_array(ARRAY[:10], chunks=5)
    with pytest.raises(ArgumentError, match=r"^metadata= is stored as the vlmetalayers: give it"
                                            r" or vlmeta=, not both$"):  # fmt: skip
        bloscpack.save(x, tmp_path / "a.b2nd", metadata={"a": 1}, vlmeta={"b": 2})
    with pytest.raises(ArgumentError, match=r"^metadata= is stored as the bcolz attributes:"
                                            r" give it or attrs=, not both$"):  # fmt: skip
        bloscpack.save(x, tmp_path / "a.bcolz", metadata={"a": 1}, attrs={"b": 2})
    assert os.listdir(tmp_path) == []


TABLE = np.zeros(40_000, dtype=[("a", "<i8"), ("b", "<f4"), ("c", "<U5"), ("d", "<i2", (3,))])
TABLE["a"] = np.arange(40_000)
TABLE["b"] = np.sin(np.arange(40_000))
TABLE["c"] = np.char.add("r", (np.arange(40_000) % 977).astype(str))
TABLE["d"] = np.arange(120_000).reshape(-1, 3) % 11


def frame():
    pd = pytest.importorskip("pandas")
    n = 30_000
    return pd.DataFrame({
        "i": np.arange(n, dtype="<i8"),
        "f": np.cos(np.arange(n)),
        "s": [f"name-{i % 1499}" for i in range(n)],
        "t": pd.date_range("2021-01-01", periods=n, freq="min"),
        "ok": np.arange(n) % 3 == 0,
    })  # fmt: skip


def test_a_structured_dask_array_is_a_ctable(client, tmp_path):
    bcolz = pytest.importorskip("bcolz")
    expected, written = tmp_path / "np.bcolz", tmp_path / "da.bcolz"
    bloscpack.save(TABLE, expected, chunks=(3000,))
    bloscpack.save(da.from_array(TABLE, chunks=7001), written, chunks=(3000,))
    assert contents(written) == contents(expected)
    assert sorted(os.listdir(written)) == ["__attrs__", "__rootdirs__", "a", "b", "c", "d"]
    table = bcolz.open(str(written), mode="r")
    assert table.names == ["a", "b", "c", "d"]
    for name in table.names:
        np.testing.assert_array_equal(table[name][:], TABLE[name])
    np.testing.assert_array_equal(bloscpack.load(written), TABLE)


def test_a_dask_dataframe_is_the_ctable_of_its_pandas_dataframe(client, tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    bcolz = pytest.importorskip("bcolz")
    df = frame()
    expected, written = tmp_path / "pd.bcolz", tmp_path / "dd.bcolz"
    bloscpack.save(df, expected)
    bloscpack.save(dd.from_pandas(df, npartitions=7), written, format="bcolz")
    assert contents(written) == contents(expected)
    back = bloscpack.read_table(written)
    assert list(back.columns) == ["i", "f", "s", "t", "ok"]
    assert back["s"].tolist() == df["s"].tolist()
    np.testing.assert_array_equal(back["t"].to_numpy(), df["t"].to_numpy())
    np.testing.assert_array_equal(back["f"].to_numpy(), df["f"].to_numpy())
    table = bcolz.open(str(written), mode="r")
    assert table["s"].dtype == np.dtype("<U9")
    np.testing.assert_array_equal(table["i"][:], df["i"].to_numpy())


def test_a_dask_dataframe_of_unknown_partition_lengths(client, tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    df = frame()
    expected, written = tmp_path / "pd.bcolz", tmp_path / "dd.bcolz"
    bloscpack.save(df[df["i"] % 5 == 1], expected)
    lazy = dd.from_pandas(df, npartitions=6).clear_divisions()
    selected = lazy[lazy["i"] % 5 == 1]
    assert not selected.known_divisions
    bloscpack.save(selected, written)
    assert contents(written) == contents(expected)
    assert len(bloscpack.read_table(written)) == 6000


def test_a_structured_dask_array_of_unknown_chunk_sizes(client, tmp_path):
    expected, written = tmp_path / "np.bcolz", tmp_path / "da.bcolz"
    bloscpack.save(TABLE[TABLE["a"] % 3 == 0], expected)
    x = da.from_array(TABLE, chunks=5000)
    selected = x[x["a"] % 3 == 0]
    assert np.isnan(selected.shape[0])
    bloscpack.save(selected, written)
    assert contents(written) == contents(expected)


def test_a_dask_dataframe_with_partitions_of_no_rows(tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    df = frame()
    expected, written = tmp_path / "pd.bcolz", tmp_path / "dd.bcolz"
    bloscpack.save(df[df["i"] >= 25_000], expected)
    lazy = dd.from_pandas(df, npartitions=6)
    with dask.config.set(scheduler="threads"):
        bloscpack.save(lazy[lazy["i"] >= 25_000], written)
        assert contents(written) == contents(expected)
        bloscpack.save(lazy[lazy["i"] < 0], tmp_path / "none.bcolz")
    assert bloscpack.load(tmp_path / "none.bcolz").shape == (0,)


def test_a_dask_dataframe_refused_before_anything_is_written(client, tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    df = frame()
    df["s"] = df["s"].astype("category")
    with pytest.raises(ArgumentError) as raised:
        bloscpack.save(dd.from_pandas(df, npartitions=3), tmp_path / "t.bcolz")
    assert str(raised.value) == (f"{tmp_path / 't.bcolz'}: column 's' is categorical: store its"
                                 " codes and categories as columns of their own"
                                 " (series.cat.codes, series.cat.categories)")  # fmt: skip
    df = frame()
    df = df.assign(s=df["s"].where(df["i"] != 29_000))  # missing in the last partition only
    with pytest.raises(ArgumentError) as raised:
        bloscpack.save(dd.from_pandas(df, npartitions=3), tmp_path / "t.bcolz")
    assert str(raised.value) == (f"{tmp_path / 't.bcolz'}: column 's' has missing values, which"
                                 " a table cannot hold")  # fmt: skip
    assert os.listdir(tmp_path) == []


def test_a_failed_task_leaves_no_table(client, tmp_path):
    x = da.from_array(TABLE, chunks=5000).map_blocks(_fail_on_chunk, 3, dtype=TABLE.dtype)
    with pytest.raises(ValueError, match="no data for this chunk"):
        bloscpack.save(x, tmp_path / "t.bcolz")
    assert os.listdir(tmp_path) == []


def test_an_empty_dask_array(tmp_path):
    path = tmp_path / "a.b2nd"
    bloscpack.save(da.zeros((0, 5), chunks=2), path)
    assert bloscpack.load(path).shape == (0, 5)


@pytest.mark.parametrize("fmt", FORMATS)
def test_bloscarray_to_dask(client, tmp_path, fmt):
    path = path_of(tmp_path, fmt)
    bloscpack.save(ARRAY, path, **OPTIONS)
    with bloscpack.open(path) as lazy:
        x = lazy.to_dask()
    y = bloscpack.to_dask(path)
    assert x.chunks == y.chunks
    np.testing.assert_array_equal(client.compute(x).result(), ARRAY)


def test_bloscarray_to_dask_of_a_table_column(tmp_path):
    table = np.zeros(1000, dtype=[("a", "<i8"), ("b", "<f4")])
    table["a"] = np.arange(1000)
    path = tmp_path / "t.bcolz"
    bloscpack.save(table, path)
    with bloscpack.open(path) as lazy:
        assert set(lazy.to_dask()) == {"a", "b"}
        column = lazy["a"].to_dask()
    with dask.config.set(scheduler="threads"):
        np.testing.assert_array_equal(column.compute(), table["a"])


def test_bloscarray_from_bytes_has_no_dask_array(tmp_path):
    path = tmp_path / "a.blp"
    bloscpack.save(ARRAY[:10], path)
    with bloscpack.open(path.read_bytes()) as lazy, pytest.raises(ArgumentError):
        lazy.to_dask()


def test_bloscarray_to_dask_is_the_registered_chunk_manager(tmp_path, monkeypatch):
    """The core does not import the dask integration: ``BloscArray.to_dask`` calls the chunk
    manager ``"dask"`` registered when called, and says so when none is."""
    path = tmp_path / "a.blp"
    bloscpack.save(ARRAY[:10], path)
    assert chunkmanagers.manager("dask") is bloscpack.to_dask
    calls = []
    monkeypatch.setitem(chunkmanagers._MANAGERS, "dask",
                        lambda *args, **kwargs: calls.append((args, kwargs)) or "lazy")  # fmt: skip
    with bloscpack.open(path) as lazy:
        assert lazy.to_dask(5) == "lazy"
        monkeypatch.delitem(chunkmanagers._MANAGERS, "dask")
        with pytest.raises(UnsupportedError) as raised:
            lazy.to_dask()
    assert calls == [((str(path), 5), {"columns": None})]
    assert str(raised.value) == (
        "no chunk manager 'dask' is registered (import bloscpack.integrations.dask)"
    )


# last: the cluster restarts the killed workers meanwhile
@pytest.mark.parametrize("fmt", ["sframe", "b2nd"])  # a directory, a file
def test_a_killed_worker_leaves_no_container(client, tmp_path, fmt):
    x = odd_chunks(ARRAY).map_blocks(_die_on_chunk, 3, dtype=ARRAY.dtype)
    with pytest.raises((distributed.KilledWorker, bloscpack.BloscpackError)):
        bloscpack.save(x, path_of(tmp_path, fmt), **OPTIONS)
    assert os.listdir(tmp_path) == []  # no container, no staged temporary
    client.wait_for_workers(2, timeout=180)


def _slow_block(block: np.ndarray, started: str) -> np.ndarray:
    if block.size:  # not dask's call on an empty block
        distributed.Event(started).set()
        time.sleep(0.5)
    return block


@pytest.mark.parametrize("fmt", ["sframe", "b2nd", "bcolz"])
def test_a_restart_of_the_cluster_mid_write_leaves_nothing(tmp_path, fmt):
    path = path_of(tmp_path, fmt)
    started = f"started-{fmt}"
    x = da.from_array(ARRAY, chunks=(100, 800)).map_blocks(
        _slow_block, started, meta=np.empty((0, 0), ARRAY.dtype))
    failed = []

    def save():
        try:
            bloscpack.save(x, path, chunk_size="256K")
        except BaseException as exc:  # noqa: BLE001 (asserted below)
            failed.append(exc)

    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=":0", silence_logs=50,
    )  # fmt: skip
    with cluster, distributed.Client(cluster) as client:
        writing = threading.Thread(target=save)
        writing.start()
        assert distributed.Event(started).wait(timeout=120)
        assert os.listdir(tmp_path)  # the staged output is there
        client.restart(wait_for_workers=False)
        writing.join(timeout=120)
    assert not writing.is_alive()
    assert len(failed) == 1
    assert isinstance(failed[0], bloscpack.BloscpackError)
    assert re.fullmatch(rf"{re.escape(str(path))}: the task of chunk \d+ was cancelled \(a"
                        r" worker died, or the cluster restarted\?\); nothing was written",
                        str(failed[0]))  # fmt: skip
    assert os.listdir(tmp_path) == []  # no container, no staged temporary


@pytest.mark.parametrize("fmt", FORMATS)
def test_to_a_url(tmp_path, fmt):
    """Built locally in parallel, then uploaded: the objects hold what a local save writes."""
    fsspec = pytest.importorskip("fsspec")
    expected = path_of(tmp_path, fmt, "np")
    bloscpack.save(ARRAY, expected, **OPTIONS)
    url = f"memory://dask-save/{expected.name}"
    with dask.config.set(scheduler="threads"):
        bloscpack.save(odd_chunks(ARRAY), url, **OPTIONS)
    fs = fsspec.filesystem("memory")
    root = url.removeprefix("memory://")
    if fs.isdir(root):
        uploaded = {p.removeprefix(f"/{root}/"): fs.cat(p) for p in fs.find(root)}
    else:
        uploaded = {"": fs.cat(root)}
    assert uploaded == contents(expected)
    np.testing.assert_array_equal(bloscpack.load(url), ARRAY)
    fs.rm(root, recursive=True)
