"""Byte sources: byte-range reads over files and buffers, the member files of directory
containers, and reads in one state of a file."""

from __future__ import annotations

import contextlib
import errno
import functools
import inspect
import io
import mmap
import os
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any

from ..errors import (
    FileChangedError,
    FileNotFound,
    FormatError,
    TruncatedError,
    UnsupportedError,
)
from .copies import COPY_NAMES, copy_stream
from .locks import FileLock
from .paths import PathLike, has_known_size

_map_lock = threading.Lock()  # sources map their file once, whichever thread reads first


#: Reads of a file up to this many bytes are positioned reads (``os.pread``), until a larger read
#: maps the file: opening a file and reading its header, metadata and index then costs a few
#: microseconds, where mapping a file and faulting in its first page costs more than ten.
SMALL_READ = 64 * 1024
#: The first and the last bytes of a file are read once and kept: format detection, headers,
#: metadata, trailers and indexes usually lie in them.
HEAD_SIZE = 4096


def file_identity(status: os.stat_result) -> tuple[int, ...]:
    """What tells a file changed since it was opened: its inode, size and times of change
    (every append grows it; a replaced file has a new inode)."""
    return status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns


class ByteSource:
    """Random access to the bytes of a local file or an in-memory buffer.

    ``read(offset, n)`` returns exactly ``n`` bytes or raises ``TruncatedError`` naming the
    source, so a size read from the input can never make the caller allocate more than the
    input holds.  Buffers are read as zero-copy views.  A file is read with positioned reads
    while only small pieces are asked for (headers, metadata, indexes; its first
    :data:`HEAD_SIZE` bytes are read once); the first read larger than :data:`SMALL_READ`
    memory-maps it, and from then on every read is a zero-copy view of the mapping.  A file
    whose size is unknown (:func:`has_known_size`: a FIFO, a device, a ``/proc`` file) is first
    read to its end into an unnamed temporary file.

    Reads inside :meth:`consistent` blocks see the file as it was when the first such block
    began, or raise :class:`~bloscpack.errors.FileChangedError`: appends and edits by this
    library hold an exclusive advisory lock (``flock``) on the file, the blocks a shared one.
    """

    #: Whether every read costs a request (a URL): readers then read only the blocks they
    #: need, always, instead of mapping the file.
    remote = False

    def __init__(self, source: PathLike | bytes | bytearray | memoryview, name: str | None = None,
                 *, fd: int | None = None):  # fmt: skip
        """``fd``: a descriptor of the file ``source`` already open for reading (e.g. by
        :func:`open_member`), which the source then owns."""
        self._file: IO[bytes] | None = None
        self._mmap: mmap.mmap | None = None
        self._unmapped = False  # the file could not be mapped: every read is a positioned one
        self._view: memoryview | None = None
        self._head: bytes | None = None
        self._tail: bytes | None = None
        self._lock: FileLock | None = None  # a file others may change: reads lock it
        self._identity: tuple[int, ...] | None = None
        self._block: _ConsistentBlock | None = None
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._view = memoryview(source).cast("B")
            self._size = len(self._view)
            self.name = name or "<bytes>"
        else:
            path = os.fspath(source)
            self.name = name or COPY_NAMES.get(path, path)
            try:
                self._file = open(  # noqa: SIM115 (closed by close())
                    path if fd is None else fd, "rb", buffering=0
                )
            except FileNotFoundError:
                raise FileNotFound(f"file {path!r} does not exist") from None
            except IsADirectoryError:
                raise FileNotFound(f"{path!r} is a directory, not a file") from None
            status = os.fstat(self._file.fileno())
            if has_known_size(status):
                self._lock = FileLock(self._file.fileno())
                self._block = _ConsistentBlock(self)
            else:
                self._file = _copy_to_anonymous_file(self._file)
                status = os.fstat(self._file.fileno())
            self._size = status.st_size
            if not self._size:
                self._view = memoryview(b"")

    def size(self) -> int:
        """Total number of bytes."""
        return self._size

    def located(self) -> tuple[str, int]:
        """The file that holds these bytes, as its source names it, and the offset of the
        first of them there (a member of an archive: the archive's, and where it begins)."""
        return self.name, 0

    def consistent(self) -> contextlib.AbstractContextManager[None]:
        """A block during which no append or edit by this library changes the file (a shared
        ``flock``, taken once for all the threads inside such blocks).  The first block takes
        the file as it is; later ones raise :class:`~bloscpack.errors.FileChangedError` if it
        has changed since.  Nothing for buffers and private copies."""
        block = self._block
        return _NO_BLOCK if block is None else block

    def _check_identity(self) -> None:
        """Record the file's :func:`file_identity`, or check it."""
        assert self._file is not None
        status = os.fstat(self._file.fileno())
        identity = file_identity(status)
        if self._identity is None:
            with _map_lock:
                if self._identity is None:
                    if status.st_size != self._size and self._view is not None:
                        raise FileChangedError.since_opened(self.name)
                    self._size, self._head, self._tail = status.st_size, None, None
                    self._identity = identity
        if identity != self._identity:
            raise FileChangedError.since_opened(self.name)

    def read(self, offset: int, n: int, what: str = "data") -> memoryview:
        """Exactly ``n`` bytes at ``offset`` (a view of the buffer or of the file's mapping, or
        for a small read of a file not mapped yet, of the bytes read)."""
        if offset < 0 or n < 0 or offset + n > self._size:
            raise TruncatedError(
                f"{self.name}: {what} at offset {offset} needs {n} bytes,"
                f" but the input has {self._size}"
            )
        view = self._view
        if view is None:
            if n <= SMALL_READ:
                return self._pread(offset, n, what)
            view = None if self._unmapped else self._map()
            if view is None:
                return self._read_copy(offset, n, what)
        return view[offset : offset + n]

    def _read_copy(self, offset: int, n: int, what: str) -> memoryview:
        """``n`` bytes at ``offset`` read into a new buffer (from a file that cannot be
        mapped)."""
        try:
            buffer = memoryview(bytearray(n))
        except MemoryError:
            raise UnsupportedError(
                f"{self.name}: {what} at offset {offset}: its {n} bytes do not fit in memory"
            ) from None
        self.read_into(offset, buffer, what)
        return buffer

    def read_into(self, offset: int, dest: memoryview, what: str = "data") -> None:
        """Fill ``dest`` (a writable byte buffer) with the bytes at ``offset``: a positioned
        read into it while the file is not mapped (of any size, so it never maps the file),
        else a copy."""
        n = dest.nbytes
        if self._view is not None or self._file is None:
            dest[:] = self.read(offset, n, what)
            return
        if offset < 0 or offset + n > self._size:
            raise TruncatedError(
                f"{self.name}: {what} at offset {offset} needs {n} bytes,"
                f" but the input has {self._size}"
            )
        fd = self._file.fileno()
        done = 0
        while done < n:
            got = os.preadv(fd, [dest[done:]], offset + done)
            if got <= 0:
                raise TruncatedError(
                    f"{self.name}: {what} at offset {offset} needs {n} bytes, but the file ended"
                    " (it has shrunk since it was opened)"
                )
            done += got

    def read_upto(self, offset: int, n: int) -> memoryview:
        """Up to ``n`` bytes at ``offset`` (fewer at the end of the input)."""
        offset = max(0, min(offset, self._size))
        return self.read(offset, max(0, min(n, self._size - offset)))

    def _pread(self, offset: int, n: int, what: str) -> memoryview:
        """``n`` bytes of the file at ``offset``, from the kept head or tail when they lie in
        it."""
        assert self._file is not None
        tail_at = max(self._size - HEAD_SIZE, 0)
        if offset + n <= HEAD_SIZE:
            if self._head is None:
                self._head = os.pread(self._file.fileno(), min(HEAD_SIZE, self._size), 0)
            data, start = self._head, offset
        elif offset >= tail_at:
            if self._tail is None:
                self._tail = os.pread(self._file.fileno(), self._size - tail_at, tail_at)
            data, start = self._tail, offset - tail_at
        else:
            data, start = os.pread(self._file.fileno(), n, offset), 0
        if start + n > len(data):
            raise TruncatedError(
                f"{self.name}: {what} at offset {offset} needs {n} bytes, but the file ended"
                " (it has shrunk since it was opened)"
            )
        return memoryview(data)[start : start + n]

    def _map(self) -> memoryview | None:
        """Map the file (its size when it was opened) and keep the mapping (once, also when
        several threads read at the same time); None where it cannot be mapped (no room in
        the address space for all of it, a file system without mappings): then every read
        is a positioned one."""
        assert self._file is not None
        with _map_lock:
            if self._view is not None or self._unmapped:
                return self._view
            try:
                self._mmap = mmap.mmap(self._file.fileno(), self._size, access=mmap.ACCESS_READ)
            except ValueError:  # the file is now shorter than when it was opened
                raise TruncatedError(
                    f"{self.name}: the file has shrunk since it was opened"
                ) from None
            except OSError:
                self._unmapped = True
                return None
            self._view = memoryview(self._mmap)
            return self._view

    def peek(self, offset: int, n: int) -> bytes:
        """A copy of up to ``n`` bytes at ``offset``, read from a file without mapping its pages
        (a scan over every chunk header then leaves no pages behind in memory)."""
        offset = max(0, min(offset, self._size))
        n = max(0, min(n, self._size - offset))
        if self._file is None:
            assert self._view is not None
            return bytes(self._view[offset : offset + n])
        return os.pread(self._file.fileno(), n, offset)

    def prefetch(self, ranges: list[tuple[int, int]]) -> None:
        """Hint that the ``(offset, length)`` ``ranges`` are read next: a remote source
        fetches them at once (nothing here)."""

    def release(self, offset: int, n: int) -> None:
        """Hint that bytes ``[offset, offset + n)`` will not be read again soon: their pages
        leave this process's resident memory (they stay in the page cache), so a sequential
        pass over a large file keeps its memory flat.  Reading them again still works."""
        if self._mmap is None or n <= 0 or not hasattr(mmap, "MADV_DONTNEED"):
            return
        start = max(0, offset) // mmap.PAGESIZE * mmap.PAGESIZE
        end = min(offset + n, len(self._mmap)) // mmap.PAGESIZE * mmap.PAGESIZE
        if end > start:
            self._mmap.madvise(mmap.MADV_DONTNEED, start, end - start)

    def close(self) -> None:
        """Release the mapping and the file (closing twice does nothing more)."""
        if self._view is not None:
            self._view.release()
        if self._mmap is not None:
            with contextlib.suppress(BufferError):
                self._mmap.close()
            self._mmap = None
        if self._file is not None:
            if self._lock is not None:
                self._lock.close(self._file.close)
            else:
                self._file.close()
            self._file = None

    def __enter__(self) -> ByteSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_NO_BLOCK = contextlib.nullcontext()


