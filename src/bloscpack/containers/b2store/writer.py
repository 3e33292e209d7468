"""Writing python-blosc2 stores: :func:`save_group` writes arrays by key as a TreeStore, a zip
archive (``.b2z``) of stored members or a directory (``.b2d``): each array a ``.b2nd`` member
(``/g/x`` is ``g/x.b2nd``), an empty ``embed.b2e``, and the attributes given as the root
group's (``__vlmeta__.b2f``), as python-blosc2 writes them; or as an EmbedStore (``.b2e``),
every array's frame embedded in one frame."""

from __future__ import annotations

import os
import posixpath
import shutil
import zipfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import ArgumentError, BloscpackError, UnsupportedError
from ...ndarray import check_writable
from ..b2nd import FORMAT as B2ND
from ..options import CompressionParams, check_options
from .archive import is_safe
from .embed import write_attrs, write_embed, write_embed_store
from .reader import ATTRS_KEY, EMBED_MEMBER

#: The suffix of a store written as a directory, and of an EmbedStore (any other: a zip).
DIRECTORY_SUFFIX = ".b2d"
EMBED_SUFFIX = ".b2e"


def store_keys(arrays: Mapping[Any, Any], path: str) -> dict[str, Any]:
    """``arrays`` by their keys as stored (``/`` first), each checked: text, a safe relative
    path once its ``/`` is dropped, not python-blosc2's attributes key, and no key both an
    array and a group of others."""
    keys: dict[str, Any] = {}
    for key, value in arrays.items():
        if not isinstance(key, str):
            raise ArgumentError(f"{path}: a store's keys are text, got {key!r}")
        stored = key if key.startswith("/") else "/" + key
        if not is_safe(stored[1:]):
            raise ArgumentError(f"{path}: key {key!r} is not a safe relative path (no '..', '.'"
                                " or empty parts, backslashes or control characters)")  # fmt: skip
        if ATTRS_KEY in stored.split("/"):
            raise ArgumentError(f"{path}: key {key!r}: {ATTRS_KEY} holds a group's attributes")
        if stored in keys:
            raise ArgumentError(f"{path}: key {key!r} is given twice")
        keys[stored] = value
    for key in keys:
        parent = posixpath.dirname(key)
        while parent != "/":
            if parent in keys:
                raise ArgumentError(f"{path}: {parent!r} is an array and a group holding"
                                    f" {key!r}; a key is one or the other")  # fmt: skip
            parent = posixpath.dirname(parent)
    return keys


#: The options that shape chunks, which a 0-d array has no axis for.
SHAPING = ("chunks", "blocks", "chunk_size")


def _member_options(array: np.ndarray, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` (as :func:`bloscpack.save` takes them) as a ``.b2nd`` member's writer's
    (a 0-d array: without those that shape chunks)."""
    if not array.ndim:
        options = {name: value for name, value in options.items() if name not in SHAPING}
    params, rest = CompressionParams.parse(dict(options))
    own = B2ND.own_options(params, rest, array.dtype, array.shape)
    check_options("b2store", own, B2ND.save_options or ())
    return own


def _write_members(arrays: dict[str, Any], root: str, options: dict[str, Any],
                   metadata: Mapping[str, Any] | None, path: str) -> None:  # fmt: skip
    """The files of the store ``path`` in the new directory ``root``."""
    os.mkdir(root)
    for key, value in arrays.items():
        array = np.asarray(value)
        member = os.path.join(root, *key[1:].split("/")) + ".b2nd"
        os.makedirs(os.path.dirname(member), exist_ok=True)
        try:
            check_writable(array.dtype, f"{path}: key {key!r}")
            reason = B2ND.refused(array.dtype, array.shape)
            if reason is not None:
                raise UnsupportedError(reason)
            B2ND.save(array, member, **_member_options(array, options))
        except BloscpackError as exc:
            if str(exc).startswith(f"{path}: "):
                raise
            raise type(exc)(f"{path}: key {key!r}: {exc}") from None
    if metadata:
        write_attrs(os.path.join(root, ATTRS_KEY + ".b2f"), dict(metadata))
    write_embed(os.path.join(root, EMBED_MEMBER), "b2tree")


def _zip_directory(root: str, path: str) -> None:
    """The files of ``root`` as the stored members of a new zip archive ``path``: largest
    first and ``embed.b2e`` last, as python-blosc2 orders them."""
    files = []
    for top, _, names in os.walk(root):
        files += [os.path.join(top, name) for name in names]
    embed = os.path.join(root, EMBED_MEMBER)
    files.remove(embed)
    files.sort(key=lambda f: (-os.path.getsize(f), f))
    with zipfile.ZipFile(path, "x", zipfile.ZIP_STORED) as archive:
        for file in [*files, embed]:
            archive.write(file, os.path.relpath(file, root).replace(os.sep, "/"))


def save_group(arrays: Mapping[Any, Any], path: str, build: str, *,
               metadata: Mapping[str, Any] | None = None, **options: Any) -> None:  # fmt: skip
    """The ``arrays`` (a mapping of keys to arrays) as a TreeStore built at ``build`` for the
    destination ``path``: a directory if ``path`` ends in ``.b2d``, an EmbedStore (every
    array embedded in one frame) if in ``.b2e``, else a zip archive; ``metadata``: the root
    group's attributes (not in an EmbedStore); ``options``: how every array is written (as
    :func:`bloscpack.save` takes them for ``.b2nd``)."""
    keys = store_keys(arrays, path)
    suffix = os.path.splitext(os.fspath(path).rstrip("/" + os.sep))[1].lower()
    if suffix == DIRECTORY_SUFFIX:
        _write_members(keys, build, options, metadata, path)
        return
    if suffix == EMBED_SUFFIX and metadata:
        raise ArgumentError(f"{path}: an EmbedStore keeps no attributes; drop metadata= or"
                            " name the output .b2z or .b2d")  # fmt: skip
    staging = build + ".members"
    try:
        _write_members(keys, staging, options, metadata, path)
        if suffix == EMBED_SUFFIX:
            frames = {key: os.path.join(staging, *key[1:].split("/")) + ".b2nd" for key in keys}
            write_embed_store(build, frames)
        else:
            _zip_directory(staging, build)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
