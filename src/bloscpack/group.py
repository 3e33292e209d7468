""":class:`Group`: a read-only mapping of the keys of a container of many arrays (a store) to
lazy arrays, as :func:`bloscpack.open` gives it, like h5py's ``File`` or zarr's ``Group``.

It is written against the format-neutral :class:`~bloscpack.containers.base.GroupReader`;
each array is opened when first asked for, by the function the caller gives (the lazy array
of :mod:`bloscpack.array`), and reads only what its selections touch."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Self

import numpy as np

from .containers.base import GroupReader


class Group(Mapping[str, Any]):
    """The arrays of a store by key (``/g/x``; ``g/x`` too): ``keys()``, ``group[key]`` (a
    lazy array), ``in``, ``len()``, iteration, ``attrs`` (the store's attributes) and
    :meth:`attrs_of` (a group's), :meth:`load` (every array, read), ``format``, ``path``,
    ``close()`` and use as a context manager (closing it closes the arrays it gave)."""

    def __init__(self, reader: GroupReader, open_array: Callable[[Any], Any]) -> None:
        self._reader = reader
        self._open_array = open_array
        self._opened: weakref.WeakSet[Any] = weakref.WeakSet()  # those still referenced
        self._lock = threading.Lock()
        self._keys = reader.keys()
        self.format = reader.format
        self.path = reader.name

    def _key(self, key: Any) -> str:
        if isinstance(key, str) and not key.startswith("/"):
            key = "/" + key
        if key not in self._keys:
            raise KeyError(key)
        return str(key)

    def __getitem__(self, key: Any) -> Any:
        key = self._key(key)
        member = self._reader.member(key)
        array = self._open_array(member)
        array.group = self  # the store it reads through lives as long as the array
        with self._lock:
            self._opened.add(array)
        return array

    def __contains__(self, key: Any) -> bool:
        try:
            self._key(key)
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def attrs(self) -> dict[str, Any]:
        """The store's own attributes (a TreeStore's root ``vlmeta``; ``{}`` if none)."""
        return self._reader.attrs("/")

    def attrs_of(self, group: str) -> dict[str, Any]:
        """The attributes of the group ``group`` (``/g``; ``{}`` if it has none)."""
        return self._reader.attrs(group)

    def load(self) -> dict[str, np.ndarray]:
        """Every array, read whole, by key."""
        arrays = {}
        for key in self._keys:
            with self._open_array(self._reader.member(key)) as array:
                arrays[key] = array[...]
        return arrays

    def close(self) -> None:
        """Close the arrays this group gave, then the store."""
        with self._lock:
            opened, self._opened = list(self._opened), weakref.WeakSet()
        for array in opened:
            array.close()
        self._reader.close()

    def __del__(self) -> None:
        # no array it gave is left (each keeps its group): the store's files can go
        try:  # noqa: SIM105 (contextlib may be gone at interpreter exit)
            self._reader.close()
        except Exception:  # noqa: S110
            pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Group {self.path!r} ({self.format}): {len(self)} arrays>"


__all__ = ["Group"]
