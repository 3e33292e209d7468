"""bloscpack 0.16's module ``bloscpack.checksums``, which is
:mod:`bloscpack._compat016.checksums`."""

import sys

from ._compat016 import checksums

sys.modules[__name__] = checksums
