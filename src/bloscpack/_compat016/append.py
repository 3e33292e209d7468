"""The names of bloscpack 0.16's ``bloscpack.append`` that :mod:`bloscpack.append` does not
define itself (it looks them up here when first used): the in-place rewrite of a metadata
section in a file object."""

from typing import IO, Any

from ..containers.bloscpack.args import (
    DEFAULT_META_CODEC,
    DEFAULT_META_LEVEL,
    MAX_CLEVEL,
    METADATA_ARGS,
    MetadataArgs,
    check_range,
)
from ..containers.bloscpack.checksums import CHECKSUMS_LOOKUP, check_valid_checksum
from ..containers.bloscpack.header import MetadataHeader
from ..errors import ChecksumLengthMismatch, NoChangeInMetadata, NoMetadataFound
from .file_io import _read_bloscpack_header, _read_metadata, _write_metadata
from .metacodecs import check_valid_codec
from .serializers import check_valid_serializer


def _seek_to_metadata(target_fp: IO[bytes]) -> int:
    """Move ``target_fp`` (at the start of a container) to its metadata section; return the
    position (:class:`~bloscpack.errors.NoMetadataFound` without one)."""
    if not _read_bloscpack_header(target_fp).metadata:
        raise NoMetadataFound("unable to seek to metadata if it does not exist")
    return target_fp.tell()


def _rewrite_metadata_fp(target_fp: IO[bytes], new_metadata: Any, magic_format: Any = None,
                         checksum: str | None = None, codec: str | None = DEFAULT_META_CODEC,
                         level: int | None = DEFAULT_META_LEVEL) -> None:  # fmt: skip
    """Replace the metadata section at the position of ``target_fp`` by one of the same size
    holding ``new_metadata`` (see :func:`_recreate_metadata` for the other arguments)."""
    position = target_fp.tell()
    old_metadata, old_header = _read_metadata(target_fp)
    if old_metadata == new_metadata:
        raise NoChangeInMetadata("you requested to update metadata, but this has not changed")
    args = _recreate_metadata(old_header, new_metadata, magic_format=magic_format,
                              checksum=checksum, codec=codec, level=level)  # fmt: skip
    target_fp.seek(position)
    _write_metadata(target_fp, new_metadata, args)


def _recreate_metadata(old_metadata_header: MetadataHeader, new_metadata: Any,
                       magic_format: Any = None, checksum: str | None = None,
                       codec: str | None = DEFAULT_META_CODEC,
                       level: int | None = DEFAULT_META_LEVEL) -> MetadataArgs:  # fmt: skip
    """The metadata arguments of a section replacing the one ``old_metadata_header``
    describes: its settings, with ``magic_format``, ``checksum`` (of the same digest size),
    ``codec`` and ``level`` overriding them unless None."""
    args = MetadataArgs(**{key: old_metadata_header[key] for key in METADATA_ARGS})
    if magic_format is not None:
        check_valid_serializer(magic_format)
        args.magic_format = magic_format
    if checksum is not None:
        check_valid_checksum(checksum)
        old, new = CHECKSUMS_LOOKUP[old_metadata_header.meta_checksum], CHECKSUMS_LOOKUP[checksum]
        if old.size != new.size:
            raise ChecksumLengthMismatch(
                f"checksums {old.name!r} and {new.name!r} have different digest sizes"
                f" ({old.size} and {new.size}): the metadata section cannot change size"
            )
        args.meta_checksum = checksum
    if codec is not None:
        check_valid_codec(codec)
        args.meta_codec = codec
    if level is not None:
        check_range("meta_level", level, 0, MAX_CLEVEL)
        args.meta_level = level
    return args
