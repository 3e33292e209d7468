"""bench/plots.py draws every figure from the benchmarks' JSON results, and every benchmark
script's ``--json`` output has what plots.py reads."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
FIXTURE = Path(__file__).parent / "data" / "bench"
#: figure -> (width, height) in pixels
FIGURES = {
    "blp_throughput.png": (800, 700),
    "blp_cli_throughput.png": (800, 450),
    "formats_vs_own_library.png": (800, 650),
    "random_access_latency.png": (800, 450),
    "compression_ratio.png": (800, 800),
    "peers_ratios.png": (800, 750),
}
DOC_KEYS = {"schema", "benchmark", "settings", "machine", "results", "comparisons"}
MACHINE_KEYS = {"cpu_count", "cpu_model", "load_average", "memory_bytes", "platform", "python",
                "versions", "note"}  # fmt: skip
RECORD_KEYS = {"dataset", "format", "contender", "operation", "seconds", "nbytes", "mb_per_s",
               "ratio", "memory_bytes"}  # fmt: skip
COMPARISON_KEYS = {"dataset", "format", "operation", "ours", "peer", "kind"}


def run(script: str, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), MPLBACKEND="Agg")
    return subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT,
    )  # fmt: skip


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """The (type, payload) chunks of a PNG, each CRC checked."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, i = [], 8
    while i < len(data):
        (n,) = struct.unpack(">I", data[i : i + 4])
        kind, payload = data[i + 4 : i + 8], data[i + 8 : i + 8 + n]
        (crc,) = struct.unpack(">I", data[i + 8 + n : i + 12 + n])
        assert zlib.crc32(kind + payload) == crc, kind
        chunks.append((kind, payload))
        i += 12 + n
    assert i == len(data)
    return chunks


def check_png(path: Path, size: tuple[int, int]) -> None:
    """A complete RGBA PNG of ``size`` whose pixels decompress, with no text or time chunk."""
    chunks = png_chunks(path.read_bytes())
    kinds = [k for k, _ in chunks]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"
    assert set(kinds) <= {b"IHDR", b"pHYs", b"IDAT", b"IEND"}, kinds
    width, height, depth, color = struct.unpack(">IIBB", chunks[0][1][:10])
    assert (width, height, depth, color) == (*size, 8, 6)
    pixels = zlib.decompress(b"".join(p for k, p in chunks if k == b"IDAT"))
    assert len(pixels) == height * (1 + 4 * width)


