"""What every fuzz harness shares: the entry points a mutated input goes through, the rule
that only errors of bloscpack's own tree may come out, and the atheris driver.

A harness module defines ``KIND`` (a word for messages), ``seeds()`` (the inputs to start
from, bytes) and ``exercise(data)`` (push one input through the readers); ``main(module)`` runs
it under atheris.  Inputs that are directories on disk (sparse frames, bcolz) are framed as
one byte string by :func:`pack_files` / :func:`unpack_files`.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import struct
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import atheris

with atheris.instrument_imports(include=["bloscpack"]):
    import bloscpack
    import bloscpack.containers
    from bloscpack.errors import BloscpackError, UnsupportedError

    # the formats' modules are imported when first used: import every one while instrumenting
    for _module in pkgutil.walk_packages(bloscpack.containers.__path__, "bloscpack.containers."):
        importlib.import_module(_module.name)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
#: Arrays larger than this are read only in small selections (a whole read would be as large
#: as the input claims, which is legitimate for special chunks).
WHOLE_READ_LIMIT = 32 << 20
#: Where inputs are written to be read as files (memory-backed when the system has it).
SCRATCH = Path(tempfile.mkdtemp(prefix="blpk-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm")
                                else None))  # fmt: skip


def quietly(call: Callable[[], Any]) -> Any:
    """``call()``; an error of bloscpack's tree is an expected answer to a bad input,
    anything else escapes (and is a finding)."""
    try:
        return call()
    except BloscpackError:
        return None


def unless_unsupported(call: Callable[[], Any]) -> Any:
    """``call()`` on a container ``verify`` passed: only a feature this installation does
    not read may be refused; any other error is a finding (verify runs every check load
    runs)."""
    try:
        return call()
    except UnsupportedError:
        return None


def exercise_path(path: str, steady: bool = True) -> None:
    """Every read-only entry point on the container at ``path`` (not ``steady``: one whose
    bytes may differ from call to call, a fuzzed server's, so that reads after a ``verify``
    that passed may fail too)."""
    quietly(lambda: bloscpack.detect(path))
    quietly(lambda: bloscpack.info(path))
    report = quietly(lambda: bloscpack.verify(path))
    attempt = unless_unsupported if steady and report and report["ok"] else quietly
    attempt(lambda: _read(path, attempt))


def _read(path: str, attempt: Callable[[Callable[[], Any]], Any]) -> None:
    with bloscpack.open(path) as array:
        if array.size:
            attempt(lambda: array[(0,) * array.ndim])
            attempt(lambda: array[(-1,) * array.ndim])
            if array.ndim:  # about 7 items, however long the array claims to be
                attempt(lambda: array[:: max(1, array.shape[0] // 7)])
        if array.nbytes <= WHOLE_READ_LIMIT:
            attempt(lambda: array[...])
            attempt(lambda: sum(1 for _ in array.iter_chunks()))
    if array.nbytes <= WHOLE_READ_LIMIT:
        attempt(lambda: bloscpack.load(path))


def exercise_file(data: bytes, suffix: str) -> None:
    """``data`` as a file named with ``suffix``, through every entry point."""
    path = SCRATCH / f"input{suffix}"
    path.write_bytes(data)
    exercise_path(str(path))


def pack_files(files: dict[str, bytes]) -> bytes:
    """Several named files as one input: per file, its name's and its content's lengths
    (``<HI``), the name, the content."""
    parts = []
    for name, content in files.items():
        raw = name.encode()
        parts += [struct.pack("<HI", len(raw), len(content)), raw, content]
    return b"".join(parts)


def unpack_files(data: bytes, allowed: Iterable[str]) -> dict[str, bytes]:
    """The files :func:`pack_files` framed in ``data`` whose names are in ``allowed`` (a
    mutated frame ends early where it stops making sense)."""
    allowed, files, at = set(allowed), {}, 0
    while at + 6 <= len(data):
        name_len, size = struct.unpack_from("<HI", data, at)
        name = data[at + 6 : at + 6 + name_len].decode("utf-8", "replace")
        at += 6 + name_len
        if name in allowed:
            files[name] = data[at : at + size]
        at += size
    return files


def exercise_directory(files: dict[str, bytes], suffix: str) -> None:
    """``files`` as a directory named with ``suffix``, through every entry point."""
    root = SCRATCH / f"input{suffix}"
    if root.exists():
        for path in sorted(root.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        root.rmdir()
    for name, content in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    root.mkdir(exist_ok=True)
    exercise_path(str(root))


def read_tree(root: Path) -> dict[str, bytes]:
    """The files under ``root``, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}  # fmt: skip


def main(module: Any) -> None:
    """Run ``module``'s harness under atheris.  Without a corpus directory or input file among
    the arguments, the harness's seeds are written to a fresh corpus directory."""
    args = list(sys.argv)
    if all(a.startswith("-") for a in args[1:]):
        corpus = Path(tempfile.mkdtemp(prefix=f"blpk-seeds-{module.KIND}-"))
        for i, seed in enumerate(module.seeds()):
            (corpus / f"seed{i:04d}").write_bytes(seed)
        args.append(str(corpus))
    atheris.Setup(args, module.exercise)
    atheris.Fuzz()
