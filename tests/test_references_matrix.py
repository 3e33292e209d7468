"""Byte-range references of every format, written by this project and by the peers (python-blosc2,
bcolz-zipline, bloscpack 0.16), local and at URLs: zarr-python 3 and xarray read what
bloscpack.load reads, with at most one chunk per array inlined, and so do the VirtualiZarr
parser's kerchunk references and icechunk repositories; what cannot be referenced is refused
by name."""

from __future__ import annotations

import re
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import blosc2
import fsspec
import numpy as np
import pytest

import bloscpack
from bloscpack.errors import BloscpackError

pytest_plugins = ["s3_server"]  # s3_write_server: moto's S3 server on loopback

zarr = pytest.importorskip("zarr")
xr = pytest.importorskip("xarray")
numcodecs = pytest.importorskip("numcodecs")
imagecodecs_numcodecs = pytest.importorskip("imagecodecs.numcodecs")
pytestmark = pytest.mark.filterwarnings("ignore:Numcodecs codecs are not in the Zarr version 3")

DATA = Path(__file__).parent / "data"
#: 1,007 rows: chunks of 100 rows and a short last one in every flat layout.
ARRAY = np.arange(1007 * 3, dtype="<f8").reshape(1007, 3) / 7
TABLE = np.zeros(1007, [("a", "<i8"), ("b", "<f4")])
TABLE["a"], TABLE["b"] = np.arange(1007), np.arange(1007) / 3
ROWS = {"chunk_size": 100 * 3 * 8}


@pytest.fixture(autouse=True, scope="module")
def _blosc2_codec():
    """imagecodecs' Blosc2 codec, which reads Blosc2 chunks in zarr format 2, known to
    numcodecs."""
    numcodecs.register_codec(imagecodecs_numcodecs.Blosc2)


def _peer_b2nd(path: Path, contiguous: bool) -> None:
    blosc2.asarray(ARRAY, chunks=(100, 3), blocks=(50, 3), urlpath=str(path), mode="w",
                   contiguous=contiguous)  # fmt: skip


def _peer_store(path: Path, kind: str) -> None:
    with getattr(blosc2, kind)(str(path), mode="w") as store:
        store["/x"] = blosc2.asarray(ARRAY, chunks=(100, 3), blocks=(50, 3))
        store["/g/y" if kind == "TreeStore" else "/y"] = np.arange(500, dtype="<i4")


#: case -> (file name, what writes it there, or the peer's file under tests/data).
CASES: dict[str, tuple[str, Callable[[Path], object] | Path]] = {
    "blp": ("a.blp", lambda p: bloscpack.save(ARRAY, p, **ROWS)),
    "blp raw": ("r.blp", lambda p: bloscpack.pack_bytes_to_file(ARRAY.tobytes(), str(p),
                                                                 chunk_size="4K")),
    "b2frame": ("a.b2frame", lambda p: bloscpack.save(ARRAY, p, **ROWS)),
    "sframe": ("a.b2sframe", lambda p: bloscpack.save(ARRAY, p, format="sframe", **ROWS)),
    "b2nd": ("a.b2nd", lambda p: bloscpack.save(ARRAY, p, chunks=(100, 3), blocks=(50, 3))),
    "b2nd sparse": ("s.b2nd", lambda p: bloscpack.save(ARRAY, p, chunks=(100, 3),
                                                        blocks=(50, 3), sparse=True)),
    "bcolz carray": ("a.bcolz", lambda p: bloscpack.save(ARRAY, p, chunklen=100)),
    "bcolz ctable": ("t.bcolz", lambda p: bloscpack.save(TABLE, p, chunklen=100)),
    "store b2z": ("s.b2z", lambda p: bloscpack.save({"/x": ARRAY, "/g/y": TABLE["a"]}, p)),
    "python-blosc2 frame": ("f.b2frame", DATA / "blosc2" / "frames" / "codec_zstd.b2frame"),
    "python-blosc2 sframe": ("f.b2frame", DATA / "blosc2" / "sframes" / "specials.b2frame"),
    "python-blosc2 b2nd": ("p.b2nd", lambda p: _peer_b2nd(p, True)),
    "python-blosc2 b2nd sparse": ("p.b2nd", lambda p: _peer_b2nd(p, False)),
    "python-blosc2 b2nd blocks": ("p.b2nd", DATA / "b2nd" / "many_chunks_int32.b2nd"),
    "python-blosc2 DictStore b2z": ("d.b2z", lambda p: _peer_store(p, "DictStore")),
    "python-blosc2 DictStore b2d": ("d.b2d", lambda p: _peer_store(p, "DictStore")),
    "python-blosc2 TreeStore": ("t.b2z", lambda p: _peer_store(p, "TreeStore")),
    "bcolz-zipline carray": ("c.bcolz", DATA / "bcolz" / "ca_i8_multichunk"),
    "bcolz-zipline ctable": ("t.bcolz", DATA / "bcolz" / "ct_listcols_zstd_chunklen2"),
    "bloscpack 0.16": ("m.blp", DATA / "bloscpack" / "nd_multichunk.blp"),
    "bloscpack 0.16 raw": ("r.blp", DATA / "bloscpack" / "cli_chunk_1K.blp"),
}  # fmt: skip


