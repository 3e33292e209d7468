"""python-blosc2 NDArray files: numpy arrays in Blosc2 frames (``.b2nd`` contiguous files and
sparse frame directories), read and written compatibly with python-blosc2 both ways.

An NDArray frame is an ordinary Blosc2 frame whose ``b2nd`` metalayer gives shape, chunks,
blocks and dtype (:mod:`.meta`); frame chunk ``n`` holds N-d chunk ``n`` (C order over the chunk
grid), its blocks in C order, zero-padded at the edges (:mod:`bloscpack.containers.grid`).
Zeros/NaN/uninitialized chunks are index markers.  New arrays get python-blosc2's default chunk
and block shapes (:mod:`.layout`).  :mod:`.reader` reads them, :mod:`.writer` writes them,
:mod:`.jobs` runs their chunk jobs.
"""

from ..sframe import PUBLISHED_LAST  # sparse=True: a sparse frame directory
from .append import append_rows
from .reader import (
    B2ndArray,
    B2ndReader,
    info,
    load,
    load_b2nd,
    open_frame,
    open_reader,
    read_b2nd_metalayer,
    read_b2nd_selection,
    sniff_b2nd,
    verify,
)
from .writer import (
    B2ndTarget,
    ConversionTarget,
    open_writer,
    own_options,
    refused,
    save,
    save_b2nd,
)

__all__ = [
    "append_rows", "PUBLISHED_LAST", "B2ndArray",
    "B2ndReader", "B2ndTarget", "ConversionTarget", "info",
    "load", "load_b2nd", "open_frame", "open_reader", "open_writer", "own_options",
    "read_b2nd_metalayer",
    "read_b2nd_selection", "refused", "save", "save_b2nd", "sniff_b2nd", "verify",
]  # fmt: skip
