"""Every crafted bad file of ``tests/data/bad`` (``make_bad.py`` writes them and MANIFEST.json)
through ``detect``, ``load``, ``open`` and a full read, ``iter_chunks`` and ``verify``: each
raises the manifest's error (a one-line message holding its fragment) or reports it, within
the memory budget of :mod:`test_memory_budget` (the files are read in subprocesses whose
address space is limited to what they use after start-up plus that budget)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from test_memory_budget import BAD, BUDGET

import bloscpack.errors

MANIFEST = json.loads((BAD / "MANIFEST.json").read_text())["files"]
FAILING = [e for e in MANIFEST if e["error"] is not None]
CALLS = ("detect", "load", "open", "iter_chunks", "verify")

#: Runs in the subprocess: cap the address space, then make each call on each file named in
#: the arguments; one JSON line per file: {call: [exception class or "ok", message or value]}.
SCRIPT = textwrap.dedent("""
    import json, resource, sys, bloscpack
    budget, paths = int(sys.argv[1]), sys.argv[2:]
    with open("/proc/self/statm") as fh:
        used = int(fh.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + budget, used + budget))

    def full_read(path):
        with bloscpack.open(path) as array:
            array[...]

    def iterate(path):
        with bloscpack.open(path) as array:
            for _ in array.iter_chunks():
                pass

    def verify(path):
        report = bloscpack.verify(path)
        texts = [e["error"] for e in report.get("bad_chunks", [])] + report.get("problems", [])
        return [report["ok"], texts]

    calls = {"detect": bloscpack.detect, "load": bloscpack.load, "open": full_read,
             "iter_chunks": iterate, "verify": verify}
    for path in paths:
        print(json.dumps({"start": path}), flush=True)
        result = {}
        for name, call in calls.items():
            try:
                value = call(path)
                result[name] = ["ok", value if name in ("detect", "verify") else None]
            except BaseException as exc:
                result[name] = [type(exc).__name__, str(exc)]
        print(json.dumps({"file": path, "result": result}), flush=True)
""")


@pytest.fixture(scope="module")
def results() -> dict[str, dict[str, list]]:
    """What each call gave on each failing file, run in one subprocess per format."""
    found: dict[str, dict[str, list]] = {}
    for fmt in sorted({e["format"] for e in FAILING}):
        paths = [str(BAD / e["file"]) for e in FAILING if e["format"] == fmt]
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(BUDGET), *paths],
            capture_output=True, text=True, timeout=300,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )  # fmt: skip
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        for line in lines:
            if "file" in line:
                found[line["file"]] = line["result"]
        started = [line["start"] for line in lines if "start" in line]
        if done.returncode != 0 and started:  # the file it died on
            found[started[-1]] = {"crash": [str(done.returncode), done.stderr[-2000:]]}
    return found


def test_make_bad_reproduces_the_files_and_the_manifest(tmp_path):
    done = subprocess.run([sys.executable, str(BAD / "make_bad.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "MANIFEST.json").read_text() == (BAD / "MANIFEST.json").read_text()
    for made in tmp_path.rglob("*"):
        if made.is_file():
            assert made.read_bytes() == (BAD / made.relative_to(tmp_path)).read_bytes(), made


def test_every_generated_file_is_in_the_manifest():
    generated = {e["file"] for e in MANIFEST}
    on_disk = {p.name for p in BAD.iterdir() if p.name not in ("MANIFEST.json", "make_bad.py")}
    assert on_disk == generated


@pytest.mark.timeout(600)
@pytest.mark.parametrize("entry", FAILING, ids=lambda e: e["file"])
def test_a_bad_file_raises_its_error_within_the_budget(entry, results):
    result = results.get(str(BAD / entry["file"]))
    assert result is not None and "crash" not in result, result
    error = getattr(bloscpack.errors, entry["error"])
    assert issubclass(error, bloscpack.errors.BloscpackError)
    detect = entry.get("detect")
    if detect is None:
        assert result["detect"] == ["ok", entry["format"]], result["detect"]
    else:
        assert result["detect"][0] == detect, result["detect"]
    for call in ("load", "open", "iter_chunks"):
        kind, message = result[call]
        assert kind == entry["error"], (call, result[call])
        assert entry["message"] in message and "\n" not in message, (call, message)
    if detect is not None:  # no format's reader takes the file: verify cannot report on it
        kind, message = result["verify"]
        assert kind == entry["error"] and entry["message"] in message, result["verify"]
        return
    kind, (ok, texts) = result["verify"]
    assert kind == "ok" and ok is False, result["verify"]
    fragment = entry.get("verify", entry["message"])
    assert any(fragment in text and "\n" not in text for text in texts), texts
