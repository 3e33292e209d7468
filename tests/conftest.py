"""Shared fixtures: paths to the golden corpora and a bloscpack 0.16 oracle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def load_manifest(corpus: str) -> dict:
    """The MANIFEST.json of a golden corpus under tests/data."""
    return json.loads((DATA / corpus / "MANIFEST.json").read_text())


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


class Bloscpack016:
    """Runs the real bloscpack 0.16 in a subprocess (it shares our import name)."""

    PRELUDE = (
        "import collections, collections.abc\n"
        "collections.MutableMapping = collections.abc.MutableMapping\n"
        "import bloscpack\n"
        "assert bloscpack.__version__ == '0.16.0', bloscpack.__file__\n"
    )

    def __init__(self, target: Path) -> None:
        self.target = target

    def run(self, code: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """Run ``code`` (after the import prelude) with bloscpack 0.16; ``sys.argv[1:]`` = args."""
        env = dict(os.environ, PYTHONPATH=str(self.target))
        proc = subprocess.run(
            [sys.executable, "-S", "-c", self.PRELUDE + code, *args],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        if check and proc.returncode != 0:
            raise AssertionError(f"bloscpack 0.16 failed:\n{proc.stderr}")
        return proc

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        """Run 0.16's ``blpk`` command line with ``args``."""
        code = (
            "import sys; from bloscpack.cli import main;"
            " sys.argv = ['blpk'] + sys.argv[1:]; main()"
        )
        return self.run(code, *args, check=False)


@pytest.fixture(scope="session")
def bloscpack016() -> Bloscpack016:
    """The real bloscpack 0.16, installed once into a cache directory outside the project."""
    default = Path(tempfile.gettempdir()) / "bloscpack-0.16-oracle"
    target = Path(os.environ.get("BLOSCPACK016_DIR", default))
    marker = target / ".installed"
    if not marker.exists():
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--target", str(target),
             "bloscpack==0.16.0", "blosc==1.11.4", "numpy"],
            capture_output=True, text=True,
        )  # fmt: skip
        if proc.returncode != 0:
            pytest.skip(f"cannot install bloscpack 0.16: {proc.stderr.strip()[-300:]}")
        marker.touch()
    return Bloscpack016(target)


#: The CPU caches this run simulates (tests/machine/sitecustomize.py), keyed as blosc2.cpu_info
SIMULATED_CACHES = dict(zip(("l1_data_cache_size", "l2_cache_size", "l3_cache_size"),
                            map(int, filter(None, os.environ.get("BLOSCPACK_TEST_CPU_CACHES",
                                                                 "").split(","))),
                            strict=False))  # fmt: skip


@pytest.fixture(autouse=True)
def _keeps_the_simulated_machine(request):
    """In a run as another machine, a test that brings this machine's caches back fails (and
    the simulated ones are restored for the tests after it)."""
    yield
    if not SIMULATED_CACHES or "blosc2" not in sys.modules:
        return
    info = sys.modules["blosc2"].cpu_info
    changed = {k: info.get(k) for k, v in SIMULATED_CACHES.items() if info.get(k) != v}
    if changed:
        info.update(SIMULATED_CACHES)
        pytest.fail(f"{request.node.nodeid} changed blosc2.cpu_info to {changed}")
