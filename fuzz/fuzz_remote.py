"""Fuzz the remote fetch layer: a ``.blp`` file or a Blosc chunk served over HTTP by a server
whose answers are mutated too (status, ``Content-Length``, ``Content-Range``, a body cut short
or extended), through every read-only entry point on its URL.

An input is a 12-byte answer plan, then the file (a plan of zeros serves it truthfully):

| byte | field |
|---|---|
| 0 | status: 200, 206 (four times), 416, 500 or 404 (``% 8``) |
| 1 | ``Content-Length``: true, missing, true + delta, not a number, 2**50 (``% 5``) |
| 2 | ``Content-Range``: true, missing, start + delta, total + delta, total 2**50, not a    |
|   | range, ``*/total`` (``% 7``)                                                        |
| 3-4 | delta (int16) |
| 5-6 | the body: zero bytes added (> 0) or cut (< 0) (int16) |
| 7 | how many requests (``% 4``) are answered truthfully first |
| 8-11 | reserved |
"""

from __future__ import annotations

import itertools
import os
import struct
import sys

import harness
from harness import DATA, ROOT, SCRATCH

sys.path.insert(0, str(ROOT / "tests"))
from remote_servers import http_server  # noqa: E402

KIND = "remote"
PLAN = struct.Struct("<BBBhhB4x")
STATUSES = (200, 206, 206, 206, 206, 416, 500, 404)
HUGE = 2**50
os.environ.setdefault("BLOSCPACK_HTTP_TIMEOUT", "connect=2,read=2,total=10")

_plan: dict[str, object] = {}
_names = itertools.count()


def _answer(method: str, wanted: str | None, data: bytes) -> tuple[int, list, bytes]:
    """The answer the current plan makes of a request for ``data``."""
    status, length_mode, range_mode, delta, change, truthful = _plan["fields"]  # type: ignore[misc]
    _plan["seen"] = seen = int(_plan["seen"]) + 1  # type: ignore[call-overload]
    start, end = 0, len(data)
    if wanted and wanted.startswith("bytes="):
        first, _, last = wanted[6:].partition("-")
        if first.isdigit():
            start, end = int(first), min(len(data), int(last) + 1 if last.isdigit() else len(data))
        elif last.isdigit():
            start = max(0, len(data) - int(last))
    body = data[start:end]
    if seen <= truthful:
        if wanted is None:
            return 200, [("Content-Length", str(len(data)))], data
        if start >= len(data):
            return 416, [("Content-Range", f"bytes */{len(data)}")], b""
        return 206, [("Content-Length", str(len(body))),
                     ("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")], body  # fmt: skip
    body = body + bytes(change) if change > 0 else body[: max(0, len(body) + change)]
    headers = []
    length = (len(body), None, len(body) + delta, "many", HUGE)[length_mode]
    if length is not None:
        headers.append(("Content-Length", str(length)))
    total = len(data)
    ranges = (f"bytes {start}-{end - 1}/{total}", None, f"bytes {start + delta}-{end - 1}/{total}",
              f"bytes {start}-{end - 1}/{total + delta}", f"bytes {start}-{end - 1}/{HUGE}",
              "pages 1-2", f"bytes */{total}")  # fmt: skip
    if ranges[range_mode] is not None:
        headers.append(("Content-Range", ranges[range_mode]))
    return STATUSES[status], headers, body


_server = http_server(str(SCRATCH), respond=_answer)
SERVER = _server.__enter__()


def seeds() -> list[bytes]:
    files = [DATA / "bloscpack" / "cli_chunk_1K.blp", DATA / "bloscpack" / "cli_metadata.blp",
             DATA / "blosc2" / "chunks" / "m_lz4_shuffle.chunk"]  # fmt: skip
    plans = [(0, 0, 0, 0, 0, 0), (1, 0, 3, 0, 0, 1), (1, 1, 0, 0, 100, 1), (1, 0, 0, 0, -5, 2),
             (0, 4, 1, 0, 0, 0), (1, 0, 4, 0, 0, 1), (1, 2, 2, 7, 0, 1)]  # fmt: skip
    return [PLAN.pack(*plan) + path.read_bytes() for path in files for plan in plans]


def exercise(data: bytes) -> None:
    head = data[: PLAN.size].ljust(PLAN.size, b"\0")
    status, length, ranges, delta, change, truthful = PLAN.unpack(head)
    content = data[PLAN.size :]
    _plan.update(fields=(status % 8, length % 5, ranges % 7, delta, change, truthful % 4),
                 seen=0)  # fmt: skip
    suffix = ".blp" if content.startswith(b"blpk") else ".chunk"
    name = f"input{next(_names)}{suffix}"  # a new URL each time: nothing cached is reused
    path = SCRATCH / name
    path.write_bytes(content)
    try:
        harness.exercise_path(f"{SERVER.url}/{name}", steady=False)
    finally:
        path.unlink()


if __name__ == "__main__":
    harness.main(sys.modules[__name__])
