"""The suite's second run as another machine: ``tests/machine/sitecustomize.py`` makes every
process see the CPU cache sizes ``BLOSCPACK_TEST_CPU_CACHES`` names, so default block shapes
(and compressed sizes) differ from this machine's. These tests prove the switch works, so that
``.ci/run``'s second pass really is another machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import blosc2
import pytest

MACHINE = Path(__file__).parent / "machine"
OTHER = "32768,262144,8388608"  # an older x86_64: 32 KiB L1d, 256 KiB L2, 8 MiB L3
PROBE = (
    "import json, blosc2, numpy as np, bloscpack\n"
    "from bloscpack.containers.b2nd.layout import CacheSizes\n"
    "a = blosc2.asarray(np.linspace(0, 1, 10**6))\n"
    "c = CacheSizes.current()\n"
    "print(json.dumps([a.blocks, [c.l1_data, c.l2, c.l3]]))\n"
)


def probe(**env: str) -> list:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          env={**os.environ, **env}, check=True, timeout=120)  # fmt: skip
    return json.loads(done.stdout)


def test_a_process_sees_the_caches_it_is_given():
    _, caches = probe(PYTHONPATH=str(MACHINE), BLOSCPACK_TEST_CPU_CACHES=OTHER)
    assert caches == [32768, 262144, 8388608]


def test_the_given_caches_change_the_default_blocks():
    """Without the switch, a process sees the machine it runs on; with it, the other machine:
    the default blocks of one array differ unless the two have the same caches."""
    here = probe(PYTHONPATH=str(MACHINE), BLOSCPACK_TEST_CPU_CACHES="")
    there = probe(PYTHONPATH=str(MACHINE), BLOSCPACK_TEST_CPU_CACHES=OTHER)
    assert there[1] == [32768, 262144, 8388608]
    assert (here[0] != there[0]) == (here[1] != there[1])


def test_this_run_sees_the_caches_it_was_given():
    """In ``.ci/run``'s second pass, the pytest process itself is the other machine."""
    wanted = os.environ.get("BLOSCPACK_TEST_CPU_CACHES")
    if not wanted:
        pytest.skip("this run is this machine (BLOSCPACK_TEST_CPU_CACHES is not set)")
    got = [blosc2.cpu_info[k] for k in ("l1_data_cache_size", "l2_cache_size", "l3_cache_size")]
    assert got == [int(n) for n in wanted.split(",")]
