"""bloscpack 0.16's ``bloscpack.file_io``: the sources and sinks of ``.blp`` containers in
binary file objects, and the file and bytes functions built on them.

The container is read and written sequentially from the file object's position, as 0.16 did;
the headers, the metadata section, the offsets and the chunks are encoded and decoded by
:mod:`bloscpack.containers.bloscpack`.  Files are written through a temporary file renamed
into place (:func:`bloscpack.io.atomic_write`).  A file whose format version is not
:data:`FORMAT_VERSION` raises :class:`~bloscpack.errors.FormatVersionMismatch`.
"""

import io
import os
from collections.abc import Iterator
from typing import IO, Any

from ..api import pack_bytes_file, pack_file, unpack_bytes_file, unpack_file
from ..chunks import decompress_chunk
from ..containers.bloscpack import decode_metadata, encode_metadata_section, encode_offsets
from ..containers.bloscpack.args import DEFAULT_CHUNK_SIZE, calculate_nchunks
from ..containers.bloscpack.checksums import Hash
from ..containers.bloscpack.header import (
    BLOSCPACK_HEADER_LENGTH,
    FORMAT_VERSION,
    METADATA_HEADER_LENGTH,
    BloscpackHeader,
    MetadataHeader,
)
from ..containers.bloscpack.writer import write_file
from ..errors import (
    ChecksumMismatch,
    FileNotFound,
    FormatError,
    FormatVersionMismatch,
    TruncatedError,
)
from .abstract_io import CompressedSink, CompressedSource, PlainSink, PlainSource, pack, unpack
from .args import _check_metadata_arguments
from .constants import BLOSC_HEADER_LENGTH
from .headers import decode_blosc_header

_MAX_HEADER = 32  # a Blosc2 chunk header; a Blosc1 header is its first 16 bytes


def _name(fp: Any) -> str:
    name = getattr(fp, "name", None)
    return name if isinstance(name, str) else f"<{type(fp).__name__}>"


def _read(fp: IO[bytes], n: int, what: str) -> bytes:
    data = fp.read(n)
    if len(data) != n:
        raise TruncatedError(f"{_name(fp)}: {what} needs {n} bytes, only {len(data)} are left")
    return data


def _write_metadata(output_fp: IO[bytes], metadata: Any, metadata_args: Any) -> int:
    """Write the metadata section of ``metadata`` at the position of ``output_fp``; return its
    length in bytes."""
    _check_metadata_arguments(metadata_args)
    section = encode_metadata_section(metadata, metadata_args)
    output_fp.write(section)
    return len(section)


def _read_bloscpack_header(input_fp: IO[bytes]) -> BloscpackHeader:
    """The ``.blp`` header at the position of ``input_fp``."""
    header = BloscpackHeader.decode(_read(input_fp, BLOSCPACK_HEADER_LENGTH, "bloscpack header"))
    if header.format_version != FORMAT_VERSION:
        raise FormatVersionMismatch(
            f"{_name(input_fp)}: format version of file was not '{FORMAT_VERSION}' as expected,"
            f" but '{header.format_version}'"
        )
    return header


def _read_metadata(input_fp: IO[bytes]) -> tuple[Any, MetadataHeader]:
    """``(metadata, metadata header)`` of the metadata section at the position of
    ``input_fp`` (its digest verified)."""
    header = MetadataHeader.decode(_read(input_fp, METADATA_HEADER_LENGTH, "metadata header"))
    stored = _read(input_fp, header.meta_comp_size, "metadata")
    input_fp.seek(header.max_meta_size - header.meta_comp_size, os.SEEK_CUR)
    checksum = header.checksum_impl
    digest = _read(input_fp, checksum.size, "metadata digest")
    if digest != checksum(stored):
        raise ChecksumMismatch(
            f"{_name(input_fp)}: Checksum mismatch detected in metadata ({checksum.name}),"
            f" expected: {digest!r}, received: {checksum(stored)!r}"
        )
    return decode_metadata(header, stored, _name(input_fp)), header


def _read_offsets(input_fp: IO[bytes], bloscpack_header: BloscpackHeader) -> list[int]:
    """The offsets of the ``nchunks`` chunks (the section at the position of ``input_fp``, which
    moves past all its slots); ``[]`` without an offsets section."""
    if not bloscpack_header.offsets:
        return []
    total = bloscpack_header.total_prospective_chunks
    if total is None:
        raise FormatError(f"{_name(input_fp)}: offsets section with an unknown number of chunks")
    raw = _read(input_fp, 8 * total, "offsets section")
    return [int.from_bytes(raw[i : i + 8], "little", signed=True)
            for i in range(0, 8 * bloscpack_header.nchunks, 8)]  # fmt: skip


