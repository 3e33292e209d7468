"""No entry point allocates more than what the caller asked to receive plus what the input's
size justifies: hostile size claims (``tests/data/bad``) are read in a subprocess whose address
space is limited to what it uses after start-up plus :data:`BUDGET`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BAD = Path(__file__).parent / "data" / "bad"
#: Address space an entry point may add to what the process holds once started.
BUDGET = 256 << 20
MANIFEST = json.loads((BAD / "MANIFEST.json").read_text())["files"]

#: Runs in the subprocess: start up, cap the address space, then call ``CALL`` on ``PATH``.
SCRIPT = textwrap.dedent("""
    import resource, sys, numpy as np, bloscpack
    path, budget, call = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open("/proc/self/statm") as fh:
        used = int(fh.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + budget, used + budget))
    if call == "verify":
        print(bloscpack.verify(path)["ok"])
    elif call == "stepped":
        with bloscpack.open(path) as a:
            step = a.shape[0] // 7
            print(a[::step].tolist())
""")


def run(path: Path, call: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path), str(BUDGET), call],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


@pytest.mark.parametrize("entry", [e for e in MANIFEST if e["error"] is None],
                         ids=lambda e: e["file"])  # fmt: skip
def test_a_huge_special_chunk_costs_what_a_read_returns(entry):
    path = BAD / entry["file"]
    import bloscpack

    header = bloscpack.inspect_chunk(path.read_bytes())
    assert header["kind"] == "special" and header["nbytes"] == entry["value"] > 4 * BUDGET
    assert run(path, "verify") == "True"
    values = json.loads(run(path, "stepped"))
    with bloscpack.open(path) as array:  # what the items are, read one at a time
        step = array.shape[0] // 7
        assert values == [int(array[i]) for i in range(0, array.shape[0], step)]
    assert len(values) == 8
