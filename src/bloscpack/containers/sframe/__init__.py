"""Blosc2 sparse frames: a directory holding ``chunks.b2frame`` (a frame with frame type 1
and no chunks section: header, index, trailer) and one ``%08X.chunk`` file per stored chunk.

:mod:`.format` is the :data:`FORMAT` the registry lists; the directories themselves are the
sparse super-chunks of :mod:`bloscpack.containers.schunk.sparse`, which sparse b2nd arrays and
:class:`bloscpack.Frame` share.  This package re-exports the names of its lower-level API.
"""

from ..base import lazy_names
from .format import FORMAT, SparseFrameFormat, info, open_reader, open_writer

#: The module each name of this package comes from, imported when first used.
_FROM = {
    "PUBLISHED_LAST": "..schunk.records",
    "SparseFrame": "..schunk.sparse",
    "SparseFrameTarget": "..schunk.sparse",
    "SparseFrameWriter": "..schunk.sparse",
    "chunk_file_name": "..schunk.sparse",
    "sniff_dir": "..schunk.sparse",
    "verify": "..schunk.sparse",
    "own_options": "..schunk.writer",
    "refused": "..schunk.writer",
}
_imported = lazy_names(__name__, _FROM)


def __getattr__(name: str) -> object:
    """A name of :data:`_FROM`, imported when first used (``ConversionTarget``:
    ``SparseFrameTarget``)."""
    return _imported("SparseFrameTarget" if name == "ConversionTarget" else name)


__all__ = [
    "FORMAT", "PUBLISHED_LAST", "ConversionTarget", "SparseFrameFormat", "SparseFrame",
    "SparseFrameTarget", "SparseFrameWriter", "chunk_file_name", "info", "open_reader",
    "open_writer", "own_options", "refused", "sniff_dir", "verify",
]  # fmt: skip
