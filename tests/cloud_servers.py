"""Google Cloud Storage and Azure Blob servers on loopback for the tests of ``gs://`` and
``az://`` URLs: gcp-storage-emulator (in a thread of the test process) and Azurite's blob
service (a node process).  The fixture ``cloud`` gives, for each back end, the URL of a fresh
folder of this test, the ``storage_options`` that reach the server and the same as ``blpk``
arguments.

Azurite comes from npm: ``.ci/run`` installs it under ``.ci/node`` (``npm install --prefix
.ci/node azurite``); the fixture finds it there or on ``PATH``.  Without it the Azure tests are
skipped, saying so, except under CI (``CI`` set), where they fail: a green run must not hide a
missing install step."""

from __future__ import annotations

import itertools
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Azurite's well-known development account (public, documented by Microsoft).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/"
               "KBHBeksoGMGw==")  # fmt: skip
BUCKET = "data"
#: Seconds Azurite may take to start listening.
START_TIMEOUT = 60
#: gcsfs's newer file system first asks a gRPC control API (which no emulator serves, and
#: which takes a minute to time out) what kind of bucket it reads: the plain one is used.
GCSFS_PLAIN = {"GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false"}

_folders = itertools.count()


@dataclass
class CloudStore:
    """A storage server: URLs ``scheme://data/<folder>/name`` (``folder``: new for each test)
    and the ``storage_options`` that reach them; ``env``: what a ``blpk`` process needs in its
    environment as well."""

    scheme: str
    storage_options: dict[str, Any]
    env: dict[str, str]
    folder: str = ""

    def url(self, name: str) -> str:
        return f"{self.scheme}://{BUCKET}/{self.folder}/{name}"

    def key(self, name: str) -> str:
        """The path of ``name`` on :meth:`filesystem`."""
        return f"{BUCKET}/{self.folder}/{name}"

    def filesystem(self) -> Any:
        """The fsspec file system the library uses for these URLs, its listings forgotten."""
        import fsspec

        fs, _ = fsspec.core.url_to_fs(self.url(""), **self.storage_options)
        fs.invalidate_cache()
        return fs

    def cli_options(self) -> list[str]:
        """``blpk``'s ``--storage-option`` arguments for :attr:`storage_options`."""
        return [f"--storage-option={k}={v}" for k, v in self.storage_options.items()]

    def for_test(self) -> CloudStore:
        return CloudStore(self.scheme, self.storage_options, self.env, f"t{next(_folders)}")


@pytest.fixture(scope="session")
def gcs_store() -> Iterator[CloudStore]:
    """gcp-storage-emulator on a free loopback port, in memory, with the bucket ``data``."""
    pytest.importorskip("gcsfs")
    server_module = pytest.importorskip("gcp_storage_emulator.server")
    import gcsfs.core

    mp = pytest.MonkeyPatch()
    for name, value in GCSFS_PLAIN.items():
        mp.setenv(name, value)  # for blpk processes; in this one gcsfs may be imported already
    registered = sys.modules["fsspec.registry"]._registry  # noqa: SLF001 - undone at the end
    for protocol in ("gs", "gcs"):
        mp.setitem(registered, protocol, gcsfs.core.GCSFileSystem)
    logging.getLogger("gcp_storage_emulator").setLevel(logging.CRITICAL)  # its 404s
    server = server_module.create_server("127.0.0.1", 0, in_memory=True, default_bucket=BUCKET)
    server.start()
    httpd = server._api._httpd  # noqa: SLF001 - its port, and its reports of dropped clients
    httpd.handle_error = lambda request, address: None  # a client gone mid-answer (cancelled)
    endpoint = f"http://127.0.0.1:{httpd.server_address[1]}"
    options = {"endpoint_url": endpoint, "token": "anon", "project": "test"}
    try:
        yield CloudStore("gs", options, dict(GCSFS_PLAIN))
    finally:
        server.stop()
        mp.undo()


def azurite_command() -> list[str] | None:
    """The command that starts Azurite's blob service: ``.ci/node``'s, else one on ``PATH``."""
    local = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "azurite-blob"
    if local.exists():
        return [str(local)]
    found = shutil.which("azurite-blob")
    return [found] if found else None


@pytest.fixture(scope="session")
def azure_store() -> Iterator[CloudStore]:
    """Azurite's blob service on a free loopback port, in memory, with the container
    ``data``."""
    pytest.importorskip("adlfs")
    command = azurite_command()
    if command is None:
        reason = ("azurite is not installed (npm install --no-save --prefix .ci/node azurite,"
                  " as .ci/run does)")  # fmt: skip
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    work = tempfile.mkdtemp(prefix="azurite-")
    log = Path(work) / "out.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*command, "--blobHost", "127.0.0.1", "--blobPort", "0", "--inMemoryPersistence",
             "--skipApiVersionCheck", "--loose", "--disableTelemetry", "--silent"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=work,
        )  # fmt: skip
    try:
        endpoint = _wait_for_listening(process, log)
        connection = (f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};"
                      f"AccountKey={AZURITE_KEY};BlobEndpoint={endpoint}/{AZURITE_ACCOUNT};")
        store = CloudStore("az", {"connection_string": connection}, {})
        store.filesystem().mkdir(BUCKET)
        yield store
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(work, ignore_errors=True)


def _wait_for_listening(process: subprocess.Popen, log: Path) -> str:
    """The endpoint Azurite says it listens on (it picks the free port)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        found = re.search(r"listens on (http://127\.0\.0\.1:\d+)", text)
        if found:
            return found.group(1)
        if process.poll() is not None:
            raise RuntimeError(f"azurite exited ({process.returncode}): {text.strip()}")
        time.sleep(0.05)
    raise RuntimeError(f"azurite did not start in {START_TIMEOUT} s: {log.read_text()}")


@pytest.fixture(params=["gs", "az"])
def cloud(request: pytest.FixtureRequest) -> CloudStore:
    """Each cloud back end in turn, with a new folder for this test."""
    store = request.getfixturevalue("gcs_store" if request.param == "gs" else "azure_store")
    return store.for_test()

