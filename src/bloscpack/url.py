"""URLs: which names are fsspec URLs, the filesystem that reaches one, and the one error class
(:class:`~bloscpack.errors.RemoteError`) for everything that goes wrong on the way.

Remote data is reached through fsspec, the optional extra ``bloscpack[remote]``; local paths
never import it.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from .errors import BloscpackError, RemoteError, UnsupportedError

if TYPE_CHECKING:
    import logging

EXTRA = "pip install 'bloscpack[remote]'"
#: The extra that installs the back end of a protocol, where ``remote`` does not (the one
#: table of back-end names: the code is the same for every back end).
EXTRAS = {"gs": "gcs", "gcs": "gcs", "az": "azure", "abfs": "azure", "abfss": "azure",
          "adl": "azure"}  # fmt: skip


#: A password in a URL (``scheme://user:password@host``).
_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/@:\s]*:)[^/@\s]*(?=@)")
#: Names of settings and query parameters that hold credentials (tokens, keys, signatures).
_SECRET_WORD = r"(?:token|secret|password|passwd|signature|sig|key|credential|auth|connection)"
_SECRET_NAME = rf"[A-Za-z0-9_.-]*{_SECRET_WORD}[A-Za-z0-9_.-]*"
#: A credential in a query string (``?token=...``, ``&X-Amz-Signature=...``, ``&sig=...``).
_QUERY_SECRET = re.compile(rf"(?P<head>[?&;]{_SECRET_NAME}=)[^&#\s'\"]*", re.IGNORECASE)
#: What a credential is shown as.
HIDDEN = "***"


def redact(text: str) -> str:
    """``text`` (a URL, or a message holding URLs) with the password of every URL and every
    credential of a query string replaced by ``***``."""
    text = _PASSWORD.sub(lambda m: m["head"] + HIDDEN, text)
    return _QUERY_SECRET.sub(lambda m: m["head"] + HIDDEN, text)


def is_secret_option(name: str) -> bool:
    """Whether the storage option ``name`` holds a credential (``key``, ``secret``,
    ``token``, ``password``, ``client_kwargs``' ``aws_secret_access_key``, ...)."""
    return re.fullmatch(_SECRET_NAME, name, re.IGNORECASE) is not None


def may_hold_secret(text: str) -> bool:
    """Whether ``text`` (e.g. a malformed ``--storage-option``) names a credential."""
    return re.search(_SECRET_WORD, text, re.IGNORECASE) is not None


def redact_options(options: Any) -> Any:
    """``options`` (storage options: a mapping, or ``(key, value)`` pairs) as shown: the value
    of every credential ``***``, in nested mappings too."""
    if isinstance(options, Mapping):
        return {k: HIDDEN if is_secret_option(str(k)) else redact_options(v)
                for k, v in options.items()}  # fmt: skip
    if isinstance(options, (list, tuple)) and all(
        isinstance(p, tuple) and len(p) == 2 for p in options
    ):
        return [(k, HIDDEN if is_secret_option(str(k)) else redact_options(v)) for k, v in options]
    return redact(options) if isinstance(options, str) else options


def extra_for(url: str) -> str:
    """How to install what reads ``url`` (for the innermost protocol of a chained URL)."""
    protocol = url.rpartition("::")[2].partition("://")[0].lower()
    return f"pip install 'bloscpack[{EXTRAS[protocol]}]'" if protocol in EXTRAS else EXTRA


def is_url(name: Any) -> bool:
    """``name`` is an fsspec URL (``s3://b/k``, ``https://h/p``, ``memory://x``, chained
    ``zip://x::s3://b/a.zip``), not a local path."""
    return isinstance(name, str) and ("://" in name or "::" in name)


#: The loggers of the libraries that reach URLs for this one: their records are shown
#: redacted, as this library's messages are.
REMOTE_LOGGERS = (
    "fsspec", "fsspec.http", "fsspec.asyn", "fsspec.reference", "s3fs", "gcsfs", "adlfs",
    "aiohttp.client", "aiohttp.access", "aiohttp.internal", "botocore", "urllib3.connectionpool",
)  # fmt: skip


class _Redacted:
    """A logging filter: passes every record, its message :func:`redact`-ed (``logging`` is
    imported with fsspec only)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        shown = redact(message)
        if shown != message:
            record.msg, record.args = shown, None
        return True


_REDACTED = _Redacted()


def _fsspec() -> Any:
    try:
        import fsspec
    except ImportError:
        raise UnsupportedError(f"reading or writing URLs needs fsspec: {EXTRA}") from None
    import logging

    for name in REMOTE_LOGGERS:  # once each: a logger keeps one copy of a filter
        logging.getLogger(name).addFilter(_REDACTED)
    return fsspec


def filesystem(url: str, storage_options: Mapping[str, Any] | None = None) -> tuple[Any, str]:
    """The fsspec filesystem that reaches ``url`` (given ``storage_options``) and the path of
    ``url`` on it."""
    fsspec = _fsspec()
    try:
        return fsspec.core.url_to_fs(url, **dict(storage_options or {}))
    except ImportError as exc:  # the protocol's back end (s3fs, gcsfs, ...) is missing
        raise UnsupportedError(f"{redact(url)}: {exc} ({extra_for(url)})") from None
    except (ValueError, TypeError) as exc:  # an unknown protocol, a bad storage option
        raise RemoteError(f"{redact(url)}: {redact(str(exc))}") from None


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
        return f"timed out ({exc})" if str(exc) else "timed out"
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
        _raise_shown(RemoteError(f"{redact(url)}: {redact(describe(exc))}"), exc)
    except Exception as exc:  # aiohttp/botocore errors that are not OSError subclasses
        if type(exc).__module__.split(".")[0] in {"aiohttp", "botocore", "aiobotocore", "s3fs",
                                                  "fsspec", "requests", "gcsfs", "adlfs"}:
            _raise_shown(RemoteError(f"{redact(url)}: {redact(describe(exc))}"), exc)
        raise


def _raise_shown(error: BaseException, exc: BaseException) -> NoReturn:
    """Raise ``error`` caused by what ``exc`` is, not by ``exc``: a back end's exception may
    carry its request (the headers, ``Authorization`` among them), so the cause is the
    nearest built-in class of ``exc`` (``FileNotFoundError``, ``PermissionError``, ...)
    holding its redacted text, and ``exc`` is no longer the context."""
    kind = next(k for k in type(exc).__mro__ if k.__module__ == "builtins")
    try:
        cause = kind(redact(str(exc)))
    except Exception:  # a built-in class that takes other arguments
        cause = Exception(redact(str(exc)))
    try:
        raise error from cause
    finally:
        error.__context__ = None


__all__ = [
    "EXTRA", "EXTRAS", "HIDDEN", "describe", "extra_for", "filesystem", "is_secret_option",
    "is_url", "local_output", "local_path", "may_hold_secret", "redact", "redact_options",
    "remote_errors",
]  # fmt: skip
