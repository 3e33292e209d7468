"""A format another package adds through the entry-point group ``bloscpack.formats``: a toy
format (one Blosc chunk behind a magic string and a JSON header), installed as a real
distribution (a ``.dist-info`` with ``entry_points.txt``) on ``sys.path``, is read and written
by ``save``, ``load``, ``open``, ``info``, ``verify`` and ``detect``, converted to other formats
by ``convert`` and ``blpk convert``, and read by ``blpk d``, ``info`` and ``verify``, with
nothing of bloscpack edited."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import bloscpack
from bloscpack.containers import registry
from bloscpack.errors import ArgumentError, FormatError

TOY = textwrap.dedent('''
    """A toy container: b"TOYBLOSC", a 4-byte length, a JSON header, one Blosc2 chunk."""

    import json
    import struct

    import blosc2
    import numpy as np

    from bloscpack.containers.base import (
        ArrayDescription, ByteSource, ChunkSizes, ContainerFormat, ReaderBase, StoredMetadata,
        WriterBase,
    )

    MAGIC = b"TOYBLOSC"


    class ToyReader(ReaderBase):
        format = "toy"
        nchunks = 1

        def __init__(self, source):
            self.source = source if isinstance(source, ByteSource) else ByteSource(source)
            self.name = self.source.name
            (length,) = struct.unpack("<I", self.source.read(8, 4, "header length"))
            self.header = json.loads(bytes(self.source.read(12, length, "header")))
            self.start = 12 + length
            self.description = ArrayDescription(np.dtype(self.header["dtype"]),
                                                tuple(self.header["shape"]))
            nbytes = self.description.dtype.itemsize * int(np.prod(self.description.shape))
            self.sizes = ChunkSizes.listed([nbytes])

        def stored_chunk(self, index):
            return self.source.read(self.start, self.source.size() - self.start, "chunk")

        def metadata(self):
            return self.header

        def stored_metadata(self):
            return StoredMetadata()

        def close(self):
            self.source.close()


    class ToyLayout:
        flat = True

        def __init__(self, description, clevel):
            self.nchunks = 1
            self.chunks = (int(np.prod(description.shape)),)
            self.clevel = clevel

        def compress_chunk(self, index, data):
            data = np.ascontiguousarray(data)
            return blosc2.compress2(data.tobytes(), typesize=data.itemsize, clevel=self.clevel)


    class ToyWriter(WriterBase):
        def __init__(self, output, description, clevel):
            super().__init__(output)
            self.description = description
            self.layout = ToyLayout(description, clevel)
            self.chunk = None

        def append_chunk(self, chunk):
            self.chunk = bytes(chunk)

        def _finish(self):
            header = json.dumps({"dtype": self.description.dtype.str,
                                 "shape": list(self.description.shape)}).encode()
            with open(self.output.path, "wb") as fh:
                fh.write(MAGIC + struct.pack("<I", len(header)) + header + self.chunk)


    class ToyFormat(ContainerFormat):
        name = "toy"
        description = "toy container"
        suffixes = (".toy",)
        writer_options = ("clevel",)

        def sniff(self, head):
            return head.startswith(MAGIC)

        def open_reader(self, source, *, verify=True):
            return ToyReader(source)

        def info(self, source):
            with ToyReader(source) as reader:
                return {"header": reader.header, "nchunks": 1}

        def verify(self, source):
            with ToyReader(source) as reader:
                reader.read_chunk(0)
            return {"ok": True, "nchunks": 1, "bad_chunks": [], "problems": []}

        def own_options(self, params, rest, dtype, shape):
            return {**rest, **({} if params.clevel is None else {"clevel": params.clevel})}

        def open_writer(self, output, description, *, metadata=None, clevel=5):
            return ToyWriter(output, description, clevel)


    FORMAT = ToyFormat()
''')
ARRAY = np.arange(600, dtype="<i4").reshape(200, 3)


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy format installed as the distribution ``toyformat`` in a directory put first
    on ``sys.path`` (and on the ``PYTHONPATH`` of subprocesses)."""
    site = tmp_path / "site"
    dist = site / "toyformat-1.0.dist-info"
    dist.mkdir(parents=True)
    (site / "toyformat.py").write_text(TOY)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyformat\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[bloscpack.formats]\ntoy = toyformat:FORMAT\n")
    monkeypatch.syspath_prepend(str(site))
    paths = [str(site), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    registry.plugins.cache_clear()
    yield tmp_path
    registry.plugins.cache_clear()


def test_the_entry_point_adds_the_format(toy):
    assert [f.name for f in registry.plugins()] == ["toy"]
    assert registry.get("TOY").extension == ".toy"
    assert registry.by_extension("a.toy").name == "toy"
    assert list(registry.FORMATS) == ["blp", "b2frame", "b2nd", "sframe", "bcolz"]


def test_save_load_open_detect_info_verify(toy):
    path = toy / "a.toy"
    bloscpack.save(ARRAY, path)
    assert path.read_bytes().startswith(b"TOYBLOSC")
    assert bloscpack.detect(path) == "toy"
    assert np.array_equal(bloscpack.load(path), ARRAY)
    with bloscpack.open(path) as lazy:
        assert (lazy.format, lazy.shape, lazy.dtype) == ("toy", (200, 3), np.dtype("<i4"))
        assert np.array_equal(lazy[5:9, 1], ARRAY[5:9, 1])
    assert np.array_equal(bloscpack.load(path.read_bytes()), ARRAY)
    assert bloscpack.info(path) == {
        "format": "toy", "header": {"dtype": "<i4", "shape": [200, 3]}, "nchunks": 1,
    }  # fmt: skip
    report = bloscpack.verify(path)
    assert (report["format"], report["ok"], report["verifiable"]) == ("toy", True, False)


def test_format_option_and_its_own_options(toy):
    path = toy / "named"
    bloscpack.save(ARRAY, path, format="toy", clevel=1)
    assert bloscpack.detect(path) == "toy"
    with pytest.raises(ArgumentError, match=r"unknown option\(s\) for format 'toy': shuffle;"
                                            " known: clevel, metadata"):  # fmt: skip
        bloscpack.save(ARRAY, toy / "b.toy", shuffle=False)


def test_convert_from_it_to_other_formats(toy):
    bloscpack.save(ARRAY, toy / "a.toy")
    bloscpack.convert(toy / "a.toy", toy / "a.b2nd")
    assert bloscpack.detect(toy / "a.b2nd") == "b2nd"
    assert np.array_equal(bloscpack.load(toy / "a.b2nd"), ARRAY)


def test_blpk_reads_the_format(toy):
    bloscpack.save(ARRAY, toy / "a.toy")
    run = [sys.executable, "-m", "bloscpack"]
    done = subprocess.run([*run, "verify", "a.toy"], capture_output=True, text=True,
                          cwd=toy, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = subprocess.run([*run, "d", "a.toy", "a.npy"], capture_output=True,
                          text=True, cwd=toy, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert np.array_equal(np.load(toy / "a.npy"), ARRAY)
    done = subprocess.run([*run, "info", "--json", "a.toy"], capture_output=True, text=True,
                          cwd=toy, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["format"] == "toy"
    done = subprocess.run([*run, "convert", "a.toy", "b.blp"], capture_output=True, text=True,
                          cwd=toy, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert np.array_equal(bloscpack.load(toy / "b.blp"), ARRAY)


def test_an_entry_point_that_is_no_format_is_refused(toy):
    dist = toy / "site" / "toyformat-1.0.dist-info"
    (dist / "entry_points.txt").write_text("[bloscpack.formats]\nbad = json:dumps\n")
    registry.plugins.cache_clear()
    with pytest.raises(FormatError, match="entry point 'bad' of bloscpack.formats: json:dumps"
                                          " is not a ContainerFormat instance"):  # fmt: skip
        registry.plugins()


def test_convert_into_it_and_to_dask(toy):
    bloscpack.save(ARRAY, toy / "a.b2nd", chunks=(64, 3), blocks=(16, 3))
    bloscpack.convert(toy / "a.b2nd", toy / "b.toy")
    assert bloscpack.detect(toy / "b.toy") == "toy"
    assert np.array_equal(bloscpack.load(toy / "b.toy"), ARRAY)
    with bloscpack.open(toy / "b.toy") as lazy:
        assert np.array_equal(lazy.to_dask().compute(), ARRAY)



def test_blpk_writes_the_format(toy):
    np.save(toy / "a.npy", ARRAY)
    run = [sys.executable, "-m", "bloscpack"]
    done = subprocess.run([*run, "c", "--format", "toy", "a.npy", "a.toy"], capture_output=True,
                          text=True, cwd=toy, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert np.array_equal(bloscpack.load(toy / "a.toy"), ARRAY)
    bloscpack.save(ARRAY, toy / "a.blp")
    done = subprocess.run([*run, "convert", "a.blp", "b.toy"], capture_output=True, text=True,
                          cwd=toy, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert np.array_equal(bloscpack.load(toy / "b.toy"), ARRAY)
