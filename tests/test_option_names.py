"""Names given as option values (codecs, formats, filters, checksums, split modes) are
case-insensitive, in the Python API and on the command line alike."""

from __future__ import annotations

import numpy as np
import pytest
from test_cli import blpk

import bloscpack
from bloscpack.containers import registry
from bloscpack.containers.options import canonical
from bloscpack.errors import NoSuchChecksum, NoSuchCodec

ARRAY = np.arange(1000, dtype=np.float64)
SPELLINGS = ("ZLIB", "Zlib", "zlib")


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("fmt", sorted(registry.FORMATS))
def test_codec_names_in_save_ignore_case(tmp_path, fmt, spelling):
    path = tmp_path / f"a{registry.FORMATS[fmt].extension}"
    bloscpack.save(ARRAY, path, format=fmt.upper(), codec=spelling)
    with bloscpack.open(path) as array:
        assert " codec=zlib " in repr(array)
        np.testing.assert_array_equal(array[...], ARRAY)


def _blp_checksum(path):
    return bloscpack.info(path)["header"]["checksum"]


# (format, option, spelling, what the written file records, the value recorded)
OWN_OPTIONS = [
    ("blp", "cname", "ZLIB", lambda p: bloscpack.info(p)["codecs"], {"zlib": 1}),
    ("bcolz", "cname", "Lz4hc", lambda p: bloscpack.info(p)["cparams"]["cname"], "lz4hc"),
    ("blp", "checksum", "SHA256", _blp_checksum, "sha256"),
    ("blp", "checksum", "Sha256", _blp_checksum, "sha256"),
    ("b2frame", "splitmode", "NEVER", lambda p: bloscpack.info(p)["cparams"]["splitmode"],
     "never"),
    ("b2frame", "filters", "BITSHUFFLE", lambda p: bloscpack.info(p)["cparams"]["filters"],
     [2, 0, 0, 0, 0, 0]),
]  # fmt: skip


@pytest.mark.parametrize(("fmt", "option", "spelling", "recorded", "value"), OWN_OPTIONS)
def test_named_option_values_ignore_case(tmp_path, fmt, option, spelling, recorded, value):
    path = tmp_path / f"a{registry.FORMATS[fmt].extension}"
    bloscpack.save(ARRAY, path, **{option: spelling})
    assert recorded(path) == value


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_codec_names_in_convert_and_chunks_ignore_case(tmp_path, spelling):
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    bloscpack.convert(tmp_path / "a.blp", tmp_path / "b.b2nd", codec=spelling)
    assert " codec=zlib " in repr(bloscpack.open(tmp_path / "b.b2nd"))
    chunk = bloscpack.compress_chunk(ARRAY, typesize=8, codec=spelling)
    assert bloscpack.inspect_chunk(chunk)["codec"] == "zlib"
    assert bloscpack.BloscArgs(cname=spelling).cname == "zlib"


def test_unknown_names_are_refused_as_given(tmp_path):
    with pytest.raises(NoSuchCodec, match=r"^unknown codec 'ZIP'; .blp files of Blosc1 chunks"):
        bloscpack.save(ARRAY, tmp_path / "a.blp", codec="ZIP")
    with pytest.raises(NoSuchChecksum, match=r"^checksum 'SHA3' does not exist; choose one of"):
        bloscpack.save(ARRAY, tmp_path / "a.blp", checksum="SHA3")
    assert not (tmp_path / "a.blp").exists()


def test_canonical_matches_a_choice_or_returns_the_value():
    assert canonical("ZStd", ("blosclz", "zstd")) == "zstd"
    assert canonical("NONE", ("None", "adler32")) == "None"
    assert canonical("zip", ("zstd",)) == "zip"
    assert canonical(5, ("zstd",)) == 5


# (command line, what the output records); {src} and {dst} are filled in
CLI_CASES = {
    "-c": (["compress", "-c", "{spelling}", "{src}", "{dst}.blp"], "codec=zlib"),
    "--codec": (["compress", "--codec", "{spelling}", "{src}", "{dst}.blp"], "codec=zlib"),
    "--format": (
        [
            "compress",
            "--format",
            "B2ND",
            "--dtype",
            "f8",
            "-c",
            "{spelling}",
            "{src}",
            "{dst}.b2nd",
        ],
        "BloscArray b2nd",
    ),  # fmt: skip
    "convert --codec": (
        ["convert", "--codec", "{spelling}", "--format", "Bcolz", "{blp}", "{dst}.bcolz"],
        "BloscArray bcolz",
    ),  # fmt: skip
}


@pytest.mark.parametrize("spelling", ["ZLIB", "Zlib"])
@pytest.mark.parametrize("option", sorted(CLI_CASES))
def test_cli_option_values_ignore_case(tmp_path, option, spelling):
    ARRAY.tofile(tmp_path / "in.raw")
    bloscpack.save(ARRAY, tmp_path / "in.blp")
    args, expected = CLI_CASES[option]
    names = {"spelling": spelling, "src": tmp_path / "in.raw", "dst": tmp_path / "out",
             "blp": tmp_path / "in.blp"}  # fmt: skip
    proc = blpk(*(a.format(**names) for a in args))
    assert proc.returncode == 0, proc.stderr
    out = next(tmp_path.glob("out.*"))
    described = repr(bloscpack.open(out))
    assert expected in described and "codec=zlib" in described


def test_cli_checksum_names_ignore_case(tmp_path):
    ARRAY.tofile(tmp_path / "in.raw")
    proc = blpk("compress", "-k", "SHA256", tmp_path / "in.raw", tmp_path / "out.blp")
    assert proc.returncode == 0, proc.stderr
    assert _blp_checksum(tmp_path / "out.blp") == "sha256"


@pytest.mark.parametrize("fmt", registry.every_format(), ids=str)
def test_declared_option_values_are_of_options_the_format_takes(fmt):
    """The defaults and choices a format declares for the command line are of its options."""
    declared = {*fmt.option_defaults, *fmt.option_choices}
    assert [name for name in sorted(declared) if not fmt.accepts(name)] == []
    for name, choices in fmt.option_choices.items():
        assert name not in fmt.option_defaults or fmt.option_defaults[name] in choices


def test_cli_offers_the_default_formats_declared_values():
    """``blpk compress -k`` offers the checksums the default format declares, with its
    default, and every codec is the writers' list."""
    from bloscpack import engine
    from bloscpack.cli.options import build_parser

    compress = build_parser()._subparsers._group_actions[0].choices["compress"]
    actions = {a.dest: a for a in compress._actions}
    assert tuple(actions["checksum"].choices) == registry.DEFAULT.option_choices["checksum"]
    assert "sha512" in actions["checksum"].choices
    names = ", ".join(registry.DEFAULT.option_choices["checksum"])
    assert f"{names} (default: adler32)" in compress.format_help()
    assert tuple(actions["cname"].choices) == engine.WRITABLE_CODECS


@pytest.mark.parametrize("fmt", sorted(registry.FORMATS))
def test_the_format_says_which_options_write_a_directory(tmp_path, fmt):
    """``writes_directory(options)`` is what ``save`` makes of them, for every format."""
    found = registry.FORMATS[fmt]
    options = {"sparse": True} if found.accepts("sparse") else {}
    for given in ({}, options):
        path = tmp_path / f"{len(given)}{found.extension}"
        bloscpack.save(ARRAY, path, format=fmt, **given)
        assert found.writes_directory(given) == path.is_dir(), (fmt, given)
