"""Corrupt frames and sparse-frame directories raise BloscpackError subclasses with a clear
message, never anything else; writer argument checks."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import blosc2
import numpy as np
import pytest
from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bloscpack import Frame
from bloscpack.errors import BloscpackError, FileNotFound, FormatError, TruncatedError

FRAMES = DATA / "blosc2" / "frames"
SAMPLES = [
    (FRAMES / name).read_bytes()
    for name in ("vlmeta.b2frame", "specials_update.b2frame", "meta3.b2frame", "fill_zero.b2frame",
                 "varlen_chunksize0.b2frame", "mutations_mixed.b2frame")
]  # fmt: skip


def read_everything(frame: Frame) -> None:
    for i in range(frame.nchunks):
        frame.read_chunk(i)
        frame.decompress_chunk(i)
    for name in frame.meta:
        frame.meta[name]
    for name in frame.vlmeta:
        frame.vlmeta[name]
    frame.verify()
    frame.info()


def open_and_read(data: bytes) -> None:
    try:
        with Frame(data) as frame:
            read_everything(frame)
    except BloscpackError:
        pass


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sample=st.sampled_from(range(len(SAMPLES))),
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6),
)
def test_flipped_bytes_raise_only_bloscpack_errors(
    sample: int, flips: list[tuple[int, int]]
) -> None:
    data = bytearray(SAMPLES[sample])
    for pos, value in flips:
        data[pos % len(data)] = value
    open_and_read(bytes(data))


@settings(max_examples=200, deadline=None)
@given(
    sample=st.sampled_from(range(len(SAMPLES))), cut=st.integers(0, 10**6), keep_tail=st.booleans()
)
def test_truncated_frames_raise_only_bloscpack_errors(
    sample: int, cut: int, keep_tail: bool
) -> None:
    data = SAMPLES[sample]
    cut %= len(data)
    open_and_read(data[cut:] if keep_tail else data[:cut])


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_raise_only_bloscpack_errors(data: bytes) -> None:
    open_and_read(data)
    open_and_read(SAMPLES[0][:87] + data)


@settings(max_examples=150, deadline=None)
@given(
    sample=st.sampled_from(range(len(SAMPLES))),
    field=st.sampled_from([11, 16, 30, 39, 48, 53, 58]),
    value=st.integers(-(2**31), 2**31 - 1),
)
def test_header_integers_out_of_range(sample: int, field: int, value: int) -> None:
    data = bytearray(SAMPLES[sample])
    size = 8 if field in (16, 30, 39) else 4
    data[field : field + size] = value.to_bytes(size, "big", signed=True)
    open_and_read(bytes(data))


SPARSE = DATA / "blosc2" / "sframes"


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(["specials.b2frame", "meta_vlmeta.b2frame", "delete.b2frame"]),
    action=st.sampled_from(["truncate", "flip", "remove"]),
    which=st.integers(0, 100),
    pos=st.integers(0, 10**6),
    value=st.integers(0, 255),
)
def test_damaged_sparse_directories(
    tmp_path_factory: pytest.TempPathFactory, name: str, action: str, which: int, pos: int,
    value: int,
) -> None:  # fmt: skip
    path = tmp_path_factory.mktemp("sf") / name
    shutil.copytree(SPARSE / name, path)
    for f in path.iterdir():
        f.chmod(0o644)
    files = sorted(path.iterdir())
    victim = files[which % len(files)]
    data = bytearray(victim.read_bytes())
    if action == "truncate":
        victim.write_bytes(data[: pos % (len(data) + 1)])
    elif action == "flip" and data:
        data[pos % len(data)] = value
        victim.write_bytes(data)
    else:
        victim.unlink()
    try:
        with Frame(path) as frame:
            read_everything(frame)
    except BloscpackError:
        pass


def test_missing_chunk_file_names_it(tmp_path: Path) -> None:
    path = tmp_path / "s.b2frame"
    shutil.copytree(SPARSE / "plain.b2frame", path)
    (path / "00000003.chunk").unlink()
    with Frame(path) as frame:
        frame.read_chunk(2)
        with pytest.raises(
            FileNotFound, match="chunk 3 is stored in 00000003.chunk, which is missing"
        ):
            frame.read_chunk(3)
        report = frame.verify()
    assert not report["ok"] and [b["index"] for b in report["bad_chunks"]] == [3]


def test_clear_messages() -> None:
    good = SAMPLES[0]
    with pytest.raises(TruncatedError, match="frame_len 1722, only 1000 bytes"):
        Frame(good[:1000])
    with pytest.raises(FormatError, match="not a Blosc2 frame"):
        Frame(b"x" * 200)
    bad = bytearray(good)
    bad[-22:-18] = struct.pack(">I", 5)
    with pytest.raises(FormatError, match="trailer length 5 out of range"):
        Frame(bytes(bad))
    bad = bytearray(good)
    bad[39:47] = struct.pack(">q", 10**6)  # cbytes past the end: the index is not where it says
    with pytest.raises(FormatError, match="index chunk at 1000097 does not fit"):
        Frame(bytes(bad))
    bad = bytearray(SAMPLES[1])
    bad[30:38] = struct.pack(">q", 4000 * 9)  # nbytes implies 9 chunks, the index holds 8
    with pytest.raises(FormatError, match="holds 8 offsets, the header implies 9 chunks"):
        Frame(bytes(bad))


def test_chunk_past_the_chunks_section() -> None:
    data = bytearray(SAMPLES[0])
    # chunk 0 claims more compressed bytes than the chunks section holds
    data[97 + 12 : 97 + 16] = struct.pack("<i", 5000)
    with (
        Frame(bytes(data)) as frame,
        pytest.raises(FormatError, match="runs past the chunks section"),
    ):
        frame.read_chunk(0)


def test_writer_argument_checks(tmp_path: Path) -> None:
    with Frame(None, "w", typesize=4) as f:
        with pytest.raises(ValueError, match="empty chunk"):
            f.append_chunk(blosc2.compress2(b"", typesize=1))
        with pytest.raises(ValueError, match="Blosc2 chunks"):
            import blosc

            f.append_chunk(blosc.compress(b"abcd" * 100, typesize=4))
        f.append_data(np.arange(10, dtype=np.int32))
        with pytest.raises(IndexError):
            f.update_chunk(3, blosc2.compress2(b"x" * 40))
        with pytest.raises(ValueError, match="permutation"):
            f.reorder([1])
        f.meta  # noqa: B018
        with pytest.raises(ValueError, match="only be added before chunks"):
            f.meta["new"] = 1
    with pytest.raises(TypeError, match="unknown frame options: colour"):
        Frame(None, "w", colour="red")
    with pytest.raises(ValueError, match="clevel"):
        Frame(None, "w", clevel=12)
    with pytest.raises(PermissionError), Frame(FRAMES / "one_chunk.b2frame") as f:
        f.append_chunk(blosc2.compress2(b"x" * 40))
    with pytest.raises(FileNotFound):
        Frame(tmp_path / "missing.b2frame")


def test_metalayer_updates_keep_their_length(tmp_path: Path) -> None:
    path = tmp_path / "m.b2frame"
    with Frame(path, "w", typesize=4, raw_meta={"raw": b"\x01\x02\x03"}, meta={"n": 5}) as f:
        f.append_data(np.arange(100, dtype=np.int32))
        f.meta.set_raw("raw", b"\x09\x08\x07")
        f.meta["n"] = 7
        with pytest.raises(ValueError, match="length cannot change"):
            f.meta["n"] = "longer"
    s = blosc2.open(str(path))
    assert s.meta["n"] == 7
    with Frame(path) as f:
        assert f.meta.raw("raw") == b"\x09\x08\x07"


def test_opening_a_big_frame_reads_only_header_trailer_and_index(tmp_path: Path) -> None:
    from bloscpack.containers import frame as cframe
    from bloscpack.containers.schunk.core import EDGE_READ
    from bloscpack.containers.schunk.storage import FrameStorage

    path = tmp_path / "many.b2frame"
    params = cframe.CParams.make(typesize=4)
    with cframe.FrameWriter(path, params, chunksize=400) as writer:
        for i in range(10_000):
            writer.append_data(np.full(100, i, dtype=np.int32))
    reads: list[tuple[int, int]] = []
    original = FrameStorage.read

    def counting(self: FrameStorage, pos: int, n: int, what: str) -> object:
        reads.append((pos, n))
        return original(self, pos, n, what)

    FrameStorage.read = counting  # type: ignore[method-assign]
    try:
        with Frame(path) as frame:
            opened = len(reads)
            assert np.frombuffer(frame.decompress_chunk(7777), np.int32)[0] == 7777
    finally:
        FrameStorage.read = original  # type: ignore[method-assign]
    assert opened <= 5 and len(reads) - opened == 2  # the chunk header, then the chunk
    chunks_section = frame.cbytes
    # the frame's first EDGE_READ bytes, then index and trailer
    assert sum(n for _, n in reads) < path.stat().st_size - chunks_section + EDGE_READ + 1000
