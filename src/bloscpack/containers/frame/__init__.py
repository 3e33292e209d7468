"""Blosc2 contiguous frames (``.b2frame``, ``.b2nd``, frames in memory): reader, writer and
in-place mutation with C-Blosc2's layout rules.

From the bottom up: :mod:`.records` (the format: fixed header, metalayers, trailer, index),
:mod:`.params` (compression parameters, new frame images), :mod:`.storage` (a contiguous
frame's bytes), :mod:`.core` (reading an open frame), :mod:`.edit` (changing it in place),
:mod:`.contiguous` (frames holding their chunks), :mod:`.reader` and :mod:`.writer` (the
container protocol and new frames), and :mod:`.api`, the user-facing :class:`bloscpack.Frame`,
which also opens sparse frames (:mod:`bloscpack.containers.sframe`, whose chunks are files);
:mod:`.format` is the :data:`FORMAT` the registry lists.
"""

from .append import append_rows
from .contiguous import ContiguousFrame
from .edit import FrameBase
from .format import FORMAT
from .params import CParams
from .reader import FrameReader, info, load_bytes, open_reader, read_all, verify, vlmeta_items
from .records import FrameHeader, sniff
from .writer import (
    ConversionTarget,
    FrameTarget,
    FrameWriter,
    OnePassWriter,
    open_writer,
    own_options,
    packed_user,
    refused,
    save_bytes,
)

__all__ = [
    "FORMAT", "append_rows", "CParams", "ContiguousFrame", "ConversionTarget", "FrameBase",
    "FrameHeader", "FrameReader", "FrameTarget", "FrameWriter", "OnePassWriter", "info",
    "load_bytes", "open_reader", "open_writer", "own_options", "packed_user", "read_all",
    "refused", "save_bytes", "sniff", "verify", "vlmeta_items",
]  # fmt: skip
