"""Writing containers to URLs: ``save``, ``convert``, ``compress_file`` and ``blpk`` to an S3
server on loopback (moto) and to ``memory://``.  Every rule is checked over every format: the
objects hold what a local write holds and the peers read them; a directory container's
metadata is uploaded last; a failed upload leaves no readable container; ``overwrite=False``
refuses; in-place changes to a URL are refused."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import blosc2
import fsspec
import numpy as np
import pytest
import s3fs

import bloscpack
from bloscpack.append import append
from bloscpack.containers import registry
from bloscpack.dispatch import compress_file
from bloscpack.errors import (
    BloscpackError,
    OutputExistsError,
    RemoteError,
    UnsupportedError,
)

if TYPE_CHECKING:
    from s3_server import S3Server

pytest_plugins = ["s3_server"]  # the fixture s3_write_server

ARRAY = np.arange(300_000, dtype="<f8").reshape(3000, 100)
TABLE = np.zeros(40_000, dtype=[("x", "<f8"), ("y", "<i4")])
TABLE["x"] = np.arange(len(TABLE))
#: name -> (suffix, array, save options): every writable format, a ctable and a sparse b2nd.
CASES = {
    "blp": (".blp", ARRAY, {}),
    "b2frame": (".b2frame", ARRAY, {}),
    "b2nd": (".b2nd", ARRAY, {"chunks": (700, 60), "blocks": (100, 20)}),
    "sframe": (".b2sframe", ARRAY, {"chunk_size": 400_000}),
    "bcolz": (".bcolz", ARRAY, {}),
    "ctable": (".bcolz", TABLE, {}),
    "sparse-b2nd": (".b2nd", ARRAY, {"sparse": True, "chunks": (700, 60)}),
}
DIRECTORIES = ["sframe", "bcolz", "ctable", "sparse-b2nd"]
ROOT = Path(__file__).resolve().parents[1]


def write(case: str, dst: str, **kwargs):
    """Save (a sparse b2nd: convert from a local .blp) the case's array to ``dst``, in one
    thread (compressed in several, chunks may differ between runs; their data does not)."""
    suffix, array, options = CASES[case]
    options = {"nthreads": 1, **options}
    if options.get("sparse"):
        src = Path(kwargs.pop("scratch")) / f"src-{uuid.uuid4().hex}.blp"
        bloscpack.save(array, src)
        return bloscpack.convert(src, dst, **options, **kwargs)
    kwargs.pop("scratch", None)
    return bloscpack.save(array, dst, **options, **kwargs)


def files_under(path: Path) -> dict[str, bytes]:
    """Every file of a container (a file: itself) by its path relative to it."""
    if path.is_file():
        return {"": path.read_bytes()}
    return {p.relative_to(path).as_posix(): p.read_bytes()
            for p in sorted(path.rglob("*")) if p.is_file()}  # fmt: skip


def download(fs, key: str, to: Path) -> Path:
    fs.invalidate_cache()
    if fs.isdir(key):
        for remote in fs.find(key):
            local = to / remote[len(key.rstrip("/")) + 1 :]
            local.parent.mkdir(parents=True, exist_ok=True)
            fs.get_file(remote, str(local))
    else:
        fs.get_file(key, str(to))
    return to


def check_readable(case: str, path: Path) -> None:
    """bloscpack and the format's own peer read ``path`` as the case's array."""
    _, array, _ = CASES[case]
    np.testing.assert_array_equal(bloscpack.load(path), array)
    fmt = registry.detect(path)
    if fmt in ("b2nd", "b2frame", "sframe"):
        theirs = blosc2.open(str(path))
        if fmt == "b2nd":
            np.testing.assert_array_equal(theirs[...], array)
        else:
            assert theirs[:] == array.tobytes()
    if fmt == "bcolz":
        bcolz = pytest.importorskip("bcolz")
        np.testing.assert_array_equal(bcolz.open(str(path), mode="r")[:], array)


def memory_url(name: str) -> str:
    return f"memory://blpk-test-{uuid.uuid4().hex}/{name}"


# --- what is uploaded ----------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_save_to_s3_uploads_what_a_local_save_writes(case, s3_write_server, tmp_path):
    suffix = CASES[case][0]
    url = s3_write_server.url("a" + suffix)
    write(case, url, storage_options=s3_write_server.storage_options, scratch=tmp_path)
    write(case, str(tmp_path / ("local" + suffix)), scratch=tmp_path)
    fs = s3_write_server.filesystem()
    got = download(fs, f"{s3_write_server.bucket}/a{suffix}", tmp_path / ("got" + suffix))
    check_readable(case, got)
    assert files_under(got) == files_under(tmp_path / ("local" + suffix))


@pytest.mark.parametrize("case", CASES)
def test_convert_and_compress_file_to_a_url(case, tmp_path):
    suffix, array, options = CASES[case]
    src = tmp_path / "src.npy"
    np.save(src, array)
    blp = tmp_path / "src.blp"
    bloscpack.save(array, blp)
    fs = fsspec.filesystem("memory")
    for how in ("convert", "compress_file"):
        url = memory_url("out" + suffix)
        local = tmp_path / f"{how}{suffix}"
        if how == "convert":
            report = bloscpack.convert(blp, url, nthreads=1, **options)
            assert report == bloscpack.convert(blp, local, nthreads=1, **options)
        elif options.get("sparse"):
            continue
        else:
            compress_file(src, url, nthreads=1, **options)
            compress_file(src, local, nthreads=1, **options)
        got = download(fs, url[len("memory://") - 1 :], tmp_path / f"got-{how}{suffix}")
        check_readable(case, got)
        assert files_under(got) == files_under(local)


def test_raw_bytes_stream_to_a_url(tmp_path):
    data = os.urandom(100_000) * 5
    (tmp_path / "in.bin").write_bytes(data)
    url = memory_url("in.bin.blp")
    with open(tmp_path / "in.bin", "rb") as stream:
        compress_file(stream, url)
    got = download(fsspec.filesystem("memory"), url[8:], tmp_path / "got.blp")
    assert bytes(bloscpack.load(got)) == data


@pytest.mark.parametrize("case", DIRECTORIES)
def test_directory_metadata_is_uploaded_last(case, s3_write_server, tmp_path):
    suffix = CASES[case][0]
    write(case, s3_write_server.url("a" + suffix),
          storage_options=s3_write_server.storage_options, scratch=tmp_path)  # fmt: skip
    keys = [k[len("a" + suffix) + 1 :] for k in s3_write_server.puts()]
    fmt = "b2nd" if case == "sparse-b2nd" else registry.by_extension("a" + suffix).name
    last = registry.published_last(fmt)
    ranks = [next((i + 1 for i, t in enumerate(last) if k == t or k.endswith("/" + t)), 0)
             for k in keys]  # fmt: skip
    assert len(keys) > 2 and ranks[0] == 0 and max(ranks) > 0
    assert ranks == sorted(ranks), keys  # chunks and attributes, then the metadata in order
    if case == "ctable":
        assert keys[-1] == "__rootdirs__"


def test_single_file_formats_are_one_put_each(s3_write_server, tmp_path):
    for case in ("blp", "b2frame", "b2nd"):
        suffix = CASES[case][0]
        write(case, s3_write_server.url(case + suffix),
              storage_options=s3_write_server.storage_options)  # fmt: skip
    assert s3_write_server.puts() == ["blp.blp", "b2frame.b2frame", "b2nd.b2nd"]
    assert sum(m == "PUT" for m, _ in s3_write_server.requests) == 3


def test_a_large_file_goes_in_parts(s3_write_server, monkeypatch):
    from bloscpack.remote import upload

    monkeypatch.setattr(upload, "PART_SIZE", 5 * 1024 * 1024)  # S3's smallest part
    data = np.random.default_rng(1).integers(0, 2**63, 3 * 1024 * 1024)  # 24 MB, incompressible
    url = s3_write_server.url("big.blp")
    bloscpack.save(data, url, storage_options=s3_write_server.storage_options)
    parts = [p for m, p in s3_write_server.requests if m == "PUT" and "partNumber=" in p]
    assert len(parts) >= 4
    fs = s3_write_server.filesystem()
    assert fs.size(f"{s3_write_server.bucket}/big.blp") > data.nbytes


# --- replacing and refusing ----------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_overwrite_false_refuses_an_existing_url(case, tmp_path):
    suffix = CASES[case][0]
    url = memory_url("a" + suffix)
    write(case, url, scratch=tmp_path)
    fs = fsspec.filesystem("memory")
    before = {k: fs.cat(k) for k in fs.find(url[8:])} or {url[8:]: fs.cat(url[8:])}
    with pytest.raises(OutputExistsError, match=f"{url}: already exists"):
        write(case, url, overwrite=False, scratch=tmp_path)
    after = {k: fs.cat(k) for k in fs.find(url[8:])} or {url[8:]: fs.cat(url[8:])}
    assert after == before


@pytest.mark.parametrize("case", CASES)
def test_replacing_removes_the_old_objects(case, s3_write_server, tmp_path):
    """A container replaced by a smaller one, and by one of each other kind (file/directory),
    leaves only the new one's objects."""
    suffix, array, options = CASES[case]
    url = s3_write_server.url("a" + suffix)
    so = s3_write_server.storage_options
    big = np.arange(2_000_000, dtype="<f8").reshape(20_000, 100)
    bloscpack.save(big if array.dtype.names is None else np.resize(TABLE, 200_000), url,
                   storage_options=so, **{k: v for k, v in options.items() if k != "sparse"})
    write(case, url, storage_options=so, scratch=tmp_path)
    local = tmp_path / ("local" + suffix)
    write(case, str(local), scratch=tmp_path)
    fs = s3_write_server.filesystem()
    got = download(fs, f"{s3_write_server.bucket}/a{suffix}", tmp_path / ("got" + suffix))
    assert files_under(got) == files_under(local)
    check_readable(case, got)


