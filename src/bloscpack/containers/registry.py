"""The formats this library reads and writes: one ordered list of
:class:`~bloscpack.containers.base.ContainerFormat` objects (those built in, listed in
:mod:`~bloscpack.containers.listing` and imported when more than their names is asked, then
those other packages add through the entry-point group ``bloscpack.formats``), and the one rule
that picks the format of an output from ``format=`` and its name.

Every name here means the same thing everywhere (``save``, ``convert``, ``detect``, ``info``,
``blpk --format``): the name :func:`bloscpack.detect` gives a container of that format.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union, cast

from ..errors import (
    ArgumentError,
    BloscpackError,
    FormatError,
    NotAContainer,
    NotAppendable,
    RemoteError,
    UnsupportedError,
)
from ..io.paths import PathLike
from ..io.sources import ByteSource, Directory
from ..io.staging import StagedOutput
from ..url import is_url, local_path
from .listing import BUILTIN, Listed
from .options import CompressionParams, check_options

if TYPE_CHECKING:
    from ..remote.upload import StagedUpload
    from .base import ContainerFormat, ContainerReader, ContainerWriter, TableReader

#: A format: built in and listed (:class:`~bloscpack.containers.listing.Listed`, its module
#: imported when something beyond its names is asked), or added by another package.
Format = Union[Listed, "ContainerFormat"]  # noqa: UP007 - ContainerFormat is not imported

#: The entry-point group through which another package adds a format: each entry point
#: names a :class:`~bloscpack.containers.base.ContainerFormat` instance (its ``FORMAT``).
ENTRY_POINTS = "bloscpack.formats"

#: The formats built in that write arrays, by name.
FORMATS: dict[str, Listed] = {f.name: f for f in BUILTIN if f.writable}
#: The formats built in that never write an array, by name: a Blosc chunk (read only) and the
#: python-blosc2 stores (which write groups of arrays).
READ_ONLY: dict[str, Listed] = {f.name: f for f in BUILTIN if not f.writable}
#: The format an output gets when neither ``format=`` nor its name says one.
DEFAULT = FORMATS["blp"]
#: Extensions of other tools' formats: an output named so is refused, with how to write it.
FOREIGN = {
    ".npy": "numpy.save",
    ".npz": "numpy.savez",
    ".zarr": "zarr",
    ".h5": "h5py",
    ".hdf5": "h5py",
    ".nc": "xarray or netCDF4",
    ".parquet": "pandas or pyarrow",
    ".feather": "pandas or pyarrow",
}


def loaded(fmt: Format) -> ContainerFormat:
    """The format ``fmt`` itself (a listed one imported now)."""
    return fmt.load() if isinstance(fmt, Listed) else fmt


@functools.cache
def plugins() -> tuple[ContainerFormat, ...]:
    """The formats other packages add (entry-point group :data:`ENTRY_POINTS`), loaded once,
    when a name, a suffix or a container is none of the built-in formats'."""
    import importlib.metadata  # (slow to import: only when needed)

    found: list[ContainerFormat] = []
    for entry in importlib.metadata.entry_points(group=ENTRY_POINTS):
        from .base import ContainerFormat  # (numpy: only if another package adds a format)

        fmt = entry.load()
        if not isinstance(fmt, ContainerFormat):
            raise FormatError(
                f"entry point {entry.name!r} of {ENTRY_POINTS}: {entry.value} is not a"
                " ContainerFormat instance"
            )
        if fmt.name in {known.name for known in BUILTIN} | {known.name for known in found}:
            raise FormatError(f"entry point {entry.name!r} of {ENTRY_POINTS}: format"
                              f" {fmt.name!r} is known already")  # fmt: skip
        found.append(fmt)
    return tuple(found)


def _in_detection_order(formats: Sequence[Format]) -> tuple[Format, ...]:
    """``formats`` as detection tries them: each before the formats it refines (whose
    containers may also be its own), else in order."""
    ordered: list[Format] = []
    for fmt in formats:
        refined = [i for i, f in enumerate(ordered) if f.name in fmt.refines]
        ordered.insert(min(refined, default=len(ordered)), fmt)
    return tuple(ordered)


#: The built-in formats in the order detection tries them (a chunk, without magic bytes,
#: last): all before those of other packages, which are loaded only when none answers.
_DETECTED_FIRST = _in_detection_order(BUILTIN)


