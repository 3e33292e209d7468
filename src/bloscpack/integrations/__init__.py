"""Bridges to other libraries, each an optional extra, written once on the container protocol:
:mod:`.dask` (``bloscpack[dask]``), :mod:`.pandas` (``bloscpack[pandas]``) and :mod:`.xarray`
(``bloscpack[xarray]``, an xarray backend)."""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import UnsupportedError


def optional(module: str, extra: str) -> Any:
    """The module ``module`` of an optional extra, or ``UnsupportedError`` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UnsupportedError(
            f"this needs {module.split('.')[0]}: pip install 'bloscpack[{extra}]'"
        ) from None
