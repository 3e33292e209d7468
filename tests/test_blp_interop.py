"""Interoperability with the real bloscpack 0.16, both ways: it reads every file we write (all
codecs, checksums, metadata and array cases) and gets identical data; we read what it writes;
for the same input and settings the files are byte-identical (one thread)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import bloscpack
from bloscpack import api, engine
from bloscpack.containers.bloscpack import rewrite_metadata
from bloscpack.containers.bloscpack.args import BloscArgs, BloscpackArgs, MetadataArgs
from bloscpack.containers.bloscpack.header import BloscpackHeader, MetadataHeader

CODECS = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]
CHECKSUMS = ["None", "adler32", "crc32", "md5", "sha1", "sha224", "sha256", "sha384", "sha512"]
PAYLOAD = (np.arange(30000, dtype="<i8") % 1000).tobytes() + b"tail bytes"

# Each case: (name, pack_bytes_to_file keyword arguments as plain JSON-able settings).
BYTE_CASES: list[tuple[str, dict]] = [
    *[(f"codec_{c}", {"blosc": {"cname": c}, "chunk_size": "64K"}) for c in CODECS],
    *[(f"checksum_{c}", {"pack": {"checksum": c}, "chunk_size": 50000}) for c in CHECKSUMS],
    ("noshuffle_clevel0", {"blosc": {"shuffle": False, "clevel": 0}, "chunk_size": "100K"}),
    ("typesize3_odd_chunks", {"blosc": {"typesize": 3, "clevel": 9}, "chunk_size": 1001}),
    ("no_offsets", {"pack": {"offsets": False, "checksum": "sha1"}, "chunk_size": "32K"}),
    ("max_app_chunks_3", {"pack": {"max_app_chunks": 3}, "chunk_size": "16K"}),
    ("metadata_default", {"metadata": {"name": "x", "values": list(range(50))}}),
    (
        "metadata_raw_sha512",
        {
            "metadata": {"a": [1, 2.5, None, True]},
            "meta": {
                "meta_checksum": "sha512",
                "meta_codec": "None",
                "meta_level": 0,
                "max_meta_size": 400,
            },
        },
    ),
    ("metadata_unicode_list", {"metadata": ["αß", {"k": "€"}], "meta": {"max_meta_size": 1000}}),
    ("empty", {"data": "empty"}),
    ("one_byte", {"data": "one"}),
]


def _data(settings: dict) -> bytes:
    return {"empty": b"", "one": b"x"}.get(settings.get("data", ""), PAYLOAD)


def _ours(path: Path, settings: dict) -> None:
    api.pack_bytes_to_file(
        _data(settings),
        path,
        chunk_size=settings.get("chunk_size", "1M"),
        metadata=settings.get("metadata"),
        blosc_args=BloscArgs(**settings.get("blosc", {})),
        bloscpack_args=BloscpackArgs(**settings.get("pack", {})),
        metadata_args=MetadataArgs(**settings.get("meta", {})),
    )


ORACLE_WRITE = """
import json, sys, blosc
blosc.set_nthreads(1)
cases, payload_path, out_dir = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
payload = open(payload_path, 'rb').read()
for name, s in cases:
    data = {'empty': b'', 'one': b'x'}.get(s.get('data', ''), payload)
    bloscpack.pack_bytes_to_file(
        data, out_dir + '/' + name + '.blp', chunk_size=s.get('chunk_size', '1M'),
        metadata=s.get('metadata'), blosc_args=bloscpack.BloscArgs(**s.get('blosc', {})),
        bloscpack_args=bloscpack.BloscpackArgs(**s.get('pack', {})),
        metadata_args=bloscpack.MetadataArgs(**s.get('meta', {})))
"""

ORACLE_READ = """
import json, sys, hashlib
out = {}
for path in sys.argv[1:]:
    data, metadata = bloscpack.unpack_bytes_from_file(path)
    out[path] = [hashlib.sha256(data).hexdigest(), metadata]