def test_a_directory_of_other_objects_is_never_replaced():
    url = memory_url("data.bcolz")
    fs = fsspec.filesystem("memory")
    fs.pipe(url[8:] + "/notes.txt", b"mine")
    with pytest.raises(OutputExistsError, match="not a Blosc container; not replacing"):
        bloscpack.save(ARRAY, url)
    assert fs.cat(url[8:] + "/notes.txt") == b"mine"


def test_file_urls_write_the_local_path(tmp_path):
    bloscpack.save(ARRAY, f"file://{tmp_path}/a.b2nd")
    bloscpack.convert(tmp_path / "a.b2nd", f"file://{tmp_path}/a.bcolz")
    np.testing.assert_array_equal(bloscpack.load(tmp_path / "a.bcolz"), ARRAY)
    with pytest.raises(OutputExistsError):
        bloscpack.save(ARRAY, f"file://{tmp_path}/a.b2nd", overwrite=False)


# --- failures --------------------------------------------------------------------------------


def failing(monkeypatch, server: S3Server, after: int, error: Exception) -> None:
    """Make uploads to ``server`` fail from the ``after``-th object on (the upload is cut short
    midway, as by a lost connection)."""
    fs = server.filesystem()
    put_file, calls, lock = fs.put_file, [], threading.Lock()

    def put_file_failing(lpath, rpath, *args, **kwargs):
        with lock:
            calls.append(rpath)
            if len(calls) > after:
                raise error
        return put_file(lpath, rpath, *args, **kwargs)

    monkeypatch.setattr(fs, "put_file", put_file_failing)


