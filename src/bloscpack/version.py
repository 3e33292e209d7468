"""bloscpack 0.16's module ``bloscpack.version``, which is
:mod:`bloscpack._compat016.version`."""

import sys

from ._compat016 import version

sys.modules[__name__] = version
