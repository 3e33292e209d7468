"""The public chunk API: compress/decompress both ways against python-blosc and python-blosc2,
items, inspect_chunk and is_chunk."""

from __future__ import annotations

import doctest
import json

import blosc
import blosc2
import numpy as np
import pytest
from conftest import DATA, load_manifest

import bloscpack
from bloscpack import (
    compress_chunk,
    decompress_chunk,
    decompress_chunk_items,
    inspect_chunk,
    is_chunk,
)
from bloscpack.errors import ArgumentError, ChunkError, NoSuchCodec

CHUNKS = [e for e in load_manifest("blosc2")["entries"] if e["kind"] == "chunk"]
DATA_ARRAYS = {
    "i4": np.cumsum(np.arange(50_000) % 7 - 3).astype("<i4"),
    "f8": np.linspace(0, 1000, 30_001),
    "u1": np.frombuffer(b"blosc chunk " * 999, np.uint8),
    "S5": np.array([b"ab%03d" % (i % 100) for i in range(7000)]),
}


@pytest.mark.parametrize("codec", ["blosclz", "lz4", "lz4hc", "zlib", "zstd"])
@pytest.mark.parametrize("filters", [(), ("shuffle",), ("bitshuffle",)])
@pytest.mark.parametrize("name", list(DATA_ARRAYS))
def test_blosc1_chunks_read_by_python_blosc(name: str, filters: tuple, codec: str) -> None:
    a = DATA_ARRAYS[name]
    chunk = compress_chunk(a, typesize=a.itemsize, clevel=7, codec=codec, filters=filters)
    assert chunk[0] == 2 and len(chunk) == int.from_bytes(chunk[12:16], "little")
    assert blosc.decompress(chunk) == a.tobytes()
    assert bytes(decompress_chunk(chunk)) == a.tobytes()


@pytest.mark.parametrize("codec", ["blosclz", "lz4", "lz4hc", "zlib", "zstd"])
@pytest.mark.parametrize("filters", [(), ("shuffle",), ("bitshuffle",), ("delta", "shuffle"),
                                     ("trunc_prec",), ("shuffle", "bytedelta")])  # fmt: skip
@pytest.mark.parametrize("name", ["i4", "f8"])
def test_blosc2_chunks_read_by_python_blosc2(name: str, filters: tuple, codec: str) -> None:
    a = DATA_ARRAYS[name]
    meta = (23,) if filters == ("trunc_prec",) else ()
    chunk = compress_chunk(a, typesize=a.itemsize, codec=codec, filters=filters,
                           filters_meta=meta, blosc_version=2)  # fmt: skip
    assert chunk[0] == 5
    want = blosc2.decompress2(chunk)
    if filters != ("trunc_prec",) or name == "i4":  # trunc_prec is lossy on floats
        assert want == a.tobytes()
    assert bytes(decompress_chunk(chunk)) == want
    info = inspect_chunk(chunk)
    assert info["filters"] == list(filters) and info["codec"] == codec


@pytest.mark.parametrize("typesize", [1, 2, 4, 8, 16, 3, 300])
@pytest.mark.parametrize("splitmode", ["auto", "always", "never"])
def test_python_blosc2_chunks_read_by_us(typesize: int, splitmode: str) -> None:
    data = np.repeat(np.arange(100_000, dtype=np.uint16), 3).view(np.uint8)[: typesize * 2000]
    modes = {"auto": blosc2.SplitMode.AUTO_SPLIT, "always": blosc2.SplitMode.ALWAYS_SPLIT,
             "never": blosc2.SplitMode.NEVER_SPLIT}  # fmt: skip
    chunk = blosc2.compress2(data, typesize=typesize, splitmode=modes[splitmode],
                             blocksize=typesize * 256)  # fmt: skip
    out = np.empty(len(data), np.uint8)
    assert decompress_chunk(chunk, out) is out
    assert out.tobytes() == data.tobytes()
    items = decompress_chunk_items(chunk, 501, 700)
    size = typesize if typesize <= 255 else 1  # the header stores typesize 300 as 1
    assert items == data.tobytes()[501 * size : 1201 * size]


