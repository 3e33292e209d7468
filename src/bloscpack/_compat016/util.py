"""bloscpack 0.16's ``bloscpack.util``: ``PYTHON_VERSION`` and ``memoryview``."""

import sys

PYTHON_VERSION = sys.version_info[0:3]
memoryview = memoryview  # noqa: PLW0127 - 0.16 re-exported the builtin under this name

__all__ = ["PYTHON_VERSION", "memoryview"]
