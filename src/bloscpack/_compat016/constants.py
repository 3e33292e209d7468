"""bloscpack 0.16's ``bloscpack.constants``: the format's fixed values."""

from collections import OrderedDict

import blosc

from ..blosc.header import FORMAT_NAMES as _FORMAT_NAMES
from ..containers.bloscpack.args import MAX_CHUNKS, MAX_CLEVEL
from ..containers.bloscpack.args import SUFFIXES as _SUFFIXES
from ..containers.bloscpack.header import (
    BLOSCPACK_HEADER_LENGTH,
    FORMAT_VERSION,
    MAGIC,
    MAX_FORMAT_VERSION,
    MAX_META_SIZE,
    METADATA_HEADER_LENGTH,
)

EXTENSION = ".blp"
BLOSC_HEADER_LENGTH = 16
MIN_CLEVEL = 0
SUFFIXES = OrderedDict(_SUFFIXES)
#: The codecs python-blosc compresses with (``blosc.compressor_list()``).
CNAME_AVAIL = blosc.compressor_list()
#: Blosc1 codec ids (bits 5-7 of a chunk's flags) -> codec names.
CNAME_MAPPING = {code: name for code, name in _FORMAT_NAMES.items() if code <= 4}

__all__ = [
    "BLOSCPACK_HEADER_LENGTH",
    "BLOSC_HEADER_LENGTH",
    "CNAME_AVAIL",
    "CNAME_MAPPING",
    "EXTENSION",
    "FORMAT_VERSION",
    "MAGIC",
    "MAX_CHUNKS",
    "MAX_CLEVEL",
    "MAX_FORMAT_VERSION",
    "MAX_META_SIZE",
    "METADATA_HEADER_LENGTH",
    "MIN_CLEVEL",
    "SUFFIXES",
]
