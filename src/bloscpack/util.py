"""bloscpack 0.16's module ``bloscpack.util``, which is
:mod:`bloscpack._compat016.util`."""

import sys

from ._compat016 import util

sys.modules[__name__] = util