def _read_beginning(input_fp: IO[bytes]) -> tuple[BloscpackHeader, Any, Any, list[int]]:
    """``(bloscpack header, metadata, metadata header, offsets)`` at the position of
    ``input_fp``, which moves to the first chunk (metadata and its header: None without)."""
    header = _read_bloscpack_header(input_fp)
    metadata, metadata_header = _read_metadata(input_fp) if header.metadata else (None, None)
    return header, metadata, metadata_header, _read_offsets(input_fp, header)


def _write_offsets(output_fp: IO[bytes], offsets: list[int]) -> None:
    output_fp.write(encode_offsets(offsets))


def _read_compressed_chunk_fp(input_fp: IO[bytes], checksum_impl: Hash
                              ) -> tuple[bytes, Any, bytes | None]:  # fmt: skip
    """``(chunk, its Blosc header as a dict, digest or None)`` at the position of
    ``input_fp``."""
    head = input_fp.read(_MAX_HEADER)
    if len(head) < BLOSC_HEADER_LENGTH:
        raise TruncatedError(f"{_name(input_fp)}: a chunk header needs 16 bytes, got {len(head)}")
    blosc_header = decode_blosc_header(head)
    input_fp.seek(-len(head), os.SEEK_CUR)
    compressed = _read(input_fp, blosc_header["ctbytes"], "chunk")
    digest = _read(input_fp, checksum_impl.size, "digest") if checksum_impl.size else None
    return compressed, blosc_header, digest


def _write_compressed_chunk(output_fp: IO[bytes], compressed: bytes, digest: bytes) -> None:
    output_fp.write(compressed)
    if digest:
        output_fp.write(digest)


class PlainFPSource(PlainSource):
    """The uncompressed chunks read from a file object."""

    def __init__(self, input_fp: IO[bytes]) -> None:
        self.input_fp = input_fp

    def __iter__(self) -> Iterator[bytes]:
        for i in range(self.nchunks):
            yield self.input_fp.read(self.chunk_size if i < self.nchunks - 1 else self.last_chunk)


class CompressedFPSource(CompressedSource):
    """The chunks of the ``.blp`` container at the position of a file object; its
    ``bloscpack_header``, ``metadata``, ``metadata_header`` and ``offsets`` are read at once."""

    def __init__(self, input_fp: IO[bytes]) -> None:
        self.input_fp = input_fp
        self.bloscpack_header, self.metadata, self.metadata_header, self.offsets = _read_beginning(
            input_fp
        )
        self.checksum_impl = self.bloscpack_header.checksum_impl
        self.nchunks = self.bloscpack_header.nchunks

    def __iter__(self) -> Iterator[tuple[bytes, bytes | None]]:
        for _ in range(self.nchunks or 0):
            compressed, _header, digest = _read_compressed_chunk_fp(
                self.input_fp, self.checksum_impl
            )
            yield compressed, digest


class PlainFPSink(PlainSink):
    """Writes the decompressed chunks to a file object."""

    def __init__(self, output_fp: IO[bytes], nchunks: int | None = None) -> None:
        self.output_fp = output_fp
        self.nchunks = nchunks

    def put(self, compressed: Any) -> int:
        """Decompress a chunk and write it."""
        decompressed = decompress_chunk(compressed)
        self.output_fp.write(decompressed)
        return len(decompressed)


class CompressedFPSink(CompressedSink):
    """Writes a ``.blp`` container at the position of a (seekable, unless without offsets)
    file object; offsets are counted from where the container starts."""

    def __init__(self, output_fp: IO[bytes]) -> None:
        self.output_fp = output_fp
        self.meta_total = 0
        self.start = 0
        self.offset_storage: list[int] = []

    def write_bloscpack_header(self) -> None:
        """Write the header."""
        self.start = self.output_fp.tell() if self.offsets else 0
        self.output_fp.write(self.bloscpack_header.encode())

    def write_metadata(self, metadata: Any, metadata_args: Any) -> None:
        """Write the metadata section."""
        self.meta_total += _write_metadata(self.output_fp, metadata, metadata_args)

    def init_offsets(self) -> None:
        """Reserve the offsets section (-1 in every slot)."""
        if self.offsets:
            total = self.bloscpack_header.total_prospective_chunks or 0
            self.offset_storage = [-1] * self.bloscpack_header.nchunks
            self.output_fp.write(encode_offsets([], total))

    def finalize(self) -> None:
        """Fill in the offsets of the chunks written."""
        if self.offsets:
            end = self.output_fp.tell()
            self.output_fp.seek(self.start + BLOSCPACK_HEADER_LENGTH + self.meta_total)
            _write_offsets(self.output_fp, self.offset_storage)
            self.output_fp.seek(end)

    def put(self, i: int, compressed: bytes) -> tuple[int, bytes, bytes]:
        """Write chunk ``i`` and its digest."""
        offset = self.output_fp.tell() - self.start if self.offsets else 0
        digest = self.do_checksum(compressed)
        _write_compressed_chunk(self.output_fp, compressed, digest)
        if self.offsets:
            self.offset_storage[i] = offset
        return offset, compressed, digest


