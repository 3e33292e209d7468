"""``bloscpack.append`` and ``blpk append`` on every format that grows: the rows (or bytes) land
after the container's own, ``load`` gives the concatenation, ``verify`` passes and the real
peers (python-blosc2, bcolz, bloscpack 0.16) read the result exactly; what does not fit the
container, or a container that cannot grow, is refused by name before anything is written."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import bloscpack
from bloscpack.containers import registry
from bloscpack.dispatch import compress_file
from bloscpack.errors import ArgumentError, NotAppendable, UnsupportedError

ROWS = np.arange(3000, dtype="<i4").reshape(1000, 3)
TABLE = np.array([(i, i / 4) for i in range(1000)], dtype=[("a", "<i4"), ("b", "<f8")])
RAW = bytes(range(256)) * 40  # 10240 bytes


def _save(array: np.ndarray, name: str, **options: object) -> Callable[[Path], Path]:
    def make(directory: Path) -> Path:
        path = directory / name
        bloscpack.save(array, path, **options)
        return path

    return make


def _raw(name: str, **options: object) -> Callable[[Path], Path]:
    def make(directory: Path) -> Path:
        (directory / "raw.bin").write_bytes(RAW)
        compress_file(directory / "raw.bin", directory / name, **options)
        os.unlink(directory / "raw.bin")
        return directory / name

    return make


#: name: (the container's format, how to make it, what it holds)
CASES = {
    "blp": ("blp", _save(ROWS, "x.blp", chunk_size=4000), ROWS),
    "blp bytes": ("blp", _raw("x.blp", chunk_size=3000), np.frombuffer(RAW, np.uint8)),
    "b2frame": ("b2frame", _save(ROWS, "x.b2frame", chunk_size=4000), ROWS),
    "b2frame bytes": (
        "b2frame",
        _raw("x.b2frame", chunk_size=3000),
        np.frombuffer(RAW, np.uint8),
    ),  # fmt: skip
    "sframe": ("sframe", _save(ROWS, "x.b2sframe", chunk_size=4000), ROWS),
    "b2nd": ("b2nd", _save(ROWS, "x.b2nd", chunks=(300, 2), blocks=(100, 2)), ROWS),
    "b2nd sparse": (
        "b2nd",
        _save(ROWS, "x.b2nd", chunks=(300, 2), blocks=(100, 2), sparse=True),
        ROWS,
    ),  # fmt: skip
    "bcolz carray": ("bcolz", _save(ROWS, "x.bcolz", chunks=(300,)), ROWS),
    "bcolz ctable": ("bcolz", _save(TABLE, "x.bcolz", chunks=(300,)), TABLE),
}


def more_rows(held: np.ndarray, n: int, shift: int) -> np.ndarray:
    """``n`` rows fitting ``held``, its values shifted."""
    rows = np.resize(held, (n, *held.shape[1:])).copy()
    if rows.dtype.names:
        rows["a"] += shift
        return rows
    return rows + np.array(shift).astype(rows.dtype)


def blpk(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bloscpack", *map(str, args)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def peer_read(path: Path, fmt: str, like: np.ndarray, bloscpack016) -> np.ndarray:
    """What the real peer of ``fmt`` reads at ``path``, as an array like ``like``."""
    if fmt == "blp":
        out = path.parent / "peer.bin"
        bloscpack016.run("bloscpack.unpack_file(sys.argv[1], sys.argv[2])".replace(
            "sys.argv", "__import__('sys').argv"), str(path), str(out))  # fmt: skip
        data = out.read_bytes()
        out.unlink()
        return np.frombuffer(data, like.dtype).reshape(-1, *like.shape[1:])
    if fmt == "bcolz":
        bcolz = pytest.importorskip("bcolz")
        return np.asarray(bcolz.open(str(path), mode="r")[:])
    import blosc2

    opened = blosc2.open(str(path))
    if fmt == "b2nd":
        return np.asarray(opened[:])
    data = b"".join(opened.decompress_chunk(i) for i in range(opened.nchunks))  # every byte
    return np.frombuffer(data, like.dtype).reshape(-1, *like.shape[1:])


def test_every_appendable_format_has_a_case():
    assert sorted({fmt for fmt, _, _ in CASES.values()}) == sorted(registry.appendable())
    assert registry.appendable() == ["blp", "b2frame", "b2nd", "sframe", "bcolz"]


@pytest.mark.parametrize("via", ["python", "cli"])
@pytest.mark.parametrize("case", CASES)
def test_append_grows_every_format(tmp_path, case, via, bloscpack016):
    fmt, make, held = CASES[case]
    path = make(tmp_path)
    assert bloscpack.detect(path) == fmt
    first, second = more_rows(held, 777, 1), more_rows(held, 5, 2)
    if held.dtype == np.uint8:  # a container of bytes: bytes in
        first, second = np.frombuffer(RAW[:777], np.uint8), np.frombuffer(RAW[7:12], np.uint8)
    expected = held
    for rows in (first, second):
        expected = np.concatenate([expected, rows])
        if via == "python":
            data = rows.tobytes() if rows.dtype == np.uint8 else rows
            assert bloscpack.append(path, data) == len(expected)
        else:
            new = tmp_path / ("rows.bin" if rows.dtype == np.uint8 else "rows.npy")
            if new.suffix == ".npy":
                np.save(new, rows)
            else:
                new.write_bytes(rows.tobytes())
            proc = blpk("a", path, new)
            assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
            new.unlink()
    got = bloscpack.load(path)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    report = bloscpack.verify(path)
    assert (report["ok"], report["bad_chunks"], report["problems"]) == (True, [], [])
    np.testing.assert_array_equal(peer_read(path, fmt, held, bloscpack016), expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no journal left


def test_append_to_raw_bytes_of_an_array_container(tmp_path):
    """Bytes appended to a container of an array are its rows, in C order."""
    path = tmp_path / "x.b2nd"
    bloscpack.save(ROWS, path, chunks=(300, 2))
    assert bloscpack.append(path, ROWS[:4].tobytes()) == 1004
    np.testing.assert_array_equal(bloscpack.load(path), np.concatenate([ROWS, ROWS[:4]]))


def test_blpk_appends_an_npy_file_to_raw_bytes_whole_as_016_did(tmp_path, bloscpack016):
    """A ``.npy`` file whose rows a raw-bytes ``.blp`` cannot take (they are no bytes) is
    appended as its bytes, header and all, as bloscpack 0.16's ``blpk append`` did."""
    raw = bytes(range(256)) * 400
    (tmp_path / "raw.bin").write_bytes(raw)
    np.save(tmp_path / "f.npy", np.arange(10.0))
    path = tmp_path / "raw.blp"
    compress_file(tmp_path / "raw.bin", path)
    proc = blpk("a", path, tmp_path / "f.npy")
    assert (proc.returncode, proc.stderr) == (0, "")
    whole = raw + (tmp_path / "f.npy").read_bytes()
    assert bloscpack.load(path).tobytes() == whole
    assert peer_read(path, "blp", np.zeros(0, np.uint8), bloscpack016).tobytes() == whole


