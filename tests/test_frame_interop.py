"""Frames against python-blosc2 both ways: what we write it opens, what it writes we read, and
the same operations give byte-identical frames and sparse-frame directories."""

from __future__ import annotations

import os
from pathlib import Path

import blosc2
import numpy as np
import pytest

from bloscpack import Frame
from bloscpack.containers import frame as cframe
from bloscpack.containers.schunk import records

blosc2.set_nthreads(1)
CP = blosc2.CParams(typesize=4, nthreads=1)


def chunk(n: int, seed: int) -> bytes:
    return blosc2.compress2((np.arange(n, dtype=np.int32) * seed) % 977, cparams=CP)


def zeros(n: int) -> bytes:
    return blosc2.compress2(np.zeros(n, np.int32), cparams=CP)


def snapshot(path: Path) -> dict[str, bytes]:
    if path.is_dir():
        return {name: (path / name).read_bytes() for name in sorted(os.listdir(path))}
    return {"": path.read_bytes()}


# (operation, arguments): applied to a python-blosc2 SChunk and to a Frame alike
OPERATIONS = [
    ("append", (chunk(1000, 1),)),
    ("append", (chunk(1000, 2),)),
    ("append", (zeros(1000),)),
    ("append", (chunk(1000, 3),)),
    ("insert", (1, chunk(1000, 5))),
    ("update", (0, chunk(1000, 9))),  # regular -> regular, in place with a memmove
    ("update", (2, zeros(1000))),  # regular -> special
    ("update", (3, chunk(1000, 11))),
    ("update", (2, chunk(1000, 12))),  # special -> regular
    ("delete", (1,)),
    ("reorder", ([2, 0, 3, 1],)),
    ("append", (chunk(300, 4),)),  # a short last chunk keeps the chunksize
    ("vlmeta", ("x", {"a": 1, "t": (1, 2)})),
    ("vlmeta", ("y", "hello")),
    ("vlmeta_del", ("x",)),
    ("delete", (0,)),
    ("append", (chunk(1000, 6),)),  # after a short chunk: variable chunksize (0x53)
]


def apply_blosc2(s: blosc2.SChunk, op: str, args: tuple) -> None:
    if op == "append":
        s.append_chunk(args[0])
    elif op == "insert":
        s.insert_chunk(*args)
    elif op == "update":
        s.update_chunk(*args)
    elif op == "delete":
        s.delete_chunk(*args)
    elif op == "reorder":
        s.reorder_offsets(args[0])
    elif op == "vlmeta":
        s.vlmeta[args[0]] = args[1]
    elif op == "vlmeta_del":
        del s.vlmeta[args[0]]


def apply_ours(f: Frame, op: str, args: tuple) -> None:
    if op == "append":
        f.append_chunk(args[0])
    elif op == "insert":
        f.insert_chunk(*args)
    elif op == "update":
        f.update_chunk(*args)
    elif op == "delete":
        f.delete_chunk(*args)
    elif op == "reorder":
        f.reorder(args[0])
    elif op == "vlmeta":
        f.vlmeta[args[0]] = args[1]
    elif op == "vlmeta_del":
        del f.vlmeta[args[0]]


def same_content(ours: Path, s: blosc2.SChunk) -> None:
    """python-blosc2 opens our frame and sees what ``s`` holds."""
    other = blosc2.open(str(ours))
    assert other.nchunks == s.nchunks
    assert other.chunksize == s.chunksize
    for i in range(s.nchunks):
        assert other.get_chunk(i) == s.get_chunk(i)
        assert other.decompress_chunk(i) == s.decompress_chunk(i)
    assert other.vlmeta[:] == s.vlmeta[:]
    assert list(other.meta.keys()) == list(s.meta.keys())


@pytest.mark.parametrize("sparse", [False, True], ids=["contiguous", "sparse"])
def test_same_operations_same_bytes(tmp_path: Path, sparse: bool) -> None:
    theirs, ours = tmp_path / "theirs.b2frame", tmp_path / "ours.b2frame"
    s = blosc2.SChunk(
        chunksize=4000, contiguous=not sparse, urlpath=str(theirs), cparams=CP, meta={"m": [1, 2]}
    )
    f = Frame(ours, "w", sparse=sparse, typesize=4, chunksize=4000, meta={"m": [1, 2]})
    for op, args in OPERATIONS:
        apply_blosc2(s, op, args)
        apply_ours(f, op, args)
        f.flush()
        assert snapshot(ours) == snapshot(theirs), (op, args)
        same_content(ours, s)
    assert f.chunksize == 0 and f.header["general_flags"] == 0x53
    f.close()


