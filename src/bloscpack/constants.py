"""bloscpack 0.16's module ``bloscpack.constants``, which is
:mod:`bloscpack._compat016.constants`."""

import sys

from ._compat016 import constants

sys.modules[__name__] = constants
