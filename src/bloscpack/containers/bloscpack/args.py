"""Argument objects of the .blp writer, chunking, and human-readable sizes.

``BloscArgs``, ``BloscpackArgs`` and ``MetadataArgs`` behave like bloscpack 0.16's: mutable
mappings over their attribute names (``args['clevel']``), with ``pformat()`` and ``copy()``,
and no deletion.  :func:`calculate_nchunks` cuts an input size into chunks exactly as 0.16 did.
"""

from __future__ import annotations

import copy
import pprint
import re
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from typing import Any

from ...engine import BLOSC1_MAX_BUFFERSIZE
from ...errors import (
    ArgumentError,
    ChunkingException,
    ChunkSizeTypeSizeMismatch,
    NoSuchCodec,
    NoSuchSerializer,
)
from ..options import (
    NAMED_VALUES,
    RAW_TYPESIZE,
    SIZE_SUFFIXES,
    canonical,
    double_pretty_size,
    pretty_size,
    size_of_text,
)
from .checksums import CHECKSUMS_AVAIL, check_valid_checksum

# --- defaults (the values of bloscpack 0.16) ------------------------------------------------

DEFAULT_TYPESIZE = RAW_TYPESIZE
DEFAULT_CLEVEL = 7
DEFAULT_SHUFFLE = True
DEFAULT_CNAME = "blosclz"
DEFAULT_OFFSETS = True
DEFAULT_CHECKSUM = "adler32"
DEFAULT_CHUNK_SIZE = "1M"
DEFAULT_MAGIC_FORMAT = b"JSON"
DEFAULT_META_CHECKSUM = "adler32"
DEFAULT_META_CODEC = "zlib"
DEFAULT_META_LEVEL = 6


def DEFAULT_MAX_APP_CHUNKS(nchunks: int) -> int:  # noqa: N802 - the 0.16 name
    """Default number of extra offset slots: ten times the number of chunks."""
    return 10 * nchunks


def DEFAULT_MAX_META_SIZE(meta_size: int) -> int:  # noqa: N802 - the 0.16 name
    """Default room reserved for metadata: ten times its serialized size."""
    return 10 * meta_size


MAX_CHUNK_SIZE = BLOSC1_MAX_BUFFERSIZE  # python-blosc 1.x BLOSC_MAX_BUFFERSIZE
MAX_CHUNKS = 2**63 - 1
MAX_CLEVEL = 9
META_CODECS = ["None", "zlib"]
SERIALIZERS = [b"JSON"]
BLOSC_ARGS = ("typesize", "clevel", "shuffle", "cname")
BLOSC2_ARGS = ("blosc_version", "filters", "filters_meta", "use_dict", "blocksize")
BLOSCPACK_ARGS = ("offsets", "checksum", "max_app_chunks")
METADATA_ARGS = ("magic_format", "meta_checksum", "meta_codec", "meta_level", "max_meta_size")

# --- human-readable sizes -----------------------------------------------------------------

SUFFIXES = SIZE_SUFFIXES


def reverse_pretty(readable: str) -> int:
    """``'1.5M'`` -> ``1572864``: a number (float allowed) with a B/K/M/G/T suffix."""
    return size_of_text(readable, ChunkingException)


_BARE_INT = re.compile(r"^[0-9]+$")


def parse_chunk_size(value: str | int) -> int:
    """A chunk size as the command line accepts it: an int, a bare integer string, a size with
    a B/K/M/G/T suffix, or ``'max'`` (2147483631); range-checked."""
    if isinstance(value, str):
        if value == "max":
            value = MAX_CHUNK_SIZE
        elif _BARE_INT.match(value):
            value = int(value)
        else:
            value = reverse_pretty(value)
    check_range("chunk_size", value, 1, MAX_CHUNK_SIZE, ChunkingException)
    return value


