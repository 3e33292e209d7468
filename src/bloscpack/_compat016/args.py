"""The names of bloscpack 0.16's ``bloscpack.args`` that :mod:`bloscpack.args` does not define
itself (it looks them up here when first used): the default argument dicts and the checks of
argument dicts."""

from collections.abc import Mapping
from typing import Any

from ..containers.bloscpack.args import (
    BLOSC_ARGS,
    BLOSCPACK_ARGS,
    DEFAULT_CHECKSUM,
    DEFAULT_CLEVEL,
    DEFAULT_CNAME,
    DEFAULT_MAGIC_FORMAT,
    DEFAULT_MAX_APP_CHUNKS,
    DEFAULT_MAX_META_SIZE,
    DEFAULT_META_CHECKSUM,
    DEFAULT_META_CODEC,
    DEFAULT_META_LEVEL,
    DEFAULT_OFFSETS,
    DEFAULT_SHUFFLE,
    DEFAULT_TYPESIZE,
    METADATA_ARGS,
    handle_max_app_chunks,
)
from ..errors import ArgumentError

DEFAULT_BLOSCPACK_ARGS = dict(
    zip(BLOSCPACK_ARGS, (DEFAULT_OFFSETS, DEFAULT_CHECKSUM, DEFAULT_MAX_APP_CHUNKS), strict=True)
)
DEFAULT_BLOSC_ARGS = dict(
    zip(BLOSC_ARGS, (DEFAULT_TYPESIZE, DEFAULT_CLEVEL, DEFAULT_SHUFFLE, DEFAULT_CNAME), strict=True)
)
DEFAULT_METADATA_ARGS = dict(
    zip(
        METADATA_ARGS,
        (DEFAULT_MAGIC_FORMAT, DEFAULT_META_CHECKSUM, DEFAULT_META_CODEC, DEFAULT_META_LEVEL,
         DEFAULT_MAX_META_SIZE),
        strict=True,
    )
)  # fmt: skip

_BLOSC_ARGS_SET = set(BLOSC_ARGS)
_BLOSCPACK_ARGS_SET = set(BLOSCPACK_ARGS)
_METADATA_ARGS_SET = set(METADATA_ARGS)

#: 0.16's name of :func:`~bloscpack.containers.bloscpack.args.handle_max_app_chunks`.
_handle_max_apps = handle_max_app_chunks


def _check_args(name: str, received: Mapping[str, Any], expected: tuple[str, ...]) -> None:
    keys = set(received.keys())
    missing = set(expected) - keys
    if missing:
        raise ArgumentError(f"{name} args was missing: {sorted(missing)!r}")
    extra = keys - set(expected)
    if extra:
        raise ArgumentError(f"{name} args had some extras: {sorted(extra)!r}")


def _check_blosc_args(blosc_args: Mapping[str, Any]) -> None:
    """Raise unless ``blosc_args`` has exactly 0.16's blosc keys."""
    _check_args("blosc", blosc_args, BLOSC_ARGS)


def _check_bloscpack_args(bloscpack_args: Mapping[str, Any]) -> None:
    """Raise unless ``bloscpack_args`` has exactly the bloscpack keys."""
    _check_args("bloscpack", bloscpack_args, BLOSCPACK_ARGS)


def _check_metadata_arguments(metadata_args: Mapping[str, Any]) -> None:
    """Raise unless ``metadata_args`` has exactly the metadata keys."""
    _check_args("metadata", metadata_args, METADATA_ARGS)


__all__ = ["DEFAULT_BLOSCPACK_ARGS", "DEFAULT_BLOSC_ARGS", "DEFAULT_METADATA_ARGS"]
