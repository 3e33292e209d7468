"""bcolz 1.x carray and ctable directories: read, write, append, attributes.

A carray directory holds ``meta/storage`` (dtype, cparams, chunklen, dflt), ``meta/sizes``
(shape), ``__attrs__`` (user attributes) and ``data/__<i>.blp``: a 16-byte header and one
Blosc1 chunk of ``chunklen`` rows each, the last one (the leftover) holding the remaining rows.
A ctable directory holds ``__rootdirs__`` (column names in order), ``__attrs__`` and one carray
directory per column, directly under the root.  Byte-level facts: ``formats/bcolz-1.x.md``.

The length of a carray is ``sizes.shape[0]``, never the number of files: bcolz leaves stale
chunk files behind and leftover chunks that hold more rows than needed, and both are ignored.
Writes follow bcolz byte for byte (chunklen rule, typesize rule, JSON layout), whole directories
appear atomically, and appends rewrite the leftover chunk and add chunks before ``meta/sizes``
changes, so an interrupted append never loses the rows that were there before.  Object carrays
hold pickles and are refused: nothing is ever unpickled.

Its modules, in layers (each imports only from the layers below its own): ``append`` (in-place
appends) and ``report`` (``info``, ``verify``); ``reader`` and ``writer`` (new directories, the
conversion target); ``attrs`` (``__attrs__``); ``layout`` (names, metadata files, chunk files,
sizing rules).
"""

from .append import append_bcolz, append_rows
from .attrs import BcolzAttrs
from .layout import BLPK_HEADER as BLPK_HEADER
from .layout import META_DIR as META_DIR
from .layout import PUBLISHED_LAST as PUBLISHED_LAST
from .layout import Cparams, blosc_typesize, default_chunklen, sniff_dir
from .reader import (
    BcolzCarrayReader,
    BcolzTableReader,
    CarrayReader,
    CtableReader,
    load,
    load_bcolz,
    open_bcolz,
    open_reader,
    read_bcolz_column,
)
from .report import info, verify
from .writer import (
    BcolzTarget,
    CarrayWriter,
    ConversionTarget,
    CtableWriter,
    open_writer,
    own_options,
    refused,
    save,
    save_bcolz,
)

__all__ = [
    "BcolzAttrs",
    "BcolzCarrayReader",
    "BcolzTableReader",
    "BcolzTarget",
    "CarrayReader",
    "CarrayWriter",
    "ConversionTarget",
    "Cparams",
    "CtableReader",
    "CtableWriter",
    "append_bcolz",
    "append_rows",
    "blosc_typesize",
    "default_chunklen",
    "info",
    "load",
    "load_bcolz",
    "open_bcolz",
    "open_reader",
    "open_writer",
    "own_options",
    "read_bcolz_column",
    "refused",
    "save",
    "save_bcolz",
    "sniff_dir",
    "verify",
]
