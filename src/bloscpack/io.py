"""Byte sources and sinks: byte-range reads over files and buffers, and atomic writes."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import inspect
import io
import mmap
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any, Self

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

from .errors import (
    ArgumentError,
    FileChangedError,
    FileNotFound,
    FormatError,
    OutputExistsError,
    PermissionDenied,
    TruncatedError,
    UnsupportedError,
)

PathLike = str | os.PathLike[str]

_map_lock = threading.Lock()  # sources map their file once, whichever thread reads first

#: Bytes copied at a time from a stream into a temporary file.
COPY_PIECE = 1 << 20


def lock_file(fd: int, exclusive: bool) -> None:
    """Take an advisory ``flock`` on ``fd`` (shared or exclusive), waiting for it; nothing
    where there is no ``flock``."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)


def unlock_file(fd: int) -> None:
    """Release the ``flock`` on ``fd``."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)


class FileLock:
    """An advisory ``flock`` on an open file or directory, held by the threads of a process
    together: the first one into :meth:`held` takes it, the last one out releases it.

    Shared: readers in this and other processes hold it at once and an exclusive holder waits
    for them.  Exclusive: one thread at a time (the others wait on a reentrant lock), and the
    readers of other processes wait."""

    def __init__(self, fd: int, exclusive: bool = False) -> None:
        self.fd: int | None = fd
        self.exclusive = exclusive
        self._holders = 0
        self._mutex = threading.RLock()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        with self._mutex if self.exclusive else contextlib.nullcontext():
            self._enter()
            try:
                yield
            finally:
                self._leave()

    def _enter(self) -> None:
        with self._mutex:
            if not self._holders and self.fd is not None:
                lock_file(self.fd, self.exclusive)
            self._holders += 1

    def _leave(self) -> None:
        with self._mutex:
            self._holders -= 1
            if not self._holders and self.fd is not None:
                unlock_file(self.fd)

    def close(self, close: Callable[[], None]) -> None:
        """Run ``close`` (which closes the file, and so releases the lock) once no thread is
        taking or releasing the lock."""
        with self._mutex:
            self.fd = None
            close()


@contextlib.contextmanager
def shared_lock(path: PathLike) -> Iterator[None]:
    """A shared ``flock`` on the regular file or directory ``path`` for the block (nothing for
    other paths, which are never opened here: opening a FIFO would count as its reader, or
    one that cannot be opened: the read inside reports it)."""
    try:
        mode = os.stat(path).st_mode
        fd = os.open(path, os.O_RDONLY) if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else None
    except OSError:
        fd = None
    if fd is None:
        yield
        return
    try:
        lock_file(fd, exclusive=False)
        yield
    finally:
        os.close(fd)  # releases the lock


def has_known_size(status: os.stat_result) -> bool:
    """Whether a file's ``st_size`` tells how many bytes reading it gives: a regular file of
    nonzero size, whatever its blocks on disk (a wholly sparse file has none).  FIFOs, devices
    and sockets have no size; the files of ``/proc`` report 0 whatever they hold, and those of
    ``/sys`` one page and no blocks (read to their end, at most a page: an empty file or a
    one-page sparse file gives the same bytes)."""
    if not stat.S_ISREG(status.st_mode) or status.st_size == 0:
        return False
    return status.st_blocks > 0 or status.st_size != mmap.PAGESIZE


def is_stream(path: PathLike) -> bool:
    """Whether ``path`` names an existing file that is read as a stream, start to end, because
    its size is unknown (see :func:`has_known_size`); directories and missing paths are not."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return False
    return not (stat.S_ISDIR(status.st_mode) or has_known_size(status))