#: Special chunks held inline, by case and zarr format: in format 2 those of zeros (xarray
#: reads a format 2 fill value as missing data); in both, a raw-bytes frame's NaN chunk (its
#: bytes repeat no one item).
SPECIALS_INLINED = {("python-blosc2 sframe", 2): 4, ("python-blosc2 sframe", 3): 1}


def made(folder: Path, name: str, how: Callable[[Path], object] | Path) -> Path:
    """The container ``name`` in ``folder``, written by ``how`` or copied from it."""
    path = folder / name
    if isinstance(how, Path):
        (shutil.copytree if how.is_dir() else shutil.copyfile)(how, path)
    else:
        how(path)
    return path


def expected_arrays(path: Path | str, refs: dict, **options) -> dict[str, np.ndarray]:
    """What bloscpack.load reads, by the path of the zarr array of ``refs`` that holds it:
    ``data``, a ctable's columns, a store's keys (``g/y``); raw bytes as ``uint8``."""
    loaded = bloscpack.load(path, **options)
    if isinstance(loaded, dict):
        return {key.strip("/"): value for key, value in loaded.items()}
    if isinstance(loaded, bytes):
        return {"data": np.frombuffer(loaded, np.uint8)}
    if loaded.dtype.names and not {"data/.zarray", "data/zarr.json"} & set(refs["refs"]):
        return {column: loaded[column] for column in loaded.dtype.names}  # (a ctable)
    return {"data": loaded}


def same(got: np.ndarray, expected: np.ndarray) -> bool:
    """Equal shape, dtype and bytes, in native byte order (zarr format 3 reads that)."""
    got, expected = (a.astype(a.dtype.newbyteorder("=")) for a in (got, expected))
    return (got.shape == expected.shape and got.dtype == expected.dtype
            and got.tobytes() == expected.tobytes())  # fmt: skip


def inlined_per_array(refs: dict) -> dict[str, int]:
    """The number of chunks ``refs`` holds inline, by array."""
    counts: dict[str, int] = {}
    for key, value in refs["refs"].items():
        if isinstance(value, str) and value.startswith("base64:"):
            array = key.split("/c/")[0] if "/c/" in key else key.rsplit("/", 1)[0]
            counts[array] = counts.get(array, 0) + 1
    return counts


def read_back(refs: dict | str, names: list[str], zarr_format: int, **options) -> dict:
    """Each array ``names`` of ``refs`` read by zarr-python and by xarray (the variable of
    its group's dataset)."""
    storage = {"fo": refs, **options}
    got = {}
    for name in names:
        group, _, leaf = name.rpartition("/")
        array = zarr.open_array("reference://", storage_options=storage, path=name, mode="r",
                                zarr_format=zarr_format)[...]  # fmt: skip
        # (zarr-python 3.1 lists no member of a nested group through the reference file
        # system from its root: the group's own URL is opened)
        dataset = xr.open_dataset(f"reference://{group}", engine="zarr", backend_kwargs={
            "consolidated": False, "storage_options": storage})  # fmt: skip
        got[name] = (array, dataset[leaf].values)
    return got


@pytest.mark.parametrize("codec", ["stock", "bloscpack"])
@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("case", list(CASES))
def test_zarr_and_xarray_read_what_load_reads(tmp_path, case, zarr_format, codec):
    path = made(tmp_path, *CASES[case])
    try:
        refs = bloscpack.to_references(path, zarr_format=zarr_format, codec=codec)
    except BloscpackError as exc:  # b2nd blocks out of C order need the bloscpack codecs
        assert (case, codec) == ("python-blosc2 b2nd blocks", "stock"), exc
        assert re.search(r"one after another, not in C order", str(exc))
        return
    expected = expected_arrays(path, refs)
    for name, (array, values) in read_back(refs, list(expected), zarr_format).items():
        assert same(array, expected[name]) and same(values, expected[name]), name
    # besides the special chunks held inline (SPECIALS_INLINED), one (a short last chunk)
    most = 1 if codec == "stock" else 0
    special = refs["bloscpack"]["inlined_special"]
    assert special == SPECIALS_INLINED.get((case, zarr_format), 0)
    assert all(n <= most + special for n in inlined_per_array(refs).values())
    assert sum(inlined_per_array(refs).values()) <= most * len(expected) + special