@pytest.mark.parametrize("replacing", [False, True], ids=["new", "replacing"])
@pytest.mark.parametrize("case", CASES)
def test_a_failed_upload_leaves_no_readable_container(case, replacing, s3_write_server,
                                                      tmp_path, monkeypatch):  # fmt: skip
    suffix = CASES[case][0]
    url = s3_write_server.url("a" + suffix)
    so = s3_write_server.storage_options
    key = f"{s3_write_server.bucket}/a{suffix}"
    if replacing:
        write(case, url, storage_options=so, scratch=tmp_path)
    fs = s3_write_server.filesystem()
    before = {k: fs.cat(k) for k in fs.find(key)}
    directory = case in DIRECTORIES
    failing(monkeypatch, s3_write_server, 2 if directory else 0,
            ConnectionResetError("connection reset"))
    with pytest.raises(RemoteError) as raised:
        write(case, url, storage_options=so, scratch=tmp_path)
    message = str(raised.value)
    assert message.startswith(f"{url}: upload failed (connection failed (connection reset))")
    assert "\n" not in message
    monkeypatch.undo()
    fs = s3_write_server.filesystem()
    after = {k: fs.cat(k) for k in fs.find(key)}
    if directory:  # a replaced directory's objects were being overwritten: all removed
        assert after == {}, after
        assert "removed the" in message
        assert ("and the container that was there" in message) == replacing
    else:  # one object, replaced whole or not at all
        assert after == before
        assert message.endswith("the object there is unchanged" if replacing else
                                "nothing was written")  # fmt: skip
    assert not list(tmp_path.glob("blpk-upload-*"))


