"""Chunk managers: the libraries of lazy, chunked arrays (dask) that an open array turns into,
by name (as xarray finds its chunk managers).

The core never imports its integrations: an integration registers its converter here when it
is imported (:mod:`bloscpack.integrations.dask` registers ``"dask"``; ``import bloscpack``
registers a stand-in that imports it on the first call), and
:meth:`bloscpack.BloscArray.to_dask` looks it up when called.  So the imports go one way, from
the integrations down to the core.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import UnsupportedError

#: The converters, by library name: ``converter(path, chunks, columns=...)`` gives the lazy
#: array (a dict of them for a table) of the container at ``path``.
_MANAGERS: dict[str, Callable[..., Any]] = {}


def register(name: str, converter: Callable[..., Any]) -> None:
    """Register ``converter`` as the chunk manager ``name`` (replacing one of that name)."""
    _MANAGERS[name] = converter


def manager(name: str) -> Callable[..., Any]:
    """The converter registered as ``name``; ``UnsupportedError`` if none is."""
    try:
        return _MANAGERS[name]
    except KeyError:
        raise UnsupportedError(
            f"no chunk manager {name!r} is registered (import bloscpack.integrations.{name})"
        ) from None


__all__ = ["manager", "register"]
