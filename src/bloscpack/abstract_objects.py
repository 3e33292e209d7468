"""bloscpack 0.16's module ``bloscpack.abstract_objects``, which is
:mod:`bloscpack._compat016.abstract_objects`."""

import sys

from ._compat016 import abstract_objects

sys.modules[__name__] = abstract_objects