@pytest.mark.parametrize("first, then", [("b2nd", "sparse-b2nd"), ("sparse-b2nd", "b2nd")])
def test_a_failed_upload_over_the_other_kind_says_so(first, then, s3_write_server,
                                                      tmp_path, monkeypatch):  # fmt: skip
    """A file replaced by a directory (or the reverse) is removed before the upload: a file
    system cannot hold both under one name."""
    url, so = s3_write_server.url("a.b2nd"), s3_write_server.storage_options
    write(first, url, storage_options=so, scratch=tmp_path)
    failing(monkeypatch, s3_write_server, 1 if then == "sparse-b2nd" else 0, OSError("gone"))
    with pytest.raises(RemoteError, match=r"\(gone\); .*the container that was there"):
        write(then, url, storage_options=so, scratch=tmp_path)
    monkeypatch.undo()
    fs = s3_write_server.filesystem()
    assert fs.find(f"{s3_write_server.bucket}/a.b2nd") == []


@pytest.mark.parametrize("case", ["sframe", "ctable"])
def test_an_interrupted_upload_removes_what_it_wrote(case, s3_write_server, tmp_path,
                                                     monkeypatch):  # fmt: skip
    suffix = CASES[case][0]
    failing(monkeypatch, s3_write_server, 3, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        write(case, s3_write_server.url("a" + suffix),
              storage_options=s3_write_server.storage_options)  # fmt: skip
    monkeypatch.undo()
    assert s3_write_server.filesystem().find(f"{s3_write_server.bucket}/a{suffix}") == []


@pytest.mark.parametrize("case", DIRECTORIES)
def test_a_replaced_directory_stops_being_readable_first(case, s3_write_server, tmp_path,
                                                         monkeypatch):  # fmt: skip
    """Its metadata objects go before any of its objects is overwritten; the stale ones once
    the new metadata is in place."""
    suffix, array, options = CASES[case]
    url, so = s3_write_server.url("a" + suffix), s3_write_server.storage_options
    key = f"{s3_write_server.bucket}/a{suffix}"
    big = np.resize(array, (len(array) * 3, *array.shape[1:]))
    write_options = {k: v for k, v in options.items() if k != "sparse"}
    if options.get("sparse"):
        bloscpack.save(big, tmp_path / "big.blp")
        bloscpack.convert(tmp_path / "big.blp", url, storage_options=so, **options)
    else:
        bloscpack.save(big, url, storage_options=so, **write_options)
    fs = s3_write_server.filesystem()
    old = fs.find(key)
    events: list[tuple[str, object]] = []
    rm, put_file = fs.rm, fs.put_file

    def logged_rm(keys, *args, **kwargs):
        events.append(("rm", sorted(keys)))
        return rm(keys, *args, **kwargs)

    def logged_put_file(local, key, *args, **kwargs):
        events.append(("put", key))
        return put_file(local, key, *args, **kwargs)

    monkeypatch.setattr(fs, "rm", logged_rm)
    monkeypatch.setattr(fs, "put_file", logged_put_file)
    write(case, url, storage_options=so, scratch=tmp_path)
    fmt = "b2nd" if case == "sparse-b2nd" else registry.by_extension("a" + suffix).name
    last = registry.published_last(fmt)
    published = sorted(k for k in old if any(k.endswith("/" + t) for t in last))
    assert events[0] == ("rm", published)
    puts = [e[1] for e in events[1:-1]]
    assert all(e[0] == "put" for e in events[1:-1]) and len(puts) == len(set(puts))
    new = fs.find(key)
    assert events[-1] == ("rm", sorted(set(old) - set(new)))
    assert len(events[-1][1]) > 0


def test_part_size_grows_with_the_object():
    from bloscpack.remote import upload

    fs = s3fs.S3FileSystem(anon=True, skip_instance_cache=True)
    assert upload._part_options(fs, 10) == {"chunksize": upload.PART_SIZE,
                                            "max_concurrency": upload.PARTS_AT_ONCE}  # fmt: skip
    huge = upload.PART_SIZE * upload.MAX_PARTS * 3
    assert upload._part_options(fs, huge)["chunksize"] * upload.MAX_PARTS >= huge
    assert upload._part_options(fsspec.filesystem("memory"), huge) == {}


def test_no_local_copy_is_left_behind(tmp_path, monkeypatch, s3_write_server):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    failing(monkeypatch, s3_write_server, 1, ConnectionResetError("reset"))
    with pytest.raises(RemoteError):
        bloscpack.save(ARRAY, s3_write_server.url("a.bcolz"),
                       storage_options=s3_write_server.storage_options)  # fmt: skip
    bloscpack.save(ARRAY, memory_url("a.bcolz"))
    assert list(tmp_path.iterdir()) == []


def test_a_missing_bucket_is_one_line(s3_write_server):
    url = f"s3://no-such-bucket-{uuid.uuid4().hex[:8]}/a.blp"
    with pytest.raises(RemoteError, match=rf"^{url}: upload failed \(not found: .*bucket"):
        bloscpack.save(ARRAY, url, storage_options=s3_write_server.storage_options)


def test_access_denied_is_one_line(s3_write_server, monkeypatch):
    failing(monkeypatch, s3_write_server, 0, PermissionError("Access Denied"))
    url = s3_write_server.url("a.b2nd")
    with pytest.raises(RemoteError, match=rf"^{url}: upload failed \(access denied\); nothing"):
        bloscpack.save(ARRAY, url, storage_options=s3_write_server.storage_options)


def test_a_refused_connection_is_one_line():
    options = {"endpoint_url": "http://127.0.0.1:9", "key": "k", "secret": "s",
               "config_kwargs": {"retries": {"max_attempts": 1}, "connect_timeout": 2}}  # fmt: skip
    with pytest.raises(RemoteError, match=r"^s3://bucket/a.blp: .*connect"):
        bloscpack.save(ARRAY, "s3://bucket/a.blp", storage_options=options)


# --- no in-place changes ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        lambda url, tmp: append(url, ARRAY[:10]),
        lambda url, tmp: bloscpack.BloscFile(url, "ab"),
        lambda url, tmp: bloscpack.BloscFile(url, "wb"),
        lambda url, tmp: bloscpack.Frame(url, "a"),
        lambda url, tmp: bloscpack.Frame(url, "w"),
    ],
    ids=["append", "BloscFile-ab", "BloscFile-wb", "Frame-a", "Frame-w"],
)
def test_in_place_changes_to_a_url_are_refused(change, tmp_path):
    url = memory_url("a.blp")
    bloscpack.save(ARRAY, url)
    with pytest.raises(UnsupportedError, match=f"^{url}: cannot .* a URL: object stores have no"):
        change(url, tmp_path)
    with pytest.raises(BloscpackError, match="object stores have no in-place writes"):
        change("s3://bucket/x.blp", tmp_path)


