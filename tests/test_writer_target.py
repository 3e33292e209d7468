"""The generic conversion target (:class:`~bloscpack.containers.target.WriterTarget`) that a
format with an array writer and no target of its own gets: every chunk its writer's layout
asks for, in the writer's chunk order, from any source (C or Fortran order, flat or grid)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bloscpack
from bloscpack.containers.base import ContainerFormat, WriterBase, chunk_regions
from bloscpack.containers.target import WriterTarget
from bloscpack.convert import open_source
from bloscpack.io.staging import StagedOutput

ARRAY = np.arange(7 * 5 * 3, dtype="<i4").reshape(7, 5, 3)


class Layout:
    def __init__(self, flat, chunks):
        self.flat, self.chunks = flat, chunks

    def compress_chunk(self, index, data):
        return index, np.array(data, copy=True)


class RecordingWriter(WriterBase):
    """Keeps the chunks it is given, and writes their count to the output."""

    def __init__(self, output, layout):
        super().__init__(output)
        self.layout = layout
        self.chunks = []

    def append_chunk(self, chunk):
        self.chunks.append(chunk)

    def _finish(self):
        with open(self.output.path, "w") as fh:
            fh.write(str(len(self.chunks)))


class Recording(ContainerFormat):
    name = "recording"
    description = "recording container"
    writer_options = ("flat", "chunks")

    def __init__(self):
        self.writers = []

    def sniff(self, head):
        return False

    open_reader = info = verify = None  # never read

    def open_writer(self, output, description, *, metadata=None, flat=True, chunks=(8,)):
        self.writers.append(RecordingWriter(output, Layout(flat, chunks)))
        self.writers[-1].metadata = metadata
        return self.writers[-1]


def converted(tmp_path, source_path, **options):
    found = Recording()
    source = open_source(str(source_path), bloscpack.detect(source_path))
    try:
        target = WriterTarget(found, source, options, copy_chunks=True)
        with StagedOutput(tmp_path / "out") as output:
            target.write(output.path)
    finally:
        source.close()
    (writer,) = found.writers
    return target, writer


@pytest.mark.parametrize("order", ["C", "F"])
def test_flat_chunks_are_runs_of_items_in_c_order(tmp_path, order):
    bloscpack.save(np.asarray(ARRAY, order=order), tmp_path / "a.blp", chunk_size=64)
    target, writer = converted(tmp_path, tmp_path / "a.blp", flat=True, chunks=(8,))
    flat = ARRAY.reshape(-1)
    assert [index for index, _ in writer.chunks] == list(range(math.ceil(flat.size / 8)))
    for index, data in writer.chunks:
        assert np.array_equal(data, flat[index * 8 : index * 8 + 8])
    assert (target.copied, target.recompressed) == (0, len(writer.chunks))
    assert (tmp_path / "out").read_text() == str(len(writer.chunks))


@pytest.mark.parametrize("order", ["C", "F"])
def test_grid_chunks_are_boxes_in_c_order_of_the_grid(tmp_path, order):
    bloscpack.save(np.asarray(ARRAY, order=order), tmp_path / "a.blp", chunk_size=64)
    _, writer = converted(tmp_path, tmp_path / "a.blp", flat=False, chunks=(3, 2, 3))
    boxes = list(chunk_regions(ARRAY.shape, (3, 2, 3)))
    assert [index for index, _ in writer.chunks] == list(range(len(boxes)))
    for (_, data), box in zip(writer.chunks, boxes, strict=True):
        assert np.array_equal(data, ARRAY[box])


def test_user_metadata_goes_to_the_writer(tmp_path):
    bloscpack.save(ARRAY, tmp_path / "a.b2frame", metadata={"units": "m", "scale": 2})
    target, writer = converted(tmp_path, tmp_path / "a.b2frame")
    assert writer.metadata == {"units": "m", "scale": 2}
    assert target.dropped == []


def test_unknown_options_are_refused(tmp_path):
    bloscpack.save(ARRAY, tmp_path / "a.blp")
    with pytest.raises(bloscpack.errors.ArgumentError, match="shuffle"):
        converted(tmp_path, tmp_path / "a.blp", shuffle=True)
