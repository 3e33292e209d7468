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

from .append import append_rows
from .compress import compress_file, write_stored
from .format import FORMAT
from .header import sniff, stream_size
from .preamble import (
    decode_metadata,
    encode_metadata_section,
    encode_offsets,
    metadata_section_length,
    replacement_metadata_section,
    serialize_metadata,
)
from .reader import (
    BloscpackReader,
    BlpReader,
    ChunkLocation,
    load,
    open_reader,
    read_array,
    read_metadata_section,
)
from .report import info, info_text, verify
from .writer import (
    BloscpackWriter,
    BlpTarget,
    ConversionTarget,
    check_blosc_args,
    compress_chunk,
    open_writer,
    own_options,
    rewrite_metadata,
    save_blp,
)

#: What :func:`bloscpack.save` writes a new ``.blp`` output with.
save = save_blp

__all__ = [
    "FORMAT",
    "append_rows",
    "BlpTarget",
    "ConversionTarget",
    "BloscpackReader",
    "BlpReader",
    "BloscpackWriter",
    "ChunkLocation",
    "check_blosc_args",
    "compress_file",
    "info_text",
    "stream_size",
    "write_stored",
    "compress_chunk",
    "decode_metadata",
    "encode_metadata_section",
    "encode_offsets",
    "info",
    "load",
    "metadata_section_length",
    "open_reader",
    "open_writer",
    "read_array",
    "own_options",
    "read_metadata_section",
    "replacement_metadata_section",
    "rewrite_metadata",
    "save",
    "save_blp",
    "serialize_metadata",
    "sniff",
    "verify",
]
