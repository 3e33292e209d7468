"""bloscpack 0.16's ``bloscpack.version``: ``__version__``, the version of this bloscpack."""

from .. import __version__

__all__ = ["__version__"]