def _detected_last() -> tuple[Format, ...]:
    """The formats detection tries after :data:`_DETECTED_FIRST`: other packages' (loaded
    now)."""
    return _in_detection_order(plugins())


def _detection_order() -> Iterator[Format]:
    """Every format, in the order detection tries them; other packages' loaded only when
    the built-in ones before them did not answer."""
    yield from _DETECTED_FIRST
    yield from _detected_last()


def every_format() -> tuple[Format, ...]:
    """Every format, built-in (listed) and added, in the order they are listed."""
    return (*BUILTIN, *plugins())


def format_of(name: str) -> ContainerFormat:
    """The format ``name`` (a name :func:`detect` gives, read-only ones included, or one
    :func:`get` knows)."""
    found = FORMATS.get(name) or READ_ONLY.get(name)
    if found is None:
        return next((f for f in plugins() if f.name == name), None) or get(name)
    return found.load()


def names() -> str:
    """The names of the formats that write, for messages: ``blp, b2frame, b2nd, sframe,
    bcolz`` and those other packages add."""
    return ", ".join(f.name for f in every_format() if f.writable)


def _named(name: str, formats: Sequence[Format]) -> Format | None:
    """The format of ``formats`` that writes (arrays, or groups of them) and is called ``name``
    (or an alias)."""
    lowered = name.lower()
    return next((f for f in formats if (f.writable or f.group)
                 and lowered in (f.name, *f.aliases)), None)  # fmt: skip


def get(name: str) -> ContainerFormat:
    """The format that writes and is called ``name`` (or one of its aliases);
    ``ArgumentError`` naming the valid ones otherwise."""
    if not isinstance(name, str):
        raise ArgumentError(f"unknown format {name!r}; choose one of {names()}")
    found = _named(name, BUILTIN) or _named(name, plugins())
    if found is None:
        raise ArgumentError(f"unknown format {name!r}; choose one of {names()}")
    return loaded(found)


def extension_of(path: PathLike) -> str:
    """The lower-cased suffix of ``path`` (a trailing slash ignored): ``.b2nd``, or ``""``."""
    return os.path.splitext(os.fspath(path).rstrip("/" + os.sep))[1].lower()


def _suffixed(ext: str, formats: Sequence[Format]) -> Format | None:
    """The format of ``formats`` whose suffixes include ``ext``."""
    return next((f for f in formats if ext in f.suffixes), None)


def by_extension(path: PathLike) -> ContainerFormat | None:
    """The format whose suffix ``path`` ends with, if any."""
    ext = extension_of(path)
    if not ext:
        return None
    found = _suffixed(ext, BUILTIN) or _suffixed(ext, plugins())
    return None if found is None else loaded(found)


def output_format(path: PathLike, format: str | None = None) -> ContainerFormat:
    """The format to write ``path`` in: ``format`` if given (which must agree with a known
    suffix of ``path``), else the one its suffix names, else :data:`DEFAULT`.  A suffix of
    another tool's format (``.npy``, ``.zarr``, ...) is refused, saying what writes it."""
    ext = extension_of(path)
    if ext in FOREIGN:
        raise UnsupportedError(
            f"{os.fspath(path)!r}: {ext} is the suffix of another format (written by"
            f" {FOREIGN[ext]}); name the output with one of"
            f" {', '.join(f.extension for f in every_format() if f.writable)} or none"
        )
    named = by_extension(path)
    if format is None:
        return named or DEFAULT.load()
    chosen = get(format)
    if named is not None and ext not in chosen.suffixes:
        raise ArgumentError(
            f"{os.fspath(path)!r}: format {chosen.name!r} was asked, but the suffix {ext} names"
            f" {named.name!r}; drop one or make them agree"
        )
    return chosen


# --- recognising a container by its bytes and layout ----------------------------------------


def detect(path: PathLike, *, storage_options: Mapping[str, Any] | None = None) -> str:
    """Name of the format of ``path`` (a path or a URL; ``storage_options`` for its
    filesystem): ``blp``, ``b2frame``, ``b2nd``, ``sframe``, ``bcolz``, ``b2store`` (a
    python-blosc2 store), ``chunk`` (one raw Blosc chunk) or one another package adds.  File
    names do not matter, only bytes and layout."""
    path = os.fspath(path)
    if is_url(path):
        with opened_url(path, storage_options) as (fmt, _):
            return fmt
    if os.path.isdir(path):
        return detect_local_directory(path)
    with ByteSource(path) as source:
        return detect_source(source)


