"""What every store shares: the :class:`Store` protocol (what a
:class:`~bloscpack.array.BloscArray` reads its items from) and the helpers of selections.

A store reads one array from a reader of the container protocol: a flat layout
(:mod:`.flat`), an N-d chunk grid (:mod:`.grid`) or a table of columns (:mod:`.table`),
chosen by the reader's capability (:class:`~bloscpack.containers.base.GridReader`,
:class:`~bloscpack.containers.base.TableReader`, else a flat layout).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Protocol

import numpy as np

from ...errors import UnsupportedError
from ...selection import Axis, AxisPoints, AxisSelection

Buffer = Any  # any object exporting the buffer protocol
#: Chunks a selection of a container at a URL touches that are read at once, in threads.
CONCURRENT_CHUNKS = 16
#: Largest number of items whose flat positions are planned at once for a strided selection.
GATHER_BATCH_ITEMS = 1 << 20
#: A part of a selection holding at least 1 / DENSE_SPAN of the items from its first to its
#: last (in the layout) is read as that run, then its items taken; sparser ones are gathered.
DENSE_SPAN = 4


class Store(Protocol):
    """The storage behind a :class:`BloscArray`."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def chunks(self) -> tuple[int, ...] | None:
        """The shape of the box one stored chunk holds, or None."""
        ...

    def read(self, selection: tuple[Axis, ...]) -> np.ndarray:
        """The selected items as a new array of ``result_shape(selection)``."""
        ...

    def read_points(self, coords: tuple[np.ndarray, ...]) -> np.ndarray:
        """The items at ``coords`` (one int64 array per axis, non-negative, in range) as a new
        1-d array."""
        ...

    def read_item(self, coords: tuple[int, ...]) -> np.ndarray:
        """The item at ``coords`` (non-negative, in range) as a 0-d array."""
        ...

    def iter_chunks(self) -> Iterator[np.ndarray]:
        """Each stored chunk's items as a new array, in storage order."""
        ...

    def close(self) -> None:
        """Release the files."""
        ...


def allocate(shape: tuple[int, ...], dtype: np.dtype, name: str) -> np.ndarray:
    """A new array of ``shape`` and ``dtype``; one too large for memory is refused, naming
    ``name``."""
    try:
        return np.empty(shape, dtype=dtype)
    except (MemoryError, ValueError) as exc:
        raise UnsupportedError(
            f"{name}: cannot allocate an array of shape {shape} and dtype {dtype} ({exc})"
        ) from None


def box_span(s: Axis) -> int:
    """How many items the box around the selected ones holds along an axis."""
    return int(s.points[-1] - s.points[0]) + 1 if isinstance(s, AxisPoints) else len(s)


def full_selection(selection: tuple[Axis, ...], shape: tuple[int, ...]) -> bool:
    """Whether ``selection`` is the whole array of ``shape``, in order."""
    return all(
        isinstance(s, AxisSelection) and s.start == 0 and s.step == 1 and s.stop == n and not s.drop
        for s, n in zip(selection, shape, strict=True)
    )


def batches(
    selection: tuple[Axis, ...], limit: int, offset: int = 0
) -> Iterator[tuple[tuple[Axis, ...], int]]:
    """Split ``selection`` into parts of at most ``limit`` items (or single lines), each a run
    of the result in C order: ``(part, offset of its first item in the result)``."""
    total = math.prod(len(s) for s in selection)
    axis = next((k for k, s in enumerate(selection) if len(s) > 1), None)
    if total <= limit or axis is None:
        yield selection, offset
        return
    s = selection[axis]
    inner = total // len(s)
    per = max(1, limit // inner)
    for j in range(0, len(s), per):
        part = selection[:axis] + (s.part(j, min(per, len(s) - j)),) + selection[axis + 1 :]
        if inner > limit:
            yield from batches(part, limit, offset + j * inner)
        else:
            yield part, offset + j * inner
