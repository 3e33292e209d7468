"""One set of option names for every writer: ``codec``, ``clevel``, ``filters``, ``chunks``
and ``chunk_size`` mean the same in every format (``save``, ``convert``, ``compress_file``);
each format's module turns them into its own (``own_options``).  A format's own names
(``chunklen``, ``chunksize``, ``shuffle``, ...) keep working, but not together with the common
name they stand for."""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from numbers import Integral
from typing import TYPE_CHECKING, Any

from ..blosc.header import CODEC_CODES, FILTER_IDS, MAX_BUFFERSIZE, SPLIT_MODES, WRITABLE_CODECS
from ..errors import ArgumentError

if TYPE_CHECKING:
    import numpy as np

#: The common options, what they mean, and the format's own names each one replaces.
COMMON_OPTIONS: dict[str, str] = {
    "codec": f"the codec name ({', '.join(WRITABLE_CODECS)})",
    "clevel": "the compression level, 0-9",
    "filters": "the filters in order, by name or id ('shuffle', 'bitshuffle', 'delta',"
    " 'trunc_prec', 'bytedelta'); [] for none",
    "chunks": "the box one chunk holds: rows (an int) or a shape; formats that cut arrays"
    " along their first axis take (rows, *shape[1:])",
    "chunk_size": "about this many bytes per chunk (an int or a size like '4M'), whole rows"
    " of an array; not with chunks",
    "blocks": "the box one block (the unit Blosc compresses inside a chunk) holds: rows or a"
    " shape, as chunks",
}

#: The options whose values are names, and those names (matched ignoring case, see
#: :func:`canonical`); filter names are matched by :func:`parse_filters`, format names by
#: the registry.
NAMED_VALUES: dict[str, tuple[str, ...]] = {
    "codec": tuple(CODEC_CODES), "cname": tuple(CODEC_CODES), "splitmode": tuple(SPLIT_MODES),
}  # fmt: skip

