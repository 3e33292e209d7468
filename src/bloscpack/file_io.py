"""bloscpack 0.16's module ``bloscpack.file_io``, which is
:mod:`bloscpack._compat016.file_io`."""

import sys

from ._compat016 import file_io

sys.modules[__name__] = file_io