@pytest.mark.parametrize("case", list(CASES))
def test_containers_at_urls(tmp_path, s3_write_server, case):
    """The container on moto's S3 server, referenced by URL, read through the server."""
    path = made(tmp_path, *CASES[case])
    url, so = s3_write_server.url(CASES[case][0]), s3_write_server.storage_options
    fs = fsspec.filesystem("s3", **so)
    fs.put(str(path), url, recursive=path.is_dir())
    refs = bloscpack.to_references(url, storage_options=so, codec="bloscpack")
    assert all(value[0].startswith(url) for value in refs["refs"].values()
               if isinstance(value, list))  # fmt: skip
    expected = expected_arrays(url, refs, storage_options=so)
    remote = {"remote_protocol": "s3", "remote_options": {**so, "asynchronous": True}}
    for name, (array, values) in read_back(refs, list(expected), 2, **remote).items():
        assert same(array, expected[name]) and same(values, expected[name]), name
    special = SPECIALS_INLINED.get((case, 2), 0)
    assert sum(inlined_per_array(refs).values()) == refs["bloscpack"]["inlined_special"] == special
    # the VirtualiZarr parser, its chunks read through obstore's S3 store
    pytest.importorskip("virtualizarr")
    from obspec_utils.registry import ObjectStoreRegistry
    from obstore.store import S3Store

    from bloscpack.virtual import BloscpackParser

    if SPECIALS_INLINED.get((case, 3)):  # (refused: see test_virtualizarr_round_trip)
        return
    store = S3Store(s3_write_server.bucket, endpoint=s3_write_server.endpoint,
                    access_key_id="testing", secret_access_key="testing", region="us-east-1",
                    client_options={"allow_http": True})  # fmt: skip
    registry = ObjectStoreRegistry({f"s3://{s3_write_server.bucket}": store})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        manifests = BloscpackParser(storage_options=so)(url, registry)  # (a ManifestStore)
        opened = zarr.open_group(manifests, mode="r", zarr_format=3)
        for name in expected:
            assert same(opened[name][...], expected[name]), name


@pytest.mark.filterwarnings("ignore:The LocalFileSystem storage is not safe")
@pytest.mark.parametrize("case", list(CASES))
def test_virtualizarr_round_trip(tmp_path, case):
    """Parser -> arrays loaded, -> kerchunk references -> xarray, -> icechunk -> xarray."""
    virtualizarr = pytest.importorskip("virtualizarr")
    from obspec_utils.registry import ObjectStoreRegistry
    from obstore.store import LocalStore
    from test_virtual import through_icechunk

    from bloscpack.virtual import BloscpackParser

    (tmp_path / "files").mkdir()
    path = made(tmp_path / "files", *CASES[case])
    expected = expected_arrays(path, bloscpack.to_references(path, codec="bloscpack"))
    registry = ObjectStoreRegistry({"file://": LocalStore()})
    if SPECIALS_INLINED.get((case, 3)):  # (its manifests hold no chunk inline)
        with pytest.raises(BloscpackError, match=r": chunk data/2 is held inline \("):
            virtualizarr.open_virtual_datatree(path.as_uri(), registry=registry,
                                               parser=BloscpackParser())  # fmt: skip
        return
    tree = virtualizarr.open_virtual_datatree(path.as_uri(), registry=registry,
                                              parser=BloscpackParser())  # fmt: skip
    stored = through_icechunk(tmp_path, tree)
    for name in expected:
        group, _, leaf = name.rpartition("/")
        assert same(stored[f"/{group}"][leaf].values, expected[name]), name
    for group in {name.rpartition("/")[0] for name in expected}:
        virtual = tree[f"/{group}"].to_dataset()
        names = list(virtual.data_vars)
        refs = virtual.vz.to_kerchunk(format="dict")
        kerchunk = xr.open_dataset("reference://", engine="zarr", mask_and_scale=False,
                                   backend_kwargs={"consolidated": False,
                                                   "storage_options": {"fo": refs}})  # fmt: skip
        for leaf in names:
            name = f"{group}/{leaf}".lstrip("/")
            assert same(kerchunk[leaf].values, expected[name]), name


def _lazy(path: Path) -> None:
    operand = blosc2.asarray(ARRAY, urlpath=str(path.with_name("o.b2nd")), mode="w")
    (operand + 1).save(urlpath=str(path))


def _embedded(path: Path) -> None:
    store = blosc2.EmbedStore(urlpath=str(path), mode="w")
    store["/x"] = ARRAY


