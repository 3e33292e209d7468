"""Servers that misbehave: an object size declared far beyond the bytes there are, bodies
longer than the range asked for.  Each call ends in an error of bloscpack's tree (or a
correct result) within the memory budget of :mod:`test_memory_budget`."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

from remote_servers import http_server  # noqa: E402
from test_memory_budget import BUDGET, DATA  # noqa: E402

#: Runs in the subprocess: cap the address space, then each call on the URL; one JSON line
#: per call: [exception class or "ok", message or what it gave].
SCRIPT = textwrap.dedent("""
    import json, resource, sys, bloscpack
    url, budget = sys.argv[1], int(sys.argv[2])
    with open("/proc/self/statm") as fh:
        used = int(fh.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + budget, used + budget))

    def first(url):
        with bloscpack.open(url) as array:
            return int(array[0])

    def last(url):
        with bloscpack.open(url) as array:
            return int(array[-1])

    def verify(url):
        report = bloscpack.verify(url)
        return [report["ok"], report["problems"], report["notes"]]

    for call in (first, last, verify):
        try:
            print(json.dumps(["ok", call(url)]), flush=True)
        except BaseException as exc:
            print(json.dumps([type(exc).__name__, str(exc)]), flush=True)
""")
FILES = {"a.blp": "bloscpack/cli_chunk_1K.blp", "a.chunk": "blosc2/chunks/m_lz4_shuffle.chunk"}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    for name, source in FILES.items():
        shutil.copy(DATA / source, root / name)
    return root


def calls(url: str) -> list[list]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, url, str(BUDGET)], capture_output=True, text=True,
        timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.timeout(240)
def test_a_declared_size_of_2_50_is_not_allocated(root: Path):
    with http_server(str(root), declare=2**50) as server:
        blp, chunk = calls(f"{server.url}/a.blp"), calls(f"{server.url}/a.chunk")
    # the last chunk is fetched as far as a chunk of chunk_size (1024) reaches, not to 2**50
    short = f"{server.url}/a.blp: truncated response: bytes 422-1481 came as 113 bytes"
    stale = 2**50 - 535  # the .blp's chunks end at byte 535: the rest is stale bytes
    assert blp == [["ok", 0], ["RemoteError", short], ["ok", [True, [], [
        f"{stale} bytes after the last chunk are ignored (stale bytes, as bloscpack 0.16's"
        " append leaves them)"]]]]  # fmt: skip
    assert chunk == [["ok", 232], ["ok", 0], ["ok", [True, [], []]]]


@pytest.mark.timeout(240)
def test_a_body_longer_than_the_range_is_not_read(root: Path):
    with http_server(str(root), extra=256 << 20) as server:
        url = f"{server.url}/a.blp"
        found = calls(url)
        sent = server.counter.extra
    message = (f"{url}: the server sent more than the 16384 bytes asked for ('bytes=0-16383');"
               " not reading the rest")  # fmt: skip
    # verify fetches the object whole (no Range: the server sends it as it is)
    assert found == [["RemoteError", message], ["RemoteError", message], ["ok", [True, [], []]]]
    assert sent < 64 << 20  # the client hung up after a piece, not after the 256 MiB


#: Credentials a test gives; none may appear in any message, repr or line on stderr.
SECRETS = ("pw-Secret-1", "Token-Secret-2", "Bearer-Secret-3", "Option-Secret-4")


def _shown(exc: BaseException) -> str:
    """Everything an exception shows: its text, its repr, and those of its chain."""
    seen = []
    while exc is not None:
        seen += [str(exc), repr(exc), repr(getattr(exc, "args", ()))]
        exc = exc.__cause__ or exc.__context__
    return "\n".join(seen)


def test_credentials_never_appear_in_messages_reprs_or_stderr(root: Path, caplog):
    import bloscpack
    from bloscpack.errors import RemoteError

    caplog.set_level(logging.DEBUG)  # the log lines of every library, fsspec's included

    with http_server(str(root)) as server:
        plain = server.url
        base = plain.replace("http://", f"http://user:{SECRETS[0]}@")
        token = f"?token={SECRETS[1]}&x=1"
        header = {"headers": {"Authorization": SECRETS[2]}}
        shown = []
        for url, options in ((f"{base}/missing.blp{token}", None),
                             (f"{plain}/missing.blp{token}", header),
                             (f"{base}/a.blp{token}", None)):  # fmt: skip
            try:
                with bloscpack.open(url, storage_options=options) as array:
                    shown.append(repr(array))
            except RemoteError as exc:
                shown.append(_shown(exc))
        blpk = [sys.executable, "-m", "bloscpack"]
        runs = (
            [*blpk, "-d", "info", f"{base}/missing.blp{token}",
             "--storage-option", f"password={SECRETS[3]}"],
            [*blpk, "info", f"{base}/a.blp", "--storage-option", f"secret:{SECRETS[3]}"],
        )  # fmt: skip
        for argv in runs:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            assert done.returncode in (1, 2), done.stderr
            shown.append(done.stdout + done.stderr)
    assert any("fsspec" in record.name for record in caplog.records)
    shown.append(caplog.text)
    text = "\n".join(shown)
    hidden = plain.replace("http://", "http://user:***@")
    assert f"{hidden}/missing.blp?token=***&x=1: not found" in text
    assert f"{plain}/missing.blp?token=***&x=1: not found" in text
    assert f"{hidden}/a.blp?token=***&x=1'>" in text  # the array's repr
    assert "('password', '***')" in text and "not key=value: *** (e.g. anon=true)" in text
    assert [secret for secret in SECRETS if secret in text] == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("server", "limits"), [
    ({"latency": 30.0}, "connect 10 s, read 1 s, total 20 s"),  # no answer: the read timeout
    ({"trickle": 0.5}, "connect 10 s, read 1 s, total 3 s"),  # a byte every 0.5 s: the total
])  # fmt: skip
def test_a_slow_server_times_out(root: Path, monkeypatch: pytest.MonkeyPatch, server, limits):
    import bloscpack
    from bloscpack.errors import RemoteError

    total = limits.rpartition("total ")[2].split()[0]
    monkeypatch.setenv("BLOSCPACK_HTTP_TIMEOUT", f"read=1,total={total}")
    with http_server(str(root), **server) as http:
        url = f"{http.url}/a.blp"
        began = time.monotonic()
        with pytest.raises(RemoteError) as raised:
            bloscpack.load(url)
        took = time.monotonic() - began
    assert str(raised.value) == f"{url}: timed out ({limits})"
    assert took < float(total) + 5  # one attempt: a slow server is not asked again


def test_a_bad_timeout_setting_is_named(monkeypatch: pytest.MonkeyPatch):
    import bloscpack
    from bloscpack.errors import RemoteError

    monkeypatch.setenv("BLOSCPACK_HTTP_TIMEOUT", "read=soon")
    with pytest.raises(RemoteError) as raised:
        bloscpack.load("http://127.0.0.1:9/a.blp")
    assert str(raised.value) == (
        "http://127.0.0.1:9/a.blp: BLOSCPACK_HTTP_TIMEOUT: 'read=soon' is not connect=, read="
        " or total= a number of seconds > 0"
    )
