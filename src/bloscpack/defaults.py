"""bloscpack 0.16's ``bloscpack.defaults``: this name is :mod:`bloscpack._compat016.defaults`."""

import sys

from ._compat016 import defaults

sys.modules[__name__] = defaults
