"""python-blosc2 files whose chunks do not hold their data (lazy expressions and UDFs, Proxy
caches, C2Array references, sparse EmbedStores), written by the real python-blosc2: every entry
point (``load``, ``open``, ``convert``, ``verify``, ``info`` and ``blpk d``/``info``/``verify``/
``convert``) refuses each by name with ``UnmodelledFeature``; ordinary python-blosc2 files with
user vlmeta still read exactly."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import blosc2
import numpy as np
import pytest
from blosc2.b2objects import make_b2object_carrier, write_b2object_payload

import bloscpack
from bloscpack.errors import UnmodelledFeature

EVALUATE = "stored as placeholder chunks; evaluate it with python-blosc2 and save the result"
EVAL_EXPR = ("stored as placeholder chunks; load it with evaluate=True, or evaluate it"
                       " with python-blosc2 and save the result")  # fmt: skip
OPERANDS = "over operands o0=a.b2nd, o1=b.b2nd"
EMBED = "(arrays embedded as frames in its data), which this version cannot read yet; open it"


def _expr(a: blosc2.NDArray, b: blosc2.NDArray, name: str) -> None:
    (a + b).save(name)


def _expr_sparse(a: blosc2.NDArray, b: blosc2.NDArray, name: str) -> None:
    (a + b).save(name, contiguous=False)


@blosc2.dsl_kernel
def kernel(x, y):  # type: ignore[no-untyped-def]
    return x + y


def _udf(a: blosc2.NDArray, b: blosc2.NDArray, name: str) -> None:
    blosc2.lazyudf(kernel, (a, b), dtype=np.float64).save(urlpath=name)


def plus_one(inputs, output, offset):  # type: ignore[no-untyped-def]
    output[:] = inputs[0] + 1


def _udf_python(a: blosc2.NDArray, b: blosc2.NDArray, name: str) -> None:
    """A UDF of a plain Python function: python-blosc2's older ``LazyArray`` metalayer."""
    blosc2.lazyudf(plus_one, (a,), dtype=np.float64).save(urlpath=name)


def _proxy(a: blosc2.NDArray, b: blosc2.NDArray, name: str) -> None:
    proxy = blosc2.Proxy(a, urlpath=name, mode="w")
    assert proxy[2:4].tolist() == [2.0, 3.0]  # one chunk fetched into the cache


def _c2array(a: blosc2.NDArray, b: blosc2.NDArray, name: str) -> None:
    """What ``C2Array.save`` writes (it needs a server to build the C2Array first): a carrier
    with the ``c2array`` marker and its reference, through python-blosc2's own functions."""
    carrier = make_b2object_carrier("c2array", (10,), np.float64, urlpath=name, mode="w")
    ref = blosc2.Ref.c2array_ref("example/ds-1d.b2nd", "https://cat2.cloud/demo")
    write_b2object_payload(carrier, ref.to_dict())


def _embed_sparse(a: blosc2.NDArray, b: blosc2.NDArray, name: str) -> None:
    storage = blosc2.Storage(contiguous=False, urlpath=name, mode="w")
    store = blosc2.EmbedStore(name, mode="w", storage=storage)
    store["/a"] = np.arange(3)


#: kind: (file name, its format, how python-blosc2 writes it, the message after "<name>: ").
KINDS: dict[str, tuple[str, str, Callable[..., None], str]] = {
    "lazyexpr": ("ex.b2nd", "b2nd", _expr,
                 f"a python-blosc2 lazy expression ('(o0 + o1)' {OPERANDS}) {EVAL_EXPR}"),
    "lazyexpr-sparse": ("exs.b2nd", "b2nd", _expr_sparse,
                        f"a python-blosc2 lazy expression ('(o0 + o1)' {OPERANDS}) {EVAL_EXPR}"),
    "lazyudf": ("udf.b2nd", "b2nd", _udf,
                f"a python-blosc2 lazy UDF (function 'kernel' {OPERANDS}) {EVALUATE}"),
    "lazyudf-python": ("udfp.b2nd", "b2nd", _udf_python,
                       "a python-blosc2 lazy UDF (function 'plus_one' over operands o0=a.b2nd)"
                       f" {EVALUATE}"),
    "proxy": ("proxy.b2nd", "b2nd", _proxy,
              "a python-blosc2 Proxy cache of 'a.b2nd', whose chunks hold only what was read"
              " through it; read its source, or save the proxy's data with python-blosc2"),
    "c2array": ("c2.b2nd", "b2nd", _c2array,
                "a python-blosc2 C2Array reference (to 'example/ds-1d.b2nd' at"
                " 'https://cat2.cloud/demo') stored as placeholder chunks; fetch the array with"
                " python-blosc2 and save it"),
    "embedstore-sparse": ("xs.b2e", "sframe", _embed_sparse,
                          f"a python-blosc2 EmbedStore {EMBED} with python-blosc2"),
}  # fmt: skip


