"""Opening a .blp container: offsets read as one array, all chunk locations checked at once
(with exactly the errors of the per-chunk checks), one chunk located alone, and the numpy
metadata's plain dtype strings decoded without ``ast.literal_eval``."""

from __future__ import annotations

import ast
import gc
import struct
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bloscpack
from bloscpack import api, engine, errors
from bloscpack import ndarray as nd
from bloscpack.containers.bloscpack import BloscpackReader
from bloscpack.containers.bloscpack.args import BloscArgs, BloscpackArgs
from bloscpack.containers.bloscpack.header import BloscpackHeader

DATA = np.cumsum(np.random.default_rng(5).standard_normal(4000)).astype("<f4").tobytes()
NOISE = np.random.default_rng(6).bytes(9000)  # incompressible: memcpyed chunks


def packed(**kwargs: Any) -> bytes:
    kwargs.setdefault("chunk_size", 4096)
    return api.pack_bytes_to_bytes(DATA, **kwargs)


LAYOUTS = {
    "blosc1": packed(),
    "blosc2": packed(blosc_args=BloscArgs(blosc_version=2, typesize=4)),
    "memcpyed": api.pack_bytes_to_bytes(NOISE, chunk_size=4096),
    "no checksum": packed(bloscpack_args=BloscpackArgs(checksum=None)),
    "one chunk": packed(chunk_size=len(DATA)),
    "sha512": packed(bloscpack_args=BloscpackArgs(checksum="sha512")),
}


def outcome(action: Callable[[], Any]) -> Any:
    """What ``action`` returns, or the type and message of the error it raises."""
    try:
        return action()
    except errors.BloscpackError as exc:
        return type(exc), str(exc)


def everything(raw: bytes) -> list[Any]:
    """What a reader of ``raw`` tells about its chunks, each step on a new reader."""
    steps = [
        lambda r: r.locations(),
        lambda r: r.check_sizes(),
        lambda r: r.data_end,
        lambda r: (r.check_sizes(), r.locations(), r.data_end, r.nchunks),
        lambda r: [r.locate(i) for i in range(r.nchunks)],
    ]
    opened = outcome(lambda: BloscpackReader(raw).close())
    if opened is not None:  # the offsets themselves are refused when the file is opened
        return [opened]
    results = []
    for step in steps:
        with BloscpackReader(raw) as reader:
            results.append(outcome(lambda reader=reader, step=step: step(reader)))
    return results


