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
conversion target); ``attrs`` (``__attrs__``); ``layout`` (metadata files, chunk files,
sizing rules), ``names`` (the names of the files); ``format`` is the :data:`FORMAT` the registry
lists.  The names below are imported when first used: recognising another format's files
imports only ``format`` and ``names``.
"""

from __future__ import annotations

from ..base import lazy_names
from .format import FORMAT

#: The module each name of this package comes from.
_FROM = {
    "append_bcolz": ".append",
    "append_rows": ".append",
    "BcolzAttrs": ".attrs",
    "BLPK_HEADER": ".layout",
    "META_DIR": ".layout",
    "PUBLISHED_LAST": ".names",
    "Cparams": ".layout",
    "blosc_typesize": ".layout",
    "default_chunklen": ".layout",
    "sniff_dir": ".layout",
    "BcolzCarrayReader": ".reader",
    "BcolzTableReader": ".reader",
    "CarrayReader": ".reader",
    "CtableReader": ".reader",
    "load": ".reader",
    "load_bcolz": ".reader",
    "open_bcolz": ".reader",
    "open_reader": ".reader",
    "read_bcolz_column": ".reader",
    "info": ".report",
    "verify": ".report",
    "BcolzTarget": ".writer",
    "CarrayWriter": ".writer",
    "ConversionTarget": ".writer",
    "CtableWriter": ".writer",
    "open_writer": ".writer",
    "own_options": ".writer",
    "refused": ".writer",
    "save": ".writer",
    "save_bcolz": ".writer",
}


__getattr__ = lazy_names(__name__, _FROM)


__all__ = ["FORMAT", *_FROM]