def test_python_blosc_chunks_read_by_us() -> None:
    a = DATA_ARRAYS["f8"]
    for cname in blosc.compressor_list():
        for shuffle in (blosc.NOSHUFFLE, blosc.SHUFFLE, blosc.BITSHUFFLE):
            chunk = blosc.compress(a.tobytes(), typesize=8, cname=cname, shuffle=shuffle)
            assert bytes(decompress_chunk(chunk)) == a.tobytes()
            assert bytes(decompress_chunk_items(chunk, 29_000, 1001)) == a[29_000:].tobytes()


def test_typesize_above_255_and_dictionaries() -> None:
    a = np.tile(np.arange(300, dtype=np.uint8), 200)
    chunk = compress_chunk(a, typesize=300, codec="zstd", blosc_version=2)
    assert chunk[3] == 1 and bytes(decompress_chunk(chunk)) == a.tobytes()
    text = b"".join(b'{"id": %d, "v": "x%03d"}\n' % (i, i % 97) for i in range(4000))
    chunk = compress_chunk(text, typesize=1, codec="zstd", blosc_version=2, use_dict=True,
                           blocksize=8192)  # fmt: skip
    info = inspect_chunk(chunk)
    assert info["dictionary"] and info["layout"]["dict_magic"] == "37a430ec"
    assert bytes(decompress_chunk(chunk)) == blosc2.decompress2(chunk) == text


def test_compress_arguments() -> None:
    a = DATA_ARRAYS["i4"]
    with pytest.raises(ArgumentError, match=r"Blosc1 chunks take no filter or one of .*\['delta'"):
        compress_chunk(a, typesize=4, filters=("delta", "shuffle"))
    with pytest.raises(ArgumentError, match="use_dict need blosc_version=2"):
        compress_chunk(a, typesize=4, use_dict=True)
    with pytest.raises(ArgumentError, match="typesize <= 255, got 300"):
        compress_chunk(a, typesize=300)
    with pytest.raises(ArgumentError, match="blosc_version must be 1 or 2, got 3"):
        compress_chunk(a, blosc_version=3)
    with pytest.raises(ArgumentError, match="unknown filter 'sort'"):
        compress_chunk(a, filters=("sort",))
    with pytest.raises(ArgumentError, match="clevel must be 0..9, got 10"):
        compress_chunk(a, clevel=10, blosc_version=2)
    with pytest.raises(ArgumentError, match="more entries than filters"):
        compress_chunk(a, filters=("shuffle",), filters_meta=(1, 2), blosc_version=2)
    with pytest.raises(ArgumentError, match="blocksize 2048 is not a multiple of typesize 3"):
        compress_chunk(a, typesize=3, blocksize=2048, blosc_version=2)
    with pytest.raises(ArgumentError, match="splitmode must be one of"):
        compress_chunk(a, splitmode="sometimes", blosc_version=2)
    with pytest.raises(NoSuchCodec, match="can be read but not written"):
        compress_chunk(a, codec="snappy")
    with pytest.raises(NoSuchCodec, match="unknown codec 'lzma'"):
        compress_chunk(a, codec="lzma", blosc_version=2)


def test_items_arguments() -> None:
    chunk = compress_chunk(DATA_ARRAYS["i4"], typesize=4)
    assert decompress_chunk_items(chunk, np.int64(3), 2) == DATA_ARRAYS["i4"][3:5].tobytes()
    with pytest.raises(ArgumentError, match=r"items \[49999, 50001\) out of range .* 50000"):
        decompress_chunk_items(chunk, 49_999, 2)
    with pytest.raises(ArgumentError, match="must be ints"):
        decompress_chunk_items(chunk, 1.5, 2)  # type: ignore[arg-type]
    out = np.zeros(4, np.int32)
    assert decompress_chunk_items(chunk, 10, 4, out) is out
    assert (out == DATA_ARRAYS["i4"][10:14]).all()


