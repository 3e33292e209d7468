"""The codecs of ``to_references(..., codec="bloscpack")`` (the optional extra ``virtual``),
for layouts the stock zarr codecs cannot express: :class:`Pad` pads a decoded chunk shorter
than a whole chunk (a short last chunk) with zeros, so that it is referenced by byte range
instead of inline; :class:`Blocks` puts the blocks of a decoded b2nd chunk, stored one after
another and padded to whole blocks, into the C order of the chunk.

numcodecs knows them as ``bloscpack_pad`` and ``bloscpack_blocks``, zarr format 3 as
``numcodecs.bloscpack_pad`` and ``numcodecs.bloscpack_blocks``, by the package's entry points
or by :func:`register_codecs` (which importing this module calls)."""

from __future__ import annotations

from typing import Any

import numcodecs
import numpy as np
import zarr.registry
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ndarray_copy
from zarr.codecs.numcodecs import _NumcodecsBytesBytesCodec


class Pad(Codec):  # type: ignore[misc]
    """Zero-padding of decoded bytes to ``nbytes`` (a whole chunk); encoding keeps the bytes."""

    codec_id = "bloscpack_pad"

    def __init__(self, nbytes: int) -> None:
        self.nbytes = int(nbytes)

    def encode(self, buf: Any) -> Any:
        """``buf`` as it is (a chunk zarr writes is whole)."""
        return ensure_contiguous_ndarray(buf).view(np.uint8).reshape(-1).copy()

    def decode(self, buf: Any, out: Any = None) -> Any:
        """``buf`` followed by zeros up to ``nbytes``."""
        data = ensure_contiguous_ndarray(buf).view(np.uint8).reshape(-1)
        if data.size > self.nbytes:
            raise ValueError(f"bloscpack_pad: {data.size} bytes decoded, more than the"
                             f" {self.nbytes} of a chunk")  # fmt: skip
        padded = np.zeros(self.nbytes, np.uint8)
        padded[: data.size] = data
        return ndarray_copy(padded, out)

    def __repr__(self) -> str:
        return f"Pad(nbytes={self.nbytes})"


class Blocks(Codec):  # type: ignore[misc]
    """The bytes of a b2nd chunk of shape ``chunks`` (``itemsize`` bytes an item), stored as
    blocks of shape ``blocks`` in C order over the block grid (the chunk padded to whole
    blocks), as the chunk in C order (decoding), and back (encoding)."""

    codec_id = "bloscpack_blocks"

    def __init__(self, chunks: list[int], blocks: list[int], itemsize: int) -> None:
        self.chunks, self.blocks = [int(n) for n in chunks], [int(n) for n in blocks]
        self.itemsize = int(itemsize)
        bgrid = [-(-c // b) for c, b in zip(self.chunks, self.blocks, strict=True)]
        #: the stored layout (blocks over the block grid) and its axes interleaved
        self._stored = (*bgrid, *self.blocks, self.itemsize)
        ndim = len(self.chunks)
        self._axes = (*(k for axis in range(ndim) for k in (axis, ndim + axis)), 2 * ndim)
        self._ext = (*(g * b for g, b in zip(bgrid, self.blocks, strict=True)), self.itemsize)

    def decode(self, buf: Any, out: Any = None) -> Any:
        """The stored blocks ``buf`` as the chunk's items in C order."""
        data = ensure_contiguous_ndarray(buf).view(np.uint8).reshape(-1)
        if data.size != np.prod(self._stored):
            raise ValueError(f"bloscpack_blocks: {data.size} bytes decoded, the blocks hold"
                             f" {int(np.prod(self._stored))}")  # fmt: skip
        ext = data.reshape(self._stored).transpose(self._axes).reshape(self._ext)
        chunk = ext[tuple(slice(0, n) for n in self.chunks)]
        return ndarray_copy(np.ascontiguousarray(chunk).reshape(-1), out)

    def encode(self, buf: Any) -> Any:
        """The chunk ``buf`` (items in C order) as blocks, padded with zeros."""
        data = ensure_contiguous_ndarray(buf).view(np.uint8).reshape(*self.chunks, self.itemsize)
        ext = np.zeros(self._ext, np.uint8)
        ext[tuple(slice(0, n) for n in self.chunks)] = data
        ndim = len(self.chunks)
        split = ext.reshape(*(n for g, b in zip(self._stored[:ndim], self.blocks, strict=True)
                              for n in (g, b)), self.itemsize)  # fmt: skip
        back = (*range(0, 2 * ndim, 2), *range(1, 2 * ndim, 2), 2 * ndim)
        return np.ascontiguousarray(split.transpose(back)).reshape(-1)

    def __repr__(self) -> str:
        return f"Blocks(chunks={self.chunks}, blocks={self.blocks}, itemsize={self.itemsize})"


class ZarrPad(_NumcodecsBytesBytesCodec, codec_name="bloscpack_pad"):  # type: ignore[misc]
    """:class:`Pad` as a zarr format 3 codec (``numcodecs.bloscpack_pad``)."""


class ZarrBlocks(_NumcodecsBytesBytesCodec, codec_name="bloscpack_blocks"):  # type: ignore[misc]
    """:class:`Blocks` as a zarr format 3 codec (``numcodecs.bloscpack_blocks``)."""


def register_codecs() -> None:
    """Make :class:`Pad` and :class:`Blocks` known to numcodecs and to zarr format 3 (where no
    entry point did)."""
    for codec, wrapped in ((Pad, ZarrPad), (Blocks, ZarrBlocks)):
        numcodecs.register_codec(codec)
        try:
            zarr.registry.get_codec_class(f"numcodecs.{codec.codec_id}")
        except KeyError:
            zarr.registry.register_codec(f"numcodecs.{codec.codec_id}", wrapped)


register_codecs()
