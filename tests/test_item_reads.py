"""Items and boxes at the edges of blocks and chunks equal numpy's in every format: read right
after opening (the frames read the chunk's header, bstarts and one block by offset and decode
them in one pass) and from an array already open (the file mapped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import bloscpack
from bloscpack.containers.schunk import contiguous, sparse

SHAPE = (600, 520)  # float64, random: every chunk compresses to more than partial reads need
CHUNKS, BLOCKS = (256, 256), (16, 32)  # b2nd: 512 KiB chunks of 4 KiB blocks, edges cut
CHUNK_BYTES, BLOCK_BYTES = 512 * 1024, 4096  # the flat formats' chunks and blocks
FORMATS = ["blp", "b2frame", "sframe", "b2nd", "b2nd-sparse", "bcolz"]
#: Formats whose item reads go through the frames' one-pass decode.
ONE_PASS = {"b2frame", "sframe", "b2nd", "b2nd-sparse"}


def _edges(n: int, *steps: int) -> list[int]:
    """Positions below ``n`` at and around the multiples of each of ``steps``."""
    near = {0, n - 1}
    for step in steps:
        for m in range(step, n, step):
            near.update((m - 1, m, m + 1))
    return sorted(k for k in near if 0 <= k < n)


ROWS = _edges(SHAPE[0], BLOCKS[0], CHUNKS[0])
COLS = _edges(SHAPE[1], BLOCKS[1], CHUNKS[1])
#: Items at block and chunk edges: of the b2nd grid, and of the flat layouts (by position).
FLAT = _edges(SHAPE[0] * SHAPE[1], BLOCK_BYTES // 8, CHUNK_BYTES // 8)
GRID_POINTS = {(r, c) for k, r in enumerate(ROWS) for c in COLS[k % 3 :: 3]}
POINTS = sorted(GRID_POINTS | {divmod(k, SHAPE[1]) for k in FLAT[::4]})
BOXES = [
    (slice(250, 270), slice(30, 290)),  # across a chunk row, block rows and chunk columns
    (slice(15, 17), slice(None)),  # two block rows, whole rows
    (slice(None), slice(255, 258)),  # a column strip across the chunk edge
    (slice(100, 400), slice(None)),  # rows across a chunk edge (read box by box)
    (slice(590, 600), slice(500, 520)),  # the cut corner chunk
    (slice(257, 255, -1), slice(33, 30, -1)),  # reversed, across edges
]


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    return np.random.default_rng(25).standard_normal(SHAPE)


@pytest.fixture(scope="module", params=FORMATS)
def stored(
    request: Any, data: np.ndarray, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    fmt = request.param
    base = fmt.split("-")[0]
    path = tmp_path_factory.mktemp("items") / f"a.{fmt}"
    if base == "b2nd":
        bloscpack.save(data, path, format="b2nd", chunks=CHUNKS, blocks=BLOCKS,
                       sparse=fmt == "b2nd-sparse")  # fmt: skip
    elif base == "bcolz":
        bloscpack.save(data, path, format="bcolz", chunks=CHUNKS[0])
    else:
        bloscpack.save(data, path, format=base, chunk_size=CHUNK_BYTES, blocksize=BLOCK_BYTES)
    return fmt, path


@pytest.fixture
def one_pass(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """What each one-pass decode of the frames returned (True: it decoded the items)."""
    results: list[bool] = []
    decode = contiguous.decode_checked

    def logged(*args: Any, **kwargs: Any) -> bool:
        done = decode(*args, **kwargs)
        results.append(done)
        return done

    monkeypatch.setattr(contiguous, "decode_checked", logged)
    monkeypatch.setattr(sparse, "decode_checked", logged)
    return results


def test_items_after_opening_equal_numpy(
    stored: tuple[str, Path], data: np.ndarray, one_pass: list[bool]
) -> None:
    fmt, path = stored
    for point in POINTS:
        with bloscpack.open(path) as array:
            assert array[point] == data[point], point
    if fmt in ONE_PASS:
        assert len(one_pass) == len(POINTS) and all(one_pass)


def test_items_of_an_open_array_equal_numpy(
    stored: tuple[str, Path], data: np.ndarray, one_pass: list[bool]
) -> None:
    fmt, path = stored
    with bloscpack.open(path) as array:
        got = [array[point] for point in POINTS]
        negative = [array[r - SHAPE[0], c - SHAPE[1]] for r, c in POINTS[::7]]
    assert got == [data[point] for point in POINTS]
    assert negative == [data[point] for point in POINTS[::7]]
    if fmt in ONE_PASS:
        assert len(one_pass) >= len(POINTS) and all(one_pass)


@pytest.mark.parametrize("box", BOXES, ids=range(len(BOXES)))
def test_boxes_equal_numpy(stored: tuple[str, Path], data: np.ndarray, box: Any) -> None:
    _, path = stored
    with bloscpack.open(path) as array:
        np.testing.assert_array_equal(array[box], data[box])
        np.testing.assert_array_equal(array[box], data[box])  # the file mapped now
