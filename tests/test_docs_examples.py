"""Every example of README.md and docs/ runs as pasted: ``python`` blocks (doctest blocks print
what they show), ``bash`` blocks (every command succeeds) and ``console`` blocks (``$``
commands print what the page shows). Each page runs in a fresh temporary directory, its blocks
in order and sharing one namespace; pages that use ``s3://bucket/...`` get an S3 server
(moto, on loopback) through the usual ``AWS_*`` environment variables."""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["s3_server"]  # the session's S3 server (_moto_server), for remote pages

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
RUN = {"python", "bash", "console"}
# Install commands are what `.ci/run` and the newcomer run, and the benchmark scripts take
# minutes and live in the repository's bench/: the page tests run every other block.
NOT_RUN = re.compile(r"^\s*(pip install|python bench/)", re.M)


def blocks(page: Path) -> list[tuple[str, str]]:
    """The page's runnable fenced blocks, in order, as (language, text)."""
    found = [(lang, text) for lang, text in FENCE.findall(page.read_text()) if lang in RUN]
    return [(lang, text) for lang, text in found if not NOT_RUN.search(text)]


def run_python(code: str, name: str, namespace: dict) -> None:
    if ">>>" in code:
        test = doctest.DocTestParser().get_doctest(code, namespace, name, name, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        report: list[str] = []
        runner.run(test, out=report.append, clear_globs=False)
        namespace.update(test.globs)  # (a DocTest works on a copy of the namespace)
        assert runner.failures == 0, "".join(report)
    else:
        exec(compile(code, name, "exec"), namespace)  # noqa: S102 - the page's own example


def run_shell(command: str, env: dict, merged: bool = False) -> subprocess.CompletedProcess:
    """``command`` in bash; ``merged``: stderr into stdout, in the order a terminal shows."""
    return subprocess.run(["bash", "-eo", "pipefail", "-c", command], env=env, text=True,
                          stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if merged else subprocess.PIPE,
                          timeout=600)  # fmt: skip


def run_console(text: str, name: str, env: dict) -> None:
    commands: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        elif commands:
            commands[-1][1].append(line)
    checker = doctest.OutputChecker()
    for command, expected in commands:
        done = run_shell(command, env, merged=True)
        got = done.stdout
        want = "\n".join(expected).rstrip() + "\n" if expected else ""
        ok = checker.check_output(want, got.rstrip() + "\n" if got else "", doctest.ELLIPSIS)
        assert ok, f"{name}: $ {command}\nexpected:\n{want}got (exit {done.returncode}):\n{got}"


@pytest.fixture
def page_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.chdir(tmp_path)
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["COLUMNS"] = "100"
    return env


def test_every_page_has_examples():
    assert sum(len(blocks(page)) for page in PAGES) >= 60
    assert all(blocks(page) for page in PAGES if page.name not in {"benchmarks.md", "reference.md"})


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_examples(page: Path, page_env: dict, request: pytest.FixtureRequest,
                       monkeypatch: pytest.MonkeyPatch):  # fmt: skip
    text = page.read_text()
    if "s3://bucket/" in text:
        endpoint, _, client = request.getfixturevalue("_moto_server")
        for key, value in {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing",
                           "AWS_SECRET_ACCESS_KEY": "testing",
                           "AWS_DEFAULT_REGION": "us-east-1"}.items():  # fmt: skip
            monkeypatch.setenv(key, value)
            page_env[key] = value
        for bucket in client.list_buckets().get("Buckets", []):
            objects = client.list_objects_v2(Bucket=bucket["Name"]).get("Contents", [])
            for obj in objects:
                client.delete_object(Bucket=bucket["Name"], Key=obj["Key"])
        client.create_bucket(Bucket="bucket")
    namespace: dict = {"__name__": "__main__"}
    for number, (lang, code) in enumerate(blocks(page), 1):
        name = f"{page.relative_to(ROOT)} block {number}"
        if lang == "python":
            run_python(code, name, namespace)
        elif lang == "console":
            run_console(code, name, page_env)
        else:
            done = run_shell(code, page_env)
            assert done.returncode == 0, f"{name}:\n{code}\n{done.stdout}{done.stderr}"
