"""bloscpack 0.16's module ``bloscpack.sysutil``, which is
:mod:`bloscpack._compat016.sysutil`."""

import sys

from ._compat016 import sysutil

sys.modules[__name__] = sysutil
