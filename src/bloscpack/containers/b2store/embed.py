"""python-blosc2's embed store: one contiguous frame (an SChunk of bytes, typesize 1) whose
data holds serialized frames one after another, and whose vlmetalayer ``estore_metadata``
maps each key to where its frame lies (``{"offset", "length"}`` in the uncompressed bytes) or
to a reference elsewhere (``{"urlbase", "path"}``: a C2Array, refused by name); a TreeStore's
``_object_registry`` lists the objects it keeps as groups of members (a CTable: columns, a
valid-rows mask and ``_meta``), refused by name too.  A metalayer
says whose it is: ``b2embed`` (an ``EmbedStore``, a ``.b2e`` file), ``b2dict`` or ``b2tree``
(the ``embed.b2e`` of a ``DictStore`` or ``TreeStore``).

:class:`EmbeddedFrames` reads one; :func:`write_embed` writes an empty one,
:func:`write_embed_store` one holding frames, and :func:`write_attrs` the frame of a TreeStore
group's attributes (an SChunk without chunks, the attributes in its vlmetalayers)."""

from __future__ import annotations

import os
from typing import Any

from ... import engine
from ...blosc.layout import validate_chunk
from ...errors import BloscpackError, FormatError, NotAContainer, UnmodelledFeature
from ...io.paths import PathLike
from ...io.sources import ByteSource
from ..schunk.contiguous import ContiguousFrame
from ..schunk.params import CParams
from ..schunk.reader import vlmeta_items
from ..schunk.records import (
    EDGE_READ,
    HEADER_FIXED_LEN,
    MAX_METALAYERS,
    FrameHeader,
    pack_value,
    parse_layers,
    sniff,
)
from ..schunk.writer import FrameWriter

#: The metalayer of each kind of store, and the python-blosc2 class that writes it.
KINDS = {"b2embed": "EmbedStore", "b2dict": "DictStore", "b2tree": "TreeStore"}
#: The vlmetalayer holding the key map.
MAP_LAYER = "estore_metadata"
#: The vlmetalayer listing a TreeStore's objects kept as groups of members (CTables).
OBJECTS_LAYER = "_object_registry"
#: The chunk size python-blosc2 gives an embed store's frame.
EMBED_CHUNKSIZE = 8192


def store_kind(frame: ContiguousFrame) -> str | None:
    """The metalayer (of :data:`KINDS`) that makes ``frame`` an embed store, or None."""
    names = {name for name, _ in frame.metalayers}
    return next((kind for kind in KINDS if kind in names), None)


def is_embed_store(source: ByteSource) -> bool:
    """Whether ``source`` holds a frame with a store's metalayer, reading only its header (a
    damaged header: False)."""
    try:
        head = source.read_upto(0, EDGE_READ)
        if not sniff(bytes(head[:10])):
            return False
        header = FrameHeader.parse(head)
        if header.header_len > len(head):
            head = source.read_upto(0, header.header_len)
        layers = parse_layers(head[: header.header_len], HEADER_FIXED_LEN, 0, MAX_METALAYERS,
                              "frame")  # fmt: skip
    except (BloscpackError, OSError):
        return False
    return any(name in KINDS for name, _, _ in layers)


