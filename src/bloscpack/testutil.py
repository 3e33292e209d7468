"""bloscpack 0.16's module ``bloscpack.testutil``, which is
:mod:`bloscpack._compat016.testutil`."""

import sys

from ._compat016 import testutil

sys.modules[__name__] = testutil
