"""bloscpack's zarr codecs (the optional extra ``virtual``), for what the stock zarr codecs
cannot express: :class:`Pad` pads a decoded chunk shorter than a whole chunk (a short last
chunk) with zeros, so that it is referenced by byte range instead of inline; :class:`Blocks`
puts the blocks of a decoded b2nd chunk, stored one after another and padded to whole blocks,
into the C order of the chunk (both for ``to_references(..., codec="bloscpack")``);
:class:`Blosc2` decodes a Blosc2 chunk with the C-Blosc2 library of python-blosc2 (the
compressor of zarr format 3 references to Blosc2 chunks).

numcodecs knows them as ``bloscpack_pad``, ``bloscpack_blocks`` and ``bloscpack_blosc2``, zarr
format 3 as ``numcodecs.bloscpack_pad``, ``numcodecs.bloscpack_blocks`` and
``numcodecs.bloscpack_blosc2``, by the package's entry points or by :func:`register_codecs`
(which importing this module calls)."""

from __future__ import annotations

from typing import Any

import blosc2
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


class Blosc2(Codec):  # type: ignore[misc]
    """A self-contained Blosc2 chunk (any codec, filters and block layout its header gives),
    decoded by C-Blosc2; encoding compresses with ``cname``, ``clevel``, ``shuffle``
    (``noshuffle``, ``shuffle``, ``bitshuffle``) and ``typesize``."""

    codec_id = "bloscpack_blosc2"
    FILTERS = {"noshuffle": blosc2.Filter.NOFILTER, "shuffle": blosc2.Filter.SHUFFLE,
               "bitshuffle": blosc2.Filter.BITSHUFFLE}  # fmt: skip

    def __init__(self, cname: str = "zstd", clevel: int = 5, shuffle: str = "shuffle",
                 typesize: int = 1) -> None:  # fmt: skip
        if shuffle not in self.FILTERS or cname.upper() not in blosc2.Codec.__members__:
            raise ValueError(f"bloscpack_blosc2: no codec {cname!r} or shuffle {shuffle!r}")
        self.cname, self.clevel, self.shuffle = cname, int(clevel), shuffle
        self.typesize = int(typesize)

    def encode(self, buf: Any) -> Any:
        """``buf`` compressed into one Blosc2 chunk."""
        data = ensure_contiguous_ndarray(buf).view(np.uint8).reshape(-1)
        return blosc2.compress2(data, codec=blosc2.Codec[self.cname.upper()], clevel=self.clevel,
                                filters=[self.FILTERS[self.shuffle]], filters_meta=[0],
                                typesize=self.typesize)  # fmt: skip

    def decode(self, buf: Any, out: Any = None) -> Any:
        """The bytes of the Blosc2 chunk ``buf``."""
        chunk = ensure_contiguous_ndarray(buf).view(np.uint8).reshape(-1)
        try:
            data = blosc2.decompress2(chunk)
        except (RuntimeError, ValueError) as exc:
            raise ValueError(f"bloscpack_blosc2: not a Blosc2 chunk ({exc})") from None
        return ndarray_copy(np.frombuffer(data, np.uint8), out)

    def __repr__(self) -> str:
        return (f"Blosc2(cname={self.cname!r}, clevel={self.clevel}, shuffle={self.shuffle!r},"
                f" typesize={self.typesize})")  # fmt: skip


class ZarrPad(_NumcodecsBytesBytesCodec, codec_name="bloscpack_pad"):  # type: ignore[misc]
    """:class:`Pad` as a zarr format 3 codec (``numcodecs.bloscpack_pad``)."""


class ZarrBlocks(_NumcodecsBytesBytesCodec, codec_name="bloscpack_blocks"):  # type: ignore[misc]
    """:class:`Blocks` as a zarr format 3 codec (``numcodecs.bloscpack_blocks``)."""


class ZarrBlosc2(_NumcodecsBytesBytesCodec, codec_name="bloscpack_blosc2"):  # type: ignore[misc]
    """:class:`Blosc2` as a zarr format 3 codec (``numcodecs.bloscpack_blosc2``)."""


def register_codecs() -> None:
    """Make :class:`Pad`, :class:`Blocks` and :class:`Blosc2` known to numcodecs and to zarr
    format 3 (where no entry point did)."""
    for codec, wrapped in ((Pad, ZarrPad), (Blocks, ZarrBlocks), (Blosc2, ZarrBlosc2)):
        numcodecs.register_codec(codec)
        try:
            zarr.registry.get_codec_class(f"numcodecs.{codec.codec_id}")
        except KeyError:
            zarr.registry.register_codec(f"numcodecs.{codec.codec_id}", wrapped)


register_codecs()