@contextlib.contextmanager
def _inside(directory: Path):  # type: ignore[no-untyped-def]
    """Run the block in ``directory`` (python-blosc2 records operand paths as given)."""
    before = os.getcwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(before)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of every kind, written by python-blosc2, and ordinary files beside them."""
    root = tmp_path_factory.mktemp("blosc2_features")
    with _inside(root):
        cparams = blosc2.CParams(nthreads=1)
        a = blosc2.asarray(np.arange(10, dtype="f8"), urlpath="a.b2nd", mode="w",
                           cparams=cparams)  # fmt: skip
        b = blosc2.asarray(np.ones(10), urlpath="b.b2nd", mode="w", cparams=cparams)
        for name, _, write, _ in KINDS.values():
            write(a, b, name)
        user = blosc2.asarray(np.arange(5), urlpath="user.b2nd", mode="w", cparams=cparams)
        user.vlmeta["foo"] = "bar"
        user.vlmeta["_LazyArrayX"] = [1, 2]
        schunk = blosc2.SChunk(chunksize=40, data=np.arange(20, dtype="i4"),
                               urlpath="user.b2frame", mode="w", cparams=cparams)  # fmt: skip
        schunk.vlmeta["b2o_note"] = "a user attribute"
        blosc2.DictStore("x.b2z", mode="w").close()
        with blosc2.DictStore("x.b2d", mode="w") as store:
            store["/a"] = np.arange(3)
    return root


def expected(root: Path, kind: str) -> tuple[Path, str]:
    name, _, _, message = KINDS[kind]
    return root / name, f"{root / name}: {message}"


def _load(path: Path) -> None:
    bloscpack.load(path)


def _open(path: Path) -> None:
    with bloscpack.open(path) as array:
        array[...]


def _convert(path: Path) -> None:
    bloscpack.convert(path, path.parent / "converted.blp")


def _info(path: Path) -> None:
    bloscpack.info(path)


def _append(path: Path) -> None:
    bloscpack.append(path, np.zeros(2))


ENTRY_POINTS = {"load": _load, "open": _open, "convert": _convert, "info": _info,
                "append": _append}  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_each_entry_point_refuses_each_kind_by_name(written, entry, kind):
    path, message = expected(written, kind)
    assert bloscpack.detect(path) == KINDS[kind][1]
    with pytest.raises(UnmodelledFeature) as caught:
        ENTRY_POINTS[entry](path)
    assert str(caught.value) == message
    assert not (written / "converted.blp").exists()


@pytest.mark.parametrize("kind", KINDS)
def test_verify_reports_each_kind_not_ok(written, kind):
    path, message = expected(written, kind)
    report = bloscpack.verify(path)
    assert (report["format"], report["ok"], report["problems"]) == (KINDS[kind][1], False,
                                                                    [message])  # fmt: skip


def blpk(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bloscpack", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", ["d", "info", "verify", "convert"])
def test_each_blpk_command_refuses_each_kind_by_name(written, command, kind):
    name, fmt, _, message = KINDS[kind]
    args = {"d": ["-e", name, "out.npy"], "convert": [name, "out.blp"]}.get(command, [name])
    done = blpk(command, *args, cwd=written)
    assert done.returncode == 1, done.stderr
    if command == "verify":
        assert (done.stdout, done.stderr) == (
            f"blpk: {name}: FAILED ({fmt}, 0 chunks): {name}: {message}\n",
            "",
        )
    else:
        assert done.stderr == f"blpk: error: {name}: {message}\n"
    if command == "info":  # what it is, then why it cannot be read
        assert done.stdout.splitlines()[:2] == [
            f"blpk: file:      {name}",
            f"blpk: format:    {fmt}: {bloscpack.containers.registry.get(fmt).description}",
        ]  # fmt: skip
    assert not (written / "out.npy").exists() and not (written / "out.blp").exists()


def test_ordinary_blosc2_files_with_user_vlmeta_still_read_exactly(written):
    assert bloscpack.load(written / "a.b2nd").tolist() == list(range(10))
    assert bloscpack.load(written / "user.b2nd").tolist() == [0, 1, 2, 3, 4]
    assert bloscpack.verify(written / "user.b2nd")["ok"] is True
    with bloscpack.open(written / "user.b2nd") as array:
        assert array.metadata == {"foo": "bar", "_LazyArrayX": [1, 2]}
    frame = bloscpack.load(written / "user.b2frame")
    assert frame.tobytes() == np.arange(20, dtype="i4").tobytes()
    assert bloscpack.info(written / "user.b2frame")["format"] == "b2frame"


def test_bloscpack_own_metadata_is_no_feature(tmp_path):
    path = tmp_path / "own.b2nd"
    bloscpack.save(np.arange(6).reshape(2, 3), path, metadata={"b2o_like": 1, "dims": ["x"]})
    assert bloscpack.load(path).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert bloscpack.verify(path)["ok"] is True


def test_stores_and_their_members_read(written):
    """A DictStore directory's arrays are ordinary b2nd files; its ``embed.b2e`` is an embed
    store of its own (here holding nothing); the stores (``.b2d`` directory, ``.b2z`` zip) are
    the ``b2store`` format, read as dicts of arrays (see tests/test_b2store.py)."""
    assert bloscpack.load(written / "x.b2d" / "a.b2nd").tolist() == [0, 1, 2]
    assert bloscpack.detect(written / "x.b2d" / "embed.b2e") == "b2store"
    assert bloscpack.load(written / "x.b2d" / "embed.b2e") == {}
    assert bloscpack.load(written / "x.b2z") == {}
    assert {k: v.tolist() for k, v in bloscpack.load(written / "x.b2d").items()} == {
        "/a": [0, 1, 2]
    }


@pytest.mark.parametrize("sparse", [False, True], ids=["b2frame", "sframe"])
@pytest.mark.parametrize(
    ("meta", "vlmeta", "message"),
    [
        ({"LazyArray": 0}, {},
         f"a python-blosc2 lazy expression (unknown over no operands) {EVAL_EXPR}"),
        ({}, {"_LazyArray": {"expression": "o0 * 2", "operands": {"o0": "x.b2nd"}}},
         f"a python-blosc2 lazy expression ('o0 * 2' over operands o0=x.b2nd) {EVAL_EXPR}"),
        ({"vlarray": {"version": 1}}, {},
         "a python-blosc2 ObjectArray (msgpack-serialized objects in its chunks), which this"
         " version cannot read; open it with python-blosc2"),
    ],
    ids=["metalayer-alone", "vlmeta-alone", "objectarray"],
)  # fmt: skip
def test_a_marker_refuses_a_plain_frame_with_or_without_its_payload(tmp_path, sparse, meta,
                                                                    vlmeta, message):  # fmt: skip
    """Frames python-blosc2's SChunk writes with one marker of the list (the metalayer alone,
    the vlmetalayer alone): refused the same way, contiguous or sparse."""
    path = tmp_path / "marked.b2frame"
    schunk = blosc2.SChunk(chunksize=40, data=np.arange(20, dtype="i4"), urlpath=str(path),
                           contiguous=not sparse, meta=meta or None, mode="w")  # fmt: skip
    for key, value in vlmeta.items():
        schunk.vlmeta[key] = value
    del schunk
    assert bloscpack.detect(path) == ("sframe" if sparse else "b2frame")
    with pytest.raises(UnmodelledFeature) as caught:
        bloscpack.load(path)
    assert str(caught.value) == f"{path}: {message}"
    assert bloscpack.verify(path)["problems"] == [f"{path}: {message}"]


@pytest.mark.parametrize("kind", ["lazyexpr", "lazyexpr-sparse", "embedstore-sparse"])
def test_a_url_is_refused_by_name(written, kind):
    from remote_servers import http_server

    name, fmt, _, message = KINDS[kind]
    with http_server(str(written)) as server:
        url = f"{server.url}/{name}"
        assert bloscpack.detect(url) == fmt
        with pytest.raises(UnmodelledFeature) as caught:
            bloscpack.load(url)
        assert str(caught.value) == f"{url}: {message}"
        assert bloscpack.verify(url)["problems"] == [f"{url}: {message}"]
