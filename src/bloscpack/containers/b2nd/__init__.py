"""python-blosc2 NDArray files: numpy arrays in Blosc2 frames (``.b2nd`` contiguous files and
sparse frame directories), read and written compatibly with python-blosc2 both ways.

An NDArray frame is an ordinary Blosc2 frame whose ``b2nd`` metalayer gives shape, chunks,
blocks and dtype (:mod:`.meta`); frame chunk ``n`` holds N-d chunk ``n`` (C order over the chunk
grid), its blocks in C order, zero-padded at the edges (:mod:`bloscpack.containers.grid`).
Zeros/NaN/uninitialized chunks are index markers.  New arrays get chunk and block shapes
that serve box reads (:mod:`.layout`).  :mod:`.reader` reads them, :mod:`.writer` writes them,
:mod:`.jobs` runs their chunk jobs, :mod:`.format` is the :data:`FORMAT` the registry lists.

The names below are imported when first used: recognising another format's files imports only
:mod:`.format`.
"""

from __future__ import annotations

from ..base import lazy_names
from .format import FORMAT

#: The module each name of this package comes from.
_FROM = {
    "PUBLISHED_LAST": "..schunk.sparse",
    "append_rows": ".append",
    "B2ndArray": ".reader",
    "B2ndReader": ".reader",
    "info": ".reader",
    "load": ".reader",
    "load_b2nd": ".reader",
    "open_frame": ".reader",
    "open_reader": ".reader",
    "read_b2nd_metalayer": ".reader",
    "read_b2nd_selection": ".reader",
    "sniff_b2nd": ".reader",
    "verify": ".reader",
    "B2ndTarget": ".writer",
    "ConversionTarget": ".writer",
    "open_writer": ".writer",
    "own_options": ".writer",
    "refused": ".writer",
    "save": ".writer",
    "save_b2nd": ".writer",
}


__getattr__ = lazy_names(__name__, _FROM)


__all__ = ["FORMAT", *_FROM]