@functools.cache
def _builtin_dir_sniffers() -> tuple[Listed, ...]:
    """The built-in formats whose containers may be directories (their own ``sniff_dir``;
    the others' says no to every directory), in detection order (imported now)."""
    from .base import ContainerFormat

    base = ContainerFormat.sniff_dir
    return tuple(f for f in _DETECTED_FIRST
                 if isinstance(f, Listed) and type(f.load()).sniff_dir is not base)  # fmt: skip


def detect_local_directory(path: str) -> str:
    """:func:`detect` of the local directory ``path``."""
    for listed in _builtin_dir_sniffers():  # (no generator: the common case, as fast as it goes)
        if listed.load().sniff_dir(path):
            return listed.name
    for found in _detected_last():
        if found.sniff_dir(path):
            return found.name
    raise NotAContainer(f"{path}: directory is neither a Blosc2 sparse frame nor a bcolz dir")


#: A single-file container read whole (``load``, ``verify``, ``convert``) is fetched in one
#: request first, up to this size; a larger one chunk by chunk.
WHOLE_FETCH = 1 << 30


def detect_directory(directory: Directory, named: Format | None = None) -> str:
    """The format of the directory container ``directory`` (a prefix at a URL).  ``named``:
    the format the name's suffix tells, whose members are fetched first (the others only if
    they do not answer)."""
    fetched: set[str] = set()
    if named is not None and named.dir_members:
        directory.prefetch(list(named.dir_members))
        fetched.update(named.dir_members)
        for fmt in _detection_order():  # those whose members are fetched answer first
            if fmt.dir_members and fetched.issuperset(fmt.dir_members) and fmt.sniff_dir(directory):
                return fmt.name
    formats = list(_detection_order())
    directory.prefetch([m for f in formats for m in f.dir_members])  # one round of requests
    for fmt in formats:
        if fmt.sniff_dir(directory):
            return fmt.name
    raise RemoteError(
        f"{directory.name}: not found (no such object, nor a sparse frame or a bcolz directory"
        " under that prefix)"
    )


def open_url_input(url: str, storage_options: Mapping[str, Any] | None = None, *,
                   cache: Any = None, whole: bool = False) -> tuple[str | None, Any]:  # fmt: skip
    """``(format, source)`` for the container at ``url`` (not a local ``file://`` one): a
    :class:`~bloscpack.remote.source.RemoteSource` (format None: the caller detects it with
    the rest of its opening) or a :class:`~bloscpack.remote.dirs.RemoteDir` and its format.
    ``whole``: all of it will be read (a file up to :data:`WHOLE_FETCH` bytes is fetched in
    one request)."""
    from ..remote.dirs import open_url  # (the remote layer: only for URLs)

    named = by_extension(url)
    opened = open_url(url, storage_options, cache=cache,
                      directory=named is not None and named.directory,
                      edges=named.edges if named is not None else None,
                      whole=WHOLE_FETCH if whole else None)  # fmt: skip
    if not isinstance(opened, Directory):
        return None, opened
    try:
        return detect_directory(opened, named), opened
    except BaseException:
        opened.close()
        raise


@contextlib.contextmanager
def opened_url(url: str, storage_options: Mapping[str, Any] | None = None, *,
               cache: Any = None, whole: bool = False) -> Iterator[tuple[str, Any]]:  # fmt: skip
    """The container at ``url``: its format and what its reader opens (the local path of a
    ``file://`` URL, a :class:`~bloscpack.remote.source.RemoteSource` or a
    :class:`~bloscpack.remote.dirs.RemoteDir`), closed after the block.  ``whole``: all of it
    will be read (a file up to :data:`WHOLE_FETCH` bytes is then fetched in one request)."""
    local = local_path(url, storage_options)
    if local is not None:
        yield detect(local), local
        return
    fmt, opened = open_url_input(url, storage_options, cache=cache, whole=whole)
    try:
        if fmt is None:
            fmt = detect_source(opened)
        yield fmt, opened
    finally:
        opened.close()