SNAPPY = DATA / "snappy" / "bcolz-zipline-1.13.0_cblosc-1.21.7dev_snappy-1.1.9" / "bcolz"
#: case -> (file name, what writes it, the refusal after "<path>: ").
REFUSED = {
    "snappy chunks": ("s.bcolz", SNAPPY / "bcr01_i4_arange100000_cl16384",
                      "chunk 0 is compressed with snappy, which the zarr codecs do not decode"),
    "object dtype": ("o.bcolz", DATA / "bcolz" / "ca_object",
                     "object carray: its chunks are pickled Python objects, which bloscpack"
                     " never unpickles"),
    "lazy file": ("e.b2nd", _lazy, "a python-blosc2 lazy expression ('(o0 + 1)' over operands"
                                   " o0=o.b2nd) stored as placeholder chunks; load it with"
                                   " evaluate=True, or evaluate it with python-blosc2 and save"
                                   " the result"),
    ".blp chunks of part rows": ("m.blp", lambda p: bloscpack.save(ARRAY, p, chunk_size=40),
                                 "chunks of 40 bytes do not hold whole rows of 24 bytes, so no"
                                 " zarr chunk grid holds them"),
    "variable chunk sizes": ("v.b2frame", DATA / "blosc2" / "frames" / "varlen_chunksize0.b2frame",
                             "chunks of different sizes cannot be referenced"),
    "embedded store array": ("e.b2e", _embedded,
                             "key '/x' is a frame embedded in the store's own frame, whose chunks"
                             " compress it again: no byte range of a file holds its chunks"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(REFUSED))
def test_what_cannot_be_referenced_is_refused_by_name(tmp_path, case):
    name, how, message = REFUSED[case]
    path = made(tmp_path, name, how)
    for zarr_format in (2, 3):
        with pytest.raises(BloscpackError, match=f"^{re.escape(f'{path}: {message}')}$"):
            bloscpack.to_references(path, zarr_format=zarr_format, codec="bloscpack")


def _corpus() -> list[str]:
    """Every container of the peers' corpora: bloscpack 0.16's .blp files, python-blosc2's
    frames, sparse frames and b2nd arrays, bcolz-zipline's carrays and ctables (damaged ones
    and other files left out)."""
    found = [*(DATA / "bloscpack").glob("*.blp"), *(DATA / "blosc2" / "frames").iterdir(),
             *(DATA / "blosc2" / "sframes").iterdir(), *(DATA / "b2nd").glob("*.b2nd"),
             *(p for p in (DATA / "bcolz").iterdir() if p.is_dir())]  # fmt: skip
    return sorted(str(p.relative_to(DATA)) for p in found
                  if not p.name.startswith("bad_") and p.suffix != ".bin")  # fmt: skip


#: What refuses a corpus file (the end of the message), and in which zarr formats.
CORPUS_REFUSALS = [
    (r"cannot be referenced \(zarr reads none\)", (2, 3)),  # structured dtypes zarr cannot hold
    (r"has no zarr format 3 data type here \(zarr_format=2 holds it\)", (3,)),
    (r"chunks of different sizes cannot be referenced", (2, 3)),
    (r"which bloscpack never unpickles", (2, 3)),  # object carrays
]


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("name", _corpus())
def test_every_file_the_peers_wrote(name, zarr_format):
    """References (bloscpack's codecs) read by zarr-python and xarray as load reads the file,
    with no chunk inlined but special ones; or the file is refused by name."""
    path = DATA / name
    try:
        refs = bloscpack.to_references(path, zarr_format=zarr_format, codec="bloscpack")
    except BloscpackError as exc:
        message = str(exc)
        assert message.startswith(f"{path}: ")
        assert any(re.search(f"{end}$", message) and zarr_format in formats
                   for end, formats in CORPUS_REFUSALS), message  # fmt: skip
        return
    expected = expected_arrays(path, refs)
    for array, (got, values) in read_back(refs, list(expected), zarr_format).items():
        assert same(got, expected[array]) and same(values, expected[array]), array
    assert sum(inlined_per_array(refs).values()) == refs["bloscpack"]["inlined_special"]


@pytest.mark.filterwarnings("ignore:The 'fastparquet' engine is deprecated")
@pytest.mark.parametrize("case", list(CASES))
def test_parquet_references(tmp_path, case):
    """The references written as kerchunk's parquet references read the same (a store's
    nested groups too)."""
    pytest.importorskip("pyarrow")
    pytest.importorskip("fastparquet")
    path = made(tmp_path, *CASES[case])
    refs = bloscpack.to_references(path, codec="bloscpack")
    bloscpack.write_references(refs, tmp_path / "refs.parq")
    expected = expected_arrays(path, refs)
    local = {"remote_protocol": "file"}
    got = read_back(str(tmp_path / "refs.parq"), list(expected), 2, **local)
    for name, (array, values) in got.items():
        assert same(array, expected[name]) and same(values, expected[name]), name
