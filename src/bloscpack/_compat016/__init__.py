"""bloscpack 0.16's modules, kept so that programs written for 0.16 run unchanged.

Each module here is importable under its 0.16 name (``bloscpack.file_io`` is
:mod:`bloscpack._compat016.file_io`, through a one-line module of that name); ``headers``,
``args`` and ``append`` hold the 0.16 names that :mod:`bloscpack.headers`,
:mod:`bloscpack.args` and :mod:`bloscpack.append` look up here when first used.  The modules
are a thin layer over the ``.blp`` format of :mod:`bloscpack.containers.bloscpack` (headers,
metadata section, offsets, checksums, chunk compression), which encodes and decodes every
structure they read or write.  Nothing imports them until a program does.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def other_names(shim: str, module: str) -> Callable[[str], object]:
    """The module ``__getattr__`` of the shim ``shim`` (``bloscpack.args``): 0.16's other names
    of that module, from :mod:`bloscpack._compat016.<module>`, imported when first used."""

    def __getattr__(name: str) -> object:
        compat = importlib.import_module(f"{__name__}.{module}")
        try:
            return getattr(compat, name)
        except AttributeError:
            raise AttributeError(f"module {shim!r} has no attribute {name!r}") from None

    return __getattr__
