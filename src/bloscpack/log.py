"""bloscpack 0.16's module ``bloscpack.log``, which is
:mod:`bloscpack._compat016.log`."""

import sys

from ._compat016 import log

sys.modules[__name__] = log
