"""Dask arrays over any container (the optional extra ``dask``), and dask arrays saved in
parallel to any format.

A graph holds the container's path, never an open file nor any data: each task reopens the
container in the process that runs it (kept open per process, reopened when the file changes),
so graphs pickle small and run on ``distributed`` workers in other processes or machines.
Every task reads only the chunks (and blocks) its slice touches, through the lazy arrays of
:func:`bloscpack.open`, which many threads may share.

:func:`save_dask` cuts a dask array into the chunks of the new container's layout
(:class:`~bloscpack.containers.base.ContainerWriter`); each task compresses one chunk (and,
where chunks are files of their own, writes it into the staged directory), and this process
appends them in order, a bounded number at a time, then commits.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import CancelledError
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

from .. import chunkmanagers, engine
from ..array import BloscArray
from ..containers import registry
from ..containers.base import map_chunks, stage_run
from ..errors import ArgumentError, BloscpackError
from ..io.paths import PathLike
from ..url import is_url
from . import optional
from .pandas import table_array, table_columns
from .reopen import ContainerSlices, identity, opened


def storage_chunks(lazy: BloscArray) -> tuple[int, ...]:
    """Dask chunks matching the container's stored chunks: their box, or whole rows of about
    a stored chunk's bytes where stored chunks do not cut the array into boxes."""
    if lazy.chunks is not None:
        return tuple(max(1, c) for c in lazy.chunks)
    if not lazy.shape:
        return ()
    row = max(1, lazy.dtype.itemsize * int(np.prod(lazy.shape[1:], dtype=np.int64)))
    return (max(1, lazy.chunk_nbytes // row), *lazy.shape[1:])


def to_dask(path: PathLike, chunks: Any = None, *, columns: Any = None,
            storage_options: Any = None) -> Any:  # fmt: skip
    """The container at ``path`` (a path, or a URL read with ``storage_options``) as a
    ``dask.array.Array`` (a ctable: a dict of one array per column, ``columns`` picking
    them).  ``chunks`` default to the stored chunks (see
    :func:`storage_chunks`); ``"auto"`` gives dask's chunk size in whole stored chunks; any
    other dask ``chunks`` value is accepted, and chunks that split stored chunks read those
    stored chunks (or their blocks) once per dask chunk."""
    da = optional("dask.array", "dask")
    tokenize = optional("dask.base", "dask").tokenize
    name = os.fspath(path) if is_url(path) else os.path.abspath(os.fspath(path))
    with BloscArray(name, storage_options=storage_options) as lazy:
        names = lazy.columns
        if names is None and columns is not None:
            raise ArgumentError(f"{name}: only a table (a bcolz ctable) has columns")
        parts = [None] if names is None else list(names if columns is None else columns)
        for column in parts:
            if column is not None and column not in (names or ()):
                raise ArgumentError(f"{name}: no column {column!r}; the table has"
                                    f" {', '.join(names or ())}")  # fmt: skip
        version = identity(name)
        arrays = {}
        for column in parts:
            part = lazy if column is None else lazy[column]
            source = ContainerSlices(name, column, part.shape, part.dtype, storage_options)
            stored = storage_chunks(part)
            wanted = stored if chunks is None else chunks
            if wanted == "auto":  # dask's size, in whole stored chunks
                wanted = da.core.normalize_chunks("auto", part.shape, dtype=part.dtype,
                                                  previous_chunks=stored)  # fmt: skip
            arrays[column] = da.from_array(
                source, chunks=wanted,
                name=f"bloscpack-{tokenize(name, column, version, chunks)}",
                lock=False, asarray=False, fancy=False,
                meta=np.empty((0,) * part.ndim, part.dtype),
            )  # fmt: skip
    return arrays[None] if names is None else arrays


chunkmanagers.register("dask", to_dask)  # what BloscArray.to_dask calls


def _table_rows(part: tuple[str, tuple[str, ...], int, int]) -> Any:
    """Rows ``[start, stop)`` of the table at ``path`` as a DataFrame (index: the row numbers)."""
    pd = optional("pandas", "pandas")
    path, names, start, stop = part
    data = {name: opened(path, name)[start:stop] for name in names}
    return pd.DataFrame(data, index=pd.RangeIndex(start, stop))


def to_dask_dataframe(path: PathLike, columns: Any = None, rows: int | None = None) -> Any:
    """The table at ``path`` (a bcolz ctable) as a ``dask.dataframe.DataFrame`` of its columns
    (``columns`` picks them, and only those are read), one partition per stored chunk of rows
    (or per ``rows`` rows); the index is the row number, so partitions know their divisions."""
    dd = optional("dask.dataframe", "dask")
    pd = optional("pandas", "pandas")
    name = os.path.abspath(os.fspath(path))
    with BloscArray(name) as lazy:
        if lazy.columns is None:
            raise ArgumentError(f"{name}: only a table (a bcolz ctable) is read as a DataFrame")
        names = tuple(table_columns(lazy, columns, name))
        empty = {column: np.empty(0, lazy.dtype[column]) for column in names}
        meta = pd.DataFrame(empty, index=pd.RangeIndex(0, 0))
        length = lazy.shape[0]
        step = rows or storage_chunks(lazy[names[0]])[0]
    starts = list(range(0, length, step)) or [0]
    parts = [(name, names, s, min(s + step, length)) for s in starts]
    return dd.from_map(_table_rows, parts, meta=meta, divisions=(*starts, max(length - 1, 0)))


def is_dask_array(value: Any) -> bool:
    """Whether ``value`` is a ``dask.array.Array`` (without importing dask)."""
    kind = type(value)
    return kind.__module__.startswith("dask.array") and kind.__name__ == "Array"


#: The uncompressed bytes of the chunks one task compresses (fewer, larger tasks: the
#: scheduler's cost per task would dominate with chunks of 1 MiB).
TASK_NBYTES = 16 * 2**20
#: Threads a task works with, its own: one writes a chunk while another compresses the next
#: (a ``distributed`` worker runs a task on one thread, and writing a file is a quarter to
#: half of the time compressing a chunk takes).
TASK_THREADS = 2
#: File formats: the uncompressed bytes of the chunks computed in one batch (two batches are
#: computed or waiting at a time, so memory stays flat whatever the array's size).
BATCH_NBYTES = 64 * 2**20
#: File formats on a ``distributed`` cluster: tasks on this machine write their compressed
#: chunks to files next to the output, which the kernel copies into it, rather than sending
#: them to this process (False: always send them).
STAGE_RUNS = True


@dataclass(frozen=True)
class StagedRun:
    """What a task wrote of a run of chunks (:func:`~bloscpack.containers.base.stage_run`):
    the file and a receipt per chunk."""

    path: str
    receipts: list[Any]


def save_dask(array: Any, path: PathLike, fmt: str, *, overwrite: bool = True,
              storage_options: Mapping[str, Any] | None = None,
              metadata: Mapping[str, Any] | None = None, **options: Any) -> None:  # fmt: skip
    """Save the dask ``array`` (of known chunk sizes: :func:`sized`) to ``path`` in ``fmt``
    on the active scheduler (a ``distributed.Client`` when one is active): the bytes
    :func:`bloscpack.save` writes for the computed array, with the user ``metadata``.  The
    array is rechunked to runs of the container's chunks (:func:`_runs`); each task
    compresses a run (and, in a directory format, writes the chunk files), and this process
    appends the chunks in order, computed in batches of :data:`BATCH_NBYTES` (file formats:
    at most two batches at a time).  A table (a structured array saved as a bcolz ctable) is
    written column by column, all columns' tasks in one computation.  A failed or cancelled
    computation leaves no output.  ``path`` may be a URL (``storage_options`` reach it): the
    container is built locally, then uploaded."""
    with engine.threads(options.pop("nthreads", None)):
        writer = registry.open_writer(path, fmt, array.dtype, array.shape, overwrite=overwrite,
                                      storage_options=storage_options, metadata=metadata,
                                      **options)  # fmt: skip
    with writer:
        if writer.columns is None:
            parts = [(writer, array)]
        else:
            parts = [(column, array[name]) for name, column in writer.columns.items()]
        _write_parts(parts, os.fspath(path), writer.directory is not None)


def _write_parts(parts: Sequence[tuple[Any, Any]], name: str, directory: bool) -> None:
    """Write each dask array of ``parts`` through its writer (a container's, or a table
    column's), all in one computation (the arrays' common inputs computed once); ``directory``:
    the writers store their chunk files themselves (then every task runs at once)."""
    stage = None
    if not directory and STAGE_RUNS and _active_client() is not None:
        stage = _stage(parts[0][0])
    tasks, owners, nbytes = [], [], 1
    for part, data in parts:
        task: Callable[..., Any]
        extra: tuple[Any, ...]
        if part.directory is not None:
            task, extra = _store_chunks, (part.directory,)
        elif stage is not None:
            task, extra = _stage_chunks, stage
        else:
            task, extra = _compress_chunks, ()
        runs, nbytes = _runs(data, part.layout, task, extra)
        tasks += runs
        owners += [part] * len(runs)
    batch = len(tasks) if directory else max(1, BATCH_NBYTES // nbytes)
    appended = {id(part): 0 for part, _ in parts}
    for part, run in zip(owners, _in_order(tasks, batch, name), strict=True):
        results = run.item()  # the run task's one-element array
        if isinstance(results, StagedRun):
            part.append_run(results.path, results.receipts)
            os.remove(results.path)
            appended[id(part)] += len(results.receipts)
            continue
        for result in results:
            if part.directory is None:
                part.append_chunk(result)
            else:
                part.append_stored(appended[id(part)], result)
            appended[id(part)] += 1
    for part, _ in parts:
        if appended[id(part)] != part.layout.nchunks:
            raise ArgumentError(f"{name}: {appended[id(part)]} chunks computed, the layout has"
                                f" {part.layout.nchunks}")  # fmt: skip


def is_dask_dataframe(value: Any) -> bool:
    """Whether ``value`` is a ``dask.dataframe.DataFrame`` (without importing dask)."""
    kind = type(value)
    return kind.__module__.startswith("dask.") and kind.__name__ == "DataFrame"


def sized(value: Any, path: PathLike | None = None) -> Any:
    """The dask array ``value`` with its chunk sizes known (computed when some are not, as
    after a boolean selection: the array is computed once more), or the dask DataFrame
    ``value`` as a table (:func:`dask_table`; messages name ``path``)."""
    if is_dask_dataframe(value):
        return dask_table(value, path)
    if any(np.isnan(n) for n in value.shape):
        return value.compute_chunk_sizes()
    return value


def dask_table(frame: Any, path: PathLike | None = None) -> Any:
    """The dask DataFrame ``frame`` as a 1-d structured dask array, one field per column, as
    :func:`~bloscpack.integrations.pandas.table_array` makes of a pandas DataFrame (the same
    checks, text as fixed-width unicode; the index is not kept).  The partitions' lengths and
    the widths of text columns are computed first (one pass over ``frame``), so the data is
    computed twice."""
    dask = optional("dask", "dask")
    da = optional("dask.array", "dask")
    empty = table_array(frame._meta, path=path)  # the column checks, before any computing
    text = [name for name in empty.dtype.names or () if empty.dtype[name].kind == "U"]
    partitions = frame.to_delayed()
    where = None if path is None else os.fspath(path)  # messages name it
    shapes = dask.compute(*[dask.delayed(_partition_shape, pure=True)(part, text, where)
                            for part in partitions])  # fmt: skip
    widths = {name: max([1, *(shape[1][k] for shape in shapes)]) for k, name in enumerate(text)}
    dtype = np.dtype([(name, f"<U{widths[name]}" if name in widths else empty.dtype[name])
                      for name in empty.dtype.names or ()])  # fmt: skip
    blocks = [da.from_delayed(dask.delayed(table_array, pure=True)(part, dtype, where),
                              shape=(length,), dtype=dtype)
              for part, (length, _) in zip(partitions, shapes, strict=True) if length]  # fmt: skip
    return da.concatenate(blocks) if blocks else da.from_array(np.empty(0, dtype))


def _partition_shape(frame: Any, text: Sequence[str], path: str | None
                     ) -> tuple[int, list[int]]:  # fmt: skip
    """The rows of the pandas DataFrame ``frame`` and the widest value of each of its ``text``
    columns (in characters), every column checked as :func:`table_array` checks it (messages
    name ``path``)."""
    table = table_array(frame, path=path)
    return len(frame), [table.dtype[name].itemsize // 4 for name in text]


def _runs(array: Any, layout: Any, task: Callable[..., Any], extra: tuple[Any, ...]
          ) -> tuple[list[Any], int]:  # fmt: skip
    """The tasks ``task(layout, first, run, *extra)`` of ``array`` (flattened for a flat
    layout) cut into runs of consecutive chunks of ``layout`` along the last axis its chunk
    grid cuts: as many as a dask chunk holds when the dask chunks hold whole ones, else about
    :data:`TASK_NBYTES` (``first``: the index of the run's first chunk).  The tasks are one
    graph layer (:func:`_run_task`), as dask delayed objects in order, each computing a
    one-element object array of the task's result; also returns the uncompressed bytes of
    a run."""
    chunk_nbytes = int(np.prod(layout.chunks)) * max(array.dtype.itemsize, 1)
    per_task = max(1, TASK_NBYTES // chunk_nbytes)
    if layout.flat and array.ndim > 1:  # whole rows first: reshape(-1) rechunks nothing
        row = max(1, int(np.prod(array.shape[1:])))
        rows = max(1, layout.chunks[0] * per_task // row)
        array = array.rechunk((rows, *array.shape[1:]), method="tasks")
    data = array.reshape(-1) if layout.flat else array
    counts = [-(-n // c) for n, c in zip(data.shape, layout.chunks, strict=True)]
    axis = max((i for i, count in enumerate(counts) if count > 1), default=0)
    if data.ndim:
        own, rem = divmod(data.chunks[axis][0], layout.chunks[axis])
        if not rem and own * chunk_nbytes <= 4 * TASK_NBYTES:  # the dask chunks' runs: no moves
            per_task = own
        wide = list(layout.chunks)
        wide[axis] *= per_task
        # task rechunking: each run depends on the few blocks it takes, no barrier
        data = data.rechunk(tuple(wide), method="tasks")
    runs = data.map_blocks(
        _run_task, task, layout, (axis, per_task, counts), extra, dtype=object,
        chunks=tuple((1,) * len(c) for c in data.chunks), meta=np.empty((0,) * data.ndim, object),
    )  # fmt: skip
    return list(runs.to_delayed(optimize_graph=False).ravel()), chunk_nbytes * per_task


def _run_task(block: np.ndarray, task: Callable[..., Any], layout: Any,
              grid: tuple[int, int, list[int]], extra: tuple[Any, ...],
              block_id: tuple[int, ...] = ()) -> np.ndarray:  # fmt: skip
    """``task(layout, first, block, *extra)`` for the run ``block`` at ``block_id`` in the runs
    of :func:`_runs` (``grid``: the axis they cut, the chunks per run and the chunk grid's
    shape), in a one-element object array (a block of the array of runs)."""
    axis, per_task, counts = grid
    start = list(block_id)
    if start:
        start[axis] *= per_task
    first = int(np.ravel_multi_index(start, counts)) if counts else 0
    out = np.empty((1,) * block.ndim, object)
    out[(0,) * block.ndim] = task(layout, first, block, *extra)
    return out


def _compress_chunks(layout: Any, first: int, block: np.ndarray) -> list[Any]:
    """The chunks ``first``, ``first + 1``, ... of ``layout`` that ``block`` holds,
    compressed."""
    return list(map_chunks(layout.compress_chunk, block, layout.chunks, first))


def _stage(writer: Any) -> tuple[str, str]:
    """A directory for the runs tasks write (:meth:`ContainerWriter.run_directory`) and the
    name of a file made there, which tells a task that it runs on this machine."""
    directory = writer.run_directory()
    token = f"{os.getpid()}-{os.urandom(8).hex()}.here"
    with open(os.path.join(directory, token), "x"):
        pass
    return directory, token


def _stage_chunks(layout: Any, first: int, block: np.ndarray, directory: str,
                  token: str) -> StagedRun | list[Any]:  # fmt: skip
    """The chunks ``first``, ``first + 1``, ... of ``layout`` that ``block`` holds, written
    to a file of ``directory`` as the container's file holds them, when this task runs on the
    machine that made it (the file ``token`` is there); else :func:`_compress_chunks`."""
    if not os.path.exists(os.path.join(directory, token)):
        return _compress_chunks(layout, first, block)
    path = os.path.join(directory, f"{first:012d}-{os.urandom(4).hex()}.run")
    return StagedRun(path, stage_run(layout, path, first, block, TASK_THREADS))


def _store_chunks(layout: Any, first: int, block: np.ndarray, directory: str) -> list[Any]:
    """:func:`_compress_chunks`, each chunk stored in its file in ``directory``."""
    store = functools.partial(layout.store_chunk, directory)
    return list(map_chunks(store, block, layout.chunks, first, TASK_THREADS, own_threads=True))


def _in_order(tasks: Sequence[Any], batch: int, name: str) -> Iterator[Any]:
    """The results of the delayed ``tasks``, in order, computed ``batch`` at a time (on a
    ``distributed`` client, the next batch while this one's results are taken).  A failure
    waits for the tasks running, cancels the others and is raised (``name``: the output, for
    messages)."""
    dask = optional("dask", "dask")
    batches = [tasks[start : start + batch] for start in range(0, len(tasks), batch)]
    client = _active_client()
    if client is None:
        for part in batches:
            yield from dask.compute(*part)
        return
    source = iter(batches)
    pending = deque(client.compute(part) for part in islice(source, 2))
    try:
        done = 0
        while pending:
            futures = pending[0]
            _wait(futures)
            for index, future in enumerate(futures, done):
                if future.status == "cancelled":  # its result() would not say why
                    raise BloscpackError(f"{name}: the task of chunk {index} was cancelled (a"
                                         " worker died, or the cluster restarted?); nothing"
                                         " was written")  # fmt: skip
            results = client.gather(futures)
            client.cancel(pending.popleft())
            pending.extend(client.compute(part) for part in islice(source, 1))
            done += len(results)
            yield from results
    finally:
        if pending:
            running = [future for futures in pending for future in futures]
            with contextlib.suppress(TimeoutError):
                _wait(running, timeout=60)
            client.cancel(running)


def _wait(futures: Sequence[Any], timeout: float | None = None) -> None:
    """Wait until each of the ``distributed`` ``futures`` is finished, failed or cancelled
    (which the caller checks)."""
    distributed = optional("distributed", "dask")
    with contextlib.suppress(CancelledError):  # distributed raises it for cancelled ones
        distributed.wait(futures, timeout=timeout)


def _active_client() -> Any:
    """The ``distributed.Client`` dask computes on, if one is active (and no other scheduler
    is set in dask's config)."""
    dask = optional("dask", "dask")
    if dask.config.get("scheduler", None) not in (None, "dask.distributed", "distributed"):
        return None
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:
        return None


__all__ = [
    "BATCH_NBYTES", "STAGE_RUNS", "TASK_NBYTES", "TASK_THREADS", "StagedRun", "dask_table",
    "is_dask_array", "is_dask_dataframe", "save_dask", "sized", "storage_chunks", "to_dask",
    "to_dask_dataframe",
]  # fmt: skip
