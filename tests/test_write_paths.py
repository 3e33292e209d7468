"""Every way of writing a new container of a format goes through its one writer, its options
read once by the format's settings: ``save``, ``convert`` from another format (and from the
same format in another layout) and the dask writer give the same bytes for the same array and
options.  (``.blp``: ``test_blp_write_paths.py``.)"""

from __future__ import annotations

import inspect
import tracemalloc
from pathlib import Path
from typing import Any

import blosc2
import numpy as np
import pytest

import bloscpack
from bloscpack.containers.b2nd import writer as b2nd_writer
from bloscpack.containers.bcolz import writer as bcolz_writer
from bloscpack.containers.schunk import writer as frame_writer

da = pytest.importorskip("dask.array")

ARRAY = np.cumsum(np.random.default_rng(7).normal(size=(400, 250)), axis=0)
#: Pinned so that the chunks never depend on the machine (default blocks depend on its caches).
OPTIONS: dict[str, dict[str, Any]] = {
    "b2nd": dict(chunks=(100, 250), blocks=(20, 250), codec="lz4", clevel=5),
    "bcolz": dict(
        chunklen=60, expectedlen=100_000, cname="zstd", quantize=3, dflt=1.5, attrs={"units": "m"}
    ),
    "b2frame": dict(chunksize=80_000, blocksize=16_000, codec="lz4", typesize=4),
    "sframe": dict(chunksize=80_000, blocksize=16_000, codec="zstd", use_dict=True),
}
#: The same format in another layout, which convert recompresses.
OTHER: dict[str, dict[str, Any]] = {
    "b2nd": dict(chunks=(64, 64), blocks=(16, 16), codec="zstd", clevel=1),
    "bcolz": dict(chunklen=37, clevel=1),
    "b2frame": dict(chunksize=50_000, clevel=1),
    "sframe": dict(chunksize=50_000, clevel=1),
}
SUFFIX = {"b2nd": ".b2nd", "bcolz": ".bcolz", "b2frame": ".b2frame", "sframe": ".sframe"}


def _contents(path: Path) -> dict[str, bytes]:
    """A file's bytes, or every file of a directory by its relative name."""
    if path.is_file():
        return {"": path.read_bytes()}
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


def _save(fmt: str, tmp: Path, out: Path, **options: Any) -> None:
    bloscpack.save(ARRAY, out, format=fmt, **options)


def _dask(fmt: str, tmp: Path, out: Path, **options: Any) -> None:
    bloscpack.save(da.from_array(ARRAY, chunks=(70, 90)), out, format=fmt, **options)


def _convert(fmt: str, tmp: Path, out: Path, **options: Any) -> None:
    bloscpack.save(ARRAY, tmp / "src.blp")
    bloscpack.convert(tmp / "src.blp", out, format=fmt, **options)


def _convert_same_format(fmt: str, tmp: Path, out: Path, **options: Any) -> None:
    source = tmp / f"src{SUFFIX[fmt]}"
    bloscpack.save(ARRAY, source, format=fmt, **OTHER[fmt])
    bloscpack.convert(source, out, format=fmt, **options)


PATHS = {"save": _save, "dask": _dask, "convert": _convert, "convert-same": _convert_same_format}


@pytest.mark.parametrize("nthreads", [None, 1, 3])
@pytest.mark.parametrize("write", PATHS.values(), ids=list(PATHS))
@pytest.mark.parametrize("fmt", list(OPTIONS))
def test_every_write_path_writes_the_bytes_save_writes(tmp_path: Path, fmt: str, write: Any,
                                                       nthreads: Any) -> None:  # fmt: skip
    options = {**OPTIONS[fmt], "nthreads": nthreads}
    saved, other = tmp_path / f"saved{SUFFIX[fmt]}", tmp_path / f"other{SUFFIX[fmt]}"
    _save(fmt, tmp_path, saved, **options)
    write(fmt, tmp_path, other, **options)
    assert _contents(other) == _contents(saved)
    np.testing.assert_allclose(bloscpack.load(other), ARRAY, rtol=0, atol=1e-3)  # bcolz: quantize


@pytest.mark.parametrize("fmt", list(OPTIONS))
def test_a_save_keeps_no_buffer_of_its_chunks(tmp_path: Path, fmt: str) -> None:
    """Once a save has returned, less than 16 KiB of the memory it took is still held: the
    compression buffers (a chunk each, 0.8 MB or more here, larger from one format to the
    next so that none an earlier save left fits) are let go of."""
    whole = {"b2nd": dict(chunks=(400, 250)), "bcolz": dict(chunklen=400),
             "b2frame": dict(chunksize=1_600_000), "sframe": dict(chunksize=2_400_000)}  # fmt: skip
    bloscpack.save(ARRAY, tmp_path / f"warm{SUFFIX[fmt]}", format=fmt, **OPTIONS[fmt])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        bloscpack.save(ARRAY, tmp_path / f"out{SUFFIX[fmt]}", format=fmt,
                       **{**OPTIONS[fmt], **whole[fmt]})  # fmt: skip
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 16 << 10