def is_written_in_place(path: PathLike) -> bool:
    """Whether the output ``path`` is an existing FIFO, device or socket: such a file is opened
    and written where it is (never replaced, never removed), as ``zstd`` and ``gzip`` do."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextlib.contextmanager
def write_in_place(path: PathLike, mode: str = "wb") -> Iterator[IO[Any]]:
    """``path`` (a FIFO or a device: :func:`is_written_in_place`) opened for writing; an error
    while writing names it (``/dev/full``: "No space left on device")."""
    try:
        with open(path, mode) as fh:
            yield fh
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None


def copy_stream(src: IO[bytes], dst: IO[bytes]) -> None:
    """Everything ``src`` still holds, written to ``dst``."""
    shutil.copyfileobj(src, dst, COPY_PIECE)


def append_file(dst: IO[bytes], path: str) -> int:
    """Append the bytes of the file ``path`` to the file ``dst`` (open for writing, at its
    end), copied by the kernel (``copy_file_range``; ``sendfile``, then a plain copy where the
    file systems do not allow it); returns their number."""
    dst.flush()
    out = dst.fileno()
    start = os.lseek(out, 0, os.SEEK_CUR)
    with open(path, "rb") as src:
        size = os.fstat(src.fileno()).st_size
        done = _kernel_copy(src.fileno(), out, size)
        if done < size:  # the kernel copied nothing: copy through this process
            os.lseek(out, start, os.SEEK_SET)
            src.seek(0)
            shutil.copyfileobj(src, dst, COPY_PIECE)
            dst.flush()
            return size
    dst.seek(start + size)  # a buffered ``dst`` learns where the kernel left the file
    return size


def _kernel_copy(src: int, dst: int, size: int) -> int:
    """Copy ``size`` bytes from the start of ``src`` to ``dst`` at its offset in the kernel;
    returns ``size``, or 0 if neither ``copy_file_range`` nor ``sendfile`` took them."""
    for name in ("copy_file_range", "sendfile"):
        done = 0
        try:
            while done < size:
                if name == "copy_file_range":
                    n = os.copy_file_range(src, dst, size - done, done)
                else:
                    n = os.sendfile(dst, src, done, size - done)
                if n == 0 and not done:  # nothing copied (some file systems): not here
                    break
                if n == 0:
                    raise OSError(errno.EIO, f"{name} stopped after {done} of {size} bytes")
                done += n
        except OSError as exc:
            if done or exc.errno not in _NO_KERNEL_COPY:
                raise
        if done == size:
            return size
    return 0


#: The errors of ``copy_file_range``/``sendfile`` that mean "not here, copy otherwise".
_NO_KERNEL_COPY = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF}


@contextlib.contextmanager
def sized_input(path: PathLike) -> Iterator[str]:
    """``path`` itself, or for a stream (:func:`is_stream`: a FIFO, a device, a ``/proc``
    file, a process substitution) a temporary copy of all its bytes, removed after the block:
    what a reader that opens a path several times, or needs its size, is given.  The copy
    keeps the suffix of ``path`` (``.npy``)."""
    path = os.fspath(path)
    if not is_stream(path):
        yield path
        return
    fd, copy = tempfile.mkstemp(prefix="blpk-", suffix=".input" + os.path.splitext(path)[1])
    try:
        with os.fdopen(fd, "wb") as out, open(path, "rb") as src:
            copy_stream(src, out)
        with named_copy(copy, path):
            yield copy
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(copy)


#: Temporary copies of inputs, and the names messages give them (see :func:`named_copy`).
_COPY_NAMES: dict[str, str] = {}


@contextlib.contextmanager
def named_copy(copy: str, name: str) -> Iterator[None]:
    """While the block runs, a :class:`ByteSource` of the temporary copy ``copy`` of an input
    is called ``name`` (the input's own name): messages never show a temporary file."""
    _COPY_NAMES[copy] = name
    try:
        yield
    finally:
        _COPY_NAMES.pop(copy, None)


#: The private directory a :class:`StagedOutput` builds ``<dir>/<name>`` in, and in it the
#: output itself: ``<dir>/.<name>.<12 hex digits>.tmp/new``.
_STAGED_NAME = re.compile(
    r"(?P<dir>(?:[^\s'\"]*/)?)\.(?P<name>[^/\s'\"]+)\.[0-9a-f]{12}\.tmp(?:/new)?"
)


def destination_names(text: str) -> str:
    """``text`` with the paths where staged outputs are built replaced by the outputs' own
    paths: messages never show a temporary file."""
    return _STAGED_NAME.sub(lambda m: m["dir"] + m["name"], text)


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
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._view = memoryview(source).cast("B")
            self._size = len(self._view)
            self.name = name or "<bytes>"
        else:
            path = os.fspath(source)
            self.name = name or _COPY_NAMES.get(path, path)
            try:
                self._file = open(  # noqa: SIM115 (closed by close())
                    path if fd is None else fd, "rb", buffering=0
                )
            except FileNotFoundError:
                raise FileNotFound(f"file {path!r} does not exist") from None
            except IsADirectoryError:
                raise FileNotFound(f"{path!r} is a directory, not a file") from None
            if has_known_size(os.fstat(self._file.fileno())):
                self._lock = FileLock(self._file.fileno())
            else:
                self._file = _copy_to_anonymous_file(self._file)
            self._size = os.fstat(self._file.fileno()).st_size
            if not self._size:
                self._view = memoryview(b"")

    def size(self) -> int:
        """Total number of bytes."""
        return self._size

    @contextlib.contextmanager
    def consistent(self) -> Iterator[None]:
        """A block during which no append or edit by this library changes the file (a shared
        ``flock``, taken once for all the threads inside such blocks).  The first block takes
        the file as it is; later ones raise :class:`~bloscpack.errors.FileChangedError` if it
        has changed since.  Nothing for buffers and private copies."""
        if self._lock is None:
            yield
            return
        with self._lock.held():
            self._check_identity()
            yield

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


def open_member(path: str, root: str | None = None) -> int:
    """A read-only descriptor of the member file ``path`` of a directory container: a regular
    file (never a directory, a FIFO or a device, which would fail, hang or never end), inside
    ``root`` when given (a symbolic link may point only inside the container).  A missing
    file raises ``FileNotFoundError``; anything else wrong a :class:`FormatError` naming it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise FormatError(f"{path}: cannot open ({exc.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO or a device"
            raise FormatError(f"{path}: is {kind}, not a regular file")
        if root is not None:
            inside = os.path.realpath(root)
            if os.path.commonpath([inside, os.path.realpath(path)]) != inside:
                raise FormatError(f"{path}: a symbolic link out of the container")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def member_size(path: str, root: str | None = None) -> int:
    """Bytes in the member file ``path`` of a directory container, checked as
    :func:`open_member` checks it."""
    fd = open_member(path, root)
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


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


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "wb") -> Iterator[IO[Any]]:
    """Write the file ``path`` through a :class:`StagedOutput`: renamed over ``path`` (after an
    ``fsync``) only when the block completes, so a failed or interrupted write leaves no
    partial output and never damages an existing file.  A FIFO or a device
    (:func:`is_written_in_place`) is written directly instead."""
    if is_written_in_place(path):
        with write_in_place(path, mode) as fh:
            yield fh
        return
    with StagedOutput(path) as output:
        fd = os.open(output.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with _open_new(fd, mode) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())


class CommitsOnSuccess:
    """A block that ends in :meth:`commit` when it succeeds and in :meth:`abort` when it fails
    (entering it calls :meth:`enter`: nothing, or opening what the block builds)."""

    def enter(self) -> None:
        """What entering the block does first."""

    def commit(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.enter()
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()


#: What the open :class:`StagedOutput` objects of this process build (their ``path``).
_BUILDING: set[str] = set()
_BUILDING_LOCK = threading.Lock()


class StagedOutput(CommitsOnSuccess):
    """A file or a directory built at :attr:`path`, a private name beside the destination,
    that :meth:`commit` moves into place (replacing what is there) and :meth:`abort` removes:
    a failed or interrupted write leaves nothing behind and the destination untouched.  A
    destination that is a FIFO or a device (:func:`is_written_in_place`) gets a built file's
    bytes written into it instead.

    The one rule for replacing, checked before anything is built: an existing destination is
    refused with ``OutputExistsError`` if ``overwrite`` is false; a directory is replaced only
    if it is empty or ``replaces(path)`` says it is a container (``what``: which, for the
    message), never a directory of other files; the directory the destination goes in must
    exist and be writable (else ``PermissionDenied``).

    What is moved into place gets the mode ``open(path, "w")`` (``os.mkdir`` for a directory)
    would give it: that of the file (directory) it replaces, else the default the umask leaves
    (:func:`_output_mode`), whatever the writer built it with.

    A destination that is itself what another open :class:`StagedOutput` of this process
    builds (a format's own writer called inside the one staged output of ``save``) is built in
    place: the enclosing output already moves it into place or removes it."""

    def __init__(self, destination: PathLike, *, overwrite: bool = True,
                 replaces: Callable[[str], bool] | None = None,
                 what: str = "a Blosc container") -> None:  # fmt: skip
        self.name = os.fspath(destination)
        self.target = os.path.abspath(destination)
        with _BUILDING_LOCK:
            self.nested = self.target in _BUILDING
        self.in_place = not self.nested and is_written_in_place(self.target)
        if not self.in_place and not self.nested:
            _check_replaceable(destination, overwrite, replaces, what)
        self._work = ""
        #: Where to build the output once :meth:`open` has made its directory.
        self.path = ""
        self._done = False

    def open(self) -> str:
        """Make the private directory (its name is known before it exists, so that an
        interruption at any point leaves nothing behind); returns :attr:`path`."""
        if self.nested:
            self.path = self.target
            return self.path
        parent = tempfile.gettempdir() if self.in_place else os.path.dirname(self.target)
        prefix = os.path.join(parent, f".{os.path.basename(self.target)}.")
        while True:
            self._work = f"{prefix}{os.urandom(6).hex()}.tmp"
            try:
                os.mkdir(self._work, 0o700)
            except FileExistsError:
                continue
            except BaseException:
                self.abort()
                raise
            self.path = os.path.join(self._work, "new")
            with _BUILDING_LOCK:
                _BUILDING.add(self.path)
            return self.path

    def commit(self) -> None:
        """Move what was built at :attr:`path` to the destination (durably)."""
        if self.nested:
            return
        try:
            if self.in_place:
                if os.path.isdir(self.path):
                    raise ArgumentError(f"{self.name}: is a FIFO or a device, not a directory")
                with open(self.path, "rb") as built, write_in_place(self.target) as out:
                    copy_stream(built, out)
                return
            target = self.target
            os.chmod(self.path, _output_mode(self.path, target))
            if os.path.lexists(target) and (os.path.isdir(self.path) or os.path.isdir(target)):
                os.rename(target, os.path.join(self._work, "old"))
            os.replace(self.path, target)
            fsync_directory(os.path.dirname(target))
        finally:
            self.abort()

    def abort(self) -> None:
        """Remove what was built (the destination is left as it was)."""
        if not self._done and not self.nested:
            self._done = True
            with _BUILDING_LOCK:
                _BUILDING.discard(self.path)
            if self._work:
                shutil.rmtree(self._work, ignore_errors=True)

    def enter(self) -> None:
        self.open()


#: Whether ``os.access`` can check for the effective user (the one that writes).
_EFFECTIVE_IDS = os.access in os.supports_effective_ids


def _check_replaceable(destination: PathLike, overwrite: bool,
                       replaces: Callable[[str], bool] | None, what: str) -> None:  # fmt: skip
    """:class:`StagedOutput`'s rule for replacing ``destination`` (not written in place)."""
    name = os.fspath(destination)
    target = os.path.abspath(name)
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise FileNotFound(f"{name}: the directory {parent!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK, effective_ids=_EFFECTIVE_IDS):
        raise PermissionDenied(f"{name}: permission denied: cannot write in {parent!r}")
    if not os.path.lexists(target):
        return
    if not overwrite:
        raise OutputExistsError(f"{name}: already exists (pass overwrite=True to replace it)")
    directory = os.path.isdir(target) and not os.path.islink(target)
    if directory and os.listdir(target) and (replaces is None or not replaces(target)):
        raise OutputExistsError(f"{name}: is a directory that is not {what}; not replacing it")


@contextlib.contextmanager
def staged_output(path: PathLike, *, overwrite: bool = True,
                  replaces: Callable[[str], bool] | None = None,
                  what: str = "a Blosc container") -> Iterator[str]:  # fmt: skip
    """A :class:`StagedOutput` for ``path`` as a block: the path to build at, moved into
    place when the block succeeds, removed when it fails."""
    with StagedOutput(path, overwrite=overwrite, replaces=replaces, what=what) as output:
        yield output.path


#: Bytes written to a new file between two requests to start writing its pages to disk, so that
#: the disk works while the data is produced and the final ``fsync`` has little left to wait for.
WRITEBACK_STEP = 8 * 1024 * 1024


class _WritebackFile(io.FileIO):
    """A file opened for writing whose dirty pages start going to disk (``sync_file_range``,
    asynchronously) every :data:`WRITEBACK_STEP` bytes written."""

    def __init__(self, fd: int) -> None:
        super().__init__(fd, "wb")
        self._unflushed = 0

    def write(self, data: Any) -> int:
        n = super().write(data) or 0
        self._unflushed += n
        if self._unflushed >= WRITEBACK_STEP:
            self._unflushed = 0
            start_writeback(self.fileno())
        return n


def _libc_sync_file_range() -> Any:
    """Linux's ``sync_file_range`` (None elsewhere)."""
    try:
        function = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


_sync_file_range = _libc_sync_file_range()
_SYNC_FILE_RANGE_WRITE = 2


def start_writeback(fd: int) -> None:
    """Ask the kernel to start writing the dirty pages of ``fd`` to disk now, without waiting:
    a later ``fsync`` (or ``sync``) then finds little left to do, and the disk works while the
    caller goes on producing data."""
    if _sync_file_range is not None:
        _sync_file_range(fd, 0, 0, _SYNC_FILE_RANGE_WRITE)


def _open_new(fd: int, mode: str) -> IO[Any]:
    """The file object for ``fd``, a new file: binary ones start writing back early."""
    if mode != "wb":
        return os.fdopen(fd, mode)
    return io.BufferedWriter(_WritebackFile(fd))


def _output_mode(built: str, target: str) -> int:
    """The mode for ``built`` (a file or a directory) moved to ``target``: as ``open(target,
    "w")`` or ``os.mkdir`` would give, that of the file (directory) there, else 0o666 (0o777)
    minus the umask (a directory keeps the set-group-ID bit it inherited)."""
    directory = os.path.isdir(built)
    same_kind = stat.S_ISDIR if directory else stat.S_ISREG
    with contextlib.suppress(OSError):
        existing = os.stat(target).st_mode
        if same_kind(existing):
            return existing & 0o7777
    if directory:
        return (0o777 & ~_umask()) | (os.stat(built).st_mode & stat.S_ISGID)
    return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read (from ``/proc`` on Linux) without setting it where it can be:
    other threads may be creating files meanwhile."""
    with (
        contextlib.suppress(OSError, ValueError),
        open("/proc/self/status", encoding="ascii") as fh,
    ):
        for line in fh:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o077)  # the strictest value while it is read
    os.umask(mask)
    return mask


def fsync_directory(path: PathLike) -> None:
    """Make a rename or a new file in ``path`` durable."""
    with contextlib.suppress(OSError):
        fd = os.open(os.fspath(path), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
