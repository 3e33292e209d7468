"""The Bloscpack container (``.blp``, format version 3), bytes-compatible with bloscpack 0.16:
all of the format's knowledge.

Layout: a 32-byte :class:`~.header.BloscpackHeader`, an optional metadata section (32-byte
:class:`~.header.MetadataHeader`, serialized JSON, NUL padding up to ``max_meta_size``,
digest), an optional offsets section (``nchunks + max_app_chunks`` int64 file positions, unused
slots -1), then the Blosc chunks, each followed by its digest.  Bytes after the last digest are
ignored (0.16's append leaves stale bytes there).

Modules: :mod:`.checksums` (the digest table), :mod:`.args` (0.16's argument objects,
chunking), :mod:`.header` (the two headers, ``MAGIC``), :mod:`.preamble` (the metadata and
offsets sections; reading all that precedes the chunks), :mod:`.reader`, :mod:`.writer` (also
``save_blp``), :mod:`.report` (``info``, ``verify``), :mod:`.append` (the journaled in-place
append), :mod:`.file` (``BloscFile``) with :mod:`.streams` (its readers), :mod:`.sources` (its
byte sources over file objects) and :mod:`.sinks` (its writers), :mod:`.compress`
(``compress_file``, ``write_stored``), :mod:`.format` (the :data:`FORMAT` the registry lists).
"""

from __future__ import annotations

from ..base import lazy_names
from .format import FORMAT

#: The module each name of this package comes from, imported when first used.
_FROM = {
    "append_rows": ".append",
    "compress_file": ".compress",
    "write_stored": ".compress",
    "sniff": ".header",
    "stream_size": ".header",
    "decode_metadata": ".preamble",
    "encode_metadata_section": ".preamble",
    "encode_offsets": ".preamble",
    "metadata_section_length": ".preamble",
    "replacement_metadata_section": ".preamble",
    "serialize_metadata": ".preamble",
    "BloscpackReader": ".reader",
    "BlpReader": ".reader",
    "ChunkLocation": ".reader",
    "load": ".reader",
    "open_reader": ".reader",
    "read_array": ".reader",
    "read_metadata_section": ".reader",
    "info": ".report",
    "info_text": ".report",
    "verify": ".report",
    "BloscpackWriter": ".writer",
    "BlpTarget": ".writer",
    "ConversionTarget": ".writer",
    "check_blosc_args": ".writer",
    "compress_chunk": ".writer",
    "open_writer": ".writer",
    "own_options": ".writer",
    "rewrite_metadata": ".writer",
    "save": ".writer",
    "save_blp": ".writer",
}

__getattr__ = lazy_names(__name__, _FROM)

__all__ = ["FORMAT", *_FROM]
