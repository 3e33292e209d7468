"""Blosc2 super-chunks: a chunk index, the chunks, metalayers and vlmetalayers, stored as a
contiguous frame (a file, or bytes in memory) or as a sparse frame (a directory of chunk
files), read, written and changed in place with C-Blosc2's layout rules.

What the formats held in frames share (``b2frame``: :mod:`bloscpack.containers.frame`,
``sframe``: :mod:`bloscpack.containers.sframe`, ``b2nd``: :mod:`bloscpack.containers.b2nd`);
it imports none of them.  From the bottom up: :mod:`.records` (the format: fixed header,
metalayers, trailer, index) and :mod:`.storage` (a contiguous frame's bytes), :mod:`.params`
(compression parameters, new frame images), :mod:`.core` (reading an open frame), :mod:`.edit`
(changing it in place), :mod:`.contiguous` (frames holding their chunks) and :mod:`.features`
(the python-blosc2 features no reader models), :mod:`.reader` and :mod:`.writer` (the container
protocol and new frames), :mod:`.append` (rows appended to a frame), and on top :mod:`.sparse`
(sparse frame directories) and :mod:`.format` (the base class of the frame formats).
"""
