"""The ``.blp`` format as the registry lists it: :data:`FORMAT` (its reader, writer and the rest
are imported when a method needs them)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import IO, Any

import numpy as np

from ...io.paths import PathLike
from ...io.staging import StagedOutput
from ..base import ArrayDescription, ChunkSpan, ContainerFormat, ContainerReader, ContainerWriter
from ..listing import listed
from ..options import CompressionParams
from . import args, header
from .checksums import CHECKSUMS_AVAIL


@listed("blp")
class BloscpackFormat(ContainerFormat):
    """Bloscpack files: a header, metadata and offsets at the start, nothing at the end."""

    description = "Bloscpack file"
    holds_bytes = True
    appendable = True
    checksummed = True
    streams = True
    _options = ("chunk_size", *args.BLOSC_ARGS[1:], "codec", *args.BLOSCPACK_ARGS,
                *args.BLOSC2_ARGS, "metadata_args")  # fmt: skip
    save_options = (*_options, "order_record")
    compress_file_options = (*_options, "typesize", "metadata", "order_record")
    option_defaults = {
        "typesize": args.DEFAULT_TYPESIZE, "clevel": args.DEFAULT_CLEVEL,
        "cname": args.DEFAULT_CNAME, "chunk_size": args.DEFAULT_CHUNK_SIZE,
        "checksum": args.DEFAULT_CHECKSUM,
    }  # fmt: skip
    option_choices = {"checksum": tuple(CHECKSUMS_AVAIL)}
    append_options = ("blosc_args", "metadata")
    edges = (16 * 1024, 0)  # header, metadata and offsets (2,000 chunks)

    def sniff(self, head: bytes) -> bool:
        return header.sniff(head)

    def open_reader(self, source: Any, *, verify: bool = True) -> ContainerReader:
        from . import reader

        return reader.open_reader(source, verify=verify)

    def load(self, source: Any) -> np.ndarray:
        from . import reader

        return reader.load(source)

    def scan(self, reader: Any) -> Iterator[ChunkSpan]:
        from .reader import scan

        return scan(reader)

    def info(self, source: Any) -> dict[str, Any]:
        from . import report

        return report.info(source)

    def info_text(self, source: Any, report_: dict[str, Any]) -> str:
        from . import report

        return report.info_text(source, report_)

    def verify(self, source: Any) -> dict[str, Any]:
        from . import report

        return report.verify(source)

    def own_options(self, params: CompressionParams, rest: dict[str, Any], dtype: np.dtype,
                    shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
        from . import writer

        return writer.own_options(params, rest, dtype, shape)

    def open_writer(self, output: StagedOutput, description: ArrayDescription, *,
                    metadata: Any = None, **options: Any) -> ContainerWriter:  # fmt: skip
        from . import writer

        return writer.open_writer(output, description, metadata=metadata, **options)

    def save(self, array: np.ndarray, path: str, **options: Any) -> None:
        from . import writer

        writer.save_blp(array, path, **options)

    def conversion_target(self, source: Any, options: dict[str, Any], copy_chunks: bool) -> Any:
        from . import writer

        return writer.ConversionTarget(source, options, copy_chunks)

    def conversion_options(self) -> Mapping[str, Any]:
        from . import writer

        return writer.ConversionTarget.OPTIONS

    def compress_file(self, src: Any, dst: Any, **options: Any) -> None:
        from . import compress

        compress.compress_file(src, dst, **options)

    def write_stored(self, source: Any, out: IO[bytes], progress: Any, piece: int) -> Any:
        from . import compress

        return compress.write_stored(source, out, progress, piece)

    def stream_size(self, head: bytes) -> tuple[int | None, int]:
        return header.stream_size(head)

    def append_rows(self, path: PathLike, rows: np.ndarray, **options: Any) -> None:
        from . import append

        append.append_rows(path, rows, **options)


FORMAT = BloscpackFormat()
