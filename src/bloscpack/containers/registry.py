"""The formats this library reads and writes: one table of names, aliases and file extensions,
and the one rule that picks the format of an output from ``format=`` and its name.

Every name here means the same thing everywhere (``save``, ``convert``, ``detect``, ``info``,
``blpk --format``): the name :func:`bloscpack.detect` gives a container of that format.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import (
    ArgumentError,
    BloscpackError,
    NotAContainer,
    NotAppendable,
    RemoteError,
    UnsupportedError,
)
from ..io import ByteSource, Directory, PathLike, StagedOutput
from ..ndarray import check_writable
from ..remote.dirs import open_url
from ..remote.source import EDGE_SIZE
from ..remote.upload import StagedUpload, Upload, rank
from ..url import is_url, local_path
from .base import ArrayDescription, ContainerReader, ContainerWriter
from .bloscpack.header import MAGIC as BLP_MAGIC
from .frame.core import EDGE_READ
from .frame.records import MAGIC as FRAME_MAGIC
from .options import COMMON_OPTIONS, CompressionParams, check_options


@dataclass(frozen=True)
class Format:
    """One container format: its name, the suffix files written in it get, whether it is a
    directory, other names it answers to, whether it stores raw bytes as such (else they
    become an array of unsigned ints), the module of ``bloscpack.containers`` that reads
    and writes it, and ``edges``: the bytes its open reads from the start and the end of a
    file of usual size (what opening one at a URL fetches first; its reader asks for more
    in one round when its header says so)."""

    name: str
    title: str
    extension: str
    module: str
    directory: bool = False
    aliases: tuple[str, ...] = ()
    holds_bytes: bool = False  # stores raw bytes as such (not only typed arrays)
    edges: tuple[int, int] = (EDGE_SIZE, EDGE_SIZE)

    def __str__(self) -> str:
        return self.name


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        # header, metadata and offsets (2,000 chunks) at the start, nothing at the end
        Format("blp", "Bloscpack file", ".blp", "bloscpack", aliases=("bloscpack",),
               holds_bytes=True, edges=(16 * 1024, 0)),  # fmt: skip
        # header and metalayers at the start; index and trailer at the end
        Format("b2frame", "Blosc2 contiguous frame", ".b2frame", "frame", aliases=("frame",),
               holds_bytes=True, edges=(EDGE_READ, EDGE_READ)),  # fmt: skip
        Format("b2nd", "python-blosc2 NDArray", ".b2nd", "b2nd", aliases=("ndarray",),
               edges=(EDGE_READ, EDGE_READ)),  # fmt: skip
        Format("sframe", "Blosc2 sparse frame (a directory)", ".b2sframe", "sframe",
               directory=True, aliases=("sparse",), holds_bytes=True),  # fmt: skip
        Format("bcolz", "bcolz carray or ctable (a directory)", ".bcolz", "bcolz",
               directory=True),  # fmt: skip
    )
}
#: Containers that are read but never written: a Blosc chunk stored on its own.
READ_ONLY = {"chunk": Format("chunk", "one Blosc chunk", "", "chunk")}
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
_BY_NAME = {alias: f for f in FORMATS.values() for alias in (f.name, *f.aliases)}
_BY_EXTENSION = {f.extension: f for f in FORMATS.values()}


def names() -> str:
    """The format names, for messages: ``blp, b2frame, b2nd, sframe, bcolz``."""
    return ", ".join(FORMATS)


def get(name: str) -> Format:
    """The format called ``name`` (or one of its aliases); ``ArgumentError`` naming the valid
    ones otherwise."""
    found = _BY_NAME.get(str(name).lower()) if isinstance(name, str) else None
    if found is None:
        raise ArgumentError(f"unknown format {name!r}; choose one of {names()}")
    return found


def extension_of(path: PathLike) -> str:
    """The lower-cased suffix of ``path`` (a trailing slash ignored): ``.b2nd``, or ``""``."""
    return os.path.splitext(os.fspath(path).rstrip("/" + os.sep))[1].lower()


def by_extension(path: PathLike) -> Format | None:
    """The format whose suffix ``path`` ends with, if any."""
    return _BY_EXTENSION.get(extension_of(path))


def output_format(path: PathLike, format: str | None = None) -> Format:
    """The format to write ``path`` in: ``format`` if given (which must agree with a known
    suffix of ``path``), else the one its suffix names, else :data:`DEFAULT`.  A suffix of
    another tool's format (``.npy``, ``.zarr``, ...) is refused, saying what writes it."""
    ext = extension_of(path)
    if ext in FOREIGN:
        raise UnsupportedError(
            f"{os.fspath(path)!r}: {ext} is the suffix of another format (written by"
            f" {FOREIGN[ext]}); name the output with one of"
            f" {', '.join(_BY_EXTENSION)} or none"
        )
    named = _BY_EXTENSION.get(ext)
    if format is None:
        return named or DEFAULT
    chosen = get(format)
    if named is not None and named is not chosen and not _compatible(chosen, named):
        raise ArgumentError(
            f"{os.fspath(path)!r}: format {chosen.name!r} was asked, but the suffix {ext} names"
            f" {named.name!r}; drop one or make them agree"
        )
    return chosen


