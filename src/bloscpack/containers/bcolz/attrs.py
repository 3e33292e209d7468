"""The user attributes of a carray, ctable or column directory (``__attrs__``): JSON values only,
each change a rewrite of the whole file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from ...errors import AttributeValueError, FormatError, UnsupportedError
from ...io.paths import PathLike
from ...io.sources import Directory
from ...io.staging import atomic_write
from .layout import ATTRS_FILE, _dumps, _read_meta_json, member_reader

_MAX_JSON_DEPTH = 200


def _check_json_value(value: Any, where: str, depth: int = 0) -> None:
    """Refuse anything JSON cannot represent (bcolz would empty ``__attrs__`` on it)."""
    if depth > _MAX_JSON_DEPTH:
        raise AttributeValueError(f"attribute {where} is nested deeper than {_MAX_JSON_DEPTH}")
    if value is None or isinstance(value, (bool, int, float, str)):
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_json_value(item, f"{where}[{i}]", depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise AttributeValueError(
                    f"attribute {where} has the key {key!r} ({type(key).__name__}):"
                    " JSON keys are strings"
                )
            _check_json_value(item, f"{where}[{key!r}]", depth + 1)
        return
    raise AttributeValueError(
        f"attribute {where} is a {type(value).__module__}.{type(value).__qualname__},"
        " which JSON cannot represent (use int, float, str, bool, None, lists and dicts)"
    )


class BcolzAttrs(MutableMapping[str, Any]):
    """The user attributes (``__attrs__``) of a carray or ctable directory, as a mapping.

    Every change rewrites the file atomically; values JSON cannot represent raise
    :class:`~bloscpack.errors.AttributeValueError` before anything is written.
    """

    def __init__(self, rootdir: PathLike | Directory) -> None:
        self._remote = isinstance(rootdir, Directory) and rootdir.remote
        if isinstance(rootdir, Directory):
            self.path = rootdir.join(ATTRS_FILE)
            found = rootdir.is_file(ATTRS_FILE)
            read = member_reader(rootdir, ATTRS_FILE) if self._remote else None
        else:
            self.path = os.path.join(os.fspath(rootdir), ATTRS_FILE)
            found, read = os.path.exists(self.path), None
        if found:
            data = _read_meta_json(self.path, "attributes", read)
            if not isinstance(data, dict):
                raise FormatError(f"{self.path}: attributes must be a JSON object")
            self._data: dict[str, Any] = data
        else:
            self._data = {}

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __setitem__(self, key: str, value: Any) -> None:
        self.update({key: value})

    def __delitem__(self, key: str) -> None:
        data = dict(self._data)
        del data[key]
        self._store(data)

    def update(self, other: Any = (), /, **kwargs: Any) -> None:
        """Set several attributes with one rewrite of the file."""
        data = dict(self._data)
        data.update(other, **kwargs)
        self._store(data)

    def clear(self) -> None:
        """Remove every attribute with one rewrite of the file."""
        self._store({})

    def to_dict(self) -> dict[str, Any]:
        """A copy of all attributes."""
        return dict(self._data)

    def _store(self, data: dict[str, Any]) -> None:
        if self._remote:
            raise UnsupportedError(f"{self.path}: attributes at a URL are read-only")
        _check_json_value(data, "set", 0)
        blob = _dumps(data)
        with atomic_write(self.path) as fh:
            fh.write(blob)
        self._data = json.loads(blob)

    def __repr__(self) -> str:
        return f"BcolzAttrs({self.path!r}, {self._data!r})"


def _attrs_blob(attrs: Mapping[str, Any] | None) -> bytes:
    data = dict(attrs or {})
    _check_json_value(data, "set", 0)
    return _dumps(data)