def detect_source(source: ByteSource, *, whole: bool = False) -> str:
    """The format of the single-file container ``source`` holds, from its first bytes: the
    first of :func:`_detection_order` whose ``sniff_source`` answers.  ``whole``: the source
    is one container and nothing else (a buffer: a Blosc chunk must fill it exactly)."""
    from .base import SNIFF_BYTES

    head = bytes(source.read_upto(0, SNIFF_BYTES))
    for fmt in _DETECTED_FIRST:  # (no generator: the common case, as fast as it goes)
        if fmt.sniff_source(source, head, whole=whole):
            return fmt.name
    for fmt in _detected_last():
        if fmt.sniff_source(source, head, whole=whole):
            return fmt.name
    raise NotAContainer(_not_a_container(source.name, head))


#: The first bytes of a NumPy ``.npy`` file.
NPY_MAGIC = b"\x93NUMPY"


def _not_a_container(name: str, head: bytes) -> str:
    """Why the input ``name`` that begins with ``head`` is no container: empty, a NumPy file
    (and what reads it), or its first bytes."""
    if not head:
        return f"{name}: empty file, not a Blosc container"
    if head.startswith(NPY_MAGIC):
        return (
            f"{name}: a NumPy .npy file, not a Blosc container: read it with numpy.load, or"
            " compress it with bloscpack.save / blpk c"
        )
    return f"{name}: not a Blosc container (first bytes {head[:16].hex(' ')})"


def holds_container(path: str) -> bool:
    """Whether ``path`` holds a container this library reads (an output may replace it)."""
    try:
        detect(path)
    except BloscpackError:
        return False
    return True


@contextlib.contextmanager
def staged_container(path: PathLike, overwrite: bool = True, fmt: str | None = None,
                     storage_options: Mapping[str, Any] | None = None,
                     ) -> Iterator[str]:  # fmt: skip
    """A :class:`~bloscpack.io.staging.StagedOutput` for a container of any format at ``path``: what
    is there is replaced if it is a file, an empty directory or a container (unless
    ``overwrite`` is false), never if it is a directory of other files.  A URL (other than
    ``file://``, which is its local path) is built locally and uploaded
    (:class:`bloscpack.remote.upload.StagedUpload`), the files ``fmt`` publishes last, last."""
    with _staged(path, overwrite, fmt, storage_options) as output:
        yield output.path


def _staged(path: PathLike, overwrite: bool, fmt: str | None,
            storage_options: Mapping[str, Any] | None) -> StagedOutput | StagedUpload:  # fmt: skip
    """The staged output of a ``fmt`` container at ``path``, not opened yet: what
    :func:`staged_container` gives as a block."""
    if is_url(path):
        local = local_path(os.fspath(path), storage_options)
        if local is None:
            from ..remote.upload import StagedUpload, Upload

            upload = Upload(os.fspath(path), storage_options, overwrite=overwrite,
                            last=published_last(fmt), replaces=_holds_published)  # fmt: skip
            return StagedUpload(upload)
        path = local
    return StagedOutput(path, overwrite=overwrite, replaces=holds_container)


def published_last(fmt: str | None) -> tuple[str, ...]:
    """The files of a directory container in format ``fmt`` that make it readable, in the order
    they are written last where files appear one by one (``/``-separated, relative)."""
    return () if fmt is None else format_of(fmt).published_last


def _holds_published(names: Sequence[str]) -> bool:
    """Whether the files ``names`` (relative to a directory) include those that make a
    directory container of some format readable."""
    from ..remote.upload import rank

    tails = [tail for fmt in every_format() for tail in fmt.published_last]
    return any(rank(name, tails) for name in names)


def appendable() -> list[str]:
    """The formats whose containers grow in place (``append_rows``)."""
    return [fmt.name for fmt in every_format() if fmt.appendable]


def appender(fmt: str, path: PathLike) -> ContainerFormat:
    """Format ``fmt``, whose ``append_rows(path, rows, **options)`` appends ``rows`` (of the
    container's dtype and trailing shape, bytes as ``uint8``) to the container at ``path`` in
    place; ``NotAppendable`` naming ``path`` and the format for a format that cannot."""
    found = format_of(fmt)
    if not found.appendable:
        raise NotAppendable(
            f"{os.fspath(path)}: {found.description} cannot grow in place; convert it to a"
            f" format that can ({', '.join(appendable())}) first"
        )
    return found


def stream_format(head: bytes) -> ContainerFormat | None:
    """The format of a stream that begins with ``head``, among those whose data is written as
    it arrives (``streams``); None for the others."""
    found = next((f for f in BUILTIN if f.streams and f.sniff(head)), None)
    return None if found is None else loaded(found)


