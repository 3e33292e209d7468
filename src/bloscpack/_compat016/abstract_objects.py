"""bloscpack 0.16's ``bloscpack.abstract_objects``: the mapping base of the argument objects
and headers."""

from ..containers.bloscpack.args import MutableMappingObject

__all__ = ["MutableMappingObject"]
