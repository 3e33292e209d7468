"""Reading python-blosc2 stores: :class:`StoreReader` (the store's keys, where each array
lies and the groups' attributes), :func:`info` and :func:`verify`.

A key's array is a member (``/g/x`` is ``g/x.b2nd``; ``.b2f`` holds an SChunk, ``.b2b`` a
BatchArray) of the zip archive (read where it lies: :class:`~.archive.MemberSource`) or of
the directory, or a frame embedded in ``embed.b2e`` (:mod:`.embed`); an EmbedStore (``.b2e``)
has only embedded ones.  A TreeStore keeps a group's attributes in the vlmetalayers of an
SChunk under ``<group>/__vlmeta__``."""

from __future__ import annotations

import os
import posixpath
from typing import Any

from ...errors import BloscpackError, FormatError, NotAContainer, UnmodelledFeature
from ...io.paths import PathLike
from ...io.sources import ByteSource, Directory, as_directory, open_member
from ..b2nd import FORMAT as B2ND
from ..schunk.reader import unopened_report
from ..schunk.reader import verify as frame_verify
from .archive import MemberSource, check_name, crc_of, is_zip, read_members
from .embed import KINDS, EmbeddedFrames, read_attrs

#: The member python-blosc2 keeps its embed store in.
EMBED_MEMBER = "embed.b2e"
#: The suffixes of the members that hold a key's object: an NDArray, an SChunk, a BatchArray.
MEMBER_SUFFIXES = (".b2nd", ".b2f", ".b2b")
#: The last part of the keys of a TreeStore group's attributes.
ATTRS_KEY = "__vlmeta__"
#: The last part of the key of the schema of an object kept as a group of members (a CTable).
OBJECT_META = "_meta"
#: The names python-blosc2 gives the kinds of such objects.
OBJECT_NAMES = {"ctable": "CTable"}


def key_of(member: str) -> str:
    """The key of the member ``member`` (``g/x.b2nd`` -> ``/g/x``)."""
    return "/" + posixpath.splitext(member)[0]


def normal_key(key: Any) -> str:
    """``key`` as stored (``/`` first); ``KeyError`` for one that is not a text key."""
    if not isinstance(key, str):
        raise KeyError(key)
    return key if key.startswith("/") else "/" + key