# --- recognising a container by its bytes and layout ----------------------------------------



def detect(path: PathLike, *, storage_options: Mapping[str, Any] | None = None) -> str:
    """Name of the format of ``path`` (a path or a URL; ``storage_options`` for its
    filesystem): ``blp``, ``b2frame``, ``b2nd``, ``sframe``, ``bcolz`` or ``chunk`` (one raw
    Blosc chunk).  File names do not matter, only bytes and layout."""
    path = os.fspath(path)
    if is_url(path):
        with opened_url(path, storage_options) as (fmt, _):
            return fmt
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, "chunks.b2frame")):
            from . import b2nd

            return "b2nd" if b2nd.sniff_b2nd(path) else "sframe"
        from .bcolz.layout import sniff_dir

        if sniff_dir(path):
            return "bcolz"
        raise NotAContainer(f"{path}: directory is neither a Blosc2 sparse frame nor a bcolz dir")
    with ByteSource(path) as source:
        return detect_source(source)


#: A single-file container read whole (``load``, ``verify``, ``convert``) is fetched in one
#: request first, up to this size; a larger one chunk by chunk.
WHOLE_FETCH = 1 << 30


def detect_directory(directory: Directory, named: Format | None = None) -> str:
    """The format of the directory container ``directory`` (a prefix at a URL): ``sframe``,
    ``b2nd`` or ``bcolz``.  ``named``: the format the name's suffix tells, whose members are
    fetched first (the others only if they are missing)."""
    from . import b2nd
    from .bcolz.layout import META_MEMBERS, sniff_dir
    from .sframe import INDEX_FILE

    if named is not None and named.name == "bcolz":
        directory.prefetch(list(META_MEMBERS))
        if sniff_dir(directory):
            return "bcolz"
    elif named is not None and named.name in ("sframe", "b2nd"):
        directory.prefetch([INDEX_FILE])
    if named is None or not directory.is_file(INDEX_FILE):
        directory.prefetch([INDEX_FILE, *META_MEMBERS])  # one round of requests
    if directory.is_file(INDEX_FILE):
        return "b2nd" if b2nd.sniff_b2nd(directory) else "sframe"
    if sniff_dir(directory):
        return "bcolz"
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


