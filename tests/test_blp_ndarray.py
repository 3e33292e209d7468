"""numpy arrays in .blp files: the 0.16 metadata dict, exact dtype round trips (structured,
padded, overlapping, titles, big-endian, datetime, long strings), memory orders, 0-d and empty
arrays, chunk sizes in whole items, and validation of what a file claims."""

from __future__ import annotations

import numpy as np
import pytest

from bloscpack import api, errors
from bloscpack import ndarray as nd
from bloscpack.containers.bloscpack import BloscpackReader
from bloscpack.containers.bloscpack.args import BloscArgs
from bloscpack.containers.bloscpack.header import BloscpackHeader

ALIGNED = np.dtype([("a", "u1"), ("b", "<f8")], align=True)
OFFSETS = np.dtype(
    {"names": ["x", "y"], "formats": ["<i4", "<i2"], "offsets": [4, 0], "itemsize": 12}
)
UNION = np.dtype({"names": ["i", "f"], "formats": ["<i4", "<f4"], "offsets": [0, 0], "itemsize": 4})


@pytest.mark.parametrize(
    ("dtype", "stored"),
    [
        (np.dtype("<f8"), "'<f8'"),
        (np.dtype(">i2"), "'>i2'"),
        (np.dtype("?"), "'|b1'"),
        (np.dtype("S7"), "'|S7'"),
        (np.dtype("<U5"), "'<U5'"),
        (np.dtype("<M8[s]"), "'<M8[s]'"),
        (np.dtype("V4"), "'|V4'"),
        (
            np.dtype([("a", "<f8"), ("b", [("c", "<i2"), ("d", "S3")])]),
            "[('a', '<f8'), ('b', [('c', '<i2'), ('d', '|S3')])]",
        ),
        (np.dtype([("a", "<f8", (2,)), ("b", "<i4")]), "[('a', '<f8', (2,)), ('b', '<i4')]"),
        (np.dtype([(("X title", "x"), "<i4")]), "[(('X title', 'x'), '<i4')]"),
        (
            ALIGNED,
            "{'names': ['a', 'b'], 'formats': ['|u1', '<f8'], 'offsets': [0, 8],"
            " 'itemsize': 16, 'aligned': True}",
        ),
        (
            OFFSETS,
            "{'names': ['x', 'y'], 'formats': ['<i4', '<i2'], 'offsets': [4, 0], 'itemsize': 12}",
        ),
        (
            np.dtype([("p", ALIGNED, (2,))]),
            "{'names': ['p'], 'formats': [({'names': ['a', 'b'], 'formats': ['|u1', '<f8'],"
            " 'offsets': [0, 8], 'itemsize': 16, 'aligned': True}, (2,))], 'offsets': [0],"
            " 'itemsize': 32}",
        ),
    ],
)
def test_dtype_strings(dtype, stored):
    assert nd.dtype_to_string(dtype) == stored
    back = nd.dtype_from_metadata(stored)
    assert back == dtype and repr(back) == repr(dtype)


def test_legacy_and_016_padding_forms():
    assert nd.dtype_from_metadata("<f8") == np.dtype("<f8")
    nested = [["a", "<f8"], ["b", [["c", "<i2"], ["d", "|S3"]]]]
    assert nd.dtype_from_metadata(nested) == np.dtype(
        [("a", "<f8"), ("b", [("c", "<i2"), ("d", "S3")])]
    )
    padded = nd.dtype_from_metadata("[('a', '|u1'), ('', '|V7'), ('b', '<f8')]")
    assert padded.names == ("a", "b") and padded.itemsize == 16 and padded.fields["b"][1] == 8
    assert nd.dtype_from_metadata([["a", "<f8", [2]]]) == np.dtype([("a", "<f8", (2,))])


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ("'<q9'", errors.FormatError, "is not a numpy dtype"),
        ("'O'", errors.ObjectNumpyArrayRejection, "object references"),
        ("{'names': ['a'], 'formats': ['O']}", errors.ObjectNumpyArrayRejection, "object"),
        ("[" * 300 + "]" * 300, errors.FormatError, "is not a numpy dtype"),
        (42, errors.FormatError, "is not a numpy dtype"),
        ({"a": 1}, errors.FormatError, "is not a numpy dtype"),
    ],
)
def test_bad_dtypes(value, error, message):
    with pytest.raises(error, match=message):
        nd.dtype_from_metadata(value)


BASE = {"dtype": "'<f8'", "shape": [2, 3], "order": "C", "container": "numpy"}


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"container": "pandas"}, errors.NotANumpyArray, "container: 'pandas'"),
        ({"shape": [2, -3]}, errors.FormatError, "not a list of sizes >= 0"),
        ({"shape": "23"}, errors.FormatError, "not a list of sizes"),
        ({"shape": [True]}, errors.FormatError, "not a list of sizes"),
        ({"shape": [1] * 65}, errors.FormatError, "65 dimensions"),
        ({"order": "A"}, errors.FormatError, "neither 'C' nor 'F'"),
        ({"dtype": None}, errors.FormatError, "not a numpy dtype"),
    ],
)
def test_metadata_validation(change, error, message):
    with pytest.raises(error, match=message):
        nd.decode_metadata({**BASE, **change})
    metadata = {k: v for k, v in BASE.items() if k != "order"}
    with pytest.raises(errors.FormatError, match="lacks the 'order' entry"):
        nd.decode_metadata(metadata)
    with pytest.raises(errors.NotANumpyArray, match="no metadata"):
        nd.decode_metadata(None)
    with pytest.raises(errors.NotANumpyArray, match="container: 'list'"):
        nd.decode_metadata([1])


