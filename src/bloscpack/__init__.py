"""bloscpack: read and write every container format of the Blosc family."""

from . import errors
from .blosc import ChunkHeader
from .errors import *  # noqa: F403
from .errors import __all__ as _error_names
from .frame import Frame

__version__ = "1.0.0"

__all__ = [
    "ChunkHeader",
    "Frame",
    "errors",
    *_error_names,
]