class EmbeddedFrames:
    """An embed store open for reading (it owns ``source`` as its frame does): ``kind``
    (``b2embed``, ``b2dict`` or ``b2tree``), ``entries`` (key -> ``(offset, length)`` or a
    reference's description) and :meth:`frame_bytes`."""

    def __init__(self, source: ByteSource) -> None:
        self.name = source.name
        self.frame = ContiguousFrame(source)
        try:
            kind = store_kind(self.frame)
            if kind is None:
                raise NotAContainer(f"{self.name}: a Blosc2 frame without a store's metalayer"
                                    f" ({', '.join(KINDS)})")  # fmt: skip
            self.kind = kind
            self.entries = self._entries()
            self.objects = self._objects()
        except BaseException:
            self.frame.close()
            raise

    def _entries(self) -> dict[str, tuple[int, int] | str]:
        items = vlmeta_items(self.frame)
        if MAP_LAYER not in items:
            return {}
        content = items[MAP_LAYER][1]
        mapping = content.get("embed_map") if isinstance(content, dict) else None
        if not isinstance(mapping, dict):
            raise FormatError(f"{self.name}: vlmeta {MAP_LAYER!r} holds no key map")
        total = self.frame.header.nbytes
        entries: dict[str, tuple[int, int] | str] = {}
        for key, where in mapping.items():
            if not isinstance(key, str) or not isinstance(where, dict):
                raise FormatError(f"{self.name}: embedded key {key!r} has no location")
            if "urlbase" in where:
                entries[key] = f"a C2Array reference to {where.get('path')!r} at" \
                               f" {where.get('urlbase')!r}"  # fmt: skip
                continue
            offset, length = where.get("offset"), where.get("length")
            if not (isinstance(offset, int) and isinstance(length, int) and offset >= 0
                    and length > 0 and offset + length <= total):  # fmt: skip
                raise FormatError(
                    f"{self.name}: embedded key {key!r} at offset {offset!r} of length"
                    f" {length!r} lies outside the store's {total} bytes"
                )
            entries[key] = (offset, length)
        return entries

    def _objects(self) -> dict[str, str]:
        """The keys of the objects a TreeStore keeps as a group of members (a CTable), with
        their kind, as its vlmetalayer ``_object_registry`` lists them."""
        registry = vlmeta_items(self.frame).get(OBJECTS_LAYER, (None, None))[1]
        if not isinstance(registry, dict):
            return {}
        return {key: str(entry.get("kind") if isinstance(entry, dict) else entry)
                for key, entry in registry.items() if isinstance(key, str)}  # fmt: skip

    def frame_bytes(self, key: str) -> bytes:
        """The serialized frame embedded under ``key`` (its chunks decoded, one at a time)."""
        where = self.entries[key]
        if isinstance(where, str):
            raise UnmodelledFeature(f"{self.name}: key {key!r} is {where}, which this version"
                                    " does not fetch; open it with python-blosc2")  # fmt: skip
        offset, length = where
        chunksize = self.frame.header.chunksize
        if chunksize <= 0:
            raise FormatError(f"{self.name}: an embed store of chunks of varying size")
        pieces = []
        first, last = offset // chunksize, (offset + length - 1) // chunksize
        for index in range(first, last + 1):
            if index >= self.frame.nchunks:
                raise FormatError(f"{self.name}: key {key!r} needs chunk {index}, the store"
                                  f" has {self.frame.nchunks}")  # fmt: skip
            chunk = self.frame.read_chunk(index)
            header = validate_chunk(chunk)
            if header.nbytes > chunksize:
                raise FormatError(f"{self.name}: chunk {index} holds {header.nbytes} bytes, the"
                                  f" store's chunks {chunksize}")  # fmt: skip
            data = bytearray(header.nbytes)
            engine.decompress_into(chunk, data, validated=True)
            lo = offset - index * chunksize if index == first else 0
            hi = offset + length - index * chunksize
            pieces.append(bytes(data[lo:hi]))
        found = b"".join(pieces)
        if len(found) != length:
            raise FormatError(f"{self.name}: key {key!r} needs {length} bytes, its chunks hold"
                              f" {len(found)}")  # fmt: skip
        return found

    def verify(self) -> dict[str, Any]:
        """The frame's own check (every chunk decoded)."""
        return self.frame.verify()

    def close(self) -> None:
        self.frame.close()


def _params() -> CParams:
    return CParams.make(typesize=1, codec="zstd", clevel=5)


def write_embed(path: PathLike, kind: str) -> None:
    """An empty embed store of ``kind`` (a metalayer of :data:`KINDS`) at ``path``."""
    metalayers = [(kind, pack_value({"version": 1}))]
    vlmeta = [(MAP_LAYER, pack_value({"embed_map": {}, "current_offset": 0}))]
    with FrameWriter(path, _params(), chunksize=EMBED_CHUNKSIZE, metalayers=metalayers,
                     vlmeta=vlmeta):  # fmt: skip
        pass


def write_embed_store(path: PathLike, frames: dict[str, str]) -> None:
    """An EmbedStore at ``path`` holding, under each key of ``frames``, the serialized frame
    in the file it names (read a piece at a time)."""
    mapping: dict[str, dict[str, int]] = {}
    offset = 0
    for key, file in frames.items():
        length = os.path.getsize(file)
        mapping[key] = {"offset": offset, "length": length}
        offset += length
    metalayers = [("b2embed", pack_value({"version": 1}))]
    vlmeta = [(MAP_LAYER, pack_value({"embed_map": mapping, "current_offset": offset}))]
    pending = bytearray()
    with FrameWriter(path, _params(), chunksize=EMBED_CHUNKSIZE, metalayers=metalayers,
                     vlmeta=vlmeta) as writer:  # fmt: skip
        for file in frames.values():
            with open(file, "rb") as fh:
                while piece := fh.read(EMBED_CHUNKSIZE):
                    pending += piece
                    while len(pending) >= EMBED_CHUNKSIZE:
                        writer.append_data(bytes(pending[:EMBED_CHUNKSIZE]))
                        del pending[:EMBED_CHUNKSIZE]
        if pending:
            writer.append_data(bytes(pending))


def write_attrs(path: PathLike, attrs: dict[str, Any]) -> None:
    """The frame python-blosc2 keeps a TreeStore group's attributes in: no chunks, one
    vlmetalayer each."""
    vlmeta = [(name, pack_value(value)) for name, value in attrs.items()]
    with FrameWriter(path, _params(), vlmeta=vlmeta):
        pass


def read_attrs(data: ByteSource | bytes) -> dict[str, Any]:
    """The attributes the frame ``data`` keeps in its vlmetalayers."""
    frame = ContiguousFrame(data)
    try:
        return {name: value for name, (_, value) in vlmeta_items(frame).items()}
    finally:
        frame.close()
