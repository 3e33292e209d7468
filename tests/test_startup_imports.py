"""``import bloscpack`` and ``blpk`` import only what the work at hand needs: never the remote
layer, dask, xarray or pandas for local files, nor the readers and writers of formats the
command does not use (start-up time itself is measured by ``bench/bench_startup.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: Runs ``blpk`` (``main`` with the arguments after the first) and writes, at exit, the names
#: of the modules the process imported to the file named by the first argument.
PROBE = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: open(sys.argv[1], 'w').write(json.dumps(sorted(sys.modules))))\n"
    "from bloscpack.cli import main\n"
    "sys.exit(main(sys.argv[2:]))\n"
)
#: Third-party packages only URLs, dask, xarray or pandas objects need.
OPTIONAL = {"fsspec", "aiohttp", "requests", "urllib3", "dask", "xarray", "pandas", "blosc2"}
#: The format packages other than ``.blp``'s: reading or writing a ``.blp`` imports none of
#: their modules (the registry lists every format without importing it).
OTHER_FORMATS = tuple(
    f"bloscpack.containers.{name}"
    for name in ("b2nd", "bcolz", "frame", "sframe", "schunk", "b2store", "chunk")
)
BLP_MODULES = [
    f"bloscpack.containers.bloscpack.{name}"
    for name in ("reader", "writer", "append", "compress", "report", "file", "streams")
]


def imported(args: list[str], tmp_path: Path, exit_code: int = 0) -> set[str]:
    """The modules a ``blpk`` process run with ``args`` imported (``args[0] == "-c"``: the
    Python code given instead); ``exit_code``: what the process must exit with."""
    out = tmp_path / "modules.json"
    python = args[:1] == ["-c"]
    code = args[1] if python else PROBE
    argv = [] if python else args
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(out), *argv],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == exit_code, proc.stderr
    if python:
        return set(proc.stdout.split())
    return set(json.loads(out.read_text()))


def top_level(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_import_bloscpack_imports_its_errors_and_chunk_managers_only(tmp_path):
    modules = imported(["-c", "import sys, bloscpack; print(*sorted(sys.modules))"], tmp_path)
    assert sorted(m for m in modules if m.startswith("bloscpack")) == [
        "bloscpack", "bloscpack._startup", "bloscpack.chunkmanagers", "bloscpack.errors",
    ]  # fmt: skip
    assert not top_level(modules) & (OPTIONAL | {"numpy", "blosc"})


def test_public_names_are_imported_when_used(tmp_path):
    code = (
        "import sys, bloscpack\n"
        "assert bloscpack.pack_ndarray_to_bytes.__module__ == 'bloscpack.api'\n"
        "assert bloscpack.BloscArray.__module__ == 'bloscpack.array'\n"
        "assert callable(bloscpack.append) and callable(bloscpack.convert)\n"
        "assert set(bloscpack.__all__) <= set(dir(bloscpack))\n"
        "print(*sorted(sys.modules))\n"
    )
    modules = imported(["-c", code], tmp_path)
    assert {"bloscpack.api", "bloscpack.array"} <= modules
    assert not top_level(modules) & OPTIONAL
    assert not {m for m in modules if m.startswith("bloscpack.remote.")}


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    path = tmp_path / "in.bin"
    np.linspace(0, 1, 50_000).tofile(path)
    return path


@pytest.mark.parametrize(
    "command",
    [["--version"], ["c", "in.bin"], ["d", "in.bin.blp", "back.bin"], ["i", "in.bin.blp"]],
    ids=["version", "compress", "decompress", "info"],
)  # fmt: skip
def test_blpk_on_local_blp_imports_no_remote_layer_nor_other_formats(command, raw, tmp_path):
    if command[0] in ("d", "i"):
        subprocess.run(
            [sys.executable, "-m", "bloscpack", "c", str(raw)],
            check=True, env={**os.environ, "PYTHONPATH": str(SRC)},
        )  # fmt: skip
    modules = imported(command, tmp_path)
    assert not top_level(modules) & OPTIONAL
    assert not {m for m in modules if m.startswith("bloscpack.remote.")}
    assert not {m for m in modules if m.startswith("bloscpack.integrations.xarray")}
    assert not {m for m in modules if m.startswith(OTHER_FORMATS)}
    assert "blosc" not in modules  # python-blosc's C extension only: the package imports its tests
    if command == ["--version"]:
        assert not set(BLP_MODULES) & modules
    if command[0] in ("--version", "d"):  # a .blp is written out as stored: no array layer
        assert not {"bloscpack.dispatch", "bloscpack.array", "bloscpack.api"} & modules


@pytest.mark.parametrize(
    ("command", "code"),
    [(["--version"], 0), (["--help"], 0), ([], 2), (["--nope"], 2), (["nope"], 2),
     (["c"], 2), (["c", "-l", "10", "x"], 2), (["d", "-n", "0", "x.blp"], 2),
     (["convert", "--format", "nope", "x", "y"], 2)],
    ids=["version", "help", "no-command", "bad-option", "bad-command", "missing-file",
         "bad-level", "bad-threads", "bad-format"],
)  # fmt: skip
def test_blpk_version_help_and_usage_errors_import_no_numpy_nor_blosc(command, code, tmp_path):
    modules = imported(command, tmp_path, code)
    # (C-Blosc's version comes from python-blosc's C extension, loaded without its package)
    assert not top_level(modules) & {"numpy", "blosc2"} and "blosc" not in modules
    assert not {m for m in modules if m.startswith("bloscpack.containers.")} - {
        "bloscpack.containers.listing", "bloscpack.containers.options",
        "bloscpack.containers.registry",
    }  # fmt: skip


def test_an_open_array_turns_into_dask_in_a_fresh_process(tmp_path):
    """The chunk manager "dask" is registered by ``import bloscpack``, its integration
    imported on the first call."""
    import bloscpack

    bloscpack.save(np.arange(10.0), tmp_path / "a.blp")
    code = (
        "import sys, bloscpack\n"
        "assert 'bloscpack.integrations.dask' not in sys.modules\n"
        "print(bloscpack.open('a.blp').to_dask().sum().compute())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "45.0\n", "")


#: A ``sitecustomize`` that writes, at exit, what the process's environment says of BLAS
#: threads and whether numpy was imported.
BLAS_PROBE = (
    "import atexit, json, os, sys\n"
    "atexit.register(lambda: open(os.environ['BLAS_PROBE_OUT'], 'w').write(json.dumps(\n"
    "    [os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules])))\n"
)


@pytest.mark.parametrize(
    ("argv", "given", "seen"),
    [
        (["-m", "bloscpack", "i", "in.bin.blp"], None, ["1", True]),
        (["-m", "bloscpack", "i", "in.bin.blp"], "3", ["3", True]),
        (["-c", "import bloscpack, numpy; bloscpack.load('in.bin.blp')"], None, [None, True]),
    ],
    ids=["blpk", "blpk-user-setting", "library"],
)
def test_blpk_gives_numpy_blas_one_thread(argv, given, seen, raw, tmp_path):
    """``blpk`` never uses BLAS: numpy's OpenBLAS starts no thread pool (unless the user set
    its size); a program importing bloscpack keeps its own BLAS settings."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(BLAS_PROBE)
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env.update(PYTHONPATH=f"{tmp_path / 'site'}{os.pathsep}{SRC}",
               BLAS_PROBE_OUT=str(tmp_path / "blas.json"))  # fmt: skip
    subprocess.run([sys.executable, "-m", "bloscpack", "c", str(raw)], check=True, env=env)
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    proc = subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, cwd=tmp_path, env=env
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "blas.json").read_text()) == seen