class StoreReader:
    """A store open for reading: ``kind`` (``EmbedStore``, ``DictStore`` or ``TreeStore``),
    ``layout`` (``zip``, ``directory`` or ``embed``), :meth:`keys`, :meth:`member` (what a
    reader of the key's array opens), :meth:`attrs`; ``source`` a path (a ``.b2z`` or ``.b2e``
    file, a ``.b2d`` directory), a :class:`~bloscpack.io.ByteSource` (a file's bytes) or a
    :class:`~bloscpack.io.Directory` (a directory at a URL), which the reader then owns."""

    format = "b2store"

    def __init__(self, source: PathLike | ByteSource | Directory) -> None:
        self._source: ByteSource | None = None
        self._directory: Directory | None = None
        self.members: dict[str, Any] = {}  # member name -> zip Member, or its path
        self.embed_member: Any = None  # the zip Member of embed.b2e
        self.ignored: list[str] = []
        if isinstance(source, Directory) or (not isinstance(source, ByteSource)
                                             and os.path.isdir(source)):  # fmt: skip
            self._directory = as_directory(source)
            self.name = self._directory.name
            self.layout = "directory"
            embed = self._open_directory()
        else:
            self._source = source if isinstance(source, ByteSource) else ByteSource(source)
            self.name = self._source.name
            try:
                embed = self._open_file()
            except BaseException:
                self._source.close()
                raise
        try:
            self.embedded = EmbeddedFrames(embed)
        except BaseException:
            self._close_source()
            raise
        self.kind = KINDS[self.embedded.kind]
        try:
            self._keys, self._attrs = self._index()
        except BaseException:
            self.close()
            raise

    def _files(self, folder: str = "") -> list[str]:
        """The files of the store's directory under ``folder``, sorted (``/``-separated)."""
        assert self._directory is not None
        directory = self._directory
        if not directory.remote:
            root = os.path.join(directory.path, *folder.split("/")) if folder else directory.path
            found = []
            for top, dirs, files in os.walk(root):
                dirs.sort()
                relative = os.path.relpath(top, directory.path)
                prefix = "" if relative == "." else posixpath.join(*relative.split(os.sep)) + "/"
                found += [prefix + file for file in sorted(files)]
            return found
        found = []
        for name in sorted(directory.listdir(folder)):
            member = f"{folder}/{name}" if folder else name
            found += [member] if directory.is_file(member) else self._files(member)
        return found

    def _open_directory(self) -> ByteSource:
        assert self._directory is not None
        try:
            files = self._files()
        except OSError as exc:
            raise FormatError(f"{self.name}: its files cannot be listed ({exc})") from None
        for name in files:
            if name == EMBED_MEMBER:
                continue
            if name.endswith(MEMBER_SUFFIXES):
                self.members[name] = name
            else:
                self.ignored.append(name)
        if EMBED_MEMBER not in files:
            raise NotAContainer(f"{self.name}: a directory without {EMBED_MEMBER}, not a"
                                " python-blosc2 store")  # fmt: skip
        return self._file_source(EMBED_MEMBER)

    def _file_source(self, member: str) -> ByteSource:
        """A :class:`~bloscpack.io.ByteSource` of the file ``member`` of the directory (a
        local one: a regular file inside it)."""
        assert self._directory is not None
        directory = self._directory
        if directory.remote:
            return directory.source(member)
        path = directory.join(member)
        return ByteSource(path, fd=open_member(path, directory.path))

    def _open_file(self) -> ByteSource:
        source = self._source
        assert source is not None
        if not is_zip(bytes(source.read_upto(0, 4))):
            self.layout = "embed"
            return source
        self.layout = "zip"
        embed = None
        for member in read_members(source):
            if member.name == EMBED_MEMBER:
                embed = member
            elif member.name.endswith(MEMBER_SUFFIXES):
                self.members[member.name] = member
            else:
                self.ignored.append(member.name)
        if embed is None:
            raise NotAContainer(f"{self.name}: a zip archive without {EMBED_MEMBER}, not a"
                                " python-blosc2 store")  # fmt: skip
        self.embed_member = embed
        return self._window(embed)

    def _window(self, member: Any) -> MemberSource:
        assert self._source is not None
        return MemberSource(self._source, member.offset, member.size,
                            f"{self.name}/{member.name}")  # fmt: skip

    def _index(self) -> tuple[dict[str, tuple[str, str]], dict[str, dict[str, Any]]]:
        """Every key's place (``("member", name)``, ``("embedded", key)``, or for an object
        kept as a group of members, ``("object", kind)``) and the groups' attributes, by group
        path."""
        places: dict[str, tuple[str, str]] = {}
        for name in self.members:
            key = key_of(name)
            if key in places:
                raise FormatError(f"{self.name}: key {key!r} is held by two members"
                                  f" ({places[key][1]!r} and {name!r})")  # fmt: skip
            places[key] = ("member", name)
        for key in self.embedded.entries:
            check_name(key.lstrip("/"), f"{self.name}: embedded key")
            places.setdefault(key, ("embedded", key))  # a member wins, as in python-blosc2
        attrs: dict[str, dict[str, Any]] = {}
        for key in [k for k in places if posixpath.basename(k) == ATTRS_KEY]:
            group = posixpath.dirname(key)
            attrs[group] = read_attrs(self.member(key, places))
            del places[key]
        objects = dict(self.embedded.objects)
        for key in [k for k in places if posixpath.basename(k) == OBJECT_META]:
            kind = read_attrs(self.member(key, places)).get("kind")
            if kind is not None:
                objects.setdefault(posixpath.dirname(key), str(kind))
        for root, kind in objects.items():
            for key in [k for k in places if k.startswith(root.rstrip("/") + "/")]:
                del places[key]
            places[root] = ("object", kind)
        return dict(sorted(places.items())), attrs

    def keys(self) -> list[str]:
        """The keys of the arrays, sorted."""
        return list(self._keys)

    def place(self, key: str) -> tuple[str, str]:
        """``("member", member name)``, ``("embedded", key)`` or ``("object", kind)`` (refused):
        where ``key``'s array is."""
        return self._keys[normal_key(key)]

    def member(self, key: str, places: dict[str, tuple[str, str]] | None = None) -> Any:
        """What the array of ``key`` is read from: a :class:`~bloscpack.io.ByteSource` of the
        member (closing it leaves the store open) or the embedded frame's bytes."""
        kind, name = (places or self._keys)[normal_key(key)]
        if kind == "object":
            raise UnmodelledFeature(
                f"{self.name}: key {key!r} is a python-blosc2 {OBJECT_NAMES.get(name, name)} (a"
                " group of members: its columns, a mask of valid rows and its schema), which"
                " this version does not read; open it with python-blosc2"
            )
        if kind == "embedded":
            return self.embedded.frame_bytes(name)
        if self._directory is not None:
            return self._file_source(name)
        return self._window(self.members[name])

    def attrs(self, group: str = "/") -> dict[str, Any]:
        """The attributes of ``group`` (``/``: the store's), ``{}`` where it has none."""
        return dict(self._attrs.get(normal_key(group).rstrip("/") or "/", {}))

    def groups(self) -> list[str]:
        """The groups that have attributes."""
        return sorted(self._attrs)

    def _close_source(self) -> None:
        if self._source is not None:
            self._source.close()
        if self._directory is not None:
            self._directory.close()

    def close(self) -> None:
        self.embedded.close()
        self._close_source()

    def __enter__(self) -> StoreReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_reader(source: PathLike | ByteSource | Directory) -> StoreReader:
    """The store at ``source`` (see :class:`StoreReader`)."""
    return StoreReader(source)


