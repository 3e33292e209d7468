"""The on-disk layout of bcolz directories: file names, the metadata files (``meta/storage``,
``meta/sizes``, ``__rootdirs__``), the chunk file (``BLPK_HEADER``, then one Blosc1 chunk) and
bcolz's sizing and typesize rules.  Parses and builds records; never changes a directory."""

from __future__ import annotations

import ast
import contextlib
import json
import keyword
import math
import os
import re
import struct
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import engine
from ...blosc.header import ChunkHeader
from ...errors import ArgumentError, BloscpackError, FormatError, TruncatedError
from ...io.paths import PathLike
from ...io.sources import Directory, open_member_sized
from .names import ATTRS_FILE as ATTRS_FILE  # the names of the files, for the layers above
from .names import DATA_DIR, META_DIR, META_MEMBERS, ROOTDIRS_FILE, SIZES_FILE, STORAGE_FILE
from .names import PUBLISHED_LAST as PUBLISHED_LAST

#: The 16-byte header bcolz writes before the Blosc chunk of every ``.blp`` file (never read).
BLPK_HEADER = b"blpk" + bytes([1, 0, 0, 0]) + struct.pack("<q", 1)
BLPK_HEADER_SIZE = 16
#: Largest chunk C-Blosc 1.x compresses (INT_MAX - BLOSC_MAX_OVERHEAD).
MAX_BLOSC1_CHUNK = engine.BLOSC1_MAX_BUFFERSIZE
BLOSC_MAX_TYPESIZE = 255
_MAX_META_FILE = 64 << 20  # metadata JSON larger than this is not a bcolz file
_MAX_DTYPE_STRING = 1 << 16
_COLUMN_NAME = re.compile(r"^[^\d\W]\w*$")
_CHUNK_NAME = re.compile(r"__([0-9]{1,18})\.blp")


# --- small helpers ------------------------------------------------------------------------


@contextlib.contextmanager
def _naming(path: str) -> Iterator[None]:
    """Prefix the message of any BloscpackError raised inside with ``path`` (once)."""
    try:
        yield
    except BloscpackError as exc:
        message = str(exc)
        if path in message:
            raise
        raise type(exc)(f"{path}: {message}") from exc


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: Reads a metadata file whole, given the largest size accepted (``ValueError`` above it).
ReadWhole = Callable[[int], bytes]


def _container_of(path: str) -> str:
    """The carray or ctable directory the metadata file ``path`` belongs to (``meta/*`` lie
    one level deeper than ``__attrs__`` and ``__rootdirs__``)."""
    parent = os.path.dirname(path)
    return os.path.dirname(parent) if os.path.basename(parent) == META_DIR else parent


def _read_file(path: str, limit: int) -> bytes:
    """The metadata file ``path``: a regular file inside its directory (no FIFO, device or
    symbolic link out of the container), at most ``limit`` bytes."""
    fd, size = open_member_sized(path, _container_of(path))
    try:
        if size > limit:
            raise ValueError(f"larger than {limit} bytes")
        data = os.read(fd, size + 1)
        while len(data) > size and (more := os.read(fd, 1 << 16)):  # grown since: to its end
            data += more
        return data
    finally:
        os.close(fd)


def member_reader(directory: Directory, member: str) -> ReadWhole:
    """The :data:`ReadWhole` of ``member`` of ``directory``."""
    return lambda limit: directory.read_bytes(member, limit)