def check_range(
    name: str, value: Any, min_: int, max_: int, error: type[Exception] = ArgumentError
) -> None:
    """Raise ``error`` unless ``value`` is an int in ``[min_, max_]`` (0.16 wording)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise error(f"'{name}' must be of type 'int', not {type(value).__name__!r}")
    if not min_ <= value <= max_:
        raise error(f"'{name}' must be in the range {min_} <= n <= {max_}, not '{value}'")


def calculate_nchunks(
    in_file_size: int, chunk_size: str | int = DEFAULT_CHUNK_SIZE
) -> tuple[int, int, int]:
    """``(nchunks, chunk_size, last_chunk_size)`` for an input of ``in_file_size`` bytes.

    ``chunk_size`` is an int or a string with a B/K/M/G/T suffix; it is range-checked
    (1..2147483631) even when the input is smaller, then lowered to the input size.  An empty
    input is one empty chunk: ``(1, 0, 0)``.
    """
    if in_file_size < 0:
        raise ChunkingException(f"'in_file_size' must not be negative, not {in_file_size}")
    if in_file_size == 0:
        return (1, 0, 0)
    if isinstance(chunk_size, str):
        chunk_size = reverse_pretty(chunk_size)
    check_range("chunk_size", chunk_size, 1, MAX_CHUNK_SIZE, ChunkingException)
    chunk_size = min(chunk_size, in_file_size)
    quotient, remainder = divmod(in_file_size, chunk_size)
    nchunks = quotient + (1 if remainder else 0)
    last_chunk_size = remainder or chunk_size
    if nchunks > MAX_CHUNKS:
        raise ChunkingException(
            f"nchunks: '{nchunks}' is greater than the MAX_CHUNKS: '{MAX_CHUNKS}'"
        )
    return nchunks, chunk_size, last_chunk_size


def array_chunk_size(chunk_size: str | int, nbytes: int, itemsize: int) -> str | int:
    """The chunk size for an array: the default is rounded down to whole items; an explicit
    size must hold whole items (checked before anything is written)."""
    if nbytes == 0 or itemsize == 0:
        return chunk_size
    if isinstance(chunk_size, str) and chunk_size == DEFAULT_CHUNK_SIZE:
        default = reverse_pretty(DEFAULT_CHUNK_SIZE)
        return max(itemsize, default - default % itemsize)
    effective = calculate_nchunks(nbytes, chunk_size)[1]
    if effective % itemsize:
        raise ChunkSizeTypeSizeMismatch(
            f"chunk_size: {effective} bytes is not divisible by the item size {itemsize}"
            " of the array: chunks must hold whole items"
        )
    return chunk_size


def handle_max_app_chunks(offsets: bool, nchunks: int, max_app_chunks: Any) -> int:
    """The number of extra offset slots to preallocate: ``max_app_chunks`` is an int or a
    callable of ``nchunks``; 0 without offsets or with an unknown number of chunks; capped so
    that ``nchunks + max_app_chunks`` fits an int64."""
    check_range("nchunks", nchunks, -1, MAX_CHUNKS)
    if not offsets or nchunks == -1:
        return 0
    if callable(max_app_chunks):
        value = max_app_chunks(nchunks)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ArgumentError(
                f"max_app_chunks callable returned a non integer of type {type(value).__name__!r}"
            )
        if value < 0:
            raise ArgumentError(f"max_app_chunks callable returned a negative integer: {value}")
    elif isinstance(max_app_chunks, int) and not isinstance(max_app_chunks, bool):
        check_range("max_app_chunks", max_app_chunks, 0, MAX_CHUNKS)
        value = max_app_chunks
    else:
        raise ArgumentError("max_app_chunks was neither a callable or an int")
    return min(value, MAX_CHUNKS - nchunks)


# --- the mapping base ---------------------------------------------------------------------


class MutableMappingObject(MutableMapping[str, Any]):
    """A record whose attributes are also mapping keys (bloscpack 0.16's argument objects)."""

    _attrs: tuple[str, ...] = ()
    _bytes_attrs: tuple[str, ...] = ()

    @property
    def attributes(self) -> list[str]:
        """The mapping keys, in order."""
        return list(self._attrs)

    @property
    def bytes_attributes(self) -> list[str]:
        """Keys whose values are byte counts (pretty-printed by ``pformat``)."""
        return list(self._bytes_attrs)

    def __getitem__(self, key: str) -> Any:
        if key not in self.attributes:
            raise KeyError(f"{key} not in {type(self).__name__}")
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        if key not in self.attributes:
            raise KeyError(f"{key} not in {type(self).__name__}")
        setattr(self, key, value)

    def __delitem__(self, key: str) -> None:
        raise NotImplementedError(
            f"{type(self).__name__} does not support __delitem__ or derivatives"
        )

    def __len__(self) -> int:
        return len(self.attributes)

    def __iter__(self) -> Iterator[str]:
        return iter(self.attributes)

    def __str__(self) -> str:
        return pprint.pformat(dict(self))

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in self.items())
        return f"{type(self).__name__}({args})"

    def pformat(self, indent: int = 4) -> str:
        """One ``key: value`` line per attribute; byte counts as ``1.0M (1048576B)``."""
        pad = " " * indent
        lines = [
            f"{key}: "
            + (
                double_pretty_size(value)
                if key in self.bytes_attributes and value != -1
                else repr(value)
            )
            for key, value in self.items()
        ]
        return f"{type(self).__name__}:\n{pad}" + f"\n{pad}".join(lines)

    def copy(self) -> Any:
        """A shallow copy."""
        return copy.copy(self)


# --- argument objects ---------------------------------------------------------------------


