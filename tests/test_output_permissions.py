"""Outputs other people can use, for every format: the mode ``open(path, "w")`` would give
(``os.mkdir``'s for directories and the directories inside containers), that of the file
replaced, read by another user; and an output in a directory the user cannot write, refused
by name before any work."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

import bloscpack
from bloscpack.containers import registry
from bloscpack.convert import convert

FORMATS = list(registry.FORMATS)
ARRAY = np.arange(12_000, dtype="<f8").reshape(4000, 3)
#: The user (nobody) another process runs as: it reads what others may, and writes nowhere here.
OTHER_USER = 65534

needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="running as another user needs root"
)


def name(fmt: str, stem: str = "x") -> str:
    return stem + registry.FORMATS[fmt].extension


@pytest.fixture
def umask() -> Iterator[Callable[[int], int]]:
    """Sets the process's umask (restored after the test)."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory (root's, mode 0755) that another user can enter but not write in: not
    pytest's, which only its owner may enter."""
    path = Path(tempfile.mkdtemp(prefix="blpk-shared-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def modes(path: Path) -> dict[str, str]:
    """The mode of ``path`` and of everything inside it, by relative path."""
    return {str(p.relative_to(path)): oct(stat.S_IMODE(p.stat().st_mode))
            for p in [path, *path.rglob("*")]}  # fmt: skip


def default_modes(path: Path, mask: int) -> dict[str, str]:
    """What :func:`modes` is for files and directories made with ``open``/``os.mkdir``."""
    return {str(p.relative_to(path)): oct((0o777 if p.is_dir() else 0o666) & ~mask)
            for p in [path, *path.rglob("*")]}  # fmt: skip


def as_other_user(work: str, warm_up: str, path: str) -> subprocess.CompletedProcess:
    """Run ``work`` (code defining ``work(path)``) on ``path`` as :data:`OTHER_USER`, in a
    process started as root that first ran ``work(warm_up)`` (its output dropped): the modules
    are imported before the process can no longer read root's interpreter."""
    script = (
        "import contextlib, io, os, sys\n"
        f"{work}\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    with contextlib.redirect_stderr(io.StringIO()):\n"
        "        work(sys.argv[1])\n"
        f"os.setgroups([]); os.setgid({OTHER_USER}); os.setuid({OTHER_USER})\n"
        "work(sys.argv[2])\n"
    )  # fmt: skip
    return subprocess.run([sys.executable, "-c", script, warm_up, path], capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def blpk(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bloscpack", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)  # fmt: skip


# --- modes --------------------------------------------------------------------------------


@pytest.mark.parametrize("mask", [0o022, 0o077], ids=oct)
@pytest.mark.parametrize("fmt", FORMATS)
def test_outputs_get_the_mode_open_would_give(tmp_path: Path, fmt: str, mask: int, umask):
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    umask(mask)
    saved, converted = tmp_path / name(fmt), tmp_path / name(fmt, "c")
    bloscpack.save(ARRAY, saved)
    convert(tmp_path / "a.blp", converted)
    for path in saved, converted:
        assert modes(path) == default_modes(path, mask)


@pytest.mark.parametrize(
    ("mask", "mode"), [(0o077, 0o644), (0o022, 0o640)], ids=["0o077-0o644", "0o022-0o640"]
)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_replaced_output_keeps_its_mode(tmp_path: Path, fmt: str, mask: int, mode: int,
                                          umask):  # fmt: skip
    path = tmp_path / name(fmt)
    bloscpack.save(ARRAY, path)
    kept = mode | 0o111 if path.is_dir() else mode  # a directory's: 0o755, 0o750
    path.chmod(kept)
    umask(mask)
    bloscpack.save(ARRAY * 2, path)
    assert stat.S_IMODE(path.stat().st_mode) == kept
    convert(tmp_path / name(fmt), tmp_path / name(fmt, "c"))
    convert(tmp_path / name(fmt, "c"), path)
    assert stat.S_IMODE(path.stat().st_mode) == kept
    assert np.array_equal(bloscpack.load(path), ARRAY * 2)


@pytest.mark.parametrize("fmt", FORMATS)
def test_blpk_outputs_get_the_mode_open_would_give(tmp_path: Path, fmt: str, umask):
    np.save(tmp_path / "a.npy", ARRAY)
    umask(0o027)
    for args in (["c", "a.npy", name(fmt)], ["convert", name(fmt), name(fmt, "c")],
                 ["d", name(fmt, "c"), "back.npy"]):  # fmt: skip
        proc = blpk(*args, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert modes(tmp_path / args[-1]) == default_modes(tmp_path / args[-1], 0o027)
    assert np.array_equal(np.load(tmp_path / "back.npy"), ARRAY)


READ = """
def work(path):
    import bloscpack
    print(float(bloscpack.load(path).sum()))
"""


@needs_root
@pytest.mark.parametrize("fmt", FORMATS)
def test_another_user_reads_an_output(shared_dir: Path, fmt: str, umask):
    umask(0o022)
    path = shared_dir / name(fmt)
    bloscpack.save(ARRAY, path)
    (shared_dir / "warm").mkdir(mode=0o700)
    copy = shared_dir / "warm" / path.name
    shutil.copytree(path, copy) if path.is_dir() else shutil.copy(path, copy)
    proc = as_other_user(READ, str(copy), str(path))
    assert (proc.returncode, proc.stderr, proc.stdout) == (0, "", f"{float(ARRAY.sum())}\n")


# --- an output where the user cannot write -------------------------------------------------

SAVE = """
def work(path):
    import numpy as np
    import bloscpack
    from bloscpack.engine import observe

    compressed = []
    with observe(lambda kind, nbytes: compressed.append(nbytes)):
        try:
            bloscpack.save(np.arange(12_000, dtype="<f8").reshape(4000, 3), path)
        except bloscpack.BloscpackError as exc:
            print(type(exc).__name__, isinstance(exc, PermissionError), len(compressed), exc)
"""


@needs_root
@pytest.mark.parametrize("fmt", FORMATS)
def test_save_in_a_directory_the_user_cannot_write(shared_dir: Path, fmt: str):
    (shared_dir / "warm").mkdir()
    path = shared_dir / name(fmt)
    proc = as_other_user(SAVE, str(shared_dir / "warm" / path.name), str(path))
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == (f"PermissionDenied True 0 {path}: permission denied: cannot write"
                           f" in '{shared_dir}'\n")  # fmt: skip
    assert sorted(p.name for p in shared_dir.iterdir()) == ["warm"]


BLPK = """
def work(path):
    from bloscpack.cli.main import main

    print(main({args!r} + [path]))
"""


@needs_root
@pytest.mark.parametrize("fmt", FORMATS)
def test_blpk_compress_in_a_directory_the_user_cannot_write(shared_dir: Path, fmt: str):
    (shared_dir / "warm").mkdir()
    np.save(shared_dir / "warm" / "a.npy", ARRAY)
    path = shared_dir / name(fmt)
    for args in (["c", str(shared_dir / "warm" / "a.npy")],
                 ["convert", str(shared_dir / "warm" / "a.npy.blp")]):  # fmt: skip
        if args[0] == "convert":
            bloscpack.save(ARRAY, args[1])
        warm_up = str(shared_dir / "warm" / path.name)
        proc = as_other_user(BLPK.format(args=args), warm_up, str(path))
        assert proc.stdout == "1\n"
        assert proc.stderr == (f"blpk: error: {path}: permission denied: cannot write in"
                               f" '{shared_dir}'\n")  # fmt: skip
        shutil.rmtree(warm_up) if os.path.isdir(warm_up) else os.unlink(warm_up)
    assert sorted(p.name for p in shared_dir.iterdir()) == ["warm"]
