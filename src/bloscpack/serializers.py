"""bloscpack 0.16's module ``bloscpack.serializers``, which is
:mod:`bloscpack._compat016.serializers`."""

import sys

from ._compat016 import serializers

sys.modules[__name__] = serializers