@pytest.mark.parametrize("sparse", [False, True], ids=["contiguous", "sparse"])
def test_we_read_their_operations(tmp_path: Path, sparse: bool) -> None:
    path = tmp_path / "theirs.b2frame"
    s = blosc2.SChunk(chunksize=4000, contiguous=not sparse, urlpath=str(path), cparams=CP)
    for op, args in OPERATIONS:
        apply_blosc2(s, op, args)
        with Frame(path) as f:
            assert f.sparse == sparse
            assert f.nchunks == s.nchunks and f.nbytes == s.nbytes and f.cbytes == s.cbytes
            for i in range(s.nchunks):
                assert f.read_chunk(i) == s.get_chunk(i)
                assert bytes(f.decompress_chunk(i)) == s.decompress_chunk(i)
            assert dict(f.vlmeta) == s.vlmeta[:]


@pytest.mark.parametrize("sparse", [False, True], ids=["contiguous", "sparse"])
def test_they_mutate_our_frame(tmp_path: Path, sparse: bool) -> None:
    path = tmp_path / "ours.b2frame"
    with Frame(path, "w", sparse=sparse, typesize=4, chunksize=4000, vlmeta={"v": 1}) as f:
        for seed in range(3):
            f.append_data((np.arange(1000, dtype=np.int32) * seed) % 977)
    s = blosc2.open(str(path), mode="a")
    s.insert_chunk(1, chunk(1000, 7))
    s.update_chunk(0, zeros(1000))
    s.vlmeta["w"] = [1, 2, 3]
    with Frame(path) as f:
        assert f.nchunks == 4
        assert f.offsets[0] == records.SPECIAL_MARKERS[1]
        assert bytes(f.decompress_chunk(1)) == blosc2.decompress2(chunk(1000, 7))
        assert dict(f.vlmeta) == {"v": 1, "w": [1, 2, 3]}


@pytest.mark.parametrize("sparse", [False, True], ids=["contiguous", "sparse"])
def test_mutating_their_frame_in_place(tmp_path: Path, sparse: bool) -> None:
    path = tmp_path / "theirs.b2frame"
    s = blosc2.SChunk(chunksize=4000, contiguous=not sparse, urlpath=str(path), cparams=CP)
    for seed in range(4):
        s.append_chunk(chunk(1000, seed + 1))
    del s
    with Frame(path, "a") as f:
        f.update_chunk(1, chunk(1000, 40))
        f.insert_chunk(0, zeros(1000))
        f.delete_chunk(4)
        f.reorder([1, 2, 0, 3])
        f.vlmeta["k"] = "v"
    s = blosc2.open(str(path))
    expected = [chunk(1000, 1), chunk(1000, 40), zeros(1000), chunk(1000, 3)]
    assert [blosc2.decompress2(s.get_chunk(i)) for i in range(4)] == [
        blosc2.decompress2(c) for c in expected
    ]
    assert s.vlmeta["k"] == "v"


def test_append_data_matches_append_data_of_blosc2(tmp_path: Path) -> None:
    data = [np.cumsum(np.arange(2500, dtype=np.float64) % 7) * (i + 1) for i in range(3)]
    theirs = tmp_path / "theirs.b2frame"
    s = blosc2.SChunk(
        chunksize=20000,
        urlpath=str(theirs),
        contiguous=True,
        cparams=blosc2.CParams(typesize=8, codec=blosc2.Codec.LZ4, clevel=7, nthreads=1),
        meta={"shape": [7500]},
    )
    for a in data:
        s.append_data(a)
    del s
    with Frame(
        tmp_path / "ours.b2frame", "w", typesize=8, codec="lz4", clevel=7, chunksize=20000,
        meta={"shape": [7500]},
    ) as f:  # fmt: skip
        for a in data:
            f.append_data(a)
        assert f.cparams["codec"] == 1 and f.cparams["clevel"] == 7
    assert (tmp_path / "ours.b2frame").read_bytes() == theirs.read_bytes()


def test_frame_writer_equals_appends(tmp_path: Path) -> None:
    chunks = [chunk(1000, 1), zeros(1000), chunk(1000, 2), chunk(500, 3)]
    theirs = tmp_path / "theirs.b2frame"
    s = blosc2.SChunk(chunksize=4000, urlpath=str(theirs), contiguous=True, cparams=CP)
    for c in chunks:
        s.append_chunk(c)
    s.vlmeta["a"] = "b"
    del s
    params = cframe.CParams.make(typesize=4)
    with cframe.FrameWriter(
        tmp_path / "ours.b2frame", params, chunksize=4000, vlmeta=[("a", records.pack_value("b"))]
    ) as writer:
        for c in chunks:
            writer.append_chunk(c)
    assert (tmp_path / "ours.b2frame").read_bytes() == theirs.read_bytes()
    in_memory = cframe.FrameWriter(None, params, chunksize=4000, vlmeta=[("a", b"\xa1b")])
    for c in chunks:
        in_memory.append_chunk(c)
    assert in_memory.close() == theirs.read_bytes()


