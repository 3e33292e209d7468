"""bloscpack 0.16's ``bloscpack.testutil``: test inputs (a float64 ramp), temporary files and
file comparison."""

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import IO, Any

import numpy as np

from ..containers.bloscpack.args import DEFAULT_CHUNK_SIZE, reverse_pretty


def simple_progress(i: int) -> None:
    """Print a dot every ten steps."""
    if i % 10 == 0:
        print(".", end="")
    sys.stdout.flush()


def create_array(repeats: int, in_file: Any, progress: Callable[[int], None] | bool = False
                 ) -> None:  # fmt: skip
    """Write :func:`create_array_fp`'s data to the file ``in_file``."""
    with open(in_file, "wb") as in_fp:
        create_array_fp(repeats, in_fp, progress=progress)


def create_array_fp(repeats: int, in_fp: IO[bytes],
                    progress: Callable[[int], None] | bool = False) -> None:  # fmt: skip
    """Write ``repeats`` float64 ramps of 2e6 values (16 MB each) to ``in_fp``."""
    for i in range(repeats):
        in_fp.write(np.linspace(i, i + 1, 2_000_000).tobytes())
        if callable(progress):
            progress(i)
    in_fp.flush()
    if progress:
        print("done")


def atexit_tmpremover(dirname: str) -> None:
    """Remove ``dirname`` if it still exists."""
    with contextlib.suppress(OSError):
        shutil.rmtree(dirname)
        print(f"Removed temporary directory on abort: {dirname}")


@contextlib.contextmanager
def create_tmp_files() -> Iterator[tuple[str, str, str, str]]:
    """A temporary directory and three paths in it: ``(tdir, in_file, out_file, dcmp_file)``,
    removed after the block."""
    tdir = tempfile.mkdtemp(prefix="bloscpack-")
    atexit.register(atexit_tmpremover, tdir)
    try:
        yield (tdir, os.path.join(tdir, "file"), os.path.join(tdir, "file.blp"),
               os.path.join(tdir, "file.dcmp"))  # fmt: skip
    finally:
        shutil.rmtree(tdir, ignore_errors=True)


def cmp_file(file1: Any, file2: Any) -> None:
    """Assert that two files hold the same bytes."""
    with open(file1, "rb") as fp1, open(file2, "rb") as fp2:
        cmp_fp(fp1, fp2)


def cmp_fp(fp1: IO[bytes], fp2: IO[bytes]) -> bool:
    """Assert that two file objects hold the same bytes from their positions on."""
    chunk_size = reverse_pretty(DEFAULT_CHUNK_SIZE)
    while True:
        a = fp1.read(chunk_size)
        b = fp2.read(chunk_size)
        if a != b:
            raise AssertionError(f"the files differ: {a[:16]!r}... != {b[:16]!r}...")
        if not a:
            return True


__all__ = [
    "atexit_tmpremover",
    "cmp_file",
    "cmp_fp",
    "create_array",
    "create_array_fp",
    "create_tmp_files",
    "simple_progress",
]