def test_nothing_to_append_changes_nothing(tmp_path):
    for case in ("b2frame", "b2nd", "sframe"):
        path = CASES[case][1](tmp_path)
        before = tree(path)
        assert bloscpack.append(path, ROWS[:0]) == 1000
        assert tree(path) == before


def tree(path: Path) -> dict[str, str]:
    """Every file of the container ``path`` (a file or a directory) and its digest."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return {str(p.relative_to(path.parent)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in files}  # fmt: skip


MISFITS = [
    (np.zeros((2, 3), "<f8"), "rows of dtype float64 and shape (2, 3) do not fit it"),
    (np.zeros((2, 4), "<i4"), "rows of dtype int32 and shape (2, 4) do not fit it"),
    (np.zeros(3, "<i4"), "rows of dtype int32 and shape (3,) do not fit it"),
    (b"\0" * 13, "the 13 bytes to append are not whole rows of 12 bytes"),
    ([[1, 2]], "rows of dtype int32 and shape (1, 2) do not fit it"),
    (["x"], "cannot append list to it: invalid literal for int() with base 10: 'x'"),
]


@pytest.mark.parametrize("case", [c for c in CASES if CASES[c][2] is ROWS])
@pytest.mark.parametrize(("data", "message"), MISFITS)
def test_rows_that_do_not_fit_are_refused_before_anything_is_written(tmp_path, case, data,
                                                                     message):  # fmt: skip
    path = CASES[case][1](tmp_path)
    before = tree(path)
    with pytest.raises(ArgumentError) as raised:
        bloscpack.append(path, data)
    assert str(raised.value).startswith(
        f"{path}: holds an array of dtype int32 and shape (1000, 3)"
    )
    assert message in str(raised.value)
    assert tree(path) == before


def test_a_table_takes_its_own_records_only(tmp_path):
    path = CASES["bcolz ctable"][1](tmp_path)
    before = tree(path)
    other = np.zeros(2, dtype=[("a", "<i4"), ("c", "<f8")])
    with pytest.raises(ArgumentError, match=r"rows of dtype \[\('a', '<i4'\), \('c', '<f8'\)\]"):
        bloscpack.append(path, other)
    assert tree(path) == before


def test_a_blosc_chunk_is_refused_by_name(tmp_path):
    path = tmp_path / "c.bin"
    path.write_bytes(bloscpack.compress_chunk(b"abcd" * 100))
    with pytest.raises(NotAppendable) as raised:
        bloscpack.append(path, b"more")
    assert str(raised.value) == (
        f"{path}: one Blosc chunk cannot grow in place; convert it to a format that can (blp,"
        " b2frame, b2nd, sframe, bcolz) first"
    )
    assert isinstance(raised.value, UnsupportedError)
    proc = blpk("a", "-e", path, path.parent / "c.bin")
    assert proc.returncode == 1
    (tmp_path / "more.bin").write_bytes(b"more")
    proc = blpk("a", "-e", path, tmp_path / "more.bin")
    assert (proc.returncode, proc.stderr) == (1, f"blpk: error: {raised.value}\n")


def test_zero_d_and_fortran_arrays_cannot_grow(tmp_path):
    bloscpack.save(np.float64(3.5), tmp_path / "s.b2frame")
    with pytest.raises(ArgumentError, match="holds a 0-d array, which cannot grow"):
        bloscpack.append(tmp_path / "s.b2frame", np.zeros(1))
    bloscpack.save(np.asfortranarray(ROWS), tmp_path / "f.blp")
    with pytest.raises(ArgumentError, match="holds a Fortran-order array, which cannot grow"):
        bloscpack.append(tmp_path / "f.blp", ROWS[:1])


def test_format_options_only_where_the_format_takes_them(tmp_path):
    path = CASES["b2nd"][1](tmp_path)
    with pytest.raises(ArgumentError, match=r"unknown option\(s\) for format 'b2nd': metadata"):
        bloscpack.append(path, ROWS[:1], metadata={"a": 1})
    np.save(tmp_path / "r.npy", ROWS[:1])
    proc = blpk("a", "-l", "3", path, tmp_path / "r.npy")
    assert (proc.returncode, proc.stderr) == (
        1,
        f"blpk: error: -t/-l/-s/-c do not apply to '{path}' (python-blosc2 NDArray): its"
        " appends use its own compression parameters and metadata\n",
    )
    blp = CASES["blp"][1](tmp_path)
    bloscpack.append(blp, ROWS[:2], blosc_args={"clevel": 9, "cname": "zstd"})
    np.testing.assert_array_equal(bloscpack.load(blp), np.concatenate([ROWS, ROWS[:2]]))


def test_a_url_is_refused():
    with pytest.raises(UnsupportedError, match="cannot append to a URL"):
        bloscpack.append("s3://bucket/x.b2nd", ROWS)


def test_bloscpack_append_is_the_016_module_and_callable(tmp_path):
    import bloscpack.append as module
    from bloscpack.append import JOURNAL_SUFFIX, append, append_fp, recover

    assert module is bloscpack.append
    assert (module.append, module.append_fp, module.recover) == (append, append_fp, recover)
    assert JOURNAL_SUFFIX == ".journal"
    path = tmp_path / "x.blp"
    bloscpack.save(ROWS, path)
    assert bloscpack.append(path, ROWS[:2]) == 1002  # the new append, on any format
    (tmp_path / "more.bin").write_bytes(ROWS[:3].tobytes())
    assert append(path, tmp_path / "more.bin") == 0  # 0.16's: chunks added
    np.testing.assert_array_equal(bloscpack.load(path), np.concatenate([ROWS, ROWS[:2], ROWS[:3]]))
    code = "from bloscpack.append import *; print(sorted(k for k in dir() if k[0] != '_'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(sorted(module.__all__))


@pytest.mark.parametrize("case", [c for c in CASES if CASES[c][2] is ROWS])
def test_an_empty_array_grows(tmp_path, case):
    fmt, _, _ = CASES[case]
    path = tmp_path / f"e{registry.get(fmt).extension}"
    options = {"chunks": (300, 3), "sparse": case == "b2nd sparse"} if fmt == "b2nd" else {}
    bloscpack.save(ROWS[:0], path, **options)
    assert bloscpack.append(path, ROWS[:4]) == 4
    np.testing.assert_array_equal(bloscpack.load(path), ROWS[:4])


def test_an_ndarray_with_empty_chunks_cannot_grow(tmp_path):
    """python-blosc2 gives an empty array chunks of 0 rows."""
    path = tmp_path / "e.b2nd"
    bloscpack.save(ROWS[:0], path)
    before = tree(path)
    with pytest.raises(NotAppendable) as raised:
        bloscpack.append(path, ROWS[:4])
    assert str(raised.value) == (
        f"{path}: an NDArray with chunks (0, 3) (python-blosc2's for an empty array) cannot"
        " grow; save it again with chunks of at least one item on every axis"
    )
    assert tree(path) == before


@pytest.mark.parametrize("case", ["b2frame", "b2nd", "sframe", "b2nd sparse"])
def test_a_failed_append_leaves_the_container_as_it_was(tmp_path, case, monkeypatch):
    """An error after the new chunks are written (here: writing the index) undoes them."""
    from bloscpack.containers.schunk.edit import FrameBase

    path = CASES[case][1](tmp_path)
    before = tree(path)

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(FrameBase, "_commit", fail)
    with pytest.raises(OSError, match="disk full"):
        bloscpack.append(path, ROWS[:777])
    assert tree(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no journal
    monkeypatch.undo()
    np.testing.assert_array_equal(bloscpack.load(path), ROWS)


def test_016_append_on_another_format_says_what_appends_to_it(tmp_path):
    from bloscpack.append import append
    from bloscpack.errors import NotAContainer

    path = CASES["b2nd"][1](tmp_path)
    for data in (ROWS[:2], path):
        with pytest.raises(NotAContainer) as raised:
            append(path, data)
        assert str(raised.value) == (
            f"{path}: not a .blp file (the magic marker b'blpk' is missing), which this append of"
            " bloscpack 0.16's takes; bloscpack.append(path, data) appends to every format that"
            " grows"
        )


@pytest.mark.parametrize("contiguous", [True, False])
def test_append_to_what_python_blosc2_wrote(tmp_path, contiguous):
    """An NDArray and an SChunk python-blosc2 wrote grow, and python-blosc2 reads them."""
    blosc2 = pytest.importorskip("blosc2")
    cube = np.arange(7 * 5 * 6, dtype="<f4").reshape(7, 5, 6)
    path = tmp_path / "c.b2nd"
    blosc2.asarray(cube, urlpath=str(path), mode="w", contiguous=contiguous, chunks=(3, 2, 6),
                   blocks=(1, 2, 3))  # fmt: skip
    assert bloscpack.append(path, cube[:4] + 100) == 11
    expected = np.concatenate([cube, cube[:4] + 100])
    opened = blosc2.open(str(path))
    assert (opened.shape, opened.chunks, opened.blocks) == ((11, 5, 6), (3, 2, 6), (1, 2, 3))
    np.testing.assert_array_equal(opened[:], expected)
    np.testing.assert_array_equal(bloscpack.load(path), expected)
    frame = tmp_path / "s.b2frame"
    schunk = blosc2.SChunk(chunksize=4000, urlpath=str(frame), mode="w", contiguous=contiguous,
                           cparams={"typesize": 4})  # fmt: skip
    schunk.append_data(np.arange(1000, dtype="<i4"))
    schunk.append_data(np.arange(500, dtype="<i4"))  # a partial last chunk
    del schunk
    assert bloscpack.append(frame, np.arange(2000, dtype="<i4").tobytes()) == 14000
    opened = blosc2.open(str(frame))
    assert (opened.nbytes, opened.chunksize, opened.nchunks) == (14000, 4000, 4)
    want = np.concatenate([np.arange(1000), np.arange(500), np.arange(2000)]).astype("<i4")
    np.testing.assert_array_equal(np.frombuffer(opened[:], "<i4"), want)


def test_chunks_replaced_in_the_middle_of_a_frame_file_become_holes(tmp_path):
    """When the chunks an append rebuilds are not at the end of the chunks section (a frame
    reordered in place), the new ones go after it, as C-Blosc2 places updated chunks."""
    blosc2 = pytest.importorskip("blosc2")
    saved = tmp_path / "s.b2nd"
    bloscpack.save(ROWS, saved, chunks=(300, 3), blocks=(100, 3))  # chunk 3 is partial
    with bloscpack.Frame(saved) as frame:
        chunks = [frame.read_chunk(i) for i in range(4)]
        layer, params = frame.meta.raw("b2nd"), frame.cparams
    path = tmp_path / "r.b2nd"
    with bloscpack.Frame(path, "w", raw_meta={"b2nd": layer}, typesize=params["typesize"],
                         chunksize=frame.chunksize) as frame:  # fmt: skip
        for i in (3, 0, 1, 2):  # the partial chunk stored first
            frame.append_chunk(chunks[i])
        frame.reorder([1, 2, 3, 0])
        assert frame.offsets[3] == 0
    np.testing.assert_array_equal(bloscpack.load(path), ROWS)
    size = path.stat().st_size
    assert bloscpack.append(path, ROWS[:50]) == 1050
    expected = np.concatenate([ROWS, ROWS[:50]])
    np.testing.assert_array_equal(blosc2.open(str(path))[:], expected)
    np.testing.assert_array_equal(bloscpack.load(path), expected)
    assert bloscpack.verify(path)["ok"]
    assert path.stat().st_size > size
