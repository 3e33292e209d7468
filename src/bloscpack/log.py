"""bloscpack 0.16's ``bloscpack.log``: this name is :mod:`bloscpack._compat016.log`."""

import sys

from ._compat016 import log

sys.modules[__name__] = log
