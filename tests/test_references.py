"""Byte-range references (kerchunk, zarr format 2): zarr and xarray read the containers of
every format in place, through fsspec's reference filesystem, and get what bloscpack.load
gets; what no reference can describe exactly is refused by name."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import blosc2
import numpy as np
import pytest

import bloscpack
from bloscpack.containers import registry
from bloscpack.errors import ArgumentError, BloscpackError, FileNotFound, UnsupportedError

pytest_plugins = ["s3_server"]  # s3_write_server: moto's S3 server on loopback

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
imagecodecs_numcodecs = pytest.importorskip("imagecodecs.numcodecs")
xr = pytest.importorskip("xarray")

DATA = Path(__file__).parent / "data"
#: 10,007 rows: a short last chunk in every flat layout of 1,000 rows.
ARRAY = np.arange(10_007 * 3, dtype="<f8").reshape(10_007, 3) / 7
OWN = {
    "blp": ("a.blp", {"chunk_size": 1000 * 3 * 8}),
    "b2frame": ("a.b2frame", {"chunk_size": 1000 * 3 * 8}),
    "sframe": ("a.b2sframe", {"chunk_size": 1000 * 3 * 8, "format": "sframe"}),
    "b2nd": ("a.b2nd", {"chunks": (1000, 3), "blocks": (250, 3)}),
    "b2nd sparse": ("s.b2nd", {"chunks": (1000, 3), "blocks": (250, 3), "sparse": True}),
    "bcolz": ("a.bcolz", {"chunklen": 1000}),
}


@pytest.fixture(autouse=True, scope="module")
def _blosc2_codec():
    """imagecodecs' Blosc2 codec, which reads the Blosc2 chunks, known to numcodecs."""
    numcodecs.register_codec(imagecodecs_numcodecs.Blosc2)


def zarr_arrays(refs: dict, **options) -> dict[str, np.ndarray]:
    """Every array of ``refs``, read by zarr through the reference filesystem (``options``:
    more of its options)."""
    names = [key[: -len("/.zarray")] for key in refs["refs"] if key.endswith("/.zarray")]
    return {
        name: zarr.open_array("reference://", storage_options={"fo": refs, **options}, path=name,
                              mode="r", zarr_format=2)[...]
        for name in names
    }  # fmt: skip


def inlined(refs: dict) -> list[str]:
    """The keys of the chunks ``refs`` holds inline."""
    return [key for key, value in refs["refs"].items()
            if isinstance(value, str) and value.startswith("base64:")]  # fmt: skip


