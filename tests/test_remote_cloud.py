"""``gs://`` and ``az://`` URLs (gcsfs against gcp-storage-emulator, adlfs against Azurite, see
``cloud_servers``): every format saved to the URL holds what a local save writes; opening,
slicing, loading, ``info``, ``verify``, ``detect`` and converting both ways give the local
results; ``blpk`` takes the back end's settings as ``--storage-option``; ``overwrite=False``
refuses; a missing object is one line naming the URL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

pytest.importorskip("fsspec")
pytest.importorskip("moto")  # test_remote_write's cases (it imports s3fs, served by moto)

import bloscpack  # noqa: E402
from bloscpack.cli.main import main as blpk_main  # noqa: E402
from bloscpack.errors import OutputExistsError, RemoteError  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_remote_write import CASES, files_under, write  # noqa: E402

if TYPE_CHECKING:
    from cloud_servers import CloudStore

pytest_plugins = ["cloud_servers"]  # the fixtures gcs_store, azure_store and cloud
# gcsfs (objects under 5 MiB) and adlfs hand aiohttp an object's bytes whole; aiohttp advises
# a stream above 1 MiB with a ResourceWarning (the upload is right: asserted byte for byte).
pytestmark = pytest.mark.filterwarnings(
    "ignore:Sending a large body directly with raw bytes:ResourceWarning"
)

ROOT = Path(__file__).resolve().parents[1]
ARRAY = CASES["blp"][1]
#: One Blosc chunk (a read-only format: uploaded as its bytes).
CHUNK = bloscpack.compress_chunk(ARRAY[:1000].tobytes(), typesize=8)
ALL = [*CASES, "chunk"]
WRITABLE = list(CASES)
SUFFIX = {**{case: suffix for case, (suffix, _, _) in CASES.items()}, "chunk": ".chunk"}
#: What each case converts to (another format; a .blp to a .b2nd).
CONVERTED = {case: ".b2nd" if case == "blp" else ".blp" for case in ALL}


def name_of(case: str) -> str:
    return f"{case}{SUFFIX[case]}"


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every case saved locally (the reference)."""
    root = tmp_path_factory.mktemp("local")
    for case in WRITABLE:
        write(case, str(root / name_of(case)), scratch=root)
    (root / name_of("chunk")).write_bytes(CHUNK)
    bloscpack.save(CASES["ctable"][1], root / "table.blp")
    return root


@pytest.fixture(scope="module", params=["gs", "az"])
def store(request: pytest.FixtureRequest, local: Path) -> Iterator[CloudStore]:
    """A back end with every case saved to it (a raw chunk uploaded as its bytes)."""
    base = request.getfixturevalue("gcs_store" if request.param == "gs" else "azure_store")
    store = base.for_test()
    scratch = local.parent / f"scratch-{store.folder}"
    scratch.mkdir()
    for case in WRITABLE:
        write(case, store.url(name_of(case)), storage_options=store.storage_options,
              scratch=scratch)  # fmt: skip
    store.filesystem().pipe_file(store.key(name_of("chunk")), CHUNK)
    yield store


def download(store: CloudStore, name: str, to: Path) -> Path:
    """The object ``name`` of ``store`` (or the objects under it) copied to ``to``."""
    fs, key = store.filesystem(), store.key(name)
    if fs.isdir(key):
        for remote in fs.find(key):
            target = to / remote[len(key) + 1 :]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(fs.cat_file(remote))
    else:
        to.write_bytes(fs.cat_file(key))
    return to