class _ConsistentBlock:
    """:meth:`ByteSource.consistent` of a locked file: its lock held, its identity checked."""

    __slots__ = ("_source",)

    def __init__(self, source: ByteSource) -> None:
        self._source = source

    def __enter__(self) -> None:
        source = self._source
        lock = source._lock
        assert lock is not None
        if not lock.enter():
            return  # inside a block of another (or this) thread, which checked the file
        try:
            source._check_identity()
        except BaseException:
            lock.__exit__(None, None, None)
            raise

    def __exit__(self, *exc: object) -> None:
        lock = self._source._lock
        assert lock is not None
        lock.__exit__(*exc)


class FileObjectSource(ByteSource):
    """Positioned reads from a seekable binary file object, which stays open.

    It overrides every public method of :class:`ByteSource` (a test checks this), since the
    base class's methods read its memory view, which this source does not have.
    """

    remote = False

    def __init__(self, fp: IO[bytes], name: str) -> None:
        self._fp = fp
        self.name = name
        self._start = fp.tell()
        self._size = max(0, fp.seek(0, io.SEEK_END) - self._start)
        self._file, self._mmap = None, None
        self._view = memoryview(b"")

    def size(self) -> int:
        return self._size

    def located(self) -> tuple[str, int]:
        return self.name, self._start

    @contextlib.contextmanager
    def consistent(self) -> Iterator[None]:
        """Nothing: a file object the caller gave is not locked."""
        yield

    def read(self, offset: int, n: int, what: str = "data") -> memoryview:
        if offset < 0 or n < 0 or offset + n > self._size:
            raise TruncatedError(
                f"{self.name}: {what} at offset {offset} needs {n} bytes,"
                f" but the input has {self._size}"
            )
        return self._read(offset, n, what)

    def read_upto(self, offset: int, n: int) -> memoryview:
        offset = max(0, min(offset, self._size))
        return self._read(offset, max(0, min(n, self._size - offset)), "data")

    def read_into(self, offset: int, dest: memoryview, what: str = "data") -> None:
        dest[:] = self.read(offset, dest.nbytes, what)

    def peek(self, offset: int, n: int) -> bytes:
        return bytes(self.read_upto(offset, n))

    def release(self, offset: int, n: int) -> None:
        pass  # nothing is mapped

    def prefetch(self, ranges: list[tuple[int, int]]) -> None:
        pass  # read when asked

    def _read(self, offset: int, n: int, what: str) -> memoryview:
        self._fp.seek(self._start + offset)
        data = bytearray(n)
        got = 0
        while got < n:
            piece = self._fp.readinto(memoryview(data)[got:])  # type: ignore[attr-defined]
            if not piece:
                raise TruncatedError(
                    f"{self.name}: {what} at offset {offset}: the file ended after"
                    f" {got} of {n} bytes (did it change?)"
                )
            got += piece
        return memoryview(data)

    def close(self) -> None:
        pass  # the caller owns the file object


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def open_member(path: str, root: str | None = None) -> int:
    """A read-only descriptor of the member file ``path`` of a directory container: a regular
    file (never a directory, a FIFO or a device, which would fail, hang or never end), inside
    ``root`` when given (a symbolic link may point only inside the container).  A missing
    file raises ``FileNotFoundError``; anything else wrong a :class:`FormatError` naming it."""
    return open_member_sized(path, root)[0]


