"""``.ci/run`` is what the README promises: it installs from scratch and runs the README's test
command, with the pinned test environment, then the suite again as another machine."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_test_command() -> str:
    text = (ROOT / "README.md").read_text()
    commands = re.findall(r"^```bash\n(pip install -e '\.\[test\]'[^\n]*)\n```", text, re.M)
    assert len(commands) == 1, commands
    return commands[0]


def test_ci_runs_the_readme_test_command():
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert readme_test_command() in lines
    assert "rm -rf .venv" in lines


def test_the_test_command_installs_the_pinned_environment():
    constraints = ROOT / ".ci" / "constraints.txt"
    assert f"-c {constraints.relative_to(ROOT)}" in readme_test_command()
    pins = [line for line in constraints.read_text().splitlines() if not line.startswith("#")]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[\w.+!\-]+", pin) for pin in pins)
    names = {pin.split("==")[0].lower().replace("_", "-") for pin in pins}
    assert {"blosc2", "bcolz-zipline", "moto", "boto3", "botocore", "s3fs"} <= names
    assert "bloscpack" not in names


def test_ci_runs_the_suite_again_as_another_machine():
    text = (ROOT / ".ci" / "run").read_text()
    pattern = r'^PYTHONPATH="\$PWD/tests/machine" BLOSCPACK_TEST_CPU_CACHES=\d+,\d+,\d+ pytest -q$'
    assert re.search(pattern, text, re.M)
