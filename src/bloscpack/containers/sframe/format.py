"""Blosc2 sparse frames (directories) as the registry lists them: :data:`FORMAT`."""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ...io.paths import PathLike
from ...io.sources import Directory
from ...io.staging import StagedOutput
from ..base import ArrayDescription, ContainerReader, ContainerWriter
from ..listing import listed
from ..schunk.format import FrameFormatBase
from ..schunk.records import INDEX_FILE, PUBLISHED_LAST

if TYPE_CHECKING:
    from ..schunk.reader import FrameReader
    from ..schunk.sparse import SparseArrayWriter


def open_writer(output: StagedOutput, description: ArrayDescription, *, metadata: Any = None,
                **options: Any) -> SparseArrayWriter:  # fmt: skip
    """A :class:`~bloscpack.containers.base.ContainerWriter` of a new sparse frame of the
    array ``description`` at ``output.path``: the chunks and metadata of a contiguous frame
    (the user ``metadata`` too)."""
    from ..schunk.sparse import SparseArrayWriter, SparseLayout
    from ..schunk.writer import array_layout

    settings, layout, vlmeta = array_layout("sframe", description, options, metadata)
    sparse = SparseLayout(layout.cparams, layout.nchunks, layout.chunks)
    return SparseArrayWriter(output, sparse, settings, vlmeta)


def append_rows(path: PathLike, rows: np.ndarray) -> None:
    """:func:`bloscpack.append` for sparse frames: ``rows`` (bytes as ``uint8``) after the
    frame's data."""
    from ..schunk.append import append_to_frame
    from ..schunk.sparse import SparseFrame

    frame = SparseFrame(path, writable=True)
    try:
        append_to_frame(frame, rows)
    finally:
        frame.close()


def open_reader(source: Any) -> FrameReader:
    """The sparse frame ``source`` (its directory, or an open :class:`SparseFrame`, which the
    reader then owns) as a :class:`~bloscpack.containers.base.ContainerReader`."""
    from ..schunk.reader import FrameReader
    from ..schunk.sparse import SparseFrame

    return FrameReader(source if isinstance(source, SparseFrame) else SparseFrame(source))


def info(path: PathLike | Directory) -> dict[str, Any]:
    """JSON-able description of the sparse frame at ``path`` (header, metalayers,
    vlmetalayers, index = chunk-file ids)."""
    from ..schunk.features import refuse_unmodelled
    from ..schunk.sparse import SparseFrame

    with contextlib.closing(SparseFrame(path)) as frame, frame.consistent():
        refuse_unmodelled(frame)
        return frame.info()


@listed("sframe")
class SparseFrameFormat(FrameFormatBase):
    """A directory holding ``chunks.b2frame`` and one file per chunk."""

    description = "Blosc2 sparse frame (a directory)"
    directory = True
    dir_members = (INDEX_FILE,)
    published_last = PUBLISHED_LAST

    def sniff_dir(self, path: PathLike | Directory) -> bool:
        """A directory holding ``chunks.b2frame`` (a damaged one is reported when read)."""
        if isinstance(path, Directory):
            return path.is_file(INDEX_FILE)
        return os.path.isfile(os.path.join(path, INDEX_FILE))

    def open_reader(self, source: Any, *, verify: bool = True) -> ContainerReader:
        return open_reader(source)

    def info(self, source: Any) -> dict[str, Any]:
        return info(source)

    def verify(self, source: Any) -> dict[str, Any]:
        from ..schunk.sparse import verify

        return verify(source)

    def open_writer(self, output: StagedOutput, description: ArrayDescription, *,
                    metadata: Any = None, **options: Any) -> ContainerWriter:  # fmt: skip
        return open_writer(output, description, metadata=metadata, **options)

    def conversion_target(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> Any:
        from ..schunk.sparse import SparseFrameTarget

        return SparseFrameTarget(source, options, copy_chunks)

    def append_rows(self, path: PathLike, rows: np.ndarray, **options: Any) -> None:
        append_rows(path, rows)


FORMAT = SparseFrameFormat()
