"""The store of a table (a :class:`~bloscpack.containers.base.TableReader`: bcolz ctables):
a structured array whose fields are the columns, each a flat store read only when a
selection needs it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ...selection import Axis, AxisSelection, axis_of, normalize_index, result_shape
from ..base import TableReader
from . import base
from .base import CONCURRENT_CHUNKS
from .flat import FlatStore


class TableStore:
    """A bcolz ctable: a structured array whose fields are the columns, each read only when
    a selection needs it."""

    def __init__(
        self, reader: TableReader, names: Sequence[str],
        columns: dict[str, FlatStore] | None = None,
    ) -> None:  # fmt: skip
        """``reader``: the table; ``columns``: the column stores of the table this one selects
        from (shared)."""
        self.reader = reader
        self.name = reader.name
        self.names = list(names)
        self._columns: dict[str, FlatStore] = {} if columns is None else columns
        described = [self.column(name).source.description for name in self.names]
        self.shape: tuple[int, ...] = described[0].shape[:1]
        self.dtype = np.dtype(
            [(n, d.dtype, d.shape[1:]) for n, d in zip(self.names, described, strict=True)]
        )
        chunklens = {d.chunks[0] for d in described if d.chunks}
        self.chunklen = described[0].chunks[0] if described[0].chunks else 1
        self.chunks: tuple[int, ...] | None = (
            (min(self.chunklen, self.shape[0]),) if len(chunklens) == 1 else None
        )

    def select(self, names: Sequence[str]) -> TableStore:
        """A store of the columns ``names`` of this table, sharing its column stores."""
        return TableStore(self.reader, names, self._columns)

    def column(self, name: str) -> FlatStore:
        """The store of column ``name`` (its chunk files are read only when it is indexed)."""
        if name not in self._columns:
            self._columns[name] = FlatStore(self.reader.column(name))
        return self._columns[name]

    def read_item(self, coords: tuple[int, ...]) -> np.ndarray:
        """Row ``coords[0]`` as a 0-d structured array."""
        return self.read((AxisSelection(coords[0], coords[0] + 1, 1, True),))

    def read_points(self, coords: tuple[np.ndarray, ...]) -> np.ndarray:
        """The rows ``coords[0]`` as a structured array, column by column."""
        rows, positions = np.unique(coords[0], return_inverse=True)
        return self.read((axis_of(rows),))[positions.reshape(-1)]

    def read(self, selection: tuple[Axis, ...]) -> np.ndarray:
        """The selected rows as a structured array, column by column (the columns of a table
        at a URL at once, in threads: one round of requests for all)."""
        out = base.allocate(result_shape(selection), self.dtype, self.name)

        def read_column(name: str) -> None:
            column = self.column(name)
            whole_rows = tuple(AxisSelection(0, n, 1, False) for n in column.shape[1:])
            out[name] = column.read(selection + whole_rows)

        columns = [self.column(name) for name in self.names]
        if len(columns) > 1 and columns[0].source.remote:
            with ThreadPoolExecutor(min(len(columns), CONCURRENT_CHUNKS)) as pool:
                list(pool.map(read_column, self.names))
        else:
            for name in self.names:
                read_column(name)
        return out

    def iter_chunks(self) -> Iterator[np.ndarray]:
        """Blocks of ``chunklen`` rows (the first column's chunk length)."""
        n = self.shape[0]
        for start in range(0, n, self.chunklen):
            yield self.read(normalize_index(slice(start, start + self.chunklen), self.shape))

    def close(self) -> None:
        """Release the column stores opened so far."""
        for column in self._columns.values():
            column.close()