#: The item size raw bytes are compressed with unless ``typesize`` says (bloscpack 0.16's).
RAW_TYPESIZE = 8
#: Suffixes of human-readable byte counts (powers of 1024, as bloscpack 0.16 reads them).
SIZE_SUFFIXES = {"B": 2**0, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_BARE_INT = re.compile(r"^[0-9]+$")


@dataclass(frozen=True)
class CompressionParams:
    """The common options given to a writer (None: the format's default), validated."""

    codec: str | None = None
    clevel: int | None = None
    filters: tuple[int, ...] | None = None
    chunks: tuple[int, ...] | None = None
    chunk_size: int | str | None = None  # as given (checked): a format may read its own way
    blocks: tuple[int, ...] | None = None

    @classmethod
    def parse(cls, options: dict[str, Any]) -> tuple[CompressionParams, dict[str, Any]]:
        """The common options in ``options``, checked, and the other (format's own) ones."""
        rest = {
            name: canonical(value, NAMED_VALUES.get(name, ())) for name, value in options.items()
        }
        params = cls(
            rest.pop("codec", None), rest.pop("clevel", None),
            parse_filters(rest.pop("filters", None)), parse_chunks(rest.pop("chunks", None)),
            rest.pop("chunk_size", None), parse_chunks(rest.pop("blocks", None), "blocks"),
        )  # fmt: skip
        if params.chunk_size is not None:
            if params.chunks is not None:
                raise ArgumentError("give chunks or chunk_size, not both")
            parse_size(params.chunk_size, "chunk_size")
        return params, rest

    def own(self, rest: dict[str, Any], **names: Any) -> dict[str, Any]:
        """``rest`` plus the common options, under the format's ``names`` for them
        (``filters="shuffle"``: give the filters as the format's ``shuffle``; the value may be
        a function of the common value).  A common option and the own name it stands for may
        not both be given."""
        own = dict(rest)
        for common in COMMON_OPTIONS:
            value = getattr(self, common)
            if value is None:
                continue
            name, convert = names.get(common, (common, None))
            if name != common and name in own:
                raise ArgumentError(f"give {common} or {name}, not both")
            own[name] = value if convert is None else convert(value)
        return own


def canonical(value: Any, choices: Iterable[str]) -> Any:
    """The one of ``choices`` that ``value`` names ignoring case: names given as option values
    (codecs, checksums, split modes, ...) are case-insensitive, ``"ZSTD"`` is ``"zstd"``.  Any
    other value is returned as given, for its validator to refuse."""
    if isinstance(value, str):
        folded = value.casefold()
        for choice in choices:
            if choice.casefold() == folded:
                return choice
    return value


def check_options(fmt: str, options: Iterable[str], known: Iterable[str]) -> None:
    """Refuse option names a writer of ``fmt`` does not know, listing those it does."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ArgumentError(
            f"unknown option(s) for format {fmt!r}: {', '.join(unknown)};"
            f" known: {', '.join(sorted(known))}"
        )


def save_options(fmt: str, save: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    """``options`` as ``save(array, path, **options)`` (a writer of ``fmt``) takes them,
    with its defaults for the others; unknown names refused."""
    params = list(inspect.signature(save).parameters.values())[2:]
    check_options(fmt, options, [p.name for p in params])
    return {p.name: options.get(p.name, p.default) for p in params}


def parse_filters(value: Any) -> tuple[int, ...] | None:
    """Filter names or ids (one, or a sequence; ``[]``: none) as ids."""
    if value is None:
        return None
    items = [value] if isinstance(value, (str, int)) else value
    try:
        items = list(items)
    except TypeError:
        raise ArgumentError(f"filters must be filter names or ids, got {value!r}") from None
    ids = []
    for item in items:
        if isinstance(item, str) and item.lower() in FILTER_IDS:
            ids.append(FILTER_IDS[item.lower()])
        elif isinstance(item, Integral) and not isinstance(item, bool) and 0 <= int(item) < 256:
            ids.append(int(item))
        else:
            raise ArgumentError(
                f"unknown filter {item!r}; known: {', '.join(FILTER_IDS)} (or ids 0-255)"
            )
    if len(ids) > 6:
        raise ArgumentError(f"at most 6 filters, got {len(ids)}")
    return tuple(ids)


def parse_chunks(value: Any, name: str = "chunks") -> tuple[int, ...] | None:
    """``chunks`` (or ``blocks``): rows (an int) or a shape, every size positive."""
    if value is None:
        return None
    items = (value,) if isinstance(value, Integral) else value
    try:
        chunks = tuple(items)
    except TypeError:
        raise ArgumentError(f"{name} must be an int or a tuple of ints, got {value!r}") from None
    if not chunks or not all(
        isinstance(n, Integral) and not isinstance(n, bool) and int(n) > 0 for n in chunks
    ):
        raise ArgumentError(f"{name} must be positive ints, got {value!r}")
    return tuple(int(n) for n in chunks)


def pretty_size(size_in_bytes: int) -> str:
    """``1048576`` -> ``'1.0M'`` (0.16's format)."""
    if size_in_bytes == 0:
        return "0B"
    for suffix, limit in reversed(SIZE_SUFFIXES.items()):
        if size_in_bytes >= limit:
            return f"{round(size_in_bytes / limit, 2)}{suffix}"
    return f"{size_in_bytes}B"


def double_pretty_size(size_in_bytes: int) -> str:
    """``1048576`` -> ``'1.0M (1048576B)'``."""
    return f"{pretty_size(size_in_bytes)} ({size_in_bytes}B)"


def size_of_text(readable: str, error: type[Exception] = ArgumentError) -> int:
    """``'1.5M'`` -> ``1572864``: a number (float allowed) with a B/K/M/G/T suffix."""
    suffix = readable[-1:]
    if suffix not in SIZE_SUFFIXES:
        raise error(
            f"{readable!r} has no valid size suffix; use one of: {', '.join(SIZE_SUFFIXES)}"
        )
    try:
        number = float(readable[:-1])
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise error(f"{readable!r} is not a size like '64K' or '1.5M'")
    return int(number * SIZE_SUFFIXES[suffix])


def parse_size(value: Any, name: str) -> int:
    """A byte count: a positive int, a bare integer string, a size like ``'4M'``, or ``'max'``
    (the most a Blosc chunk holds)."""
    if isinstance(value, str):
        if value == "max":
            return MAX_BUFFERSIZE
        value = int(value) if _BARE_INT.match(value) else size_of_text(value)
    if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
        raise ArgumentError(f"{name} must be a positive number of bytes, got {value!r}")
    return int(value)


def rows_of(nbytes: Any, dtype: np.dtype, shape: tuple[int, ...]) -> int:
    """Whole rows of an array of ``dtype`` and ``shape`` in about ``nbytes`` (a size), at
    least one."""
    row = dtype.itemsize * math.prod(shape[1:])
    return max(1, parse_size(nbytes, "chunk_size") // max(row, 1))


def chunk_rows(chunks: tuple[int, ...], shape: tuple[int, ...], fmt: str,
               name: str = "chunks") -> int:  # fmt: skip
    """The rows one chunk (``name``: or block) holds in a format that cuts arrays along their
    first axis only."""
    if len(chunks) == 1 or chunks[1:] == tuple(shape[1:]):
        return chunks[0]
    whole = ", ".join(str(n) for n in shape[1:])
    raise ArgumentError(
        f"format {fmt!r} cuts arrays along their first axis only: {name} must be rows or"
        f" (rows, {whole}), got {chunks}"
    )


def chunk_nbytes(chunks: tuple[int, ...], dtype: np.dtype, shape: tuple[int, ...],
                 fmt: str, name: str = "chunks") -> int:  # fmt: skip
    """The bytes one chunk (``name``: or block) of ``chunks`` rows holds in such a format."""
    row = dtype.itemsize * math.prod(shape[1:])
    return chunk_rows(chunks, shape, fmt, name) * max(row, 1)


def shuffle_only(filters: tuple[int, ...], fmt: str) -> int:
    """The Blosc1 shuffle code (0 none, 1 byte, 2 bit) of filters that are at most one
    shuffle; others need Blosc2 chunks."""
    real = [f for f in filters if f]
    if len(real) <= 1 and set(real) <= {1, 2}:
        return real[0] if real else 0
    raise ArgumentError(
        f"format {fmt!r} writes Blosc1 chunks, whose only filters are shuffle or bitshuffle;"
        f" got filters {list(filters)}"
    )


__all__ = [
    "COMMON_OPTIONS", "FILTER_IDS", "NAMED_VALUES", "RAW_TYPESIZE", "SIZE_SUFFIXES",
    "CompressionParams", "canonical", "check_options", "chunk_nbytes", "chunk_rows",
    "double_pretty_size", "parse_chunks", "parse_filters", "parse_size", "pretty_size",
    "rows_of", "shuffle_only", "size_of_text",
]  # fmt: skip