print(json.dumps(out))
"""


@pytest.fixture(autouse=True)
def one_thread():
    old = engine.set_nthreads(1)
    yield
    engine.set_nthreads(old)


def test_byte_files_both_ways_and_identical(bloscpack016, tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    spec = tmp_path / "cases.json"
    spec.write_text(json.dumps(BYTE_CASES))
    (tmp_path / "payload.bin").write_bytes(PAYLOAD)
    bloscpack016.run(ORACLE_WRITE, str(spec), str(tmp_path / "payload.bin"), str(theirs))
    for name, settings in BYTE_CASES:
        _ours(ours / f"{name}.blp", settings)
    paths = [str(ours / f"{name}.blp") for name, _ in BYTE_CASES]
    read_by_016 = json.loads(bloscpack016.run(ORACLE_READ, *paths).stdout)
    for name, settings in BYTE_CASES:
        mine, oracle = ours / f"{name}.blp", theirs / f"{name}.blp"
        expected = [hashlib.sha256(_data(settings)).hexdigest(), settings.get("metadata")]
        assert read_by_016[str(mine)] == expected, name
        assert api.unpack_bytes_from_file(oracle) == (_data(settings), settings.get("metadata"))
        assert mine.read_bytes() == oracle.read_bytes(), name


ORACLE_FILE_TO_FILE = """
import sys, blosc
blosc.set_nthreads(1)
bloscpack.pack_file_to_file(sys.argv[1], sys.argv[2], chunk_size='8K')
print(repr(bloscpack.unpack_file_from_file(sys.argv[3], sys.argv[4])))
"""


def test_file_to_file_both_ways(bloscpack016, tmp_path):
    source = tmp_path / "in.bin"
    source.write_bytes(PAYLOAD)
    api.pack_file_to_file(source, tmp_path / "ours.blp", chunk_size="8K")
    proc = bloscpack016.run(
        ORACLE_FILE_TO_FILE,
        str(source),
        str(tmp_path / "theirs.blp"),
        str(tmp_path / "ours.blp"),
        str(tmp_path / "back.bin"),
    )
    assert proc.stdout.strip() == "None"
    assert (tmp_path / "back.bin").read_bytes() == PAYLOAD
    assert (tmp_path / "ours.blp").read_bytes() == (tmp_path / "theirs.blp").read_bytes()
    assert api.unpack_file_from_file(tmp_path / "theirs.blp", tmp_path / "again.bin") is None
    assert (tmp_path / "again.bin").read_bytes() == PAYLOAD


# --- arrays -------------------------------------------------------------------------------


def _arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(42)
    grid = np.arange(24.0).reshape(4, 6)
    return {
        "f8": rng.random(1000),
        "i2_big_endian": np.arange(300, dtype=">i2"),
        "u1": np.arange(256, dtype="u1"),
        "bool": rng.random(100) > 0.5,
        "c8": (rng.random(40) + 1j).astype("c8"),
        "f2": rng.random(50).astype("f2"),
        "datetime": np.arange("2020-01-01", "2020-03-01", dtype="M8[D]"),
        "timedelta": np.arange(20, dtype="m8[ms]"),
        "S7": np.array([b"abc", b"defghij", b""] * 5, dtype="S7"),
        "U5": np.array(["αβγ", "hello", ""] * 4, dtype="U5"),
        "V4": np.frombuffer(bytes(range(40)), dtype="V4"),
        "record": np.zeros(7, dtype=[("a", "<f8"), ("b", "<i4"), ("c", "S3")]),
        "nested": np.ones(5, dtype=[("a", "<f8"), ("b", [("c", "<i2"), ("d", "|S3")])]),
        "subarray": np.ones(6, dtype=[("a", "<f8", (2, 3)), ("b", "<i4")]),
        "titles": np.arange(4, dtype="<i4").view([(("X title", "x"), "<i4")]),
        "aligned": np.frombuffer(
            bytes(range(144)), np.dtype([("a", "u1"), ("b", "<f8")], align=True)
        ),
        "offsets": np.arange(60, dtype="u1").view(
            np.dtype(
                {"names": ["x", "y"], "formats": ["<i4", "<i2"], "offsets": [4, 0], "itemsize": 12}
            )
        ),
        "union": np.arange(16, dtype="u1").view(
            np.dtype(
                {"names": ["i", "f"], "formats": ["<i4", "<f4"], "offsets": [0, 0], "itemsize": 4}
            )
        ),
        "U100": np.array(["x" * 100, "yz"], dtype="U100"),
        "S300": np.array([b"a" * 300, b"b"], dtype="S300"),
        "fortran": np.asfortranarray(grid),
        "transposed": grid.T,
        "noncontiguous": grid[::2, ::3],
        "zero_d": np.array(2.5),
        "zero_size": np.zeros((0, 3), dtype="i4"),
        "multichunk": np.linspace(0, 1, 20000),
        "S3_big": np.array([b"abc"] * 400000, dtype="S3"),  # > 1 MiB, itemsize 3
    }


ORACLE_READ_ARRAYS = """
import json, sys, hashlib, numpy
out = {}
for path in sys.argv[1:]:
    a = bloscpack.unpack_ndarray_from_file(path)
    out[path] = [repr(a.dtype), list(a.shape), bool(a.flags.f_contiguous),
                 hashlib.sha256(numpy.ascontiguousarray(a).tobytes()).hexdigest()]
