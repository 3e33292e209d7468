"""bloscpack 0.16's ``bloscpack.sysutil``: flushing the page cache, for benchmarks."""

import os


def drop_caches() -> None:
    """Drop the page cache (needs root; ``RuntimeError`` otherwise)."""
    if os.geteuid() != 0:
        raise RuntimeError("Need root permission to drop caches")
    with open("/proc/sys/vm/drop_caches", "w") as fh:
        fh.write("3\n")


def sync() -> None:
    """Write all buffered file data to disk."""
    os.sync()


__all__ = ["drop_caches", "sync"]
