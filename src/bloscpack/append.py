"""Kept for compatibility (bloscpack 0.16's module path): the journaled in-place append of
``.blp`` files now lives in :mod:`bloscpack.containers.bloscpack.append`.  The module is also
callable: ``bloscpack.append(path, data)`` appends to every format that grows
(:func:`bloscpack.dispatch.append`)."""

import sys

from ._compat016 import other_names
from .containers.bloscpack.append import (  # noqa: F401 - the names this module exported
    JOURNAL_SUFFIX,
    KILL_AFTER_ENV,
    __all__,  # the same public names
    append,
    append_fp,
    journal_path,
    needs_recovery,
    recover,
)

#: 0.16's other names of this module (from :mod:`bloscpack._compat016.append`, when first used).
__getattr__ = other_names(__name__, "append")


# Called, this module is the append of every format that grows (bloscpack.dispatch.append).
from .dispatch import AppendModule  # noqa: E402

sys.modules[__name__].__class__ = AppendModule