def _describe(store: StoreReader, key: str) -> dict[str, Any]:
    """What ``info`` says of ``key``: where it lies and, for an NDArray, its array."""
    kind, name = store.place(key)
    entry: dict[str, Any] = {"key": key}
    if kind == "object":
        return {**entry, "object": name}
    if kind == "member":
        member = store.members[name]
        entry["member"] = name
        if store.layout == "zip":
            entry.update(offset=member.offset, size=member.size)
    else:
        entry["embedded"] = True
    try:
        data = store.member(key)
        try:
            if _is_b2nd(data):
                from ..b2nd import B2ndArray

                with B2ndArray(data) as array:
                    entry.update(shape=list(array.shape), dtype=str(array.dtype),
                                 chunks=list(array.chunks), blocks=list(array.blocks),
                                 cparams=array.frame.cparams.to_dict())  # fmt: skip
            else:
                entry["object"] = "an SChunk or another python-blosc2 object"
        finally:
            _release(data)
    except BloscpackError as exc:
        entry["error"] = str(exc)
    return entry


def _release(data: Any) -> None:
    if isinstance(data, ByteSource):
        data.close()


def _is_b2nd(data: bytes | ByteSource) -> bool:
    """Whether the member or embedded frame ``data`` is an NDArray."""
    source = ByteSource(data) if isinstance(data, bytes) else data
    return B2ND.sniff_source(source, bytes(source.read_upto(0, 32)))


def info(source: PathLike | ByteSource | Directory) -> dict[str, Any]:
    """JSON-able description: the kind of store, its layout, every key (where it lies, its
    array's shape, dtype, chunks, blocks and compression parameters), the groups' attributes
    and the members not read; a zip's members are checksummed (CRC-32)."""
    with StoreReader(source) as store:
        keys = store.keys()
        return {
            "store": store.kind, "layout": store.layout, "narrays": len(keys),
            "arrays": [_describe(store, key) for key in keys],
            "attrs": {group: store.attrs(group) for group in store.groups()},
            "ignored": store.ignored,
            **({"checksum": "crc32"} if store.layout == "zip" else {}),
        }  # fmt: skip


def _check_member(store: StoreReader, key: str) -> dict[str, Any]:
    """The verify report of ``key``'s array (b2nd, or a frame)."""
    data = store.member(key)
    try:
        return B2ND.verify(data) if _is_b2nd(data) else frame_verify(data)
    finally:
        _release(data)


def verify(source: PathLike | ByteSource | Directory) -> dict[str, Any]:
    """Check the archive's records, each member's CRC-32 (a zip) and every chunk of every
    array: ``{"ok", "nchunks", "bad_chunks", "problems", "verifiable", "arrays"}``, each bad
    chunk and problem naming its key."""
    try:
        store = StoreReader(source)
    except (BloscpackError, OSError) as exc:
        return unopened_report("b2store", exc)
    with store:
        problems: list[str] = []
        bad: list[dict[str, Any]] = []
        arrays = []
        if store.layout == "zip":
            assert store._source is not None
            for member in [*store.members.values(), store.embed_member]:
                if crc_of(store._source, member) != member.crc:
                    problems.append(f"member {member.name!r}: its bytes do not match their"
                                    " CRC-32")  # fmt: skip
        embed = store.embedded.verify()
        nchunks = int(embed["nchunks"])
        bad += [{**b, "error": f"{EMBED_MEMBER}: {b['error']}"} for b in embed["bad_chunks"]]
        problems += [f"{EMBED_MEMBER}: {p}" for p in embed["problems"]]
        keys = store.keys()
        for key in keys:
            try:
                report = _check_member(store, key)
            except (BloscpackError, OSError) as exc:
                report = unopened_report("", exc)
            nchunks += int(report.get("nchunks") or 0)
            bad += [{**b, "error": f"{key}: {b['error']}"} for b in report["bad_chunks"]]
            problems += [f"{key}: {p}" for p in report["problems"]]
            arrays.append({"key": key, "ok": bool(report["ok"]),
                           "nchunks": report.get("nchunks")})  # fmt: skip
        notes = [f"{name}: not a member python-blosc2 reads (ignored)" for name in store.ignored]
        ok = not problems and not bad and all(a["ok"] for a in arrays)
        return {"ok": ok, "nchunks": nchunks, "bad_chunks": bad, "problems": problems,
                "verifiable": store.layout == "zip", "notes": notes,
                "arrays": arrays}  # fmt: skip
