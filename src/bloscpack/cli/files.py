"""Inputs and outputs of the subcommands: paths, stdin/stdout, streams, progress."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pprint
import shutil
import sys
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any

from ..containers import registry as _registry
from ..errors import FileNotFound
from .console import EXIT_USAGE, PROG, STDIN_NAME, STDIO, CLIError, Console
from .options import storage_options

if TYPE_CHECKING:
    from ..progress import ProgressBar


def _check_input(path: str, what: str = "input file") -> None:
    """Refuse a missing input (a URL is checked when it is read)."""
    from ..url import is_url

    if not is_url(path) and not os.path.exists(path):
        raise CLIError(f"{what} '{path}' does not exist!")


def _check_output(
    path: str, args: argparse.Namespace, console: Console, directory: str | None = None
) -> None:
    """Refuse an existing output without ``-f`` (a URL too: an object, or objects under it).  A
    FIFO or a device is written in place, with or without ``-f``, unless ``directory`` (the
    format, when it writes a directory)."""
    from ..io.staging import is_written_in_place

    if _is_remote(path):
        from ..remote.upload import exists

        if exists(path, storage_options(args)):
            if not args.force:
                raise CLIError(f"output file '{path}' exists!")
            console.verbose(f"overwriting existing file: '{path}'")
        return
    if is_written_in_place(path):
        if directory is not None:
            raise CLIError(f"'{path}' is not a regular file: {directory} writes a directory")
        return
    if os.path.lexists(path):
        if _is_plain_directory(path):
            raise CLIError(f"output '{path}' is a directory; not replacing it")
        if not args.force:
            raise CLIError(f"output file '{path}' exists!")
        console.verbose(f"overwriting existing file: '{path}'")


def _into_directory(path: str, name: str | None) -> str:
    """The output ``path`` as ``cp`` takes it: an existing directory that holds no container
    (one that does is what ``-f`` replaces) gets the output inside it, under the last part of
    ``name``, the output's name when none is given (None: it has none)."""
    if not _is_plain_directory(path):
        return path
    if name is None:
        raise CLIError(f"output '{path}' is a directory: name the file to write in it")
    return os.path.join(path, os.path.basename(name.rstrip("/")))


def _is_plain_directory(path: str | None) -> bool:
    """Whether the local output ``path`` is an existing directory that holds no container."""
    if path is None or path == STDIO or _is_remote(path) or not os.path.isdir(path):
        return False
    return not _registry.holds_container(path)


def _is_remote(path: str) -> bool:
    """Whether ``path`` is a URL (``file://`` ones too: the library maps them to their path)."""
    from ..url import is_url

    return is_url(path)


@contextlib.contextmanager
def _output_file(path: str, args: argparse.Namespace) -> Iterator[IO[bytes]]:
    """The output file ``path`` opened for writing through a temporary file: renamed into place
    (:func:`bloscpack.io.staging.atomic_write`), or for a URL uploaded as one object, when the block
    succeeds."""
    from ..io.staging import atomic_write
    from ..url import local_path

    options = storage_options(args)
    local = local_path(path, options) if _is_remote(path) else path
    if local is not None:
        with atomic_write(local) as out:
            yield out
        return
    from ..remote.upload import upload_writer  # (the remote layer: only for URLs)

    with upload_writer(path, options) as out:
        yield out


def _read_metadata_file(path: str | None) -> Any:
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise CLIError(f"metadata file '{path}' does not exist!") from None
    except OSError as exc:
        raise CLIError(f"cannot read metadata file '{path}': {exc.strerror}") from None
    try:
        return json.loads(text.strip())
    except json.JSONDecodeError as exc:
        raise CLIError(f"metadata file '{path}' is not valid JSON: {exc}") from None


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _format_metadata(metadata: Any) -> str:
    return "Metadata:\n" + pprint.pformat(metadata, width=90)


def _write_json(path: str, value: Any) -> None:
    from ..io.staging import atomic_write

    with atomic_write(path, "w") as fh:
        json.dump(value, fh, indent=2, sort_keys=True)
        fh.write("\n")


def _size_of(path: str) -> int:
    if os.path.isdir(path):
        return sum(
            os.path.getsize(os.path.join(root, name))
            for root, _, names in os.walk(path)
            for name in names
        )
    return os.path.getsize(path)


def _strip_extension(path: str) -> str | None:
    """``path`` without the suffix of a format it ends with (None: it ends with none)."""
    suffix = _registry.extension_of(path)
    if path.endswith(suffix) and len(path) > len(suffix) and _registry.by_extension(path):
        return path[: -len(suffix)]
    return None


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _is_regular_file(stream: Any) -> bool:
    """Whether ``stream`` is a regular file (stdout redirected to a file, not a pipe)."""
    import stat

    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (AttributeError, OSError, ValueError):
        return False


