"""An S3 server on loopback for the tests that write to URLs (moto's, in a thread of the test
process): the fixture ``s3_write_server`` gives its endpoint, a fresh bucket per test, and the
requests it receives."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

_buckets = itertools.count()


@dataclass
class S3Server:
    """A moto S3 server: ``endpoint`` (``http://127.0.0.1:port``), a ``bucket`` of this test,
    the ``storage_options`` that reach it, and ``requests``: ``(method, path)`` of every request
    since the test began (moto's request log, in the order they arrived)."""

    endpoint: str
    bucket: str
    requests: list[tuple[str, str]] = field(default_factory=list)

    @property
    def storage_options(self) -> dict[str, Any]:
        return {"endpoint_url": self.endpoint, "key": "testing", "secret": "testing",
                "client_kwargs": {"region_name": "us-east-1"}}  # fmt: skip

    def url(self, name: str) -> str:
        return f"s3://{self.bucket}/{name}"

    def filesystem(self) -> Any:
        """The s3fs file system of :attr:`storage_options`: the instance the library uses
        (fsspec keeps one per set of options), its listings forgotten."""
        import fsspec

        fs, _ = fsspec.core.url_to_fs(self.url(""), **self.storage_options)
        fs.invalidate_cache()
        return fs

    def puts(self) -> list[str]:
        """The keys written by PUT requests (whole objects or the parts of one), in order."""
        prefix = f"/{self.bucket}/"
        keys = [p.split("?")[0][len(prefix):] for m, p in self.requests
                if m == "PUT" and p.startswith(prefix)]  # fmt: skip
        return [k for i, k in enumerate(keys) if k not in keys[:i]]


@pytest.fixture(scope="session")
def _moto_server() -> Iterator[tuple[str, list, Any]]:
    """moto's S3 server on a free loopback port, the log of its requests and a boto3 client."""
    pytest.importorskip("s3fs")
    moto_server = pytest.importorskip("moto.server")
    mp = pytest.MonkeyPatch()
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                        ("AWS_DEFAULT_REGION", "us-east-1")):  # fmt: skip
        mp.setenv(name, value)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    log: list[tuple[str, str]] = []
    app = server._server.app  # noqa: SLF001 - the WSGI app, wrapped to log requests

    def logged(environ: dict, start_response: Any) -> Any:
        path = environ.get("PATH_INFO", "")
        query = environ.get("QUERY_STRING", "")
        log.append((environ["REQUEST_METHOD"], path + ("?" + query if query else "")))
        return app(environ, start_response)

    server._server.app = logged  # noqa: SLF001
    host, port = server.get_host_and_port()
    import boto3

    endpoint = f"http://{host}:{port}"
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")  # fmt: skip
    try:
        yield endpoint, log, client
    finally:
        server.stop()
        mp.undo()


@pytest.fixture
def s3_write_server(_moto_server: tuple[str, list, Any]) -> Iterator[S3Server]:
    """The session's S3 server with a new empty bucket for this test."""
    endpoint, log, client = _moto_server
    bucket = f"write-{next(_buckets)}"
    client.create_bucket(Bucket=bucket)  # (s3fs's mkdir sends a region moto refuses)
    del log[:]
    server = S3Server(endpoint, bucket)
    server.requests = log
    yield server
