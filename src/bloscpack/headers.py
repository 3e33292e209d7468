"""Kept for compatibility (bloscpack 0.16's module path): the ``.blp`` headers now live in
:mod:`bloscpack.containers.bloscpack.header`."""

from ._compat016 import other_names
from .containers.bloscpack.header import (  # noqa: F401 - the names this module defined
    BLOSCPACK_HEADER_LENGTH,
    FORMAT_VERSION,
    MAGIC,
    MAX_FORMAT_VERSION,
    MAX_META_SIZE,
    MAX_TYPESIZE,
    METADATA_HEADER_LENGTH,
    BloscpackHeader,
    MetadataHeader,
    __all__,  # the same public names
    create_options,
    decode_options,
    header_typesize,
    sniff,
)

#: 0.16's other names of this module (from :mod:`bloscpack._compat016.headers`, when first used).
__getattr__ = other_names(__name__, "headers")
