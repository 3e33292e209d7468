"""``bloscpack.Frame``: Blosc2 frames (contiguous files, frames in memory and sparse frame
directories) read, written and mutated like C-Blosc2 / python-blosc2 do.

>>> import numpy as np
>>> from bloscpack import Frame
>>> with Frame(None, "w", typesize=4, chunksize=4000) as f:
...     _ = f.append_data(np.arange(1000, dtype=np.int32))
...     f.vlmeta["unit"] = "m"
...     data = f.to_bytes()
>>> g = Frame(data)
>>> g.nchunks, g.vlmeta["unit"], int(np.frombuffer(g.decompress_chunk(0), np.int32)[-1])
(1, 'm', 999)
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import Any

from ...errors import ArgumentError, FileNotFound, NotAContainer
from ...io.paths import PathLike, is_stream
from ...io.sources import run_inside
from ...url import local_output
from ..schunk.contiguous import ContiguousFrame
from ..schunk.edit import FrameBase
from ..schunk.params import CParams
from ..schunk.reader import read_all
from ..schunk.records import pack_value, unpack_value
from ..schunk.sparse import INDEX_FILE, SparseFrame, sniff_index_file

Source = PathLike | bytes | bytearray | memoryview | None


class Meta(Mapping[str, Any]):
    """The fixed-size metalayers of a frame: values are msgpack-decoded on read and encoded on
    write (like python-blosc2); an update must keep the encoded length.  ``raw``/``set_raw``
    give the stored bytes."""

    def __init__(self, core: FrameBase) -> None:
        self._core = core

    def __getitem__(self, name: str) -> Any:
        return unpack_value(self._core.meta_raw(name), f"{self._core.name}: metalayer {name!r}")

    def __setitem__(self, name: str, value: Any) -> None:
        self._core.set_meta_raw(name, pack_value(value))

    def raw(self, name: str) -> bytes:
        """The stored content of metalayer ``name``."""
        return self._core.meta_raw(name)

    def set_raw(self, name: str, content: bytes) -> None:
        """Replace (same length) or add (frames without chunks only) a metalayer's bytes."""
        self._core.set_meta_raw(name, content)

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, _ in self._core.metalayers])

    def __len__(self) -> int:
        return len(self._core.metalayers)

    def __repr__(self) -> str:
        return f"Meta({list(self)})"


class VLMeta(MutableMapping[str, Any]):
    """The variable-length metalayers of a frame: values are msgpack-encoded and stored as
    compressed Blosc2 chunks, like python-blosc2's ``SChunk.vlmeta``."""

    def __init__(self, core: FrameBase) -> None:
        self._core = core

    def __getitem__(self, name: str) -> Any:
        return unpack_value(self._core.vlmeta_raw(name), f"{self._core.name}: vlmetalayer {name!r}")

    def __setitem__(self, name: str, value: Any) -> None:
        self._core.set_vlmeta_raw(name, pack_value(value))

    def __delitem__(self, name: str) -> None:
        self._core.delete_vlmeta(name)

    def raw(self, name: str) -> bytes:
        """The msgpack bytes of vlmetalayer ``name`` (decompressed)."""
        return self._core.vlmeta_raw(name)

    def set_raw(self, name: str, content: bytes) -> None:
        """Store ``content`` (msgpack bytes) as vlmetalayer ``name``."""
        self._core.set_vlmeta_raw(name, content)

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, _ in self._core.vlmeta])

    def __len__(self) -> int:
        return len(self._core.vlmeta)

    def __repr__(self) -> str:
        return f"VLMeta({list(self)})"


def _is_sparse_path(path: str) -> tuple[bool, str]:
    """(sparse?, directory or file path) for an existing path, detected by content."""
    if os.path.isdir(path):
        return True, path
    if os.path.basename(path) == INDEX_FILE and sniff_index_file(path):
        return True, os.path.dirname(path) or "."
    return False, path


#: A read of a :class:`Frame`, run inside its core's ``consistent()`` block.
_read = run_inside(lambda frame: frame._core.consistent())


