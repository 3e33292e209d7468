"""The rules written once above the formats, checked over every format: the format an output
gets from ``format=`` and its name, the refusal of other tools' suffixes and of contradictions,
the overwrite rule of ``save``/``convert`` and of ``blpk``, the error for unknown names, the
refusal before any work of what a container cannot hold whole (masks, dtypes, arrays a format
cannot hold), and ``load`` of what ``open`` takes."""

from __future__ import annotations

import importlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bloscpack
from bloscpack.containers import b2nd, bcolz, registry
from bloscpack.convert import convert
from bloscpack.dispatch import compress_file
from bloscpack.errors import (
    ArgumentError,
    BloscpackError,
    ChecksumMismatch,
    DataLossError,
    InvalidCodePoint,
    ObjectNumpyArrayRejection,
    OutputExistsError,
    UnsupportedError,
)

FORMATS = list(registry.FORMATS)
ARRAY = np.arange(12_000, dtype="<f8").reshape(4000, 3)


def blpk(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bloscpack", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)  # fmt: skip


def test_one_table_of_names_and_suffixes():
    assert FORMATS == ["blp", "b2frame", "b2nd", "sframe", "bcolz"]
    assert [f.extension for f in registry.FORMATS.values()] == [
        ".blp", ".b2frame", ".b2nd", ".b2sframe", ".bcolz"
    ]  # fmt: skip
    assert tuple(FORMATS) == bloscpack.dispatch.FORMATS
    assert tuple(FORMATS) == importlib.import_module("bloscpack.convert").FORMATS
    from bloscpack import cli

    assert tuple(FORMATS) == cli.FORMATS
    assert registry.get("bloscpack").name == "blp"
    assert registry.get("B2ND").name == "b2nd"


@pytest.mark.parametrize("fmt", FORMATS)
def test_save_takes_the_format_from_the_suffix(tmp_path: Path, fmt: str):
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    bloscpack.save(ARRAY, path)
    assert bloscpack.detect(path) == fmt
    assert path.is_dir() == registry.FORMATS[fmt].directory
    loaded = bloscpack.load(path)
    assert loaded.dtype == ARRAY.dtype and np.array_equal(loaded, ARRAY)


@pytest.mark.parametrize("fmt", FORMATS)
def test_convert_takes_the_format_from_the_suffix(tmp_path: Path, fmt: str):
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    assert convert(tmp_path / "a.blp", path)["format"] == fmt
    assert bloscpack.detect(path) == fmt
    assert np.array_equal(bloscpack.load(path), ARRAY)


@pytest.mark.parametrize("name", ["x.dat", "x", "x.BLP.tmp"])
def test_no_known_suffix_gives_blp(tmp_path: Path, name: str):
    bloscpack.save(ARRAY, tmp_path / name)
    assert bloscpack.detect(tmp_path / name) == "blp"


@pytest.mark.parametrize("ext", sorted(registry.FOREIGN))
def test_other_tools_suffixes_are_refused(tmp_path: Path, ext: str):
    path = tmp_path / f"x{ext}"
    with pytest.raises(UnsupportedError, match=rf"\{ext} is the suffix of another format"):
        bloscpack.save(ARRAY, path)
    assert not path.exists()
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    with pytest.raises(UnsupportedError, match="name the output with one of .blp, "):
        convert(tmp_path / "a.blp", path)
    assert not path.exists()


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_format_contradicting_the_suffix_is_refused(tmp_path: Path, fmt: str):
    other = next(f for f in FORMATS if f != fmt and {f, fmt} != {"sframe", "b2frame"})
    path = tmp_path / f"x{registry.FORMATS[other].extension}"
    message = f"format '{fmt}' was asked, but the suffix .* names '{other}'"
    with pytest.raises(ArgumentError, match=message):
        bloscpack.save(ARRAY, path, format=fmt)
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    with pytest.raises(ArgumentError, match=message):
        convert(tmp_path / "a.blp", path, format=fmt)
    assert not path.exists()
    # a name without a known suffix takes any format
    bloscpack.save(ARRAY, tmp_path / "plain", format=fmt)
    assert bloscpack.detect(tmp_path / "plain") == fmt


@pytest.mark.parametrize("fmt", FORMATS)
def test_save_replaces_an_existing_output_and_overwrite_false_refuses(tmp_path: Path, fmt: str):
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    bloscpack.save(ARRAY, path)
    bloscpack.save(ARRAY * 2, path)  # as numpy.save does
    assert np.array_equal(bloscpack.load(path), ARRAY * 2)
    with pytest.raises(OutputExistsError, match="already exists"):
        bloscpack.save(ARRAY * 3, path, overwrite=False)
    assert np.array_equal(bloscpack.load(path), ARRAY * 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary left


@pytest.mark.parametrize("fmt", FORMATS)
def test_save_stages_its_output_once(tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch):
    """One staged output per save: a format's own writer called inside it builds in place
    (one private directory, one rename into place), also when the save fails midway."""
    from bloscpack.io import staging

    staged: list[str] = []
    real_open = staging.StagedOutput.open

    def counting_open(self: staging.StagedOutput) -> str:
        path = real_open(self)
        if not self.nested and os.path.dirname(self.target) == str(tmp_path):
            staged.append(path)  # (member files staged inside the container do not count)
        return path

    monkeypatch.setattr(staging.StagedOutput, "open", counting_open)
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    bloscpack.save(ARRAY, path)
    assert len(staged) == 1 and np.array_equal(bloscpack.load(path), ARRAY)
    with pytest.raises(ArgumentError):
        bloscpack.save(ARRAY, path, clevel=99)
    assert np.array_equal(bloscpack.load(path), ARRAY)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    assert not staging._BUILDING  # noqa: SLF001 - nothing left registered as being built


@pytest.mark.parametrize("fmt", FORMATS)
def test_convert_replaces_an_existing_output_and_overwrite_false_refuses(tmp_path: Path,
                                                                         fmt: str):  # fmt: skip
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    bloscpack.save(ARRAY * 2, tmp_path / "b.blp")
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    convert(tmp_path / "a.blp", path)
    convert(tmp_path / "b.blp", path)
    assert np.array_equal(bloscpack.load(path), ARRAY * 2)
    with pytest.raises(OutputExistsError, match="already exists"):
        convert(tmp_path / "a.blp", path, overwrite=False)
    assert np.array_equal(bloscpack.load(path), ARRAY * 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a.blp", "b.blp", path.name])


WRITERS = {  # (directory holding the sources, output path)
    "save": lambda here, path: bloscpack.save(ARRAY, path),
    "convert": lambda here, path: convert(here / "src.blp", path),
    "compress_file": lambda here, path: compress_file(here / "src.npy", path),
}


def _sources(tmp_path: Path) -> None:
    bloscpack.save(ARRAY, tmp_path / "src.blp")
    np.save(tmp_path / "src.npy", ARRAY)


@pytest.mark.parametrize("write", WRITERS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_directory_of_other_files_is_never_replaced(tmp_path: Path, fmt: str, write: str):
    _sources(tmp_path)
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    path.mkdir()
    (path / "notes.txt").write_text("precious")
    refused = "is a directory that is not a Blosc container; not replacing it"
    with pytest.raises(OutputExistsError, match=refused):
        WRITERS[write](tmp_path, path)
    assert [p.name for p in path.iterdir()] == ["notes.txt"]
    assert (path / "notes.txt").read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.blp", "src.npy", path.name]


@pytest.mark.parametrize("write", WRITERS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_an_empty_directory_or_another_container_is_replaced(tmp_path: Path, fmt: str,
                                                             write: str):  # fmt: skip
    _sources(tmp_path)
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    path.mkdir()
    WRITERS[write](tmp_path, path)
    assert registry.detect(path) == fmt and np.array_equal(bloscpack.load(path), ARRAY)
    shutil.rmtree(path) if path.is_dir() else path.unlink()
    other = registry.FORMATS["sframe" if fmt == "bcolz" else "bcolz"]
    bloscpack.save(ARRAY * 2, tmp_path / f"o{other.extension}")
    (tmp_path / f"o{other.extension}").rename(path)  # a directory container of another format
    WRITERS[write](tmp_path, path)
    assert registry.detect(path) == fmt and np.array_equal(bloscpack.load(path), ARRAY)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.blp", "src.npy", path.name]


@pytest.mark.parametrize("write", WRITERS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_an_output_in_a_missing_directory_is_refused(tmp_path: Path, fmt: str, write: str):
    _sources(tmp_path)
    path = tmp_path / "missing" / f"x{registry.FORMATS[fmt].extension}"
    with pytest.raises(BloscpackError, match="the directory .* does not exist"):
        WRITERS[write](tmp_path, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.blp", "src.npy"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_blpk_compress_takes_the_format_from_the_output_name(tmp_path: Path, fmt: str):
    np.save(tmp_path / "a.npy", ARRAY)
    name = f"out{registry.FORMATS[fmt].extension}"
    proc = blpk("c", "a.npy", name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert bloscpack.detect(tmp_path / name) == fmt
    assert np.array_equal(bloscpack.load(tmp_path / name), ARRAY)
    proc = blpk("c", "a.npy", name, cwd=tmp_path)  # 0.16's rule: refuse unless -f
    assert (proc.returncode, proc.stderr) == (1, f"blpk: error: output file '{name}' exists!\n")
    proc = blpk("c", "-f", "a.npy", name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert np.array_equal(bloscpack.load(tmp_path / name), ARRAY)


def test_blpk_compress_refuses_other_tools_suffixes_and_contradictions(tmp_path: Path):
    np.save(tmp_path / "a.npy", ARRAY)
    proc = blpk("c", "a.npy", "b.npy", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.endswith(".npy is the suffix of another format (written by numpy.save);"
                                " name the output with one of .blp, .b2frame, .b2nd, .b2sframe,"
                                " .bcolz or none\n")  # fmt: skip
    proc = blpk("c", "--format", "bcolz", "a.npy", "b.b2nd", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.endswith("format 'bcolz' was asked, but the suffix .b2nd names 'b2nd';"
                                " drop one or make them agree\n")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy"]


@pytest.mark.parametrize(
    "call",
    [
        lambda tmp: bloscpack.save(ARRAY, tmp / "x", format="zarr"),
        lambda tmp: convert(tmp / "a.blp", tmp / "x", format="zarr"),
        lambda tmp: compress_file(tmp / "a.blp", tmp / "x", format="zarr"),
    ],
    ids=["save", "convert", "compress_file"],
)
def test_an_unknown_format_name_gets_one_error(tmp_path: Path, call):
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    with pytest.raises(ArgumentError) as caught:
        call(tmp_path)
    assert str(caught.value) == (
        "unknown format 'zarr'; choose one of blp, b2frame, b2nd, sframe, bcolz"
    )
    assert isinstance(caught.value, BloscpackError) and isinstance(caught.value, ValueError)


@pytest.mark.parametrize("fmt", FORMATS)
def test_raw_input_gets_a_dtype_and_shape(tmp_path: Path, fmt: str):
    ARRAY.tofile(tmp_path / "raw.bin")
    name = f"out{registry.FORMATS[fmt].extension}"
    proc = blpk("c", "--dtype", "<f8", "--shape", "4000,3", "raw.bin", name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    loaded = bloscpack.load(tmp_path / name)
    assert loaded.dtype == ARRAY.dtype and np.array_equal(loaded, ARRAY)
    # the same from Python, 1-d by default; from stdin too
    compress_file(tmp_path / "raw.bin", tmp_path / f"py{name}", fmt, dtype="float64")
    assert np.array_equal(bloscpack.load(tmp_path / f"py{name}"), ARRAY.reshape(-1))
    with open(tmp_path / "raw.bin", "rb") as stdin:
        proc = subprocess.run([sys.executable, "-m", "bloscpack", "c", "--dtype", "f8", "-",
                               f"in{name}"], stdin=stdin, capture_output=True, cwd=tmp_path,
                              timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert np.array_equal(bloscpack.load(tmp_path / f"in{name}"), ARRAY.reshape(-1))


def test_raw_input_dtype_errors(tmp_path: Path):
    ARRAY.tofile(tmp_path / "raw.bin")
    np.save(tmp_path / "a.npy", ARRAY)
    cases = [
        (("--dtype", "f8", "--shape", "7,3"), 1,
         "blpk: error: raw.bin: 12000 items of dtype float64 do not fill shape (7, 3)\n"),
        (("--dtype", "zz"), 2,
         "blpk: error: argument --dtype: dtype 'zz' is not a numpy dtype (e.g. 'f8', '<i4')\n"),
        (("--dtype", "O"), 2, "blpk: error: argument --dtype: arrays of dtype object hold"),
        (("--shape", "3"), 2, "blpk: error: --shape needs --dtype (the item type of the raw"
                              " input)\n"),
        (("-t", "4", "--dtype", "f8"), 2,
         "blpk: error: -t does not apply with --dtype: the item size is used\n"),
        (("--dtype", "<f4", "--shape", "1,2,x"), 2, "not a shape: '1,2,x'"),
    ]  # fmt: skip
    for options, code, message in cases:
        proc = blpk("c", *options, "raw.bin", "out.blp", cwd=tmp_path)
        assert proc.returncode == code, (options, proc.stderr)
        assert message in proc.stderr, (options, proc.stderr)
    proc = blpk("c", "--dtype", "f8", "a.npy", "out.blp", cwd=tmp_path)
    assert (proc.returncode, proc.stderr.splitlines()[-1]) == (
        2, "blpk: error: --dtype does not apply to .npy input: its dtype is used"
    )  # fmt: skip
    with pytest.raises(ArgumentError, match="bytes are not whole items of dtype float32"):
        (tmp_path / "odd.bin").write_bytes(b"12345")
        compress_file(tmp_path / "odd.bin", tmp_path / "x.b2nd", "b2nd", dtype="f4")
    with pytest.raises(ArgumentError, match="a .npy file has its own dtype"):
        compress_file(tmp_path / "a.npy", tmp_path / "x.b2nd", "b2nd", dtype="f4")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "odd.bin", "raw.bin"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unknown_option_names_the_known_ones(tmp_path: Path, fmt: str):
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    with pytest.raises(ArgumentError, match=rf"unknown option\(s\) for format '{fmt}': colour;"
                                            r" known: .*clevel"):  # fmt: skip
        bloscpack.save(ARRAY, path, colour="red")
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    with pytest.raises(ArgumentError, match=rf"unknown option\(s\) for format '{fmt}': colour;"):
        convert(tmp_path / "a.blp", path, colour="red")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.blp"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_codec_and_clevel_are_checked_alike(tmp_path: Path, fmt: str):
    """``codec`` names the codec for every format; a bad one or a bad level is refused with
    one error class before anything is written."""
    from bloscpack.errors import NoSuchCodec

    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    bloscpack.save(ARRAY, path, codec="zlib")
    assert np.array_equal(bloscpack.load(path), ARRAY)
    with pytest.raises(NoSuchCodec, match=r"^unknown codec 'nope'; .* are written with blosclz,"
                                          r" lz4, lz4hc, zlib, zstd$"):  # fmt: skip
        bloscpack.save(ARRAY, path, codec="nope")
    with pytest.raises(NoSuchCodec, match=r"^codec 'snappy' cannot be written to .* \(it is only"
                                          r" read\); use one of blosclz, lz4, lz4hc, zlib, zstd$"):
        bloscpack.save(ARRAY, path, codec="snappy")
    with pytest.raises(ArgumentError, match="clevel"):
        bloscpack.save(ARRAY, path, clevel=10)
    assert np.array_equal(bloscpack.load(path), ARRAY)  # the earlier file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


# --- one set of option names --------------------------------------------------------------

COLUMNS = np.arange(120_000, dtype="<f8").reshape(30_000, 4)
#: Each format's own name for the bytes or rows of a chunk, which ``chunks`` stands for.
OWN_CHUNK_OPTION = {"blp": "chunk_size", "b2frame": "chunksize", "sframe": "chunksize",
                    "bcolz": "chunklen"}  # fmt: skip


def first_chunk(path: Path) -> tuple[int, dict]:
    from bloscpack.chunks import inspect_chunk

    with registry.open_reader(str(path), registry.detect(path)) as reader:
        return reader.nchunks, inspect_chunk(bytes(reader.stored_chunk(0)))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("write", ["save", "convert"])
def test_common_options_mean_the_same_in_every_format(tmp_path: Path, fmt: str, write: str):
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    options = {"codec": "zstd", "clevel": 3, "filters": ["bitshuffle"], "chunks": 5000}
    if write == "save":
        bloscpack.save(COLUMNS, path, **options)
    else:
        bloscpack.save(COLUMNS, tmp_path / "a.blp")
        convert(tmp_path / "a.blp", path, **options)
    nchunks, header = first_chunk(path)
    assert nchunks == 6
    assert (header["codec"], header["filters"], header["nbytes"]) == ("zstd", ["bitshuffle"],
                                                                       5000 * 4 * 8)  # fmt: skip
    assert np.array_equal(bloscpack.load(path), COLUMNS)


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_filters_in_every_format(tmp_path: Path, fmt: str):
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    bloscpack.save(COLUMNS, path, filters=[], chunks=(10_000, 4))
    nchunks, header = first_chunk(path)
    assert (nchunks, header["filters"]) == (3, [])


@pytest.mark.parametrize("fmt", FORMATS)
def test_chunks_that_cut_rows(tmp_path: Path, fmt: str):
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    if fmt == "b2nd":
        bloscpack.save(COLUMNS, path, chunks=(5000, 2))
        assert first_chunk(path)[0] == 12
        return
    with pytest.raises(ArgumentError, match=r"format '\w+' cuts arrays along their first axis"
                       r" only: chunks must be rows or \(rows, 4\), got \(5000, 2\)"):  # fmt: skip
        bloscpack.save(COLUMNS, path, chunks=(5000, 2))
    assert not path.exists()


@pytest.mark.parametrize("fmt", sorted(OWN_CHUNK_OPTION))
def test_a_common_option_and_its_own_name_together_are_refused(tmp_path: Path, fmt: str):
    own = OWN_CHUNK_OPTION[fmt]
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    with pytest.raises(ArgumentError, match=f"give chunks or {own}, not both"):
        bloscpack.save(COLUMNS, path, chunks=5000, **{own: 1000})
    bloscpack.save(COLUMNS, path, **{own: 5000 if own == "chunklen" else 5000 * 32})
    assert first_chunk(path)[0] == 6


@pytest.mark.parametrize("fmt", FORMATS)
def test_blosc2_filters(tmp_path: Path, fmt: str):
    """Filter pipelines beyond one shuffle need Blosc2 chunks: frames and b2nd write them,
    .blp with blosc_version=2; Blosc1 writers refuse them, naming the reason."""
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    filters = ["delta", "shuffle"]
    if fmt in ("blp", "bcolz"):
        with pytest.raises(ArgumentError, match=f"format '{fmt}' writes Blosc1 chunks, whose"
                           " only filters are shuffle or bitshuffle; got filters"):  # fmt: skip
            bloscpack.save(COLUMNS, path, filters=filters)
        if fmt == "bcolz":
            return
        bloscpack.save(COLUMNS, path, filters=filters, blosc_version=2)
    else:
        bloscpack.save(COLUMNS, path, filters=filters)
    assert first_chunk(path)[1]["filters"] == filters
    assert np.array_equal(bloscpack.load(path), COLUMNS)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"filters": ["sort"]}, "unknown filter 'sort'; known: nofilter, shuffle, bitshuffle"),
        ({"filters": 3.5}, "filters must be filter names or ids, got 3.5"),
        ({"chunks": 0}, "chunks must be positive ints, got 0"),
        ({"chunks": "big"}, "chunks must be positive ints, got 'big'"),
        ({"chunks": 2.5}, "chunks must be an int or a tuple of ints, got 2.5"),
    ],
)
def test_bad_common_options(tmp_path: Path, fmt: str, options: dict, message: str):
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    with pytest.raises(ArgumentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        bloscpack.save(COLUMNS, path, **options)
    assert not path.exists()


USER = {"units": "m", "scale": 0.5, "tags": ["a", "b"], "nested": {"k": 1}}


@pytest.mark.parametrize("fmt", FORMATS)
def test_metadata_is_stored_by_every_format(tmp_path: Path, fmt: str):
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    bloscpack.save(ARRAY, path, metadata=USER, clevel=3)
    assert np.array_equal(bloscpack.load(path), ARRAY)
    with bloscpack.open(path) as lazy:
        assert lazy.attrs == USER
    raw = tmp_path / "raw.bin"
    raw.write_bytes(ARRAY.tobytes())
    compress_file(raw, path, dtype="<f8", shape=ARRAY.shape, metadata=USER)
    with bloscpack.open(path) as lazy:
        assert lazy.attrs == USER and np.array_equal(lazy[...], ARRAY)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("metadata", "message"), [
    ({"dtype": "x"}, "the name is taken by the numpy metadata"),
    ({"bad": object()}, "cannot hold it"),
    ([1, 2], "metadata must be a mapping, got list"),
])  # fmt: skip
def test_metadata_a_format_cannot_hold_is_refused(tmp_path: Path, fmt: str, metadata, message):
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    with pytest.raises(ArgumentError, match=message):
        bloscpack.save(ARRAY, path, metadata=metadata)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_nthreads_is_a_common_option(tmp_path: Path, fmt: str):
    from bloscpack import engine

    before = engine.get_nthreads()
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    bloscpack.save(ARRAY, path, nthreads=1)
    assert np.array_equal(bloscpack.load(path), ARRAY) and engine.get_nthreads() == before
    convert(path, tmp_path / "y.blp", nthreads=2)
    assert np.array_equal(bloscpack.load(tmp_path / "y.blp"), ARRAY)
    with pytest.raises(ArgumentError, match="nthreads must be"):
        bloscpack.save(ARRAY, path, nthreads="many")
    assert engine.get_nthreads() == before


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("size", [48_000, "48000", "46.875K"])
def test_chunk_size_is_bytes_of_whole_rows_in_every_format(tmp_path: Path, fmt: str, size):
    """48,000 bytes are 2,000 rows of 3 float64: 2 chunks of the 4,000 rows."""
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    bloscpack.save(ARRAY, path, chunk_size=size)
    with registry.open_reader(str(path), registry.detect(path)) as reader:
        assert reader.nchunks == 2
    assert np.array_equal(bloscpack.load(path), ARRAY)
    with pytest.raises(ArgumentError, match="give chunks or chunk_size, not both"):
        bloscpack.save(ARRAY, path, chunk_size=size, chunks=100)
    with pytest.raises(ArgumentError, match="chunk_size must be a positive number of bytes"):
        bloscpack.save(ARRAY, path, chunk_size=0)


@pytest.mark.parametrize("fmt", FORMATS)
def test_blocks_is_a_common_option(tmp_path: Path, fmt: str):
    """250 rows of 3 float64 per block: 6,000-byte blocks in the formats that choose them."""
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    if fmt == "bcolz":  # bcolz lets Blosc choose its blocks
        with pytest.raises(ArgumentError, match="unknown option.* for format 'bcolz': blocks"):
            bloscpack.save(ARRAY, path, chunks=1000, blocks=250)
        return
    own = {"blosc_version": 2} if fmt == "blp" else {}
    if fmt == "blp":
        with pytest.raises(ArgumentError, match="blocks needs Blosc2 chunks in a .blp file"):
            bloscpack.save(ARRAY, path, chunks=1000, blocks=250)
    bloscpack.save(ARRAY, path, chunks=1000, blocks=250, **own)
    with registry.open_reader(str(path), registry.detect(path)) as reader:
        assert bloscpack.inspect_chunk(reader.stored_chunk(0))["blocksize"] == 6000
    assert np.array_equal(bloscpack.load(path), ARRAY)
    with pytest.raises(ArgumentError, match="blocks must be positive ints, got 0"):
        bloscpack.save(ARRAY, path, blocks=0)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("typesize", [None, 3, 4])
def test_raw_input_typesize_in_every_format(tmp_path: Path, fmt: str, typesize):
    """Formats that store bytes keep them, with typesize 8 unless told (as 0.16); the others
    store unsigned ints of typesize bytes (default 1; 3 is no such int)."""
    raw = tmp_path / "raw.bin"
    raw.write_bytes(ARRAY.tobytes())
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    options = {} if typesize is None else {"typesize": typesize}
    if not registry.FORMATS[fmt].holds_bytes and typesize == 3:
        with pytest.raises(ArgumentError, match="stores raw bytes as unsigned ints of 1, 2, 4"):
            compress_file(raw, path, **options)
        return
    compress_file(raw, path, **options)
    with bloscpack.open(path) as lazy:
        assert lazy[...].tobytes() == ARRAY.tobytes()
        if registry.FORMATS[fmt].holds_bytes:
            assert lazy.dtype == np.uint8
            with registry.open_reader(str(path), fmt) as reader:
                header = bloscpack.inspect_chunk(reader.stored_chunk(0))
            assert header["typesize"] == (typesize or 8)
        else:
            assert lazy.dtype == np.dtype(f"<u{typesize or 1}")


def _tree_bytes(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {"": path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


@pytest.mark.parametrize("fmt", FORMATS)
def test_saves_of_many_block_chunks_are_reproducible(tmp_path: Path, fmt: str):
    """zstd chunks of many blocks: one array gives one result (bcolz chunks used to keep
    their blocks in the order two C threads finished them, different on each save)."""
    a = np.cumsum(np.random.default_rng(7).standard_normal(2**22))  # 32 MiB
    ext = registry.FORMATS[fmt].extension
    written = set()
    for k in range(5):
        path = tmp_path / f"{k}{ext}"
        bloscpack.save(a, path, codec="zstd", nthreads=2)
        written.add(hash(tuple(sorted(_tree_bytes(path).items()))))
    assert len(written) == 1
    np.testing.assert_array_equal(bloscpack.load(tmp_path / f"0{ext}"), a)


@pytest.mark.parametrize("fmt", FORMATS)
def test_saves_with_metadata_are_reproducible(tmp_path: Path, fmt: str):
    """With user metadata too, one array gives one result (b2frame and b2nd used to give a
    few, compressed by several C threads at once)."""
    a = np.cumsum(np.arange(1_000_000) % 9, dtype="<f8")
    ext = registry.FORMATS[fmt].extension
    written = []
    for k in range(4):
        path = tmp_path / f"{k}{ext}"
        bloscpack.save(a, path, metadata={"run": "same"}, nthreads=2)
        written.append(_tree_bytes(path))
    assert all(w == written[0] for w in written)
    with bloscpack.open(tmp_path / f"0{ext}") as lazy:
        np.testing.assert_array_equal(lazy[...], a)


# --- text data: only Unicode code points --------------------------------------------------

#: Options that store the data's bytes as they are (no codec, no filter, no digest to fix).
VERBATIM = {"blp": {"clevel": 0, "shuffle": False, "checksum": None},
            "bcolz": {"clevel": 0, "shuffle": False}}  # fmt: skip
TEXT = np.array(["abcde", "fghij"] * 10, dtype="<U5")


def saved_verbatim(tmp_path: Path, fmt: str, array: np.ndarray) -> Path:
    path = tmp_path / f"t{registry.FORMATS[fmt].extension}"
    bloscpack.save(array, path, format=fmt, **VERBATIM.get(fmt, {"clevel": 0, "filters": []}))
    return path


@pytest.mark.parametrize("fmt", FORMATS)
def test_text_above_u10ffff_is_refused_on_every_read(tmp_path: Path, fmt: str):
    path = saved_verbatim(tmp_path, fmt, TEXT)
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    file = next(f for f in sorted(files) if b"a\0\0\0b\0\0\0" in f.read_bytes())
    data = file.read_bytes()  # the first item's "a" becomes 0x7f000000
    file.write_bytes(data.replace(b"a\0\0\0b\0\0\0", b"\0\0\0\x7fb\0\0\0", 1))
    message = f"{path}: the text data holds an invalid code point (0x7f000000, above U+10FFFF)"
    with pytest.raises(InvalidCodePoint) as raised:
        bloscpack.load(path)
    assert str(raised.value) == message
    report = bloscpack.verify(path)
    assert (report["ok"], report["bad_chunks"], report["problems"]) == (False, [], [message])
    with bloscpack.open(path) as x:
        assert x[1] == "fghij" and list(x[1:3]) == ["fghij", "abcde"]
        for read in (lambda: x[0], lambda: x[:3], lambda: x[...], lambda: list(x.iter_chunks())):
            with pytest.raises(InvalidCodePoint) as raised:
                read()
            assert str(raised.value) == message


def test_text_fields_are_checked_in_the_format_modules(tmp_path: Path):
    table = np.zeros(4, [("n", "<i4"), ("t", "<U3")])
    table["t"] = "abc"
    path = tmp_path / "t.bcolz"
    bloscpack.save(table, path, **VERBATIM["bcolz"])
    column = path / "t" / "data" / "__0.blp"
    column.write_bytes(column.read_bytes().replace(b"a\0\0\0", b"\0\0\x11\0", 1))
    message = f"{path}: the text data holds an invalid code point (0x110000, above U+10FFFF)"
    for read in (lambda: bcolz.read_bcolz_column(path, "t"), lambda: bloscpack.load(path)):
        with pytest.raises(InvalidCodePoint) as raised:
            read()
        assert str(raised.value) == message
    assert bcolz.read_bcolz_column(path, "n").tolist() == [0, 0, 0, 0]
    path = saved_verbatim(tmp_path, "b2nd", TEXT)
    path.write_bytes(path.read_bytes().replace(b"a\0\0\0", b"\0\0\x11\0", 1))
    with pytest.raises(InvalidCodePoint, match="0x110000"):
        b2nd.read_b2nd_selection(path, slice(0, 1))
    assert b2nd.read_b2nd_selection(path, slice(1, 2)).tolist() == ["fghij"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_text_with_surrogates_is_read_as_numpy_holds_it(tmp_path: Path, fmt: str):
    array = np.array(["\ud800x", "\U0010ffff"], dtype="<U2")
    assert np.array_equal(bloscpack.load(saved_verbatim(tmp_path, fmt, array)), array)


# --- verify: what the checksums stored in a file let it prove -------------------------------

PAYLOAD = np.random.default_rng(7).integers(0, 256, 5000, dtype=np.uint8)
#: (case, format, save options, checksummed): every format, clevel 0 (the data stored as it is)
VERIFY_CASES = [
    *[(fmt, fmt, {}, fmt == "blp") for fmt in FORMATS],
    ("blp-no-checksums", "blp", {"checksum": "None"}, False),
    ("chunk", "chunk", {}, False),
]


def _write_stored(path: Path, fmt: str, options: dict) -> None:
    """``PAYLOAD`` in ``fmt``, stored uncompressed (clevel 0, no filters)."""
    if fmt == "chunk":
        import blosc

        path.write_bytes(blosc.compress(PAYLOAD.tobytes(), typesize=1, clevel=0, shuffle=0))
    else:
        bloscpack.save(PAYLOAD, path, format=fmt, clevel=0, filters=[], **options)


def _chunks(n: int) -> str:
    return f"{n} chunk{'' if n == 1 else 's'}"


def _flip_a_data_byte(path: Path) -> None:
    """Flip one byte of the payload where the container stores it."""
    marker = PAYLOAD[2000:2032].tobytes()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        data = bytearray(file.read_bytes())
        at = data.find(marker)
        if at >= 0:
            data[at + 16] ^= 0xFF
            file.write_bytes(bytes(data))
            return
    raise AssertionError(f"{path}: the payload is not stored as it is")


@pytest.mark.parametrize(("case", "fmt", "options", "checksummed"), VERIFY_CASES,
                         ids=[c[0] for c in VERIFY_CASES])  # fmt: skip
def test_verify_says_whether_the_data_was_verified(tmp_path: Path, case: str, fmt: str,
                                                   options: dict, checksummed: bool):  # fmt: skip
    """A file whose chunks checksums cover is ``ok`` and passes ``--strict``; a changed byte
    there fails it.  Without checksums a changed byte that still decodes is not seen: the
    file is ``structure ok, data not verifiable`` (never plain ``ok``), and ``--strict`` and
    ``strict=True`` fail it."""
    path = tmp_path / f"x.{fmt}"
    _write_stored(path, fmt, options)
    report = bloscpack.verify(path)
    assert (report["ok"], report["verifiable"], report["data_verified"]) == (
        True, checksummed, checksummed
    )  # fmt: skip
    n = report["nchunks"]
    what = f"{fmt}, {_chunks(n)}"
    if checksummed:
        for strict in ([], ["--strict"]):
            proc = blpk("verify", *strict, path.name, cwd=tmp_path)
            assert (proc.returncode, proc.stdout) == (0, f"blpk: {path.name}: ok ({what})\n")
        assert bloscpack.verify(path, strict=True) == report
    _flip_a_data_byte(path)
    report = bloscpack.verify(path)
    proc = blpk("verify", path.name, cwd=tmp_path)
    strict = blpk("verify", "--strict", path.name, cwd=tmp_path)
    assert strict.returncode == 1
    if checksummed:
        with pytest.raises(ChecksumMismatch):
            bloscpack.load(path)
        assert (report["ok"], report["data_verified"], proc.returncode) == (False, False, 1)
        assert proc.stdout.startswith(f"blpk: {path.name}: FAILED ({fmt}, 1 of {_chunks(n)} bad)")
        return
    assert not np.array_equal(bloscpack.load(path).view(np.uint8), PAYLOAD)  # silently wrong
    assert (report["ok"], report["data_verified"], report["notes"]) == (True, False, [])
    assert (proc.returncode, proc.stdout) == (
        0, f"blpk: {path.name}: structure ok, data not verifiable ({what}, no checksums)\n"
    )  # fmt: skip
    reason = "strict: data not verifiable (no checksums stored for its chunks)"
    assert strict.stdout == f"blpk: {path.name}: FAILED ({what}): {reason}\n"
    assert bloscpack.verify(path, strict=True) == {**report, "ok": False, "problems": [reason]}


def _blp_changed(path: Path, change) -> None:
    """A checksummed ``.blp`` of 3 chunks (no offsets) at ``path``, changed by ``change``."""
    raw = bloscpack.pack_bytes_to_bytes(
        bytes(range(256)) * 12,
        chunk_size=1024,
        bloscpack_args={"offsets": False, "max_app_chunks": 0},
    )
    path.write_bytes(change(bytearray(raw)))


@pytest.mark.parametrize(
    ("change", "note"),
    [
        (lambda raw: raw + b"stale", "5 bytes after the last chunk are ignored (stale bytes, as"
                                     " bloscpack 0.16's append leaves them)"),
        (lambda raw: raw[:12] + (-1).to_bytes(4, "little", signed=True) + raw[16:],
         "the header's nchunks 3 and last_chunk -1 disagree: only one of them is -1 (unknown);"
         " the last chunk holds 1024 bytes"),
    ],
    ids=["trailing-bytes", "nchunks-without-last-chunk"],
)  # fmt: skip
def test_verify_notes_fail_under_strict(tmp_path: Path, change, note: str):
    """Stale bytes after the last chunk, and a header whose nchunks and last_chunk disagree,
    are notes under an ``ok`` file; ``--strict`` (and ``strict=True``) fail it, naming them."""
    _blp_changed(tmp_path / "x.blp", change)
    proc = blpk("verify", "x.blp", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (
        0,
        f"blpk: x.blp: ok (blp, 3 chunks)\nblpk:   note: {note}\n",
    )
    strict = blpk("verify", "--strict", "x.blp", cwd=tmp_path)
    assert (strict.returncode, strict.stdout) == (
        1, f"blpk: x.blp: FAILED (blp, 3 chunks): strict: {note}\n"
    )  # fmt: skip
    report = bloscpack.verify(tmp_path / "x.blp")
    assert (report["ok"], report["data_verified"], report["notes"]) == (True, True, [note])
    assert bloscpack.verify(tmp_path / "x.blp", strict=True) == {
        **report, "ok": False, "notes": [], "problems": [f"strict: {note}"]
    }  # fmt: skip
# --- nothing dropped silently: what no container holds is refused before any work ----------


def _refused_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call, error: type,
                             message: str) -> None:  # fmt: skip
    """``call()`` raises ``error`` with exactly ``message``, and no output was ever staged."""
    def staged(*args, **kwargs):
        raise AssertionError("an output was staged")

    monkeypatch.setattr(registry, "_staged", staged)
    with pytest.raises(error) as raised:
        call()
    assert str(raised.value) == message
    assert isinstance(raised.value, BloscpackError)
    assert list(tmp_path.iterdir()) == []


MASK_MESSAGE = (": a masked array would lose its mask, which no container keeps: save"
                " a.filled(fill_value) and np.ma.getmaskarray(a) as two arrays (or a.data, to"
                " drop the mask)")  # fmt: skip


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", ["numpy", "dask"])
def test_a_masked_array_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str,
                                   kind: str):  # fmt: skip
    masked = np.ma.masked_array(np.arange(6.0), mask=[0, 1, 0, 0, 1, 0])
    if kind == "dask":
        da = pytest.importorskip("dask.array")
        masked = da.from_array(masked, chunks=3, asarray=False)
        assert isinstance(masked._meta, np.ma.MaskedArray)
    path = tmp_path / f"m{registry.FORMATS[fmt].extension}"
    _refused_before_any_work(tmp_path, monkeypatch, lambda: bloscpack.save(masked, path),
                             DataLossError, f"{path}{MASK_MESSAGE}")  # fmt: skip


def test_saving_an_array_does_not_import_numpy_ma(tmp_path: Path):
    """The masked-array check costs nothing while nothing imported ``numpy.ma`` (6 ms)."""
    code = (
        "import sys, numpy as np, bloscpack\n"
        f"for fmt in {FORMATS!r}:\n"
        f"    bloscpack.save(np.arange(10.0), {str(tmp_path)!r} + '/a.' + fmt, format=fmt)\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "False\n", "")


LONG_DOUBLE = ("cannot be stored: {0} holds long doubles, whose bytes mean other numbers on"
               " other machines; convert it first (a.astype(np.{1}))")  # fmt: skip
OBJECTS = ("hold Python object references, which cannot be stored without pickling; convert"
           " them to a fixed-size dtype (e.g. 'U' or 'S') first")  # fmt: skip
UNSTORABLE = [
    (np.dtype(np.longdouble), UnsupportedError,
     LONG_DOUBLE.format(np.dtype(np.longdouble), "float64")),
    (np.dtype(np.clongdouble), UnsupportedError,
     LONG_DOUBLE.format(np.dtype(np.clongdouble), "complex128")),
    (np.dtype([("t", "<i8"), ("v", np.longdouble, (2,))]), UnsupportedError,
     LONG_DOUBLE.format(np.dtype(np.longdouble), "float64")),
    (np.dtype(object), ObjectNumpyArrayRejection, OBJECTS),
    (np.dtype([("a", "<i4"), ("b", object)]), ObjectNumpyArrayRejection, OBJECTS),
    (np.dtypes.StringDType(), ObjectNumpyArrayRejection, OBJECTS),
]  # fmt: skip


@pytest.mark.skipif(np.dtype(np.longdouble).itemsize == 8, reason="long double is a double")
@pytest.mark.parametrize(("dtype", "error", "reason"), UNSTORABLE,
                         ids=["longdouble", "clongdouble", "longdouble-field", "object",
                              "object-field", "StringDType"])  # fmt: skip
@pytest.mark.parametrize("fmt", FORMATS)
def test_dtypes_no_container_holds_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               fmt: str, dtype, error, reason):  # fmt: skip
    array = np.zeros(4, dtype)
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    _refused_before_any_work(tmp_path, monkeypatch, lambda: bloscpack.save(array, path), error,
                             f"{path}: arrays of dtype {dtype} {reason}")  # fmt: skip


PADDED = np.dtype({"names": ["a", "b"], "formats": ["u1", "<i8"], "offsets": [0, 8],
                   "itemsize": 16})  # fmt: skip
TITLED = np.dtype({"names": ["a"], "formats": ["<i4"], "titles": ["the a"]})


@pytest.mark.parametrize(("fmt", "array", "reason"), [
    ("b2frame", np.zeros(3, "V0"), "dtype |V0 has items of 0 bytes, which a frame's chunks cannot"
     " hold"),
    ("sframe", np.zeros(3, "V0"), "dtype |V0 has items of 0 bytes, which a frame's chunks cannot"
     " hold"),
    ("b2nd", np.zeros(3, "V0"), "dtype |V0 has items of 0 bytes, which a b2nd array cannot hold"),
    ("bcolz", np.zeros(3, "V0"), "rows of shape () and dtype |V0 hold no bytes"),
    ("bcolz", np.zeros((3, 0)), "rows of shape (0,) and dtype float64 hold no bytes"),
    ("bcolz", np.float64(1.5), "bcolz stores arrays of at least one dimension, this one is 0-d"),
    ("bcolz", np.zeros(3, [("a", "<i4")] * 0), "a structured array is stored as a ctable, one"
     " column per field; [] has none"),
    ("bcolz", np.zeros((2, 2), [("a", "<i4")]), "a structured array is stored as a ctable and"
     " must be 1-D, got shape (2, 2)"),
    ("bcolz", np.zeros(3, PADDED), f"dtype {PADDED} has padding, offsets or titles, which a"
     " ctable (one column per field) does not keep: convert it first (a.astype([('a', 'u1'),"
     " ('b', '<i8')])) or choose another format"),
    ("bcolz", np.zeros(3, TITLED), f"dtype {TITLED} has padding, offsets or titles, which a"
     " ctable (one column per field) does not keep: convert it first (a.astype([('a',"
     " '<i4')])) or choose another format"),
])  # fmt: skip
def test_arrays_a_format_cannot_hold_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 fmt: str, array, reason: str):  # fmt: skip
    path = tmp_path / f"x{registry.FORMATS[fmt].extension}"
    _refused_before_any_work(tmp_path, monkeypatch, lambda: bloscpack.save(array, path),
                             UnsupportedError, f"{path}: {reason}")  # fmt: skip


def test_blp_holds_what_the_other_formats_refuse(tmp_path: Path):
    for array in (np.zeros(3, "V0"), np.zeros(3, PADDED), np.float64(1.5)):
        bloscpack.save(array, tmp_path / "x.blp")
        back = bloscpack.load(tmp_path / "x.blp")
        assert back.dtype == array.dtype and back.shape == array.shape
        assert back.tobytes() == np.asarray(array).tobytes()


@pytest.mark.parametrize("fmt", FORMATS)
def test_blpk_compress_refuses_an_object_npy_in_one_line(tmp_path: Path, fmt: str):
    np.save(tmp_path / "obj.npy", np.array([1, "a", None], dtype=object))
    proc = blpk("c", "--format", fmt, "obj.npy", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == ("blpk: error: obj.npy: holds Python objects (dtype object), which"
                           " cannot be stored without pickling; convert them to a fixed-size"
                           " dtype (e.g. 'U' or 'S') first\n")  # fmt: skip
    assert sorted(os.listdir(tmp_path)) == ["obj.npy"]


@pytest.mark.parametrize(("array", "reason"), [
    (np.float64(2.0), "bcolz stores arrays of at least one dimension, this one is 0-d"),
    (np.zeros(3, TITLED), f"dtype {TITLED} has padding, offsets or titles, which a ctable (one"
     " column per field) does not keep: convert it first (a.astype([('a', '<i4')])) or choose"
     " another format"),
])  # fmt: skip
def test_blpk_compress_refuses_an_npy_the_format_cannot_hold(tmp_path: Path, array, reason):
    np.save(tmp_path / "in.npy", array)
    proc = blpk("c", "--format", "bcolz", "in.npy", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"blpk: error: in.npy.bcolz: {reason}\n"
    assert sorted(os.listdir(tmp_path)) == ["in.npy"]


SINGLE_FILE = [fmt for fmt in FORMATS if not registry.FORMATS[fmt].directory]


@pytest.mark.parametrize("fmt", SINGLE_FILE)
@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "BytesIO", "file"])
def test_load_takes_what_open_takes(tmp_path: Path, fmt: str, kind: str):
    """bytes, a bytearray, a memoryview or a binary file object (from its position)."""
    path = tmp_path / f"a{registry.FORMATS[fmt].extension}"
    bloscpack.save(ARRAY, path)
    data = path.read_bytes()
    with path.open("rb") as fh:
        source = {"bytes": data, "bytearray": bytearray(data), "memoryview": memoryview(data),
                  "BytesIO": io.BytesIO(data), "file": fh}[kind]  # fmt: skip
        loaded = bloscpack.load(source)
    assert loaded.dtype == ARRAY.dtype and loaded.shape == ARRAY.shape
    np.testing.assert_array_equal(loaded, ARRAY)
    with bloscpack.open(io.BytesIO(data)) as lazy:
        np.testing.assert_array_equal(lazy[...], loaded)
    head = io.BytesIO(b"junk" + data)
    head.seek(4)
    np.testing.assert_array_equal(bloscpack.load(head), ARRAY)
