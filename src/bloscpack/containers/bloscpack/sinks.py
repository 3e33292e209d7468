"""Where the bytes written to a :class:`~.file.BloscFile` go: a new container, compressed chunk
by chunk as they fill (:class:`ContainerSink`), or an existing one, appended to in one
crash-safe step when the file is closed (:class:`AppendSink`); the options they take
(:class:`WriteOptions`), checked before anything is written."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Mapping
from typing import IO, Any

from ...errors import ArgumentError, TruncatedError
from ...io.sources import ByteSource
from ...io.staging import atomic_write
from ...journal import recover
from .append import append_fp
from .args import (
    BLOSC2_ARGS,
    BLOSC_ARGS,
    BLOSCPACK_ARGS,
    DEFAULT_CHUNK_SIZE,
    BloscArgs,
    BloscpackArgs,
    MetadataArgs,
    calculate_nchunks,
    parse_chunk_size,
)
from .header import header_typesize, sniff
from .preamble import Preamble, encode_metadata_section
from .reader import BloscpackReader
from .writer import BloscpackWriter, BlpSettings, compress_chunk, metadata_args_of, seekable

Buffer = Any  # any object exporting the buffer protocol
_SPOOL_IN_MEMORY = 32 << 20  # compressed chunks (or appended bytes) kept in memory up to this

BLOSC_OPTIONS = (*BLOSC_ARGS, *BLOSC2_ARGS)
BLOSCPACK_OPTIONS = BLOSCPACK_ARGS


class WriteOptions:
    """The options of a write or append, checked before anything is written."""

    def __init__(
        self,
        chunk_size: int | str | None,
        blosc_args: BloscArgs | Mapping[str, Any] | None,
        bloscpack_args: BloscpackArgs | Mapping[str, Any] | None,
        metadata: Any,
        metadata_args: MetadataArgs | Mapping[str, Any] | None,
        given: dict[str, Any],
    ) -> None:
        given = dict(given)
        codec = given.pop("codec", None)
        if codec is not None:
            if given.get("cname", codec) != codec:
                raise ArgumentError(f"cname {given['cname']!r} and codec {codec!r} disagree")
            given["cname"] = codec
        self.given_chunk_size = chunk_size
        self.given_blosc = {k: v for k, v in dict(blosc_args or {}).items() if v is not None}
        self.given_blosc.update({k: given[k] for k in BLOSC_OPTIONS if k in given})
        self.given_container = {k: given[k] for k in BLOSCPACK_OPTIONS if k in given}
        self.bloscpack_args = bloscpack_args
        self.metadata = metadata
        self.metadata_args = metadata_args
        container = dict(bloscpack_args or BloscpackArgs())
        container.update(self.given_container)
        #: The options as the writer of a new file takes them (checked there).
        self.settings = BlpSettings(BloscArgs(**self.given_blosc), BloscpackArgs(**container),
                                    metadata_args_of(metadata_args), chunk_size)  # fmt: skip
        self.chunk_size = parse_chunk_size(DEFAULT_CHUNK_SIZE if chunk_size is None else chunk_size)
        self.blosc_args = self.settings.blosc_args
        self.container = self.settings.bloscpack_args
        self.metadata_args_object = self.settings.metadata_args
        if metadata is not None:
            encode_metadata_section(metadata, self.metadata_args_object)

    def check_append(self) -> None:
        """Raise if an option that an existing file fixes was given for an append."""
        fixed = [
            name
            for name, value in [
                ("chunk_size", self.given_chunk_size),
                ("bloscpack_args", self.bloscpack_args),
                ("metadata_args", self.metadata_args),
                *self.given_container.items(),
            ]
            if value is not None
        ]
        if fixed:
            raise ArgumentError(
                f"{', '.join(fixed)} cannot change when appending to an existing file"
            )


class ContainerSink:
    """Compresses full chunks as they fill and writes a new container on :meth:`finish`."""

    def __init__(
        self, path: str | None, fp: IO[bytes] | None, options: WriteOptions, name: str
    ) -> None:
        self.options = options
        self.name = name
        self._stack = contextlib.ExitStack()
        self._pending = bytearray()
        self._total = 0
        self._chunk_sizes: list[int] = []
        self._writer: BloscpackWriter | None = None
        self._spool: IO[bytes] | None = None
        try:
            self._open(path, fp)
        except BaseException:
            self._stack.__exit__(*sys.exc_info())
            raise

    def _open(self, path: str | None, fp: IO[bytes] | None) -> None:
        if path is None:
            assert fp is not None
            self._target = fp
        else:
            self._target = self._stack.enter_context(atomic_write(path))
        self._streaming = not seekable(self._target)
        self._start = 0 if self._streaming else self._target.tell()
        if self._streaming:
            self._writer = self._new_writer(
                chunk_size=self.options.chunk_size, last_chunk=-1, nchunks=-1, offsets=False
            )
        else:
            directory = None if path is None else os.path.dirname(os.path.abspath(path))
            self._spool = self._stack.enter_context(
                tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY, dir=directory)  # noqa: SIM115
            )

    def _new_writer(
        self, *, chunk_size: int, last_chunk: int, nchunks: int, offsets: bool
    ) -> BloscpackWriter:
        container = self.options.container
        return BloscpackWriter(
            self._target,
            chunk_size=chunk_size,
            last_chunk=last_chunk,
            nchunks=nchunks,
            typesize=header_typesize(self.options.blosc_args.typesize),
            checksum=container.checksum,
            offsets=offsets,
            max_app_chunks=container.max_app_chunks,
            metadata=self.options.metadata,
            metadata_args=self.options.metadata_args_object,
        )

    def write(self, data: memoryview) -> None:
        chunk_size = self.options.chunk_size
        if self._pending:
            take = min(chunk_size - len(self._pending), len(data))
            self._pending += data[:take]
            data = data[take:]
            if len(self._pending) == chunk_size:
                self._emit(self._pending)
                self._pending = bytearray()
        while len(data) >= chunk_size:
            self._emit(data[:chunk_size])
            data = data[chunk_size:]
        if len(data):
            self._pending += data

    def _emit(self, data: Buffer) -> None:
        chunk = compress_chunk(data, self.options.blosc_args)
        self._total += len(data)
        if self._writer is not None:
            self._writer.write_chunk(chunk)
        else:
            assert self._spool is not None
            self._spool.write(chunk)
            self._chunk_sizes.append(len(chunk))

    def flush(self) -> None:
        if self._streaming:
            self._target.flush()

    def finish(self) -> None:
        """Compress what is left and write the container; commit a path output."""
        try:
            if self._pending or not (self._chunk_sizes or self._total):
                self._emit(self._pending)
                self._pending = bytearray()
            if self._writer is None:
                self._write_container()
            else:
                self._writer.close()
            self._target.flush()
        except BaseException:
            self._stack.__exit__(*sys.exc_info())
            raise
        self._stack.close()

    def _write_container(self) -> None:
        assert self._spool is not None
        nchunks, chunk_size, last_chunk = calculate_nchunks(self._total, self.options.chunk_size)
        if nchunks != len(self._chunk_sizes):
            raise AssertionError(f"{len(self._chunk_sizes)} chunks written, {nchunks} expected")
        self._target.seek(self._start)
        writer = self._new_writer(
            chunk_size=chunk_size,
            last_chunk=last_chunk,
            nchunks=nchunks,
            offsets=self.options.container.offsets,
        )
        self._spool.seek(0)
        buffer = bytearray(max(self._chunk_sizes))
        for size in self._chunk_sizes:
            view = memoryview(buffer)[:size]
            if self._spool.readinto(view) != size:  # type: ignore[attr-defined]
                raise TruncatedError(f"{self.name}: the spooled chunks were cut short")
            writer.write_chunk(view)
        writer.close()

    def abort(self) -> None:
        """Discard everything: a path output is not created (an existing file is kept)."""
        try:
            raise _Aborted(f"{self.name}: writing was abandoned")
        except _Aborted:
            self._stack.__exit__(*sys.exc_info())


class AppendSink:
    """Collects bytes and appends them to an existing container in one crash-safe step."""

    def __init__(
        self, path: str | None, fp: IO[bytes] | None, options: WriteOptions, name: str
    ) -> None:
        self.path, self.fp, self.options, self.name = path, fp, options, name
        target = fp if fp is not None else None
        if path is not None:
            recover(path)
            with BloscpackReader(path):  # fail now, not at close, if it is not a container
                pass
        elif target is not None:
            position = target.tell()
            head = target.read(4)
            target.seek(position)
            if not sniff(head):
                Preamble(ByteSource(head, name=name))  # raises the reader's error
        directory = os.path.dirname(os.path.abspath(path)) if path is not None else None
        # closed by finish() or abort()
        self._spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY, dir=directory)  # noqa: SIM115
        self._size = 0

    def write(self, data: memoryview) -> None:
        self._spool.write(data)
        self._size += len(data)

    def flush(self) -> None:
        pass

    def finish(self) -> None:
        """Append the collected bytes (and replace the metadata, if given)."""
        try:
            if self._size or self.options.metadata is not None:
                self._spool.seek(0)
                blosc_args = self.options.given_blosc or None
                metadata = self.options.metadata
                if self.fp is not None:
                    append_fp(self.fp, self._spool, self._size, blosc_args, metadata=metadata)
                else:
                    assert self.path is not None
                    with open(self.path, "r+b") as fp:
                        append_fp(fp, self._spool, self._size, blosc_args, metadata=metadata)
        finally:
            self._spool.close()

    def abort(self) -> None:
        """Discard the collected bytes; the file is left as it was."""
        self._spool.close()


class _Aborted(Exception):
    """Raised into an output's context to discard it."""
