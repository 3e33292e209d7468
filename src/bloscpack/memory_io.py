"""bloscpack 0.16's module ``bloscpack.memory_io``, which is
:mod:`bloscpack._compat016.memory_io`."""

import sys

from ._compat016 import memory_io

sys.modules[__name__] = memory_io
