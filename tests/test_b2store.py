"""python-blosc2 stores (DictStore and TreeStore as ``.b2z`` zips and ``.b2d`` directories,
EmbedStore ``.b2e`` frames) both ways with the real python-blosc2: every store it writes reads
exactly through ``open`` (a mapping of keys to lazy arrays), ``load`` (a dict), ``info`` and
``verify``; every store ``save`` writes python-blosc2 opens with equal arrays; damaged stores
are refused naming the file and the problem (the crafted zips of ``tests/data/bad`` are
checked by ``tests/test_bad_files.py``)."""

from __future__ import annotations

import dataclasses
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import blosc2
import numpy as np
import pytest

import bloscpack
from bloscpack.containers.frame import ContiguousFrame
from bloscpack.errors import (
    ArgumentError,
    NotAContainer,
    OutputExistsError,
    UnmodelledFeature,
    UnsupportedError,
)

#: Arrays of different dtypes and shapes under nested keys, with pinned chunks and blocks.
ARRAYS = {
    "/x": (np.arange(1000, dtype="<i4"), (100,), (20,)),
    "/g/y": (np.linspace(0, 1, 60).reshape(6, 10), (3, 5), (3, 5)),
    "/g/h/z": (np.array(["ab", "cde", ""]), (2,), (1,)),
    "/b": (np.array([True, False, True]), (3,), (3,)),
    "/rec": (np.array([(1, 2.5), (3, 4.5)], dtype=[("a", "<i2"), ("b", ">f8")]), (2,), (1,)),
    "/zero": (np.empty((0, 4), dtype="<u8"), (1, 4), (1, 4)),
    "/scalar": (np.array(7.5), (), ()),
}


def _blosc2_array(value: np.ndarray, chunks: tuple[int, ...], blocks: tuple[int, ...]):
    return blosc2.asarray(value, chunks=chunks or None, blocks=blocks or None,
                          cparams=blosc2.CParams(nthreads=1))  # fmt: skip


def _write_with_blosc2(path: Path, cls: type, threshold: int | None = 0) -> None:
    with cls(str(path), mode="w", threshold=threshold) as store:
        for key, (value, chunks, blocks) in ARRAYS.items():
            store[key] = _blosc2_array(value, chunks, blocks)


def _assert_equal(loaded: dict, expected: dict) -> None:
    assert sorted(loaded) == sorted(expected)
    for key, value in expected.items():
        assert loaded[key].dtype == value.dtype and loaded[key].shape == value.shape, key
        assert loaded[key].tobytes() == value.tobytes(), key


EXPECTED = {key: value for key, (value, _, _) in ARRAYS.items()}

#: name: (file name, python-blosc2 class, threshold: under it arrays are embedded).
KINDS = {
    "dictstore-zip": ("s.b2z", blosc2.DictStore, 0),
    "dictstore-dir": ("s.b2d", blosc2.DictStore, 0),
    "treestore-zip": ("t.b2z", blosc2.TreeStore, 0),
    "treestore-dir": ("t.b2d", blosc2.TreeStore, 0),
    "embedded-zip": ("e.b2z", blosc2.DictStore, 100),  # the small arrays in embed.b2e
    "embedded-dir": ("e.b2d", blosc2.TreeStore, 100),
}


@pytest.mark.parametrize("kind", KINDS)
def test_stores_python_blosc2_writes_read_exactly(tmp_path: Path, kind: str):
    name, cls, threshold = KINDS[kind]
    path = tmp_path / name
    _write_with_blosc2(path, cls, threshold)
    assert bloscpack.detect(path) == "b2store"
    _assert_equal(bloscpack.load(path), EXPECTED)
    with bloscpack.open(path) as group:
        assert list(group) == sorted(EXPECTED) and len(group) == len(EXPECTED)
        assert "/g/y" in group and "g/y" in group and "/g" not in group and 3 not in group
        assert group["g/y"][1:5, ::3].tolist() == EXPECTED["/g/y"][1:5, ::3].tolist()
        assert group["/x"].chunks == (100,)
        with pytest.raises(KeyError):
            group["/nothing"]
    report = bloscpack.verify(path)
    assert (report["ok"], report["problems"], report["bad_chunks"]) == (True, [], [])
    assert report["verifiable"] is name.endswith(".b2z")
    described = bloscpack.info(path)
    assert [entry["key"] for entry in described["arrays"]] == sorted(EXPECTED)
    embedded = sorted(e["key"] for e in described["arrays"] if e.get("embedded"))
    assert embedded == (sorted(k for k, v in EXPECTED.items() if v.nbytes < 100)
                        if threshold else [])  # fmt: skip


