"""One set of option names for every writer: ``codec``, ``clevel``, ``filters`` and ``chunks``
mean the same in every format (``save``, ``convert``, ``compress_file``); each format's module
turns them into its own (``own_options``).  A format's own names (``chunk_size``, ``chunklen``,
``shuffle``, ...) keep working, but not together with the common name they stand for."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..blosc.header import FILTER_IDS
from ..errors import ArgumentError

#: The common options, what they mean, and the format's own names each one replaces.
COMMON_OPTIONS: dict[str, str] = {
    "codec": "the codec name (blosclz, lz4, lz4hc, zlib, zstd)",
    "clevel": "the compression level, 0-9",
    "filters": "the filters in order, by name or id ('shuffle', 'bitshuffle', 'delta',"
    " 'trunc_prec', 'bytedelta'); [] for none",
    "chunks": "the box one chunk holds: rows (an int) or a shape; formats that cut arrays"
    " along their first axis take (rows, *shape[1:])",
}


@dataclass(frozen=True)
class CompressionParams:
    """The common options given to a writer (None: the format's default), validated."""

    codec: str | None = None
    clevel: int | None = None
    filters: tuple[int, ...] | None = None
    chunks: tuple[int, ...] | None = None

    @classmethod
    def parse(cls, options: dict[str, Any]) -> tuple[CompressionParams, dict[str, Any]]:
        """The common options in ``options``, checked, and the other (format's own) ones."""
        rest = dict(options)
        params = cls(
            rest.pop("codec", None), rest.pop("clevel", None),
            parse_filters(rest.pop("filters", None)), parse_chunks(rest.pop("chunks", None)),
        )  # fmt: skip
        return params, rest

    def own(self, rest: dict[str, Any], **names: Any) -> dict[str, Any]:
        """``rest`` plus the common options, under the format's ``names`` for them
        (``filters="shuffle"``: give the filters as the format's ``shuffle``; the value may be
        a function of the common value).  A common option and the own name it stands for may
        not both be given."""
        own = dict(rest)
        for common in ("codec", "clevel", "filters", "chunks"):
            value = getattr(self, common)
            if value is None:
                continue
            name, convert = names.get(common, (common, None))
            if name != common and name in own:
                raise ArgumentError(f"give {common} or {name}, not both")
            own[name] = value if convert is None else convert(value)
        return own


def check_options(fmt: str, options: Iterable[str], known: Iterable[str]) -> None:
    """Refuse option names a writer of ``fmt`` does not know, listing those it does."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ArgumentError(
            f"unknown option(s) for format {fmt!r}: {', '.join(unknown)};"
            f" known: {', '.join(sorted(known))}"
        )


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
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool) and 0 <= item < 256:
            ids.append(int(item))
        else:
            raise ArgumentError(
                f"unknown filter {item!r}; known: {', '.join(FILTER_IDS)} (or ids 0-255)"
            )
    if len(ids) > 6:
        raise ArgumentError(f"at most 6 filters, got {len(ids)}")
    return tuple(ids)


def parse_chunks(value: Any) -> tuple[int, ...] | None:
    """``chunks``: rows (an int) or a shape, every size positive."""
    if value is None:
        return None
    items = (value,) if isinstance(value, (int, np.integer)) else value
    try:
        chunks = tuple(items)
    except TypeError:
        raise ArgumentError(f"chunks must be an int or a tuple of ints, got {value!r}") from None
    if not chunks or not all(
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n > 0 for n in chunks
    ):
        raise ArgumentError(f"chunks must be positive ints, got {value!r}")
    return tuple(int(n) for n in chunks)


def chunk_rows(chunks: tuple[int, ...], shape: tuple[int, ...], fmt: str) -> int:
    """The rows one chunk holds in a format that cuts arrays along their first axis only."""
    if len(chunks) == 1 or chunks[1:] == tuple(shape[1:]):
        return chunks[0]
    whole = ", ".join(str(n) for n in shape[1:])
    raise ArgumentError(
        f"format {fmt!r} cuts arrays along their first axis only: chunks must be rows or"
        f" (rows, {whole}), got {chunks}"
    )


def chunk_nbytes(chunks: tuple[int, ...], dtype: np.dtype, shape: tuple[int, ...],
                 fmt: str) -> int:  # fmt: skip
    """The bytes one chunk of ``chunks`` rows holds in such a format."""
    row = dtype.itemsize * math.prod(shape[1:])
    return chunk_rows(chunks, shape, fmt) * max(row, 1)


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
    "COMMON_OPTIONS", "FILTER_IDS", "CompressionParams", "check_options", "chunk_nbytes",
    "chunk_rows", "parse_chunks", "parse_filters", "shuffle_only",
]  # fmt: skip
