"""The layering of the package (declared for import-linter in ``pyproject.toml``) holds, and
the names above the formats come from the one registry."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())
CONTRACTS = CONFIG["tool"]["importlinter"]["contracts"]


def lint_imports(root: Path) -> str:
    """What ``lint-imports`` says of the tree at ``root`` (its ``pyproject.toml``, its
    ``src``), output and exit status on the last line."""
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, importlinter.cli as c;"
         " sys.exit(c.lint_imports(no_cache=True, no_logo=True))"],
        capture_output=True, text=True, cwd=root, env=env, timeout=300,
    )  # fmt: skip
    return f"{proc.stdout}{proc.stderr}\nexit {proc.returncode}"


def test_import_contracts_are_kept():
    said = lint_imports(ROOT)
    assert said.endswith("exit 0"), said
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in said


#: One import each contract forbids, added to a module it covers: (module, import, contract).
BREACHES = [
    ("progress.py", "bloscpack.convert", "Layers: imports flow downwards"),
    ("api.py", "bloscpack._compat016.file_io", "Layers: imports flow downwards"),
    ("cli/console.py", "bloscpack.cli.main", "The command line: one module per subcommand"),
    ("io/paths.py", "bloscpack.io.copies", "Files: byte sources and staged outputs above"),
    ("io/locks.py", "bloscpack.io.durability", "Files: byte sources and staged outputs above"),
    ("containers/bloscpack/checksums.py", "bloscpack.containers.bloscpack.file",
     "The .blp format: compress above file"),
    ("containers/bcolz/layout.py", "bloscpack.containers.bcolz.reader",
     "bcolz: appends and reports above the reader"),
    ("containers/schunk/core.py", "bloscpack.containers.schunk.edit",
     "Super-chunks: the frame records at the bottom"),
    ("containers/b2nd/meta.py", "bloscpack.containers.b2nd.reader",
     "NDArrays: reader and writer above the metalayer"),
    ("containers/stores/flat.py", "bloscpack.containers.stores.grid",
     "Stores: one per reader capability"),
    ("blosc/header.py", "bloscpack.remote", "The chunk format is pure"),
    ("array.py", "bloscpack.containers.bcolz", "Above the registry no module imports a format"),
    ("inputs.py", "bloscpack.containers.schunk.core",
     "Above the registry no module imports a format"),
    ("dispatch.py", "bloscpack.containers.b2nd.meta",
     "Above the registry no module imports a format"),
    ("cli/compress.py", "bloscpack.containers.schunk.records",
     "Above the registry no module imports a format"),
    ("convert.py", "bloscpack.containers.sframe", "Above the registry no module imports a format"),
    ("streaming.py", "bloscpack.containers.bloscpack.file",
     "Above the registry no module imports a format"),
    ("integrations/dask.py", "bloscpack.containers.chunk",
     "Above the registry no module imports a format"),
    ("containers/b2nd/reader.py", "bloscpack.containers.bloscpack",
     "The formats do not import each other"),
    ("containers/chunk.py", "bloscpack.containers.bcolz.layout",
     "The formats do not import each other"),
    ("containers/b2nd/writer.py", "bloscpack.containers.sframe",
     "The formats do not import each other"),
    ("containers/sframe/format.py", "bloscpack.containers.frame",
     "The formats do not import each other"),
    # the formats import the super-chunks, so one importing a format breaks three contracts
    ("containers/schunk/records.py", "bloscpack.containers.b2nd.meta",
     ("Layers: imports flow downwards", "The formats do not import each other",
      "The Blosc2 super-chunks the frame formats share import no format")),
]  # fmt: skip


def contract_named(prefix: str) -> str:
    """The name of the one contract whose name starts with ``prefix``."""
    return next(c["name"] for c in CONTRACTS if c["name"].startswith(prefix))


def broken_by(contracts: str | tuple[str, ...]) -> list[str]:
    """The names of the contracts a breach of ``BREACHES`` breaks, in ``pyproject.toml``'s
    order."""
    named = {contract_named(prefix) for prefix in ((contracts,) if isinstance(contracts, str)
                                                   else contracts)}  # fmt: skip
    return [c["name"] for c in CONTRACTS if c["name"] in named]


def test_every_contract_has_a_breach():
    """Each contract in ``pyproject.toml`` is proven to bite below."""
    assert {c["name"] for c in CONTRACTS} == {
        name for _, _, contracts in BREACHES for name in broken_by(contracts)
    }


@pytest.mark.parametrize(("module", "target", "contracts"), BREACHES)
def test_a_contract_fails_on_its_breach(tmp_path, module, target, contracts):
    """A copy of the tree with one forbidden import breaks exactly the contracts named."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copytree(ROOT / "src", tmp_path / "src",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    with open(tmp_path / "src" / "bloscpack" / module, "a") as fh:
        fh.write(f"\nimport {target}  # the breach\n")
    said = lint_imports(tmp_path)
    flat = " ".join(said.split())
    broken = [c["name"] for c in CONTRACTS if f"{c['name']} BROKEN" in flat]
    expected = broken_by(contracts)
    assert broken == expected, said
    assert f"Contracts: {len(CONTRACTS) - len(expected)} kept, {len(expected)} broken." in flat
    assert said.endswith("exit 1")


def test_format_names_are_listed_once():
    """The tuple of format names is written only in the registry; others derive it."""
    names = ("blp", "b2frame", "b2nd", "sframe", "bcolz")
    for path in sorted((ROOT / "src" / "bloscpack").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Tuple | ast.List) and len(node.elts) >= 4:
                values = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                assert not values.issuperset(names[:4]), f"{path}:{node.lineno} lists the formats"


def test_no_module_imports_the_package_by_name():
    """``importlib.import_module("bloscpack....")`` would hide an import from the contracts
    (as ``BloscArray.to_dask`` once imported the dask integration): only the registry imports
    modules by name, its formats."""
    for path in sorted((ROOT / "src" / "bloscpack").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                arg = node.args[0]
                named = isinstance(arg, ast.Constant) and str(arg.value).startswith("bloscpack")
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                assert not (name in ("import_module", "__import__") and named), where
