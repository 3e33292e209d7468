"""bloscpack 0.16's modules, kept so that programs written for 0.16 run unchanged.

Each module here is importable under its 0.16 name (``bloscpack.file_io`` is
:mod:`bloscpack._compat016.file_io`, through a one-line module of that name); ``headers``,
``args`` and ``append`` hold the 0.16 names that :mod:`bloscpack.headers`,
:mod:`bloscpack.args` and :mod:`bloscpack.append` look up here when first used.  The modules
are a thin layer over the ``.blp`` format of :mod:`bloscpack.containers.bloscpack` (headers,
metadata section, offsets, checksums, chunk compression), which encodes and decodes every
structure they read or write.  Nothing imports them until a program does.
"""
