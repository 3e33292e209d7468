"""bloscpack 0.16's module ``bloscpack.defaults``, which is
:mod:`bloscpack._compat016.defaults`."""

import sys

from ._compat016 import defaults

sys.modules[__name__] = defaults