def test_inspect_blosc2_chunk() -> None:
    info = inspect_chunk((DATA / "blosc2/chunks/mixed_streams.chunk").read_bytes())
    assert {k: info[k] for k in ("blosc_version", "version", "header_size", "flags", "typesize",
                                 "nbytes", "blocksize", "cbytes", "codec", "filters", "kind",
                                 "special", "filters_slots", "udcodec")} == {
        "blosc_version": 2, "version": 5, "header_size": 32, "flags": 0x85, "typesize": 4,
        "nbytes": 16384, "blocksize": 4096, "cbytes": 4816, "codec": "zstd",
        "filters": ["shuffle"], "kind": "regular", "special": None,
        "filters_slots": [0, 0, 0, 0, 0, 1], "udcodec": 5,
    }  # fmt: skip
    assert info["flags_decoded"] == {"memcpyed": False, "split": True, "codec_format": 4,
                                     "extended_header": True}  # fmt: skip
    assert info["layout"]["blocks"][1] == {
        "nbytes": 4096,
        "nstreams": 4,
        "csizes": [-8, -7, -6, -5],
        "kinds": ["byte_run"] * 4,
    }
    assert info["layout"]["stream_kinds"] == {"compressed": 4, "raw": 4, "zero_run": 4,
                                              "byte_run": 4}  # fmt: skip


def test_inspect_blosc1_special_lazy_and_vl() -> None:
    chunks = DATA / "blosc2" / "chunks"
    info = inspect_chunk((chunks / "blosc1_zstd_bitshuffle.chunk").read_bytes())
    assert (info["blosc_version"], info["codec"], info["filters"]) == (1, "zstd", ["bitshuffle"])
    assert info["flags_decoded"] == {
        "memcpyed": False,
        "split": False,
        "codec_format": 4,
        "shuffle": False,
        "bitshuffle": True,
        "delta": False,
    }
    info = inspect_chunk((chunks / "special_value_i32.chunk").read_bytes())
    assert (info["special"], info["kind"], info["layout"]) == ("value", "special", None)
    assert info["value"] == (chunks / "special_value_i32.chunk").read_bytes()[32:].hex()
    info = inspect_chunk((chunks / "lazy_chunk1.chunk").read_bytes())
    assert info["lazy"] and info["layout"]["lazy_block_csizes"] == [1126, 1111, 1041, 968]
    info = inspect_chunk((chunks / "vlblocks.chunk").read_bytes())
    assert info["vl_blocks"] and info["layout"]["vlblocks"][1] == {
        "nbytes": 2,
        "stored": 2,
        "raw": True,
    }


@pytest.mark.parametrize("entry", CHUNKS, ids=[e["path"] for e in CHUNKS])
def test_inspect_is_json_and_detection(entry: dict) -> None:
    data = (DATA / "blosc2" / entry["path"]).read_bytes()
    info = inspect_chunk(data)
    assert json.loads(json.dumps(info)) == info
    assert info["nbytes"] == entry["header"]["nbytes"]
    assert is_chunk(data[:32]) and is_chunk(data[:32], size=len(data))
    assert not is_chunk(data[:32], size=len(data) + 1)


def test_is_chunk_rejects_other_formats() -> None:
    blp = (DATA / "bloscpack").glob("*.blp")
    heads = [p.read_bytes()[:32] for p in blp]
    heads += [p.read_bytes()[:32] for p in (DATA / "blosc2" / "frames").glob("*.b2frame")]
    heads += [b"", b"\x02\x01", b"\x00" * 32, b"\xff" * 32, b"PK\x03\x04" + bytes(28)]
    assert heads and not any(is_chunk(h) for h in heads)
    rng = np.random.default_rng(5)
    noise = [rng.bytes(32) for _ in range(2000)]
    assert sum(is_chunk(h) for h in noise) <= 2


def test_exported_from_the_package() -> None:
    for name in ("compress_chunk", "decompress_chunk", "decompress_chunk_items", "inspect_chunk",
                 "is_chunk"):  # fmt: skip
        assert name in bloscpack.__all__


def test_docstring_examples() -> None:
    result = doctest.testmod(bloscpack.chunks)
    assert result.attempted >= 15 and result.failed == 0


def test_inspect_rejects_garbage() -> None:
    with pytest.raises(ChunkError, match="header version 0"):
        inspect_chunk(bytes(40))
