"""The README's interactive examples (``>>>`` blocks) run as pasted and print what it shows."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
BLOCKS = [b for b in re.findall(r"```python\n(.*?)```", README, re.S) if ">>>" in b]


def test_the_readme_has_interactive_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("block", BLOCKS, ids=[b.split("\n", 1)[0][:40] for b in BLOCKS])
def test_readme_example(block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    test = doctest.DocTestParser().get_doctest(block, {}, "README.md", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