def test_an_embed_store_reads_exactly(tmp_path: Path):
    path = tmp_path / "x.b2e"
    store = blosc2.EmbedStore(str(path), mode="w")
    for key, (value, chunks, blocks) in ARRAYS.items():
        store[key] = _blosc2_array(value, chunks, blocks)
    del store
    assert bloscpack.detect(path) == "b2store"
    _assert_equal(bloscpack.load(path), EXPECTED)
    assert bloscpack.info(path)["store"] == "EmbedStore"
    assert bloscpack.verify(path)["ok"] is True


def test_empty_stores(tmp_path: Path):
    blosc2.DictStore(str(tmp_path / "e.b2z"), mode="w").close()
    blosc2.TreeStore(str(tmp_path / "e.b2d"), mode="w").close()
    for name in ("e.b2z", "e.b2d"):
        assert bloscpack.load(tmp_path / name) == {}
        with bloscpack.open(tmp_path / name) as group:
            assert (list(group), group.attrs) == ([], {})
        assert bloscpack.verify(tmp_path / name)["ok"] is True


def test_many_small_members(tmp_path: Path):
    path = tmp_path / "many.b2z"
    with blosc2.DictStore(str(path), mode="w") as store:
        for i in range(300):
            store[f"/d{i % 7}/a{i}"] = np.full(3, i, dtype="i2")
    loaded = bloscpack.load(path)
    assert len(loaded) == 300
    assert all(loaded[f"/d{i % 7}/a{i}"].tolist() == [i] * 3 for i in range(300))


def test_treestore_attributes_are_the_groups_attrs(tmp_path: Path):
    path = tmp_path / "t.b2z"
    with blosc2.TreeStore(str(path), mode="w") as tree:
        tree["/a"] = np.arange(3)
        tree["/g/b"] = np.zeros(2)
        tree.vlmeta["title"] = "hello"
        tree.vlmeta["n"] = [1, 2]
        tree["/g"].vlmeta["units"] = "m"
    with bloscpack.open(path) as group:
        assert list(group) == ["/a", "/g/b"]
        assert group.attrs == {"title": "hello", "n": [1, 2]}
        assert group.attrs_of("/g") == group.attrs_of("g") == {"units": "m"}
        assert group.attrs_of("/a") == {}
    assert bloscpack.info(path)["attrs"] == {"/": {"title": "hello", "n": [1, 2]},
                                             "/g": {"units": "m"}}  # fmt: skip


