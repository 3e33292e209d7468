"""What the formats held in Blosc2 frames (``b2frame``, ``sframe``, ``b2nd``) share as
:class:`~bloscpack.containers.base.ContainerFormat` classes: :class:`FrameFormatBase` and the
frame magic."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..base import ChunkSpan, ContainerFormat
from ..options import CompressionParams
from .records import MAGIC


def is_frame(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) holds the magic of a Blosc2 frame."""
    return bytes(head[1:10]) == MAGIC


class FrameFormatBase(ContainerFormat):
    """What the formats of Blosc2 frames share: their writers, appends and chunk spans."""

    holds_bytes = True
    appendable = True

    def scan(self, reader: Any) -> Iterator[ChunkSpan]:
        from .reader import scan

        return scan(reader)

    def refused(self, dtype: np.dtype, shape: tuple[int, ...]) -> str | None:
        from . import writer

        return writer.refused(dtype, shape)

    def own_options(self, params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                    shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
        from . import writer

        return writer.own_options(params, rest, dtype, shape)

    def conversion_options(self) -> Mapping[str, Any]:
        from . import writer

        return writer.FrameTarget.OPTIONS
