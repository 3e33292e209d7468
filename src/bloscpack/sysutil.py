"""bloscpack 0.16's ``bloscpack.sysutil``: this name is :mod:`bloscpack._compat016.sysutil`."""

import sys

from ._compat016 import sysutil

sys.modules[__name__] = sysutil
