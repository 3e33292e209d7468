"""Planning basic-index selections over flat chunked layouts gives numpy's results."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from bloscpack.selection import (
    chunk_ranges,
    contiguous_range,
    flat_indices,
    group_by_chunk,
    normalize_index,
    result_shape,
)


def select_via_plan(a: np.ndarray, index, order: str, chunk_items: int) -> np.ndarray:
    """Read ``a[index]`` from the flat ``order`` layout of ``a`` the way a lazy reader does."""
    stored = a.ravel(order=order)
    selection = normalize_index(index, a.shape)
    out = np.empty(result_shape(selection), dtype=a.dtype, order=order)
    run = contiguous_range(selection, a.shape, order)
    if run is not None and out.size:
        ranges = chunk_ranges(*run, chunk_items)
        pieces = [stored[c * chunk_items + s : c * chunk_items + e] for c, s, e in ranges]
        out.reshape(-1, order=order)[...] = np.concatenate(pieces)
        return out
    flat = flat_indices(selection, a.shape, order)
    gathered = np.empty(flat.size, dtype=a.dtype)
    for chunk, positions, items in group_by_chunk(flat, chunk_items):
        gathered[positions] = stored[chunk * chunk_items + items]
    return gathered.reshape(result_shape(selection))


indices = st.one_of(
    st.integers(-6, 5),
    st.builds(slice, st.none() | st.integers(-7, 7), st.none() | st.integers(-7, 7),
              st.none() | st.integers(-3, 3).filter(bool)),
)


@settings(max_examples=300, deadline=None)
@given(
    a=hnp.arrays(np.int32, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
                 elements=st.integers(0, 100)),
    raw=st.lists(indices, max_size=3),
    ellipsis_at=st.none() | st.integers(0, 3),
    order=st.sampled_from("CF"),
    chunk_items=st.integers(1, 9),
)
def test_plan_matches_numpy(a, raw, ellipsis_at, order, chunk_items):
    index = list(raw[: a.ndim])
    if ellipsis_at is not None:
        index.insert(min(ellipsis_at, len(index)), Ellipsis)
    index = tuple(index)
    try:
        expected = a[index]
    except IndexError:
        with pytest.raises(IndexError):
            select_via_plan(a, index, order, chunk_items)
        return
    got = select_via_plan(a, index, order, chunk_items)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_contiguous_range_detection():
    shape = (4, 5, 6)
    assert contiguous_range(normalize_index(np.s_[1:3], shape), shape) == (30, 90)
    assert contiguous_range(normalize_index(np.s_[2, 1:4], shape), shape) == (66, 84)
    assert contiguous_range(normalize_index(np.s_[:, 1], shape), shape) is None
    assert contiguous_range(normalize_index(np.s_[..., 0], shape), shape, "F") == (0, 20)
    assert contiguous_range(normalize_index(np.s_[::2], shape), shape) is None


def test_bad_indices_raise_indexerror():
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 3"):
        normalize_index(3, (3,))
    with pytest.raises(IndexError, match="too many indices"):
        normalize_index((0, 0), (3,))
    with pytest.raises(IndexError, match="only integers, slices"):
        normalize_index([0, 1], (3,))
    with pytest.raises(IndexError, match="single ellipsis"):
        normalize_index((..., ...), (3,))
