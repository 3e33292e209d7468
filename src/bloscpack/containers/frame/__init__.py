"""Blosc2 contiguous frames (``.b2frame``): :mod:`.format` is the :data:`FORMAT` the registry
lists, :mod:`.api` the user-facing :class:`bloscpack.Frame` (which also opens sparse frames).

The frames themselves (records, reading, in-place changes, the reader and writer) are the
Blosc2 super-chunks of :mod:`bloscpack.containers.schunk`, which the ``sframe`` and ``b2nd``
formats share; this package re-exports the names of its lower-level API from there.
"""

from ..schunk.append import append_rows
from ..schunk.contiguous import ContiguousFrame
from ..schunk.edit import FrameBase
from ..schunk.params import CParams
from ..schunk.reader import (
    FrameReader,
    info,
    load_bytes,
    open_reader,
    read_all,
    verify,
    vlmeta_items,
)
from ..schunk.records import FrameHeader, sniff
from ..schunk.writer import (
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
from .format import FORMAT

__all__ = [
    "FORMAT", "append_rows", "CParams", "ContiguousFrame", "ConversionTarget", "FrameBase",
    "FrameHeader", "FrameReader", "FrameTarget", "FrameWriter", "OnePassWriter", "info",
    "load_bytes", "open_reader", "open_writer", "own_options", "packed_user", "read_all",
    "refused", "save_bytes", "sniff", "verify", "vlmeta_items",
]  # fmt: skip
