"""bloscpack 0.16's ``bloscpack.constants``: this name is :mod:`bloscpack._compat016.constants`."""

import sys

from ._compat016 import constants

sys.modules[__name__] = constants
