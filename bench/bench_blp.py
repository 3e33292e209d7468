#!/usr/bin/env python
"""Benchmark bloscpack 1.x against bloscpack 0.16, python-blosc2, numpy and ``zstd -T0``.

One run measures, on three datasets (linspace float64, arange int64, a float32 random walk):
pack/unpack of arrays to bytes and to files, and the command-line round trip (compress a raw
file, decompress it back).  Every operation runs in its own subprocess, so its peak memory can be
measured (``VmHWM`` after resetting it, minus the memory in use before the operation; the CLI
rows report the whole process's peak RSS).  Finally it checks that file-to-file compress and
decompress keep their peak memory flat as the file grows.

    python bench/bench_blp.py --quick          # small sizes, a minute or so
    python bench/bench_blp.py                  # 256 MiB per dataset, flat-memory check at 2 GiB
    python bench/bench_blp.py --markdown out.md

bloscpack 0.16 shares our import name: it is installed into its own directory (``--bp016-dir``,
with ``pip install --target``) and always run in a subprocess.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from timing import add_json_options, comparison, record, write_json

MiB = 2**20
#: The `.blp` rows with Blosc2 chunks: the same kind of chunks as python-blosc2's tensors.
OURS_BLOSC2 = "bloscpack 1.x (Blosc2 chunks)"
BP016_PRELUDE = (
    "import collections, collections.abc\n"
    "collections.MutableMapping = collections.abc.MutableMapping\n"
)
DEFAULT_BP016_DIR = Path(tempfile.gettempdir()) / "bloscpack-0.16-oracle"

# --- datasets -----------------------------------------------------------------------------

DATASETS = {"linspace f8": "float64", "arange i8": "int64", "random walk f4": "float32"}


def write_dataset(name: str, nbytes: int, path: Path) -> str:
    """Write ``nbytes`` of dataset ``name`` to ``path`` in pieces; return its dtype."""
    dtype = DATASETS[name]
    itemsize = np.dtype(dtype).itemsize
    total = nbytes // itemsize
    piece = 8 * MiB // itemsize
    rng = np.random.default_rng(20240601)
    level = np.float32(0)
    with open(path, "wb") as fh:
        for start in range(0, total, piece):
            n = min(piece, total - start)
            if name == "linspace f8":  # np.linspace(0, 1, total), written piece by piece
                data = (start + np.arange(n)) / max(total - 1, 1)
            elif name == "arange i8":
                data = np.arange(start, start + n, dtype=np.int64)
            else:
                data = np.cumsum(rng.standard_normal(n, dtype=np.float32)) + level
                level = data[-1]
            fh.write(np.ascontiguousarray(data, dtype=dtype).tobytes())
    return dtype


# --- measuring child processes ------------------------------------------------------------

CHILD_PRELUDE = textwrap.dedent(
    """
    import json, os, sys, time, gc
    import numpy as np

    def _status(key):
        with open('/proc/self/status') as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
        return 0

    def _reset_peak():
        try:
            with open('/proc/self/clear_refs', 'w') as fh:
                fh.write('5')
        except OSError:
            pass

    def measure(op, repeats, size_of=None):
        best, extra = float('inf'), 0
        result = None
        for _ in range(repeats):
            result = None
            gc.collect()
            before = _status('VmRSS:')
            _reset_peak()
            t0 = time.perf_counter()
            result = op()
            elapsed = time.perf_counter() - t0
            extra = max(extra, _status('VmHWM:') - before)
            best = min(best, elapsed)
        size = size_of(result) if size_of else None
        peak = _status('VmHWM:')
        print(json.dumps({'seconds': best, 'extra': extra, 'peak': peak, 'size': size}))
    """
)


def _ours_env() -> dict[str, str]:
    """The environment of the measured processes: bytecode caches allowed, as after an
    install (pip compiles 0.16's modules when it installs them)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _bp016_env(bp016_dir: Path) -> dict[str, str]:
    return dict(_ours_env(), PYTHONPATH=str(bp016_dir))


@dataclass
class Contender:
    """One library under test: how to start its Python and its per-operation code."""

    name: str
    python: list[str]
    env: dict[str, str]
    setup: str
    ops: dict[str, tuple[str, str, str | None]]  # op -> (prepare, expression, size_of)
    notes: str = ""
    fmt: str = ".blp"  # what it writes, for the JSON results


@dataclass
class Settings:
    codec: str
    clevel: int
    chunk_size: int
    nthreads: int
    repeats: int


def bloscpack_ops(blosc_args: str) -> dict[str, tuple[str, str, str | None]]:
    """The same code drives 0.16 and 1.x: the Python API is unchanged."""
    return {
        "pack bytes": ("", f"bp.pack_ndarray_to_bytes(a, chunk_size=CS, {blosc_args})", "len"),
        "unpack bytes": (
            f"buf = bp.pack_ndarray_to_bytes(a, chunk_size=CS, {blosc_args}); del a",
            "bp.unpack_ndarray_from_bytes(buf)",
            None,
        ),
        "pack file": (
            "",
            f"bp.pack_ndarray_to_file(a, DST, chunk_size=CS, {blosc_args})",
            "lambda r: os.path.getsize(DST)",
        ),
        "unpack file": (
            f"bp.pack_ndarray_to_file(a, DST, chunk_size=CS, {blosc_args}); del a",
            "bp.unpack_ndarray_from_file(DST)",
            None,
        ),
    }


def contenders(settings: Settings, bp016_dir: Path | None) -> list[Contender]:
    ours_args = f"blosc_args=bp.BloscArgs(clevel={settings.clevel}, cname={settings.codec!r})"
    result = [
        Contender(
            "bloscpack 1.x",
            [sys.executable],
            _ours_env(),
            f"import bloscpack as bp\nbp.engine.set_nthreads({settings.nthreads})\n",
            bloscpack_ops(ours_args),
        ),
        Contender(
            OURS_BLOSC2,
            [sys.executable],
            _ours_env(),
            f"import bloscpack as bp\nbp.engine.set_nthreads({settings.nthreads})\n",
            bloscpack_ops(ours_args.replace("bp.BloscArgs(", "bp.BloscArgs(blosc_version=2, ")),
        ),
    ]
    if bp016_dir is not None:
        prelude = BP016_PRELUDE + "import bloscpack as bp, blosc\n"
        prelude += f"blosc.set_nthreads({settings.nthreads})\n"
        result.append(
            Contender(
                "bloscpack 0.16 (its defaults)",
                [sys.executable, "-S"],
                _bp016_env(bp016_dir),
                prelude + "CS = '1M'\n",
                bloscpack_ops(""),
            )
        )
        if (settings.codec, settings.clevel, settings.chunk_size) != ("blosclz", 7, MiB):
            result.append(
                Contender(
                    "bloscpack 0.16 (our settings)",
                    [sys.executable, "-S"],
                    _bp016_env(bp016_dir),
                    prelude,
                    bloscpack_ops(ours_args),
                )
            )
    cparams = (
        f"{{'codec': blosc2.Codec.{settings.codec.upper()}, 'clevel': {settings.clevel},"
        f" 'nthreads': {settings.nthreads}, 'filters': [blosc2.Filter.SHUFFLE],"
        f" 'typesize': a.itemsize}}"
    )
    result.append(
        Contender(
            "python-blosc2 (pack/save_tensor)",
            [sys.executable],
            _ours_env(),
            f"import blosc2\nblosc2.set_nthreads({settings.nthreads})\n",
            {
                "pack bytes": (
                    f"cp = {cparams}",
                    "blosc2.pack_tensor(a, chunksize=CS, cparams=cp)",
                    "len",
                ),
                "unpack bytes": (
                    f"buf = blosc2.pack_tensor(a, chunksize=CS, cparams={cparams}); del a",
                    "blosc2.unpack_tensor(buf)",
                    None,
                ),
                "pack file": (
                    f"cp = {cparams}",
                    "blosc2.save_tensor(a, DST, chunksize=CS, cparams=cp, mode='w')",
                    "lambda r: os.path.getsize(DST)",
                ),
                "unpack file": (
                    f"blosc2.save_tensor(a, DST, chunksize=CS, cparams={cparams}, mode='w'); del a",
                    "blosc2.load_tensor(DST)",
                    None,
                ),
            },
            fmt="b2frame (tensor)",
        )
    )
    result.append(
        Contender(
            "numpy save/load (uncompressed)",
            [sys.executable],
            _ours_env(),
            "import io\n",
            {
                "pack bytes": (
                    "",
                    "(lambda f: (np.save(f, a), f.getbuffer())[1])(io.BytesIO())",
                    "len",
                ),
                "unpack bytes": (
                    "f = io.BytesIO(); np.save(f, a); buf = f.getvalue(); del a, f",
                    "np.load(io.BytesIO(buf))",
                    None,
                ),
                "pack file": ("", "np.save(DST, a)", "lambda r: os.path.getsize(DST)"),
                "unpack file": ("np.save(DST, a); del a", "np.load(DST)", None),
            },
            fmt=".npy",
        )
    )
    return result


def run_op(
    contender: Contender, op: str, src: Path, dtype: str, dst: Path, settings: Settings
) -> dict:
    prepare, expression, size_of = contender.ops[op]
    size_expr = {"len": "len", None: "None"}.get(size_of, size_of)
    code = "\n".join(
        [
            contender.setup,
            CHILD_PRELUDE,
            f"CS = {settings.chunk_size}" if "CS = " not in contender.setup else "",
            f"DST = {str(dst.with_suffix('.npy') if 'numpy' in contender.name else dst)!r}",
            f"a = np.fromfile({str(src)!r}, dtype={dtype!r})",
            prepare,
            f"measure(lambda: {expression}, {settings.repeats}, {size_expr})",
        ]
    )
    proc = subprocess.run(
        [*contender.python, "-c", code], env=contender.env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{contender.name} {op} failed:\n{proc.stderr[-2000:]}")
    for path in (dst, dst.with_suffix(".npy")):
        if path.exists():
            path.unlink()
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- command lines ------------------------------------------------------------------------


GNU_TIME = shutil.which("time", path="/usr/bin:/bin")


def timed_process(argv: list[str], env: dict[str, str], scratch: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one process.

    The peak comes from GNU time when installed: the rusage of a child forked by this (large)
    Python process would include this process's memory, copied at fork time.
    """
    report = scratch / "time.out"
    prefix = [GNU_TIME, "-f", "%M", "-o", str(report)] if GNU_TIME else []
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        prefix + argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        assert proc.stderr is not None
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr.read().decode()[-2000:]}")
    peak_kib = int(report.read_text().split()[-1]) if GNU_TIME else usage.ru_maxrss
    return elapsed, peak_kib * 1024


def cli_commands(
    settings: Settings, bp016_dir: Path | None
) -> dict[str, tuple[list[str], list[str], dict[str, str]]]:
    """name -> (compress argv prefix, decompress argv prefix, env); in/out files are appended."""
    n = str(settings.nthreads)
    ours = [sys.executable, "-m", "bloscpack", "-f", "-n", n]
    z = str(settings.chunk_size)
    commands = {
        "blpk 1.x": (
            ours + ["c", "-c", settings.codec, "-l", str(settings.clevel), "-z", z, "-t", "{t}"],
            ours + ["d", "-e"],
            _ours_env(),
        ),
    }
    if bp016_dir is not None:
        old = [
            sys.executable,
            "-S",
            "-c",
            BP016_PRELUDE + "import sys; from bloscpack.cli import main;"
            " sys.argv = ['blpk'] + sys.argv[1:]; main()",
            "-f",
            "-n",
            n,
        ]
        commands["blpk 0.16 (its defaults)"] = (
            old + ["c"],
            old + ["d", "-e"],
            _bp016_env(bp016_dir),
        )
        if (settings.codec, settings.clevel, settings.chunk_size) != ("blosclz", 7, MiB):
            commands["blpk 0.16 (our settings)"] = (
                old + ["c", "-c", settings.codec, "-l", str(settings.clevel), "-z", z, "-t", "{t}"],
                old + ["d", "-e"],
                _bp016_env(bp016_dir),
            )
    if shutil.which("zstd"):
        commands["zstd -T0"] = (
            ["zstd", "-T0", "-q", "-f"],
            ["zstd", "-d", "-T0", "-q", "-f"],
            _ours_env(),
        )
    return commands


def run_cli(
    prefixes: tuple[list[str], list[str], dict[str, str]],
    src: Path,
    itemsize: int,
    work: Path,
    repeats: int,
) -> dict:
    compress, decompress, env = prefixes
    packed, back = work / "cli.packed", work / "cli.back"
    compress = [part.replace("{t}", str(itemsize)) for part in compress]
    is_zstd = compress[0] == "zstd"
    c_argv = compress + ([str(src), "-o", str(packed)] if is_zstd else [str(src), str(packed)])
    d_argv = decompress + ([str(packed), "-o", str(back)] if is_zstd else [str(packed), str(back)])
    c_best, c_peak, d_best, d_peak = float("inf"), 0, float("inf"), 0
    for _ in range(repeats):
        seconds, peak = timed_process(c_argv, env, work)
        c_best, c_peak = min(c_best, seconds), max(c_peak, peak)
        seconds, peak = timed_process(d_argv, env, work)
        d_best, d_peak = min(d_best, seconds), max(d_peak, peak)
    size = packed.stat().st_size
    if back.stat().st_size != src.stat().st_size:
        raise RuntimeError(f"{' '.join(compress)}: round trip changed the size")
    packed.unlink()
    back.unlink()
    return {
        "c_seconds": c_best,
        "c_peak": c_peak,
        "d_seconds": d_best,
        "d_peak": d_peak,
        "size": size,
    }


# --- report -------------------------------------------------------------------------------


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)

    def add(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.append(text)


def mbs(nbytes: int, seconds: float) -> str:
    return f"{nbytes / MiB / seconds:,.0f}" if seconds > 0 else "-"


def ensure_bp016(directory: Path) -> Path | None:
    """bloscpack 0.16 in its own directory (installed with pip --target if missing)."""
    if (directory / "bloscpack" / "__init__.py").exists():
        return directory
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--target",
            str(directory),
            "bloscpack==0.16.0",
            "blosc==1.11.4",
            "numpy",
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        print(f"# bloscpack 0.16 not available: {proc.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    return directory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes (CI smoke run)")
    parser.add_argument(
        "--size", type=int, default=None, help="MiB per dataset (default 256, quick 8)"
    )
    parser.add_argument("--codec", default="blosclz")
    parser.add_argument("--clevel", type=int, default=7)
    parser.add_argument("--chunk-size", type=int, default=MiB)
    parser.add_argument("--nthreads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--bp016-dir",
        type=Path,
        default=Path(os.environ.get("BLOSCPACK016_DIR", DEFAULT_BP016_DIR)),
    )
    parser.add_argument(
        "--no-flat-memory", action="store_true", help="skip the 200 MiB vs 2 GiB check"
    )
    parser.add_argument("--workdir", type=Path, default=None, help="where the data files go")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the tables here")
    add_json_options(parser)
    args = parser.parse_args(argv)

    size = (args.size or (8 if args.quick else 256)) * MiB
    repeats = args.repeats or (2 if args.quick else 3)
    settings = Settings(args.codec, args.clevel, args.chunk_size, args.nthreads, repeats)
    bp016 = ensure_bp016(args.bp016_dir)
    report = Report()
    records: list[dict[str, object]] = []
    flat_sizes = ((16 if args.quick else 200) * MiB, (160 if args.quick else 2048) * MiB)
    work = Path(tempfile.mkdtemp(prefix="bench-blp-", dir=args.workdir))
    try:
        report.add(
            f"Settings: codec {settings.codec}, clevel {settings.clevel}, shuffle, chunk size"
            f" {settings.chunk_size // 1024} KiB, {settings.nthreads} threads, best of"
            f" {repeats}; {size // MiB} MiB per dataset. Throughput in MB/s of uncompressed"
            " data (1 MB = 2^20 bytes); memory = peak RSS above what was in use before the"
            " operation (CLI: whole-process peak RSS)."
        )
        results = run_benchmarks(settings, bp016, size, work, report, records)
        check_targets(results, report)
        if not args.no_flat_memory:
            flat_memory(settings, bp016, work, report, *flat_sizes, records)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.markdown:
        args.markdown.write_text("\n".join(report.lines) + "\n")
    write_json(
        args,
        "blp",
        {
            **vars(settings),
            "size_mib": size // MiB,
            "datasets": DATASETS,
            "flat_memory_mib": None if args.no_flat_memory else [n // MiB for n in flat_sizes],
            "quick": args.quick,
        },
        records,
        [
            comparison(".blp", op, "bloscpack 1.x", "bloscpack 0.16 (its defaults)", dataset)
            for dataset in DATASETS
            for op in ("pack file", "unpack file")
            if (dataset, "bloscpack 0.16 (its defaults)", op) in results
        ],
    )
    return 0


def table(report: Report, title: str, columns: list[str]) -> None:
    """A markdown heading and table header (first column left-aligned, the rest right)."""
    report.add()
    report.add(f"### {title}")
    report.add()
    report.add("| " + " | ".join(columns) + " |")
    report.add("|---|" + "---:|" * (len(columns) - 1))  # numbers right-aligned


def run_benchmarks(
    settings: Settings,
    bp016: Path | None,
    size: int,
    work: Path,
    report: Report,
    records: list[dict[str, object]],
) -> dict[tuple[str, str, str], dict]:
    """Per dataset: the Python API table, then the command-line table (each measurement also
    appended to ``records``)."""
    results: dict[tuple[str, str, str], dict] = {}
    everyone = contenders(settings, bp016)
    commands = cli_commands(settings, bp016)
    for dataset in DATASETS:
        src = work / "data.bin"
        dtype = write_dataset(dataset, size, src)
        nbytes = src.stat().st_size
        table(
            report,
            f"{dataset} ({nbytes // MiB} MiB), Python API",
            [
                "library",
                "pack bytes MB/s",
                "unpack bytes MB/s",
                "pack file MB/s",
                "unpack file MB/s",
                "ratio",
                "pack mem MiB",
                "unpack mem MiB",
            ],
        )
        for contender in everyone:
            row = {
                op: run_op(contender, op, src, dtype, work / "out.bin", settings)
                for op in contender.ops
            }
            size_c = row["pack file"]["size"] or row["pack bytes"]["size"]
            for op, value in row.items():
                results[(dataset, contender.name, op)] = value
                records.append(
                    record(
                        dataset,
                        contender.fmt,
                        contender.name,
                        op,
                        value["seconds"],
                        nbytes,
                        nbytes / size_c,
                        value["extra"],
                    )
                )
            report.add(
                f"| {contender.name} | {mbs(nbytes, row['pack bytes']['seconds'])}"
                f" | {mbs(nbytes, row['unpack bytes']['seconds'])}"
                f" | {mbs(nbytes, row['pack file']['seconds'])}"
                f" | {mbs(nbytes, row['unpack file']['seconds'])}"
                f" | {nbytes / size_c:.2f}"
                f" | {max(row['pack bytes']['extra'], row['pack file']['extra']) / MiB:.0f}"
                f" | {max(row['unpack bytes']['extra'], row['unpack file']['extra']) / MiB:.0f} |"
            )
        table(
            report,
            f"{dataset} ({nbytes // MiB} MiB), command line (file to file, incl. start-up)",
            [
                "command",
                "compress MB/s",
                "decompress MB/s",
                "ratio",
                "compress peak RSS MiB",
                "decompress peak RSS MiB",
            ],
        )
        for name, prefixes in commands.items():
            r = run_cli(prefixes, src, np.dtype(dtype).itemsize, work, settings.repeats)
            records.extend(cli_records(dataset, name, nbytes, r))
            report.add(
                f"| {name} | {mbs(nbytes, r['c_seconds'])} | {mbs(nbytes, r['d_seconds'])}"
                f" | {nbytes / r['size']:.2f} | {r['c_peak'] / MiB:.0f} | {r['d_peak'] / MiB:.0f} |"
            )
        src.unlink()
    return results


def cli_records(dataset: str, command: str, nbytes: int, r: dict) -> list[dict[str, object]]:
    """The JSON records of one ``run_cli`` result (memory: the whole process's peak RSS)."""
    fmt = ".zst" if command.startswith("zstd") else ".blp"
    return [
        record(
            dataset,
            fmt,
            command,
            f"{op} (CLI)",
            r[f"{k}_seconds"],
            nbytes,
            nbytes / r["size"],
            r[f"{k}_peak"],
        )
        for op, k in (("compress", "c"), ("decompress", "d"))
    ]


def check_targets(results: dict[tuple[str, str, str], dict], report: Report) -> None:
    """Speed-ups of bloscpack 1.x over 0.16 (its defaults) and python-blosc2 (same settings)."""
    table(
        report,
        "Targets: speed of bloscpack 1.x relative to the others (higher is better)",
        [
            "dataset",
            "operation",
            "vs 0.16 defaults (target ≥ 1.5)",
            "vs python-blosc2 (target ≥ 1.0)",
            "Blosc2 chunks vs python-blosc2 (target ≥ 1.0)",
        ],
    )
    for dataset in DATASETS:
        for op in ("pack bytes", "unpack bytes", "pack file", "unpack file"):
            cells = []
            for ours, other, target in (
                ("bloscpack 1.x", "bloscpack 0.16 (its defaults)", 1.5),
                ("bloscpack 1.x", "python-blosc2 (pack/save_tensor)", 1.0),
                (OURS_BLOSC2, "python-blosc2 (pack/save_tensor)", 1.0),
            ):
                if (dataset, other, op) in results:
                    ratio = (
                        results[(dataset, other, op)]["seconds"]
                        / results[(dataset, ours, op)]["seconds"]
                    )
                    cells.append(f"{ratio:.2f}× {'✓' if ratio >= target else '✗'}")
                else:
                    cells.append("n/a")
            report.add(f"| {dataset} | {op} | {' | '.join(cells)} |")


def flat_memory(
    settings: Settings,
    bp016: Path | None,
    work: Path,
    report: Report,
    small: int,
    large: int,
    records: list[dict[str, object]],
) -> None:
    """Peak RSS of ``blpk c``/``blpk d`` on a small and a large file of the same data."""
    commands = {k: v for k, v in cli_commands(settings, bp016).items() if k.startswith("blpk")}
    a, b = f"{small // MiB} MiB", f"{large // MiB} MiB"
    table(
        report,
        f"Peak RSS (MiB) of file-to-file compress/decompress: {a} vs {b}",
        [
            "command",
            f"compress {a}",
            f"compress {b}",
            f"decompress {a}",
            f"decompress {b}",
            "flat (≤ 50 MiB growth)",
        ],
    )
    peaks: dict[str, list[int]] = {name: [] for name in commands}
    for nbytes in (small, large):
        src = work / "flat.bin"
        write_dataset("random walk f4", nbytes, src)
        for name, prefixes in commands.items():
            r = run_cli(prefixes, src, 4, work, 1)
            peaks[name] += [r["c_peak"], r["d_peak"]]
            records.extend(cli_records(f"flat memory {nbytes // MiB} MiB", name, nbytes, r))
        src.unlink()
    for name, (c_small, d_small, c_large, d_large) in peaks.items():
        flat = (c_large - c_small) <= 50 * MiB and (d_large - d_small) <= 50 * MiB
        report.add(
            f"| {name} | {c_small / MiB:.0f} | {c_large / MiB:.0f} | {d_small / MiB:.0f}"
            f" | {d_large / MiB:.0f} | {'yes' if flat else 'no'} |"
        )


if __name__ == "__main__":
    sys.exit(main())
