"""Kept for compatibility (bloscpack 0.16's module path): the journaled in-place append of
``.blp`` files now lives in :mod:`bloscpack.containers.bloscpack.append`.  The module is also
callable: ``bloscpack.append(path, data)`` appends to every format that grows
(:func:`bloscpack.dispatch.append`)."""

import sys

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


def __getattr__(name: str) -> object:
    """The other names of 0.16's module (:mod:`bloscpack._compat016.append`), imported when first
    used."""
    from ._compat016 import append as compat

    try:
        return getattr(compat, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


# Called, this module is the append of every format that grows (bloscpack.dispatch.append).
from .dispatch import AppendModule  # noqa: E402

sys.modules[__name__].__class__ = AppendModule
