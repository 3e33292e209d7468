"""bloscpack: read and write every container format of the Blosc family."""

from . import errors
from .blosc import ChunkHeader
from .errors import *  # noqa: F403

__version__ = "1.0.0"
