"""A damaged ``.blp`` file gives the same error, class and one-line message, whichever way it
is read: ``load``, ``open()[...]``, :class:`~bloscpack.BloscFile` (a path, a file object),
``blpk d`` and the in-place append (which then leaves the file unchanged).  A pipe gives it too,
but where only the file tells: its size, its offsets and what follows its last chunk."""

from __future__ import annotations

import io
import shutil

import pytest
from conftest import DATA

import bloscpack
from bloscpack import errors
from bloscpack.cli import main
from bloscpack.containers.bloscpack.append import append

#: One file per defect: the hand-made corpus files and the crafted bad files (``bad_magic.blp``
#: is no .blp to ``load``, which detects the format: see ``test_bad_files``).
DAMAGED = [
    *(f"bloscpack/bad_{name}.blp" for name in
      ("chunk_data", "chunk_digest", "format_version", "meta_checksum", "truncated")),
    *(f"bad/blp_{name}.blp" for name in (
        "chunk_blocksize_0", "chunk_bstart", "chunk_cbytes_huge", "chunk_nbytes_2g",
        "chunk_size_2g", "chunk_typesize_0", "chunks_swapped", "last_chunk_huge",
        "max_meta_size_huge", "meta_comp_size_huge", "meta_size_huge", "nchunks_huge",
        "offset_beyond", "offset_negative",
    )),
]  # fmt: skip
#: The append reads the preamble, every chunk's header and the last chunk: a chunk before the
#: last one is not read (an append costs what it adds, not the file's size).
BEFORE_THE_LAST_CHUNK = {
    "bloscpack/bad_chunk_data.blp", "bloscpack/bad_chunk_digest.blp",
    "bad/blp_chunk_blocksize_0.blp", "bad/blp_chunk_bstart.blp",
    "bad/blp_chunk_typesize_0.blp", "bad/blp_chunks_swapped.blp",
}  # fmt: skip
#: What a pipe cannot see: the size of the input (it ends early instead), the offsets (chunks
#: are read in order) or the order record after the last chunk.
ONLY_THE_FILE_TELLS = {
    "bloscpack/bad_truncated.blp", "bad/blp_chunk_cbytes_huge.blp",
    "bad/blp_max_meta_size_huge.blp", "bad/blp_nchunks_huge.blp",
    "bad/blp_offset_beyond.blp", "bad/blp_offset_negative.blp",
    "bad/blp_chunks_swapped.blp",
}  # fmt: skip


class Pipe(io.RawIOBase):
    """A readable, non-seekable stream over bytes."""

    name = "<pipe>"

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        return self._data.readinto(b)


def _error(call) -> tuple[type, str]:
    with pytest.raises(errors.BloscpackError) as info:
        call()
    return type(info.value), str(info.value)


def _full_read(path) -> None:
    with bloscpack.open(path) as array:
        array[...]


def _file_object_read(path) -> None:
    with open(path, "rb") as fh, bloscpack.BloscFile(fh) as f:
        f.read()


@pytest.mark.parametrize("name", DAMAGED)
def test_a_damaged_file_has_one_error_on_every_read_path(name, tmp_path, capsys):
    path = tmp_path / name.split("/")[1]
    shutil.copyfile(DATA / name, path)
    original = path.read_bytes()
    error, message = _error(lambda: bloscpack.load(path))
    assert message.startswith(f"{path}: ")
    assert "\n" not in message
    calls = {
        "open()[...]": lambda: _full_read(path),
        "BloscFile(path).read()": lambda: bloscpack.BloscFile(path).read(),
        "BloscFile(file object).read()": lambda: _file_object_read(path),
    }
    if name not in BEFORE_THE_LAST_CHUNK:
        calls["append"] = lambda: append(path, DATA / "bloscpack" / "inputs" / "random_300.bin")
    for what, call in calls.items():
        assert _error(call) == (error, message), what
    assert path.read_bytes() == original
    capsys.readouterr()
    assert main(["d", str(path), str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == f"blpk: error: {message}\n"
    if name not in ONLY_THE_FILE_TELLS:
        piped = _error(lambda: bloscpack.BloscFile(io.BufferedReader(Pipe(original))).read())
        assert piped == (error, message.replace(str(path), "<pipe>", 1))
