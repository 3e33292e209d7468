"""Servers on loopback for the remote tests: an HTTP file server that counts requests and the
bytes it sends (with or without ``Range`` support), and moto's S3 server behind a counting
proxy that can also add latency (for the benchmark)."""

from __future__ import annotations

import http.server
import os
import re
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


@dataclass
class Counter:
    """Requests a server answered, the body bytes it sent, and when each request came and was
    answered (for :meth:`rounds`)."""

    requests: int = 0
    bytes: int = 0
    ranges: list[str] = field(default_factory=list)
    spans: list[tuple[float, float]] = field(default_factory=list)
    extra: int = 0  # bytes sent after the bodies of ranged answers
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, nbytes: int, what: str, since: float | None = None) -> None:
        now = time.perf_counter()
        with self.lock:
            self.requests += 1
            self.bytes += nbytes
            self.ranges.append(what)
            self.spans.append((now if since is None else since, now))

    def reset(self) -> None:
        with self.lock:
            self.requests, self.bytes = 0, 0
            self.ranges.clear()
            self.spans.clear()

    def rounds(self) -> int:
        """Dependent rounds of requests: the most requests of which none was in flight while
        another was (with a server latency, requests made at once overlap)."""
        count, last = 0, float("-inf")
        for start, end in sorted(self.spans, key=lambda span: span[1]):
            if start >= last:
                count, last = count + 1, end
        return count


class _Handler(http.server.BaseHTTPRequestHandler):
    root = ""
    ranges = True
    truncate = False  # send half the body of ranged answers, then close
    declare: int | None = None  # the object size answers declare (None: the true one)
    extra = 0  # zero bytes sent after the body of ranged answers (then without Content-Length)
    trickle = 0.0  # seconds between the bytes of every body (a slow server)
    counter: Counter
    latency = 0.0
    #: Statuses to answer for a path (one per request, first to last) before serving it.
    failures: dict[str, list[int]]
    #: Answers every request instead, when set: ``respond(method, Range header or None, the
    #: file's bytes)`` gives the status, the headers and the body (a fuzzed server).
    respond: Callable[[str, str | None, bytes], tuple[int, list[tuple[str, str]], bytes]] | None
    respond = None

    def log_message(self, *args: object) -> None:
        pass

    def _respond(self, method: str) -> None:
        """The answer :attr:`respond` makes up; the connection is closed after it."""
        path = os.path.join(self.root, self.path.split("?")[0].lstrip("/"))
        data = open(path, "rb").read() if os.path.isfile(path) else b""  # noqa: SIM115
        assert self.respond is not None
        status, headers, body = self.respond(method, self.headers.get("Range"), data)
        self.counter.add(len(body), f"{status} {self.headers.get('Range', 'whole')}")
        self.close_connection = True
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        with suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body if method == "GET" else b"")

    def do_GET(self) -> None:  # noqa: N802
        if self.respond is not None:
            self._respond("GET")
            return
        since = time.perf_counter()
        if self.latency:
            time.sleep(self.latency)
        failing = self.failures.get(self.path)
        if failing:
            status = failing.pop(0)
            self.counter.add(0, f"{status} {self.path}")
            self.send_error(status)
            return
        path = os.path.join(self.root, self.path.split("?")[0].lstrip("/"))
        if not os.path.isfile(path):
            self.counter.add(0, f"404 {self.path}", since)
            self.send_error(404)
            return
        with open(path, "rb") as fh:
            data = fh.read()
        size = len(data)
        etag = f'"{os.stat(path).st_mtime_ns:x}-{size:x}"'
        found = _RANGE.match(self.headers.get("Range", "")) if self.ranges else None
        if self.ranges and self.headers.get("If-Match") not in (None, etag):
            self.counter.add(0, "412")
            self.send_error(412)
            return
        if found is None:
            self.send_response(200)
            body = data
        else:
            first, last = found.groups()
            if not first:
                start, end = max(0, size - int(last)), size
            else:
                start, end = int(first), min(size, int(last) + 1 if last else size)
            if start >= size:
                self.counter.add(0, "416")
                self.send_error(416)
                return
            body = data[start:end]
            self.send_response(206)
            declared = size if self.declare is None else self.declare
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{declared}")
        if self.ranges:
            self.send_header("ETag", etag)
            self.send_header("Accept-Ranges", "bytes")
        if self.declare is not None and found is None:  # a whole body: its length a lie
            self.send_header("Content-Length", str(self.declare))
            self.close_connection = True
        elif not (self.extra and found is not None):
            self.send_header("Content-Length", str(len(body)))
        # counted before the headers go out: a client that drops this response on seeing them
        # sends its next requests only after it is counted (the order of ``ranges`` is theirs)
        self.counter.add(len(body), self.headers.get("Range", "whole"), since)
        self.end_headers()
        if self.truncate and found is not None and found.group(1) in ("", "0"):
            self.truncate_next = True  # the edges whole, later ranges cut short
        elif self.truncate and found is not None:
            body = body[: len(body) // 2]
            self.close_connection = True
        with suppress(BrokenPipeError, ConnectionResetError):
            for at in range(len(body) if self.trickle else 0):  # a byte at a time
                self.wfile.write(body[at : at + 1])
                self.wfile.flush()
                time.sleep(self.trickle)
            self.wfile.write(b"" if self.trickle else body)
            if found is not None:
                self.close_connection = bool(self.extra) or self.close_connection
                for _ in range(self.extra >> 20):  # until the client hangs up
                    self.wfile.write(bytes(1 << 20))
                    self.counter.extra += 1 << 20

    def do_HEAD(self) -> None:  # noqa: N802
        if self.respond is not None:
            self._respond("HEAD")
            return
        path = os.path.join(self.root, self.path.lstrip("/"))
        self.counter.add(0, "HEAD")
        if not os.path.isfile(path):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(os.path.getsize(path)))
        self.end_headers()