def selections(shape: tuple[int, ...]) -> list:
    if len(shape) == 1:
        n = shape[0]
        return [..., 0, n - 1, slice(10, 20), slice(None, None, max(n // 7, 1))]
    return [..., 3, (5, 7), slice(10, 20), (slice(None, None, 97), slice(1, 9)),
            (slice(shape[0] - 3, None),)]  # fmt: skip


# --- writing ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", WRITABLE)
def test_save_uploads_what_a_local_save_writes(case: str, store: CloudStore, local: Path,
                                               tmp_path: Path):  # fmt: skip
    got = download(store, name_of(case), tmp_path / name_of(case))
    expected = files_under(local / name_of(case))
    assert files_under(got) == expected
    if case in ("blp", "b2frame", "b2nd"):
        assert list(expected) == [""]
    else:
        assert len(expected) > 2


@pytest.mark.parametrize("case", WRITABLE)
def test_convert_a_local_file_to_a_url(case: str, store: CloudStore, local: Path,
                                       tmp_path: Path):  # fmt: skip
    _, _, options = CASES[case]
    src = local / {"blp": name_of("b2nd"), "ctable": "table.blp"}.get(case, name_of("blp"))
    name = f"converted-{name_of(case)}"
    report = bloscpack.convert(src, store.url(name), storage_options=store.storage_options,
                               nthreads=1, **options)  # fmt: skip
    expected = tmp_path / f"local-{name}"
    assert report == bloscpack.convert(src, expected, nthreads=1, **options)
    got = download(store, name, tmp_path / name)
    assert files_under(got) == files_under(expected)
    got = bloscpack.load(store.url(name), storage_options=store.storage_options)
    np.testing.assert_array_equal(got, CASES[case][1])


@pytest.mark.parametrize("case", WRITABLE)
def test_overwrite_false_refuses_an_existing_url(case: str, store: CloudStore, tmp_path: Path):
    url = store.url(name_of(case))
    fs, key = store.filesystem(), store.key(name_of(case))
    before = {k: fs.cat_file(k) for k in fs.find(key)}
    assert before
    with pytest.raises(OutputExistsError) as raised:
        write(case, url, storage_options=store.storage_options, overwrite=False,
              scratch=tmp_path)  # fmt: skip
    assert str(raised.value) == f"{url}: already exists (pass overwrite=True to replace it)"
    fs = store.filesystem()
    assert {k: fs.cat_file(k) for k in fs.find(key)} == before


# --- reading ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ALL)
def test_open_and_slices_equal_local(case: str, store: CloudStore, local: Path):
    with (bloscpack.open(local / name_of(case)) as mine,
          bloscpack.open(store.url(name_of(case)),
                         storage_options=store.storage_options) as remote):
        assert (remote.format, remote.shape, remote.dtype) == (mine.format, mine.shape,
                                                                mine.dtype)  # fmt: skip
        assert remote.metadata == mine.metadata
        for selection in selections(mine.shape):
            np.testing.assert_array_equal(remote[selection], mine[selection])


@pytest.mark.parametrize("case", ALL)
def test_load_equals_local(case: str, store: CloudStore, local: Path):
    got = bloscpack.load(store.url(name_of(case)), storage_options=store.storage_options)
    expected = bloscpack.load(local / name_of(case))
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    if case != "chunk":
        np.testing.assert_array_equal(got, CASES[case][1])


@pytest.mark.parametrize("case", ALL)
def test_info_equals_local(case: str, store: CloudStore, local: Path):
    """The same description (where it names the container or its columns: their URLs)."""
    url, mine = store.url(name_of(case)), local / name_of(case)
    got = json.dumps(bloscpack.info(url, storage_options=store.storage_options))
    assert json.loads(got.replace(url, str(mine))) == bloscpack.info(mine)
    assert (url in got) == (case in ("bcolz", "ctable"))


@pytest.mark.parametrize("case", ALL)
def test_verify_equals_local(case: str, store: CloudStore, local: Path):
    report = bloscpack.verify(store.url(name_of(case)), storage_options=store.storage_options)
    assert report == bloscpack.verify(local / name_of(case))
    assert report["ok"] is True


@pytest.mark.parametrize("case", ALL)
def test_detect_equals_local(case: str, store: CloudStore, local: Path):
    fmt = bloscpack.detect(store.url(name_of(case)), storage_options=store.storage_options)
    assert fmt == bloscpack.detect(local / name_of(case))
    assert fmt == {"blp": "blp", "b2frame": "b2frame", "b2nd": "b2nd", "sframe": "sframe",
                   "bcolz": "bcolz", "ctable": "bcolz", "sparse-b2nd": "b2nd",
                   "chunk": "chunk"}[case]  # fmt: skip


@pytest.mark.parametrize("case", ALL)
def test_convert_a_url_to_a_local_file(case: str, store: CloudStore, local: Path,
                                       tmp_path: Path):  # fmt: skip
    got, expected = tmp_path / f"got{CONVERTED[case]}", tmp_path / f"expected{CONVERTED[case]}"
    report = bloscpack.convert(store.url(name_of(case)), got,
                               storage_options=store.storage_options, nthreads=1)  # fmt: skip
    assert report == bloscpack.convert(local / name_of(case), expected, nthreads=1)
    assert got.read_bytes() == expected.read_bytes()


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ALL)
def test_a_missing_object_is_one_line_naming_the_url(case: str, store: CloudStore):
    url = store.url(f"missing-{name_of(case)}")
    for read in (bloscpack.open, bloscpack.load, bloscpack.info, bloscpack.verify,
                 bloscpack.detect):  # fmt: skip
        with pytest.raises(RemoteError) as raised:
            read(url, storage_options=store.storage_options)
        message = str(raised.value)
        assert message.startswith(f"{url}"), message
        assert "not found" in message and "\n" not in message, message


# --- the command line ------------------------------------------------------------------------


def blpk(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``blpk args`` run in this process (its parsing and its commands as a process runs
    them): the exit code, what it printed and its errors."""
    capsys.readouterr()
    code = blpk_main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("case", ALL)
def test_cli_info_verify_decompress_convert(case: str, store: CloudStore, local: Path,
                                            tmp_path: Path, capsys):  # fmt: skip
    """``blpk info``, ``verify``, ``d`` and ``convert`` of the URL (the back end's settings
    as ``--storage-option``) do what they do to the local container: the same output (the
    URL for the path), the same files written; a raw chunk refused by ``d`` alike.  (``info``
    is compared in its full text, ``--legacy``: at a URL the summary reads the codec of the
    first chunk alone.)"""
    url, mine, options = store.url(name_of(case)), local / name_of(case), store.cli_options()
    for command, suffix in (("info", ""), ("verify", ""), ("d", ".npy"),
                            ("convert", CONVERTED[case])):  # fmt: skip
        got, expected = tmp_path / f"got-{command}{suffix}", tmp_path / f"mine-{command}{suffix}"
        outputs = [str(got)] if suffix else []
        flags = ["--legacy"] if command == "info" else []
        code, out, err = blpk([*options, command, *flags, url, *outputs], capsys)
        theirs = blpk([command, *flags, str(mine), *([str(expected)] if suffix else [])], capsys)
        assert (code, out.replace(url, str(mine)).replace(str(got), str(expected)),
                err.replace(url, str(mine))) == theirs  # fmt: skip
        assert code == (1 if (case, command) == ("chunk", "d") else 0), err
        if command == "d" and code == 0:
            assert got.read_bytes() == expected.read_bytes()
        if command == "convert":  # (compressed in several threads: the same values)
            np.testing.assert_array_equal(bloscpack.load(got), bloscpack.load(expected))


def test_cli_processes_take_storage_options(cloud: CloudStore, local: Path, tmp_path: Path,
                                            capsys):  # fmt: skip
    """``blpk`` as a process, ``--storage-option`` before or after the subcommand: writing to
    a URL and reading it back; an existing URL is not overwritten without ``-f``."""
    env = {**os.environ, **cloud.env, "PYTHONPATH": str(ROOT / "src")}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "bloscpack", *args], capture_output=True,
                              text=True, env=env, timeout=120)  # fmt: skip

    url, src = cloud.url("a.b2nd"), str(local / name_of("blp"))
    done = run(*cloud.cli_options(), "convert", src, url)
    assert (done.returncode, done.stderr) == (0, "")
    done = run("d", *cloud.cli_options(), url, str(tmp_path / "a.npy"))
    assert (done.returncode, done.stderr) == (0, "")
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), ARRAY)
    again = blpk(["convert", *cloud.cli_options(), src, url], capsys)
    assert again == (1, "", f"blpk: error: output file '{url}' exists!\n")
    assert blpk(["-f", "convert", *cloud.cli_options(), src, url], capsys)[::2] == (0, "")


@pytest.mark.parametrize(("url", "extra"), [("gs://b/a.b2nd", "gcs"), ("az://c/a.blp", "azure"),
                                            ("simplecache::abfs://c/a.blp", "azure")])
def test_a_missing_back_end_names_its_extra(url: str, extra: str, monkeypatch):
    from bloscpack.errors import UnsupportedError

    registered = sys.modules["fsspec.registry"]._registry
    for protocol, module in (("gs", "gcsfs"), ("abfs", "adlfs"), ("az", "adlfs")):
        monkeypatch.delitem(registered, protocol, raising=False)
        monkeypatch.setitem(sys.modules, module, None)  # not installed
    with pytest.raises(UnsupportedError) as raised:
        bloscpack.load(url)
    message = str(raised.value)
    assert message.startswith(f"{url}: ") and "\n" not in message
    assert message.endswith(f"(pip install 'bloscpack[{extra}]')")


def test_reads_are_concurrent(cloud: CloudStore, monkeypatch):
    """Opening asks for the object's description and its first bytes at once, then for its
    last bytes; a selection over several chunks fetches their ranges at once."""
    import asyncio

    array = np.random.default_rng(3).integers(0, 1 << 20, (1200, 800)).astype("<i8")
    url = cloud.url("big.b2nd")
    bloscpack.save(array, url, storage_options=cloud.storage_options, chunks=(300, 800),
                   blocks=(20, 800))  # fmt: skip
    fs = cloud.filesystem()
    calls: list[str] = []
    flight = [0, 0]  # now, most

    def counted(name: str, real):
        async def call(*args, **kwargs):
            calls.append(name)
            flight[0] += 1
            flight[1] = max(flight)
            try:
                await asyncio.sleep(0.05)
                return await real(*args, **kwargs)
            finally:
                flight[0] -= 1

        return call

    monkeypatch.setattr(fs, "_info", counted("info", fs._info))
    monkeypatch.setattr(fs, "_cat_file", counted("cat", fs._cat_file))
    with bloscpack.open(url, storage_options=cloud.storage_options) as remote:
        assert sorted(calls) == ["cat", "cat", "info"] and flight[1] == 2
        del calls[:]
        flight[1] = 0
        np.testing.assert_array_equal(remote[::97, :5], array[::97, :5])
        assert set(calls) == {"cat"} and flight[1] >= 3, (calls, flight)


def test_an_empty_object_is_not_a_container(cloud: CloudStore):
    from bloscpack.errors import NotAContainer

    cloud.filesystem().pipe_file(cloud.key("empty.blp"), b"")
    url = cloud.url("empty.blp")
    with pytest.raises(NotAContainer, match=f"^{url}"):
        bloscpack.open(url, storage_options=cloud.storage_options)