@pytest.mark.parametrize("write", PATHS.values(), ids=list(PATHS))
def test_a_sparse_b2nd_is_written_alike(tmp_path: Path, write: Any) -> None:
    options = {**OPTIONS["b2nd"], "sparse": True}
    _save("b2nd", tmp_path, tmp_path / "saved.b2nd", **options)
    write("b2nd", tmp_path, tmp_path / "other.b2nd", **options)
    assert tmp_path.joinpath("other.b2nd").is_dir()
    assert _contents(tmp_path / "other.b2nd") == _contents(tmp_path / "saved.b2nd")


@pytest.mark.parametrize("write", PATHS.values(), ids=list(PATHS))
def test_meta_and_vlmeta_in_every_b2nd_write_path(tmp_path: Path, write: Any) -> None:
    options = {**OPTIONS["b2nd"], "meta": {"units": "m"}, "vlmeta": {"note": [1, 2]}}
    write("b2nd", tmp_path, tmp_path / "out.b2nd", **options)
    array = blosc2.open(str(tmp_path / "out.b2nd"))
    assert array.schunk.meta["units"] == "m"
    assert array.schunk.vlmeta["note"] == [1, 2]
    _save("b2nd", tmp_path, tmp_path / "saved.b2nd", **options)
    assert _contents(tmp_path / "out.b2nd") == _contents(tmp_path / "saved.b2nd")


def test_convert_keeps_the_sources_meta_but_what_it_is_given(tmp_path: Path) -> None:
    bloscpack.save(ARRAY, tmp_path / "a.b2nd", meta={"a": 1, "b": 2}, vlmeta={"x": 1, "y": 2})
    bloscpack.convert(tmp_path / "a.b2nd", tmp_path / "c.b2nd", meta={"b": 3, "c": 4},
                      vlmeta={"y": 3})  # fmt: skip
    array = blosc2.open(str(tmp_path / "c.b2nd"))
    assert list(array.schunk.meta.keys()) == ["b2nd", "a", "b", "c"]
    assert [array.schunk.meta[k] for k in "abc"] == [1, 3, 4]
    assert {k: array.schunk.vlmeta[k] for k in array.schunk.vlmeta.getall()} == {"x": 1, "y": 3}


def test_b2nd_options_are_one_table() -> None:
    """save_b2nd's defaults, the conversion target's options and the format's lists are the
    table the settings read."""
    params = list(inspect.signature(b2nd_writer.save_b2nd).parameters.values())[2:]
    assert {p.name: p.default for p in params} == b2nd_writer.OPTIONS
    fmt = bloscpack.containers.registry.format_of("b2nd")
    assert fmt.conversion_options() is b2nd_writer.OPTIONS
    assert set(fmt.save_options) == set(b2nd_writer.OPTIONS)
    assert set(fmt.writer_options) == set(b2nd_writer.OPTIONS) - {"nthreads"}


TABLE = np.zeros(3000, dtype=[("a", "<f8"), ("b", "<i4", (2,))])
TABLE["a"], TABLE["b"] = np.arange(3000) * 0.25, np.arange(6000).reshape(3000, 2)


@pytest.mark.parametrize("write", ["save", "dask", "convert"])
def test_every_write_path_writes_the_ctable_save_writes(tmp_path: Path, write: str) -> None:
    options = dict(chunklen=700, expectedlen=9000, clevel=3, dflt={"a": 0.5}, attrs={"k": 1})
    bloscpack.save(TABLE, tmp_path / "saved.bcolz", **options)
    if write == "save":
        bloscpack.save(TABLE, tmp_path / "other.bcolz", **options)
    elif write == "dask":
        bloscpack.save(da.from_array(TABLE, chunks=333), tmp_path / "other.bcolz", **options)
    else:
        bloscpack.save(TABLE, tmp_path / "src.b2nd")
        bloscpack.convert(tmp_path / "src.b2nd", tmp_path / "other.bcolz", **options)
    assert _contents(tmp_path / "other.bcolz") == _contents(tmp_path / "saved.bcolz")
    np.testing.assert_array_equal(bloscpack.load(tmp_path / "other.bcolz"), TABLE)


def test_convert_quantizes_the_chunks_it_could_copy(tmp_path: Path) -> None:
    """A source's chunks of the carray's geometry and typesize are recompressed all the same
    when ``quantize`` asks for rounding (a copy would keep every digit)."""
    options = dict(chunklen=100, cname="lz4", clevel=5, shuffle=1, quantize=2)
    bloscpack.save(ARRAY, tmp_path / "saved.bcolz", **options)
    bloscpack.save(ARRAY, tmp_path / "src.blp", chunk_size=100 * 250 * 8, codec="lz4")
    report = bloscpack.convert(tmp_path / "src.blp", tmp_path / "c.bcolz", **options)
    assert (report["copied_chunks"], report["recompressed_chunks"]) == (0, 4)
    assert _contents(tmp_path / "c.bcolz") == _contents(tmp_path / "saved.bcolz")
    assert not np.array_equal(bloscpack.load(tmp_path / "c.bcolz"), ARRAY)


