"""Paths, and what reading the file a path names gives: a known number of bytes, or a stream."""

from __future__ import annotations

import mmap
import os
import stat

PathLike = str | os.PathLike[str]


def has_known_size(status: os.stat_result) -> bool:
    """Whether a file's ``st_size`` tells how many bytes reading it gives: a regular file of
    nonzero size, whatever its blocks on disk (a wholly sparse file has none).  FIFOs, devices
    and sockets have no size; the files of ``/proc`` report 0 whatever they hold, and those of
    ``/sys`` one page and no blocks (read to their end, at most a page: an empty file or a
    one-page sparse file gives the same bytes)."""
    if not stat.S_ISREG(status.st_mode) or status.st_size == 0:
        return False
    return status.st_blocks > 0 or status.st_size != mmap.PAGESIZE


def is_stream(path: PathLike) -> bool:
    """Whether ``path`` names an existing file that is read as a stream, start to end, because
    its size is unknown (see :func:`has_known_size`); directories and missing paths are not."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return False
    return not (stat.S_ISDIR(status.st_mode) or has_known_size(status))
