"""Turn a numpy basic index into per-chunk item ranges of a flat chunked layout.

A flat layout stores an N-d array's items in C or F order, cut into chunks of ``chunk_items``
items (the .blp, bcolz and raw-frame layouts).  A selection is planned as, per chunk it touches,
the smallest item range that covers the selected items there, so only those chunks are read and,
inside each, only the blocks of that range are decoded.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class AxisSelection:
    """The items selected along one axis: ``range(start, stop, step)``; ``drop`` for an integer."""

    start: int
    stop: int
    step: int
    drop: bool

    def __len__(self) -> int:
        return len(range(self.start, self.stop, self.step))

    def indices(self) -> np.ndarray:
        """The selected indices as an int64 array."""
        return np.arange(self.start, self.stop, self.step, dtype=np.int64)


def normalize_index(index: Any, shape: tuple[int, ...]) -> tuple[AxisSelection, ...]:
    """One :class:`AxisSelection` per axis for ``index`` (integers, slices, ``Ellipsis``),
    with numpy's rules for negative values and out-of-range integers."""
    items = index if isinstance(index, tuple) else (index,)
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    explicit = sum(1 for i in items if i is not Ellipsis)
    if explicit > len(shape):
        raise IndexError(
            f"too many indices for array: array is {len(shape)}-dimensional,"
            f" but {explicit} were indexed"
        )
    expanded: list[Any] = []
    for i in items:
        if i is Ellipsis:
            expanded.extend([slice(None)] * (len(shape) - explicit))
        else:
            expanded.append(i)
    expanded.extend([slice(None)] * (len(shape) - len(expanded)))
    result = []
    for axis, (i, n) in enumerate(zip(expanded, shape, strict=True)):
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            result.append(AxisSelection(start, stop, step, False))
            continue
        try:
            k = operator.index(i)
        except TypeError:
            raise IndexError(
                f"only integers, slices and '...' are valid indices, got {type(i).__name__}"
            ) from None
        if not -n <= k < n:
            raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
        k %= n
        result.append(AxisSelection(k, k + 1, 1, True))
    return tuple(result)


def result_shape(selection: tuple[AxisSelection, ...]) -> tuple[int, ...]:
    """Shape numpy gives the result of ``selection``."""
    return tuple(len(s) for s in selection if not s.drop)


def contiguous_range(
    selection: tuple[AxisSelection, ...], shape: tuple[int, ...], order: str = "C"
) -> tuple[int, int] | None:
    """``(first, stop)`` flat item range when the selection is one contiguous run of the layout
    in ``order``, else None.  Computed without materialising indices."""
    axes = list(zip(selection, shape, strict=True))
    if order == "F":
        axes.reverse()
    if any(len(s) == 0 for s, _ in axes):
        return (0, 0)
    # Innermost axes must be whole; then one axis with step 1; then single items.
    k = len(axes)
    while k > 0 and axes[k - 1][0].step == 1 and len(axes[k - 1][0]) == axes[k - 1][1]:
        k -= 1
    if k > 0:
        s = axes[k - 1][0]
        if s.step != 1 and len(s) > 1:
            return None
        k -= 1
    if any(len(s) != 1 for s, _ in axes[:k]):
        return None
    first = 0
    for s, n in axes:
        first = first * n + s.start
    count = 1
    for s, _ in axes:
        count *= len(s)
    return first, first + count


def flat_indices(
    selection: tuple[AxisSelection, ...], shape: tuple[int, ...], order: str = "C"
) -> np.ndarray:
    """Flat item numbers (in the layout's ``order``) of every selected item, in result order."""
    grids = np.ix_(*[s.indices() for s in selection]) if selection else ()
    if not selection:
        return np.zeros((), dtype=np.int64)
    flat = np.ravel_multi_index(grids, shape, order=order)  # type: ignore[call-overload]
    return np.asarray(flat, dtype=np.int64)


def chunk_ranges(first: int, stop: int, chunk_items: int) -> Iterator[tuple[int, int, int]]:
    """``(chunk, start, stop)`` item ranges, relative to each chunk, covering ``[first, stop)``."""
    item = first
    while item < stop:
        chunk = item // chunk_items
        base = chunk * chunk_items
        end = min(stop, base + chunk_items)
        yield chunk, item - base, end - base
        item = end


def group_by_chunk(
    flat: np.ndarray, chunk_items: int
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """For each chunk touched by ``flat`` (any shape): ``(chunk, positions, items)`` where
    ``positions`` index ``flat.ravel()`` and ``items`` are item numbers inside the chunk."""
    flat = flat.ravel()
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    chunks = ordered // chunk_items
    bounds = np.flatnonzero(np.diff(chunks)) + 1
    for part in np.split(np.arange(len(ordered)), bounds):
        if len(part):
            chunk = int(chunks[part[0]])
            yield chunk, order[part], ordered[part] - chunk * chunk_items
