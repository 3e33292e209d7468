"""bloscpack 0.16's ``bloscpack.compat_util``: ``StringIO`` (a bytes buffer) and
``OrderedDict``."""

from collections import OrderedDict
from io import BytesIO as StringIO

__all__ = ["OrderedDict", "StringIO"]
