"""The order record of a ``.blp`` file (``order_record=True``): chunks swapped or moved together
with their digests, which the 0.16 format cannot see, are found by ``verify`` and refused by
reads; bloscpack 0.16 reads and appends to such files as before."""

from __future__ import annotations

import numpy as np
import pytest

import bloscpack
from bloscpack import errors
from bloscpack.containers.bloscpack.reader import reading

#: Four chunks of 1024 different bytes each, compressed to the same size.
DATA = (np.arange(4096) // 1024).astype(np.uint8)


def swapped(path, out, i, j):
    """``path`` with chunks ``i`` and ``j`` (of the same size) swapped with their digests."""
    with reading(path) as reader:
        a, b = reader.locate(i), reader.locate(j)
    data = bytearray(path.read_bytes())
    assert a.cbytes == b.cbytes
    data[a.offset : a.end], data[b.offset : b.end] = data[b.offset : b.end], data[a.offset : a.end]
    out.write_bytes(data)
    return out


def moved_message(path, index):
    return (f"{path}: chunk {index} is not where it was written: its digest differs from the"
            " order record after the last chunk (chunks swapped or moved)")  # fmt: skip


def test_a_swap_is_found_with_an_order_record_and_documented_without(tmp_path):
    bloscpack.save(DATA, tmp_path / "plain.blp", chunk_size=1024)
    bloscpack.save(DATA, tmp_path / "x.blp", chunk_size=1024, order_record=True)
    plain = (tmp_path / "plain.blp").read_bytes()
    record = (tmp_path / "x.blp").read_bytes()
    assert record[: len(plain)] == plain and record.endswith(b"BLPORDER")
    assert len(record) - len(plain) == 4 * 4 + 32  # an adler32 tag per chunk and the footer
    assert bloscpack.verify(tmp_path / "x.blp")["ok"] is True
    bad = swapped(tmp_path / "x.blp", tmp_path / "bad.blp", 1, 2)
    report = bloscpack.verify(bad)
    assert (report["ok"], report["problems"], report["bad_chunks"]) == (False, [], [
        {"index": 1, "error": moved_message(bad, 1)},
        {"index": 2, "error": moved_message(bad, 2)},
    ])  # fmt: skip
    with pytest.raises(errors.IntegrityError) as info:
        bloscpack.load(bad)
    assert str(info.value) == moved_message(bad, 1)
    # without the record, the format cannot tell (docs/formats/blp.md, Chunks)
    unseen = swapped(tmp_path / "plain.blp", tmp_path / "unseen.blp", 1, 2)
    assert bloscpack.verify(unseen)["ok"] is True
    assert bloscpack.load(unseen).tolist() != DATA.tolist()


def test_convert_writes_the_record_and_a_damaged_one_is_reported(tmp_path):
    bloscpack.save(DATA, tmp_path / "plain.blp", chunk_size=1024)
    bloscpack.convert(tmp_path / "plain.blp", tmp_path / "x.blp", order_record=True)
    assert (tmp_path / "x.blp").read_bytes().endswith(b"BLPORDER")
    data = bytearray((tmp_path / "x.blp").read_bytes())
    data[-40] ^= 1  # a tag
    (tmp_path / "x.blp").write_bytes(data)
    report = bloscpack.verify(tmp_path / "x.blp")
    end = len(data) - 48
    assert report["problems"] == [
        f"the order record after the last chunk (offset {end}) is damaged (CRC mismatch)"
    ]
    assert bloscpack.load(tmp_path / "x.blp").tolist() == DATA.tolist()  # the record is unused


def test_an_order_record_needs_digests(tmp_path):
    with pytest.raises(errors.ArgumentError) as info:
        bloscpack.save(DATA, tmp_path / "x.blp", checksum=None, order_record=True)
    assert str(info.value) == "order_record=True needs chunk digests (a checksum other than None)"
    assert not (tmp_path / "x.blp").exists()


def test_an_append_keeps_the_record_valid(tmp_path):
    path = tmp_path / "x.blp"
    bloscpack.save(DATA, path, chunk_size=1024, order_record=True)
    bloscpack.append(path, np.full(1500, 9, np.uint8))
    assert path.read_bytes().endswith(b"BLPORDER")
    with reading(path) as reader:
        assert reader.order_tags() == [reader.digest(i) for i in range(reader.nchunks)]
    report = bloscpack.verify(path)
    assert (report["ok"], report["notes"]) == (True, [])
    assert bloscpack.load(path).tolist() == DATA.tolist() + [9] * 1500


def test_bloscpack_016_reads_and_appends_to_a_file_with_a_record(bloscpack016, tmp_path):
    """0.16 ignores the record; its append rewrites the last chunk in place and leaves the
    record stale, which is then not used."""
    path = tmp_path / "x.blp"
    bloscpack.pack_bytes_to_file(DATA[:3500].tobytes(), tmp_path / "raw.blp", chunk_size=1024)
    bloscpack.convert(tmp_path / "raw.blp", path, order_record=True)
    size = path.stat().st_size
    code = "import sys; print(bloscpack.unpack_bytes_from_file(sys.argv[1])[0] == bytes(3500))"
    code = code.replace("bytes(3500)", repr(DATA[:3500].tobytes()))
    assert bloscpack016.run(code, str(path)).stdout == "True\n"
    (tmp_path / "more.bin").write_bytes(bytes([7]) * 100)
    bloscpack016.run("import sys; from bloscpack.append import append; append(*sys.argv[1:])",
                     str(path), str(tmp_path / "more.bin"))  # fmt: skip
    assert path.stat().st_size == size and path.read_bytes().endswith(b"BLPORDER")
    with reading(path) as reader:
        end = reader.data_end
        assert reader.order_tags() is None
    report = bloscpack.verify(path)
    assert (report["ok"], report["notes"]) == (True, [
        f"{size - end} bytes after the last chunk end in an order record of another state of"
        " the file: not used (bloscpack 0.16's append leaves it stale)"
    ])  # fmt: skip
    assert bloscpack.load(path).tolist() == DATA[:3500].tolist() + [7] * 100


def test_blpk_writes_the_record_with_order_record(tmp_path):
    """``blpk c --order-record`` and ``blpk convert --order-record`` write the record that
    ``save`` writes; ``blpk verify`` then names swapped chunks; other formats, and files
    without digests, are refused before anything is written."""
    from test_cli import blpk

    DATA.tofile(tmp_path / "raw")
    done = blpk("c", "-z", "1024", "--order-record", "raw", "c.blp", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with reading(tmp_path / "c.blp") as reader:
        record = reader.order_record()
        assert record is not None and record.nchunks == 4 and record.tags is not None
    bloscpack.save(DATA, tmp_path / "plain.b2nd")
    done = blpk("convert", "--order-record", "plain.b2nd", "v.blp", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "v.blp").read_bytes().endswith(b"BLPORDER")
    swapped(tmp_path / "c.blp", tmp_path / "bad.blp", 1, 2)
    done = blpk("verify", "bad.blp", cwd=tmp_path)
    assert done.returncode == 1 and "chunk 1 is not where it was written" in done.stdout
    done = blpk("c", "--format", "b2nd", "--order-record", "raw", "x.b2nd", cwd=tmp_path)
    assert done.returncode == 2
    assert "--order-record applies to --format blp only" in done.stderr
    done = blpk("c", "-k", "None", "--order-record", "raw", "y.blp", cwd=tmp_path)
    assert done.returncode == 1
    assert "order_record=True needs chunk digests" in done.stderr
    assert not (tmp_path / "x.b2nd").exists() and not (tmp_path / "y.blp").exists()