def _seekable(stream: Any) -> bool:
    try:
        return bool(stream.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _stdin() -> IO[bytes]:
    from ..streaming import widen_pipe

    widen_pipe(sys.stdin.buffer)
    return sys.stdin.buffer


def _stdout() -> IO[bytes]:
    from ..streaming import widen_pipe

    widen_pipe(sys.stdout.buffer)
    return sys.stdout.buffer


def _regular_file_size(stream: Any) -> int | None:
    """The bytes left in ``stream`` if it is a file of known size (a redirection), else None."""
    from ..io.paths import has_known_size

    try:
        status = os.fstat(stream.fileno())
        if has_known_size(status):
            return max(0, status.st_size - stream.tell())
    except (AttributeError, OSError, ValueError):
        pass
    return None


def _streamed(path: str) -> bool:
    """Whether the input ``path`` is read as a stream, start to end: ``-`` (stdin), or a file
    whose size is unknown (a FIFO, a device, a ``/proc`` file, a process substitution)."""
    from ..io.paths import is_stream

    return path == STDIO or is_stream(path)


def _input_stream(stack: contextlib.ExitStack, path: str) -> IO[bytes]:
    """The stream of the input ``path`` (see :func:`_streamed`), closed with ``stack``."""
    if path == STDIO:
        return _stdin()
    from ..streaming import widen_pipe

    stream = stack.enter_context(open(path, "rb"))  # noqa: SIM115 (closed with the stack)
    widen_pipe(stream)
    return stream


def _input_name(path: str) -> str:
    return STDIN_NAME if path == STDIO else path


def _spool_input(
    stack: contextlib.ExitStack, console: Console, stream: IO[bytes], name: str, head: bytes = b""
) -> str:
    """``head`` and then the rest of ``stream`` (the input ``name``) copied into a temporary
    file, removed when ``stack`` closes; messages name it ``name``."""
    from ..io.copies import named_copy
    from ..streaming import spool

    spooled = "stdin" if name == STDIO else os.path.basename(name)  # keeps a .npy suffix
    path = spool(head, stream, _scratch(stack), spooled)
    console.aliases[path] = _input_name(name)
    stack.enter_context(named_copy(path, _input_name(name)))
    return path


def _sized_input(stack: contextlib.ExitStack, console: Console, path: str) -> str:
    """A path to read the input ``path`` from: itself (also a URL), or for a stream, a
    temporary copy."""
    from ..url import is_url

    if is_url(path) or not _streamed(path):
        return path
    return _spool_input(stack, console, _input_stream(stack, path), path)


@contextlib.contextmanager
def _progress_bar(
    args: argparse.Namespace, console: Console, label: str, total: Callable[[], int | None]
) -> Iterator[ProgressBar | None]:
    """A progress bar on stderr while the block runs, if wanted (see
    :func:`bloscpack.progress.wanted`: by default on a terminal, for work of ``label`` on
    ``total()`` bytes expected to take a second or more, never when stdout carries the data to
    a pipe or a terminal); ``total()`` is asked only when it matters.  Finished with a newline
    on success, erased on error."""
    from ..progress import MIN_SECONDS, ProgressBar, expected_seconds, wanted

    quiet = console.level == Console.QUIET
    option = getattr(args, "progress", None)
    data_out = console.out is console.err and not _is_regular_file(sys.stdout)
    if not wanted(option, quiet, console.err, data_out=data_out):
        yield None
        return
    size = total()
    seconds = expected_seconds(label, size)
    if not wanted(option, quiet, console.err, data_out=data_out, seconds=seconds):
        yield None
        return
    delay = MIN_SECONDS if option is None and seconds is None else 0.0
    bar = ProgressBar(f"{PROG}: {label}", size, console.err, delay=delay)
    try:
        yield bar
    except BaseException:
        bar.clear()
        raise
    bar.finish()


@contextlib.contextmanager
def _counting(bar: ProgressBar | None, kind: str) -> Iterator[None]:
    """Every chunk of ``kind`` (``compress``/``decompress``) the engine does advances ``bar``."""
    if bar is None:
        yield
        return
    from ..engine import observe

    with observe(bar.observer(kind)):
        yield


def _advance(bar: ProgressBar | None) -> Callable[[int], None] | None:
    return None if bar is None else bar.advance


def _array_nbytes(path: str, storage_options: Any = None) -> int | None:
    """Uncompressed bytes of the container at ``path`` (None if it cannot be opened)."""
    from ..array import BloscArray
    from ..errors import BloscpackError

    try:
        with BloscArray(path, storage_options=storage_options) as array:
            return array.nbytes
    except (BloscpackError, OSError, ValueError):
        return None


def _scratch(stack: contextlib.ExitStack) -> str:
    """A temporary directory, removed when ``stack`` closes."""
    from ..streaming import temporary_directory

    return stack.enter_context(temporary_directory())


def _output_stream(stack: contextlib.ExitStack, path: str) -> IO[bytes] | None:
    """The stream an output is written to as it is produced: stdout for ``-``, the file opened
    where it is for a FIFO or a device; None for a file written through a temporary file."""
    from ..io.staging import is_written_in_place, write_in_place

    if path == STDIO:
        return _stdout()
    if is_written_in_place(path):
        return stack.enter_context(write_in_place(path))
    return None


def _copy_file(path: str, out: IO[bytes]) -> None:
    with open(path, "rb") as fh:
        shutil.copyfileobj(fh, out, 1 << 20)
    out.flush()


def _output_format(out_file: str | None, format: str | None) -> str:
    """``--format``, or the format the suffix of ``out_file`` names (not that of a directory
    the output goes in, :func:`_into_directory`), else ``blp``."""
    from ..errors import BloscpackError

    if out_file is None or out_file == STDIO or _is_plain_directory(out_file):
        return format or _registry.DEFAULT.name
    try:
        return _registry.output_format(out_file, format).name
    except BloscpackError as exc:
        raise CLIError(str(exc), EXIT_USAGE) from None


def check_files(in_file: str, out_file: str, args: argparse.Namespace) -> None:
    """bloscpack 0.16's ``cli.check_files``: :class:`~bloscpack.errors.FileNotFound` for a
    missing ``in_file``, or for an existing ``out_file`` unless ``args.force``."""
    if not os.path.exists(in_file):
        raise FileNotFound(f"input file '{in_file}' does not exist!")
    if os.path.exists(out_file) and not args.force:
        raise FileNotFound(f"output file '{out_file}' exists!")