def test_metadata_of_arrays():
    grid = np.arange(12.0).reshape(3, 4)
    assert nd.encode_metadata(grid) == {
        "dtype": "'<f8'",
        "shape": [3, 4],
        "order": "C",
        "container": "numpy",
    }
    assert nd.encode_metadata(grid.T)["order"] == "F"
    assert nd.encode_metadata(grid[:, ::2])["order"] == "C"
    assert nd.encode_metadata(np.asfortranarray(grid[:1]))["order"] == "C"  # both contiguous
    assert nd.encode_metadata(np.array(1.0))["shape"] == []


@pytest.mark.parametrize(
    ("dtype", "typesize"),
    [
        ("<f8", 8),
        ("S255", 255),
        ("S256", 1),
        ("V300", 1),
        ("<U64", 4),
        ("S0", 1),
        ([("a", "<f8", (40,))], 160),
        ([("a", "S257")], 1),
    ],
)
def test_blosc1_typesize(dtype, typesize):
    assert nd.blosc1_typesize(np.dtype(dtype)) == typesize


ARRAYS = {
    "f8": np.linspace(0, 1, 500),
    "big_endian": np.arange(100, dtype=">i4"),
    "complex": np.arange(10, dtype="<c16") * 1j,
    "datetime": np.arange("2000-01-01", "2000-02-01", dtype="M8[h]"),
    "timedelta": np.arange(7, dtype=">m8[ns]"),
    "aligned": np.frombuffer(bytes(range(160)), ALIGNED),
    "offsets": np.frombuffer(bytes(range(120)), OFFSETS),
    "union": np.frombuffer(bytes(range(40)), UNION),
    "titles": np.zeros(
        3,
        np.dtype(
            {"names": ["x", "y"], "formats": ["u1", "<i4"], "titles": ["T x", None]}, align=True
        ),
    ),
    "U300": np.array(["é" * 300, "x"], dtype="U300"),
    "S1000": np.array([b"a" * 1000, b"b"], dtype="S1000"),
    "fortran_3d": np.asfortranarray(np.arange(60).reshape(3, 4, 5)),
    "transposed": np.arange(60).reshape(3, 4, 5).T,
    "sliced": np.arange(100).reshape(10, 10)[::3, 1::2],
    "zero_d": np.array(7, dtype="<i2"),
    "zero_d_struct": np.zeros((), dtype=[("a", "<f4"), ("b", "S2")]),
    "empty": np.zeros(0, dtype="<f4"),
    "empty_2d": np.zeros((3, 0), dtype="S5"),
    "S0": np.zeros(4, dtype="S0"),
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_round_trip(name, tmp_path):
    array = ARRAYS[name]
    api.pack_ndarray_to_file(array, tmp_path / "a.blp")
    back = api.unpack_ndarray_from_file(tmp_path / "a.blp")
    assert repr(back.dtype) == repr(array.dtype)
    assert back.shape == array.shape
    assert np.ascontiguousarray(back).tobytes() == np.ascontiguousarray(array).tobytes()
    if nd.memory_order(array) == "F":
        assert back.flags.f_contiguous
    else:
        assert back.flags.c_contiguous
    assert back.flags.writeable


def test_long_items_are_stored_readable_by_016():
    raw = api.pack_ndarray_to_bytes(ARRAYS["U300"])
    header = BloscpackHeader.decode(raw[:32])
    assert header.typesize == 4
    with BloscpackReader(raw) as reader:
        chunk = reader.read_chunk(0)
        assert chunk[0] == 2 and chunk[3] == 4  # a Blosc1 chunk of typesize 4
    raw = api.pack_ndarray_to_bytes(ARRAYS["S1000"], blosc_args=BloscArgs(blosc_version=2))
    assert BloscpackHeader.decode(raw[:32]).typesize == 0  # 1000 does not fit the header byte
    with BloscpackReader(raw) as reader:
        assert reader.read_chunk(0)[0] == 5
    assert api.unpack_ndarray_from_bytes(raw).tobytes() == ARRAYS["S1000"].tobytes()


def test_chunk_sizes_hold_whole_items():
    big = np.zeros(400000, dtype="S3")  # 1.2 MB: the 1M default is not a multiple of 3
    header = BloscpackHeader.decode(api.pack_ndarray_to_bytes(big)[:32])
    assert (header.chunk_size, header.last_chunk, header.nchunks) == (1048575, 151425, 2)
    huge_items = np.zeros(2, dtype="V1100000")  # items larger than the default chunk size
    header = BloscpackHeader.decode(api.pack_ndarray_to_bytes(huge_items)[:32])
    assert (header.chunk_size, header.nchunks) == (1100000, 2)
    header = BloscpackHeader.decode(api.pack_ndarray_to_bytes(big, chunk_size="3K")[:32])
    assert header.chunk_size == 3072
    with pytest.raises(errors.ChunkSizeTypeSizeMismatch):
        api.pack_ndarray_to_bytes(big, chunk_size="1K")
    small = np.zeros(10, dtype="S3")  # one chunk of the whole array: any chunk size works
    assert (
        BloscpackHeader.decode(api.pack_ndarray_to_bytes(small, chunk_size=1000)[:32]).chunk_size
        == 30
    )


def test_header_and_payload_must_agree_with_the_array():
    metadata = nd.encode_metadata(np.zeros((2, 3)))
    forged = api.pack_bytes_to_bytes(bytes(40), metadata=metadata)
    with pytest.raises(errors.IntegrityError, match=r"needs 48 bytes, the chunks hold 40"):
        api.unpack_ndarray_from_bytes(forged)
    with pytest.raises(errors.NotANumpyArray):
        api.unpack_ndarray_from_bytes(api.pack_bytes_to_bytes(bytes(48)))
