"""The VirtualiZarr parser: open_virtual_dataset describes every container as virtual zarr
arrays whose chunks are byte ranges of its files, and what it loads, and the kerchunk
references it writes, give what bloscpack.load gives."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import blosc2
import numpy as np
import pytest

import bloscpack
from bloscpack.errors import UnsupportedError

pytest_plugins = ["s3_server"]  # s3_write_server: moto's S3 server on loopback

virtualizarr = pytest.importorskip("virtualizarr")
xr = pytest.importorskip("xarray")
pytest.importorskip("imagecodecs.numcodecs")
from obspec_utils.registry import ObjectStoreRegistry  # noqa: E402
from obstore.store import LocalStore, S3Store  # noqa: E402
from test_references import OTHER_KINDS, special_array  # noqa: E402

from bloscpack.virtual import BloscpackParser  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Numcodecs codecs are not in the Zarr version 3")

DATA = Path(__file__).parent / "data"
#: 10,000 rows: whole chunks of 1,000 rows in every layout (no chunk held inline).
ARRAY = np.arange(10_000 * 3, dtype="<f8").reshape(10_000, 3) / 7
FORMATS = {
    "blp": ("a.blp", {"chunk_size": 1000 * 3 * 8}),
    "b2frame": ("a.b2frame", {"chunk_size": 1000 * 3 * 8}),
    "sframe": ("a.b2sframe", {"chunk_size": 1000 * 3 * 8, "format": "sframe"}),
    "b2nd": ("a.b2nd", {"chunks": (1000, 3), "blocks": (250, 3)}),
    "b2nd sparse": ("s.b2nd", {"chunks": (1000, 3), "blocks": (250, 3), "sparse": True}),
    "bcolz": ("a.bcolz", {"chunklen": 1000}),
}


def local() -> ObjectStoreRegistry:
    return ObjectStoreRegistry({"file://": LocalStore()})


def loaded(url: str, registry: ObjectStoreRegistry, **options) -> xr.Dataset:
    """The dataset of the container at ``url`` with every variable loaded."""
    parser = BloscpackParser(**options)
    virtual = virtualizarr.open_virtual_dataset(url, registry=registry, parser=parser)
    names = list(virtual.data_vars)
    return virtualizarr.open_virtual_dataset(url, registry=registry, parser=parser,
                                             loadable_variables=names)  # fmt: skip


@pytest.mark.parametrize("case", list(FORMATS))
def test_open_virtual_dataset_loads_what_load_reads(tmp_path, case):
    name, options = FORMATS[case]
    path = tmp_path / name
    bloscpack.save(ARRAY, path, **options)
    virtual = virtualizarr.open_virtual_dataset(path.as_uri(), registry=local(),
                                                parser=BloscpackParser())  # fmt: skip
    assert virtual["data"].dims == ("dim_0", "dim_1") and virtual["data"].shape == (10_000, 3)
    entry = virtual["data"].data.manifest.dict()["0.0"]
    file, offset, length = bloscpack.to_references(path)["refs"]["data/0.0"]
    assert entry == {"path": Path(file).as_uri(), "offset": offset, "length": length}
    np.testing.assert_array_equal(loaded(path.as_uri(), local())["data"].values, ARRAY)
    # the kerchunk references VirtualiZarr writes, read by xarray through fsspec
    refs = virtual.vz.to_kerchunk(format="dict")
    again = xr.open_dataset("reference://", engine="zarr", backend_kwargs={
        "consolidated": False, "storage_options": {"fo": refs}})  # fmt: skip
    np.testing.assert_array_equal(again["data"].values, ARRAY)


def test_a_ctable_is_one_variable_per_column(tmp_path):
    table = np.zeros(4000, [("a", "<i8"), ("b", "<f4"), ("c", "<u2")])
    table["a"], table["b"], table["c"] = np.arange(4000), np.arange(4000) / 3, 7
    bloscpack.save(table, tmp_path / "t.bcolz", chunklen=1000)
    dataset = loaded((tmp_path / "t.bcolz").as_uri(), local(), skip_variables=["c"])
    assert sorted(dataset.data_vars) == ["a", "b"]
    for column in ("a", "b"):
        assert dataset[column].dims == ("dim_0",)
        np.testing.assert_array_equal(dataset[column].values, table[column])


@pytest.mark.parametrize("case", ["blp", "b2frame", "sframe", "bcolz"])
def test_a_short_last_chunk_is_a_byte_range_read_through_the_pad_codec(tmp_path, case):
    name, options = FORMATS[case]
    path, short = tmp_path / name, ARRAY[:9_999]
    bloscpack.save(short, path, **options)
    virtual = virtualizarr.open_virtual_dataset(path.as_uri(), registry=local(),
                                                parser=BloscpackParser())  # fmt: skip
    file, offset, length = bloscpack.to_references(path, codec="bloscpack")["refs"]["data/9.0"]
    entry = virtual["data"].data.manifest.dict()["9.0"]
    assert entry == {"path": Path(file).as_uri(), "offset": offset, "length": length}
    np.testing.assert_array_equal(loaded(path.as_uri(), local())["data"].values, short)


@pytest.mark.parametrize("name", ["frames/several_short_last.b2frame"])
def test_files_python_blosc2_wrote_with_a_short_last_chunk(name):
    url = (DATA / "blosc2" / name).as_uri()
    got = loaded(url, local())["data"].values
    np.testing.assert_array_equal(got, bloscpack.load(DATA / "blosc2" / name))


@pytest.mark.parametrize("name", [
    "ca_bool_chunklen7", "ca_i4_chunklen4", "ca_i8_multichunk", "ca_i2_2d",
    "ca_f8_zstd_bitshuffle",
])  # fmt: skip
def test_bcolz_leftovers_bcolz_wrote(name):
    path = DATA / "bcolz" / name
    stock = bloscpack.to_references(path)["refs"]
    assert any(isinstance(value, str) and value.startswith("base64:") for value in stock.values())
    got = loaded(path.as_uri(), local())["data"].values
    np.testing.assert_array_equal(got, bloscpack.load(path))


@pytest.mark.parametrize("name", ["b2nd/f2d_float64.b2nd", "b2nd/i3d_int16.b2nd", "peer"])
def test_b2nd_blocks_one_after_another_are_read_through_the_blocks_codec(tmp_path, name):
    if name == "peer":
        path = tmp_path / "peer.b2nd"
        array = np.arange(600 * 700, dtype="<f4").reshape(600, 700) / 3
        blosc2.asarray(array, chunks=(200, 300), blocks=(50, 70), urlpath=str(path), mode="w")
    else:
        path = DATA / name
    got = loaded(path.as_uri(), local())["data"].values
    np.testing.assert_array_equal(got, bloscpack.load(path))
    with pytest.raises(UnsupportedError, match="not in C order"):
        loaded(path.as_uri(), local(), codec="stock")


def test_a_chunk_held_inline_is_refused_by_name(tmp_path):
    path = tmp_path / "a.bcolz"
    bloscpack.save(ARRAY[:9_999], path, chunklen=1000)
    message = (f"{path.as_uri()}: chunk data/9.0 is held inline (a short last chunk with"
               " codec='stock', or a special chunk of another value than the fill value, or of a"
               " NaN no fill value gives), which VirtualiZarr's manifests cannot hold"
               " (bloscpack.to_references and fsspec's"
               " reference filesystem read it)")  # fmt: skip
    with pytest.raises(UnsupportedError, match=f"^{re.escape(message)}$"):
        virtualizarr.open_virtual_dataset(path.as_uri(), registry=local(),
                                          parser=BloscpackParser(codec="stock"))  # fmt: skip


def test_special_chunks_of_the_fill_value_have_no_manifest_entry(tmp_path):
    zeros = np.zeros((10, 6))
    array = np.concatenate([zeros, np.arange(60.0).reshape(10, 6), zeros, zeros + np.nan])
    path = tmp_path / "z.b2nd"
    blosc2.asarray(array, chunks=(10, 6), blocks=(5, 6), urlpath=str(path), mode="w")
    virtual = virtualizarr.open_virtual_dataset(path.as_uri(), registry=local(),
                                                parser=BloscpackParser())  # fmt: skip
    assert sorted(virtual["data"].data.manifest.dict()) == ["1.0", "3.0"]
    got = loaded(path.as_uri(), local())["data"].values
    assert got.tobytes() == bloscpack.load(path).tobytes() == array.tobytes()


#: case -> (array, whether xarray's defaults read VirtualiZarr's kerchunk references exactly)
KERCHUNK_CASES = {
    "float64": (np.arange(120.0).reshape(20, 6) - 60, True),  # (the fill value NaN)
    "complex64": (np.arange(120.0).reshape(20, 6).astype("<c8") * (1 - 2j), True),  # (NaN)
    "datetime64": (np.arange(120).reshape(20, 6).astype("<M8[s]"), True),  # (never masked)
    "float64, zero chunks": (np.concatenate([np.zeros((10, 6)), np.arange(60.0).reshape(10, 6)]),
                             False),  # (the fill value 0.0: stored zeros read as NaN)
    "int32": (np.arange(120, dtype="<i4").reshape(20, 6), False),  # (0: as float64, 0 as NaN)
}  # fmt: skip


@pytest.mark.parametrize("case", list(KERCHUNK_CASES))
def test_kerchunk_references_virtualizarr_writes_need_mask_and_scale_false(tmp_path, case):
    """VirtualiZarr writes a fill value of every array into the format 2 references it writes
    (``convert_v3_to_v2_metadata`` of the array's format 3 metadata, which always has one),
    and xarray reads a format 2 fill value as missing data: exact with xarray's defaults only
    where the fill value is NaN (float and complex arrays with no chunk left to another fill
    value) or the array is of datetime64 or timedelta64 items (which xarray never masks);
    else exact with ``mask_and_scale=False``."""
    array, exact = KERCHUNK_CASES[case]
    path = tmp_path / "a.b2nd"
    blosc2.asarray(array, chunks=(10, 6), blocks=(5, 6), urlpath=str(path), mode="w")
    virtual = virtualizarr.open_virtual_dataset(path.as_uri(), registry=local(),
                                                parser=BloscpackParser())  # fmt: skip
    stored = kerchunk_dataset(virtual, mask_and_scale=False)["data"].values
    assert stored.dtype == array.dtype and stored.tobytes() == array.tobytes()
    masked = kerchunk_dataset(virtual)["data"].values
    assert (masked.dtype == array.dtype and masked.tobytes() == array.tobytes()) is exact
    if not exact:
        assert np.isnan(masked[array == 0]).all()


def special_frame(path: Path, specials: list) -> Path:
    """A frame of float64 chunks of 100 items that python-blosc2 writes as special entries."""
    frame = blosc2.SChunk(chunksize=800, urlpath=str(path), mode="w", cparams={"typesize": 8})
    for special in specials:
        one = blosc2.SChunk(chunksize=800, cparams={"typesize": 8})
        one.fill_special(100, special)
        frame.append_chunk(one.get_chunk(0))
    frame.vlmeta["dtype"], frame.vlmeta["shape"] = "'<f8'", [100 * len(specials)]
    frame.vlmeta["order"], frame.vlmeta["container"] = "C", "numpy"
    return path


@pytest.mark.parametrize("name", ["b2nd/zero_d_float64.b2nd", "bloscpack/nd_0d.blp"])
def test_0d_arrays_are_refused_by_name(name):
    url = (DATA / name).as_uri()
    message = (f"{url}: array 'data' is 0-d, whose one chunk VirtualiZarr's manifests"
               " cannot hold (bloscpack.to_references and fsspec's reference filesystem read"
               " it)")  # fmt: skip
    with pytest.raises(UnsupportedError, match=f"^{re.escape(message)}$"):
        virtualizarr.open_virtual_dataset(url, registry=local(), parser=BloscpackParser())


def test_special_chunks_of_nan_as_the_fill_value(tmp_path):
    nan = blosc2.SpecialValue.NAN
    path = special_frame(tmp_path / "n.b2frame", [nan, nan, nan])
    got = loaded(path.as_uri(), local())["data"].values
    assert got.tobytes() == bloscpack.load(path).tobytes() == np.full(300, np.nan).tobytes()


def test_a_special_chunk_of_another_value_is_refused_by_name(tmp_path):
    nan, zero = blosc2.SpecialValue.NAN, blosc2.SpecialValue.ZERO
    path = special_frame(tmp_path / "s.b2frame", [nan, zero, nan])
    with pytest.raises(UnsupportedError, match=r"chunk data/1 is held inline \(a short last"):
        loaded(path.as_uri(), local())


@pytest.mark.filterwarnings("ignore:The LocalFileSystem storage is not safe")
@pytest.mark.parametrize("case", ["blp", "b2frame", "b2nd", "bcolz", "specials"])
def test_icechunk_holds_the_virtual_dataset(tmp_path, case):
    """Parser -> icechunk (local storage, a virtual chunk container for the files) -> xarray,
    in a repository opened again."""
    if case == "specials":  # zero chunks, left to the fill value (no manifest entry)
        path, expected = tmp_path / "z.b2nd", np.zeros((10_000, 3))
        expected[2000:3000] = ARRAY[2000:3000]
        blosc2.asarray(expected, chunks=(1000, 3), blocks=(250, 3), urlpath=str(path), mode="w")
    else:
        name, options = FORMATS[case]
        path, expected = tmp_path / "files" / name, ARRAY[:9_999]
        path.parent.mkdir()
        bloscpack.save(expected, path, **options)
    virtual = virtualizarr.open_virtual_dataset(path.as_uri(), registry=local(),
                                                parser=BloscpackParser())  # fmt: skip
    got = through_icechunk(tmp_path, virtual)["data"].values
    assert got.tobytes() == bloscpack.load(path).tobytes() == expected.tobytes()


def through_icechunk(folder: Path, virtual: xr.Dataset | xr.DataTree) -> xr.Dataset | xr.DataTree:
    """The virtual dataset (or tree) ``virtual`` of files under ``folder``, committed to an
    icechunk repository (local storage, a virtual chunk container for the files) and opened
    again with xarray."""
    icechunk = pytest.importorskip("icechunk")
    prefix = f"{folder.as_uri()}/"
    config = icechunk.RepositoryConfig.default()
    config.set_virtual_chunk_container(
        icechunk.VirtualChunkContainer(prefix, icechunk.local_filesystem_store(str(folder)))
    )
    access = icechunk.containers_credentials({prefix: None})
    storage = icechunk.local_filesystem_storage(str(folder / "repo"))
    repo = icechunk.Repository.create(storage, config, authorize_virtual_chunk_access=access)
    session = repo.writable_session("main")
    virtual.vz.to_icechunk(session.store)
    session.commit("the container, virtual")
    again = icechunk.Repository.open(storage, authorize_virtual_chunk_access=access)
    store = again.readonly_session("main").store
    if isinstance(virtual, xr.DataTree):
        return xr.open_datatree(store, engine="zarr", consolidated=False)
    return xr.open_zarr(store, consolidated=False)


def kerchunk_dataset(virtual: xr.Dataset, **options) -> xr.Dataset:
    """The kerchunk references VirtualiZarr writes of ``virtual``, opened with xarray."""
    refs = virtual.vz.to_kerchunk(format="dict")
    return xr.open_dataset("reference://", engine="zarr", backend_kwargs={
        "consolidated": False, "storage_options": {"fo": refs}}, **options)  # fmt: skip


@pytest.mark.filterwarnings("ignore:The LocalFileSystem storage is not safe")
@pytest.mark.parametrize("source", ["b2nd zeros", "b2nd empty", "frame zeros", "frame NaN"])
@pytest.mark.parametrize("dtype", OTHER_KINDS)
def test_special_chunks_of_complex_and_datetime_arrays(tmp_path, dtype, source):
    """Left to the fill value (no manifest entry), read as load reads them: loaded, from
    icechunk, and from the kerchunk references VirtualiZarr writes (with xarray's defaults
    where the fill value is no value xarray masks: NaN, a datetime64 or timedelta64 one)."""
    path, specials = special_array(tmp_path, source, dtype)
    expected = bloscpack.load(path).tobytes()
    if (dtype, source) == ("<c8", "frame NaN"):  # (a NaN of float32 of another payload)
        with pytest.raises(UnsupportedError, match=r"chunk data/0 is held inline \(a short"):
            loaded(path.as_uri(), local())
        return
    virtual = virtualizarr.open_virtual_dataset(path.as_uri(), registry=local(),
                                                parser=BloscpackParser())  # fmt: skip
    entries = virtual["data"].data.manifest.dict()
    assert sorted(entries) == [str(i) for i in range(len(entries) + len(specials))
                               if i not in specials]  # fmt: skip
    for dataset in (loaded(path.as_uri(), local()), through_icechunk(tmp_path, virtual),
                    kerchunk_dataset(virtual, mask_and_scale=False)):  # fmt: skip
        got = dataset["data"].values
        assert got.dtype == np.dtype(dtype) and got.tobytes() == expected
    masked = kerchunk_dataset(virtual)["data"].values
    unmasked = dtype[1] in "Mm" or source == "frame NaN"
    assert (masked.tobytes() == expected) is unmasked


@pytest.mark.parametrize("case", ["blp", "sframe", "bcolz"])
def test_containers_at_urls(s3_write_server, case):
    name, options = FORMATS[case]
    url, so = s3_write_server.url(name), s3_write_server.storage_options
    bloscpack.save(ARRAY, url, storage_options=so, **options)
    store = S3Store(s3_write_server.bucket, endpoint=s3_write_server.endpoint,
                    access_key_id="testing", secret_access_key="testing", region="us-east-1",
                    client_options={"allow_http": True})  # fmt: skip
    registry = ObjectStoreRegistry({f"s3://{s3_write_server.bucket}": store})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        dataset = loaded(url, registry, storage_options=so)
    np.testing.assert_array_equal(dataset["data"].values, ARRAY)


def test_without_virtualizarr_the_extra_is_named(tmp_path, monkeypatch):
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    monkeypatch.setitem(sys.modules, "virtualizarr.manifests", None)  # (an import of it fails)
    url = (tmp_path / "a.blp").as_uri()
    message = (f"{url}: the VirtualiZarr parser needs virtualizarr"
               " (pip install 'bloscpack[virtual]')")  # fmt: skip
    with pytest.raises(UnsupportedError, match=f"^{re.escape(message)}$"):
        BloscpackParser()(url, local())


def test_blosc2_chunks_need_no_registration_in_a_new_program(tmp_path):
    """The parser reads Blosc2 chunks with bloscpack's own codec, which the package's entry
    points make known to zarr and numcodecs: a new program reads the references VirtualiZarr
    wrote with nothing registered by hand."""
    import json
    import subprocess

    from bloscpack import virtual, zarr_codecs

    assert zarr_codecs.Blosc2.codec_id == virtual.BLOSC2_ID
    path = tmp_path / "a.b2nd"
    bloscpack.save(ARRAY, path, chunks=(1000, 3), blocks=(500, 3))
    dataset = virtualizarr.open_virtual_dataset(path.as_uri(), registry=local(),
                                                parser=BloscpackParser())  # fmt: skip
    (tmp_path / "refs.json").write_text(json.dumps(dataset.vz.to_kerchunk(format="dict")))
    code = (
        "import sys, warnings, numpy as np, xarray as xr\n"
        "warnings.simplefilter('ignore')\n"
        "ds = xr.open_dataset('reference://', engine='zarr', mask_and_scale=False,"
        " backend_kwargs={'consolidated': False, 'storage_options': {'fo': sys.argv[1]}})\n"
        "sys.stdout.write(repr(ds['data'].values.tobytes() == np.load(sys.argv[2]).tobytes()))\n"
    )
    np.save(tmp_path / "a.npy", ARRAY)
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "refs.json"),
                           str(tmp_path / "a.npy")], capture_output=True, text=True)  # fmt: skip
    assert (proc.returncode, proc.stdout) == (0, "True"), proc.stderr
    refs = json.loads((tmp_path / "refs.json").read_text())["refs"]
    assert '"id":"bloscpack_blosc2"' in refs["data/.zarray"].replace(" ", "")
