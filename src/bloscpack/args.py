"""Kept for compatibility (bloscpack 0.16's module path): the ``.blp`` argument objects,
chunking and sizes now live in :mod:`bloscpack.containers.bloscpack.args`."""

from ._compat016 import other_names
from .containers.bloscpack.args import (  # noqa: F401 - the names this module defined
    BLOSC2_ARGS,
    BLOSC_ARGS,
    BLOSCPACK_ARGS,
    DEFAULT_CHECKSUM,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_CLEVEL,
    DEFAULT_CNAME,
    DEFAULT_MAGIC_FORMAT,
    DEFAULT_MAX_APP_CHUNKS,
    DEFAULT_MAX_META_SIZE,
    DEFAULT_META_CHECKSUM,
    DEFAULT_META_CODEC,
    DEFAULT_META_LEVEL,
    DEFAULT_OFFSETS,
    DEFAULT_SHUFFLE,
    DEFAULT_TYPESIZE,
    MAX_CHUNK_SIZE,
    MAX_CHUNKS,
    MAX_CLEVEL,
    META_CODECS,
    METADATA_ARGS,
    SERIALIZERS,
    SUFFIXES,
    BloscArgs,
    BloscpackArgs,
    MetadataArgs,
    MutableMappingObject,
    __all__,  # the same public names
    array_chunk_size,
    calculate_nchunks,
    check_range,
    double_pretty_size,
    handle_max_app_chunks,
    parse_chunk_size,
    pretty_size,
    reverse_pretty,
)

#: 0.16's other names of this module (from :mod:`bloscpack._compat016.args`, when first used).
__getattr__ = other_names(__name__, "args")