def assert_same(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("case", list(OWN))
def test_zarr_reads_what_load_reads_in_place(tmp_path, case):
    name, options = OWN[case]
    path = tmp_path / name
    bloscpack.save(ARRAY, path, **options)
    refs = bloscpack.to_references(path)
    assert refs["version"] == 1
    assert json.loads(refs["refs"][".zgroup"]) == {"zarr_format": 2}
    zarray = json.loads(refs["refs"]["data/.zarray"])
    assert zarray["shape"] == [10_007, 3] and zarray["chunks"] == [1000, 3]
    assert zarray["dtype"] == "<f8" and zarray["fill_value"] is None
    assert zarray["compressor"]["id"] == ("blosc" if case in ("blp", "bcolz")
                                          else "imagecodecs_blosc2")  # fmt: skip
    assert json.loads(refs["refs"]["data/.zattrs"])["_ARRAY_DIMENSIONS"] == ["dim_0", "dim_1"]
    # b2nd pads its edge chunks whole; the flat formats' short last chunk is the one copied
    assert inlined(refs) == ([] if case.startswith("b2nd") else ["data/10.0"])
    first, offset, length = refs["refs"]["data/0.0"]
    assert os.path.isabs(first) and first.startswith(str(tmp_path))
    with registry.open_reader(str(path), bloscpack.detect(path)) as reader:
        assert Path(first).read_bytes()[offset : offset + length] == bytes(reader.stored_chunk(0))
    assert_same(zarr_arrays(refs)["data"], bloscpack.load(path))


@pytest.mark.filterwarnings("ignore:Numcodecs codecs are not in the Zarr version 3")
@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("case", list(OWN))
def test_the_pad_codec_references_a_short_last_chunk_by_byte_range(tmp_path, case, zarr_format):
    name, options = OWN[case]
    path = tmp_path / name
    bloscpack.save(ARRAY, path, **options)
    refs = bloscpack.to_references(path, codec="bloscpack", zarr_format=zarr_format)
    assert refs["bloscpack"]["codec"] == "bloscpack"
    assert bloscpack.to_references(path)["bloscpack"]["codec"] == "stock"
    assert inlined(refs) == []
    last = "data/10.0" if zarr_format == 2 else "data/c/10/0"
    file, offset, length = refs["refs"][last]
    with registry.open_reader(str(path), bloscpack.detect(path)) as reader:
        assert Path(file).read_bytes()[offset : offset + length] == bytes(reader.stored_chunk(10))
    pad = {"nbytes": 1000 * 3 * 8}
    if zarr_format == 2:
        assert json.loads(refs["refs"]["data/.zarray"])["filters"] == [
            {"id": "bloscpack_pad", **pad}]  # fmt: skip
    else:
        codecs = json.loads(refs["refs"]["data/zarr.json"])["codecs"]
        blosc = "blosc" if case in ("blp", "bcolz") else "numcodecs.bloscpack_blosc2"
        assert [codec["name"] for codec in codecs] == ["bytes", "numcodecs.bloscpack_pad", blosc]
        assert codecs[1]["configuration"] == pad
    opened = zarr.open_array("reference://", storage_options={"fo": refs}, path="data",
                             mode="r", zarr_format=zarr_format)  # fmt: skip
    assert_same(opened[...], bloscpack.load(path))


def test_the_pad_codec_pads_with_zeros_and_refuses_more_than_a_chunk():
    from bloscpack.zarr_codecs import Pad

    codec = numcodecs.get_codec({"id": "bloscpack_pad", "nbytes": 6})
    assert isinstance(codec, Pad) and codec.get_config() == {"id": "bloscpack_pad", "nbytes": 6}
    assert bytes(codec.decode(b"abc")) == b"abc\0\0\0"
    assert bytes(codec.encode(b"abcdef")) == b"abcdef"
    with pytest.raises(ValueError, match="^bloscpack_pad: 7 bytes decoded, more than the 6 of a"
                       " chunk$"):  # fmt: skip
        codec.decode(b"abcdefg")


@pytest.mark.parametrize("case", ["blp", "sframe", "b2nd", "bcolz"])
def test_containers_at_urls_are_referenced_by_url(tmp_path, s3_write_server, case):
    name, options = OWN[case]
    url, so = s3_write_server.url(name), s3_write_server.storage_options
    bloscpack.save(ARRAY, url, storage_options=so, **options)
    refs = bloscpack.to_references(url, storage_options=so)
    file = refs["refs"]["data/0.0"][0]
    assert file.startswith(f"{url}/") if case in ("sframe", "bcolz") else file == url
    # zarr's reference filesystem is asynchronous: so must be the one it reads the files with
    remote = {**so, "asynchronous": True}
    got = zarr_arrays(refs, remote_protocol="s3", remote_options=remote)["data"]
    assert_same(got, bloscpack.load(url, storage_options=so))


@pytest.mark.filterwarnings("ignore:Numcodecs codecs are not in the Zarr version 3")
@pytest.mark.parametrize("case", list(OWN))
def test_zarr_format_3_references(tmp_path, case):
    """Blosc1 chunks are read by zarr's blosc codec, Blosc2 chunks by bloscpack_blosc2."""
    name, options = OWN[case]
    path = tmp_path / name
    bloscpack.save(ARRAY, path, **options)
    refs = bloscpack.to_references(path, zarr_format=3)
    meta = json.loads(refs["refs"]["data/zarr.json"])
    assert (meta["zarr_format"], meta["data_type"], meta["dimension_names"]) == (
        3, "float64", ["dim_0", "dim_1"])  # fmt: skip
    blosc = "blosc" if case in ("blp", "bcolz") else "numcodecs.bloscpack_blosc2"
    assert [codec["name"] for codec in meta["codecs"]] == ["bytes", blosc]
    assert inlined(refs) == ([] if case.startswith("b2nd") else ["data/c/10/0"])
    opened = zarr.open_array("reference://", storage_options={"fo": refs}, path="data",
                             mode="r", zarr_format=3)  # fmt: skip
    assert_same(opened[...], ARRAY)
    dataset = xr.open_dataset("reference://", engine="zarr", backend_kwargs={
        "consolidated": False, "storage_options": {"fo": refs}})  # fmt: skip
    np.testing.assert_array_equal(dataset["data"].values, ARRAY)


def test_zarr_format_3_of_fortran_arrays_and_tables(tmp_path):
    array = np.asfortranarray(np.arange(30 * 4 * 5, dtype="<i2").reshape(30, 4, 5))
    bloscpack.save(array, tmp_path / "f.blp", chunk_size=2 * 30 * 4 * 2)
    refs = bloscpack.to_references(tmp_path / "f.blp", zarr_format=3)
    codecs = json.loads(refs["refs"]["data/zarr.json"])["codecs"]
    assert codecs[0] == {"name": "transpose", "configuration": {"order": [2, 1, 0]}}
    opened = zarr.open_array("reference://", storage_options={"fo": refs}, path="data",
                             mode="r", zarr_format=3)  # fmt: skip
    assert_same(opened[...], array)
    table = DATA / "bcolz" / "ct_listcols_zstd_chunklen2"
    refs = bloscpack.to_references(table, zarr_format=3)
    expected = bloscpack.load(table)
    for column in expected.dtype.names:
        opened = zarr.open_array("reference://", storage_options={"fo": refs}, path=column,
                                 mode="r", zarr_format=3)  # fmt: skip
        np.testing.assert_array_equal(opened[...], expected[column])
    said = "dtype <U3 has no zarr format 3 data type here (zarr_format=2 holds it)"
    refusal(DATA / "bcolz" / "ca_U3", re.escape(said), zarr_format=3)


def test_xarray_opens_the_references_with_the_zarr_engine(tmp_path):
    path = tmp_path / "a.bcolz"
    bloscpack.save(ARRAY, path, chunklen=1000)
    refs = bloscpack.to_references(path)
    dataset = xr.open_dataset("reference://", engine="zarr", backend_kwargs={
        "consolidated": False, "storage_options": {"fo": refs}})  # fmt: skip
    assert dataset["data"].dims == ("dim_0", "dim_1")
    np.testing.assert_array_equal(dataset["data"].values, ARRAY)


def test_written_references_are_json_that_fsspec_opens(tmp_path):
    path = tmp_path / "a.blp"
    bloscpack.save(ARRAY, path, chunk_size=1000 * 3 * 8)
    refs = bloscpack.to_references(path)
    bloscpack.write_references(refs, tmp_path / "refs.json")
    assert json.loads((tmp_path / "refs.json").read_text()) == refs
    opened = zarr.open_array("reference://", storage_options={"fo": str(tmp_path / "refs.json")},
                             path="data", mode="r", zarr_format=2)  # fmt: skip
    np.testing.assert_array_equal(opened[...], ARRAY)
    with pytest.raises(
        FileNotFound,
        match=f"^{re.escape(str(tmp_path))}/no/refs.json: cannot"
        " write references: No such file or directory$",
    ):
        bloscpack.write_references(refs, tmp_path / "no" / "refs.json")


def test_the_last_chunk_inlined_is_the_padded_chunk_compressed_again(tmp_path):
    path = tmp_path / "a.bcolz"
    bloscpack.save(ARRAY, path, chunklen=1000)
    encoded = bloscpack.to_references(path)["refs"]["data/10.0"]
    chunk = base64.b64decode(encoded.removeprefix("base64:"))
    decoded = np.frombuffer(numcodecs.Blosc().decode(chunk), "<f8").reshape(1000, 3)
    np.testing.assert_array_equal(decoded[:7], ARRAY[10_000:])
    assert not decoded[7:].any()


# --- files the peers wrote -------------------------------------------------------------------

BCOLZ = sorted(p.name for p in (DATA / "bcolz").iterdir()
               if p.is_dir() and p.name != "ca_object")  # fmt: skip
FRAMES = [
    "frames/codec_zstd.b2frame", "frames/several_short_last.b2frame",
    "frames/fill_zero.b2frame", "frames/fill_nan_f64.b2frame", "frames/fill_uninit.b2frame",
    "frames/specials_update.b2frame", "frames/mutations_mixed.b2frame", "frames/dict_zstd.b2frame",
    "frames/nd_struct.b2nd", "frames/nd_str_U6.b2nd", "sframes/specials.b2frame",
    "sframes/reorder.b2frame",
]  # fmt: skip


@pytest.mark.parametrize("codec", ["stock", "bloscpack"])
@pytest.mark.parametrize("name", BCOLZ)
def test_bcolz_directories_bcolz_wrote(name, codec):
    path = DATA / "bcolz" / name
    refs = bloscpack.to_references(path, codec=codec)
    got, expected = zarr_arrays(refs), bloscpack.load(path)
    if not name.startswith("ct_"):
        assert list(got) == ["data"]
        assert_same(got["data"], expected)
    else:  # a ctable: one array per column
        assert list(got) == list(expected.dtype.names)
        for column in expected.dtype.names:
            assert_same(got[column], expected[column])
    # at most one chunk per array (a leftover), none with the pad codec
    assert len(inlined(refs)) <= (len(got) if codec == "stock" else 0)


@pytest.mark.parametrize("codec", ["stock", "bloscpack"])
@pytest.mark.parametrize("name", FRAMES)
def test_frames_python_blosc2_wrote(name, codec):
    path = DATA / "blosc2" / name
    refs = bloscpack.to_references(path, codec=codec)
    assert_same(zarr_arrays(refs)["data"], bloscpack.load(path))
    if name == "frames/several_short_last.b2frame":
        assert len(inlined(refs)) == (1 if codec == "stock" else 0)


@pytest.mark.parametrize("name", [
    "bloscpack/nd_fortran_2d.blp", "bloscpack/nd_transposed.blp", "bloscpack/nd_0d.blp",
    "b2nd/zero_d_float64.b2nd", "b2nd/own_zero_d.b2nd",
])  # fmt: skip
def test_fortran_ordered_and_0d_arrays(name):
    """A Fortran-ordered .blp is a zarr array of order F, chunked along its last axis."""
    path = DATA / name
    refs = bloscpack.to_references(path)
    got, expected = zarr_arrays(refs)["data"], bloscpack.load(path)
    assert got.shape == expected.shape and np.array_equal(got, expected)
    zarray = json.loads(refs["refs"]["data/.zarray"])
    assert zarray["order"] == ("F" if expected.ndim > 1 and expected.flags.f_contiguous
                               and not expected.flags.c_contiguous else "C")  # fmt: skip


def test_fortran_chunks_are_slabs_of_the_last_axis(tmp_path):
    array = np.asfortranarray(np.arange(30 * 4 * 5, dtype="<f8").reshape(30, 4, 5))
    bloscpack.save(array, tmp_path / "f.blp", chunk_size=8 * 30 * 4 * 2)
    refs = bloscpack.to_references(tmp_path / "f.blp")
    zarray = json.loads(refs["refs"]["data/.zarray"])
    assert (zarray["order"], zarray["chunks"]) == ("F", [30, 4, 2])
    assert inlined(refs) == ["data/0.0.2"]
    assert_same(zarr_arrays(refs)["data"], array)
    padded = bloscpack.to_references(tmp_path / "f.blp", codec="bloscpack")
    assert inlined(padded) == []
    assert_same(zarr_arrays(padded)["data"], array)


def special_frame(path: Path, chunks: list, dtype: str = "<f8") -> Path:
    """A frame python-blosc2 writes, of chunks of 800 bytes of items of ``dtype``: each an
    array, or a ``blosc2.SpecialValue`` (a special entry of the frame's index, of 8-byte
    items)."""
    frame = blosc2.SChunk(chunksize=800, urlpath=str(path), mode="w", cparams={"typesize": 8})
    for chunk in chunks:
        if isinstance(chunk, np.ndarray):
            frame.append_data(chunk.astype(dtype))
            continue
        one = blosc2.SChunk(chunksize=800, cparams={"typesize": 8})
        one.fill_special(100, chunk)
        frame.append_chunk(one.get_chunk(0))
    frame.vlmeta["dtype"] = repr(np.dtype(dtype).str)
    frame.vlmeta["shape"] = [800 // np.dtype(dtype).itemsize * len(chunks)]
    frame.vlmeta["order"], frame.vlmeta["container"] = "C", "numpy"
    return path


ZERO, NAN, UNINIT = blosc2.SpecialValue.ZERO, blosc2.SpecialValue.NAN, blosc2.SpecialValue.UNINIT
DATA_CHUNK = np.arange(100) - 50.5
#: frames of special chunks: the fill value, the chunks left to it, those inlined
#: case -> (frame chunks, {zarr format: (fill value, chunks left to it, chunks inlined)}).
#: Format 2 leaves only NaN chunks to the fill value: xarray reads a format 2 fill value as
#: missing data, and NaN alone then reads as what it is.
SPECIAL_CASES = {
    "zeros": ([DATA_CHUNK, ZERO, ZERO, DATA_CHUNK],
              {3: (0.0, [1, 2], []), 2: (None, [], [1, 2])}),
    "uninitialized (zeros)": ([UNINIT, DATA_CHUNK, UNINIT],
                              {3: (0.0, [0, 2], []), 2: (None, [], [0, 2])}),
    "zeros and uninitialized": ([ZERO, UNINIT, DATA_CHUNK],
                                {3: (0.0, [0, 1], []), 2: (None, [], [0, 1])}),
    "NaN": ([NAN, DATA_CHUNK, NAN], {3: ("NaN", [0, 2], []), 2: ("NaN", [0, 2], [])}),
    "mixed, most NaN": ([NAN, ZERO, NAN, DATA_CHUNK, NAN, UNINIT],
                        {3: ("NaN", [0, 2, 4], [1, 5]), 2: ("NaN", [0, 2, 4], [1, 5])}),
    "mixed, a tie: the first met": ([ZERO, NAN, NAN, UNINIT],
                                    {3: (0.0, [0, 3], [1, 2]), 2: ("NaN", [1, 2], [0, 3])}),
}  # fmt: skip


@pytest.mark.filterwarnings("ignore:Numcodecs codecs are not in the Zarr version 3")
@pytest.mark.parametrize("case", list(SPECIAL_CASES))
def test_special_chunks_of_the_fill_value_have_no_key(tmp_path, case):
    chunks, expect = SPECIAL_CASES[case]
    path = special_frame(tmp_path / "s.b2frame", chunks)
    expected = bloscpack.load(path)
    for zarr_format, codec in ((2, "stock"), (2, "bloscpack"), (3, "stock"), (3, "bloscpack")):
        fill, filled, held = expect[zarr_format]
        refs = bloscpack.to_references(path, codec=codec, zarr_format=zarr_format)
        meta = "data/.zarray" if zarr_format == 2 else "data/zarr.json"
        assert json.loads(refs["refs"][meta])["fill_value"] == fill
        prefix = "data/" if zarr_format == 2 else "data/c/"
        assert sorted(inlined(refs)) == [f"{prefix}{i}" for i in held]
        keys = [key for key in refs["refs"] if key.startswith(prefix) and "." not in key]
        assert sorted(keys) == [f"{prefix}{i}" for i in range(len(chunks)) if i not in filled]
        assert refs["bloscpack"]["filled"] == len(filled)
        got = zarr.open_array("reference://", storage_options={"fo": refs}, path="data",
                              mode="r", zarr_format=zarr_format)[...]  # fmt: skip
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


def test_a_special_chunk_of_another_dtype_is_inlined(tmp_path):
    """NaN entries of a frame of int64 items decode to one integer (NaN's bits), the fill
    value; of a frame of bytes, to no one repeated item: inlined."""
    path = special_frame(tmp_path / "i.b2frame", [NAN, DATA_CHUNK], dtype="<i8")
    refs = bloscpack.to_references(path, zarr_format=3)
    nan_bits = int(np.array(np.nan).view("<i8"))
    assert json.loads(refs["refs"]["data/zarr.json"])["fill_value"] == nan_bits
    refs = bloscpack.to_references(path)  # format 2: only NaN is a fill value
    assert json.loads(refs["refs"]["data/.zarray"])["fill_value"] is None
    assert inlined(refs) == ["data/0"]
    assert zarr_arrays(refs)["data"].tobytes() == bloscpack.load(path).tobytes()
    path = DATA / "blosc2" / "frames" / "fill_nan_f64.b2frame"
    refs = bloscpack.to_references(path)
    assert json.loads(refs["refs"]["data/.zarray"])["fill_value"] is None
    assert inlined(refs) == ["data/0", "data/1", "data/2"]
    assert zarr_arrays(refs)["data"].tobytes() == bloscpack.load(path).tobytes()


@pytest.mark.filterwarnings("ignore:Numcodecs codecs are not in the Zarr version 3")
@pytest.mark.parametrize("make", ["zeros", "uninit", "mixed"])
def test_ndarrays_of_special_chunks_python_blosc2_wrote(tmp_path, make):
    path = str(tmp_path / "z.b2nd")
    options = {"chunks": (10, 6), "blocks": (5, 6), "urlpath": path, "mode": "w"}
    if make == "mixed":
        array = blosc2.full((95, 6), 7.5, dtype="<f8", **options)
        array[0:10], array[20:40], array[40:50] = np.arange(60).reshape(10, 6), 0, np.nan
    else:
        getattr(blosc2, make)((95, 6), dtype="<f8", **options)
    special = 2 if make == "mixed" else 10  # chunks of zeros
    expected = bloscpack.load(path).tobytes()
    refs = bloscpack.to_references(path, zarr_format=3)
    assert json.loads(refs["refs"]["data/zarr.json"])["fill_value"] == 0.0
    assert refs["bloscpack"]["filled"] == special and inlined(refs) == []
    got = zarr.open_array("reference://", storage_options={"fo": refs}, path="data", mode="r",
                          zarr_format=3)[...]  # fmt: skip
    assert got.tobytes() == expected
    refs = bloscpack.to_references(path)  # format 2: zeros are no fill value, but inline
    assert json.loads(refs["refs"]["data/.zarray"])["fill_value"] is None
    assert refs["bloscpack"]["filled"] == 0 and len(inlined(refs)) == special
    assert zarr_arrays(refs)["data"].tobytes() == expected
    # xarray, which masks a format 2 fill value as missing by default, reads both as stored
    for zarr_format in (2, 3):
        refs = bloscpack.to_references(path, zarr_format=zarr_format)
        dataset = xr.open_dataset("reference://", engine="zarr", backend_kwargs={
            "consolidated": False, "storage_options": {"fo": refs}})  # fmt: skip
        assert dataset["data"].values.tobytes() == expected


#: Arrays of complex, datetime64 and timedelta64 items with special chunks.
OTHER_KINDS = ["<c8", "<c16", "<M8[ns]", "<m8[s]"]


def special_array(folder: Path, source: str, dtype: str) -> tuple[Path, list[int]]:
    """A container of ``dtype`` with special chunks (no bytes of a file) and the numbers of
    those chunks: a b2nd python-blosc2 makes with ``zeros`` or ``empty`` (uninitialized,
    read as zeros) and writes into; a frame of special entries of zeros and uninitialized
    items, or of NaN (of 8-byte items: a complex64 item of zero and a NaN of float32 of
    another payload than NaN's, a complex128 item NaN+NaNj, a datetime64 or timedelta64
    item of NaN's bits)."""
    data = np.arange(800 // np.dtype(dtype).itemsize).astype(dtype)
    if source.startswith("b2nd"):
        path = folder / "s.b2nd"
        make = blosc2.zeros if source == "b2nd zeros" else blosc2.empty
        array = make((35,), dtype=dtype, chunks=(10,), blocks=(5,), urlpath=str(path), mode="w")
        array[10:20] = np.arange(1, 11).astype(dtype)
        return path, [0, 2, 3]
    if source == "frame zeros":
        return special_frame(folder / "s.b2frame", [data, ZERO, UNINIT, data], dtype), [1, 2]
    return special_frame(folder / "s.b2frame", [NAN, data, NAN, NAN], dtype), [0, 2, 3]


#: What zarr format 2 inlines: complex zeros, which xarray reads as missing data as a fill
#: value, and NaN of another payload than NaN's, which no fill value of format 2 gives.
FORMAT_2_INLINES = {("<c8", "b2nd zeros"), ("<c8", "b2nd empty"), ("<c8", "frame zeros"),
                    ("<c16", "b2nd zeros"), ("<c16", "b2nd empty"), ("<c16", "frame zeros"),
                    ("<c8", "frame NaN")}  # fmt: skip


@pytest.mark.filterwarnings("ignore:Numcodecs codecs are not in the Zarr version 3")
@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("source", ["b2nd zeros", "b2nd empty", "frame zeros", "frame NaN"])
@pytest.mark.parametrize("dtype", OTHER_KINDS)
def test_special_chunks_of_complex_and_datetime_arrays(tmp_path, dtype, source, zarr_format):
    """Special chunks of complex, datetime64 and timedelta64 arrays are left to the fill value
    wherever zarr and xarray read it exactly: in format 3 every one, in format 2 a NaN and
    any datetime64 or timedelta64 (which xarray never reads as missing data); else inlined."""
    path, specials = special_array(tmp_path, source, dtype)
    expected = bloscpack.load(path)
    assert expected.dtype == np.dtype(dtype)
    refs = bloscpack.to_references(path, zarr_format=zarr_format)
    prefix = "data/" if zarr_format == 2 else "data/c/"
    held = zarr_format == 2 and (dtype, source) in FORMAT_2_INLINES
    assert sorted(inlined(refs)) == ([f"{prefix}{i}" for i in specials] if held else [])
    assert refs["bloscpack"]["filled"] == (0 if held else len(specials))
    got = zarr.open_array("reference://", storage_options={"fo": refs}, path="data", mode="r",
                          zarr_format=zarr_format)[...]  # fmt: skip
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
    dataset = xr.open_dataset("reference://", engine="zarr", backend_kwargs={
        "consolidated": False, "storage_options": {"fo": refs}})  # fmt: skip
    values = dataset["data"].values
    assert values.dtype == expected.dtype and values.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("dtype", "bits", "fill"), [
    ("<f4", "0000c0ff", "0xffc00000"), ("<f8", "000000000000f87f", "NaN"),
    ("<f8", "010000000000f87f", "0x7ff8000000000001"), ("<f8", "000000000000f0ff", "-Infinity"),
    ("<c8", "000000000000f87f", [0.0, "0x7ff80000"]), (">c16", "3ff0" + "0" * 28, [1.0, 0.0]),
    ("<M8[ns]", "0000000000000080", -(2**63)), ("<m8[D]", "0500000000000000", 5),
    (">f2", "7e01", None),  # (zarr reads a float16 through a float64, which drops the payload)
])  # fmt: skip
def test_format_3_fill_values_give_the_items_bits(dtype, bits, fill):
    """The zarr format 3 JSON of a fill value is one zarr reads as the same bits: a NaN of
    another payload than NaN's as the hex of its bits; None where no JSON does."""
    from bloscpack.references import _json_fill

    item = np.frombuffer(bytes.fromhex(bits), dtype)
    assert _json_fill(item.tobytes(), item.dtype, 3) == fill
    if fill is not None:
        data_type = zarr.create_array(zarr.storage.MemoryStore(), shape=(1,), dtype=item.dtype,
                                      zarr_format=3).metadata.data_type  # fmt: skip
        read = data_type.from_json_scalar(fill, zarr_format=3)
        assert np.array(read, item.dtype).tobytes() == item.tobytes()


def test_ndarrays_python_blosc2_wrote(tmp_path):
    path = tmp_path / "peer.b2nd"
    blosc2.asarray(ARRAY, chunks=(1000, 3), blocks=(500, 3), urlpath=str(path), mode="w")
    refs = bloscpack.to_references(path)
    assert inlined(refs) == []
    assert_same(zarr_arrays(refs)["data"], ARRAY)


# --- what is refused ----------------------------------------------------------------------


def refusal(path: Path, message: str, **options) -> None:
    """``to_references(path, **options)`` refuses ``path`` with ``message`` (a pattern)."""
    with pytest.raises(UnsupportedError, match=f"^{re.escape(str(path))}: {message}$"):
        bloscpack.to_references(path, **options)


def test_b2nd_chunks_stored_block_by_block_are_refused():
    refusal(DATA / "b2nd" / "f2d_float64.b2nd", re.escape(
        "its chunks of (5, 4) hold blocks of (2, 3) one after another, not in C order; byte"
        " range references need blocks that span every axis of a chunk but the first and"
        " divide the first"))  # fmt: skip


B2ND_BLOCK_MAJOR = ["f2d_float64.b2nd", "i3d_int16.b2nd", "sparse_float64.b2nd",
                    "many_chunks_int32.b2nd", "full7_f8.b2nd", "zeros_f8.b2nd"]  # fmt: skip


@pytest.mark.filterwarnings("ignore:Numcodecs codecs are not in the Zarr version 3")
@pytest.mark.parametrize("name", B2ND_BLOCK_MAJOR)
def test_b2nd_blocks_one_after_another_are_put_in_c_order_by_the_blocks_codec(name):
    path = DATA / "b2nd" / name
    refs = bloscpack.to_references(path, codec="bloscpack")
    expected = bloscpack.load(path)
    assert_same(zarr_arrays(refs)["data"], expected)
    array = blosc2.open(str(path))
    in_order = array.blocks[1:] == array.chunks[1:] and not array.chunks[0] % array.blocks[0]
    filters = json.loads(refs["refs"]["data/.zarray"])["filters"]
    reordered = [] if in_order else ["bloscpack_blocks"]
    assert [f["id"] for f in filters] == ["bloscpack_pad", *reordered]
    # zarr format 3: the same filters as codecs, before bloscpack_blosc2
    refs = bloscpack.to_references(path, codec="bloscpack", zarr_format=3)
    codecs = [codec["name"] for codec in json.loads(refs["refs"]["data/zarr.json"])["codecs"]]
    assert codecs == ["bytes", *(f"numcodecs.{f['id']}" for f in filters),
                      "numcodecs.bloscpack_blosc2"]  # fmt: skip
    opened = zarr.open_array("reference://", storage_options={"fo": refs}, path="data",
                             mode="r", zarr_format=3)  # fmt: skip
    assert_same(opened[...], expected)


def test_b2nd_blocks_python_blosc2_wrote_by_default_or_across_rows(tmp_path):
    """Default blocks depend on the machine: whichever they are, the values are load's."""
    array = np.arange(600 * 700, dtype="<f4").reshape(600, 700) / 3
    blosc2.asarray(array, urlpath=str(tmp_path / "d.b2nd"), mode="w")
    blosc2.asarray(array, chunks=(200, 300), blocks=(50, 70), urlpath=str(tmp_path / "p.b2nd"),
                   mode="w")  # fmt: skip
    for name in ("d.b2nd", "p.b2nd"):
        refs = bloscpack.to_references(tmp_path / name, codec="bloscpack")
        assert inlined(refs) == []
        assert_same(zarr_arrays(refs)["data"], array)
    zarray = json.loads(refs["refs"]["data/.zarray"])
    assert zarray["filters"][1] == {"id": "bloscpack_blocks", "chunks": [200, 300],
                                    "blocks": [50, 70], "itemsize": 4}  # fmt: skip


def test_the_blocks_codec_is_the_b2nd_layout_both_ways():
    """Chunk (5, 4) of blocks (2, 3), padded to (6, 6): blocks in C order, items in each."""
    from bloscpack.zarr_codecs import Blocks

    codec = numcodecs.get_codec({"id": "bloscpack_blocks", "chunks": [5, 4], "blocks": [2, 3],
                                 "itemsize": 1})  # fmt: skip
    assert isinstance(codec, Blocks)
    chunk = np.arange(1, 21, dtype="u1").reshape(5, 4)
    stored = bytes(codec.encode(chunk))
    assert stored[:12] == bytes([1, 2, 3, 5, 6, 7, 4, 0, 0, 8, 0, 0])
    assert len(stored) == 36 and bytes(codec.decode(stored)) == chunk.tobytes()
    with pytest.raises(ValueError, match="^bloscpack_blocks: 35 bytes decoded, the blocks hold"
                       " 36$"):  # fmt: skip
        codec.decode(stored[:35])


def test_the_blosc2_codec_decodes_the_chunks_c_blosc2_wrote():
    """Any stored Blosc2 chunk (here a frame's, with a zstd dictionary) decodes; encoding
    makes one Blosc2 chunk that decodes back."""
    from bloscpack.zarr_codecs import Blosc2

    codec = numcodecs.get_codec({"id": "bloscpack_blosc2", "cname": "lz4", "clevel": 5,
                                 "shuffle": "bitshuffle", "typesize": 8})  # fmt: skip
    assert isinstance(codec, Blosc2)
    path = DATA / "blosc2" / "frames" / "dict_zstd.b2frame"
    with registry.open_reader(str(path), "b2frame") as reader:
        stored, expected = bytes(reader.stored_chunk(0)), bytes(reader.read_chunk(0))
    assert bytes(codec.decode(stored)) == expected
    encoded = codec.encode(np.frombuffer(expected, np.uint8))
    assert blosc2.get_cbuffer_sizes(encoded)[0] == len(expected)
    assert bytes(codec.decode(encoded)) == expected
    with pytest.raises(ValueError, match="^bloscpack_blosc2: not a Blosc2 chunk"):
        codec.decode(b"not a chunk at all, not at all")
    with pytest.raises(ValueError, match="^bloscpack_blosc2: no codec 'nope' or shuffle"):
        Blosc2(cname="nope")


def test_snappy_chunks_are_refused():
    folder = DATA / "snappy" / "bcolz-zipline-1.13.0_cblosc-1.21.7dev_snappy-1.1.9" / "bcolz"
    refusal(
        folder / "bcr01_i4_arange100000_cl16384",
        "chunk 0 is compressed with snappy, which the zarr codecs do not decode",
    )
    refusal(folder / "bcr03_ctable_i8_f4_5000", "column 'a': chunk 0 is compressed with snappy,"
            " which the zarr codecs do not decode")  # fmt: skip


@pytest.mark.parametrize(("name", "message"), [
    ("bcolz/ca_object", "object carray: its chunks are pickled Python objects, which bloscpack"
                        " never unpickles"),
    ("bloscpack/nd_nested.blp", "a structured dtype whose field 'b' is itself structured or an"
                                " array cannot be referenced \\(zarr reads none\\)"),
    ("bloscpack/nd_aligned_padded.blp", "a structured dtype with padding \\(aligned or with"
                                        " offsets\\) cannot be referenced \\(zarr reads none\\)"),
    ("blosc2/frames/varlen_chunksize0.b2frame", "chunks of different sizes cannot be referenced"),
    ("blosc2/chunks/m_lz4_shuffle.chunk", "the chunks of a one Blosc chunk cannot be referenced"
                                          " by byte range \\(format 'chunk' does not locate"
                                          " them\\)"),
])  # fmt: skip
def test_containers_no_reference_describes_are_refused(name, message):
    refusal(DATA / name, message)


def test_options_other_than_the_implemented_ones_are_refused(tmp_path):
    path = tmp_path / "a.blp"
    bloscpack.save(ARRAY, path)
    for option, message in [
        ({"zarr_format": 4}, "zarr_format=4: references are zarr format 2 or 3"),
        ({"inline": "all"}, "inline='all': only 'leftover' (a short last chunk) is inlined"),
        ({"codec": "own"}, "codec='own': the codecs are 'stock' or 'bloscpack'"),
    ]:
        with pytest.raises(ArgumentError, match=f"^{re.escape(message)}$"):
            bloscpack.to_references(path, **option)
    with pytest.raises(FileNotFound, match=f"^{re.escape(str(tmp_path))}/none.blp: no such file"):
        bloscpack.to_references(tmp_path / "none.blp")


# --- blpk refs ----------------------------------------------------------------------------


def blpk(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bloscpack", *args], capture_output=True, text=True, cwd=cwd,
        timeout=120,
    )  # fmt: skip


def test_blpk_refs_writes_the_references_or_prints_them(tmp_path):
    bloscpack.save(ARRAY, tmp_path / "a.bcolz", chunklen=1000)
    expected = bloscpack.to_references(tmp_path / "a.bcolz")
    proc = blpk("refs", "a.bcolz", "-o", "refs.json", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "blpk: a.bcolz -> refs.json: 11 chunks referenced, 1 of them inlined\n"
    assert json.loads((tmp_path / "refs.json").read_text()) == expected
    again = blpk("refs", "a.bcolz", "-o", "refs.json", cwd=tmp_path)
    assert (again.returncode, again.stderr) == (1, "blpk: error: output file 'refs.json' exists!\n")
    printed = blpk("refs", "a.bcolz", cwd=tmp_path)
    assert printed.returncode == 0 and json.loads(printed.stdout) == expected


def test_blpk_refs_codec_bloscpack(tmp_path):
    bloscpack.save(ARRAY, tmp_path / "a.bcolz", chunklen=1000)
    proc = blpk("refs", "a.bcolz", "-o", "refs.json", "--codec", "bloscpack", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "blpk: a.bcolz -> refs.json: 11 chunks referenced, 0 of them inlined\n"
    written = json.loads((tmp_path / "refs.json").read_text())
    assert written == bloscpack.to_references(tmp_path / "a.bcolz", codec="bloscpack")
    assert_same(zarr_arrays(written)["data"], ARRAY)


def test_blpk_refs_counts_the_chunks_read_as_the_fill_value(tmp_path):
    special_frame(tmp_path / "s.b2frame", [ZERO, NAN, ZERO, DATA_CHUNK])
    proc = blpk("refs", "s.b2frame", "-o", "refs.json", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == ("blpk: s.b2frame -> refs.json: 3 chunks referenced, 2 of them inlined,"
                           " 1 special chunk read as the fill value\n")  # fmt: skip
    special_frame(tmp_path / "n.b2frame", [NAN, NAN, ZERO, DATA_CHUNK])
    proc = blpk("refs", "n.b2frame", "-o", "n.json", cwd=tmp_path)
    assert proc.stdout == ("blpk: n.b2frame -> n.json: 2 chunks referenced, 1 of them inlined,"
                           " 2 special chunks read as the fill value\n")  # fmt: skip
    proc = blpk("refs", "s.b2frame", "-o", "s3.json", "--zarr-format", "3", cwd=tmp_path)
    assert proc.stdout == ("blpk: s.b2frame -> s3.json: 2 chunks referenced, 1 of them inlined,"
                           " 2 special chunks read as the fill value\n")  # fmt: skip


def test_blpk_refs_names_what_it_refuses(tmp_path):
    proc = blpk("refs", str(DATA / "bcolz" / "ca_object"), cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == (
        f"blpk: error: {DATA / 'bcolz' / 'ca_object'}: object carray: its chunks are pickled"
        " Python objects, which bloscpack never unpickles\n"
    )
    assert not list(tmp_path.iterdir())


def test_blpk_refs_zarr_format_3(tmp_path):
    bloscpack.save(ARRAY, tmp_path / "a.blp", chunk_size=1000 * 3 * 8)
    proc = blpk("refs", "a.blp", "--zarr-format", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == bloscpack.to_references(tmp_path / "a.blp", zarr_format=3)


@pytest.mark.parametrize(("module", "name", "said"), [
    ("imagecodecs.numcodecs", "a.b2frame", "Blosc2 chunks are read by imagecodecs' codec"),
    ("numcodecs", "a.blp", "Blosc1 chunks are read by numcodecs' codec"),
])  # fmt: skip
def test_a_missing_codec_package_names_the_extra(tmp_path, monkeypatch, module, name, said):
    bloscpack.save(ARRAY, tmp_path / name, chunk_size=1000 * 3 * 8)
    monkeypatch.setitem(sys.modules, module, None)  # (an import of it fails)
    message = f"{said}, which is not installed (pip install 'bloscpack[virtual]')"
    refusal(tmp_path / name, re.escape(message))


@pytest.mark.parametrize("module", ["zarr.registry", "numcodecs.abc"])
def test_the_bloscpack_codecs_without_their_packages_name_the_extra(tmp_path, monkeypatch, module):
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    monkeypatch.delitem(sys.modules, "bloscpack.zarr_codecs", raising=False)
    monkeypatch.delattr(bloscpack, "zarr_codecs", raising=False)
    monkeypatch.setitem(sys.modules, module, None)  # (an import of it fails)
    message = f"codec='bloscpack' needs {module.split('.')[0]} (pip install 'bloscpack[virtual]')"
    refusal(tmp_path / "a.blp", re.escape(message), codec="bloscpack")


def test_the_entry_points_name_the_codecs():
    """numcodecs and zarr 3 find the codecs by the entry points pyproject.toml declares."""
    import importlib
    import tomllib

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    points = project["entry-points"]

    def target(value: str):
        module, name = value.split(":")
        return getattr(importlib.import_module(module), name)

    ids = {name: target(value).codec_id for name, value in points["numcodecs.codecs"].items()}
    assert ids == {"bloscpack_pad": "bloscpack_pad", "bloscpack_blocks": "bloscpack_blocks",
                   "bloscpack_blosc2": "bloscpack_blosc2"}  # fmt: skip
    for name, value in points["zarr.codecs"].items():
        assert zarr.registry.get_codec_class(name) is target(value)
    assert sorted(points["zarr.codecs"]) == [f"numcodecs.{name}" for name in sorted(ids)]


# --- staleness ----------------------------------------------------------------------------


def test_references_record_every_file_of_the_container(tmp_path):
    path = tmp_path / "a.bcolz"
    bloscpack.save(ARRAY, path, chunklen=1000)
    record = bloscpack.to_references(path)["bloscpack"]
    files = sorted(str(p) for p in path.rglob("*") if p.is_file())
    assert record["source"] == str(path) and sorted(record["files"]) == files
    status = (path / "data" / "__0.blp").stat()
    stamp = record["files"][str(path / "data" / "__0.blp")]
    assert stamp["size"] == status.st_size
    assert stamp["mtime"].endswith("+00:00")
    assert bloscpack.verify_references(bloscpack.to_references(path)) == {
        "ok": True, "source": str(path), "files": len(files), "changed": {}}  # fmt: skip


def _append(path: Path) -> None:
    with open(path, "ab") as fh:
        fh.write(b"\0")


def _touch(path: Path) -> None:
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 10**9))


def _rewrite(path: Path) -> None:
    status, data = path.stat(), path.read_bytes()
    path.write_bytes(data[:8] + bytes([data[8] ^ 1]) + data[9:])
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 2 * 10**9))


@pytest.mark.parametrize("change", [_append, _touch, _rewrite])
@pytest.mark.parametrize("case", ["blp", "b2nd", "bcolz"])
def test_a_changed_file_is_reported_with_what_changed(tmp_path, case, change):
    name, options = OWN[case]
    path = tmp_path / name
    bloscpack.save(ARRAY, path, **options)
    refs = bloscpack.to_references(path)
    bloscpack.write_references(refs, tmp_path / "refs.json")
    file = path / "data" / "__0.blp" if case == "bcolz" else path
    before = refs["bloscpack"]["files"][str(file)]
    change(file)
    report = bloscpack.verify_references(tmp_path / "refs.json")
    assert report == bloscpack.verify_references(refs)
    assert not report["ok"] and list(report["changed"]) == [str(file)]
    what = report["changed"][str(file)]
    if change is _append:
        assert list(what) == ["size", "mtime"]
        assert what["size"] == [before["size"], before["size"] + 1]
    else:  # a touch, a rewrite of the same size
        assert list(what) == ["mtime"]
    assert what["mtime"][0] == before["mtime"] and what["mtime"][1] > before["mtime"]


def test_files_gone_or_new_in_the_container_are_reported(tmp_path):
    path = tmp_path / "a.bcolz"
    bloscpack.save(ARRAY, path, chunklen=1000)
    refs = bloscpack.to_references(path)
    (path / "data" / "__3.blp").unlink()
    (path / "data" / "__99.blp").write_bytes(b"")
    assert bloscpack.verify_references(refs)["changed"] == {
        str(path / "data" / "__3.blp"): {"exists": [True, False]},
        str(path / "data" / "__99.blp"): {"exists": [False, True]},
    }


def test_references_without_a_record_are_refused(tmp_path):
    path = tmp_path / "a.blp"
    bloscpack.save(ARRAY, path)
    refs = bloscpack.to_references(path)
    del refs["bloscpack"]
    with pytest.raises(ArgumentError, match=re.escape(
            "references: no record of the referenced files (references made by"
            " bloscpack.to_references hold one)")):  # fmt: skip
        bloscpack.verify_references(refs)
    (tmp_path / "bad.json").write_text("[")
    with pytest.raises(ArgumentError, match=f"^{re.escape(str(tmp_path))}/bad.json: not JSON"):
        bloscpack.verify_references(tmp_path / "bad.json")


@pytest.mark.parametrize("case", ["blp", "bcolz"])
def test_stale_references_at_urls(s3_write_server, case):
    name, options = OWN[case]
    url, so = s3_write_server.url(f"stale-{name}"), s3_write_server.storage_options
    bloscpack.save(ARRAY, url, storage_options=so, **options)
    refs = bloscpack.to_references(url, storage_options=so)
    file = f"{url}/data/__0.blp" if case == "bcolz" else url
    stamp = refs["bloscpack"]["files"][file]
    assert set(stamp) == {"size", "mtime", "etag"} and stamp["etag"]
    assert bloscpack.verify_references(refs, storage_options=so)["ok"]
    fs = s3_write_server.filesystem()
    key = file.removeprefix("s3://")
    data = fs.cat_file(key)
    fs.pipe_file(key, data[:8] + bytes([data[8] ^ 1]) + data[9:])
    fs.invalidate_cache()
    report = bloscpack.verify_references(refs, storage_options=so)
    assert not report["ok"] and list(report["changed"]) == [file]
    assert "etag" in report["changed"][file] and "size" not in report["changed"][file]


def test_blpk_refs_verify(tmp_path):
    bloscpack.save(ARRAY, tmp_path / "a.blp", chunk_size=1000 * 3 * 8)
    assert blpk("refs", "a.blp", "-o", "refs.json", cwd=tmp_path).returncode == 0
    proc = blpk("refs", "--verify", "refs.json", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"blpk: refs.json: ok ({tmp_path / 'a.blp'}: 1 file unchanged)\n"
    before = bloscpack.to_references(tmp_path / "a.blp")["bloscpack"]["files"]
    _append(tmp_path / "a.blp")
    now = bloscpack.to_references(tmp_path / "a.blp")["bloscpack"]["files"]
    (old,), (new,) = before.values(), now.values()
    proc = blpk("refs", "--verify", "refs.json", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (1, "")
    assert proc.stdout == (
        f"blpk: refs.json: STALE ({tmp_path / 'a.blp'}: 1 of 1 file changed)\n"
        f"blpk:   {tmp_path / 'a.blp'}: size {old['size']} -> {new['size']}, mtime"
        f" {old['mtime']} -> {new['mtime']}\n"
    )
    said = "blpk: error: --verify checks references: -o, --zarr-format and --codec do not apply\n"
    for extra in (["-o", "x.json"], ["--codec", "bloscpack"]):
        proc = blpk("refs", "--verify", "refs.json", *extra, cwd=tmp_path)
        assert (proc.returncode, proc.stderr) == (1, said)


def test_a_container_gone_from_its_url_is_reported(s3_write_server):
    url, so = s3_write_server.url("gone.blp"), s3_write_server.storage_options
    bloscpack.save(ARRAY, url, storage_options=so)
    refs = bloscpack.to_references(url, storage_options=so)
    s3_write_server.filesystem().rm(url.removeprefix("s3://"))
    gone = {url: {"exists": [True, False]}}
    assert bloscpack.verify_references(refs, storage_options=so) == {
        "ok": False, "source": url, "files": 1, "changed": gone}  # fmt: skip


# --- parquet references -------------------------------------------------------------------


def parquet_arrays(path: Path, **options) -> dict[str, np.ndarray]:
    """Every array of the parquet references at ``path``, read by zarr through fsspec's
    reference filesystem (``fo``: the directory; fastparquet reads it), and the same read
    through fsspec's ``LazyReferenceMapper`` with pyarrow, which must agree."""
    pytest.importorskip("fastparquet")
    from fsspec.implementations.local import LocalFileSystem
    from fsspec.implementations.reference import LazyReferenceMapper

    names = [key[: -len("/.zarray")]
             for key in json.loads((path / ".zmetadata").read_text())["metadata"]
             if key.endswith("/.zarray")]  # fmt: skip
    mapper = LazyReferenceMapper(str(path), LocalFileSystem(), engine="pyarrow")
    got = {}
    for name in names:
        arrays = [zarr.open_array("reference://", storage_options={"fo": fo, **options},
                                  path=name, mode="r", zarr_format=2)[...]
                  for fo in (str(path), mapper)]  # fmt: skip
        assert arrays[0].tobytes() == arrays[1].tobytes()
        got[name] = arrays[0]
    return got


@pytest.mark.filterwarnings("ignore:The 'fastparquet' engine is deprecated")
@pytest.mark.parametrize("case", list(OWN))
def test_parquet_references_read_what_load_reads(tmp_path, case):
    name, options = OWN[case]
    path = tmp_path / name
    bloscpack.save(ARRAY, path, **options)
    refs = bloscpack.to_references(path, codec="bloscpack")
    bloscpack.write_references(refs, tmp_path / "refs.parq", record_size=4)
    assert sorted(os.listdir(tmp_path / "refs.parq")) == [".zmetadata", "bloscpack.json", "data"]
    assert sorted(os.listdir(tmp_path / "refs.parq" / "data")) == [
        "refs.0.parq", "refs.1.parq", "refs.2.parq"]  # fmt: skip
    assert_same(parquet_arrays(tmp_path / "refs.parq", remote_protocol="file")["data"], ARRAY)
    fo = {"fo": str(tmp_path / "refs.parq"), "remote_protocol": "file"}
    dataset = xr.open_dataset("reference://", engine="zarr", backend_kwargs={
        "consolidated": False, "storage_options": fo})  # fmt: skip
    np.testing.assert_array_equal(dataset["data"].values, ARRAY)
    assert bloscpack.verify_references(tmp_path / "refs.parq")["ok"] is True


@pytest.mark.filterwarnings("ignore:The 'fastparquet' engine is deprecated")
def test_parquet_references_of_inlined_and_special_chunks_and_tables(tmp_path):
    """A chunk left to the fill value is held inline in parquet, as the fill value compressed."""
    path = special_frame(tmp_path / "s.b2frame", [NAN, ZERO, NAN, DATA_CHUNK, NAN])
    for codec in ("stock", "bloscpack"):
        refs = bloscpack.to_references(path, codec=codec)
        assert refs["bloscpack"]["filled"] == 3 and inlined(refs) == ["data/1"]
        bloscpack.write_references(refs, tmp_path / "s.parq")
        got = parquet_arrays(tmp_path / "s.parq", remote_protocol="file")["data"]
        assert got.tobytes() == bloscpack.load(path).tobytes()
    table = DATA / "bcolz" / "ct_listcols_zstd_chunklen2"
    bloscpack.write_references(bloscpack.to_references(table), tmp_path / "t.parquet")
    got = parquet_arrays(tmp_path / "t.parquet", remote_protocol="file")
    expected = bloscpack.load(table)
    assert list(got) == list(expected.dtype.names)
    for column in expected.dtype.names:
        assert_same(got[column], expected[column])


def test_parquet_references_refuse_what_they_cannot_hold(tmp_path):
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    v3 = bloscpack.to_references(tmp_path / "a.blp", zarr_format=3)
    out = tmp_path / "v3.parq"
    with pytest.raises(ArgumentError, match=f"^{re.escape(str(out))}: parquet references hold"
                       " zarr format 2 only"):  # fmt: skip
        bloscpack.write_references(v3, out)
    with pytest.raises(ArgumentError, match=r": record_size=0: at least 1$"):
        bloscpack.write_references(bloscpack.to_references(tmp_path / "a.blp"), out, record_size=0)
    (tmp_path / "other.parq").mkdir()
    (tmp_path / "other.parq" / "notes.txt").write_text("mine")
    with pytest.raises(BloscpackError, match=f"^{re.escape(str(tmp_path / 'other.parq'))}: is a"
                       " directory that is not parquet references; not replacing it$"):  # fmt: skip
        bloscpack.write_references(bloscpack.to_references(tmp_path / "a.blp"),
                                   tmp_path / "other.parq")  # fmt: skip
    assert os.listdir(tmp_path / "other.parq") == ["notes.txt"]
    assert not out.exists()


@pytest.mark.filterwarnings("ignore:The 'fastparquet' engine is deprecated")
def test_blpk_refs_writes_parquet_references(tmp_path):
    bloscpack.save(ARRAY, tmp_path / "a.blp", chunk_size=1000 * 3 * 8)
    proc = blpk("refs", "a.blp", "-o", "refs.parq", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "blpk: a.blp -> refs.parq: 11 chunks referenced, 1 of them inlined\n"
    assert_same(parquet_arrays(tmp_path / "refs.parq", remote_protocol="file")["data"], ARRAY)
    proc = blpk("refs", "a.blp", "-o", "refs.parq", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (1, "blpk: error: output 'refs.parq' exists!\n")
    proc = blpk("refs", "a.blp", "-o", "refs.parq", "--codec", "bloscpack", "-f", cwd=tmp_path)
    assert proc.stdout == "blpk: a.blp -> refs.parq: 11 chunks referenced, 0 of them inlined\n"
    proc = blpk("refs", "--verify", "refs.parq", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == f"blpk: refs.parq: ok ({tmp_path / 'a.blp'}: 1 file unchanged)\n"
