"""python-blosc2 stores: many arrays under ``/``-separated keys, read and written compatibly
with python-blosc2 4.x both ways.

A DictStore or TreeStore is a zip archive (``.b2z``) of stored members, or a directory
(``.b2d``) of the same files: each array a ``.b2nd`` member (``/g/x`` is ``g/x.b2nd``), small
ones possibly embedded in ``embed.b2e`` instead, an EmbedStore frame (:mod:`.embed`) that
every store has; an EmbedStore (``.b2e``) is that frame alone.  :mod:`.archive` reads a zip
where its members lie, :mod:`.reader` reads a store, :mod:`.writer` writes one,
:mod:`.format` is the :data:`FORMAT` the registry lists.  Stores are a layer above the formats
of their members (they read and write them through :mod:`bloscpack.containers.b2nd`).

The names below are imported when first used: recognising another format's files imports only
:mod:`.format`.
"""

from __future__ import annotations

from ..base import lazy_names
from .format import FORMAT

#: The module each name of this package comes from.
_FROM = {
    "StoreReader": ".reader",
    "info": ".reader",
    "open_reader": ".reader",
    "verify": ".reader",
    "save_group": ".writer",
}


__getattr__ = lazy_names(__name__, _FROM)


__all__ = ["FORMAT", *_FROM]
