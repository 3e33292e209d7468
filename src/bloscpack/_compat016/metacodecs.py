"""bloscpack 0.16's ``bloscpack.metacodecs``: the codecs of the metadata section (``'None'``
and ``'zlib'``, ids 0 and 1 in the metadata header)."""

import zlib
from collections.abc import Callable
from typing import Any

from ..containers.bloscpack.args import META_CODECS
from ..errors import NoSuchCodec


class MetaCodec:
    """One metadata codec: ``name``, ``compress(data, level)``, ``decompress(data)``."""

    def __init__(self, name: str, compress: Callable[[Any, int], bytes],
                 decompress: Callable[[Any], bytes]) -> None:  # fmt: skip
        self.name = name
        self._compress = compress
        self._decompress = decompress

    def compress(self, data: Any, level: int) -> bytes:
        """``data`` compressed at ``level``."""
        return self._compress(data, level)

    def decompress(self, data: Any) -> bytes:
        """``data`` decompressed."""
        return self._decompress(data)


CODECS = [
    MetaCodec(META_CODECS[0], lambda data, level: data, lambda data: data),
    MetaCodec(META_CODECS[1], zlib.compress, zlib.decompress),
]
CODECS_AVAIL = [c.name for c in CODECS]
CODECS_LOOKUP = {c.name: c for c in CODECS}


def check_valid_codec(codec: str) -> None:
    """Raise :class:`~bloscpack.errors.NoSuchCodec` unless ``codec`` is a metadata codec."""
    if codec not in CODECS_AVAIL:
        raise NoSuchCodec(f"codec {codec!r} does not exist; use 'zlib' or 'None'")


__all__ = ["CODECS", "CODECS_AVAIL", "CODECS_LOOKUP", "MetaCodec", "check_valid_codec"]
