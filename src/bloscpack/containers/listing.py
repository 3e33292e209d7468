"""The built-in formats as the registry lists them before any is imported: each one's name,
suffixes, aliases, capabilities ``writable`` and ``group``, the formats it ``refines``, and the
module whose ``FORMAT`` it is.

This table is the one place these facts are written: each built-in format's class takes them
from its entry (:meth:`Listed.describes`), and the registry answers names, suffixes and the
order of detection from it, so that ``blpk --version`` and ``--help`` import no format, and a
command imports only the formats it touches.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .base import ContainerFormat

_F = TypeVar("_F", bound=type)


class Listed:
    """A built-in format, listed: its identity here, anything else from its
    :class:`~bloscpack.containers.base.ContainerFormat`, imported when first asked for."""

    #: The attributes written here, which the format's class takes.
    IDENTITY = ("name", "suffixes", "aliases", "writable", "group", "refines")

    def __init__(self, module: str, name: str, suffixes: tuple[str, ...] = (),
                 aliases: tuple[str, ...] = (), *, writable: bool = True, group: bool = False,
                 refines: tuple[str, ...] = ()) -> None:  # fmt: skip
        self.module = module
        self.name = name
        self.suffixes = suffixes
        self.aliases = aliases
        self.writable = writable
        self.group = group
        self.refines = refines

    @property
    def extension(self) -> str:
        """The suffix new outputs get (``""``: none)."""
        return self.suffixes[0] if self.suffixes else ""

    def describes(self, cls: _F) -> _F:
        """Class decorator: the format class ``cls`` takes its identity from this entry."""
        for attr in self.IDENTITY:
            setattr(cls, attr, getattr(self, attr))
        return cls

    def load(self) -> ContainerFormat:
        """The format itself (its module imported now, once)."""
        found = self.__dict__.get("_format")
        if found is None:
            found = self.__dict__["_format"] = importlib.import_module(self.module).FORMAT
        return found  # type: ignore[no-any-return]

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self.load(), attr)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<format {self.name}>"


_PACKAGE = __name__.rpartition(".")[0]

#: The formats built in, in the order they are listed; a Blosc chunk (read, never written,
#: without magic bytes) last.
BUILTIN: tuple[Listed, ...] = (
    Listed(f"{_PACKAGE}.bloscpack.format", "blp", (".blp",), ("bloscpack",)),
    Listed(f"{_PACKAGE}.frame.format", "b2frame", (".b2frame",), ("frame",)),
    Listed(
        f"{_PACKAGE}.b2nd.format", "b2nd", (".b2nd",), ("ndarray",), refines=("b2frame", "sframe")
    ),  # fmt: skip
    # python-blosc2 names both kinds of frames .b2frame
    Listed(f"{_PACKAGE}.sframe.format", "sframe", (".b2sframe", ".b2frame"), ("sparse",)),
    Listed(f"{_PACKAGE}.bcolz.format", "bcolz", (".bcolz",)),
    # it writes groups of arrays, not an array
    Listed(
        f"{_PACKAGE}.b2store.format",
        "b2store",
        (".b2z", ".b2d", ".b2e"),
        ("treestore", "dictstore", "embedstore"),
        writable=False,
        group=True,
        refines=("b2frame",),
    ),  # fmt: skip
    Listed(f"{_PACKAGE}.chunk", "chunk", writable=False),
)


def listed(name: str) -> Callable[[_F], _F]:
    """Class decorator of the built-in format ``name``: :meth:`Listed.describes`."""
    return next(f for f in BUILTIN if f.name == name).describes


__all__ = ["BUILTIN", "Listed", "listed"]