# --- the command line ------------------------------------------------------------------------


def blpk(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "bloscpack", *args], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip


def test_cli_writes_to_s3(s3_write_server: S3Server, tmp_path):
    so = s3_write_server.storage_options
    opts = [f"--storage-option=endpoint_url={so['endpoint_url']}",
            "--storage-option=key=testing", "--storage-option=secret=testing"]  # fmt: skip
    np.save(tmp_path / "in.npy", ARRAY)
    bucket = s3_write_server.bucket
    url = s3_write_server.url("x.b2nd")
    proc = blpk(*opts, "c", str(tmp_path / "in.npy"), url)
    assert proc.returncode == 0, proc.stderr
    again = blpk(*opts, "c", str(tmp_path / "in.npy"), url)
    assert again.returncode == 1
    assert again.stderr.strip() == f"blpk: error: output file '{url}' exists!"
    assert blpk(*opts, "-f", "c", str(tmp_path / "in.npy"), url).returncode == 0
    bloscpack.save(ARRAY, tmp_path / "local.blp")
    for dst, args in ((s3_write_server.url("y.bcolz"), ["convert"]),
                      (s3_write_server.url("out.bin"), ["d"])):  # fmt: skip
        proc = blpk(*opts, *args, str(tmp_path / "local.blp"), dst)
        assert proc.returncode == 0, proc.stderr
    fs = s3_write_server.filesystem()
    got = download(fs, f"{bucket}/x.b2nd", tmp_path / "x.b2nd")
    np.testing.assert_array_equal(bloscpack.load(got), ARRAY)
    got = download(fs, f"{bucket}/y.bcolz", tmp_path / "y.bcolz")
    np.testing.assert_array_equal(bloscpack.load(got), ARRAY)
    assert fs.cat(f"{bucket}/out.bin") == ARRAY.tobytes()
    proc = blpk(*opts, "a", s3_write_server.url("z.blp"), str(tmp_path / "in.npy"))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "object stores have no in-place writes" in proc.stderr