class Frame:
    """A Blosc2 frame: ``Frame(path_or_bytes, mode="r" | "a" | "w", **options)``.

    * ``mode="r"``: read a contiguous frame (a file, optionally at ``offset`` bytes into it, or
      bytes) or a sparse frame directory (detected by content).
    * ``mode="a"``: the same, mutable in place with C-Blosc2's layout rules (bytes are copied;
      get the result with :meth:`to_bytes`).  A frame embedded at ``offset`` is changed in
      place and the file is cut at the frame's new end, as C-Blosc2 does.
    * ``mode="w"``: create a new frame at ``path`` (a directory if ``sparse=True``), or in
      memory if ``path`` is None.  Appends to a new sparse frame write their chunk files at
      once and ``chunks.b2frame`` on :meth:`flush`, :meth:`close` or the next other change.
      Options: ``typesize`` (1), ``codec`` ("zstd" or a code), ``clevel`` (5), ``filters``
      ([0, 0, 0, 0, 0, 1]), ``filters_meta``, ``codec_meta``, ``splitmode`` ("auto"),
      ``blocksize`` (0 = automatic), ``use_dict``, ``chunksize`` (None = set by the first
      chunk; 0 = variable), ``nthreads`` (stored in the header, 1), ``meta`` (dict of values,
      msgpack-encoded), ``raw_meta`` (dict of bytes), ``vlmeta`` (dict of values).
    """

    def __init__(
        self,
        source: Source = None,
        mode: str = "r",
        *,
        offset: int = 0,
        sparse: bool | None = None,
        **options: Any,
    ) -> None:
        if mode not in ("r", "a", "w"):
            raise ArgumentError(f"mode must be 'r', 'a' or 'w', got {mode!r}")
        self.mode = mode
        self._core: ContiguousFrame | SparseFrame
        if mode != "r" and isinstance(source, (str, os.PathLike)):
            source = local_output(source, "change" if mode == "a" else "write a frame to")
        if mode == "w":
            if offset:
                raise ArgumentError("offset is for reading or changing an existing frame, not 'w'")
            self._core = self._create(source, bool(sparse), options)
        else:
            if options:
                raise ArgumentError(
                    f"options {', '.join(sorted(options))} are only used with mode='w'"
                )
            if source is None:
                raise ArgumentError("mode 'r'/'a' need a path or bytes")
            self._core = self._open(source, mode == "a", offset, sparse)
        self.meta = Meta(self._core)
        self.vlmeta = VLMeta(self._core)

    @property
    def core(self) -> ContiguousFrame | SparseFrame:
        """The format-level frame behind this object (``ContiguousFrame`` or ``SparseFrame``)."""
        return self._core

    @staticmethod
    def _open(
        source: PathLike | bytes | bytearray | memoryview,
        writable: bool,
        offset: int,
        sparse: bool | None,
    ) -> ContiguousFrame | SparseFrame:
        if isinstance(source, (bytes, bytearray, memoryview)):
            if sparse:
                raise ArgumentError("a sparse frame is a directory, not bytes")
            return ContiguousFrame(source, writable=writable, offset=offset)
        path = os.fspath(source)
        if not os.path.exists(path):
            raise FileNotFound(f"{path!r} does not exist")
        if is_stream(path):  # a FIFO, a device, a /proc file: its bytes, read to the end
            with open(path, "rb") as fh:
                return ContiguousFrame(fh.read(), writable=writable, offset=offset)
        is_sparse, where = _is_sparse_path(path)
        if sparse is not None and sparse != is_sparse:
            kind = "a sparse frame directory" if is_sparse else "a contiguous frame file"
            raise NotAContainer(f"{path}: is {kind}, but sparse={sparse} was asked")
        if is_sparse:
            if offset:
                raise ArgumentError("offset applies to contiguous frames only")
            return SparseFrame(where, writable=writable)
        return ContiguousFrame(where, writable=writable, offset=offset)

    @staticmethod
    def _create(
        source: Source, sparse: bool, options: dict[str, Any]
    ) -> ContiguousFrame | SparseFrame:
        chunksize = options.pop("chunksize", None)
        nthreads = int(options.pop("nthreads", 1))
        meta = options.pop("meta", None) or {}
        raw_meta = options.pop("raw_meta", None) or {}
        vlmeta = options.pop("vlmeta", None) or {}
        cparams = CParams.make(**options)
        layers = [(name, pack_value(value)) for name, value in meta.items()]
        layers += [(name, bytes(content)) for name, content in raw_meta.items()]
        vl = [(name, pack_value(value)) for name, value in vlmeta.items()]
        kwargs = {"chunksize": chunksize, "metalayers": layers, "vlmeta": vl, "nthreads": nthreads}
        if sparse:
            if source is None or isinstance(source, (bytes, bytearray, memoryview)):
                raise ArgumentError("a sparse frame needs a directory path")
            return SparseFrame.create(source, cparams, **kwargs)
        if isinstance(source, (bytes, bytearray, memoryview)):
            raise ArgumentError("mode 'w' takes a path, or None for a frame in memory")
        return ContiguousFrame.create(source, cparams, **kwargs)

    # --- properties ------------------------------------------------------------------------

    @property
    def sparse(self) -> bool:
        """True for a sparse frame directory."""
        return self._core.sparse

    @property
    def nchunks(self) -> int:
        """Number of chunks."""
        return self._core.nchunks

    @property
    def typesize(self) -> int:
        """The typesize in the frame's header."""
        return self._core.header.typesize

    @property
    def chunksize(self) -> int:
        """Uncompressed bytes per chunk; 0 = variable, -1 = not set yet (no chunk stored)."""
        return self._core.header.chunksize

    @property
    def blocksize(self) -> int:
        """The frame's blocksize parameter (0 = automatic)."""
        return self._core.header.blocksize

    @property
    def nbytes(self) -> int:
        """Uncompressed size of all chunks."""
        return self._core.header.nbytes

    @property
    def cbytes(self) -> int:
        """Compressed size of the chunks, as the header records it."""
        return self._core.header.cbytes

    @property
    def cparams(self) -> dict[str, Any]:
        """Compression parameters recorded in the header (codec, clevel, filters, ...)."""
        return self._core.cparams.to_dict()

    @property
    def header(self) -> dict[str, Any]:
        """All header fields (pending appends are written first)."""
        self.flush()
        return self._core.header.to_dict()

    @property
    def offsets(self) -> list[int]:
        """The decoded index (offsets or chunk ids; negative = special marker)."""
        return [int(x) for x in self._core.offsets]

    # --- reading ---------------------------------------------------------------------------

    @_read
    def read_chunk(self, i: int) -> bytes:
        """The stored bytes of chunk ``i``; a special (zeros/NaN/uninit) entry gives the 32-byte
        chunk C-Blosc2 synthesizes for it."""
        return bytes(self._core.read_chunk(i))

    @_read
    def chunk_nbytes(self, i: int) -> int:
        """Uncompressed size of chunk ``i``."""
        return self._core.chunk_nbytes(i)

    @_read
    def decompress_chunk(self, i: int, out: Any = None) -> Any:
        """Decompress chunk ``i`` straight into ``out`` (a writable buffer of at least its
        size) or a new ``bytearray``; returns the destination."""
        return self._core.decompress_chunk(i, out)

    @_read
    def read_all(self, out: Any = None) -> Any:
        """The data of every chunk, concatenated, decompressed straight into ``out`` (a
        writable buffer of at least ``nbytes``) or a new uint8 numpy array; returns it."""
        return read_all(self._core, out)

    @_read
    def __iter__(self) -> Iterator[bytearray]:
        """The decompressed chunks in order."""
        for i in range(self.nchunks):
            yield self._core.decompress_chunk(i)

    def __len__(self) -> int:
        return self.nchunks

    @_read
    def info(self) -> dict[str, Any]:
        """JSON-able description: header, cparams, metalayers, vlmetalayers and the index."""
        self.flush()
        return {"format": "sframe" if self.sparse else "b2frame", **self._core.info()}

    @_read
    def verify(self) -> dict[str, Any]:
        """Decode every chunk; report ``{"ok", "nchunks", "bad_chunks", "problems"}``."""
        return self._core.verify()

    @_read
    def to_bytes(self) -> bytes:
        """The frame as one contiguous frame (a sparse frame is rebuilt contiguously)."""
        return self._core.to_bytes()

    # --- writing ---------------------------------------------------------------------------

    def append_chunk(self, chunk: Any) -> int:
        """Append a compressed Blosc2 chunk; returns the number of chunks."""
        return self._core.append_chunk(chunk)

    def append_data(self, data: Any) -> int:
        """Compress ``data`` with the frame's parameters and append it."""
        return self._core.append_chunk(self._core.cparams.compress(data))

    def insert_chunk(self, i: int, chunk: Any) -> int:
        """Insert a compressed chunk before chunk ``i``."""
        return self._core.insert_chunk(i, chunk)

    def update_chunk(self, i: int, chunk: Any) -> int:
        """Replace chunk ``i`` with a compressed chunk."""
        return self._core.update_chunk(i, chunk)

    def delete_chunk(self, i: int) -> int:
        """Remove chunk ``i``."""
        return self._core.delete_chunk(i)

    def reorder(self, order: Sequence[int]) -> None:
        """Permute the chunks: new chunk ``i`` is old chunk ``order[i]``."""
        self._core.reorder(order)

    def fill_special(self, nitems: int, kind: Any = "zeros", chunksize: int | None = None) -> int:
        """Fill an empty frame with ``nitems`` items, like python-blosc2's
        ``SChunk.fill_special``: ``kind`` "zeros", "nan" or "uninit" (index markers only, no
        chunk bytes), or a value repeated in every item (bytes of the typesize, a numpy scalar,
        or a Python number).  ``chunksize`` is needed if the frame has none yet.  Returns the
        number of chunks."""
        return self._core.fill_special(nitems, kind, chunksize)

    def update_special(self, i: int, kind: Any = "zeros") -> int:
        """Replace chunk ``i`` with a special chunk of the same size (``kind`` as for
        :meth:`fill_special`), like python-blosc2's ``SChunk.update_special``."""
        return self._core.update_special(i, kind)

    def flush(self) -> None:
        """Write what is pending (the index of appends to a new sparse frame)."""
        if isinstance(self._core, SparseFrame):
            self._core.flush()

    # --- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Write pending changes and release the files."""
        self._core.close()

    def __enter__(self) -> Frame:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        kind = "sparse" if self.sparse else "contiguous"
        return (
            f"<Frame {self._core.name} {kind} nchunks={self.nchunks}"
            f" typesize={self.typesize} chunksize={self.chunksize}>"
        )


__all__ = ["Frame", "Meta", "VLMeta"]