print(json.dumps(out))
"""


def _describe(array: np.ndarray) -> list:
    return [
        repr(array.dtype),
        list(array.shape),
        bool(array.flags.f_contiguous),
        hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest(),
    ]


def test_arrays_we_write_are_read_exactly_by_016(bloscpack016, tmp_path):
    arrays = _arrays()
    paths = {}
    for name, array in arrays.items():
        paths[name] = tmp_path / f"{name}.blp"
        api.pack_ndarray_to_file(array, paths[name])
        back = api.unpack_ndarray_from_file(paths[name])
        assert _describe(back)[:2] == _describe(array)[:2], name
        assert _describe(back)[3] == _describe(array)[3], name
    result = json.loads(bloscpack016.run(ORACLE_READ_ARRAYS, *map(str, paths.values())).stdout)
    for name, array in arrays.items():
        described = result[str(paths[name])]
        assert described[0] == repr(array.dtype), name
        assert described[1] == list(array.shape), name
        assert described[3] == _describe(array)[3], name
        stored_order = api.unpack_ndarray_from_file(paths[name]).flags.f_contiguous
        assert described[2] == stored_order, name


ORACLE_WRITE_ARRAYS = """
import sys, numpy, blosc
blosc.set_nthreads(1)
arrays = numpy.load(sys.argv[1])
for name in arrays.files:
    bloscpack.pack_ndarray_to_file(arrays[name], sys.argv[2] + '/' + name + '.blp')
"""

# 0.16 cannot store these (itemsize > 255; default chunk size not a multiple of 3); for the
# structured dtypes that numpy's descr cannot describe we write an exact dict form instead.
NOT_BY_016 = {"U100", "S300", "S3_big", "offsets", "union"}
DIFFERENT_BYTES = {"aligned"}


def test_arrays_016_writes_are_read_and_identical(bloscpack016, tmp_path):
    arrays = {k: v for k, v in _arrays().items() if k not in NOT_BY_016}
    np.savez(tmp_path / "arrays.npz", **arrays)
    (tmp_path / "theirs").mkdir()
    bloscpack016.run(ORACLE_WRITE_ARRAYS, str(tmp_path / "arrays.npz"), str(tmp_path / "theirs"))
    for name, array in arrays.items():
        theirs = tmp_path / "theirs" / f"{name}.blp"
        back = api.unpack_ndarray_from_file(theirs)
        assert back.dtype == array.dtype and back.shape == array.shape, name
        if name in DIFFERENT_BYTES:  # npz does not keep padding bytes: compare the fields
            assert all(np.array_equal(back[f], array[f]) for f in array.dtype.names or ())
            assert api.pack_ndarray_to_bytes(array) != theirs.read_bytes()
            continue
        assert np.ascontiguousarray(back).tobytes() == np.ascontiguousarray(array).tobytes()
        assert api.pack_ndarray_to_bytes(array) == theirs.read_bytes(), name


ORACLE_FAILS = """
import sys, numpy
try:
    bloscpack.pack_ndarray_to_file(numpy.array([b'abc'] * 400000, dtype='S3'), sys.argv[1])
except Exception as exc:
    print(type(exc).__name__)
"""


def test_default_chunk_size_is_rounded_to_whole_items(bloscpack016, tmp_path):
    assert bloscpack016.run(ORACLE_FAILS, str(tmp_path / "x.blp")).stdout.strip() == (
        "ChunkSizeTypeSizeMismatch"
    )
    array = _arrays()["S3_big"]
    raw = api.pack_ndarray_to_bytes(array)
    header = BloscpackHeader.decode(raw[:32])
    assert header.chunk_size == 1048575 and header.typesize == 3
    assert header.nchunks == 2 and header.last_chunk == 1200000 - 1048575


# --- headers, pformat, metadata rewrite ---------------------------------------------------

ORACLE_HEADERS = """
import json, sys
from bloscpack.headers import BloscpackHeader, MetadataHeader
out = []
for kind, kwargs in json.load(open(sys.argv[1])):
    if kind == 'meta':
        kwargs['magic_format'] = kwargs['magic_format'].encode()
        cls = MetadataHeader
    else:
        cls = BloscpackHeader
    h = cls(**kwargs)
    out.append([h.encode().hex(), h.pformat(), repr(cls.decode(h.encode()))])
