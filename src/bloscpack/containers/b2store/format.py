"""python-blosc2 stores as the registry lists them: :data:`FORMAT`.  Its reader and writer are
imported when first used (recognising another format's file needs neither)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import ArgumentError, BloscpackError, UnsupportedError
from ...io.paths import PathLike
from ...io.sources import ByteSource, Directory
from ..base import ContainerFormat, ContainerReader, GroupReader
from ..listing import listed
from ..schunk.format import is_frame
from .archive import is_zip

#: The members :meth:`B2StoreFormat.sniff_dir` reads.
EMBED = "embed.b2e"


@listed("b2store")
class B2StoreFormat(ContainerFormat):
    """python-blosc2's DictStore and TreeStore (a zip archive or a directory of members and an
    ``embed.b2e``) and EmbedStore (one frame of embedded arrays): many arrays under keys."""

    description = "python-blosc2 store (DictStore, TreeStore, EmbedStore)"
    dir_members = (EMBED,)
    published_last = (EMBED,)  # a directory store is readable once its embed.b2e is there

    def sniff_source(self, source: ByteSource, head: bytes, *, whole: bool = False) -> bool:
        """A zip archive (unless it is whole and lacks ``embed.b2e``), or a frame with a
        store's metalayer."""
        if is_zip(head):
            from .archive import read_members

            try:
                return any(m.name == EMBED for m in read_members(source))
            except BloscpackError:  # damaged: opening it says how
                return True
        if not is_frame(head):
            return False
        from .embed import is_embed_store

        return is_embed_store(source)

    def sniff_dir(self, path: PathLike | Directory) -> bool:
        """A directory holding ``embed.b2e``, a frame with a store's metalayer."""
        from .embed import is_embed_store

        if isinstance(path, Directory):
            if not path.is_file(EMBED):
                return False
            with path.source(EMBED) as source:
                return is_embed_store(source)
        embed = os.path.join(path, EMBED)
        if not os.path.isfile(embed):
            return False
        with ByteSource(embed) as source:
            return is_embed_store(source)

    def refused(self, dtype: np.dtype, shape: tuple[int, ...]) -> str | None:
        return (
            "a python-blosc2 store holds arrays by key, not one array: save a dict of them"
            " ({'x': a, 'g/y': b})"
        )

    def _unwritable(self) -> UnsupportedError:
        return UnsupportedError(f"format {self.name!r} holds arrays by key: it is written by"
                                " saving a dict of arrays (bloscpack.save)")  # fmt: skip

    def open_group(self, source: Any) -> GroupReader:
        from .reader import open_reader

        return open_reader(source)

    def open_reader(self, source: Any, *, verify: bool = True) -> ContainerReader:
        name = source.name if isinstance(source, ByteSource) else os.fspath(source)
        raise ArgumentError(
            f"{name}: a python-blosc2 store holds many arrays: bloscpack.open gives a mapping"
            " of its keys to arrays, bloscpack.load a dict of them"
        )

    def info(self, source: Any) -> dict[str, Any]:
        from .reader import info

        return info(source)

    def verify(self, source: Any) -> dict[str, Any]:
        from .reader import verify

        return verify(source)

    def save_group(self, arrays: Mapping[str, np.ndarray], path: str, build: str,
                   **options: Any) -> None:  # fmt: skip
        from .writer import save_group

        save_group(arrays, path, build, **options)


FORMAT = B2StoreFormat()
