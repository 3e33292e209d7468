"""Kept for compatibility (bloscpack 0.16's module path): the ``.blp`` headers now live in
:mod:`bloscpack.containers.bloscpack.header`."""

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


def __getattr__(name: str) -> object:
    """The other names of 0.16's module (:mod:`bloscpack._compat016.headers`), imported when first
    used."""
    from ._compat016 import headers as compat

    try:
        return getattr(compat, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
