"""The Python API: bloscpack 0.16's names, signatures, defaults and return values; deprecated
aliases; atomic file writes; flat memory for file-to-file work; arrays decompressed in place;
save/load."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import tracemalloc
import warnings

import numpy as np
import pytest
from conftest import DATA

import bloscpack
from bloscpack import api, engine, errors
from bloscpack.containers.bloscpack import writer
from bloscpack.containers.bloscpack.args import BloscArgs, MetadataArgs

PUBLIC_016 = [
    "BloscArgs",
    "BloscpackArgs",
    "MetadataArgs",
    "pack_file_to_file",
    "unpack_file_from_file",
    "pack_bytes_to_file",
    "unpack_bytes_from_file",
    "pack_bytes_to_bytes",
    "unpack_bytes_from_bytes",
    "pack_ndarray_to_file",
    "pack_ndarray_to_bytes",
    "unpack_ndarray_from_file",
    "unpack_ndarray_from_bytes",
    "pack_file",
    "unpack_file",
    "pack_bytes_file",
    "unpack_bytes_file",
    "pack_ndarray_file",
    "unpack_ndarray_file",
    "pack_ndarray_str",
    "unpack_ndarray_str",
]
DEPRECATED = {
    "pack_file": "pack_file_to_file",
    "unpack_file": "unpack_file_from_file",
    "pack_bytes_file": "pack_bytes_to_file",
    "unpack_bytes_file": "unpack_bytes_from_file",
    "pack_ndarray_file": "pack_ndarray_to_file",
    "unpack_ndarray_file": "unpack_ndarray_from_file",
    "pack_ndarray_str": "pack_ndarray_to_bytes",
    "unpack_ndarray_str": "unpack_ndarray_from_bytes",
}
OTHER_016 = {
    "bloscpack.headers": ["BloscpackHeader", "MetadataHeader"],
    "bloscpack.args": ["calculate_nchunks"],
}

ORACLE_SIGNATURES = """
import inspect, json, bloscpack.headers, bloscpack.args
def describe(obj):
    target = obj.__init__ if inspect.isclass(obj) else getattr(obj, '__wrapped__', obj)
    out = []
    for p in inspect.signature(target).parameters.values():
        if p.name == 'self':
            continue
        d = p.default
        out.append([p.name, 'callable:%d' % d(3) if p.default is not p.empty and callable(d)
                    else repr(d)])
    return out
names = json.loads(sys.argv[1])
result = {n: describe(getattr(bloscpack, n)) for n in names}
for module, members in json.loads(sys.argv[2]).items():
    for n in members:
        result[module + '.' + n] = describe(getattr(sys.modules[module], n))