def test_to_bytes_of_sparse_frame_opens_in_blosc2(tmp_path: Path) -> None:
    path = tmp_path / "sparse.b2frame"
    with Frame(path, "w", sparse=True, typesize=4, meta={"m": "x"}, vlmeta={"v": 2}) as f:
        f.append_chunk(chunk(1000, 1))
        f.append_chunk(zeros(1000))
        f.append_chunk(chunk(700, 2))
        data = f.to_bytes()
    s = blosc2.schunk_from_cframe(data)
    assert s.nchunks == 3 and s.meta["m"] == "x" and s.vlmeta["v"] == 2
    assert s.decompress_chunk(2) == blosc2.decompress2(chunk(700, 2))
    assert s.decompress_chunk(1) == bytes(4000)


def test_in_memory_frame_round_trip() -> None:
    with Frame(None, "w", typesize=8, chunksize=8000, vlmeta={"k": b"\x00\xff"}) as f:
        f.append_data(np.arange(1000, dtype=np.float64))
        f.append_data(np.full(1000, np.nan))
        assert len(f.meta) == 0
        data = f.to_bytes()
    s = blosc2.schunk_from_cframe(data)
    assert s.vlmeta["k"] == b"\x00\xff"
    assert np.array_equal(np.frombuffer(s.decompress_chunk(0), np.float64), np.arange(1000.0))
    with Frame(data, "a") as g:
        g.delete_chunk(0)
        assert blosc2.schunk_from_cframe(g.to_bytes()).nchunks == 1
    with Frame(data) as g:
        assert g.nchunks == 2  # the bytes given were not changed


def test_embedded_frame_written_by_blosc2_reads_at_offset(tmp_path: Path) -> None:
    s = blosc2.SChunk(chunksize=4000, cparams=CP, meta={"m": 1})
    s.append_chunk(chunk(1000, 3))
    path = tmp_path / "embedded.bin"
    path.write_bytes(b"x" * 33 + s.to_cframe() + b"trailing")
    with Frame(path, offset=33) as f:
        assert f.read_chunk(0) == chunk(1000, 3) and f.meta["m"] == 1


def test_fill_special_frames_of_blosc2(tmp_path: Path) -> None:
    for kind, value in [(blosc2.SpecialValue.ZERO, 0.0), (blosc2.SpecialValue.NAN, np.nan)]:
        path = tmp_path / f"fill{kind.name}.b2frame"
        s = blosc2.SChunk(chunksize=8000, urlpath=str(path), contiguous=True, cparams=CP)
        s.fill_special(2200, kind)
        with Frame(path) as f:
            assert f.nchunks == 2
            last = np.frombuffer(f.decompress_chunk(1), np.float32)
            assert last.size == 200 and np.array_equal(last, np.full(200, value), equal_nan=True)
            assert [f.read_chunk(i) for i in range(2)] == [s.get_chunk(i) for i in range(2)]


def test_embedded_frame_changed_in_place_like_blosc2(tmp_path: Path) -> None:
    """Mode "a" at an offset: the frame changes in place and the file ends where the frame
    ends (python-blosc2 / C-Blosc2 cut what followed the frame the same way)."""
    frame = tmp_path / "frame.b2frame"  # written to a file: header nthreads 1/1, as C rewrites
    s = blosc2.SChunk(chunksize=4000, cparams=CP, meta={"m": 1}, urlpath=str(frame),
                      contiguous=True)  # fmt: skip
    for seed in range(3):
        s.append_chunk(chunk(1000, seed + 1))
    image = b"x" * 33 + frame.read_bytes() + b"TRAILING" * 10
    theirs, ours = tmp_path / "theirs.bin", tmp_path / "ours.bin"
    theirs.write_bytes(image)
    ours.write_bytes(image)
    steps = [
        ("vlmeta", ("k", "v")),
        ("delete", (0,)),
        ("update", (0, zeros(1000))),
        ("append", (chunk(1000, 8),)),
        ("insert", (1, chunk(1000, 9))),
    ]
    for op, args in steps:
        t = blosc2.open(str(theirs), mode="a", offset=33)
        apply_blosc2(t, op, args)
        del t
        with Frame(ours, "a", offset=33) as f:
            apply_ours(f, op, args)
        assert ours.read_bytes() == theirs.read_bytes(), op
    with Frame(ours, offset=33) as f:
        assert f.nchunks == 4 and f.meta["m"] == 1 and f.vlmeta["k"] == "v"
    assert ours.read_bytes()[:33] == b"x" * 33


def test_embedded_frame_in_bytes_changed_and_offset_refused_for_new_frames() -> None:
    s = blosc2.SChunk(chunksize=4000, cparams=CP)
    s.append_chunk(chunk(1000, 3))
    data = b"y" * 7 + s.to_cframe()
    with Frame(data, "a", offset=7) as f:
        f.append_chunk(chunk(1000, 4))
        out = f.to_bytes()
    assert blosc2.schunk_from_cframe(out).nchunks == 2
    with pytest.raises(ValueError, match="offset is for reading or changing an existing frame"):
        Frame(None, "w", offset=7)
