"""Blosc2 contiguous frames (``.b2frame``): :mod:`.format` is the :data:`FORMAT` the registry
lists, :mod:`.api` the user-facing :class:`bloscpack.Frame` (which also opens sparse frames).

The frames themselves (records, reading, in-place changes, the reader and writer) are the
Blosc2 super-chunks of :mod:`bloscpack.containers.schunk`, which the ``sframe`` and ``b2nd``
formats share; this package re-exports the names of its lower-level API from there.
"""

from ..base import lazy_names
from .format import FORMAT

#: The module each name of this package comes from, imported when first used.
_FROM = {
    "append_rows": "..schunk.append",
    "ContiguousFrame": "..schunk.contiguous",
    "FrameBase": "..schunk.edit",
    "CParams": "..schunk.params",
    "FrameReader": "..schunk.reader",
    "info": "..schunk.reader",
    "load_bytes": "..schunk.reader",
    "open_reader": "..schunk.reader",
    "read_all": "..schunk.reader",
    "verify": "..schunk.reader",
    "vlmeta_items": "..schunk.reader",
    "FrameHeader": "..schunk.records",
    "sniff": "..schunk.records",
    "ConversionTarget": "..schunk.writer",
    "FrameTarget": "..schunk.writer",
    "FrameWriter": "..schunk.writer",
    "OnePassWriter": "..schunk.writer",
    "open_writer": "..schunk.writer",
    "own_options": "..schunk.writer",
    "packed_user": "..schunk.writer",
    "refused": "..schunk.writer",
    "save_bytes": "..schunk.writer",
}

__getattr__ = lazy_names(__name__, _FROM)

__all__ = [
    "FORMAT", "append_rows", "CParams", "ContiguousFrame", "ConversionTarget", "FrameBase",
    "FrameHeader", "FrameReader", "FrameTarget", "FrameWriter", "OnePassWriter", "info",
    "load_bytes", "open_reader", "open_writer", "own_options", "packed_user", "read_all",
    "refused", "save_bytes", "sniff", "verify", "vlmeta_items",
]  # fmt: skip
