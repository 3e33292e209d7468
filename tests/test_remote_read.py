"""Reading containers at URLs: every format over HTTP (with and without ``Range``) and S3
(moto), equal to the local reads, in few requests and bytes; errors as one-line
``RemoteError``; the command line on URLs; appends and edits refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fsspec")
pytest.importorskip("s3fs")
pytest.importorskip("moto")

import bloscpack  # noqa: E402
from bloscpack.containers.registry import by_extension  # noqa: E402
from bloscpack.errors import RemoteError, UnsupportedError  # noqa: E402
from bloscpack.remote.source import EDGE_SIZE  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from remote_servers import free_port, http_server, s3_server  # noqa: E402

DATA = Path(__file__).parent / "data"
ARRAY = np.random.default_rng(7).integers(0, 1 << 20, (1200, 800)).astype("<i8")
TABLE = np.zeros(30_000, dtype=[("x", "<i8"), ("y", "<f4")])
TABLE["x"] = np.arange(30_000)
TABLE["y"] = np.sin(np.arange(30_000))

#: Single-file containers, then directory containers, of the served tree.
FILES = ["a.blp", "a.b2frame", "a.b2nd", "one.chunk", "corpus/many_chunks_int32.b2nd",
         "corpus/cli_chunk_1K.blp", "corpus/api_bytes_nooffsets_nochecksum.blp"]  # fmt: skip
DIRS = ["a.b2sframe", "a.bcolz", "t.bcolz", "sparse.b2nd", "corpus/ca_i8_multichunk",
        "corpus/ct_mixed_20000", "corpus/sframe_plain"]  # fmt: skip
NAMES = FILES + DIRS


def _build(root: Path) -> None:
    bloscpack.save(ARRAY, root / "a.blp", chunk_size=1 << 20, blocks=(10,), blosc_version=2)
    bloscpack.save(ARRAY, root / "a.b2frame")
    bloscpack.save(ARRAY, root / "a.b2nd", chunks=(300, 800), blocks=(20, 800))
    bloscpack.save(ARRAY, root / "a.b2sframe")
    bloscpack.save(ARRAY, root / "a.bcolz")
    bloscpack.save(ARRAY[:300], root / "sparse.b2nd", sparse=True, chunks=(100, 800))
    bloscpack.save(TABLE, root / "t.bcolz")
    (root / "one.chunk").write_bytes(bloscpack.compress_chunk(ARRAY[:100].tobytes(),
                                                              typesize=8))  # fmt: skip
    corpus = root / "corpus"
    corpus.mkdir()
    shutil.copy(DATA / "b2nd" / "many_chunks_int32.b2nd", corpus)
    for name in ("cli_chunk_1K.blp", "api_bytes_nooffsets_nochecksum.blp"):
        shutil.copy(DATA / "bloscpack" / name, corpus)
    for name in ("ca_i8_multichunk", "ct_mixed_20000"):
        shutil.copytree(DATA / "bcolz" / name, corpus / name)
    shutil.copytree(DATA / "blosc2" / "sframes" / "plain.b2frame", corpus / "sframe_plain")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("served")
    _build(root)
    return root


@pytest.fixture(scope="module")
def http(tree: Path):
    with http_server(str(tree)) as server:
        yield server


@pytest.fixture(scope="module")
def s3(tree: Path):
    import boto3

    with s3_server() as server:
        client = boto3.client(
            "s3", endpoint_url=server.direct, region_name="us-east-1",
            aws_access_key_id="testing", aws_secret_access_key="testing",
        )  # fmt: skip
        client.create_bucket(Bucket="data")
        for path in tree.rglob("*"):
            if path.is_file():
                client.upload_file(str(path), "data", path.relative_to(tree).as_posix())
        yield server


def _url(backend: str, server, name: str) -> tuple[str, dict | None]:
    if backend == "http":
        return f"{server.url}/{name}", None
    return f"s3://data/{name}", server.options()


def _selections(shape: tuple[int, ...]) -> list:
    if len(shape) == 1:
        n = shape[0]
        return [..., 0, n - 1, slice(10, 20), slice(None, None, max(n // 7, 1)),
                slice(n // 2, None)]  # fmt: skip
    return [..., (5, 7), 3, slice(10, 20), (slice(None), 3), (slice(None, None, 97), slice(1, 9)),
            (slice(shape[0] - 3, None),)]  # fmt: skip


@pytest.mark.parametrize("backend", ["http", "s3"])
@pytest.mark.parametrize("name", NAMES)
def test_remote_reads_equal_local(backend: str, name: str, tree: Path,
                                  request: pytest.FixtureRequest):  # fmt: skip
    server = request.getfixturevalue(backend)
    url, options = _url(backend, server, name)
    local = bloscpack.open(tree / name)
    with bloscpack.open(url, storage_options=options) as remote:
        assert remote.format == local.format
        assert (remote.shape, remote.dtype) == (local.shape, local.dtype)
        assert remote.metadata == local.metadata
        if local.shape:
            for selection in _selections(local.shape):
                np.testing.assert_array_equal(remote[selection], local[selection])
    np.testing.assert_array_equal(
        bloscpack.load(url, storage_options=options), bloscpack.load(tree / name)
    )
    assert bloscpack.detect(url, storage_options=options) == bloscpack.detect(tree / name)
    assert bloscpack.info(url, storage_options=options)["format"] == local.format
    assert bloscpack.verify(url, storage_options=options)["ok"]


def _counted(server, work):
    server.counter.reset()
    result = work()
    return result, server.counter.requests, server.counter.bytes


@pytest.mark.parametrize("name", NAMES)
def test_requests_and_bytes(name: str, tree: Path, http):
    """Opening a single file costs its two edges (no chunk data); a directory its metadata
    objects, in one round.  An item costs at most two requests; the whole array about the
    container's size."""
    url = f"{http.url}/{name}"
    path = tree / name
    size = (sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir()
            else path.stat().st_size)  # fmt: skip
    array, n, nbytes = _counted(http, lambda: bloscpack.open(url))
    if name in FILES:
        named = by_extension(name)
        head, tail = named.edges if named is not None else (EDGE_SIZE, EDGE_SIZE)
        assert n == (1 if not tail or size <= head else 2)
        assert nbytes == min(size, head + tail)
        assert set(http.counter.ranges) <= {f"bytes=0-{head - 1}", f"bytes=-{tail}"}
    else:
        assert nbytes < 64 * 1024  # metadata objects only
    if array.shape:
        first = (0,) * array.ndim
        _, n, nbytes = _counted(http, lambda: array[first])
        assert n <= max(2, len(array.dtype.names or ()))  # a table: one object per column
        _, n, nbytes = _counted(http, lambda: array[array.shape[0] // 2])  # a row
        assert n <= max(4, len(array.dtype.names or ()))
        if size > 64 * EDGE_SIZE:
            assert nbytes < size * 0.6  # not the whole container
        _, n, nbytes = _counted(http, lambda: array[...])
        assert nbytes <= size * 1.05 + 2 * EDGE_SIZE
    array.close()


@pytest.mark.parametrize(("name", "rows"), [("a.b2nd", 300), ("a.b2frame", None),
                                             ("a.blp", None)])  # fmt: skip
def test_a_block_costs_a_block(name: str, rows: int | None, tree: Path, http):
    """An item inside a large chunk fetches its header and bstarts, then its block only
    (two dependent requests), never the chunk."""
    with bloscpack.open(f"{http.url}/{name}", verify=False) as array:
        _, n, nbytes = _counted(http, lambda: array[650, 5])
        np.testing.assert_array_equal(array[650, 5], ARRAY[650, 5])
        chunk = 300 * 800 * 8 if rows else 1 << 20
        assert n <= 2
        assert nbytes < chunk // 4
        _, n, nbytes = _counted(http, lambda: array[650, 6])  # same block: kept
        assert n == 0


def test_a_small_selection_over_two_chunks_takes_two_rounds(tree: Path):
    """The blocks of the two chunks a small selection touches are read at once: two dependent
    rounds of requests (headers and bstarts, then blocks), not one chunk after the other."""
    latency = 0.4
    with (http_server(str(tree), latency=latency) as server,
          bloscpack.open(f"{server.url}/a.b2nd") as array):  # fmt: skip
        t0 = time.perf_counter()
        np.testing.assert_array_equal(array[299:301, 5], ARRAY[299:301, 5])  # chunks 0, 1
        elapsed = time.perf_counter() - t0
    assert elapsed < 2.6 * latency  # two rounds (three: chunk 1's header after chunk 0)


@pytest.mark.parametrize("backend", ["http", "s3"])
@pytest.mark.parametrize("name", ["a.blp", "a.b2frame", "a.b2nd", "one.chunk"])
def test_load_fetches_a_file_in_one_request(backend: str, name: str, tree: Path,
                                            request: pytest.FixtureRequest):  # fmt: skip
    """A whole read of a single file is one request for all its bytes (no edges first)."""
    server = request.getfixturevalue(backend)
    url, options = _url(backend, server, name)
    server.counter.reset()
    np.testing.assert_array_equal(
        bloscpack.load(url, storage_options=options), bloscpack.load(tree / name)
    )
    assert server.counter.requests == 1, server.counter.ranges
    assert server.counter.bytes == (tree / name).stat().st_size


def test_a_file_larger_than_the_whole_fetch_is_read_by_ranges(
    http, monkeypatch: pytest.MonkeyPatch
):
    from bloscpack.containers import registry

    monkeypatch.setattr(registry, "WHOLE_FETCH", 100_000)
    http.counter.reset()
    np.testing.assert_array_equal(bloscpack.load(f"{http.url}/a.b2nd"), ARRAY)
    ranges = http.counter.ranges
    assert ranges[0] == "whole"  # answered with a length over the limit: its body not read
    assert "bytes=-4096" in ranges[1:3] and "bytes=0-4095" in ranges[1:3]


def test_open_s3_two_requests(s3):
    s3.counter.reset()
    with bloscpack.open("s3://data/a.b2nd", storage_options=s3.options()) as array:
        opened = s3.counter.requests
        assert opened <= 2, s3.counter.ranges
        assert array[5, 7] == ARRAY[5, 7]


def test_memory_cache_fetches_each_range_once(http):
    with bloscpack.open(f"{http.url}/a.b2nd", cache="memory") as array:
        first, n1, _ = _counted(http, lambda: array[100:400:7, 3])
        again, n2, _ = _counted(http, lambda: array[100:400:7, 3])
        assert n1 > 0 and n2 == 0
        np.testing.assert_array_equal(again, ARRAY[100:400:7, 3])


def test_a_cached_directory_fetches_each_object_once(http):
    with bloscpack.open(f"{http.url}/a.bcolz", cache="memory") as array:
        _, n1, _ = _counted(http, lambda: array[100:700:3])
        again, n2, _ = _counted(http, lambda: array[100:700:3])
        assert n1 > 0 and n2 == 0
        np.testing.assert_array_equal(again, ARRAY[100:700:3])


def test_disk_cache_is_keyed_by_identity(tree: Path, tmp_path: Path):
    root = tmp_path / "served"
    root.mkdir()
    shutil.copy(tree / "a.b2nd", root / "x.b2nd")
    cache = tmp_path / "cache"
    with http_server(str(root)) as server:
        url = f"{server.url}/x.b2nd"
        with bloscpack.open(url, cache=str(cache)) as array:
            np.testing.assert_array_equal(array[600:700], ARRAY[600:700])
        with bloscpack.open(url, cache=str(cache)) as array:
            server.counter.reset()
            np.testing.assert_array_equal(array[600:700], ARRAY[600:700])
            assert server.counter.requests == 0
        changed = ARRAY + 1
        bloscpack.save(changed, root / "x.b2nd", chunks=(300, 800), blocks=(20, 800))
        os.utime(root / "x.b2nd", ns=(1, 1))  # a new identity
        with bloscpack.open(url, cache=str(cache)) as array:
            np.testing.assert_array_equal(array[600:700], changed[600:700])


def test_memory_file_and_chained_urls(tree: Path, tmp_path: Path):
    import fsspec

    memory = fsspec.filesystem("memory")
    memory.put(str(tree / "a.b2nd"), "/remote-read/a.b2nd")
    memory.put(str(tree / "a.bcolz"), "/remote-read/a.bcolz", recursive=True)
    np.testing.assert_array_equal(bloscpack.open("memory://remote-read/a.b2nd")[3:5],
                                  ARRAY[3:5])  # fmt: skip
    np.testing.assert_array_equal(bloscpack.load("memory://remote-read/a.bcolz"), ARRAY)
    np.testing.assert_array_equal(bloscpack.load(f"file://{tree}/a.blp"), ARRAY)
    chained = f"simplecache::file://{tree}/a.b2frame"
    options = {"simplecache": {"cache_storage": str(tmp_path / "sc")}}
    np.testing.assert_array_equal(bloscpack.open(chained, storage_options=options)[7], ARRAY[7])


def test_convert_from_a_url(tree: Path, tmp_path: Path, http):
    report = bloscpack.convert(f"{http.url}/a.bcolz", tmp_path / "out.b2nd")
    assert report["source_format"] == "bcolz"
    np.testing.assert_array_equal(bloscpack.load(tmp_path / "out.b2nd"), ARRAY)


def test_to_dask_reads_a_url(http):
    pytest.importorskip("dask")
    lazy = bloscpack.to_dask(f"{http.url}/a.b2nd")
    np.testing.assert_array_equal(lazy[:50, :3].compute(), ARRAY[:50, :3])


def test_xarray_and_pandas_read_urls(http):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("pandas")
    dataset = xr.open_dataset(f"{http.url}/a.b2nd", engine="bloscpack")
    np.testing.assert_array_equal(dataset["a"][10:12, 4].values, ARRAY[10:12, 4])
    table = bloscpack.read_table(f"{http.url}/t.bcolz", columns=["y"])
    np.testing.assert_array_equal(table["y"].to_numpy(), TABLE["y"])


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["http", "s3"])
def test_missing_object(backend: str, request: pytest.FixtureRequest):
    url, options = _url(backend, request.getfixturevalue(backend), "nothing-here.b2nd")
    with pytest.raises(RemoteError, match="nothing-here.b2nd.*not found"):
        bloscpack.open(url, storage_options=options)


def test_server_without_range(tree: Path):
    with http_server(str(tree), ranges=False) as server:
        with pytest.raises(RemoteError, match=r"a\.b2nd: the server ignores Range"):
            bloscpack.open(f"{server.url}/a.b2nd")
        small = "corpus/cli_chunk_1K.blp"  # a small body is taken whole
        np.testing.assert_array_equal(bloscpack.load(f"{server.url}/{small}"),
                                      bloscpack.load(tree / small))  # fmt: skip
        # a whole read asks for no range: any server serves it
        np.testing.assert_array_equal(bloscpack.load(f"{server.url}/a.b2nd"), ARRAY)


def test_truncated_response(tree: Path):
    with http_server(str(tree), truncate=True) as server:
        array = bloscpack.open(f"{server.url}/a.b2nd")
        with pytest.raises(RemoteError, match=r"a\.b2nd: truncated response"):
            array[700:900]


@pytest.mark.parametrize("backend", ["http", "s3"])
def test_an_empty_object_is_not_a_container(backend: str, tmp_path: Path, s3):
    from bloscpack.errors import NotAContainer

    (tmp_path / "empty.blp").write_bytes(b"")
    if backend == "s3":
        import boto3

        client = boto3.client("s3", endpoint_url=s3.direct, region_name="us-east-1",
                              aws_access_key_id="testing",
                              aws_secret_access_key="testing")  # fmt: skip
        client.put_object(Bucket="data", Key="empty.blp", Body=b"")
        with pytest.raises(NotAContainer, match="s3://data/empty.blp"):
            bloscpack.open("s3://data/empty.blp", storage_options=s3.options())
        return
    with http_server(str(tmp_path)) as server, pytest.raises(NotAContainer, match="empty.blp"):
        bloscpack.open(f"{server.url}/empty.blp")


def test_access_denied_and_transient_failures(tree: Path):
    failures = {"/a.b2nd": [403], "/a.b2frame": [503, 502]}
    with http_server(str(tree), failures=failures) as server:
        with pytest.raises(RemoteError, match=r"a\.b2nd: access denied"):
            bloscpack.open(f"{server.url}/a.b2nd")
        with bloscpack.open(f"{server.url}/a.b2frame") as array:  # retried with backoff
            np.testing.assert_array_equal(array[3], ARRAY[3])


def test_connection_refused():
    url = f"http://127.0.0.1:{free_port()}/a.b2nd"
    with pytest.raises(RemoteError, match=r"127\.0\.0\.1.*a\.b2nd"):
        bloscpack.open(url)


def test_appends_and_edits_refused(http):
    from bloscpack.append import append
    from bloscpack.containers.bcolz import append_bcolz

    url = f"{http.url}/a.blp"
    with pytest.raises(UnsupportedError, match="cannot append to a URL: object stores"):
        append(url, ARRAY[:1])
    with pytest.raises(UnsupportedError, match="cannot append to a URL"):
        append_bcolz(f"{http.url}/a.bcolz", ARRAY[:1])
    with pytest.raises(UnsupportedError, match="cannot change a URL"):
        bloscpack.Frame(f"{http.url}/a.b2frame", mode="a")


# --- the command line ----------------------------------------------------------------------


def _blpk(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bloscpack", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})  # fmt: skip


def _s3_args(s3) -> tuple[list[str], dict[str, str]]:
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip
    return ["--storage-option", f"endpoint_url={s3.endpoint}"], env


def test_cli_info_verify_decompress_convert(tree: Path, tmp_path: Path, http, s3):
    options, env = _s3_args(s3)
    done = _blpk(*options, "info", "s3://data/a.b2nd", env=env)
    assert done.returncode == 0, done.stderr
    assert "b2nd" in done.stdout
    done = _blpk("info", f"{http.url}/a.blp")
    assert done.returncode == 0, done.stderr
    summary = done.stdout.split("blpk: details:")[0].splitlines()  # a request per header: one
    assert summary[2:5] == [
        "blpk: array:     int64, shape (1200, 800)",
        "blpk: size:      7.7 MB (7680000 bytes)",
        "blpk: chunks:    8 of 1.0 MB (1048576 bytes), the last 340.0 kB (339968 bytes)",
    ]
    assert summary[5].endswith(" (in the first chunk)"), summary
    done = _blpk(*options, "verify", "s3://data/a.bcolz", env=env)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "a.npy"
    done = _blpk("d", f"{http.url}/a.b2nd", str(out))
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(out), ARRAY)
    done = _blpk(*options, "convert", "s3://data/t.bcolz", str(tmp_path / "t.blp"), env=env)
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(bloscpack.load(tmp_path / "t.blp"), TABLE)


@pytest.mark.parametrize("what", ["missing", "refused"])
def test_cli_errors_are_one_line(what: str, http):
    url = (f"{http.url}/nothing.b2nd" if what == "missing"
           else f"http://127.0.0.1:{free_port()}/a.b2nd")  # fmt: skip
    done = _blpk("info", url)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and url in lines[0], done.stderr


# --- a single item of a 64 MiB container, every format --------------------------------------

_RNG = np.random.default_rng(11)
BIG = _RNG.standard_normal(8 << 20).reshape(2048, 4096)  # 64 MiB, stored in about 58
BIG_TABLE = np.zeros(BIG.size * 2 // 3, dtype=[("x", "<i8"), ("y", "<f4")])
BIG_TABLE["x"] = _RNG.integers(0, 1 << 40, len(BIG_TABLE))
BIG_TABLE["y"] = BIG.reshape(-1)[: len(BIG_TABLE)]
#: name: (requests to open, their rounds, requests for one item, their rounds).  Single files
#: open in one round of at most 2 requests (a ``.blp`` keeps nothing at its end: 1); a sparse
#: ``.b2nd`` first finds no object of that name (1 round), then reads its index; bcolz reads
#: ``meta/`` (and, for a table, each column's) at once.  An item inside a large chunk costs
#: its header and bstarts, then its blocks; a ``.blp`` chunk is read whole with its digest.
BIG_COSTS = {
    "big.blp": (1, 1, 1, 1),
    "big.b2frame": (2, 1, 2, 2),
    "big.b2nd": (2, 1, 2, 2),
    "bigsparse.b2nd": (3, 2, 2, 2),
    "big.b2sframe": (1, 1, 2, 2),
    "big.bcolz": (4, 1, 1, 1),
    "bigtable.bcolz": (10, 2, 2, 1),
    "big.chunk": (2, 1, 1, 1),
}


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big")
    for name in ("big.blp", "big.b2frame", "big.b2nd", "big.b2sframe", "big.bcolz"):
        bloscpack.save(BIG, root / name)
    bloscpack.save(BIG, root / "bigsparse.b2nd", sparse=True)
    bloscpack.save(BIG_TABLE, root / "bigtable.bcolz")
    (root / "big.chunk").write_bytes(bloscpack.compress_chunk(BIG.tobytes(), typesize=8,
                                                              blocksize=1 << 20))  # fmt: skip
    return root


@pytest.mark.parametrize("name", list(BIG_COSTS))
def test_one_item_of_a_64_mib_container(name: str, big_tree: Path):
    """Opening a 64 MiB container and reading one item fetches less than 2 % of it, in the
    requests and dependent rounds :data:`BIG_COSTS` lists (requests overlap in time when made
    at once: the server waits 50 ms before each answer)."""
    path = big_tree / name
    size = (sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir()
            else path.stat().st_size)  # fmt: skip
    assert size > 40 << 20
    local = bloscpack.open(path)
    item = (len(local) * 5 // 8 + 3,) + tuple(n // 3 for n in local.shape[1:])
    with http_server(str(big_tree), latency=0.05) as server:
        counter = server.counter
        array = bloscpack.open(f"{server.url}/{name}")
        opened = (counter.requests, counter.rounds(), counter.bytes)
        counter.reset()
        assert array[item] == local[item]
        read = (counter.requests, counter.rounds(), counter.bytes)
        array.close()
    assert (opened[0], opened[1], read[0], read[1]) == BIG_COSTS[name], counter.ranges
    assert opened[2] <= 16 * 1024
    assert opened[2] + read[2] < 0.02 * size, (opened[2], read[2], size)


def test_a_large_header_or_trailer_costs_one_more_round(tmp_path: Path):
    """When the metadata, offsets, metalayers or trailer outgrow the first windows, opening
    fetches what the header says is missing in one more round (the head's and the tail's
    extensions at once), never a round per section."""
    import blosc2

    data = np.arange(300_000, dtype="<i8")
    bloscpack.save(data, tmp_path / "m.blp", metadata={"note": "x" * 30000}, chunk_size=1024)
    frame = blosc2.asarray(data, urlpath=str(tmp_path / "m.b2nd"), mode="w", chunks=(100,),
                           blocks=(50,), meta={"big": list(range(3000))})  # fmt: skip
    frame.schunk.vlmeta["note"] = "y" * 20000
    del frame
    size = (tmp_path / "m.b2nd").stat().st_size
    with http_server(str(tmp_path), latency=0.05) as server:
        counter = server.counter
        with bloscpack.open(f"{server.url}/m.blp") as array:
            assert (counter.requests, counter.rounds()) == (2, 2)
            assert counter.ranges[0] == "bytes=0-16383"
            assert array.metadata["note"] == "x" * 30000
        counter.reset()
        with bloscpack.open(f"{server.url}/m.b2nd") as array:
            assert (counter.requests, counter.rounds()) == (4, 2)
            assert sorted(counter.ranges[:2]) == ["bytes=-4096", "bytes=0-4095"]
            assert counter.bytes < 24 * 1024 and size > 600_000
            assert array.metadata["note"] == "y" * 20000
            counter.reset()
            np.testing.assert_array_equal(array[123_456], data[123_456])


@pytest.mark.parametrize("name", ["x.bcolz", "x.b2sframe", "t.bcolz"])
def test_disk_cache_of_a_directory_container(name: str, tmp_path: Path, s3):
    """With ``cache=<dir>`` the member objects of a directory container are kept on disk by
    identity (their ETags, which one listing of the prefix tells): a second run lists the
    prefix and fetches no object; a replaced object is fetched again, never served stale."""
    import boto3

    client = boto3.client("s3", endpoint_url=s3.direct, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")  # fmt: skip
    first, second = (TABLE, TABLE[::-1].copy()) if name == "t.bcolz" else (ARRAY, ARRAY * 3)

    def upload(data: np.ndarray, local: Path) -> None:
        local.parent.mkdir()
        bloscpack.save(data, local)
        for path in local.rglob("*"):
            if path.is_file():
                key = f"cached-{name}/" + path.relative_to(local).as_posix()
                client.upload_file(str(path), "data", key)

    upload(first, tmp_path / "one" / name)
    url, cache = f"s3://data/cached-{name}", str(tmp_path / "cache")
    np.testing.assert_array_equal(
        bloscpack.load(url, storage_options=s3.options(), cache=cache), first
    )
    s3.counter.reset()
    np.testing.assert_array_equal(
        bloscpack.load(url, storage_options=s3.options(), cache=cache), first
    )
    assert s3.counter.requests >= 1
    assert all("list-type=2" in r for r in s3.counter.ranges), s3.counter.ranges
    upload(second, tmp_path / "two" / name)  # every object replaced (new ETags)
    np.testing.assert_array_equal(
        bloscpack.load(url, storage_options=s3.options(), cache=cache), second
    )
    with bloscpack.open(url, storage_options=s3.options(), cache=cache) as array:
        np.testing.assert_array_equal(array[5:9], second[5:9])


def test_disk_cache_of_a_directory_in_memory_fs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """memory:// lists creation times as numbers and answers ``info`` with datetimes: both
    name the same identity, so a second run fetches nothing; a replaced container is read
    anew."""
    import fsspec

    from bloscpack.remote import dirs

    fetched: list[str] = []
    whole_objects = dirs.whole_objects

    def counted(fs, paths, urls):
        fetched.extend(urls)
        return whole_objects(fs, paths, urls)

    monkeypatch.setattr(dirs, "whole_objects", counted)
    memory = fsspec.filesystem("memory")
    bloscpack.save(ARRAY, tmp_path / "c.bcolz")
    memory.put(str(tmp_path / "c.bcolz"), "/cached-dir/c.bcolz", recursive=True)
    url, cache = "memory://cached-dir/c.bcolz", str(tmp_path / "cache")
    np.testing.assert_array_equal(bloscpack.load(url, cache=cache), ARRAY)
    assert fetched
    fetched.clear()
    np.testing.assert_array_equal(bloscpack.load(url, cache=cache), ARRAY)
    assert fetched == []
    bloscpack.save(ARRAY + 5, tmp_path / "c.bcolz")
    memory.rm("/cached-dir/c.bcolz", recursive=True)
    memory.put(str(tmp_path / "c.bcolz"), "/cached-dir/c.bcolz", recursive=True)
    np.testing.assert_array_equal(bloscpack.load(url, cache=cache), ARRAY + 5)
    assert fetched