def _chunk_position(path: Path, member: str, index: int) -> int:
    """Where chunk ``index`` of the zip member ``member`` lies in the file."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
        data = archive.read(member)
    with open(path, "rb") as fh:
        fh.seek(info.header_offset + 26)
        name_len, extra_len = struct.unpack("<2H", fh.read(4))
    start = info.header_offset + 30 + name_len + extra_len
    frame = ContiguousFrame(data)
    try:
        return start + frame.header.header_len + int(frame.offsets[index])
    finally:
        frame.close()


def test_a_selection_reads_only_the_chunks_it_touches(tmp_path: Path):
    """Chunk 5 of ``/x`` is damaged inside the zip: a selection in chunk 0 still reads, one
    that touches chunk 5 fails naming the member."""
    path = tmp_path / "s.b2z"
    _write_with_blosc2(path, blosc2.TreeStore)
    at = _chunk_position(path, "x.b2nd", 5)
    data = bytearray(path.read_bytes())
    data[at + 4 : at + 8] = struct.pack("<i", 2147483000)  # chunk 5's nbytes
    path.write_bytes(bytes(data))
    with bloscpack.open(path) as group:
        assert group["/x"][10:20].tolist() == list(range(10, 20))
        with pytest.raises(bloscpack.errors.BloscpackError, match=f"^{path}/x.b2nd: chunk 5"):
            group["/x"][495:505]
    report = bloscpack.verify(path)
    assert report["ok"] is False
    assert "member 'x.b2nd': its bytes do not match their CRC-32" in report["problems"]


@pytest.mark.parametrize("name", ["w.b2z", "w.b2d"])
def test_stores_saved_here_open_in_python_blosc2(tmp_path: Path, name: str):
    path = tmp_path / name
    arrays = {key.lstrip("/") if key == "/x" else key: value for key, value in EXPECTED.items()}
    bloscpack.save(arrays, path, metadata={"title": "T", "n": 3}, chunks=(2,), codec="lz4")
    tree = blosc2.open(str(path), mode="r")
    assert type(tree).__name__ == "TreeStore"
    assert sorted(tree.keys()) == sorted({*EXPECTED, "/g", "/g/h"})
    assert tree.vlmeta[:] == {"title": "T", "n": 3}
    for key, value in EXPECTED.items():
        assert tree[key][()].tobytes() == value.tobytes() and tree[key].dtype == value.dtype
    assert tree["/x"].chunks == (2,) and tree["/g/y"].chunks == (2, 10)
    assert sorted(blosc2.DictStore(str(path), mode="r").keys()) == sorted(
        {*EXPECTED, "/__vlmeta__"}
    )
    _assert_equal(bloscpack.load(path), EXPECTED)
    if name.endswith(".b2z"):
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
        assert {i.compress_type for i in infos} == {zipfile.ZIP_STORED}
        assert infos[-1].filename == "embed.b2e"
        assert bloscpack.verify(path)["data_verified"] is True


def test_save_replaces_atomically_and_refuses_what_it_cannot_write(tmp_path: Path):
    path = tmp_path / "s.b2z"
    bloscpack.save({"a": np.arange(3)}, path)
    with pytest.raises(OutputExistsError):
        bloscpack.save({"a": np.arange(4)}, path, overwrite=False)
    with pytest.raises(bloscpack.errors.BloscpackError):
        bloscpack.save({"a": np.arange(5), "b": np.array([object()])}, path)
    assert bloscpack.load(path)["/a"].tolist() == [0, 1, 2]
    assert sorted(os.listdir(tmp_path)) == ["s.b2z"]


SAFE = "(no '..', '.' or empty parts, backslashes or control characters)"


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"../x": np.zeros(1)}, f"key '../x' is not a safe relative path {SAFE}"),
        ({"a//b": np.zeros(1)}, f"key 'a//b' is not a safe relative path {SAFE}"),
        ({"g/__vlmeta__": np.zeros(1)},
         "key 'g/__vlmeta__': __vlmeta__ holds a group's attributes"),
        ({"g": np.zeros(1), "g/x": np.zeros(1)},
         "'/g' is an array and a group holding '/g/x'; a key is one or the other"),
        ({"x": np.zeros(1), "/x": np.zeros(1)}, "key '/x' is given twice"),
        ({1: np.zeros(1)}, "a store's keys are text, got 1"),
    ],
    ids=["dotdot", "empty-part", "attrs-key", "array-and-group", "twice", "not-text"],
)  # fmt: skip
def test_save_refuses_bad_keys(tmp_path: Path, arrays: dict, message: str):
    path = tmp_path / "s.b2z"
    with pytest.raises(ArgumentError) as caught:
        bloscpack.save(arrays, path)
    assert str(caught.value) == f"{path}: {message}"
    assert not path.exists()


def test_a_dict_goes_to_a_store_and_a_store_takes_a_dict(tmp_path: Path):
    with pytest.raises(ArgumentError) as caught:
        bloscpack.save({"a": np.zeros(2)}, tmp_path / "a.b2nd")
    assert str(caught.value) == (f"{tmp_path / 'a.b2nd'}: a dict of arrays is saved to a store"
                                 " (.b2z), not to python-blosc2 NDArray")  # fmt: skip
    with pytest.raises(ArgumentError) as caught:
        bloscpack.save(np.zeros(2), tmp_path / "a.b2z")
    assert str(caught.value) == (
        f"{tmp_path / 'a.b2z'}: python-blosc2 store (DictStore, TreeStore, EmbedStore) holds"
        " arrays by key: save a dict of them ({'x': a, 'g/y': b})"
    )
    bloscpack.save({"a": np.zeros(2)}, tmp_path / "b", format="treestore")
    assert bloscpack.detect(tmp_path / "b") == "b2store"


def test_a_member_that_is_not_a_container(tmp_path: Path):
    path = tmp_path / "s.b2z"
    bloscpack.save({"a": np.arange(3)}, tmp_path / "good.b2z")
    with zipfile.ZipFile(tmp_path / "good.b2z") as good, \
            zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as bad:  # fmt: skip
        bad.writestr("x.b2nd", b"not a frame at all")
        for info in good.infolist():
            bad.writestr(info.filename, good.read(info))
    with pytest.raises(NotAContainer) as caught:
        bloscpack.load(path)
    assert str(caught.value) == (f"{path}/x.b2nd: not a Blosc container (first bytes 6e 6f 74"
                                 " 20 61 20 66 72 61 6d 65 20 61 74 20 61)")  # fmt: skip
    with bloscpack.open(path) as group:
        assert group["a"][...].tolist() == [0, 1, 2]
    report = bloscpack.verify(path)
    assert report["ok"] is False
    assert any(p.startswith("/x: ") for p in report["problems"]), report["problems"]


def blpk(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bloscpack", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)  # fmt: skip


def test_blpk_info_and_verify_list_and_check_every_array(tmp_path: Path):
    bloscpack.save({"a": np.arange(100, dtype="i4"), "g/b": np.zeros((4, 5))}, tmp_path / "s.b2z",
                   chunks=(2,), blocks=(1,), clevel=3)  # fmt: skip
    done = blpk("info", "s.b2z", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:8] == [
        "blpk: file:      s.b2z",
        "blpk: format:    b2store: python-blosc2 store (DictStore, TreeStore, EmbedStore)",
        "blpk: array:     2 arrays by key: /a, /g/b",
        "blpk: size:      560 bytes",
        "blpk: chunks:    52 (in 2 arrays)",
        "blpk: codec:     zstd; 2 chunks of zeros",
        "blpk: filters:   shuffle",
        "blpk: clevel:    3",
    ]
    assert lines[10] == "blpk: checksums: crc32 (chunks)"
    done = blpk("verify", "s.b2z", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "blpk: s.b2z: ok (b2store, 52 chunks)\n")


def test_a_store_at_a_url_fetches_its_directory_then_only_the_touched_chunks(tmp_path: Path):
    from remote_servers import http_server

    data = np.random.default_rng(0).integers(0, 2**62, 400_000)  # 10 chunks of 320 kB
    with blosc2.TreeStore(str(tmp_path / "r.b2z"), mode="w") as tree:
        tree["/x"] = blosc2.asarray(data, chunks=(40_000,), blocks=(40_000,))
        tree["/g/y"] = np.arange(10)
    size = (tmp_path / "r.b2z").stat().st_size
    with http_server(str(tmp_path)) as server:
        url = f"{server.url}/r.b2z"
        with bloscpack.open(url) as group:
            assert list(group) == ["/g/y", "/x"]
            # the first and last bytes (central directory, embed.b2e), then the local headers
            assert server.counter.requests <= 3, server.counter.ranges
            assert server.counter.bytes < 128 * 1024, server.counter.ranges
            server.counter.reset()
            assert group["/x"][40_010:40_020].tolist() == data[40_010:40_020].tolist()
            assert server.counter.bytes < 400 * 1024 < size, server.counter.ranges
        loaded = bloscpack.load(url)
        assert loaded["/x"].tolist() == data.tolist() and loaded["/g/y"].tolist() == list(range(10))
        assert bloscpack.verify(url)["ok"] is True


def test_conversions_between_stores(tmp_path: Path):
    """Every array read and written again (with the options given); the root's attributes are
    kept, other groups' dropped, and the report says so."""
    source = tmp_path / "t.b2z"
    with blosc2.TreeStore(str(source), mode="w") as tree:
        for key, (value, chunks, blocks) in ARRAYS.items():
            tree[key] = _blosc2_array(value, chunks, blocks)
        tree.vlmeta["title"] = "T"
        tree["/g"].vlmeta["units"] = "m"
    report = bloscpack.convert(source, tmp_path / "t.b2d", chunks=(2,))
    assert report == {
        "format": "b2store",
        "source_format": "b2store",
        "copied_chunks": 0,
        "recompressed_chunks": 19,
        "dropped": ["the attributes of group '/g': only the root's are kept"],
    }
    tree = blosc2.open(str(tmp_path / "t.b2d"), mode="r")
    assert tree.vlmeta[:] == {"title": "T"} and tree["/x"].chunks == (2,)
    _assert_equal(bloscpack.load(tmp_path / "t.b2d"), EXPECTED)
    bloscpack.convert(tmp_path / "t.b2d", tmp_path / "back.b2z")
    _assert_equal(bloscpack.load(tmp_path / "back.b2z"), EXPECTED)
    done = blpk("convert", "back.b2z", "e.b2e", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, (
        "blpk: error: e.b2e: an EmbedStore keeps no attributes; drop metadata= or name the"
        " output .b2z or .b2d\n"
    ))  # fmt: skip
    bloscpack.convert(tmp_path / "t.b2d", tmp_path / "plain.b2z")


