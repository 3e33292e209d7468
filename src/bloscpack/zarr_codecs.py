"""The codecs of ``to_references(..., codec="bloscpack")`` (the optional extra ``virtual``):
:class:`Pad` pads a decoded chunk shorter than a whole chunk (a short last chunk) with zeros,
so that the chunk is referenced by byte range where stock codecs would need it inline.

numcodecs knows it as ``bloscpack_pad``, zarr format 3 as ``numcodecs.bloscpack_pad``, by the
package's entry points or by :func:`register_codecs` (which importing this module calls)."""

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


class ZarrPad(_NumcodecsBytesBytesCodec, codec_name="bloscpack_pad"):  # type: ignore[misc]
    """:class:`Pad` as a zarr format 3 codec (``numcodecs.bloscpack_pad``)."""


def register_codecs() -> None:
    """Make :class:`Pad` known to numcodecs and to zarr format 3 (where no entry point did)."""
    numcodecs.register_codec(Pad)
    try:
        zarr.registry.get_codec_class("numcodecs.bloscpack_pad")
    except KeyError:
        zarr.registry.register_codec("numcodecs.bloscpack_pad", ZarrPad)


register_codecs()
