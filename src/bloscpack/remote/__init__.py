"""Containers at URLs (fsspec, the optional extra ``bloscpack[remote]``): byte sources that
fetch only the ranges a read needs, directories of chunk objects, and uploads that publish a
container whole or not at all."""

#: Bytes read from each end of an object when it is opened and its name tells no format (here,
#: not in :mod:`bloscpack.remote.source`: the formats' defaults use it without importing the
#: remote layer).
EDGE_SIZE = 8 * 1024