@dataclass
class HttpServer:
    """A file server of ``root`` at :attr:`url`."""

    root: str
    url: str
    counter: Counter
    server: http.server.ThreadingHTTPServer


@contextmanager
def http_server(root: str, ranges: bool = True, latency: float = 0.0, truncate: bool = False,
                failures: dict[str, list[int]] | None = None, declare: int | None = None,
                extra: int = 0, trickle: float = 0.0,
                respond: Callable[..., Any] | None = None) -> Iterator[HttpServer]:  # fmt: skip
    """Serve the files under ``root`` over HTTP on loopback (``ranges=False``: a server that
    ignores ``Range``; ``truncate``: one that cuts the bodies of ranges after the first bytes
    short; ``failures``: statuses answered first for some paths; ``declare``: an object size
    answers declare instead of the true one (``Content-Range``, and the ``Content-Length`` of
    whole bodies); ``extra``: zero bytes sent after the body
    of every ranged answer, until the client hangs up; ``trickle``: seconds between the bytes
    of every body, ``latency``: before every answer; ``respond``: a function that makes up
    every answer, :attr:`_Handler.respond`), counting requests and bytes."""
    counter = Counter()
    handler = type("Handler", (_Handler,), {"root": root, "ranges": ranges, "counter": counter,
                                            "latency": latency, "truncate": truncate,
                                            "failures": failures or {}, "declare": declare,
                                            "extra": extra, "trickle": trickle,
                                            "respond": respond and staticmethod(respond),
                                            })  # fmt: skip
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield HttpServer(root, f"http://127.0.0.1:{server.server_port}", counter, server)
    finally:
        server.shutdown()
        server.server_close()


class _Proxy(http.server.BaseHTTPRequestHandler):
    """Forwards every request to ``target``, counting it and the body bytes it returns."""

    protocol_version = "HTTP/1.1"
    target = ""
    counter: Counter
    latency = 0.0

    def log_message(self, *args: object) -> None:
        pass

    def _forward(self) -> None:
        if self.latency:
            time.sleep(self.latency)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        request = urllib.request.Request(self.target + self.path, data=body, method=self.command)
        for key, value in self.headers.items():
            if key.lower() not in ("host", "content-length", "connection"):
                request.add_header(key, value)
        try:
            with urllib.request.urlopen(request) as r:  # noqa: S310 (loopback)
                status, headers, data = r.status, r.headers, r.read()
        except urllib.error.HTTPError as exc:
            status, headers, data = exc.code, exc.headers, exc.read()
        self.counter.add(len(data) if self.command == "GET" else 0,
                         f"{self.command} {self.path} {self.headers.get('Range', '')}")
        self.send_response(status)
        for key, value in headers.items():
            if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward  # noqa: N815


@dataclass
class S3Server:
    """moto's S3 at :attr:`endpoint` (behind the counting proxy)."""

    endpoint: str
    direct: str
    counter: Counter
    latency: list[float]

    def options(self) -> dict[str, object]:
        """``storage_options`` for s3fs."""
        return {"endpoint_url": self.endpoint, "key": "testing", "secret": "testing",
                "client_kwargs": {"region_name": "us-east-1"}, "skip_instance_cache": True,
                "config_kwargs": {"retries": {"max_attempts": 1}}}  # fmt: skip


@contextmanager
def s3_server(latency: float = 0.0) -> Iterator[S3Server]:
    """moto's S3 server on loopback, reached through a proxy that counts requests."""
    from moto.server import ThreadedMotoServer

    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(key, "testing")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    direct = f"http://{host}:{port}"
    counter = Counter()
    handler = type("Proxy", (_Proxy,), {"target": direct, "counter": counter,
                                        "latency": latency})  # fmt: skip
    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    proxy.daemon_threads = True
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        yield S3Server(f"http://127.0.0.1:{proxy.server_port}", direct, counter, [latency])
    finally:
        proxy.shutdown()
        proxy.server_close()
        moto.stop()


def free_port() -> int:
    """A loopback port nothing listens on (for connection-refused tests)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
