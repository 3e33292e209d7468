"""bloscpack 0.16's module ``bloscpack.abstract_io``, which is
:mod:`bloscpack._compat016.abstract_io`."""

import sys

from ._compat016 import abstract_io

sys.modules[__name__] = abstract_io
