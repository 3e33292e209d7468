"""bloscpack 0.16's ``bloscpack.exceptions``: the same classes as :mod:`bloscpack.errors`."""

from .errors import *  # noqa: F403
from .errors import __all__  # noqa: F401
