"""bloscpack 0.16's module ``bloscpack.pretty``, which is
:mod:`bloscpack._compat016.pretty`."""

import sys

from ._compat016 import pretty

sys.modules[__name__] = pretty