def _read_meta_json(path: str, what: str, read: ReadWhole | None = None) -> Any:
    """Parse a bcolz metadata JSON file (``NaN``/``Infinity`` accepted), the file at ``path``
    or what ``read`` gives (``path`` names it)."""
    try:
        raw = (read or (lambda limit: _read_file(path, limit)))(_MAX_META_FILE)
    except BloscpackError:  # not a regular file inside the container (a ValueError too)
        raise
    except ValueError:
        raise FormatError(f"{path}: {what} file larger than {_MAX_META_FILE} bytes") from None
    except FileNotFoundError:
        raise FormatError(f"{path}: missing ({what})") from None
    except IsADirectoryError:
        raise FormatError(f"{path}: is a directory, expected the {what} file") from None
    except OSError as exc:
        raise FormatError(f"{path}: cannot read the {what} file ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
        return json.loads(text)
    except UnicodeDecodeError as exc:
        raise FormatError(
            f"{path}: {what} is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"{path}: {what} is not valid JSON ({exc})") from None


def _dumps(value: Any) -> bytes:
    """JSON exactly as bcolz writes its metadata files: ASCII, default separators, newline."""
    return json.dumps(value, ensure_ascii=True).encode("ascii") + b"\n"


# --- dtype and sizing rules ---------------------------------------------------------------


def _parse_dtype(text: Any, path: str) -> np.dtype[Any]:
    """The dtype of a ``meta/storage`` string, including bcolz's structured-list form."""
    if not isinstance(text, str):
        raise FormatError(f"{path}: dtype must be a string, got {text!r:.80}")
    if len(text) > _MAX_DTYPE_STRING:
        raise FormatError(f"{path}: dtype string of {len(text)} characters")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated aliases ("a5") still parse
            if text.lstrip().startswith(("[", "(")):
                # str() of a structured dtype, e.g. "[('a', '<i4'), ('b', '<f8')]", which
                # np.dtype() itself cannot parse: evaluate it as a Python literal (never code).
                dtype = np.dtype(ast.literal_eval(text))
            else:
                dtype = np.dtype(text)
    except (TypeError, ValueError, SyntaxError, RecursionError, MemoryError, OverflowError) as exc:
        raise FormatError(f"{path}: dtype {text!r:.200} is not a numpy dtype ({exc})") from None
    return dtype


def blosc_typesize(dtype: np.dtype[Any]) -> int:
    """The Blosc typesize bcolz uses for ``dtype``: 1 for ``S``, 4 for ``U``, 1 for void types
    wider than 255 bytes, else the item size of the base dtype."""
    base = dtype.base
    if base.kind == "S" or base.hasobject:
        return 1
    if base.kind == "U":
        return 4
    if base.kind == "V" and base.itemsize > BLOSC_MAX_TYPESIZE:
        return 1
    return base.itemsize


def default_chunklen(atomsize: int, expectedlen: int) -> int:
    """bcolz's chunklen for rows of ``atomsize`` bytes and ``expectedlen`` expected rows."""
    if atomsize < 1:
        raise ArgumentError(f"rows of {atomsize} bytes cannot be chunked")
    mib = expectedlen * atomsize / float(1 << 20)
    mib = min(max(mib, 1e-4), 1e4)
    zone = int(math.log10(mib))
    chunksize = 4096 * int(2 ** (math.log10(10**zone) + 6))
    chunksize = max((chunksize // atomsize) * atomsize, atomsize)
    return chunksize // atomsize


def check_column_name(name: str) -> None:
    """Refuse a ctable column name bcolz cannot hold (not an identifier, or a keyword)."""
    if not (_COLUMN_NAME.match(name) and not keyword.iskeyword(name)):
        raise ArgumentError(
            f"column name {name!r} is not valid for bcolz: it must be a Python identifier"
            " and not a keyword"
        )


def row_nbytes(dtype: np.dtype[Any], rowshape: tuple[int, ...]) -> int:
    """Bytes of one carray row of ``rowshape`` items of ``dtype``; rows of no bytes are refused."""
    atomsize = dtype.itemsize * math.prod(rowshape)
    if atomsize == 0:
        raise ArgumentError(f"rows of shape {rowshape} and dtype {dtype} hold no bytes")
    return atomsize


def check_chunklen(chunklen: Any, atomsize: int) -> None:
    """Refuse a ``chunklen`` that is not a positive integer, or whose chunks of ``atomsize``-byte
    rows exceed a Blosc1 chunk."""
    if not _is_int(chunklen) or chunklen < 1:
        raise ArgumentError(f"chunklen must be a positive integer, got {chunklen!r}")
    if chunklen * atomsize > MAX_BLOSC1_CHUNK:
        raise ArgumentError(f"chunks of {chunklen} rows x {atomsize} bytes exceed a Blosc1 chunk")


# --- metadata records ---------------------------------------------------------------------


@dataclass(frozen=True)
class Cparams:
    """Compression parameters of ``meta/storage``: used only when new chunks are written."""

    clevel: int = 5
    shuffle: int = 1
    cname: str = "lz4"
    quantize: int = 0

    @classmethod
    def parse(cls, value: Any, path: str) -> Cparams:
        """Validate a ``cparams`` object; old files lack ``cname``/``quantize``."""
        if not isinstance(value, dict):
            raise FormatError(f"{path}: cparams must be an object, got {value!r:.80}")
        clevel: Any = value.get("clevel")
        shuffle: Any = value.get("shuffle")
        cname: Any = value.get("cname", "blosclz")
        quantize: Any = value.get("quantize") or 0
        if not _is_int(clevel) or not 0 <= clevel <= 9:
            raise FormatError(f"{path}: cparams.clevel {clevel!r:.40} is not 0..9")
        if isinstance(shuffle, bool):
            shuffle = int(shuffle)
        if not _is_int(shuffle) or shuffle not in (0, 1, 2):
            raise FormatError(f"{path}: cparams.shuffle {shuffle!r:.40} is not 0, 1 or 2")
        if not isinstance(cname, str):
            raise FormatError(f"{path}: cparams.cname {cname!r:.40} is not a string")
        if not _is_int(quantize):
            raise FormatError(f"{path}: cparams.quantize {quantize!r:.40} is not an integer")
        return cls(clevel, shuffle, cname, quantize)

    @classmethod
    def make(cls, clevel: int, shuffle: int, cname: str, quantize: int = 0) -> Cparams:
        """Check the compression arguments of new chunks (codecs bcolz-zipline reads only)."""
        if cname not in engine.WRITABLE_CODECS:  # (bcolz-zipline's C-Blosc has no snappy)
            raise engine.codec_error(cname, "bcolz carrays")
        if not _is_int(clevel) or not 0 <= clevel <= 9:
            raise ArgumentError(f"clevel must be 0..9, got {clevel!r}")
        if isinstance(shuffle, bool):
            shuffle = int(shuffle)
        if shuffle not in (0, 1, 2):
            raise ArgumentError(f"shuffle must be 0 (none), 1 (byte) or 2 (bit), got {shuffle!r}")
        if not _is_int(quantize) or quantize < 0:
            raise ArgumentError(f"quantize must be an integer >= 0, got {quantize!r}")
        return cls(clevel, shuffle, cname, quantize)

    def to_json(self) -> dict[str, Any]:
        """The ``cparams`` object of ``meta/storage``."""
        return {"clevel": self.clevel, "shuffle": self.shuffle, "cname": self.cname,
                "quantize": self.quantize}  # fmt: skip


@dataclass(frozen=True)
class Storage:
    """The contents of ``meta/storage``."""

    dtype: np.dtype[Any]
    dtype_text: str
    chunklen: int
    cparams_raw: Any
    expectedlen: Any
    dflt: Any

    @classmethod
    def read(cls, path: str, read: ReadWhole | None = None) -> Storage:
        """Parse and check the ``meta/storage`` file at ``path`` (or from ``read``)."""
        data = _read_meta_json(path, "storage", read)
        if not isinstance(data, dict):
            raise FormatError(f"{path}: storage must be a JSON object, got {type(data).__name__}")
        for key in ("dtype", "chunklen"):
            if key not in data:
                raise FormatError(f"{path}: storage has no {key!r}")
        chunklen = data["chunklen"]
        if not _is_int(chunklen) or chunklen < 1:
            raise FormatError(f"{path}: chunklen {chunklen!r:.40} is not a positive integer")
        dtype = _parse_dtype(data["dtype"], path)
        return cls(dtype, data["dtype"], chunklen, data.get("cparams"),
                   data.get("expectedlen"), data.get("dflt"))  # fmt: skip

    def cparams(self, path: str) -> Cparams:
        """The checked ``cparams`` (only needed to write new chunks)."""
        return Cparams.parse(self.cparams_raw, path)


def _read_shape(path: str, read: ReadWhole | None = None) -> tuple[tuple[int, ...], Any]:
    """``(shape, nbytes)`` of ``meta/sizes``."""
    data = _read_meta_json(path, "sizes", read)
    if not isinstance(data, dict):
        raise FormatError(f"{path}: sizes must be a JSON object, got {type(data).__name__}")
    shape = data.get("shape")
    if not isinstance(shape, list) or not shape:
        raise FormatError(f"{path}: sizes.shape must be a non-empty list, got {shape!r:.80}")
    if not all(_is_int(n) and 0 <= n < 2**63 for n in shape) or len(shape) > 32:
        raise FormatError(f"{path}: sizes.shape {shape!r:.80} is not a list of sizes")
    return tuple(shape), data.get("nbytes")


def _sizes_blob(shape: Sequence[int], atomsize: int, cbytes: int) -> bytes:
    return _dumps({"shape": list(shape), "nbytes": shape[0] * atomsize, "cbytes": cbytes})


def _read_rootdirs(path: str, read: ReadWhole | None = None) -> list[str]:
    data = _read_meta_json(path, "column list", read)
    names = data.get("names") if isinstance(data, dict) else None
    if not isinstance(names, list) or not names:
        raise FormatError(f'{path}: expected {{"names": [<column>, ...]}} with at least one column')
    for name in names:
        if (not isinstance(name, str) or not name or name in (".", "..")
                or any(sep in name for sep in ("/", "\\", "\0"))):  # fmt: skip
            raise FormatError(f"{path}: column name {name!r:.80} is not a directory name")
    if len(set(names)) != len(names):
        raise FormatError(f"{path}: a column name appears twice in {names!r:.200}")
    return names


# --- chunk files --------------------------------------------------------------------------


def _chunk_file(rootdir: str, index: int) -> str:
    return os.path.join(rootdir, DATA_DIR, f"__{index}.blp")


def _parse_chunk_header(path: str, head: Any, file_size: int) -> ChunkHeader:
    """The header of the Blosc chunk at byte 16 of a ``.blp`` file, checked against its size."""
    with _naming(path):
        header = ChunkHeader.parse(head)
        if header.cbytes < header.size:
            raise FormatError(f"Blosc chunk header: cbytes {header.cbytes} is below its size")
        if BLPK_HEADER_SIZE + header.cbytes > file_size:
            raise TruncatedError(
                f"chunk file truncated: its Blosc chunk needs {header.cbytes} bytes after the"
                f" {BLPK_HEADER_SIZE}-byte header, the file has {file_size}"
            )
    return header


def _quantize(data: np.ndarray, digits: int) -> np.ndarray:
    """bcolz's lossy ``quantize``: ``around(x * 2**bits) / 2**bits`` for ``digits`` digits."""
    if not digits:
        return data
    exp = math.log(10.0**-digits, 10)
    exp = int(math.floor(exp)) if exp < 0 else int(math.ceil(exp))
    scale = 2.0 ** math.ceil(math.log(10.0**-exp, 2))
    return np.asarray(np.around(scale * data) / scale, dtype=data.dtype)


@contextlib.contextmanager
def chunk_compressor(cparams: Cparams, dtype: np.dtype[Any]
                     ) -> Iterator[Callable[[np.ndarray], bytes]]:  # fmt: skip
    """A function compressing rows of ``dtype`` into one Blosc1 chunk, with bcolz's typesize
    and the quantization of ``cparams``, one C thread per call with the GIL released: several
    threads may call it at once, and the bytes never depend on the thread count (C-Blosc 1.x
    threads store a chunk's blocks in the order they finish).  Other Blosc1 compressions wait
    until the block ends."""
    with engine.blosc1_compressor(
        typesize=blosc_typesize(dtype), clevel=cparams.clevel, shuffle=cparams.shuffle,
        codec=cparams.cname, concurrent=True,
    ) as compress:  # fmt: skip

        def compress_rows(rows: np.ndarray) -> bytes:
            if cparams.quantize and rows.dtype.kind == "f":
                rows = _quantize(rows, cparams.quantize)
            return compress(np.ascontiguousarray(rows).reshape(-1).view(np.uint8))

        yield compress_rows


def _compress_chunk(rows: np.ndarray, cparams: Cparams) -> bytes:
    """``rows`` as one Blosc1 chunk (:func:`chunk_compressor`)."""
    with chunk_compressor(cparams, rows.dtype) as compress:
        return compress(rows)


def _chunk_cbytes(chunk: Any) -> int:
    """The ``cbytes`` a Blosc chunk's header announces."""
    return int(struct.unpack_from("<i", chunk, 12)[0])


def sniff_dir(path: PathLike | Directory) -> bool:
    """Whether ``path`` is a bcolz carray or ctable directory."""
    if isinstance(path, Directory):
        path.prefetch(list(META_MEMBERS))
        return path.is_file(ROOTDIRS_FILE) or all(
            path.is_file(name) for name in (STORAGE_FILE, SIZES_FILE)
        )
    path = os.fspath(path)
    if not os.path.isdir(path):
        return False
    if os.path.isfile(os.path.join(path, ROOTDIRS_FILE)):
        return True
    return has_carray_meta(path)


def has_carray_meta(path: str) -> bool:
    """Whether the local directory ``path`` holds a carray's metadata files."""
    # data/ is not required: git and some copies drop the empty data/ of an empty carray
    return all(os.path.isfile(os.path.join(path, name)) for name in (STORAGE_FILE, SIZES_FILE))