def test_conversions_between_a_store_and_one_array_are_refused_by_name(tmp_path: Path):
    store, array = tmp_path / "s.b2z", tmp_path / "a.blp"
    bloscpack.save({"a": np.arange(3)}, store)
    bloscpack.save(np.arange(3), array)
    with pytest.raises(UnsupportedError) as caught:
        bloscpack.convert(array, tmp_path / "b.b2z")
    assert str(caught.value) == (
        f"{tmp_path / 'b.b2z'}: converting one array (Bloscpack file) into a python-blosc2 store"
        " (DictStore, TreeStore, EmbedStore) is not supported; save a dict of arrays to it"
        " (bloscpack.save)"
    )
    with pytest.raises(ArgumentError) as caught:
        bloscpack.convert(store, tmp_path / "b.blp")
    assert str(caught.value) == (
        f"{store}: a python-blosc2 store holds many arrays: bloscpack.open gives a mapping of"
        " its keys to arrays, bloscpack.load a dict of them"
    )
    (tmp_path / "raw.bin").write_bytes(bytes(100))
    done = blpk("c", "raw.bin", "c.b2z", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, (
        "blpk: error: c.b2z: a python-blosc2 store holds arrays by key, not one array: save a"
        " dict of them ({'x': a, 'g/y': b})\n"
    ))  # fmt: skip
    assert sorted(os.listdir(tmp_path)) == ["a.blp", "raw.bin", "s.b2z"]


