"""A short run of every fuzz harness in ``fuzz/`` (about 10,000 inputs in all, fixed seeds):
mutated corpus files (and, for ``remote``, mutated answers of an HTTP server serving them) raise
only errors of bloscpack's tree, never another exception, a hang or a large allocation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris")

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"
#: Inputs per harness (the frame harnesses are the slowest per input).
RUNS = {"chunk": 2500, "blp": 2000, "frame": 1000, "b2nd": 2000, "sframe": 1500, "bcolz": 1500,
        "remote": 300}  # fmt: skip


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kind", RUNS)
def test_fuzz_harness_finds_nothing(kind, tmp_path):
    # an input of the remote harness may wait out the HTTP timeouts it sets (10 s in all)
    # on a loaded machine: it gets more time than libFuzzer's 20 s
    timeout = 60 if kind == "remote" else 20
    harness = [sys.executable, str(FUZZ / f"fuzz_{kind}.py"), f"-runs={RUNS[kind]}", "-seed=1",
               "-rss_limit_mb=1024", f"-timeout={timeout}",
               f"-artifact_prefix={tmp_path}/"]  # fmt: skip
    done = subprocess.run(
        # libFuzzer's -rss_limit_mb reads the peak RSS, which Linux carries over from the
        # process a program is started from: start the harness from a small shell, not from
        # this test process (whose peak, late in the suite, may be over 1 GiB).
        ["sh", "-c", '"$@" & wait $!', "sh", *harness],
        cwd=tmp_path, capture_output=True, text=True, timeout=230,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"Done {RUNS[kind]} runs" in done.stderr
    assert not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("oom-*"))