print(json.dumps(out))
"""

HEADERS = [
    ("blp", {}),
    (
        "blp",
        {
            "offsets": True,
            "metadata": True,
            "checksum": "sha384",
            "typesize": 200,
            "chunk_size": 2147483631,
            "last_chunk": 5,
            "nchunks": 12,
            "max_app_chunks": 99,
        },
    ),
    ("blp", {"checksum": "crc32", "chunk_size": 0, "last_chunk": 0, "nchunks": 1}),
    (
        "meta",
        {
            "magic_format": "JSON",
            "meta_checksum": "md5",
            "meta_codec": "zlib",
            "meta_level": 9,
            "meta_size": 1000,
            "max_meta_size": 4294967295,
            "meta_comp_size": 3,
        },
    ),
]


def test_headers_encode_decode_and_print_like_016(bloscpack016, tmp_path):
    spec = tmp_path / "headers.json"
    spec.write_text(json.dumps(HEADERS))
    result = json.loads(bloscpack016.run(ORACLE_HEADERS, str(spec)).stdout)
    for (kind, kwargs), (hex_, pformat, repr_) in zip(HEADERS, result, strict=True):
        if kind == "meta":
            header = MetadataHeader(**{**kwargs, "magic_format": kwargs["magic_format"].encode()})
            decoded = MetadataHeader.decode(header.encode())
        else:
            header = BloscpackHeader(**kwargs)
            decoded = BloscpackHeader.decode(header.encode())
        assert header.encode().hex() == hex_
        assert header.pformat() == pformat
        assert repr(decoded) == repr_


ORACLE_REWRITE = """
import sys
from bloscpack.append import _rewrite_metadata_fp
from bloscpack.file_io import _read_bloscpack_header
with open(sys.argv[1], 'r+b') as fp:
    _read_bloscpack_header(fp)
    _rewrite_metadata_fp(fp, {'version': 2, 'tags': ['a', 'b']})
print(repr(bloscpack.unpack_bytes_from_file(sys.argv[2])[1]))
"""


def test_rewrite_metadata_matches_016(bloscpack016, tmp_path):
    ours, theirs = tmp_path / "ours.blp", tmp_path / "theirs.blp"
    api.pack_bytes_to_file(PAYLOAD, ours, metadata={"version": 1, "comment": "x" * 30})
    theirs.write_bytes(ours.read_bytes())
    rewrite_metadata(ours, {"version": 2, "tags": ["a", "b"]})
    proc = bloscpack016.run(ORACLE_REWRITE, str(theirs), str(ours))
    assert proc.stdout.strip() == "{'version': 2, 'tags': ['a', 'b']}"
    assert ours.read_bytes() == theirs.read_bytes()


def test_user_metadata_beside_the_numpy_metadata_is_read_by_016(bloscpack016, tmp_path):
    """``save(..., metadata=)`` and ``blpk c -m`` of an array put user entries beside 0.16's
    numpy metadata: 0.16 still loads the array and shows the entries as metadata."""
    a = np.arange(30_000, dtype="<f8").reshape(1000, 30)
    bloscpack.save(a, tmp_path / "a.blp", metadata={"units": "m", "scale": [1, 2]})
    code = (
        "import sys, json, numpy as np, bloscpack\n"
        "a = bloscpack.unpack_ndarray_from_file(sys.argv[1])\n"
        "from bloscpack.file_io import _read_beginning\n"
        "with open(sys.argv[1], 'rb') as fp:\n"
        "    meta = _read_beginning(fp)[1]\n"
        "print(json.dumps({'sum': float(a.sum()), 'shape': list(a.shape), 'meta': meta}))"
    )
    out = json.loads(bloscpack016.run(code, str(tmp_path / "a.blp")).stdout)
    assert out["sum"] == float(a.sum()) and out["shape"] == [1000, 30]
    assert out["meta"]["units"] == "m" and out["meta"]["scale"] == [1, 2]
    assert out["meta"]["container"] == "numpy"