@dataclasses.dataclass
class Row:
    x: int = 0
    y: float = 0.0


@pytest.mark.parametrize("name", ["ct.b2z", "ct.b2d"])
def test_a_ctable_in_a_treestore_is_refused_by_name(tmp_path: Path, name: str):
    """A CTable is a group of members (columns, a mask of valid rows, a schema): its columns
    alone would read deleted rows, so its key is refused, and its members are not keys."""
    table = blosc2.CTable(Row)
    for i in range(5):
        table.append(Row(x=i, y=i / 2))
    path = tmp_path / name
    with blosc2.TreeStore(str(path), mode="w") as tree:
        tree["/arr"] = np.arange(3)
        tree["/table"] = table
    message = (
        f"{path}: key '/table' is a python-blosc2 CTable (a group of members: its columns, a"
        " mask of valid rows and its schema), which this version does not read; open it with"
        " python-blosc2"
    )
    with bloscpack.open(path) as group:
        assert list(group) == ["/arr", "/table"]
        assert group["/arr"][...].tolist() == [0, 1, 2]
        with pytest.raises(UnmodelledFeature) as caught:
            group["/table"]
    assert str(caught.value) == message
    with pytest.raises(UnmodelledFeature) as caught:
        bloscpack.load(path)
    assert str(caught.value) == message
    report = bloscpack.verify(path)
    assert (report["ok"], report["problems"]) == (False, [f"/table: {message}"])
    assert bloscpack.info(path)["arrays"][1] == {"key": "/table", "object": "ctable"}


