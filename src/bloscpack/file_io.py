"""bloscpack 0.16's ``bloscpack.file_io``: this name is :mod:`bloscpack._compat016.file_io`."""

import sys

from ._compat016 import file_io

sys.modules[__name__] = file_io
