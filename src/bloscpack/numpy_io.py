"""bloscpack 0.16's module ``bloscpack.numpy_io``, which is
:mod:`bloscpack._compat016.numpy_io`."""

import sys

from ._compat016 import numpy_io

sys.modules[__name__] = numpy_io
