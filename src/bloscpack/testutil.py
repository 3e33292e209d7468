"""bloscpack 0.16's ``bloscpack.testutil``: this name is :mod:`bloscpack._compat016.testutil`."""

import sys

from ._compat016 import testutil

sys.modules[__name__] = testutil
