"""bloscpack 0.16's module ``bloscpack.metacodecs``, which is
:mod:`bloscpack._compat016.metacodecs`."""

import sys

from ._compat016 import metacodecs

sys.modules[__name__] = metacodecs
