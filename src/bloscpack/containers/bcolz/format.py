"""bcolz carrays and ctables (``.bcolz`` directories) as the registry lists them:
:data:`FORMAT`.  The rest of the package is imported when first used."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

import numpy as np

from ...io.paths import PathLike
from ...io.sources import Directory
from ...io.staging import StagedOutput
from ..base import (
    ArrayDescription,
    ChunkSpan,
    ContainerFormat,
    ContainerReader,
    ContainerWriter,
    TableReader,
)
from ..listing import listed
from ..options import CompressionParams
from .names import META_MEMBERS, PUBLISHED_LAST


@listed("bcolz")
class BcolzFormat(ContainerFormat):
    """A bcolz carray directory, or a ctable: a directory of carrays, one per column."""

    description = "bcolz carray or ctable (a directory)"
    directory = True
    table = True
    appendable = True
    save_options = (
        "chunklen", "expectedlen", "clevel", "shuffle", "cname", "quantize", "dflt", "attrs",
        "overwrite", "durable", "codec",
    )  # fmt: skip
    dir_members = META_MEMBERS
    published_last = PUBLISHED_LAST

    def sniff_dir(self, path: PathLike | Directory) -> bool:
        from .layout import sniff_dir

        return sniff_dir(path)

    def open_reader(self, source: Any, *, verify: bool = True) -> ContainerReader | TableReader:
        from .reader import open_reader

        return open_reader(source)

    def open_table(self, source: Any, columns: Sequence[str]) -> TableReader:
        from .reader import open_table

        return open_table(source, columns)

    def scan(self, reader: Any) -> Iterator[ChunkSpan]:
        from .reader import scan

        return scan(reader)

    def load(self, source: Any) -> np.ndarray:
        from .reader import load

        return load(source)

    def info(self, source: Any) -> dict[str, Any]:
        from .report import info

        return info(source)

    def verify(self, source: Any) -> dict[str, Any]:
        from .report import verify

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

        return cast(ContainerWriter, open_writer(output, description, metadata=metadata, **options))

    def save(self, array: np.ndarray, path: str, **options: Any) -> None:
        from .writer import save_bcolz

        save_bcolz(array, path, **options)

    def conversion_target(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> Any:
        from .writer import ConversionTarget

        return ConversionTarget(source, options, copy_chunks)

    def conversion_options(self) -> Mapping[str, Any]:
        from .writer import ConversionTarget

        return ConversionTarget.OPTIONS

    def append_rows(self, path: PathLike, rows: np.ndarray, **options: Any) -> None:
        from .append import append_rows

        append_rows(path, rows)


FORMAT = BcolzFormat()
