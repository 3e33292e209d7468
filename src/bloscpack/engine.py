"""The only module that calls the C libraries.

Decompression (of Blosc1 and Blosc2 chunks) and Blosc2-format compression go through C-Blosc2,
called with :mod:`ctypes` on the ``libblosc2`` shipped inside the ``blosc2`` wheel, so that data
lands straight in the caller's buffer and the GIL is released while C works.  Blosc1-format
chunks (version byte 2, the only kind bloscpack 0.16 and bcolz read) are compressed with
C-Blosc 1.x through python-blosc.

Every chunk handed to C here has been validated by :func:`bloscpack.blosc.layout.validate_chunk`
first (for :func:`getitem_into`, only the blocks C reads: ``validate_blocks``); callers that
pass ``validated=True`` promise they did it themselves.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import sys
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from itertools import islice
from typing import Any

import numpy as np

from .blosc import pydecode
from .blosc.header import (
    BLOSC1_MAX_BUFFERSIZE,
    BLOSC2_HEADER_SIZE,
    CODEC_CODES,
    MAX_BLOCKSIZE,
    MAX_BUFFERSIZE,
    MAX_TYPESIZE,
    SNAPPY_FORMAT,
    SPLIT_MODES,
    WRITABLE_CODECS,
    ChunkHeader,
    Filter,
)
from .blosc.layout import (
    ChunkKind,
    check_header,
    validate_block_runs,
    validate_blocks,
    validate_chunk,
)
from .blosc.special import decode_special_into, fill_special_items
from .clibs import blosc_extension, libblosc2_path
from .errors import ArgumentError, ChunkError, NoSuchCodec, UnsupportedError, UnwritableCodec

Buffer = Any  # any object exporting the buffer protocol

# --- loading libblosc2 -------------------------------------------------------------------


class _DParams(ctypes.Structure):
    _fields_ = [
        ("nthreads", ctypes.c_int16),
        ("schunk", ctypes.c_void_p),
        ("postfilter", ctypes.c_void_p),
        ("postparams", ctypes.c_void_p),
        ("typesize", ctypes.c_int32),
    ]


class _CParams(ctypes.Structure):
    _fields_ = [
        ("compcode", ctypes.c_uint8),
        ("compcode_meta", ctypes.c_uint8),
        ("clevel", ctypes.c_uint8),
        ("use_dict", ctypes.c_int),
        ("typesize", ctypes.c_int32),
        ("nthreads", ctypes.c_int16),
        ("blocksize", ctypes.c_int32),
        ("splitmode", ctypes.c_int32),
        ("schunk", ctypes.c_void_p),
        ("filters", ctypes.c_uint8 * 6),
        ("filters_meta", ctypes.c_uint8 * 6),
        ("prefilter", ctypes.c_void_p),
        ("preparams", ctypes.c_void_p),
        ("tuner_params", ctypes.c_void_p),
        ("tuner_id", ctypes.c_int),
        ("instr_codec", ctypes.c_bool),
        ("codec_params", ctypes.c_void_p),
        ("filter_params", ctypes.c_void_p * 6),
    ]


def _load_libblosc2() -> ctypes.CDLL:
    # The blosc2 wheel carries libblosc2.  It is found without importing the blosc2 package
    # (a third of a second that every `blpk` run would pay); blosc2_init registers the
    # codecs and filters built into the library.
    lib = ctypes.CDLL(libblosc2_path())
    lib.blosc2_init.restype = None
    lib.blosc2_init()
    lib.blosc2_create_dctx.restype = ctypes.c_void_p
    lib.blosc2_create_dctx.argtypes = [_DParams]
    lib.blosc2_create_cctx.restype = ctypes.c_void_p
    lib.blosc2_create_cctx.argtypes = [_CParams]
    lib.blosc2_free_ctx.restype = None
    lib.blosc2_free_ctx.argtypes = [ctypes.c_void_p]
    lib.blosc2_get_blosc2_cparams_defaults.restype = _CParams
    lib.blosc2_get_blosc2_cparams_defaults.argtypes = []
    lib.blosc2_decompress_ctx.restype = ctypes.c_int
    lib.blosc2_decompress_ctx.argtypes = [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32,
    ]  # fmt: skip
    lib.blosc2_getitem_ctx.restype = ctypes.c_int
    lib.blosc2_getitem_ctx.argtypes = [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32,
        ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int32,
    ]  # fmt: skip
    lib.blosc2_set_maskout.restype = ctypes.c_int
    lib.blosc2_set_maskout.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    lib.blosc2_compress_ctx.restype = ctypes.c_int
    lib.blosc2_compress_ctx.argtypes = [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32,
    ]  # fmt: skip
    return lib


_lib: ctypes.CDLL | None = None
_lib_lock = threading.Lock()
_local = threading.local()
_nthreads = max(1, min(os.cpu_count() or 1, 256))


def _libblosc2() -> ctypes.CDLL:
    global _lib
    if _lib is None:
        with _lib_lock:
            if _lib is None:
                _lib = _load_libblosc2()
    return _lib


def set_nthreads(n: int) -> int:
    """Set the number of C threads used to (de)compress; returns the previous value."""
    global _nthreads
    if not 1 <= int(n) <= 256:
        raise ArgumentError(f"nthreads must be 1 <= n <= 256, got {n}")
    old, _nthreads = _nthreads, int(n)
    return old


def get_nthreads() -> int:
    """The number of C threads used to (de)compress."""
    return _nthreads


@contextlib.contextmanager
def threads(n: int | None = None) -> Iterator[None]:
    """``n`` C threads (de)compress inside the block (None: as many as now); the number from
    before is restored after it, whatever the block set."""
    if n is not None and (not isinstance(n, int) or isinstance(n, bool)):
        raise ArgumentError(f"nthreads must be an int, got {n!r}")
    previous = _nthreads if n is None else set_nthreads(n)
    try:
        yield
    finally:
        set_nthreads(previous)


_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def _shared_pool(threads: int) -> ThreadPoolExecutor:
    """The persistent worker pool (its threads keep their C contexts from one call to the
    next), grown to at least ``threads`` threads."""
    global _pool, _pool_size
    with _lib_lock:
        if _pool is None or _pool_size < threads:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool_size = threads
            _pool = ThreadPoolExecutor(threads, thread_name_prefix="bloscpack")
        return _pool


def run_workers(work: Callable[[int], None], workers: int) -> None:
    """Run ``work(0)``, ..., ``work(workers - 1)`` at the same time and wait for all of them:
    the first on the calling thread, the others on the pool threads.  The first exception
    raised is re-raised; each ``work`` should catch its own errors when several are possible."""
    if workers <= 1:
        work(0)
        return
    pool = _shared_pool(workers - 1)
    futures = [pool.submit(work, k) for k in range(1, workers)]
    try:
        work(0)
    finally:
        for future in futures:
            future.exception()  # waits
    for future in futures:
        future.result()


#: Items :func:`map_in_order` keeps submitted per worker thread: a thread that finishes early
#: finds the next item waiting while the consumer still waits for an earlier result.
IN_FLIGHT_PER_WORKER = 2


def map_in_order(fn: Callable[[Any], Any], items: Iterable[Any], workers: int, *,
                 own_threads: bool = False) -> Generator[Any, None, None]:  # fmt: skip
    """Yield ``fn(item)`` for each of ``items``, in order, with up to ``workers`` calls running
    at once on the pool threads.  At most ``IN_FLIGHT_PER_WORKER * workers`` items are
    submitted at a time: an item is taken from ``items`` only when the result that many places
    before it has been computed (so a producer may reuse that many buffers in turn).  The
    first exception, in order, is raised; calls still running are waited for and no more
    start.  ``own_threads``: the calls run on threads of this call, not on the shared pool
    (for a caller holding a lock that work on the pool's threads may be waiting for)."""
    if workers <= 1:
        yield from map(fn, items)
    elif own_threads:
        with ThreadPoolExecutor(workers, thread_name_prefix="bloscpack") as pool:
            yield from _in_order_on(pool, fn, items, workers)
    else:
        yield from _in_order_on(_shared_pool(workers), fn, items, workers)


def _in_order_on(pool: ThreadPoolExecutor, fn: Callable[[Any], Any], items: Iterable[Any],
                 workers: int) -> Generator[Any, None, None]:  # fmt: skip
    """:func:`map_in_order` on ``pool``."""
    source = iter(items)
    first = islice(source, IN_FLIGHT_PER_WORKER * workers)
    pending: deque[Future[Any]] = deque(pool.submit(fn, item) for item in first)
    try:
        while pending:
            result = pending.popleft().result()
            for item in islice(source, 1):
                pending.append(pool.submit(fn, item))
            yield result
    finally:
        for future in pending:
            future.cancel()
        wait(pending)


def chunk_threads(nchunks: int, use_dict: bool = False, workers: int | None = None
                  ) -> tuple[int, int]:  # fmt: skip
    """How ``nchunks`` chunks are compressed: (chunks at a time, C threads each).  ``workers``
    chunks at a time (None: as many as :func:`get_nthreads`, at most ``nchunks``) share the C
    threads: a lone chunk gets them all, unless it trains a dictionary (``use_dict``, whose
    bytes depend on the threads).  The bytes never depend on it otherwise
    (:func:`compress_blosc2_into`)."""
    if workers is not None:
        return workers, _nthreads
    workers = max(1, min(_nthreads, nchunks))
    return workers, 1 if use_dict else max(1, _nthreads // workers)


class _InOrder:
    """The state :func:`compress_in_order` shares with its workers: the items, the free
    buffers and the results by position."""

    def __init__(self, items: Iterable[Any], nbytes: int, nbufs: int) -> None:
        self.source = iter(items)
        self.nbytes = nbytes
        self.free: list[np.ndarray] = [np.empty(nbytes, np.uint8) for _ in range(nbufs)]
        self.results: dict[int, tuple[np.ndarray, int, BaseException | None]] = {}
        self.taken = 0  # items taken from the source
        self.running = 0  # workers still running
        self.stop = False
        self.cond = threading.Condition()

    def work(self, compress: Callable[[Any, np.ndarray], int]) -> None:
        """Compress item after item (each as soon as a buffer is free) until there are no more
        or the consumer stops."""
        try:
            while True:
                error: BaseException | None = None
                with self.cond:
                    while not self.free and not self.stop:
                        self.cond.wait()
                    if self.stop:
                        return
                    try:
                        item = next(self.source, _InOrder)
                    except BaseException as exc:  # raised by the consumer, in order
                        item, error = None, exc
                    if item is _InOrder:
                        return
                    buf, k = self.free.pop(), self.taken
                    self.taken += 1
                result: tuple[np.ndarray, int, BaseException | None] = (buf, 0, error)
                if error is None:
                    try:
                        result = (buf, compress(item, buf[: self.nbytes]), None)
                    except BaseException as exc:
                        result = (buf, 0, exc)
                with self.cond:
                    self.results[k] = result
                    self.cond.notify_all()
        finally:
            with self.cond:
                self.running -= 1
                self.cond.notify_all()

    def result(self, k: int) -> tuple[np.ndarray, int, BaseException | None] | None:
        """The result of item ``k`` once it is done (None: there is no item ``k``)."""
        with self.cond:
            while k not in self.results and (self.running or k < self.taken):
                self.cond.wait()
            return self.results.pop(k, None)

    def release(self, buf: np.ndarray) -> None:
        with self.cond:
            self.free.append(buf)
            self.cond.notify_all()

    def close(self) -> None:
        """Stop the workers, wait for them and let go of the buffers."""
        with self.cond:
            self.stop = True
            self.cond.notify_all()
            while self.running:
                self.cond.wait()
            self.free.clear()
            self.results.clear()


def compress_in_order(compress: Callable[[Any, np.ndarray], int], items: Iterable[Any],
                      nbytes: int, workers: int) -> Generator[memoryview, None, None]:  # fmt: skip
    """Yield the bytes ``compress(item, dest)`` writes at the start of ``dest`` (a buffer of
    ``nbytes``; it returns how many) for each of ``items``, in order, while the consumer
    uses the previous result (writes it to a file, with the GIL released).  ``workers`` pool
    threads compress, each taking the next item as soon as one of the
    ``IN_FLIGHT_PER_WORKER * workers`` buffers is free (never waiting for the consumer to
    hand it out).  Each view is valid until the next one is asked for; the buffers are reused
    from one item to the next (no new pages per chunk, no copy of the compressed bytes) and
    none is kept once the call ends: the engine holds no output buffer between saves (glibc's
    malloc hands the freed blocks to the next call without new page faults; keeping them here
    measured no faster).  The first exception, in order, is raised; calls still
    running are waited for and no more start."""
    workers = max(1, workers)
    state = _InOrder(items, nbytes, IN_FLIGHT_PER_WORKER * workers)
    state.running = workers
    pool = _shared_pool(workers)
    for _ in range(workers):
        pool.submit(state.work, compress)
    try:
        k = 0
        while (done := state.result(k)) is not None:
            buf, n, exc = done
            if exc is not None:
                state.release(buf)
                raise exc
            yield buf.data[:n]
            state.release(buf)
            k += 1
    finally:
        state.close()


class _Context:
    """A C-Blosc2 context, owned by one Python thread."""

    def __init__(self, handle: int, nthreads: int) -> None:
        self.handle = handle
        self.nthreads = nthreads

    def __del__(self) -> None:
        if _lib is not None and self.handle:
            _lib.blosc2_free_ctx(self.handle)


def _dctx(nthreads: int | None = None, *, extended: bool = True) -> int:
    """This Python thread's decompression context with ``nthreads`` C threads (default: all).
    Chunks with a 16-byte header (``extended=False``) get contexts of their own: a context
    keeps the filters_meta of the last Blosc2 chunk it decoded and C-Blosc2 applies it to
    them (a byte shuffle with meta 4 then unshuffles a typesize-12 Blosc1 chunk wrongly)."""
    nthreads = nthreads or _nthreads
    contexts: dict[tuple[int, bool], _Context] = _local.__dict__.setdefault("dctx", {})
    ctx = contexts.get((nthreads, extended))
    if ctx is None:
        lib = _libblosc2()
        params = _DParams(nthreads=nthreads, typesize=8)
        ctx = _Context(lib.blosc2_create_dctx(params), nthreads)
        contexts[nthreads, extended] = ctx
    return ctx.handle


def _decompression_threads(header: ChunkHeader) -> int | None:
    """C threads to decode a chunk with: one for DELTA, whose threads deadlock in C-Blosc2 when
    block 0 is corrupt (the others wait for it forever); otherwise the configured number."""
    return 1 if Filter.DELTA in header.pipeline else None


def _byte_array(buf: Buffer, *, writable: bool = False) -> np.ndarray:
    """A flat ``uint8`` view of a C-contiguous buffer or numpy array, without copying it."""
    if isinstance(buf, np.ndarray):
        if not buf.flags.c_contiguous:
            raise ArgumentError("buffer must be C-contiguous")
        arr = buf.reshape(-1).view(np.uint8)
    else:
        mv = memoryview(buf)
        if not mv.c_contiguous:
            raise ArgumentError("buffer must be C-contiguous")
        arr = np.frombuffer(mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv, np.uint8)
    if writable and not arr.flags.writeable:
        raise ArgumentError("destination buffer is read-only")
    return arr


def _address(arr: np.ndarray) -> int | None:
    """The address of a byte array's first byte for C (``None`` when it is empty)."""
    if not arr.size:
        return None
    if arr.flags.writeable:  # (ctypes maps writable buffers at a fraction of numpy's cost)
        return ctypes.addressof(ctypes.c_char.from_buffer(arr))  # type: ignore[arg-type]
    return int(arr.__array_interface__["data"][0])  # (arr.ctypes builds Python objects)


# --- decompression ------------------------------------------------------------------------


def _snappy_stream_decoder() -> pydecode.StreamDecoder:
    try:
        import cramjam
    except ImportError:
        raise UnsupportedError(
            "this Blosc chunk is compressed with snappy, which C-Blosc2 cannot decode; install"
            " the optional snappy support: pip install 'bloscpack[snappy]'"
        ) from None

    def decode(compressed: memoryview, dest: Any) -> int:
        try:
            size = cramjam.snappy.decompress_raw_len(compressed)
            if size != len(dest):
                return int(size)
            return int(cramjam.snappy.decompress_raw_into(compressed, dest))
        except cramjam.DecompressionError as exc:
            raise ChunkError(f"Blosc chunk: corrupt snappy stream ({exc})") from None

    return decode


def _destination(out: Buffer, want: int) -> np.ndarray:
    dest = _byte_array(out, writable=True)
    if dest.size < want:
        raise ArgumentError(f"destination holds {dest.size} bytes, {want} are needed")
    return dest


def _header(chunk: Buffer, validated: bool) -> ChunkHeader:
    return ChunkHeader.parse(chunk) if validated else validate_chunk(chunk)


#: The callback of :func:`observe`, or None.
_observer: Callable[[str, int], None] | None = None


@contextlib.contextmanager
def observe(callback: Callable[[str, int], None]) -> Iterator[None]:
    """While the context is active, call ``callback(kind, nbytes)`` after every chunk compressed
    (``"compress"``, its uncompressed size) or decompressed whole (``"decompress"``, the bytes
    decoded), from whichever thread did the work.  For progress reports: the callback must be
    cheap and thread-safe.  Contexts nest; the innermost callback is called."""
    global _observer
    previous, _observer = _observer, callback
    try:
        yield
    finally:
        _observer = previous


def decompress_into(chunk: Buffer, out: Buffer, *, validated: bool = False,
                    nthreads: int | None = None) -> int:  # fmt: skip
    """Decompress a whole Blosc1/Blosc2 chunk into ``out``; return the number of bytes written.

    ``out`` must be writable, C-contiguous and at least ``nbytes`` long.  The chunk is validated
    first (``validated=True``: the caller did it).  Special-value and memcpyed chunks are decoded
    with numpy, snappy chunks with the optional snappy library, all others by C-Blosc2 with the
    GIL released, using ``nthreads`` C threads (default: :func:`get_nthreads`).
    """
    n = _decompress_into(chunk, out, validated, nthreads)
    observer = _observer
    if observer is not None:
        observer("decompress", n)
    return n


def _decompress_into(chunk: Buffer, out: Buffer, validated: bool, nthreads: int | None) -> int:
    header = _header(chunk, validated)
    dest = _destination(out, header.nbytes)
    if header.nbytes == 0:
        return 0
    kind = header.kind
    src = _byte_array(chunk)
    if kind == ChunkKind.SPECIAL:
        return decode_special_into(header, src, dest)
    if kind == ChunkKind.MEMCPYED:
        dest[: header.nbytes] = src[header.size : header.cbytes]
        return header.nbytes
    if header.codec_format == SNAPPY_FORMAT:
        return pydecode.decode_into(src, dest, _snappy_stream_decoder())
    n = _libblosc2().blosc2_decompress_ctx(
        _dctx(_decompression_threads(header) or nthreads, extended=header.extended),
        _address(src), header.cbytes, _address(dest), header.nbytes,
    )  # fmt: skip
    if n != header.nbytes:
        raise ChunkError(
            f"Blosc chunk failed to decompress (C-Blosc2 returned {n}, expected {header.nbytes})"
        )
    return n


def decompress(chunk: Buffer) -> bytearray:
    """Decompress a chunk into a new ``bytearray``."""
    header = validate_chunk(chunk)
    out = bytearray(header.nbytes)
    decompress_into(chunk, out, validated=True)
    return out


def special_range_into(chunk: Buffer, lo: int, hi: int, out: Buffer) -> int:
    """Bytes ``[lo, hi)`` of a special chunk into ``out``, made for those bytes only (such a
    chunk may claim GiBs, also with a last partial item); return ``hi - lo``."""
    header = validate_chunk(chunk)
    ts = header.real_typesize
    first, last = lo // ts, -(-hi // ts)
    part = np.empty((last - first) * ts, np.uint8)
    fill_special_items(header, _byte_array(chunk), part, last - first)
    _destination(out, hi - lo)[: hi - lo] = part[lo - first * ts : hi - first * ts]
    return hi - lo


#: Bytes a check of a chunk (:func:`check_decodes`) decodes at a time, at most (whole blocks).
CHECK_PIECE = 16 << 20


def check_decodes(chunk: Buffer, nthreads: int | None = None) -> int:
    """Validate a chunk and decode all of it, a piece of whole blocks at a time into one
    scratch buffer of at most :data:`CHECK_PIECE` bytes (or one block), so that checking a
    chunk costs no more memory than its input justifies, whatever size it claims.  Special
    chunks hold no stream: their layout is all there is to check.  Returns ``nbytes``."""
    header = validate_chunk(chunk)
    kind = header.kind
    if kind == ChunkKind.SPECIAL or header.nbytes == 0:
        return header.nbytes
    whole = kind != ChunkKind.REGULAR or header.codec_format == SNAPPY_FORMAT
    whole = whole or header.dictionary or Filter.DELTA in header.pipeline
    if whole or header.nbytes <= CHECK_PIECE:  # decoded in one go (C-Blosc2 needs it so)
        return decompress_into(chunk, np.empty(header.nbytes, np.uint8), validated=True,
                               nthreads=nthreads)  # fmt: skip
    typesize = header.real_typesize
    blocksize = header.blocksize
    piece = max(1, CHECK_PIECE // blocksize) * blocksize // typesize * typesize or typesize
    scratch = np.empty(piece, np.uint8)
    total = header.nbytes // typesize
    step = piece // typesize
    for start in range(0, total, step):
        n = min(step, total - start)
        getitem_into(chunk, start, n, scratch[: n * typesize], validated=True)
    return header.nbytes


def _items_from_whole(src: np.ndarray, header: ChunkHeader, dest: np.ndarray, first: int,
                      want: int) -> int:  # fmt: skip
    """Decode the whole chunk, copy bytes ``[first, first + want)`` to ``dest``."""
    whole = np.empty(header.nbytes, np.uint8)
    decompress_into(src, whole, validated=True)
    dest[:want] = whole[first : first + want]
    return want


def getitem_into(chunk: Buffer, start: int, nitems: int, out: Buffer, *,
                 validated: bool = False, header: ChunkHeader | None = None) -> int:  # fmt: skip
    """Decompress items ``[start, start + nitems)`` of a chunk into ``out`` (only the blocks
    they touch are decoded, and only those are validated); return the number of bytes
    written.  ``header``: the chunk's header, when the caller has it."""
    if header is None:
        header = ChunkHeader.parse(chunk) if validated else check_header(chunk)
    typesize = header.real_typesize
    total = header.nbytes // typesize
    if start < 0 or nitems < 0 or start + nitems > total:
        raise IndexError(f"items [{start}, {start + nitems}) out of range for a chunk of {total}")
    first, want = start * typesize, nitems * typesize
    dest = _destination(out, want)
    if want == 0:
        return 0
    kind = header.kind
    whole = kind != ChunkKind.REGULAR or header.codec_format == SNAPPY_FORMAT
    whole = whole or header.dictionary or Filter.DELTA in header.pipeline
    if not validated and whole:
        validate_chunk(chunk)
    elif not validated:
        bs = header.blocksize
        validate_blocks(chunk, first // bs, -(-(first + want) // bs), header)
    src = _byte_array(chunk)
    if kind == ChunkKind.SPECIAL:
        return fill_special_items(header, src, dest, nitems)
    if kind == ChunkKind.MEMCPYED:
        dest[:want] = src[header.size + first : header.size + first + want]
        return want
    if header.codec_format == SNAPPY_FORMAT:
        return pydecode.decode_into(src, dest, _snappy_stream_decoder(), first, first + want)
    if whole:
        # C-Blosc2's getitem fails on VL blocks and dictionaries and mis-decodes delta:
        # decode all, copy the items
        return _items_from_whole(src, header, dest, first, want)
    blocksize = header.blocksize
    if (
        blocksize > 0
        and first // blocksize != (first + want - 1) // blocksize
        and want in (blocksize, header.nbytes % blocksize)
    ):
        # C-Blosc2 3.x writes a later block whose size equals the request at the start of
        # ``dest``: read up to the block boundary, then the rest
        head = blocksize - first % blocksize
        if head % typesize:
            if not validated:
                validate_chunk(chunk)
            return _items_from_whole(src, header, dest, first, want)
        k = head // typesize
        getitem_into(src, start, k, dest[:head], validated=True)
        getitem_into(src, start + k, nitems - k, dest[head:want], validated=True)
        return want
    n = (_lib or _libblosc2()).blosc2_getitem_ctx(
        _dctx(extended=header.extended), _address(src), header.cbytes, start, nitems,
        _address(dest), dest.size,
    )  # fmt: skip
    if n != want:
        raise ChunkError(
            f"Blosc chunk failed to decode items (C-Blosc2 returned {n}, expected {want})"
        )
    return n


#: Block runs decoding to at most this many bytes are decoded by one C thread: handing a few
#: blocks to the pool costs more than it saves, and waits for the pool's threads when other
#: work (other pools) holds the cores.
SERIAL_DECODE_BYTES = 2 << 20


def decompress_blocks_into(chunk: Buffer, out: Buffer, runs: Sequence[tuple[int, int]], *,
                           validated: bool = False, header: ChunkHeader | None = None
                           ) -> int:  # fmt: skip
    """Decode the block runs ``(first block, count)`` of a chunk into their places in ``out``
    (writable, C-contiguous, at least the chunk's ``nbytes``; the other blocks' bytes are left
    as they are) in one C call that skips the other blocks (C-Blosc2's block mask-out, with
    :func:`get_nthreads` C threads), or for a memcpyed chunk, copied; a chunk C-Blosc2 cannot
    decode by blocks (special values, snappy, a dictionary, delta) is decoded whole.  Only the
    blocks decoded are validated (``validated=True``: the caller checked the chunk, and
    ``header`` is its parsed header when given).  Returns the chunk's ``nbytes``."""
    if not validated:
        header = check_header(chunk)
    elif header is None:
        header = ChunkHeader.parse(chunk)
    nblocks = header.nblocks
    for first, count in runs:
        if not 0 <= first <= first + count <= nblocks:
            raise IndexError(f"blocks [{first}, {first + count}) out of range for a chunk of"
                             f" {nblocks}")  # fmt: skip
    kind = header.kind
    if kind == ChunkKind.MEMCPYED and header.blocksize > 0:  # the blocks' bytes, copied
        if not validated:
            validate_chunk(chunk)
        dest, src, size = _destination(out, header.nbytes), _byte_array(chunk), header.size
        for first, count in runs:
            lo = first * header.blocksize
            hi = min(lo + count * header.blocksize, header.nbytes)
            dest[lo:hi] = src[size + lo : size + hi]
        return header.nbytes
    whole = kind != ChunkKind.REGULAR or header.codec_format == SNAPPY_FORMAT
    if whole or not header.extended or header.dictionary or Filter.DELTA in header.pipeline:
        return decompress_into(chunk, out, validated=validated)
    if not validated:
        validate_block_runs(chunk, runs, header)
    mask = bytearray(b"\x01") * nblocks  # 1: the block is skipped
    wanted = 0
    for first, count in runs:
        mask[first : first + count] = bytes(count)
        wanted += count
    dest = _destination(out, header.nbytes)
    src = _byte_array(chunk)
    lib = _lib or _libblosc2()
    ctx = _dctx(1 if wanted * header.blocksize <= SERIAL_DECODE_BYTES else None)
    lib.blosc2_set_maskout(ctx, (ctypes.c_bool * nblocks).from_buffer(mask), nblocks)
    # (the mask-out is reset by the next decompression)
    n = lib.blosc2_decompress_ctx(ctx, _address(src), header.cbytes, _address(dest),
                                  header.nbytes)  # fmt: skip
    if n != header.nbytes:
        raise ChunkError(f"Blosc chunk failed to decode blocks (C-Blosc2 returned {n})")
    return n


# --- compression --------------------------------------------------------------------------

_blosc1_lock = threading.Lock()  # python-blosc keeps its settings in globals
_blosc1_ext: Any = None
_blosc1_init_lock = threading.Lock()


def _blosc1() -> Any:
    """python-blosc's C extension (C-Blosc 1.x), initialised once.  Its functions are called
    directly: the ``blosc`` package around them imports numpy and its test runner (25 ms
    more for every ``blpk c``), and its checks are made here before."""
    global _blosc1_ext
    if _blosc1_ext is None:
        with _blosc1_init_lock:
            if _blosc1_ext is None:
                ext = blosc_extension()
                if "blosc" not in sys.modules:  # (else the package has initialised it)
                    ext.init()
                    atexit.register(ext.destroy)
                _blosc1_ext = ext
    return _blosc1_ext


def blosc1_codecs() -> list[str]:
    """The codecs C-Blosc 1.x compresses with."""
    return list(_blosc1().compressor_list().split(","))


def codec_error(codec: Any, where: str, writable: Sequence[str] = WRITABLE_CODECS) -> NoSuchCodec:
    """The one error for a codec that ``where`` (e.g. "Blosc2 chunks") cannot be written with."""
    names = ", ".join(writable)
    if codec in CODEC_CODES:
        return UnwritableCodec(f"codec {codec!r} cannot be written to {where} (it is only"
                               f" read); use one of {names}")  # fmt: skip
    return NoSuchCodec(f"unknown codec {codec!r}; {where} are written with {names}")


def codec_code(codec: str | int) -> int:
    """The Blosc2 code of a codec to compress with (``"zstd"`` -> 5); integers (plugin ids)
    pass through, snappy's excepted."""
    if codec == CODEC_CODES["snappy"]:
        codec = "snappy"
    if isinstance(codec, int):
        return codec
    if codec not in WRITABLE_CODECS:
        raise codec_error(codec, "Blosc2 chunks")
    return CODEC_CODES[codec]


def _check_clevel_blocksize(clevel: int, blocksize: int) -> None:
    if not 0 <= clevel <= 9:
        raise ArgumentError(f"clevel must be 0..9, got {clevel}")
    if not 0 <= blocksize <= MAX_BLOCKSIZE:
        raise ArgumentError(
            f"blocksize must be 0 (automatic) or 1..{MAX_BLOCKSIZE}, got {blocksize}"
        )


_CCTX_CACHE_SIZE = 8


def _cctx(key: tuple[Any, ...]) -> int:
    """This Python thread's compression context for the parameters ``key`` (created once and
    reused: creating one starts its C threads, which costs more than compressing a chunk).
    The key includes the input size: C-Blosc2 keeps the block size it computed in the context
    and forces it on the next call, which only gives a fresh context's result for equal sizes."""
    contexts: dict[tuple[Any, ...], _Context] = _local.__dict__.setdefault("cctx", {})
    ctx = contexts.pop(key, None)
    if ctx is None:
        codec, codec_meta, clevel, use_dict, typesize, nthreads, blocksize, split = key[:8]
        fs, metas = key[8:10]
        lib = _libblosc2()
        params = lib.blosc2_get_blosc2_cparams_defaults()
        params.compcode = codec
        params.compcode_meta = codec_meta
        params.clevel = clevel
        params.use_dict = int(use_dict)
        params.typesize = typesize
        params.nthreads = nthreads
        params.blocksize = blocksize
        params.splitmode = split
        for i in range(6):
            params.filters[i] = fs[i] if i < len(fs) else 0
            params.filters_meta[i] = metas[i] if i < len(metas) else 0
        handle = lib.blosc2_create_cctx(params)
        if not handle:
            raise UnsupportedError(f"C-Blosc2 refused the compression parameters (codec {codec})")
        ctx = _Context(handle, nthreads)
        if len(contexts) >= _CCTX_CACHE_SIZE:
            del contexts[next(iter(contexts))]  # the least recently used
    contexts[key] = ctx
    return ctx.handle


#: Largest compression output buffer a thread keeps for its next chunk.
_SCRATCH_LIMIT = 64 * 1024 * 1024


def _compression_scratch(nbytes: int) -> np.ndarray:
    """An uninitialised buffer of ``nbytes`` for C to compress into, reused by this thread
    (the pages of a new zero-filled chunk-sized buffer per chunk cost more than compressing
    highly compressible data; only the compressed bytes are then copied out)."""
    if nbytes > _SCRATCH_LIMIT:
        return np.empty(nbytes, np.uint8)
    scratch: np.ndarray | None = getattr(_local, "scratch", None)
    if scratch is None or scratch.size < nbytes:
        scratch = _local.scratch = np.empty(nbytes, np.uint8)
    return scratch[:nbytes]


def compress_blosc2(data: Buffer, **settings: Any) -> bytearray:
    """Compress ``data`` into one Blosc2-format chunk (version 5, 32-byte header) with the
    ``settings`` of :func:`compress_blosc2_view`; the caller owns the bytes."""
    return bytearray(compress_blosc2_view(data, **settings))


def compress_blosc2_view(data: Buffer, **settings: Any) -> memoryview:
    """Compress ``data`` into one Blosc2-format chunk (version 5, 32-byte header) with the
    ``settings`` of :func:`compress_blosc2_into`, kept in this thread's compression buffer:
    the view is valid until the thread compresses again (no new chunk-sized buffer, whose
    pages cost more than compressing where the allocator returns freed memory at once, as in
    ``distributed`` workers)."""
    src = _byte_array(data)
    dest = _compression_scratch(min(src.size, MAX_BUFFERSIZE) + BLOSC2_HEADER_SIZE)
    n = compress_blosc2_into(src, dest, **settings)
    return dest.data[:n].toreadonly()


def compress_blosc2_into(
    data: Buffer,
    dest: Buffer,
    *,
    typesize: int = 8,
    clevel: int = 5,
    codec: str | int = "zstd",
    filters: Sequence[int] = (0, 0, 0, 0, 0, 1),
    filters_meta: Sequence[int] = (0, 0, 0, 0, 0, 0),
    codec_meta: int = 0,
    splitmode: str = "auto",
    blocksize: int = 0,
    use_dict: bool = False,
    nthreads: int | None = None,
) -> int:
    """Compress ``data`` into one Blosc2-format chunk (version 5, 32-byte header) at the start
    of ``dest`` (a writable buffer of at least ``len(data) + 32`` bytes) with ``nthreads`` C
    threads (default: :func:`get_nthreads`); returns the chunk's size.  The blocks are stored
    in order: without a dictionary (whose training differs), the bytes do not depend on
    ``nthreads``."""
    _check_clevel_blocksize(clevel, blocksize)
    if not 1 <= typesize <= MAX_TYPESIZE:
        raise ArgumentError(f"typesize must be 1..{MAX_TYPESIZE}, got {typesize}")
    if len(filters) > 6 or len(filters_meta) > 6:
        raise ArgumentError(f"at most 6 filters, got {list(filters)} / {list(filters_meta)}")
    if not all(0 <= f <= 255 for f in (*filters, *filters_meta, codec_meta)):
        raise ArgumentError("filter ids, filter metas and codec_meta are bytes (0..255)")
    if blocksize % typesize:  # C-Blosc2 would write blocks it cannot split back
        raise ArgumentError(f"blocksize {blocksize} is not a multiple of typesize {typesize}")
    if splitmode not in SPLIT_MODES:
        raise ArgumentError(f"splitmode must be one of {sorted(SPLIT_MODES)}, got {splitmode!r}")
    src = _byte_array(data)
    if src.size > MAX_BUFFERSIZE:
        raise ArgumentError(f"a chunk holds at most {MAX_BUFFERSIZE} bytes, got {src.size}")
    room = src.size + BLOSC2_HEADER_SIZE
    out = _byte_array(dest, writable=True)
    if out.size < room:
        raise ArgumentError(f"a chunk of {src.size} bytes needs a destination of at least"
                            f" {room} bytes, got {out.size}")  # fmt: skip
    out = out[:room]  # (with more room, C-Blosc2 may store a chunk that grew, not a copy)
    key = (
        codec_code(codec), codec_meta, clevel, bool(use_dict), typesize, nthreads or _nthreads,
        blocksize,
        SPLIT_MODES[splitmode], tuple(filters), tuple(filters_meta), src.size,
    )  # fmt: skip
    cctx = _cctx(key)
    n = _libblosc2().blosc2_compress_ctx(cctx, _address(src), src.size, _address(out), out.size)
    if n <= 0:
        raise UnsupportedError(f"C-Blosc2 compression failed (code {n}, codec {codec!r})")
    if (nthreads or _nthreads) > 1:
        _blocks_in_order(out[:n])
    observer = _observer
    if observer is not None:
        observer("compress", src.size)
    return int(n)


def _blocks_in_order(chunk: np.ndarray) -> None:
    """Store the blocks of the Blosc2 ``chunk`` (uint8) in block order, in place.  Several C
    threads store each block where the output stands when it is done, so their chunk differs
    from one thread's by the order of its blocks only: in order, it is one thread's bytes."""
    header = ChunkHeader.parse(chunk[:BLOSC2_HEADER_SIZE].tobytes())
    if header.memcpyed or header.special or header.vl_blocks or header.nblocks < 2:
        return
    starts = np.frombuffer(chunk, "<i4", count=header.nblocks, offset=header.size)
    if bool(np.all(starts[1:] > starts[:-1])):
        return
    order = np.argsort(starts, kind="stable")
    ends = np.empty_like(starts)
    ends[order] = np.append(starts[order][1:], header.cbytes)
    first = int(starts[order[0]])
    data = chunk[first : header.cbytes].copy()
    pieces = [data[start - first : end - first] for start, end in zip(starts, ends, strict=True)]
    np.concatenate(pieces, out=chunk[first : header.cbytes])
    lengths = (ends - starts).astype(np.int64)
    chunk[header.size : header.size + 4 * header.nblocks] = (
        (first + np.cumsum(lengths) - lengths).astype("<i4").view(np.uint8)
    )


def compress_blosc1(
    data: Buffer,
    *,
    typesize: int = 8,
    clevel: int = 7,
    shuffle: int = 1,
    codec: str = "blosclz",
    blocksize: int = 0,
) -> bytes:
    """Compress ``data`` into one Blosc1-format chunk (version 2, 16-byte header) with C-Blosc 1.x,
    the format bloscpack 0.16 and bcolz read.

    A ``blocksize`` is a request that C-Blosc 1.x adjusts by its own rules (8192 became 65536
    for lz4 with typesize 8).
    """
    with blosc1_compressor(
        typesize=typesize, clevel=clevel, shuffle=shuffle, codec=codec, blocksize=blocksize
    ) as compress:
        return compress(data)


@contextlib.contextmanager
def blosc1_compressor(
    *,
    typesize: int = 8,
    clevel: int = 7,
    shuffle: int = 1,
    codec: str = "blosclz",
    blocksize: int = 0,
    concurrent: bool = False,
) -> Iterator[Callable[[Buffer], bytes]]:
    """A function compressing one buffer into a Blosc1 chunk as :func:`compress_blosc1` does.

    python-blosc keeps its settings in globals, so they are held (and other Blosc1
    compressions wait) while the context is open.  With ``concurrent=True`` the function may
    be called from several threads at once, each call using one C thread with the GIL
    released (C-Blosc 1.x's context API), so the bytes never depend on thread scheduling;
    otherwise each call uses :func:`get_nthreads` C threads (which store the blocks of a chunk
    in the order they finish).
    """
    blosc = _blosc1()
    if codec not in blosc1_codecs():
        raise codec_error(codec, "Blosc1 chunks", blosc1_codecs())
    _check_clevel_blocksize(clevel, blocksize)
    if not 1 <= typesize <= 255:
        raise ArgumentError(f"Blosc1 chunks need 1 <= typesize <= 255, got {typesize}")
    if shuffle not in (0, 1, 2):
        raise ArgumentError(f"shuffle must be 0, 1 (byte) or 2 (bit), got {shuffle}")

    def compress(data: Buffer) -> bytes:
        src = _byte_array(data)
        if src.size > BLOSC1_MAX_BUFFERSIZE:
            raise ArgumentError(
                f"a Blosc1 chunk holds at most {BLOSC1_MAX_BUFFERSIZE} bytes, got {src.size}"
            )
        out: bytes = blosc.compress(src, typesize, clevel, shuffle, codec)
        observer = _observer
        if observer is not None:
            observer("compress", src.size)
        return out

    with _blosc1_lock:
        blosc.set_nthreads(1 if concurrent else _nthreads)
        blosc.set_blocksize(blocksize)
        released = blosc.set_releasegil(concurrent)
        try:
            yield compress
        finally:
            blosc.set_blocksize(0)
            blosc.set_releasegil(released)
