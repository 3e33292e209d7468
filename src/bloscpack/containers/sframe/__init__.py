"""Blosc2 sparse frames: a directory holding ``chunks.b2frame`` (a frame with frame type 1
and no chunks section: header, index, trailer) and one ``%08X.chunk`` file per stored chunk.

:mod:`.format` is the :data:`FORMAT` the registry lists; the directories themselves are the
sparse super-chunks of :mod:`bloscpack.containers.schunk.sparse`, which sparse b2nd arrays and
:class:`bloscpack.Frame` share.  This package re-exports the names of its lower-level API.
"""

from ..schunk.sparse import (
    PUBLISHED_LAST,
    SparseFrame,
    SparseFrameTarget,
    SparseFrameWriter,
    chunk_file_name,
    sniff_dir,
    verify,
)
from ..schunk.writer import own_options, refused
from .format import FORMAT, SparseFrameFormat, info, open_reader, open_writer

ConversionTarget = SparseFrameTarget

__all__ = [
    "FORMAT", "PUBLISHED_LAST", "ConversionTarget", "SparseFrameFormat", "SparseFrame",
    "SparseFrameTarget", "SparseFrameWriter", "chunk_file_name", "info", "open_reader",
    "open_writer", "own_options", "refused", "sniff_dir", "verify",
]  # fmt: skip