def per_chunk(raw: bytes) -> list[Any]:
    """:func:`everything` with each chunk's location checked on its own (no array checks)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BloscpackReader, "_scan_offsets", lambda self: None)
        patch.setattr(
            BloscpackReader,
            "check_sizes",
            lambda self: (self.locations(), self._check_each_size())[1],
        )
        return everything(raw)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_all_locations_checked_at_once_match_the_per_chunk_checks(name):
    raw = LAYOUTS[name]
    with BloscpackReader(raw) as reader:
        assert reader.header.nchunks >= 1
        assert reader._scan_offsets() is not None  # the fast path is taken
        locations = reader.locations()
        assert [loc.offset for loc in locations] == reader.offsets
        assert locations == [reader._locate_at(i, o) for i, o in enumerate(reader.offsets)]
        assert (
            reader.check_sizes()
            == reader._check_each_size()
            == reader.header.chunk_size * (reader.nchunks - 1) + reader.header.last_chunk
        )
        assert reader.data_end == max(loc.end for loc in locations)
    assert everything(raw) == per_chunk(raw)
    assert api.unpack_bytes_from_bytes(raw) == (NOISE if name == "memcpyed" else DATA, None)


def _chunk_header_mutations(raw: bytes) -> list[bytes]:
    with BloscpackReader(raw) as reader:
        offsets = reader.offsets
    mutated = []
    for offset in offsets:
        for byte in range(16):
            for value in (0, 1, 3, 7, 0x15, 0x7F, 0x80, 0xFF, raw[offset + byte] ^ 0x01):
                data = bytearray(raw)
                data[offset + byte] = value
                mutated.append(bytes(data))
    return mutated


def _offset_mutations(raw: bytes) -> list[bytes]:
    with BloscpackReader(raw) as reader:
        offsets, start = reader.offsets, reader.offsets_offset
        chunks_start = reader.chunks_start
    size = len(raw)
    mutated = []
    for index, offset in enumerate(offsets):
        for value in (
            -1, 0, chunks_start - 1, chunks_start, offset + 1, offset - 1, size - 16, size - 15,
            size, size + 1, 2**62, -(2**63), offsets[-1],
        ):  # fmt: skip
            data = bytearray(raw)
            data[start + 8 * index : start + 8 * index + 8] = struct.pack("<q", value)
            mutated.append(bytes(data))
    return mutated


def _size_mutations(raw: bytes) -> list[bytes]:
    header = BloscpackHeader.decode(raw[:32])
    mutated = [raw[:cut] for cut in range(len(raw) - 40, len(raw))]
    for chunk_size, last_chunk in ((4000, 3712), (4096, 4000), (8192, 3712), (4096, 3708)):
        changed = BloscpackHeader(**dict(header))
        changed.chunk_size, changed.last_chunk = chunk_size, last_chunk
        mutated.append(changed.encode() + raw[32:])
    return mutated


@pytest.mark.parametrize("name", ["blosc1", "blosc2", "no checksum"])
def test_wrong_locations_raise_exactly_the_per_chunk_errors(name):
    raw = LAYOUTS[name]
    cases = _chunk_header_mutations(raw) + _offset_mutations(raw) + _size_mutations(raw)
    kinds = set()
    for data in cases:
        found, expected = everything(data), per_chunk(data)
        assert found == expected
        kinds.update(r[0] for r in found if isinstance(r, tuple) and isinstance(r[0], type))
    assert {errors.FormatError, errors.TruncatedError, errors.ChunkError,
            errors.IntegrityError} <= kinds  # fmt: skip


def _location_bytes(raw: bytes) -> list[int]:
    """Positions of the bytes the chunk locations come from: the offsets in use and the 16
    fixed bytes of each chunk header."""
    with BloscpackReader(raw) as reader:
        start, offsets = reader.offsets_offset, reader.offsets
    return list(range(start, start + 8 * len(offsets))) + [
        o + b for o in offsets for b in range(16)
    ]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["blosc1", "blosc2"]),
    st.lists(st.tuples(st.integers(0, 2**16), st.integers(0, 255)), min_size=1, max_size=3),
)
def test_random_damage_raises_exactly_the_per_chunk_errors(name, changes):
    raw = bytearray(LAYOUTS[name])
    positions = _location_bytes(bytes(raw))
    for position, value in changes:
        raw[positions[position % len(positions)]] = value
    assert everything(bytes(raw)) == per_chunk(bytes(raw))


def test_a_file_is_checked_with_positioned_reads(tmp_path):
    """Checking every chunk of a file maps none of it (no pages are left behind)."""
    path = tmp_path / "a.blp"
    path.write_bytes(LAYOUTS["blosc1"] + bytes(70_000))  # larger than a positioned read
    with BloscpackReader(path) as reader, BloscpackReader(LAYOUTS["blosc1"]) as in_memory:
        assert reader.check_sizes() == len(DATA)
        assert reader.locations() == in_memory.locations()
        assert reader.source._mmap is None
        assert engine.decompress(reader.read_chunk(3)) == DATA[12288:]


def test_errors_name_the_first_wrong_chunk():
    raw = bytearray(LAYOUTS["blosc1"])
    with BloscpackReader(bytes(raw)) as reader:
        offsets, start, size = reader.offsets, reader.offsets_offset, reader.size
    last = len(offsets) - 1
    raw[start + 8 * last : start + 8 * last + 8] = struct.pack("<q", size - 8)  # the last chunk
    raw[offsets[2] + 12 : offsets[2] + 16] = struct.pack("<i", 4)  # chunk 2: cbytes 4
    with BloscpackReader(bytes(raw)) as reader:
        with pytest.raises(errors.ChunkError) as caught:
            reader.check_sizes()
        assert str(caught.value) == (
            f"<bytes>: chunk 2 at offset {offsets[2]}: cbytes 4 is smaller than its 16-byte header"
        )
        with pytest.raises(errors.TruncatedError) as caught:
            reader.locate(last)
        assert str(caught.value) == (
            f"<bytes>: chunk {last} at offset {size - 8}: the input ends at {size}"
        )
        assert engine.decompress(reader.read_chunk(1)) == DATA[4096:8192]


def test_chunk_sizes_checked_at_once_name_the_first_wrong_chunk():
    raw = bytearray(LAYOUTS["blosc1"])
    with BloscpackReader(bytes(raw)) as reader:
        offset = reader.offsets[1]
    raw[offset + 4 : offset + 8] = struct.pack("<i", 4000)  # chunk 1's nbytes
    with BloscpackReader(bytes(raw)) as reader, pytest.raises(errors.IntegrityError) as caught:
        reader.check_sizes()
    assert str(caught.value) == (
        "<bytes>: chunk 1 holds 4000 bytes, the header prescribes 4096 (chunk_size 4096,"
        " last_chunk 3712)"
    )


def test_offsets_are_a_fresh_list_of_the_stored_entries():
    raw = LAYOUTS["blosc1"]
    with BloscpackReader(raw) as reader:
        stored = [v for (v,) in struct.iter_unpack("<q", raw[32 : 32 + 8 * reader.nchunks])]
        offsets = reader.offsets
        assert offsets == stored and all(type(v) is int for v in offsets)
        offsets[0] = 7
        assert reader.offsets == stored
        assert reader.unused_offsets() == [-1] * reader.header.max_app_chunks
    with BloscpackReader(packed(bloscpack_args=BloscpackArgs(offsets=False))) as reader:
        assert reader.offsets == [] and reader.nchunks == 4
        assert reader.check_sizes() == len(DATA)


def test_a_chunk_is_located_alone_and_once():
    raw = LAYOUTS["blosc2"]
    with BloscpackReader(raw) as reader:
        loc = reader.locate(np.int64(2))
        assert loc.index == 2 and type(loc.index) is int
        assert reader.locate(2) is loc
        assert reader._locations is None and reader._table is None
        assert (loc.offset, loc.nbytes, loc.end) == (
            reader.offsets[2],
            4096,
            loc.offset + loc.cbytes + loc.digest_size,
        )
        for index in (-1, 4):
            with pytest.raises(IndexError, match=f"chunk index {index} out of range for 4"):
                reader.locate(index)
        assert reader.locations()[2] == loc


def test_stream_without_offsets_and_empty_files():
    for raw in (api.pack_bytes_to_bytes(b""), packed(bloscpack_args=BloscpackArgs(offsets=False))):
        assert everything(raw) == per_chunk(raw)
    with BloscpackReader(api.pack_bytes_to_bytes(b"")) as reader:
        (location,) = reader.locations()
        assert (reader.check_sizes(), location.nbytes, reader.data_end) == (
            0, 0, reader.chunks_start + location.cbytes + 4,
        )  # fmt: skip


# --- numpy metadata: plain dtype strings ----------------------------------------------------


def literal_or_string(value: str) -> Any:
    """The dtype spec as ``ast.literal_eval`` alone gives it."""
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return value


PLAIN = [
    repr(np.dtype(t).str)
    for t in ("<f8", ">f8", "|u1", "<i2", "?", "<c16", "<M8[ns]", "<m8[25us]", "|S10", "<U7",
              "|V16", "<f2", ">M8", "|S0")
]  # fmt: skip
OTHER = [
    "<f8", "|u1", "=i4", ">M8[ms]", "float64", "f8", "'f8'", '"<f8"', "'<f8", "<f8'", "' <f8'",
    "'<f8 '", " '<f8'", "'<f 8'", "'<M8[ns'", "'<M8[]'", "'<M8[ns]]'", "'<q9'", "'|O'", "'O'",
    "None", "True", "1", "'<f8' + ''", "('<f8', (2,))", "[('a', '<f8')]", "''", "'<'",
    "'\\x3cf8'", "u'<f8'", "b'<f8'", "<f8\n", "'<f8'\n", "'<f٨'", "'<f8'#", "<<f8", "'é'",
]  # fmt: skip


@pytest.mark.parametrize("value", PLAIN + OTHER)
def test_dtype_strings_read_as_literal_eval_reads_them(value):
    assert nd._dtype_spec(value) == literal_or_string(value)

    def reference() -> Any:
        spec = literal_or_string(value)
        if spec is None:
            raise errors.FormatError("metadata dtype None is not a numpy dtype")
        try:
            dtype = np.lib.format.descr_to_dtype(spec) if isinstance(spec, list) else np.dtype(spec)
        except (TypeError, ValueError, KeyError) as exc:
            raise errors.FormatError(
                f"metadata dtype {value!r} is not a numpy dtype: {exc}"
            ) from None
        nd.check_storable(dtype)
        return dtype

    assert outcome(lambda: nd.dtype_from_metadata(value)) == outcome(reference)


def test_plain_dtype_strings_skip_the_parser():
    assert nd.dtype_from_metadata("'<M8[ns]'") == np.dtype("<M8[ns]")
    with pytest.raises(errors.FormatError) as caught:
        nd.dtype_from_metadata("'<q9'")
    assert str(caught.value) == (
        "metadata dtype \"'<q9'\" is not a numpy dtype: data type '<q9' not understood"
    )
    gc.collect()
    gc.disable()
    try:
        for value in PLAIN:
            nd.dtype_from_metadata(value)
        assert gc.collect() == 0  # no reference cycles left behind
    finally:
        gc.enable()


def test_a_chunk_count_the_file_cannot_hold_is_refused_on_open(tmp_path) -> None:
    raw = bytearray(api.pack_bytes_to_bytes(b"x" * 100, chunk_size=100))
    header = BloscpackHeader.decode(bytes(raw[:32]))
    forged = BloscpackHeader(**{**dict(header), "offsets": False, "max_app_chunks": 0})
    forged.nchunks = 2**61
    path = tmp_path / "forged.blp"
    path.write_bytes(forged.encode() + bytes(raw[32 + 8 * 11 :]))
    message = f"{path}: the header announces {2**61} chunks, but the"
    with pytest.raises(errors.TruncatedError, match=message):
        bloscpack.open(path)
    with pytest.raises(errors.TruncatedError, match=message):
        api.unpack_bytes_from_file(path)
