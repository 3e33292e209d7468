"""bloscpack 0.16's ``bloscpack.abstract_io``: this name is :mod:`bloscpack._compat016.abstract_io`."""

import sys

from ._compat016 import abstract_io

sys.modules[__name__] = abstract_io
