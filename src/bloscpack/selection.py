"""Turn a numpy index into what a lazy array reads, and into per-chunk item ranges of a flat
chunked layout.

:func:`plan_index` reads an index the three ways a :class:`~bloscpack.array.BloscArray` takes
one: ``a[...]`` (numpy's result), ``a.oindex[...]`` (orthogonal: each array index selects along
its own axis, like zarr's ``oindex``) and ``a.vindex[...]`` (points: integer arrays broadcast
together, or a mask of the array's shape).  An orthogonal plan reads one
:class:`AxisSelection` (a range) or :class:`AxisPoints` (sorted distinct indices) per axis and
then puts the items in the index's order; a point plan reads coordinates.

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

from .errors import SelectionError


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

    def part(self, first: int, count: int) -> AxisSelection:
        """Items ``first`` to ``first + count`` of this selection."""
        start = self.start + first * self.step
        return AxisSelection(start, start + count * self.step, self.step, self.drop)


@dataclass(frozen=True, eq=False)
class AxisPoints:
    """The items selected along one axis by an index array: ``points``, sorted, distinct and in
    range (int64).  Evenly spaced points are an :class:`AxisSelection` instead (see
    :func:`axis_of`)."""

    points: np.ndarray
    drop = False

    def __len__(self) -> int:
        return len(self.points)

    def indices(self) -> np.ndarray:
        """The selected indices as an int64 array."""
        return self.points

    def part(self, first: int, count: int) -> AxisPoints:
        """Items ``first`` to ``first + count`` of this selection."""
        return AxisPoints(self.points[first : first + count])


Axis = AxisSelection | AxisPoints


def axis_of(points: np.ndarray) -> Axis:
    """The selection of ``points`` (sorted, distinct, in range): a range when they are evenly
    spaced (so contiguous runs are read as runs), else :class:`AxisPoints`."""
    if len(points) == 0:
        return AxisSelection(0, 0, 1, False)
    first, last = int(points[0]), int(points[-1])
    step = int(points[1] - points[0]) if len(points) > 1 else 1
    if len(points) == 1 or bool(np.all(np.diff(points) == step)):
        return AxisSelection(first, last + 1, step, False)
    return AxisPoints(np.ascontiguousarray(points, dtype=np.int64))


def normalize_index(index: Any, shape: tuple[int, ...]) -> tuple[AxisSelection, ...]:
    """One :class:`AxisSelection` per axis for ``index`` (integers, slices, ``Ellipsis``),
    with numpy's rules for negative values and out-of-range integers."""
    items = index if isinstance(index, tuple) else (index,)
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise SelectionError("an index can only have a single ellipsis ('...')")
    explicit = sum(1 for i in items if i is not Ellipsis)
    if explicit > len(shape):
        raise SelectionError(
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
            raise SelectionError(
                f"only integers, slices and '...' are valid indices, got {type(i).__name__}"
            ) from None
        if not -n <= k < n:
            raise SelectionError(f"index {k} is out of bounds for axis {axis} with size {n}")
        k %= n
        result.append(AxisSelection(k, k + 1, 1, True))
    return tuple(result)


def result_shape(selection: tuple[Axis, ...]) -> tuple[int, ...]:
    """Shape numpy gives the result of ``selection``."""
    return tuple(len(s) for s in selection if not s.drop)


def contiguous_range(
    selection: tuple[Axis, ...], shape: tuple[int, ...], order: str = "C"
) -> tuple[int, int] | None:
    """``(first, stop)`` flat item range when the selection is one contiguous run of the layout
    in ``order``, else None.  Computed without materialising indices."""
    axes = list(zip(selection, shape, strict=True))
    if order == "F":
        axes.reverse()
    if any(len(s) == 0 for s, _ in axes):
        return (0, 0)
    ranges: list[tuple[AxisSelection, int]] = [
        (s, n) for s, n in axes if isinstance(s, AxisSelection)
    ]
    if len(ranges) < len(axes):
        return None
    # Innermost axes must be whole; then one axis with step 1; then single items.
    k = len(ranges)
    while k > 0 and ranges[k - 1][0].step == 1 and len(ranges[k - 1][0]) == ranges[k - 1][1]:
        k -= 1
    if k > 0:
        s = ranges[k - 1][0]
        if s.step != 1 and len(s) > 1:
            return None
        k -= 1
    if any(len(s) != 1 for s, _ in ranges[:k]):
        return None
    first = 0
    for s, n in ranges:
        first = first * n + s.start
    count = 1
    for s, _ in ranges:
        count *= len(s)
    return first, first + count


def flat_span(selection: tuple[Axis, ...], shape: tuple[int, ...]) -> tuple[int, int]:
    """The C-order flat item numbers of the first and the last item a (non-empty) selection
    holds, computed without materialising indices."""
    first = last = 0
    for s, n in zip(selection, shape, strict=True):
        ends = (s.points[0], s.points[-1]) if isinstance(s, AxisPoints) else (
            s.start, s.start + (len(s) - 1) * s.step)
        first = first * n + int(min(ends))
        last = last * n + int(max(ends))
    return first, last


def flat_indices(
    selection: tuple[Axis, ...], shape: tuple[int, ...], order: str = "C"
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


def ascending_order(flat: np.ndarray) -> np.ndarray:
    """Positions that sort the 1-d ``flat`` (stable); no sorting when it is sorted already."""
    if len(flat) < 2 or bool(np.all(flat[1:] >= flat[:-1])):
        return np.arange(len(flat))
    return np.argsort(flat, kind="stable")


def group_by_chunk(
    flat: np.ndarray, chunk_items: int
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """For each chunk touched by ``flat`` (any shape): ``(chunk, positions, items)`` where
    ``positions`` index ``flat.ravel()`` and ``items`` are item numbers inside the chunk."""
    flat = flat.ravel()
    order = ascending_order(flat)
    ordered = flat[order]
    chunks = ordered // chunk_items
    bounds = np.flatnonzero(np.diff(chunks)) + 1
    for part in np.split(np.arange(len(ordered)), bounds):
        if len(part):
            chunk = int(chunks[part[0]])
            yield chunk, order[part], ordered[part] - chunk * chunk_items


# --- numpy, orthogonal and point indexing --------------------------------------------------

#: How a lazy array reads an index: numpy's ``a[...]``, ``a.oindex[...]``, ``a.vindex[...]``.
NUMPY, ORTHOGONAL, POINTS = "numpy", "oindex", "vindex"

_VALID = "only integers, slices, '...', None (np.newaxis) and integer or boolean arrays"


@dataclass(frozen=True, eq=False)
class OrthogonalPlan:
    """Read :attr:`selection` (one range or set of sorted points per axis), then
    :meth:`finish` puts the items in the index's order and shape."""

    selection: tuple[Axis, ...]
    #: ``(axis of the read result, positions into it)``: the points in the index's order,
    #: repeats included; the positions' shape replaces the axis (last axes first)
    takes: tuple[tuple[int, np.ndarray], ...]
    #: ``(first, count)``: dimensions numpy moves to the front of the result, else None
    front: tuple[int, int] | None
    shape: tuple[int, ...]
    scalar: bool  # numpy gives a scalar, not a 0-d array

    def finish(self, data: np.ndarray) -> Any:
        """The result of the index from the items :attr:`selection` read."""
        for axis, positions in self.takes:
            data = np.take(data, positions, axis=axis)
        if self.front is not None:
            first, count = self.front
            data = np.moveaxis(data, list(range(first, first + count)), list(range(count)))
        data = data.reshape(self.shape)
        return data[()] if self.scalar else data


@dataclass(frozen=True, eq=False)
class PointPlan:
    """Read the items at :attr:`coords` (one int64 array per axis, non-negative, in range),
    then shape them as :attr:`shape`."""

    coords: tuple[np.ndarray, ...]
    shape: tuple[int, ...]
    scalar: bool

    def finish(self, data: np.ndarray) -> Any:
        """The result of the index from the items at :attr:`coords` (1-d)."""
        data = data.reshape(self.shape)
        return data[()] if self.scalar else data


def _describe(value: Any) -> str:
    return f"{value!r:.40} ({type(value).__name__})"


def _classify(item: Any) -> tuple[str, Any]:
    """``(kind, value)`` of one entry of an index: ``...``, ``new``, ``int``, ``slice`` or
    ``array`` (an integer or boolean array of at least one dimension)."""
    if item is Ellipsis:
        return "...", item
    if item is None:
        return "new", item
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, (bool, np.bool_)):
        raise SelectionError(
            f"a boolean scalar ({item}) is not a valid index here: use None (np.newaxis) to add"
            " an axis, or a 1-d boolean mask to select along one"
        )
    if isinstance(item, (int, np.integer)):
        return "int", operator.index(item)
    if isinstance(item, (list, tuple, np.ndarray)):
        try:
            array = np.asarray(item)
        except ValueError:  # ragged lists
            raise SelectionError(
                f"{_VALID} are valid indices, got a ragged list: give one list per axis"
            ) from None
        if array.size == 0 and not isinstance(item, np.ndarray):
            array = array.astype(np.intp)  # numpy reads [] as an empty integer index
        if array.dtype.kind == "b":
            if array.ndim == 0:
                return _classify(bool(array))
            return "array", array
        if array.dtype.kind in "iu":
            return ("int", operator.index(array)) if array.ndim == 0 else ("array", array)
        raise SelectionError(
            f"an index array must hold integers or booleans, got dtype {array.dtype}: convert"
            " it (x.astype(int)) or build a boolean mask"
        )
    if isinstance(item, (float, np.floating)):
        raise SelectionError(
            f"{_VALID} are valid indices, got the float {item!r}: use int({item!r})"
        )
    if isinstance(item, str):
        raise SelectionError(
            f"{_VALID} are valid indices, got the string {item!r:.40} (field names are taken"
            " only alone, as a[name])"
        )
    raise SelectionError(f"{_VALID} are valid indices, got {_describe(item)}")


def _axes_taken(kind: str, value: Any) -> int:
    if kind in ("int", "slice"):
        return 1
    if kind == "array":
        return value.ndim if value.dtype.kind == "b" else 1
    return 0


def _expand(index: Any, ndim: int) -> list[tuple[str, Any]]:
    """The classified entries of ``index`` with ``...`` replaced by full slices (an explicit
    ``...`` entry is kept, taking no axis, where numpy needs to know it was there)."""
    items = [_classify(i) for i in (index if isinstance(index, tuple) else (index,))]
    if sum(1 for kind, _ in items if kind == "...") > 1:
        raise SelectionError("an index can only have a single ellipsis ('...')")
    explicit = sum(_axes_taken(kind, value) for kind, value in items)
    if explicit > ndim:
        raise SelectionError(
            f"too many indices for array: array is {ndim}-dimensional, but {explicit} were"
            " indexed"
        )
    expanded: list[tuple[str, Any]] = []
    for kind, value in items:
        expanded.append((kind, value))
        if kind == "...":
            expanded.extend([("slice", slice(None))] * (ndim - explicit))
    if not any(kind == "..." for kind, _ in items):
        expanded.extend([("slice", slice(None))] * (ndim - explicit))
    return expanded


def _in_range(values: np.ndarray, n: int, axis: int) -> np.ndarray:
    """``values`` (integers) made non-negative, as int64; numpy's error for the first one out
    of bounds."""
    values = np.asarray(values)
    if values.dtype.kind == "u" and values.dtype.itemsize >= 8:
        big = values > np.iinfo(np.int64).max
        if big.any():
            raise SelectionError(
                f"index {values[big].flat[0]} is out of bounds for axis {axis} with size {n}"
            )
    values = values.astype(np.int64)
    bad = (values < -n) | (values >= n)
    if bad.any():
        raise SelectionError(
            f"index {values[bad].flat[0]} is out of bounds for axis {axis} with size {n}"
        )
    return np.where(values < 0, values + n, values)


def _check_mask(mask: np.ndarray, shape: tuple[int, ...], axis: int) -> None:
    for k, (m, n) in enumerate(zip(mask.shape, shape[axis:], strict=False)):
        if m != n:
            raise SelectionError(
                f"boolean index did not match indexed array along axis {axis + k}; size of"
                f" axis is {n} but size of corresponding boolean axis is {m}"
            )


def plan_index(index: Any, shape: tuple[int, ...], mode: str = NUMPY) -> OrthogonalPlan | PointPlan:
    """How to read ``index`` of an array of ``shape``: ``mode`` :data:`NUMPY` gives numpy's
    result (and refuses two or more array indices, where numpy broadcasts them together),
    :data:`ORTHOGONAL` selects along each axis on its own, :data:`POINTS` picks points."""
    if mode == POINTS:
        return _plan_points(index, shape)
    expanded = _expand(index, len(shape))
    arrays = [value for kind, value in expanded if kind == "array"]
    if mode == NUMPY:
        if len(arrays) > 1:
            raise SelectionError(
                f"a[...] with {len(arrays)} array indices: numpy would broadcast them together;"
                " use a.oindex[...] to select along each axis on its own (every combination)"
                " or a.vindex[...] for the points numpy's a[...] picks"
            )
        if arrays and arrays[0].dtype.kind == "b" and arrays[0].ndim > 1:
            if arrays[0].ndim == len(shape):
                return _plan_points((arrays[0],), shape)
            raise SelectionError(
                f"a {arrays[0].ndim}-d boolean mask over some of the {len(shape)} axes is not"
                " supported: use a.vindex[mask] with a mask of the array's shape, or"
                " np.asarray(a)[...] to select in memory"
            )
    else:
        for value in arrays:
            if value.ndim != 1:
                raise SelectionError(
                    f"a.oindex[...] takes 1-d integer arrays or 1-d boolean masks, one per"
                    f" axis, got a {value.ndim}-d array: use a.vindex[...] for points"
                )
    return _plan_orthogonal(expanded, shape, mode)


def _plan_orthogonal(expanded: list[tuple[str, Any]], shape: tuple[int, ...],
                     mode: str) -> OrthogonalPlan:  # fmt: skip
    selection: list[Axis] = []
    takes: list[tuple[int, np.ndarray]] = []
    dims: list[tuple[str, tuple[int, ...]]] = []  # ("axis"|"new"|"array", shape) of the result
    read_axes = 0  # axes of the read result so far
    axis = 0
    ints = []  # (axis, value): checked after masks and before arrays, as numpy does
    for kind, value in expanded:
        if kind == "int":
            ints.append((axis, value))
        elif kind == "array" and value.dtype.kind == "b":
            _check_mask(value, shape, axis)
        axis += kind in ("int", "slice", "array")
    for k, value in ints:
        n = shape[k]
        if not -n <= value < n:
            raise SelectionError(f"index {value} is out of bounds for axis {k} with size {n}")
    axis = 0
    for kind, value in expanded:
        if kind == "new":
            dims.append(("new", (1,)))
        elif kind == "int":
            k = value % shape[axis]
            selection.append(AxisSelection(k, k + 1, 1, True))
            axis += 1
        elif kind == "slice":
            start, stop, step = value.indices(shape[axis])
            part = AxisSelection(start, stop, step, False)
            selection.append(part)
            dims.append(("axis", (len(part),)))
            read_axes += 1
            axis += 1
        elif kind == "array":
            n = shape[axis]
            if value.dtype.kind == "b":
                points = np.flatnonzero(value).astype(np.int64)
                selection.append(axis_of(points))
                dims.append(("array", (len(points),)))
            else:
                wanted = _in_range(value, n, axis).reshape(-1)
                points, positions = np.unique(wanted, return_inverse=True)
                selection.append(axis_of(points))
                if value.ndim != 1 or len(points) != len(wanted) or (
                    len(wanted) > 1 and bool(np.any(wanted[1:] < wanted[:-1]))
                ):
                    takes.append((read_axes, positions.reshape(value.shape)))
                dims.append(("array", value.shape))
            read_axes += 1
            axis += 1
    front = None
    if mode == NUMPY and any(kind == "array" for kind, _ in expanded):
        advanced = [k for k, (kind, _) in enumerate(expanded) if kind in ("int", "array")]
        if advanced[-1] - advanced[0] + 1 != len(advanced):  # numpy puts them first
            first = sum(1 for kind, _ in dims[: [d[0] for d in dims].index("array")]
                        if kind == "axis")  # fmt: skip
            count = len(next(s for kind, s in dims if kind == "array"))
            front = (first, count)
            dims.sort(key=lambda d: d[0] != "array")  # stable: the rest keep their order
    out_shape = tuple(n for _, s in dims for n in s)
    scalar = not out_shape and not any(kind == "..." for kind, _ in expanded)
    takes.sort(key=lambda t: -t[0])
    return OrthogonalPlan(tuple(selection), tuple(takes), front, out_shape, scalar)


def _plan_points(index: Any, shape: tuple[int, ...]) -> PointPlan:
    items = [_classify(i) for i in (index if isinstance(index, tuple) else (index,))]
    usage = (
        "a.vindex[...] takes one integer array (or integer) per axis, broadcast together, or"
        " one boolean mask of the array's shape"
    )
    if not shape:
        raise SelectionError("a 0-d array has no points to pick: use a[()]")
    if len(items) == 1 and items[0][0] == "array" and items[0][1].dtype.kind == "b":
        mask = items[0][1]
        if mask.ndim != len(shape):
            raise SelectionError(
                f"{usage}; got a {mask.ndim}-d mask for a {len(shape)}-d array"
            )
        _check_mask(mask, shape, 0)
        coords = tuple(c.astype(np.int64) for c in np.nonzero(mask))
        return PointPlan(coords, (len(coords[0]),), False)
    kinds = [kind for kind, _ in items]
    if len(items) != len(shape) or any(kind not in ("int", "array") for kind in kinds):
        got = ", ".join(kinds)
        raise SelectionError(f"{usage}, for oindex-like selections use a.oindex[...]; got {got}")
    for kind, value in items:
        if kind == "array" and value.dtype.kind == "b":
            raise SelectionError(f"{usage}; a boolean mask cannot be mixed with other indices")
    values = [np.asarray(value) for _, value in items]
    try:
        broadcast = np.broadcast_shapes(*(v.shape for v in values))
    except ValueError:
        shapes = " ".join(str(v.shape) for v in values if v.ndim)
        raise SelectionError(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes"
            f" {shapes}"
        ) from None
    coords = tuple(
        np.broadcast_to(_in_range(v, n, k), broadcast).reshape(-1)
        for k, (v, n) in enumerate(zip(values, shape, strict=True))
    )
    return PointPlan(coords, broadcast, "array" not in kinds)
