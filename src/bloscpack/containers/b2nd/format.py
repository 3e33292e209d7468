"""python-blosc2 NDArrays (``.b2nd``) as the registry lists them: :data:`FORMAT`.  Its
reader and writer are imported when first used (recognising another format's file needs
neither)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ...errors import UnsupportedError
from ...io.paths import PathLike
from ...io.sources import ByteSource, Directory
from ...io.staging import StagedOutput
from ..base import ArrayDescription, ChunkSpan, ContainerReader, ContainerWriter
from ..listing import listed
from ..options import CompressionParams
from ..schunk.format import FrameFormatBase, is_frame
from ..schunk.records import EDGE_READ, INDEX_FILE, PUBLISHED_LAST


@listed("b2nd")
class B2ndFormat(FrameFormatBase):
    """A Blosc2 frame (a file, or a sparse frame directory) with a ``b2nd`` metalayer."""

    description = "python-blosc2 NDArray"
    holds_bytes = False
    grid = True
    writer_options = (
        "chunks", "blocks", "codec", "clevel", "filters", "filters_meta", "splitmode", "sparse",
        "meta", "vlmeta",
    )  # fmt: skip
    save_options = (
        "chunks", "blocks", "codec", "clevel", "filters", "filters_meta", "splitmode",
        "nthreads", "sparse", "meta", "vlmeta",
    )  # fmt: skip
    dir_members = (INDEX_FILE,)
    published_last = PUBLISHED_LAST  # sparse=True: a sparse frame directory
    edges = (EDGE_READ, EDGE_READ)

    def writes_directory(self, options: Mapping[str, Any]) -> bool:
        return bool(options.get("sparse"))

    def sniff(self, head: bytes) -> bool:
        if not is_frame(head):
            return False
        from .reader import sniff_b2nd

        return sniff_b2nd(head)

    def sniff_source(self, source: ByteSource, head: bytes, *, whole: bool = False) -> bool:
        """A frame whose header (read as far as it goes) holds a ``b2nd`` metalayer."""
        if not is_frame(head):
            return False
        from .reader import sniff_b2nd

        return sniff_b2nd(source)

    def sniff_dir(self, path: PathLike | Directory) -> bool:
        """A sparse frame directory whose ``chunks.b2frame`` holds a ``b2nd`` metalayer."""
        if isinstance(path, Directory):
            found = path.is_file(INDEX_FILE)
        else:
            found = os.path.isfile(os.path.join(path, INDEX_FILE))
        if not found:
            return False
        from .reader import sniff_b2nd

        return sniff_b2nd(path)

    def open_reader(self, source: Any, *, verify: bool = True) -> ContainerReader:
        from .reader import open_reader

        return open_reader(source)

    def scan(self, reader: Any, *, block_major: bool = False) -> Iterator[ChunkSpan]:
        """The frame's chunk spans, where a chunk decodes in C order: its blocks span all of
        its axes but the first and divide it along the first (else it decodes block by
        block, an order the stock zarr codecs do not know: refused unless ``block_major``)."""
        chunks, blocks = reader.description.chunks, reader.description.blocks
        if not block_major and not reader.grid.decodes_in_c_order:
            raise UnsupportedError(
                f"{reader.name}: its chunks of {chunks} hold blocks of {blocks} one after"
                " another, not in C order; byte range references need blocks that span every"
                " axis of a chunk but the first and divide the first"
            )
        return super().scan(reader)

    def load(self, source: Any) -> np.ndarray:
        from .reader import load

        return load(source)

    def info(self, source: Any) -> dict[str, Any]:
        from .reader import info

        return info(source)

    def verify(self, source: Any) -> dict[str, Any]:
        from .reader import verify

        return verify(source)

    def refused(self, dtype: np.dtype, shape: tuple[int, ...]) -> str | None:
        from .writer import refused

        return refused(dtype, shape)

    def own_options(self, params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                    shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
        from .writer import own_options

        return own_options(params, rest, dtype, shape)

    def open_writer(self, output: StagedOutput, description: ArrayDescription, *,
                    metadata: Any = None, **options: Any) -> ContainerWriter:  # fmt: skip
        from .writer import open_writer

        return open_writer(output, description, metadata=metadata, **options)

    def save(self, array: np.ndarray, path: str, **options: Any) -> None:
        from .writer import save_b2nd

        save_b2nd(array, path, **options)

    def conversion_target(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> Any:
        from .writer import ConversionTarget

        return ConversionTarget(source, options, copy_chunks)

    def conversion_options(self) -> Mapping[str, Any]:
        from .writer import ConversionTarget

        return ConversionTarget.OPTIONS

    def append_rows(self, path: PathLike, rows: np.ndarray, **options: Any) -> None:
        from .append import append_rows

        append_rows(path, rows)


FORMAT = B2ndFormat()