def open_reader(source: Any, fmt: str, *, verify: bool = True,
                columns: Sequence[str] | None = None) -> ContainerReader | TableReader:  # fmt: skip
    """The container in ``source`` (what ``fmt``'s reader opens: a path, a
    :class:`~bloscpack.io.sources.ByteSource` or a :class:`~bloscpack.io.sources.Directory`) as
    a :class:`~bloscpack.containers.base.ContainerReader`, or a table as a
    :class:`~bloscpack.containers.base.TableReader`.  ``verify`` checks chunk digests where
    the format stores them; ``columns`` picks a table's columns."""
    found = format_of(fmt)
    if columns is not None:
        return found.open_table(source, columns)
    return found.open_reader(source, verify=verify)


def open_writer(path: PathLike, fmt: str, dtype: Any, shape: Sequence[int], *,
                overwrite: bool = True, storage_options: Mapping[str, Any] | None = None,
                metadata: Mapping[str, Any] | None = None,
                **options: Any) -> ContainerWriter:  # fmt: skip
    """A :class:`~bloscpack.containers.base.ContainerWriter` of a new ``fmt`` container at
    ``path`` holding an array of ``dtype`` and ``shape`` (C order), its layout chosen now
    from ``options`` (the common ones and the format's own, as :func:`bloscpack.save` takes
    them), with the user ``metadata`` (as :func:`bloscpack.save` stores it), built in one
    staged output that replaces ``path`` as :func:`staged_container` says."""
    import numpy as np

    from .base import ArrayDescription

    found = format_of(fmt)
    if not found.writable:
        raise UnsupportedError(f"format {fmt!r} has no array writer")
    description = ArrayDescription(np.dtype(dtype), tuple(int(n) for n in shape))
    own = writer_options(fmt, options, description.dtype, description.shape)
    if found.writer_options is not None:  # else the format checks them itself
        check_options(fmt, own, [*found.writer_options, "metadata"])
    if metadata is not None:
        own["metadata"] = metadata
    output = _staged(path, overwrite, fmt, storage_options)
    output.open()
    try:
        # a StagedUpload stages as a StagedOutput does, in a local directory
        writer = found.open_writer(cast(StagedOutput, output), description, **own)
    except BaseException:
        output.abort()
        raise
    return writer


def check_array(fmt: str, dtype: Any, shape: Sequence[int], path: PathLike) -> None:
    """Refuse, naming ``path``, an array of ``dtype`` and ``shape`` that a new ``fmt``
    container cannot hold as it is (:func:`~bloscpack.ndarray.check_writable`, and the
    format's own ``refused(dtype, shape)``, which says why or returns None): before anything
    is computed or written."""
    import numpy as np

    from ..ndarray import check_writable

    name = os.fspath(path)
    check_writable(np.dtype(dtype), name)
    reason = format_of(fmt).refused(np.dtype(dtype), tuple(shape))
    if reason is not None:
        raise UnsupportedError(f"{name}: {reason}")


def writer_options(fmt: str, options: dict[str, Any], dtype: Any,
                   shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
    """``options`` for a writer of ``fmt`` (an array of ``dtype`` and ``shape``): the common
    options (:data:`~bloscpack.containers.options.COMMON_OPTIONS`) as the format's own."""
    import numpy as np

    params, rest = CompressionParams.parse(options)
    return format_of(fmt).own_options(params, rest, np.dtype(dtype), tuple(shape))


def describe(path: Any, fmt: str | None = None) -> dict[str, Any]:
    """A JSON-able description of the container at ``path`` (or opened, of format ``fmt``):
    its format, then what its format's ``info`` says (a raw chunk: its header)."""
    fmt = fmt or detect(path)
    return {"format": fmt, **format_of(fmt).info(path)}


__all__ = [
    "BUILTIN",
    "DEFAULT",
    "ENTRY_POINTS",
    "FOREIGN",
    "FORMATS",
    "READ_ONLY",
    "appendable",
    "appender",
    "by_extension",
    "check_array",
    "check_options",
    "describe",
    "detect",
    "detect_directory",
    "detect_source",
    "every_format",
    "extension_of",
    "format_of",
    "get",
    "loaded",
    "names",
    "open_reader",
    "open_url_input",
    "open_writer",
    "opened_url",
    "output_format",
    "plugins",
    "published_last",
    "staged_container",
    "stream_format",
    "writer_options",
]