def _input_size(path: Any) -> int:
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        raise FileNotFound(f"{os.fspath(path)}: input file does not exist") from None


def _pack_fp(input_fp: IO[bytes], size: int, out: Any, chunk_size: Any, metadata: Any,
             blosc_args: Any, bloscpack_args: Any, metadata_args: Any) -> None:  # fmt: skip
    chunking = calculate_nchunks(size, chunk_size)

    def write(output_fp: IO[bytes]) -> None:
        pack(PlainFPSource(input_fp), CompressedFPSink(output_fp), *chunking, metadata=metadata,
             blosc_args=blosc_args, bloscpack_args=bloscpack_args,
             metadata_args=metadata_args)  # fmt: skip

    write_file(out, write)


def pack_file_to_file(in_file: Any, out_file: Any, chunk_size: Any = DEFAULT_CHUNK_SIZE,
                      metadata: Any = None, blosc_args: Any = None, bloscpack_args: Any = None,
                      metadata_args: Any = None) -> None:  # fmt: skip
    """Compress the file ``in_file`` into the ``.blp`` file ``out_file``."""
    size = _input_size(in_file)
    with open(in_file, "rb") as input_fp:
        _pack_fp(input_fp, size, out_file, chunk_size, metadata, blosc_args, bloscpack_args,
                 metadata_args)  # fmt: skip


def unpack_file_from_file(in_file: Any, out_file: Any) -> Any:
    """Decompress the ``.blp`` file ``in_file`` into ``out_file``; return its metadata."""
    _input_size(in_file)
    with open(in_file, "rb") as input_fp:
        source = CompressedFPSource(input_fp)
        write_file(out_file, lambda output_fp: unpack(source, PlainFPSink(output_fp)))
    return source.metadata


def pack_bytes_to_file(bytes_: Any, out_file: Any, chunk_size: Any = DEFAULT_CHUNK_SIZE,
                       metadata: Any = None, blosc_args: Any = None, bloscpack_args: Any = None,
                       metadata_args: Any = None) -> None:  # fmt: skip
    """Compress ``bytes_`` into the ``.blp`` file ``out_file``."""
    _pack_fp(io.BytesIO(bytes_), len(bytes_), out_file, chunk_size, metadata, blosc_args,
             bloscpack_args, metadata_args)  # fmt: skip


def unpack_bytes_from_file(compressed_file: Any) -> tuple[bytes, Any]:
    """``(data, metadata)`` of the ``.blp`` file ``compressed_file``."""
    _input_size(compressed_file)
    with open(compressed_file, "rb") as input_fp:
        return _unpack_fp(input_fp)


def pack_bytes_to_bytes(bytes_: Any, chunk_size: Any = DEFAULT_CHUNK_SIZE, metadata: Any = None,
                        blosc_args: Any = None, bloscpack_args: Any = None,
                        metadata_args: Any = None) -> bytes:  # fmt: skip
    """The ``.blp`` container of ``bytes_``."""
    sink = io.BytesIO()
    _pack_fp(io.BytesIO(bytes_), len(bytes_), sink, chunk_size, metadata, blosc_args,
             bloscpack_args, metadata_args)  # fmt: skip
    return sink.getvalue()


def unpack_bytes_from_bytes(bytes_: Any) -> tuple[bytes, Any]:
    """``(data, metadata)`` of the ``.blp`` container ``bytes_``."""
    return _unpack_fp(io.BytesIO(bytes_))


def _unpack_fp(input_fp: IO[bytes]) -> tuple[bytes, Any]:
    source = CompressedFPSource(input_fp)
    output = io.BytesIO()
    unpack(source, PlainFPSink(output))
    return output.getvalue(), source.metadata


__all__ = [
    "CompressedFPSink",
    "CompressedFPSource",
    "PlainFPSink",
    "PlainFPSource",
    "pack_bytes_file",
    "pack_bytes_to_bytes",
    "pack_bytes_to_file",
    "pack_file",
    "pack_file_to_file",
    "unpack_bytes_file",
    "unpack_bytes_from_bytes",
    "unpack_bytes_from_file",
    "unpack_file",
    "unpack_file_from_file",
]
