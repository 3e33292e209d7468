"""bloscpack 0.16's ``bloscpack.serializers``: the metadata serializer (``b'JSON'``, compact
JSON as :func:`bloscpack.containers.bloscpack.serialize_metadata` writes it)."""

import json
from collections.abc import Callable
from typing import Any

from ..containers.bloscpack import serialize_metadata
from ..containers.bloscpack.args import SERIALIZERS as _MAGICS
from ..errors import NoSuchSerializer


class Serializer:
    """One serializer: ``name`` (its magic), ``dumps(obj) -> str``, ``loads(text)``."""

    def __init__(self, name: bytes, dumps: Callable[[Any], str],
                 loads: Callable[[Any], Any]) -> None:  # fmt: skip
        self.name = name
        self._dumps = dumps
        self._loads = loads

    def dumps(self, dict_: Any) -> str:
        """``dict_`` serialized."""
        return self._dumps(dict_)

    def loads(self, data: Any) -> Any:
        """The object serialized in ``data``."""
        return self._loads(data)


SERIALIZERS = [Serializer(_MAGICS[0], lambda x: serialize_metadata(x).decode("ascii"), json.loads)]
SERIALIZERS_AVAIL = [s.name for s in SERIALIZERS]
SERIALIZERS_LOOKUP = {s.name: s for s in SERIALIZERS}


def check_valid_serializer(serializer: bytes) -> None:
    """Raise :class:`~bloscpack.errors.NoSuchSerializer` unless ``serializer`` is known."""
    if serializer not in SERIALIZERS_AVAIL:
        raise NoSuchSerializer(f"serializer {serializer!r} does not exist; use b'JSON'")


__all__ = [
    "SERIALIZERS",
    "SERIALIZERS_AVAIL",
    "SERIALIZERS_LOOKUP",
    "Serializer",
    "check_valid_serializer",
]
