"""bloscpack 0.16's module ``bloscpack.compat_util``, which is
:mod:`bloscpack._compat016.compat_util`."""

import sys

from ._compat016 import compat_util

sys.modules[__name__] = compat_util