def open_member_sized(path: str, root: str | None = None) -> tuple[int, int]:
    """:func:`open_member` and the file's size."""
    return _open_member(path, root, root is not None and _plain_below(path, root))


def _plain_below(path: str, root: str) -> bool:
    """Whether ``path`` names a file below ``root`` through directories none of which is a
    link (``lstat``): opened without following a link (``O_NOFOLLOW``), it lies inside."""
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not _NOFOLLOW or not path.startswith(prefix):
        return False
    parts = path[len(prefix) :].split(os.sep)
    if any(part in ("", ".", "..") for part in parts):
        return False
    at = root
    for part in parts[:-1]:
        at = os.path.join(at, part)
        try:
            if stat.S_ISLNK(os.lstat(at).st_mode):
                return False
        except OSError:
            return False
    return True


def _open_member(path: str, root: str | None, direct: bool) -> tuple[int, int]:
    """:func:`open_member_sized`; ``direct``: ``path`` names a file below ``root`` through no
    link (:func:`_plain_below`), opened without following a link (a link is then opened again,
    and where it points checked)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | (_NOFOLLOW if direct else 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        if direct and exc.errno == errno.ELOOP:  # a link: where it points is checked below
            return _open_member(path, root, False)
        raise FormatError(f"{path}: cannot open ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO or a device"
            raise FormatError(f"{path}: is {kind}, not a regular file")
        if root is not None and not direct:
            inside = os.path.realpath(root)
            if os.path.commonpath([inside, os.path.realpath(path)]) != inside:
                raise FormatError(f"{path}: a symbolic link out of the container")
        # (left non-blocking: reads of a regular file ignore the flag)
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def member_size(path: str, root: str | None = None) -> int:
    """Bytes in the member file ``path`` of a directory container, checked as
    :func:`open_member` checks it."""
    fd, size = open_member_sized(path, root)
    os.close(fd)
    return size


class Directory:
    """The member files of a directory container (a sparse frame, a bcolz carray or ctable),
    read through :class:`ByteSource` or whole: a local directory here, a prefix at a URL in
    :class:`bloscpack.remote.dirs.RemoteDir`.  Members are named with ``/``; a local one is
    opened only through :func:`open_member` (a regular file inside the directory)."""

    #: Whether every read costs a request (see :attr:`ByteSource.remote`).
    remote = False

    def __init__(self, path: PathLike) -> None:
        self.path = self.name = os.fspath(path)

    def join(self, member: str) -> str:
        """The name of ``member`` (a path, or a URL), for messages."""
        return os.path.join(self.path, *member.split("/"))

    def child(self, name: str) -> Directory:
        """The directory ``name`` inside this one."""
        return Directory(self.join(name))

    def is_dir(self) -> bool:
        return os.path.isdir(self.path)

    def is_file(self, member: str) -> bool:
        return os.path.isfile(self.join(member))

    def read_bytes(self, member: str, limit: int | None = None, keep: bool = False) -> bytes:
        """All bytes of ``member`` (``FileNotFoundError`` if it is missing; ``ValueError`` if
        it holds more than ``limit``); ``keep``: it will be read again (a remote directory
        keeps it)."""
        with os.fdopen(open_member(self.join(member), self.path), "rb") as fh:
            if limit is not None and os.fstat(fh.fileno()).st_size > limit:
                raise ValueError(f"larger than {limit} bytes")
            return fh.read()

    def source(self, member: str, head: int | None = None) -> ByteSource:
        """A :class:`ByteSource` over ``member``; ``head``: the bytes read first (a remote
        directory fetches just those on opening it)."""
        path = self.join(member)
        try:
            return ByteSource(path, fd=open_member(path, self.path))
        except FileNotFoundError:
            raise FileNotFound(f"file {path!r} does not exist") from None

    def holds(self, member: str) -> bool:
        """Whether ``member`` is at hand whole (a remote directory: fetched and kept)."""
        return not self.remote

    def size(self, member: str) -> int:
        return member_size(self.join(member), self.path)

    def exists(self, member: str) -> bool:
        """Whether ``member`` (a file or a directory) exists."""
        return os.path.exists(self.join(member))

    def listdir(self, member: str) -> list[str]:
        """Names in the directory ``member`` (``OSError`` where there is none, or where the
        storage cannot list)."""
        return os.listdir(self.join(member))

    def prefetch(self, members: list[str]) -> None:
        """Hint that ``members`` are read next (a remote directory fetches them at once)."""

    def close(self) -> None:
        """Forget what was kept."""


def as_directory(path: PathLike | Directory) -> Directory:
    """``path`` as a :class:`Directory` (one already is)."""
    return path if isinstance(path, Directory) else Directory(path)


def _copy_to_anonymous_file(stream: IO[bytes]) -> IO[bytes]:
    """A temporary file without a name holding everything ``stream`` (then closed) held."""
    copy = tempfile.TemporaryFile()  # noqa: SIM115 (returned open)
    try:
        with stream:
            copy_stream(stream, copy)
        copy.flush()
    except BaseException:
        copy.close()
        raise
    return copy


def run_inside(block: Callable[[Any], contextlib.AbstractContextManager[Any]]) -> Any:
    """A decorator: the method runs inside ``block(self)``; a generator holds it while it
    iterates."""

    def decorate(method: Any) -> Any:
        if inspect.isgeneratorfunction(method):

            @functools.wraps(method)
            def iterate(self: Any, *args: Any, **kwargs: Any) -> Any:
                with block(self):
                    yield from method(self, *args, **kwargs)

            return iterate

        @functools.wraps(method)
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            with block(self):
                return method(self, *args, **kwargs)

        return call

    return decorate


#: A method of an object reading a :class:`ByteSource` ``self.source``, run inside
#: ``source.consistent()``.
consistent_read = run_inside(lambda reader: reader.source.consistent())
