"""URLs: which names are fsspec URLs, the filesystem that reaches one, and the one error class
(:class:`~bloscpack.errors.RemoteError`) for everything that goes wrong on the way.

Remote data is reached through fsspec, the optional extra ``bloscpack[remote]``; local paths
never import it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import Any

from .errors import BloscpackError, RemoteError, UnsupportedError

EXTRA = "pip install 'bloscpack[remote]'"
#: The extra that installs the back end of a protocol, where ``remote`` does not (the one
#: table of back-end names: the code is the same for every back end).
EXTRAS = {"gs": "gcs", "gcs": "gcs", "az": "azure", "abfs": "azure", "abfss": "azure",
          "adl": "azure"}  # fmt: skip


def extra_for(url: str) -> str:
    """How to install what reads ``url`` (for the innermost protocol of a chained URL)."""
    protocol = url.rpartition("::")[2].partition("://")[0].lower()
    return f"pip install 'bloscpack[{EXTRAS[protocol]}]'" if protocol in EXTRAS else EXTRA


def is_url(name: Any) -> bool:
    """``name`` is an fsspec URL (``s3://b/k``, ``https://h/p``, ``memory://x``, chained
    ``zip://x::s3://b/a.zip``), not a local path."""
    return isinstance(name, str) and ("://" in name or "::" in name)


def _fsspec() -> Any:
    try:
        import fsspec
    except ImportError:
        raise UnsupportedError(f"reading or writing URLs needs fsspec: {EXTRA}") from None
    return fsspec


def filesystem(url: str, storage_options: Mapping[str, Any] | None = None) -> tuple[Any, str]:
    """The fsspec filesystem that reaches ``url`` (given ``storage_options``) and the path of
    ``url`` on it."""
    fsspec = _fsspec()
    try:
        return fsspec.core.url_to_fs(url, **dict(storage_options or {}))
    except ImportError as exc:  # the protocol's back end (s3fs, gcsfs, ...) is missing
        raise UnsupportedError(f"{url}: {exc} ({extra_for(url)})") from None
    except (ValueError, TypeError) as exc:  # an unknown protocol, a bad storage option
        raise RemoteError(f"{url}: {exc}") from None


def local_path(url: str, storage_options: Mapping[str, Any] | None = None) -> str | None:
    """The local path a ``file://`` URL names (read with the local fast paths), else None."""
    if url.startswith("file://") and "::" not in url:
        fs, path = filesystem(url, storage_options)
        if type(fs).__name__ == "LocalFileSystem":
            return os.fspath(path)
    return None


def local_output(name: Any, what: str) -> Any:
    """``name`` to be changed in place (``what``: "append to", ...): itself, the local path of
    a ``file://`` URL, or for any other URL :class:`~bloscpack.errors.UnsupportedError`
    (object stores have no in-place writes)."""
    if not is_url(name):
        return name
    path = local_path(name)
    if path is None:
        raise UnsupportedError(
            f"{name}: cannot {what} a URL: object stores have no in-place writes (work on a"
            " local copy, then save or convert it to the URL)"
        )
    return path


def describe(exc: BaseException) -> str:
    """The cause of a failed remote operation, in a few words."""
    if isinstance(exc, FileNotFoundError):
        return "not found"
    if isinstance(exc, PermissionError):
        return "access denied"
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, ConnectionError):
        return f"connection failed ({exc})"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text


@contextlib.contextmanager
def remote_errors(url: str) -> Iterator[None]:
    """Turn what fsspec and its back ends raise into one-line :class:`RemoteError` naming
    ``url`` and the cause (errors of this library pass unchanged)."""
    try:
        yield
    except BloscpackError:
        raise
    except (OSError, ValueError, RuntimeError, TimeoutError) as exc:
        raise RemoteError(f"{url}: {describe(exc)}") from exc
    except Exception as exc:  # aiohttp/botocore errors that are not OSError subclasses
        if type(exc).__module__.split(".")[0] in {"aiohttp", "botocore", "aiobotocore", "s3fs",
                                                  "fsspec", "requests", "gcsfs", "adlfs"}:
            raise RemoteError(f"{url}: {describe(exc)}") from exc
        raise


__all__ = [
    "EXTRA", "EXTRAS", "describe", "extra_for", "filesystem", "is_url", "local_output",
    "local_path", "remote_errors",
]  # fmt: skip
