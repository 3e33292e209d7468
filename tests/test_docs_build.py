"""The manual builds without a warning: ``mkdocs build --strict`` (broken links and anchors,
pages missing from the navigation, docstrings mkdocstrings cannot render all fail it), and the
build's own log holds no warning either (it is read whole: never built with ``-q``, which hides
the warnings that strict mode counts)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WARNING = re.compile(r"^(?:WARNING|ERROR)\b.*$", re.M)


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, env=env, timeout=600)  # fmt: skip


def warnings_of(done: subprocess.CompletedProcess) -> list[str]:
    return WARNING.findall(done.stdout + done.stderr)


def test_mkdocs_build_strict(tmp_path: Path):
    done = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert (done.returncode, warnings_of(done)) == (0, []), done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "index.html").read_text().count('id="bloscpack.') > 50


def test_a_broken_anchor_fails_the_build(tmp_path: Path):
    """The check bites: a copy of the manual with one link to a missing anchor fails it."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the speed](other.md#no-such-heading).\n")
    (docs / "other.md").write_text("# Other\n\n## Speed\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text((ROOT / "mkdocs.yml").read_text().split("\nplugins:")[0]
                      + "\nnav:\n  - index.md\n  - other.md\n")  # fmt: skip
    done = mkdocs_build(config, tmp_path / "site")
    assert done.returncode == 1
    assert [w for w in warnings_of(done) if "no-such-heading" in w], done.stdout + done.stderr
