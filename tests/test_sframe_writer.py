"""One-pass sparse-frame writing: SparseFrameWriter and the deferred appends of new sparse
frames give python-blosc2's files, write ``chunks.b2frame`` once, and fail cleanly."""

from __future__ import annotations

import os
from pathlib import Path

import blosc2
import numpy as np
import pytest

from bloscpack import Frame
from bloscpack.blosc.special import nan_chunk
from bloscpack.containers import frame as cframe
from bloscpack.containers import sframe
from bloscpack.containers.schunk import records
from bloscpack.errors import BloscpackError

blosc2.set_nthreads(1)
CP = blosc2.CParams(typesize=4, nthreads=1)


def chunk(n: int, seed: int) -> bytes:
    return blosc2.compress2((np.arange(n, dtype=np.int32) * seed) % 977, cparams=CP)


CHUNKS = [chunk(1000, 1), blosc2.compress2(np.zeros(1000, np.int32), cparams=CP),
          chunk(1000, 2), nan_chunk(4000, 4), chunk(1000, 3), chunk(600, 4)]  # fmt: skip


def snapshot(path: Path) -> dict[str, bytes]:
    return {name: (path / name).read_bytes() for name in sorted(os.listdir(path))}


def blosc2_frame(path: Path) -> dict[str, bytes]:
    s = blosc2.SChunk(chunksize=4000, urlpath=str(path), contiguous=False, cparams=CP,
                      meta={"m": [1, 2]})  # fmt: skip
    s.vlmeta["v"] = "x"
    for c in CHUNKS:
        s.append_chunk(c)
    del s
    return snapshot(path)


def count_index_writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    writes: list[int] = []
    real = sframe.SparseFrame._write_image

    def counting(self, *args):  # type: ignore[no-untyped-def]
        writes.append(1)
        return real(self, *args)

    monkeypatch.setattr(sframe.SparseFrame, "_write_image", counting)
    return writes


def test_writer_equals_blosc2_appends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    want = blosc2_frame(tmp_path / "theirs.b2frame")
    writes = count_index_writes(monkeypatch)
    params = cframe.CParams.make(typesize=4)
    with sframe.SparseFrameWriter(
        tmp_path / "ours.b2frame", params, chunksize=4000,
        metalayers=[("m", records.pack_value([1, 2]))], vlmeta=[("v", records.pack_value("x"))],
    ) as writer:  # fmt: skip
        for c in CHUNKS:
            writer.append_chunk(c)
        assert writer.nchunks == len(CHUNKS)
        assert not (tmp_path / "ours.b2frame").exists()  # appears when closed
    assert snapshot(tmp_path / "ours.b2frame") == want
    assert len(writes) == 1
    assert sorted(os.listdir(tmp_path)) == ["ours.b2frame", "theirs.b2frame"]


def test_new_sparse_frame_appends_write_the_index_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    want = blosc2_frame(tmp_path / "theirs.b2frame")
    writes = count_index_writes(monkeypatch)
    path = tmp_path / "ours.b2frame"
    with Frame(path, "w", sparse=True, typesize=4, chunksize=4000, meta={"m": [1, 2]},
               vlmeta={"v": "x"}) as f:  # fmt: skip
        for c in CHUNKS:
            f.append_chunk(c)
        # pending appends are readable, and the directory is still a valid (empty) frame
        assert f.nchunks == len(CHUNKS) and f.read_chunk(4) == CHUNKS[4]
        assert blosc2.open(str(path)).nchunks == 0
        assert writes == []
    assert len(writes) == 1
    assert snapshot(path) == want


def test_other_changes_write_pending_appends_first(tmp_path: Path) -> None:
    path = tmp_path / "ours.b2frame"
    f = Frame(path, "w", sparse=True, typesize=4, chunksize=4000)
    for c in CHUNKS[:3]:
        f.append_chunk(c)
    f.delete_chunk(0)  # writes the whole state: 2 chunks, file 0 removed
    assert blosc2.open(str(path)).nchunks == 2
    assert sorted(os.listdir(path)) == ["00000001.chunk", "chunks.b2frame"]
    f.append_chunk(chunk(1000, 5))  # the new file takes the highest id + 1
    assert f.header["nbytes"] == 12000  # reading the header writes pending appends
    assert blosc2.open(str(path)).decompress_chunk(2) == blosc2.decompress2(chunk(1000, 5))
    f.close()


def test_writer_failure_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ours.b2frame"
    params = cframe.CParams.make(typesize=4)
    with pytest.raises(BloscpackError), sframe.SparseFrameWriter(path, params) as writer:
        writer.append_chunk(CHUNKS[0])
        writer.append_chunk(b"\x05\x01\x05\x04" + bytes(40))  # not a valid chunk
    assert os.listdir(tmp_path) == []
    writer = sframe.SparseFrameWriter(path, params)
    writer.append_data(np.arange(10, dtype=np.int32))
    writer.abort()
    assert os.listdir(tmp_path) == []


def test_writer_replaces_a_sparse_frame_but_not_other_directories(tmp_path: Path) -> None:
    path = tmp_path / "ours.b2frame"
    params = cframe.CParams.make(typesize=4)
    for n in (3, 1):
        with sframe.SparseFrameWriter(path, params, chunksize=4000) as writer:
            for c in CHUNKS[:n]:
                writer.append_chunk(c)
        assert blosc2.open(str(path)).nchunks == n
    assert sorted(os.listdir(path)) == ["00000000.chunk", "chunks.b2frame"]
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("data")
    with (
        pytest.raises(FileExistsError, match="not a sparse frame"),
        sframe.SparseFrameWriter(other, params) as writer,
    ):
        writer.append_chunk(CHUNKS[0])
    assert os.listdir(other) == ["keep.txt"]
    assert sorted(os.listdir(tmp_path)) == ["other", "ours.b2frame"]


def test_b2nd_sparse_arrays_written_in_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bloscpack.containers.b2nd import save_b2nd

    writes = count_index_writes(monkeypatch)
    array = np.arange(20_000, dtype=np.float64).reshape(100, 200)
    save_b2nd(array, tmp_path / "a.b2nd", chunks=(10, 200), sparse=True)
    assert len(writes) == 1
    assert np.array_equal(blosc2.open(str(tmp_path / "a.b2nd"))[:], array)
    assert len(os.listdir(tmp_path / "a.b2nd")) == 11
