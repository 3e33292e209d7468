"""bloscpack 0.16's ``bloscpack.compat_util``: this name is :mod:`bloscpack._compat016.compat_util`."""

import sys

from ._compat016 import compat_util

sys.modules[__name__] = compat_util