def test_bcolz_options_are_one_table() -> None:
    """save_bcolz's defaults (but ``overwrite``, the output's) and the conversion target's
    options are the table the settings read."""
    params = list(inspect.signature(bcolz_writer.save_bcolz).parameters.values())[2:]
    assert {p.name: p.default for p in params if p.name != "overwrite"} == bcolz_writer.OPTIONS
    fmt = bloscpack.containers.registry.format_of("bcolz")
    assert fmt.conversion_options() is bcolz_writer.OPTIONS
    assert set(fmt.save_options) == {*bcolz_writer.OPTIONS, "overwrite"}


@pytest.mark.parametrize("fmt", ["b2frame", "sframe"])
def test_frame_options_are_one_table(fmt: str) -> None:
    """The frames' conversion targets and array writers read one table."""
    found = bloscpack.containers.registry.format_of(fmt)
    assert found.conversion_options() is frame_writer.OPTIONS
    assert found.save_options is None  # bloscpack.save goes through the array writer


@pytest.mark.parametrize("fmt", ["b2frame", "sframe"])
def test_converted_dictionary_chunks_do_not_depend_on_the_threads(tmp_path: Path, fmt: str
                                                                  ) -> None:  # fmt: skip
    # chunks of many blocks, a dictionary trained on each: C-Blosc2 threads would change them
    options = dict(chunksize=80_000, blocksize=16_000, codec="zstd", use_dict=True)
    bloscpack.save(ARRAY, tmp_path / "saved", format=fmt, nthreads=3, **options)
    bloscpack.save(ARRAY, tmp_path / "src.blp")
    for _ in range(20):
        bloscpack.convert(tmp_path / "src.blp", tmp_path / "c", format=fmt, nthreads=3, **options)
        assert _contents(tmp_path / "c") == _contents(tmp_path / "saved")


@pytest.mark.parametrize("write", PATHS.values(), ids=list(PATHS))
@pytest.mark.parametrize("size", ["abc", 0, None])
def test_every_frame_write_path_refuses_a_bad_chunksize(tmp_path: Path, write: Any, size: Any
                                                        ) -> None:  # fmt: skip
    options = {"chunksize": size} if size is not None else {"chunksize": 100, "clevel": 10}
    with pytest.raises(bloscpack.errors.ArgumentError) as raised:
        write("b2frame", tmp_path, tmp_path / "out.b2frame", **options)
    if size is None:
        assert str(raised.value) == "clevel must be 0..9, got 10"
    else:
        assert str(raised.value) == f"chunksize must be a positive number of bytes, got {size!r}"
    assert not (tmp_path / "out.b2frame").exists()


@pytest.mark.parametrize("fmt", ["b2nd", "b2frame", "sframe"])
def test_the_header_records_the_threads_of_every_write_path(tmp_path: Path, fmt: str) -> None:
    """A Blosc2 frame's header records the C threads it was written with: those given to
    save and convert, else :func:`bloscpack.engine.get_nthreads`, as python-blosc2 does."""
    for n, write in enumerate(PATHS.values()):
        out = tmp_path / f"out{n}"
        write(fmt, tmp_path, out, nthreads=3)
        assert bloscpack.info(out)["header"]["nthreads_comp"] == 3
    bloscpack.save(ARRAY, tmp_path / "default", format=fmt)
    expected = bloscpack.engine.get_nthreads()
    assert bloscpack.info(tmp_path / "default")["header"]["nthreads_comp"] == expected


#: One chunk of the whole array, in blocks C threads can share.
LONE_CHUNK: dict[str, dict[str, Any]] = {
    "b2nd": dict(chunks=ARRAY.shape, blocks=(20, 250)),
    "b2nd with metadata": dict(chunks=ARRAY.shape, blocks=(20, 250), metadata={"a": 1}),
    "b2frame": dict(chunksize=ARRAY.nbytes, blocksize=16_000),
    "sframe": dict(chunksize=ARRAY.nbytes, blocksize=16_000),
}


@pytest.mark.parametrize("case", list(LONE_CHUNK))
def test_a_lone_chunk_is_compressed_with_every_c_thread(tmp_path: Path, case: str,
                                                        monkeypatch: Any) -> None:  # fmt: skip
    """Every frame format's save compresses a lone chunk with all C threads, into the bytes
    one thread gives."""
    calls = []
    compress = bloscpack.engine.compress_blosc2_into

    def spy(data: Any, dest: Any, **settings: Any) -> int:
        calls.append((memoryview(data).nbytes, settings.get("nthreads")))
        return compress(data, dest, **settings)

    monkeypatch.setattr(bloscpack.engine, "compress_blosc2_into", spy)
    chunks = []
    for n in (1, 3):
        out = tmp_path / f"{n}{SUFFIX[case.split()[0]]}"
        bloscpack.save(ARRAY, out, format=case.split()[0], nthreads=n, **LONE_CHUNK[case])
        with bloscpack.Frame(out) as frame:
            assert frame.nchunks == 1
            chunks.append(frame.read_chunk(0))
    assert [c for c in calls if c[0] == ARRAY.nbytes] == [(ARRAY.nbytes, 1), (ARRAY.nbytes, 3)]
    assert chunks[0] == chunks[1]
