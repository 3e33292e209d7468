"""bloscpack 0.16's ``bloscpack.util``: this name is :mod:`bloscpack._compat016.util`."""

import sys

from ._compat016 import util

sys.modules[__name__] = util
