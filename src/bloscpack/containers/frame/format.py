"""Blosc2 contiguous frames (``.b2frame``) as the registry lists them: :data:`FORMAT`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...io.paths import PathLike
from ...io.staging import StagedOutput
from ..base import ArrayDescription, ContainerFormat, ContainerReader, ContainerWriter
from ..options import CompressionParams
from . import append, reader, writer
from .core import EDGE_READ
from .records import MAGIC


def is_frame(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) holds the magic of a Blosc2 frame."""
    return bytes(head[1:10]) == MAGIC


class FrameFormatBase(ContainerFormat):
    """What the formats of Blosc2 frames share: their writers and appends."""

    holds_bytes = True
    appendable = True

    def refused(self, dtype: np.dtype, shape: tuple[int, ...]) -> str | None:
        return writer.refused(dtype, shape)

    def own_options(self, params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                    shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
        return writer.own_options(params, rest, dtype, shape)

    def conversion_options(self) -> Mapping[str, Any]:
        return writer.FrameTarget.OPTIONS


class FrameFormat(FrameFormatBase):
    """A contiguous frame: header and metalayers at the start, index and trailer at the end."""

    name = "b2frame"
    description = "Blosc2 contiguous frame"
    suffixes = (".b2frame",)
    aliases = ("frame",)
    edges = (EDGE_READ, EDGE_READ)

    def sniff(self, head: bytes) -> bool:
        return is_frame(head)

    def open_reader(self, source: Any, *, verify: bool = True) -> ContainerReader:
        return reader.open_reader(source)

    def info(self, source: Any) -> dict[str, Any]:
        return reader.info(source)

    def verify(self, source: Any) -> dict[str, Any]:
        return reader.verify(source)

    def open_writer(self, output: StagedOutput, description: ArrayDescription, *,
                    metadata: Any = None, **options: Any) -> ContainerWriter:  # fmt: skip
        return writer.open_writer(output, description, metadata=metadata, **options)

    def conversion_target(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> Any:
        return writer.ConversionTarget(source, options, copy_chunks)

    def append_rows(self, path: PathLike, rows: np.ndarray, **options: Any) -> None:
        append.append_rows(path, rows)


FORMAT = FrameFormat()