def detect_source(source: ByteSource, *, whole_chunk: bool = False,
                  frame_kind: bool = True) -> str:  # fmt: skip
    """The format of the single-file container ``source`` holds, from its first bytes (a frame's
    metalayers tell ``b2nd`` from ``b2frame``): ``blp``, ``b2frame``, ``b2nd`` or ``chunk``.
    With ``whole_chunk`` a Blosc chunk must fill the source exactly; with ``frame_kind=False``
    a contiguous frame is ``frame``, its metalayers unread (for a caller that opens it)."""
    head = bytes(source.read_upto(0, 32))
    if head[:4] == BLP_MAGIC:
        return "blp"
    if head[1:10] == FRAME_MAGIC and not frame_kind:
        return "frame"
    if head[1:10] == FRAME_MAGIC:
        from .b2nd import sniff_b2nd

        return "b2nd" if sniff_b2nd(source) else "b2frame"
    from ..chunks import is_chunk

    if is_chunk(head, source.size() if whole_chunk else None):
        return "chunk"
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
    """A :class:`~bloscpack.io.StagedOutput` for a container of any format at ``path``: what is
    there is replaced if it is a file, an empty directory or a container (unless
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
            upload = Upload(os.fspath(path), storage_options, overwrite=overwrite,
                            last=published_last(fmt), replaces=_holds_published)  # fmt: skip
            return StagedUpload(upload)
        path = local
    return StagedOutput(path, overwrite=overwrite, replaces=holds_container)


def published_last(fmt: str | None) -> tuple[str, ...]:
    """The files of a directory container in format ``fmt`` that make it readable, in the order
    they are written last where files appear one by one (``/``-separated, relative)."""
    if fmt is None:
        return ()
    return tuple(n.replace(os.sep, "/") for n in getattr(module(fmt), "PUBLISHED_LAST", ()))


def _holds_published(names: Sequence[str]) -> bool:
    """Whether the files ``names`` (relative to a directory) include those that make a
    directory container of some format readable."""
    tails = [tail for fmt in FORMATS for tail in published_last(fmt)]
    return any(rank(name, tails) for name in names)


def keyword_options(function: Callable[..., Any], positional: int) -> list[str]:
    """The names ``function`` takes as options: its parameters after the first
    ``positional`` ones."""
    params = list(inspect.signature(function).parameters.values())[positional:]
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in params if p.kind in kinds]


def module(fmt: str) -> Any:
    """The module of ``bloscpack.containers`` that reads (and writes) format ``fmt``."""
    found = READ_ONLY.get(fmt) or get(fmt)
    return importlib.import_module(f"{__package__}.{found.module}")


def hook(fmt: str, name: str) -> Callable[..., Any] | None:
    """The function ``name`` of format ``fmt``'s module, if it has one.  Optional hooks:
    ``info_text(path, report)`` (the format's own text for ``blpk info``) and
    ``write_stored(source, out, progress, piece)`` (the raw data written as stored, from a path
    or a stream; such a format also has ``stream_size``, see :func:`stream_size`)."""
    found: Callable[..., Any] | None = getattr(module(fmt), name, None)
    return found


def appendable() -> list[str]:
    """The formats whose containers grow in place: those with an ``append_rows`` hook."""
    return [fmt for fmt in FORMATS if hook(fmt, "append_rows") is not None]


def appender(fmt: str, path: PathLike) -> Callable[..., None]:
    """Format ``fmt``'s ``append_rows(path, rows, **options)``, which appends ``rows`` (of the
    container's dtype and trailing shape, bytes as ``uint8``) to the container at ``path`` in
    place; ``NotAppendable`` naming ``path`` and the format for a format that has none."""
    found = hook(fmt, "append_rows")
    if found is None:
        title = (READ_ONLY.get(fmt) or get(fmt)).title
        raise NotAppendable(
            f"{os.fspath(path)}: {title} cannot grow in place; convert it to a format that"
            f" can ({', '.join(appendable())}) first"
        )
    return found


def stream_size(fmt: str, head: bytes) -> tuple[int | None, int]:
    """``(uncompressed size or None, chunk size or 0)`` of a container of ``fmt`` (one with a
    ``write_stored`` hook) from its first bytes ``head``."""
    size: tuple[int | None, int] = module(fmt).stream_size(head)
    return size


def stream_format(head: bytes) -> str | None:
    """The format of a stream that begins with ``head``, among those whose data is written as
    it arrives (a ``write_stored`` hook); None for the others."""
    for fmt in FORMATS:
        found = module(fmt)
        if hasattr(found, "write_stored") and found.sniff(head):
            return fmt
    return None


def accepts(fmt: str, name: str) -> bool:
    """Whether the writers of ``fmt`` take the option ``name`` (a common one or their own)."""
    found = module(fmt)
    writers = [getattr(found, hook, None) for hook in ("save", "compress_file")]
    own = {n for w in writers if w is not None for n in keyword_options(w, 2)}
    return name in {*COMMON_OPTIONS, *own, *found.ConversionTarget.OPTIONS}


def streams_raw(fmt: str) -> bool:
    """Whether ``fmt`` stores raw bytes as they are read (a stream in, a stream out)."""
    return get(fmt).holds_bytes and hasattr(module(fmt), "compress_file")


def open_reader(source: Any, fmt: str, *, verify: bool = True,
                columns: Sequence[str] | None = None) -> ContainerReader:  # fmt: skip
    """The container in ``source`` (what ``fmt``'s reader opens: a path, a
    :class:`~bloscpack.io.ByteSource` or an open frame) as a
    :class:`~bloscpack.containers.base.ContainerReader`.  Format ``frame``: a contiguous
    frame, found to be ``b2nd`` or ``b2frame`` by its metalayers once opened.  ``verify``
    checks chunk digests where the format stores them; ``columns`` picks a table's columns."""
    if fmt == "frame":
        b2nd = module("b2nd")
        source = b2nd.open_frame(source)
        fmt = "b2nd" if b2nd.sniff_b2nd(source) else "b2frame"
    opener = module(fmt).open_reader
    accepted = keyword_options(opener, 1)
    options: dict[str, Any] = {"verify": verify} if "verify" in accepted else {}
    if columns is not None:
        if "columns" not in accepted:
            raise ArgumentError(f"columns= selects ctable columns; this container is {fmt}")
        options["columns"] = columns
    reader: ContainerReader = opener(source, **options)
    return reader


def open_writer(path: PathLike, fmt: str, dtype: Any, shape: Sequence[int], *,
                overwrite: bool = True, storage_options: Mapping[str, Any] | None = None,
                metadata: Mapping[str, Any] | None = None,
                **options: Any) -> ContainerWriter:  # fmt: skip
    """A :class:`~bloscpack.containers.base.ContainerWriter` of a new ``fmt`` container at
    ``path`` holding an array of ``dtype`` and ``shape`` (C order), its layout chosen now
    from ``options`` (the common ones and the format's own, as :func:`bloscpack.save` takes
    them), with the user ``metadata`` (as :func:`bloscpack.save` stores it), built in one
    staged output that replaces ``path`` as :func:`staged_container` says."""
    opener = getattr(module(fmt), "open_writer", None)
    if opener is None:
        raise UnsupportedError(f"format {fmt!r} has no array writer")
    description = ArrayDescription(np.dtype(dtype), tuple(int(n) for n in shape))
    own = writer_options(fmt, options, description.dtype, description.shape)
    kinds = {p.kind for p in inspect.signature(opener).parameters.values()}
    if inspect.Parameter.VAR_KEYWORD not in kinds:  # else the format checks them itself
        check_options(fmt, own, keyword_options(opener, 2))
    if metadata is not None:
        own["metadata"] = metadata
    output = _staged(path, overwrite, fmt, storage_options)
    output.open()
    try:
        writer: ContainerWriter = opener(output, description, **own)
    except BaseException:
        output.abort()
        raise
    return writer


def check_array(fmt: str, dtype: Any, shape: Sequence[int], path: PathLike) -> None:
    """Refuse, naming ``path``, an array of ``dtype`` and ``shape`` that a new ``fmt``
    container cannot hold as it is (:func:`~bloscpack.ndarray.check_writable`, and the
    format's own ``refused(dtype, shape)``, which says why or returns None): before anything
    is computed or written."""
    name = os.fspath(path)
    check_writable(np.dtype(dtype), name)
    refused = getattr(module(fmt), "refused", None)
    reason = None if refused is None else refused(np.dtype(dtype), tuple(shape))
    if reason is not None:
        raise UnsupportedError(f"{name}: {reason}")


def writer_options(fmt: str, options: dict[str, Any], dtype: Any,
                   shape: tuple[int, ...]) -> dict[str, Any]:  # fmt: skip
    """``options`` for a writer of ``fmt`` (an array of ``dtype`` and ``shape``): the common
    options (:data:`~bloscpack.containers.options.COMMON_OPTIONS`) as the format's own."""
    params, rest = CompressionParams.parse(options)
    own: dict[str, Any] = module(fmt).own_options(params, rest, np.dtype(dtype), tuple(shape))
    return own


def describe(path: Any, fmt: str | None = None) -> dict[str, Any]:
    """A JSON-able description of the container at ``path`` (or opened, of format ``fmt``):
    its format, then what its format's ``info`` says (a raw chunk: its header)."""
    fmt = fmt or detect(path)
    return {"format": fmt, **module(fmt).info(path)}


def _compatible(chosen: Format, named: Format) -> bool:
    """A sparse frame may also be named ``.b2frame`` (python-blosc2 names both so)."""
    return chosen.name == "sframe" and named.name == "b2frame"


__all__ = [
    "DEFAULT",
    "appendable",
    "appender",
    "FOREIGN",
    "FORMATS",
    "Format",
    "READ_ONLY",
    "by_extension",
    "check_options",
    "describe",
    "detect",
    "detect_directory",
    "detect_source",
    "open_url_input",
    "opened_url",
    "extension_of",
    "get",
    "hook",
    "keyword_options",
    "module",
    "names",
    "open_reader",
    "open_writer",
    "output_format",
    "stream_format",
    "stream_size",
    "published_last",
    "staged_container",
    "writer_options",
]
