"""Compression parameters of a frame (:class:`CParams`, written to its header) and what is built
with them: compressed chunks and vlmetalayer values, and the bytes of a new, empty frame."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ... import engine
from ...blosc.header import CODEC_NAMES, MAX_BUFFERSIZE
from ...errors import ArgumentError
from ..options import NAMED_VALUES, canonical
from .records import (
    HEADER_FIXED_LEN,
    MAX_VLMETALAYERS_WRITE,
    FrameHeader,
    build_fixed_header,
    filter_slots,
    general_flags,
    pack_metalayers,
    pack_trailer,
    put_field,
)

SPLITMODE_NAMES = {1: "always", 2: "never", 3: "auto", 4: "forward_compat"}
SPLITMODE_CODES = {name: code for code, name in SPLITMODE_NAMES.items()}


@dataclass(frozen=True)
class CParams:
    """Compression parameters of a frame (written to its header, used by ``append_data``)."""

    typesize: int = 1
    codec: int = 5
    clevel: int = 5
    filters: tuple[int, ...] = (0, 0, 0, 0, 0, 1)
    filters_meta: tuple[int, ...] = (0, 0, 0, 0, 0, 0)
    codec_meta: int = 0
    splitmode: int = 3
    blocksize: int = 0
    use_dict: bool = False

    @classmethod
    def make(cls, **options: Any) -> CParams:
        """Build from keyword options (codec by name or code, splitmode by name or code)."""
        codec = canonical(options.pop("codec", 5), NAMED_VALUES["codec"])
        if isinstance(codec, str):
            codec = engine.codec_code(codec)
        splitmode = canonical(options.pop("splitmode", 3), NAMED_VALUES["splitmode"])
        if isinstance(splitmode, str):
            if splitmode not in SPLITMODE_CODES:
                raise ArgumentError(
                    f"splitmode must be one of {sorted(SPLITMODE_CODES)}, got {splitmode!r}"
                )
            splitmode = SPLITMODE_CODES[splitmode]
        params = cls(
            typesize=int(options.pop("typesize", 1)), codec=int(codec),
            clevel=int(options.pop("clevel", 5)),
            filters=tuple(filter_slots(options.pop("filters", (0, 0, 0, 0, 0, 1)))),
            filters_meta=tuple(filter_slots(options.pop("filters_meta", (0, 0, 0, 0, 0, 0)))),
            codec_meta=int(options.pop("codec_meta", 0)), splitmode=int(splitmode),
            blocksize=int(options.pop("blocksize", 0)),
            use_dict=bool(options.pop("use_dict", False)),
        )  # fmt: skip
        if options:
            raise ArgumentError(f"unknown frame options: {', '.join(sorted(options))}")
        if not 1 <= params.typesize <= 536866816:
            raise ArgumentError(f"typesize must be 1..536866816, got {params.typesize}")
        if not 0 <= params.clevel <= 9:
            raise ArgumentError(f"clevel must be 0..9, got {params.clevel}")
        if params.splitmode not in SPLITMODE_NAMES:
            raise ArgumentError(f"splitmode must be 1..4, got {params.splitmode}")
        if not 0 <= params.codec <= 255:
            raise ArgumentError(f"codec code must be 0..255, got {params.codec}")
        if params.blocksize < 0:
            raise ArgumentError(f"blocksize must be >= 0, got {params.blocksize}")
        return params

    @classmethod
    def from_header(cls, header: FrameHeader) -> CParams:
        return cls(
            typesize=header.typesize, codec=header.codec, clevel=header.clevel,
            filters=header.filters, filters_meta=header.filters_meta,
            codec_meta=header.codec_meta, splitmode=header.splitmode,
            blocksize=header.blocksize, use_dict=header.use_dict,
        )  # fmt: skip

    def compress(self, data: Any, nthreads: int | None = None) -> bytearray:
        """Compress ``data`` into one chunk with these parameters (``nthreads`` C threads,
        default :func:`~bloscpack.engine.get_nthreads`)."""
        return engine.compress_blosc2(data, **self._settings(), nthreads=nthreads)

    def compress_into(self, data: Any, dest: Any, nthreads: int | None = None) -> int:
        """:meth:`compress` into the start of ``dest``; returns the chunk's size
        (:func:`~bloscpack.engine.compress_blosc2_into`)."""
        return engine.compress_blosc2_into(data, dest, **self._settings(), nthreads=nthreads)

    def compress_view(self, data: Any) -> memoryview:
        """:meth:`compress` with one C thread, into this thread's compression buffer (valid
        until it compresses again: :func:`~bloscpack.engine.compress_blosc2_view`)."""
        return engine.compress_blosc2_view(data, **self._settings(), nthreads=1)

    def _settings(self) -> dict[str, Any]:
        return {
            "typesize": self.typesize, "clevel": self.clevel, "codec": self.codec,
            "filters": self.filters, "filters_meta": self.filters_meta,
            "codec_meta": self.codec_meta, "splitmode": SPLITMODE_NAMES[self.splitmode],
            "blocksize": self.blocksize, "use_dict": self.use_dict,
        }  # fmt: skip

    def stune(self) -> dict[str, Any]:
        """The parameters C-Blosc2's block-size tuner uses, as keyword arguments of
        :func:`~bloscpack.blosc.special.stune_blocksize` and ``special_chunk``."""
        return {
            "codec": CODEC_NAMES.get(self.codec, f"codec {self.codec}"), "clevel": self.clevel,
            "filters": self.filters, "splitmode": SPLITMODE_NAMES[self.splitmode],
        }  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {
            "typesize": self.typesize, "codec": self.codec, "clevel": self.clevel,
            "filters": list(self.filters), "filters_meta": list(self.filters_meta),
            "codec_meta": self.codec_meta, "splitmode": SPLITMODE_NAMES[self.splitmode],
            "blocksize": self.blocksize, "use_dict": self.use_dict,
        }  # fmt: skip


def compress_vlmeta(content: bytes) -> bytes:
    """A vlmetalayer value as python-blosc2 stores it: a Blosc2 chunk (zstd, clevel 5,
    typesize 1) of the msgpack bytes."""
    return bytes(engine.compress_blosc2(content, typesize=1, clevel=5, codec="zstd"))


def new_frame_image(
    frame_type: int, cparams: CParams, chunksize: int | None,
    metalayers: Sequence[tuple[str, bytes]], vlmeta_chunks: Sequence[tuple[str, bytes]],
    nthreads: int,
) -> bytes:  # fmt: skip
    """The bytes of an empty frame (header with metalayers, no index, trailer); vlmetalayer
    values are given as stored (compressed) chunks."""
    cs = -1 if chunksize is None else int(chunksize)
    if cs < -1 or cs > MAX_BUFFERSIZE:
        raise ArgumentError(
            f"chunksize must be 0 (variable) or 1..{MAX_BUFFERSIZE}, got {chunksize}"
        )
    if len(vlmeta_chunks) > MAX_VLMETALAYERS_WRITE:
        raise ArgumentError(f"at most {MAX_VLMETALAYERS_WRITE} vlmetalayers")
    raw = build_fixed_header(
        frame_type=frame_type, typesize=cparams.typesize, codec=cparams.codec,
        clevel=cparams.clevel, splitmode=cparams.splitmode, filters=cparams.filters,
        filters_meta=cparams.filters_meta, codec_meta=cparams.codec_meta,
        use_dict=cparams.use_dict, blocksize=cparams.blocksize, chunksize=cs, nthreads=nthreads,
    )  # fmt: skip
    layers = [(name, bytes(content)) for name, content in metalayers]
    names = [n for n, _ in layers]
    if len(set(names)) != len(names):
        raise ArgumentError("metalayer names must be unique")
    meta = pack_metalayers(layers)
    vl = [(name, bytes(chunk)) for name, chunk in vlmeta_chunks]
    trailer = pack_trailer(vl)
    raw[25] = general_flags(cs, False)
    raw[68] = 0xC3 if vl else 0xC2
    put_field(raw, "header_len", HEADER_FIXED_LEN + len(meta))
    put_field(raw, "frame_len", HEADER_FIXED_LEN + len(meta) + len(trailer))
    return bytes(raw) + meta + trailer