@pytest.mark.parametrize("name", ["s.b2z", "s.b2d"])
def test_stores_saved_to_and_read_from_urls(name: str):
    url = f"memory://stores/{name}"
    arrays = {"x": np.arange(5), "g/y": np.ones((2, 3))}
    bloscpack.save(arrays, url, metadata={"a": 1}, chunks=(2,))
    assert bloscpack.detect(url) == "b2store"
    _assert_equal(bloscpack.load(url), {"/x": arrays["x"], "/g/y": arrays["g/y"]})
    with bloscpack.open(url) as group:
        assert (list(group), group.attrs) == (["/g/y", "/x"], {"a": 1})
        assert group["x"][1:4].tolist() == [1, 2, 3]
    report = bloscpack.verify(url)
    assert (report["ok"], report["verifiable"]) == (True, name.endswith(".b2z"))


def test_an_embed_store_saved_here_opens_in_python_blosc2(tmp_path: Path):
    """Every array's frame embedded in one frame of 8 KiB chunks (the large one spans many)."""
    path = tmp_path / "w.b2e"
    large = np.random.default_rng(1).random((300, 70))
    bloscpack.save({"x": large, "g/y": np.arange(5), "s": np.array(3.5)}, path, chunks=(50,))
    store = blosc2.open(str(path), mode="r")
    assert type(store).__name__ == "EmbedStore" and sorted(store.keys()) == ["/g/y", "/s", "/x"]
    assert store["/x"][:].tobytes() == large.tobytes() and store["/x"].chunks == (50, 70)
    assert store["/g/y"][:].tolist() == [0, 1, 2, 3, 4] and store["/s"][()] == 3.5
    _assert_equal(bloscpack.load(path), {"/x": large, "/g/y": np.arange(5), "/s": np.array(3.5)})
    with pytest.raises(ArgumentError) as caught:
        bloscpack.save({"x": large}, tmp_path / "m.b2e", metadata={"a": 1})
    assert str(caught.value) == (f"{tmp_path / 'm.b2e'}: an EmbedStore keeps no attributes; drop"
                                 " metadata= or name the output .b2z or .b2d")  # fmt: skip


def test_closing_the_group_closes_the_arrays_it_gave(tmp_path: Path):
    path = tmp_path / "s.b2z"
    bloscpack.save({"a": np.arange(10)}, path)
    group = bloscpack.open(path)
    array = group["a"]
    assert [int(group["a"][i]) for i in range(10)] == list(range(10))
    group.close()
    with pytest.raises(ValueError, match="^I/O operation on a closed BloscArray$"):
        array[0]
    with bloscpack.open(path) as again:
        assert repr(again) == f"<Group {str(path)!r} (b2store): 1 arrays>"


def test_a_directory_of_containers_converts_into_a_store(tmp_path: Path):
    """Each container of any format under the directory becomes the array of its path without
    its suffix (a container directory is one container); other files are left out, said so;
    python-blosc2 opens the store."""
    src = tmp_path / "many"
    (src / "sub").mkdir(parents=True)
    bloscpack.save(np.arange(10), src / "a.b2nd", chunks=(5,), blocks=(5,))
    bloscpack.save(np.ones((3, 4)), src / "sub" / "b.blp")
    bloscpack.save(np.arange(5.0), src / "sub" / "c.bcolz")
    bloscpack.save(np.arange(7), src / "d.b2nd", sparse=True)
    (src / "notes.txt").write_text("not a container")
    report = bloscpack.convert(src, tmp_path / "m.b2z")
    assert (report["source_format"], report["dropped"]) == (
        "directory", ["file 'notes.txt': not a container, left out"])
    expected = {"/a": np.arange(10), "/d": np.arange(7), "/sub/b": np.ones((3, 4)),
                "/sub/c": np.arange(5.0)}  # fmt: skip
    _assert_equal(bloscpack.load(tmp_path / "m.b2z"), expected)
    tree = blosc2.TreeStore(str(tmp_path / "m.b2z"), mode="r")
    assert {key: tree[key][:].tolist() for key in expected} == {
        key: value.tolist() for key, value in expected.items()}
    bloscpack.save(np.arange(3), src / "a.blp")
    with pytest.raises(ArgumentError, match="both give the key '/a'"):
        bloscpack.convert(src, tmp_path / "n.b2z")
    assert not (tmp_path / "n.b2z").exists()