def draw(results: Path, out: Path) -> subprocess.CompletedProcess:
    proc = run("plots.py", "--results", str(results), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return proc


def test_every_figure_from_the_fixture(tmp_path):
    proc = draw(FIXTURE, tmp_path / "img")
    assert proc.stdout.splitlines() == [
        f"{name[:-4]}: {tmp_path / 'img' / name}" for name in FIGURES
    ]
    assert sorted(p.name for p in (tmp_path / "img").iterdir()) == sorted(FIGURES)
    for name, size in FIGURES.items():
        check_png(tmp_path / "img" / name, size)


def test_figures_are_the_same_bytes_every_time(tmp_path):
    draw(FIXTURE, tmp_path / "a")
    draw(FIXTURE, tmp_path / "b")
    for name in FIGURES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_a_figure_without_its_data_is_left_out(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(FIXTURE / "bcolz.json", results)
    proc = draw(results, tmp_path / "img")
    assert proc.stdout.splitlines() == [
        "blp_throughput: no data, left out",
        "blp_cli_throughput: no data, left out",
        f"formats_vs_own_library: {tmp_path / 'img' / 'formats_vs_own_library.png'}",
        "random_access_latency: no data, left out",
        f"compression_ratio: {tmp_path / 'img' / 'compression_ratio.png'}",
        "peers_ratios: no data, left out",
    ]
    assert sorted(p.name for p in (tmp_path / "img").iterdir()) == [
        "compression_ratio.png",
        "formats_vs_own_library.png",
    ]
    check_png(tmp_path / "img" / "compression_ratio.png", FIGURES["compression_ratio.png"])


def test_the_peers_results_have_their_own_figure_only(tmp_path):
    """bench_peers.py's comparisons are drawn in peers_ratios alone: the other figures are the
    same bytes with and without them."""
    results = tmp_path / "results"
    shutil.copytree(FIXTURE, results)
    (results / "peers.json").unlink()
    proc = draw(results, tmp_path / "without")
    assert proc.stdout.splitlines()[-1] == "peers_ratios: no data, left out"
    draw(FIXTURE, tmp_path / "with")
    for name in FIGURES:
        if name != "peers_ratios.png":
            assert (tmp_path / "with" / name).read_bytes() == (
                tmp_path / "without" / name
            ).read_bytes(), name


def bad_results(tmp_path: Path, name: str, text: str) -> str:
    results = tmp_path / "results"
    results.mkdir()
    (results / name).write_text(text)
    proc = run("plots.py", "--results", str(results), "--out", str(tmp_path / "img"))
    assert proc.returncode == 1 and proc.stdout == ""
    assert not (tmp_path / "img").exists()
    return proc.stderr


def test_empty_results_directory(tmp_path):
    (tmp_path / "results").mkdir()
    proc = run("plots.py", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "i"))
    assert proc.returncode == 1
    assert proc.stderr == f"plots.py: {tmp_path / 'results'}: no *.json benchmark results\n"


def test_not_json(tmp_path):
    err = bad_results(tmp_path, "x.json", "{")
    assert err.startswith(f"plots.py: {tmp_path / 'results' / 'x.json'}: not JSON (")


def test_other_schema(tmp_path):
    doc = json.loads((FIXTURE / "bcolz.json").read_text())
    doc["schema"] = 2
    err = bad_results(tmp_path, "x.json", json.dumps(doc))
    path = tmp_path / "results" / "x.json"
    assert err == f"plots.py: {path}: not a benchmark result of schema 1\n"


def test_missing_key_is_named(tmp_path):
    doc = json.loads((FIXTURE / "bcolz.json").read_text())
    del doc["results"][1]["mb_per_s"]
    err = bad_results(tmp_path, "x.json", json.dumps(doc))
    assert err == f"plots.py: {tmp_path / 'results' / 'x.json'}: no results[1].mb_per_s\n"


def test_comparison_without_its_records(tmp_path):
    doc = json.loads((FIXTURE / "bcolz.json").read_text())
    doc["comparisons"][0]["peer"] = "nobody"
    err = bad_results(tmp_path, "x.json", json.dumps(doc))
    assert err == (
        f"plots.py: {tmp_path / 'results' / 'x.json'}: comparisons[0] names no record:"
        " 'int64 ramp 1 MiB', 'bcolz', 'nobody', 'read'\n"
    )


# --- every benchmark script's --json output --------------------------------------------------

#: script -> (benchmark name, tiny arguments, settings plots.py reads, the figures it feeds)
SCRIPTS = {
    "bench_write.py": (
        "write",
        ["--size-mib", "1", "--repeat", "1", "--formats", "b2nd,sparse,bcolz"],
        [],
        ["compression_ratio.png", "formats_vs_own_library.png"],
    ),
    "bench_random_access.py": (
        "random_access",
        ["--size-mib", "2", "--repeat", "1", "--item-rounds", "8"],
        ["size_mib", "item_rounds"],
        ["compression_ratio.png", "random_access_latency.png"],
    ),
    "bench_b2nd.py": (
        "b2nd",
        ["--size-mib", "2", "--repeat", "1"],
        ["size_mib", "repeat"],
        ["compression_ratio.png", "formats_vs_own_library.png", "random_access_latency.png"],
    ),
    "bench_bcolz.py": (
        "bcolz",
        ["--sizes", "1", "--repeat", "1"],
        [],
        ["compression_ratio.png", "formats_vs_own_library.png"],
    ),
}


def check_doc(doc: dict, benchmark: str, settings: list[str], note: str) -> None:
    assert set(doc) == DOC_KEYS
    assert doc["schema"] == 1 and doc["benchmark"] == benchmark
    assert set(doc["machine"]) == MACHINE_KEYS and doc["machine"]["note"] == note
    assert doc["machine"]["cpu_count"] == os.cpu_count()
    assert doc["settings"]["note"] == "tiny"
    for key in settings:
        assert key in doc["settings"], key
    assert doc["results"] and doc["comparisons"]
    for r in doc["results"]:
        assert set(r) >= RECORD_KEYS, r
        assert r["seconds"] > 0
        if r["nbytes"] is None:
            assert r["mb_per_s"] is None
        else:
            assert r["mb_per_s"] == pytest.approx(r["nbytes"] / 2**20 / r["seconds"])
    keys = {(r["dataset"], r["format"], r["contender"], r["operation"]) for r in doc["results"]}
    for c in doc["comparisons"]:
        assert set(c) == COMPARISON_KEYS
        assert c["kind"] in ("throughput", "latency")
        for who in (c["ours"], c["peer"]):
            assert (c["dataset"], c["format"], who, c["operation"]) in keys, c


def bench_json(results: Path, script: str, args: list[str]) -> dict:
    """Run ``script`` with ``--json`` into ``results``; its JSON document."""
    out = results / f"{script[6:-3]}.json"
    proc = run(script, *args, "--json", str(out), "--machine-note", "test VM",
               "--run-note", "tiny")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """script -> (its results directory, its JSON document), each script run once."""
    done: dict[str, tuple[Path, dict]] = {}

    def get(script: str) -> tuple[Path, dict]:
        if script not in done:
            results = tmp_path_factory.mktemp(script[:-3])
            done[script] = results, bench_json(results, script, SCRIPTS[script][1])
        return done[script]

    return get


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script_json_has_what_plots_reads(tmp_path, tiny_run, script):
    benchmark, _, settings, figures = SCRIPTS[script]
    results, doc = tiny_run(script)
    check_doc(doc, benchmark, settings, "test VM")
    draw(results, tmp_path / "img")
    assert sorted(p.name for p in (tmp_path / "img").iterdir()) == figures
    for name in figures:
        check_png(tmp_path / "img" / name, FIGURES[name])


def test_write_json_records(tiny_run):
    _, doc = tiny_run("bench_write.py")
    assert [(r["format"], r["contender"], r["operation"]) for r in doc["results"]] == [
        (".b2nd", "bloscpack", "write"),
        (".b2nd", "python-blosc2", "write"),
        ("sparse b2nd", "bloscpack", "write"),
        ("sparse b2nd", "python-blosc2", "write"),
        ("bcolz", "bloscpack", "write (durable)"),
        ("bcolz", "bcolz", "write (durable)"),
        ("bcolz", "bloscpack", "write (durable=False)"),
        ("bcolz", "bcolz", "write (durable=False)"),
    ]
    assert {r["nbytes"] for r in doc["results"]} == {2**20}
    assert [r["peer_flushed"] for r in doc["results"][::2]] == [
        "peer + fsync", "peer + fsync", "peer + fsync", "no fsync"]  # fmt: skip
    assert all(r["cpu_seconds"] > 0 for r in doc["results"])
    load = doc["settings"].pop("load_average_1min")
    assert len(load) == 2 and 0 <= load[0] <= load[1]
    assert doc["settings"] == {"size_mib": 1, "repeat": 1, "nthreads": os.cpu_count(),
                               "quick": False, "note": "tiny", "dtype": "float64",
                               "formats": ["b2nd", "sparse", "bcolz"],
                               "statistic": "median"}  # fmt: skip


def test_write_json_blp_against_bloscpack016(tmp_path, bloscpack016):
    """The ``.blp`` rows: bloscpack 0.16 in its own process writes files of the same size."""
    args = ["--size-mib", "1", "--repeat", "1", "--dtype", "float32", "--formats", "blp",
            "--bp016-dir", str(bloscpack016.target)]  # fmt: skip
    doc = bench_json(tmp_path, "bench_write.py", args)
    check_doc(doc, "write", ["dtype", "formats"], "test VM")
    assert [(r["dataset"], r["format"], r["contender"], r["operation"], r["peer_flushed"])
            for r in doc["results"]] == [
        ("float32 random walk", ".blp", who, op, flushed)
        for op, flushed in [("write (durable)", "peer + fsync"), ("write (no fsync)", "no fsync")]
        for who in ("bloscpack", "bloscpack 0.16")
    ]  # fmt: skip
    assert len({r["ratio"] for r in doc["results"]}) == 1  # the same bytes


def test_random_access_json_counts_decodes(tiny_run):
    _, doc = tiny_run("bench_random_access.py")
    first = {r["format"]: r for r in doc["results"]
             if r["operation"] == "open + 1st item" and r["contender"] == "bloscpack"}  # fmt: skip
    assert first[".blp"]["decodes_on_open"] == [] and first[".b2nd"]["decodes_on_open"] == []
    assert [kind for kind, _ in first[".blp"]["decodes_for_item"]] == ["items"]
    assert [(c["format"], c["operation"], c["kind"]) for c in doc["comparisons"]] == [
        (".b2nd", "10 random items", "latency"),
        (".b2nd", "open + 1st item", "latency"),
    ]


@pytest.mark.slow
def test_blp_json_has_what_plots_reads(tmp_path, bloscpack016):
    """bench_blp.py runs every operation in its own subprocess: about a minute even at 1 MiB."""
    args = ["--size", "1", "--repeats", "1", "--no-flat-memory",
            "--bp016-dir", str(bloscpack016.target)]  # fmt: skip
    doc = bench_json(tmp_path / "results", "bench_blp.py", args)
    check_doc(doc, "blp", ["datasets", "size_mib", "codec", "clevel", "chunk_size", "nthreads"],
              "test VM")  # fmt: skip
    contenders = {r["contender"] for r in doc["results"]}
    assert {"bloscpack 1.x", "bloscpack 0.16 (its defaults)", "python-blosc2 (pack/save_tensor)",
            "numpy save/load (uncompressed)", "blpk 1.x"} <= contenders  # fmt: skip
    assert len(doc["comparisons"]) == 6
    for name in ("blp_throughput", "blp_cli_throughput", "compression_ratio"):
        assert (
            f"{name}: {tmp_path / 'img' / name}.png"
            in draw(tmp_path / "results", tmp_path / "img").stdout.splitlines()
        )


# --- bench_peers.py: whichever peers are installed ----------------------------------------------

#: peer -> the modules it needs
PEER_MODULES = {
    "zarr": ["zarr", "numcodecs"],
    "h5py+Blosc2": ["h5py", "hdf5plugin"],
    "h5py+Blosc": ["h5py", "hdf5plugin"],
    "python-blosc2": ["blosc2"],
    "tensorstore": ["tensorstore"],
}


def test_peers_json_compares_the_installed_peers(tmp_path):
    import importlib.util

    installed = [p for p, modules in PEER_MODULES.items()
                 if all(importlib.util.find_spec(m) for m in modules)]  # fmt: skip
    args = ["--size-mib", "1", "--repeat", "1", "--codecs", "lz4"]
    out = tmp_path / "peers.json"
    proc = run("bench_peers.py", *args, "--json", str(out), "--machine-note", "test VM",
               "--run-note", "tiny")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    skipped = [line.split(":")[0] for line in proc.stdout.splitlines() if line.endswith("skipped")]
    assert skipped == [p for p in PEER_MODULES if p not in installed]
    doc = json.loads(out.read_text())
    check_doc(doc, "peers", ["size_mib", "codecs", "chunks", "nthreads"], "test VM")
    ours = ["bloscpack .b2nd", "bloscpack .blp"]
    operations = ["save", "load", "open + element", "open + 1 MiB slice", "open + 512x512 box"]
    datasets = ["float64 random walk (lz4)", "int64 timestamps (lz4)", "float32 image (lz4)"]
    assert [(r["dataset"], r["operation"], r["contender"]) for r in doc["results"]] == [
        (dataset, op, who)
        for dataset in datasets
        for op in operations
        for who in [*ours, *installed]
        if who != "bloscpack .blp" or op != "open + 512x512 box"
    ]
    assert {(c["ours"], c["peer"]) for c in doc["comparisons"]} == {
        (o, p) for o in ours for p in installed
    }
    assert {r["nbytes"] for r in doc["results"] if r["operation"] in ("save", "load")} == {2**20}


def test_peers_unknown_peer_is_refused():
    proc = run("bench_peers.py", "--peers", "zarr,netcdf")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        "bench_peers.py: error: unknown peers netcdf"
        " (known: zarr, h5py+Blosc2, h5py+Blosc, python-blosc2, tensorstore)"
    )