print(json.dumps(result))
"""


def _describe(obj) -> list:
    target = obj.__init__ if inspect.isclass(obj) else inspect.unwrap(obj)
    out = []
    for p in inspect.signature(target).parameters.values():
        if p.name == "self" or p.kind == p.KEYWORD_ONLY:
            continue  # keyword-only parameters are additions
        d = p.default
        is_callable = d is not p.empty and callable(d)
        out.append([p.name, f"callable:{d(3)}" if is_callable else repr(d)])
    return out


def test_signatures_and_defaults_equal_016(bloscpack016):
    code = "import sys\n" + ORACLE_SIGNATURES
    proc = bloscpack016.run(code, json.dumps(PUBLIC_016), json.dumps(OTHER_016))
    expected = json.loads(proc.stdout)
    import importlib

    for name in PUBLIC_016:
        assert _describe(getattr(bloscpack, name)) == expected[name], name
    for module, members in OTHER_016.items():
        for name in members:
            obj = getattr(importlib.import_module(module), name)
            assert _describe(obj) == expected[f"{module}.{name}"], name


def test_016_modules_and_names_exist():
    import bloscpack.append
    import bloscpack.args
    import bloscpack.exceptions
    import bloscpack.headers

    for name in PUBLIC_016:
        assert hasattr(bloscpack, name), name
    assert bloscpack.exceptions.ChecksumMismatch is errors.ChecksumMismatch
    assert issubclass(bloscpack.exceptions.ChecksumMismatch, RuntimeError)
    assert issubclass(bloscpack.exceptions.FileNotFound, IOError)
    assert callable(bloscpack.append.append) and callable(bloscpack.append.append_fp)
    assert bloscpack.args.calculate_nchunks(10, 3) == (4, 3, 1)


@pytest.mark.parametrize("old", sorted(DEPRECATED))
def test_deprecated_aliases(old, tmp_path):
    alias, new = getattr(bloscpack, old), getattr(bloscpack, DEPRECATED[old])
    assert inspect.signature(alias) == inspect.signature(new)
    raw = api.pack_ndarray_to_bytes(np.arange(5))
    path = tmp_path / "x.blp"
    path.write_bytes(raw)
    args = {
        "pack_file": (path, tmp_path / "y.blp"),
        "unpack_file": (path, tmp_path / "y.bin"),
        "pack_bytes_file": (b"abc", tmp_path / "y.blp"),
        "unpack_bytes_file": (path,),
        "pack_ndarray_file": (np.arange(5), tmp_path / "y.blp"),
        "unpack_ndarray_file": (path,),
        "pack_ndarray_str": (np.arange(5),),
        "unpack_ndarray_str": (raw,),
    }[old]
    with pytest.warns(DeprecationWarning, match=f"deprecated function {old}.*'{DEPRECATED[old]}'"):
        got = alias(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wanted = new(*args)
    if isinstance(got, np.ndarray):
        assert np.array_equal(got, wanted)
    else:
        assert got == wanted


def test_return_values(tmp_path):
    data = b"0123456789" * 1000
    source = tmp_path / "in.bin"
    source.write_bytes(data)
    assert api.pack_file_to_file(source, tmp_path / "a.blp") is None
    assert api.unpack_file_from_file(tmp_path / "a.blp", tmp_path / "a.bin") is None
    assert (tmp_path / "a.bin").read_bytes() == data
    assert api.pack_bytes_to_file(data, tmp_path / "b.blp", metadata={"m": 1}) is None
    assert api.unpack_file_from_file(tmp_path / "b.blp", tmp_path / "b.bin") == {"m": 1}
    assert api.unpack_bytes_from_file(tmp_path / "b.blp") == (data, {"m": 1})
    packed = api.pack_bytes_to_bytes(data, metadata={"m": 1})
    assert isinstance(packed, bytes) and packed == (tmp_path / "b.blp").read_bytes()
    assert api.unpack_bytes_from_bytes(packed) == (data, {"m": 1})
    assert api.unpack_bytes_from_bytes(bytearray(packed)) == (data, {"m": 1})
    assert api.unpack_bytes_from_bytes(memoryview(packed)) == (data, {"m": 1})
    array = np.arange(100.0).reshape(10, 10)
    assert api.pack_ndarray_to_file(array, tmp_path / "c.blp") is None
    assert np.array_equal(api.unpack_ndarray_from_file(tmp_path / "c.blp"), array)
    assert api.pack_ndarray_to_bytes(array) == (tmp_path / "c.blp").read_bytes()
    assert np.array_equal(api.unpack_ndarray_from_bytes(api.pack_ndarray_to_bytes(array)), array)
    assert api.unpack_bytes_from_bytes(api.pack_ndarray_to_bytes(array)) == (
        array.tobytes(),
        {"dtype": "'<f8'", "shape": [10, 10], "order": "C", "container": "numpy"},
    )


def test_argument_objects_are_not_mutated():
    blosc_args = BloscArgs(typesize=1, cname="lz4")
    metadata_args = MetadataArgs()
    api.pack_ndarray_to_bytes(np.arange(10), blosc_args=blosc_args, metadata_args=metadata_args)
    assert blosc_args.typesize == 1  # 0.16 overwrote it with the item size
    assert metadata_args.meta_codec == "zlib"  # 0.16 nulled it when zlib did not help
    raw = api.pack_bytes_to_bytes(
        b"x", blosc_args={"typesize": 1, "clevel": 1, "shuffle": False, "cname": "zlib"}
    )
    assert api.unpack_bytes_from_bytes(raw) == (b"x", None)


# --- errors and atomic writes -------------------------------------------------------------


def test_failed_writes_leave_nothing_and_keep_existing_files(tmp_path, monkeypatch):
    out = tmp_path / "out.blp"
    out.write_bytes(b"precious")
    with pytest.raises(errors.NoSuchCodec):
        api.pack_bytes_to_file(b"abc" * 100, out, blosc_args=BloscArgs(cname="snappy"))
    with pytest.raises(errors.ChunkingException):
        api.pack_bytes_to_file(b"abc", out, chunk_size="3G")
    with pytest.raises(errors.MetadataSectionTooSmall):
        api.pack_bytes_to_file(
            b"abc", out, metadata={"a": 1}, metadata_args=MetadataArgs(max_meta_size=1)
        )
    real = writer.compress_chunks

    def failing(datas, args, nchunks):
        for index, chunk in enumerate(real(datas, args, nchunks)):
            if index == 2:
                raise errors.UnsupportedError("disk on fire")
            yield chunk

    monkeypatch.setattr(writer, "compress_chunks", failing)
    with pytest.raises(errors.UnsupportedError, match="disk on fire"):
        api.pack_bytes_to_file(bytes(10000), out, chunk_size=1000)
    assert out.read_bytes() == b"precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.blp"]
    with pytest.raises(errors.FileNotFound, match="does not exist"):
        api.pack_file_to_file(tmp_path / "missing", tmp_path / "x.blp")
    with pytest.raises(errors.FileNotFound):
        api.unpack_bytes_from_file(tmp_path / "missing.blp")


def test_arrays_are_validated_before_anything_is_written(tmp_path):
    out = tmp_path / "a.blp"
    with pytest.raises(errors.ObjectNumpyArrayRejection, match="Python object references"):
        api.pack_ndarray_to_file(np.array([1, "a", None], dtype=object), out)
    with pytest.raises(errors.ObjectNumpyArrayRejection):
        api.pack_ndarray_to_file(np.zeros(3, dtype=[("a", "i4"), ("b", "O")]), out)
    with pytest.raises(
        errors.ChunkSizeTypeSizeMismatch, match="1000 bytes is not divisible by the item size 3"
    ):
        api.pack_ndarray_to_file(np.zeros(2000, dtype="S3"), out, chunk_size=1000)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(errors.ObjectNumpyArrayRejection, match="StringDType"):
        api.pack_ndarray_to_bytes(np.array(["a"], dtype=np.dtypes.StringDType()))


def test_object_dtype_in_a_file_is_refused_on_read():
    metadata = {"dtype": "'|O'", "shape": [2], "order": "C", "container": "numpy"}
    forged = api.pack_bytes_to_bytes(bytes(16), metadata=metadata)
    with pytest.raises(errors.ObjectNumpyArrayRejection):
        api.unpack_ndarray_from_bytes(forged)
    for dtype, error in [
        ("'<q9'", errors.FormatError),
        ("__import__('os')", errors.FormatError),
        ("[('a', 'O')]", errors.ObjectNumpyArrayRejection),
    ]:
        forged = api.pack_bytes_to_bytes(bytes(16), metadata={**metadata, "dtype": dtype})
        with pytest.raises(error):
            api.unpack_ndarray_from_bytes(forged)


# --- performance properties ---------------------------------------------------------------


def test_file_to_file_memory_stays_flat(tmp_path):
    source = tmp_path / "big.bin"
    block = np.arange(2**17, dtype="<i8").tobytes()  # 1 MiB
    with open(source, "wb") as fh:
        for _ in range(48):
            fh.write(block)
    tracemalloc.start()
    try:
        api.pack_file_to_file(source, tmp_path / "big.blp", chunk_size="1M")
        pack_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        api.unpack_file_from_file(tmp_path / "big.blp", tmp_path / "back.bin")
        unpack_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a few chunks per thread, not the 48 MiB input
    assert pack_peak < 12 * 2**20, pack_peak
    assert unpack_peak < 12 * 2**20, unpack_peak
    assert os.path.getsize(tmp_path / "back.bin") == 48 * 2**20


def test_arrays_are_decompressed_straight_into_the_result(monkeypatch):
    array = np.arange(40000.0).reshape(200, 200).T  # F-ordered, several chunks
    raw = api.pack_ndarray_to_bytes(array, chunk_size=64000)
    destinations = []
    real = engine.decompress_into

    def spy(chunk, out, **kwargs):
        destinations.append(out)
        return real(chunk, out, **kwargs)

    monkeypatch.setattr(engine, "decompress_into", spy)
    back = api.unpack_ndarray_from_bytes(raw)
    assert np.array_equal(back, array) and back.flags.f_contiguous
    assert len(destinations) == 5
    for out in destinations:
        assert np.shares_memory(np.asarray(out), back)


# --- save / load --------------------------------------------------------------------------


def test_save_and_load(tmp_path):
    array = np.arange(1000, dtype="<i4").reshape(10, 100)
    path = tmp_path / "a.blp"
    bloscpack.save(array, path)
    back = bloscpack.load(path)
    assert back.dtype == array.dtype and np.array_equal(back, array)
    api.save_blp(array, path, codec="zstd", clevel=9, checksum="sha256", chunk_size=1000)
    assert np.array_equal(api.load_blp(path), array)
    api.save_blp(array, path, blosc_version=2, filters=["delta", "bytedelta"], codec="zstd")
    assert np.array_equal(api.load_blp(path), array)
    strings = np.array(["x" * 100] * 10, dtype="U100")
    api.save_blp(strings, path, blosc_version=2)
    assert np.array_equal(api.load_blp(path), strings)
    api.pack_bytes_to_file(b"raw bytes", path)
    assert api.load_blp(path).tobytes() == b"raw bytes"
    with pytest.raises(errors.ArgumentError, match="disagree"):
        api.save_blp(array, path, cname="lz4", codec="zstd")


def test_load_keeps_data_raw_when_user_metadata_only_looks_like_numpy():
    # cli_metadata.blp: `blpk c -m` stored {"dtype", "shape", "container": "numpy"} (no order)
    # over 200000 bytes that are not that array; load() and open() return the bytes.
    path = DATA / "bloscpack" / "cli_metadata.blp"
    loaded = bloscpack.load(path)
    assert loaded.dtype == np.uint8 and loaded.shape == (200000,)
    assert hashlib.sha256(loaded.tobytes()).hexdigest() == (
        "8c55bd8b253d2826b8fc56a81a37876f1ee444ca86370ac5b8a73750dacc2a02"
    )
    with bloscpack.open(path) as lazy:
        np.testing.assert_array_equal(lazy[:], loaded)
