"""Blosc2 contiguous frames (``.b2frame``) as the registry lists them: :data:`FORMAT`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...io.paths import PathLike
from ...io.staging import StagedOutput
from ..base import ArrayDescription, ContainerReader, ContainerWriter
from ..listing import listed
from ..schunk.format import FrameFormatBase, is_frame
from ..schunk.records import EDGE_READ


@listed("b2frame")
class FrameFormat(FrameFormatBase):
    """A contiguous frame: header and metalayers at the start, index and trailer at the end."""

    description = "Blosc2 contiguous frame"
    edges = (EDGE_READ, EDGE_READ)

    def sniff(self, head: bytes) -> bool:
        return is_frame(head)

    def open_reader(self, source: Any, *, verify: bool = True) -> ContainerReader:
        from ..schunk import reader

        return reader.open_reader(source)

    def info(self, source: Any) -> dict[str, Any]:
        from ..schunk import reader

        return reader.info(source)

    def verify(self, source: Any) -> dict[str, Any]:
        from ..schunk import reader

        return reader.verify(source)

    def open_writer(self, output: StagedOutput, description: ArrayDescription, *,
                    metadata: Any = None, **options: Any) -> ContainerWriter:  # fmt: skip
        from ..schunk import writer

        return writer.open_writer(output, description, metadata=metadata, **options)

    def conversion_target(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> Any:
        from ..schunk import writer

        return writer.ConversionTarget(source, options, copy_chunks)

    def append_rows(self, path: PathLike, rows: np.ndarray, **options: Any) -> None:
        from ..schunk import append

        append.append_rows(path, rows)


FORMAT = FrameFormat()