class BloscArgs(MutableMappingObject):
    """How chunks are compressed.

    ``BloscArgs(typesize=8, clevel=7, shuffle=True, cname='blosclz')`` are bloscpack 0.16's
    arguments and write Blosc1 chunks (readable by 0.16).  ``shuffle`` is ``True``/``1`` (byte
    shuffle), ``False``/``0`` or ``2`` (bit shuffle).  ``blosc_version=2`` writes Blosc2 chunks
    instead (not readable by 0.16), which adds the keys ``filters`` (up to 6 filter names or
    ids, e.g. ``['delta', 'shuffle']``; default: from ``shuffle``), ``filters_meta``,
    ``use_dict`` and ``blocksize``; typesize may then exceed 255.
    """

    def __init__(
        self,
        typesize: int = DEFAULT_TYPESIZE,
        clevel: int = DEFAULT_CLEVEL,
        shuffle: bool | int = DEFAULT_SHUFFLE,
        cname: str = DEFAULT_CNAME,
        *,
        blosc_version: int = 1,
        filters: Sequence[int | str] | None = None,
        filters_meta: Sequence[int] | None = None,
        use_dict: bool = False,
        blocksize: int = 0,
    ) -> None:
        if blosc_version not in (1, 2):
            raise NoSuchCodec(f"blosc_version must be 1 or 2, not {blosc_version!r}")
        self.typesize = typesize
        self.clevel = clevel
        self.shuffle = shuffle
        self.cname = canonical(cname, NAMED_VALUES["cname"])
        self.blosc_version = blosc_version
        self.filters = filters
        self.filters_meta = filters_meta
        self.use_dict = use_dict
        self.blocksize = blocksize

    @classmethod
    def from_options(cls, cname: str | None, codec: str | None, **options: Any) -> BloscArgs:
        """``BloscArgs(**options)`` with ``codec`` as an alias of ``cname`` (default blosclz);
        both may be given only if they agree."""
        if cname is not None and codec is not None and cname != codec:
            raise ArgumentError(f"cname {cname!r} and codec {codec!r} disagree")
        return cls(cname=cname or codec or DEFAULT_CNAME, **options)

    @property
    def attributes(self) -> list[str]:
        """The mapping keys: 0.16's four, plus the Blosc2 keys with ``blosc_version=2``."""
        if self.blosc_version == 2:
            return [*BLOSC_ARGS, *BLOSC2_ARGS]
        return list(BLOSC_ARGS)


class BloscpackArgs(MutableMappingObject):
    """Container options: ``offsets`` section on/off, chunk ``checksum`` name (``None`` is
    ``'None'``), and ``max_app_chunks`` (int, or callable of the number of chunks) extra offset
    slots for later appends."""

    _attrs = BLOSCPACK_ARGS

    def __init__(
        self,
        offsets: bool = DEFAULT_OFFSETS,
        checksum: str | None = DEFAULT_CHECKSUM,
        max_app_chunks: int | Callable[[int], int] = DEFAULT_MAX_APP_CHUNKS,
    ) -> None:
        self.offsets = offsets
        self.checksum = "None" if checksum is None else canonical(checksum, CHECKSUMS_AVAIL)
        self.max_app_chunks = max_app_chunks


class MetadataArgs(MutableMappingObject):
    """How the metadata section is written: serializer ``magic_format`` (``b'JSON'``),
    ``meta_checksum``, ``meta_codec`` (``'zlib'`` or ``'None'``), ``meta_level`` 0..9, and
    ``max_meta_size`` (int, or callable of the serialized size) bytes reserved."""

    _attrs = METADATA_ARGS

    def __init__(
        self,
        magic_format: bytes = DEFAULT_MAGIC_FORMAT,
        meta_checksum: str = DEFAULT_META_CHECKSUM,
        meta_codec: str = DEFAULT_META_CODEC,
        meta_level: int = DEFAULT_META_LEVEL,
        max_meta_size: int | Callable[[int], int] = DEFAULT_MAX_META_SIZE,
    ) -> None:
        self.magic_format = magic_format
        self.meta_checksum = canonical(meta_checksum, CHECKSUMS_AVAIL)
        self.meta_codec = canonical(meta_codec, META_CODECS)
        self.meta_level = meta_level
        self.max_meta_size = max_meta_size

    @property
    def should_compress(self) -> bool:
        """Whether a metadata codec is requested."""
        return self.meta_codec != META_CODECS[0]

    def nullify_codec(self) -> None:
        """Store the metadata uncompressed (0.16 did this when zlib did not help)."""
        self.meta_codec = META_CODECS[0]

    def effective_max_meta_size(self, meta_size: int) -> int:
        """Bytes reserved for metadata of serialized size ``meta_size``."""
        value = (
            self.max_meta_size(meta_size) if callable(self.max_meta_size) else self.max_meta_size
        )
        check_range("max_meta_size", value, 0, 2**32 - 1)
        return int(value)

    def validate(self) -> None:
        """Raise unless every field names something that exists and is in range."""
        if self.magic_format not in SERIALIZERS:
            raise NoSuchSerializer(f"serializer {self.magic_format!r} does not exist; use b'JSON'")
        check_valid_checksum(self.meta_checksum)
        if self.meta_codec not in META_CODECS:
            raise NoSuchCodec(f"codec {self.meta_codec!r} does not exist; use 'zlib' or 'None'")
        check_range("meta_level", self.meta_level, 0, MAX_CLEVEL)


__all__ = [
    "BloscArgs",
    "BloscpackArgs",
    "MetadataArgs",
    "array_chunk_size",
    "calculate_nchunks",
    "double_pretty_size",
    "parse_chunk_size",
    "pretty_size",
    "reverse_pretty",
]
