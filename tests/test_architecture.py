"""The layering of the package (declared for import-linter in ``pyproject.toml``) holds, and
the names above the formats come from the one registry."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept():
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, importlinter.cli as c;"
         " sys.exit(c.lint_imports(no_cache=True, no_logo=True))"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "7 kept, 0 broken" in proc.stdout


def test_format_names_are_listed_once():
    """The tuple of format names is written only in the registry; others derive it."""
    names = ("blp", "b2frame", "b2nd", "sframe", "bcolz")
    for path in sorted((ROOT / "src" / "bloscpack").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Tuple | ast.List) and len(node.elts) >= 4:
                values = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                assert not values.issuperset(names[:4]), f"{path}:{node.lineno} lists the formats"
