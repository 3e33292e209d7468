#!/usr/bin/env python
"""Figures for the documentation, drawn from the benchmarks' ``--json`` results.

Reads every ``*.json`` in the results directory (one per benchmark script: ``bench_blp.py``,
``bench_write.py``, ``bench_b2nd.py``, ``bench_bcolz.py``, ``bench_random_access.py``,
``bench_peers.py``) and
writes PNG figures, 800 pixels wide, into the output directory.  A figure whose data is missing
is left out (and said so).  The same JSON gives the same PNG bytes: no timestamps or software
versions in the metadata, fixed size and resolution.

    python bench/plots.py                                  # bench/results/ -> docs/img/
    python bench/plots.py --results DIR --out DIR
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

SCHEMA = 1
HERE = Path(__file__).resolve().parent
DPI = 100
WIDTH = 8.0  # inches: 800 pixels at DPI
#: figure name -> height in inches (the PNG is WIDTH x height inches at DPI)
HEIGHTS = {
    "blp_throughput": 7.0,
    "blp_cli_throughput": 4.5,
    "formats_vs_own_library": 6.5,
    "random_access_latency": 4.5,
    "compression_ratio": 8.0,
    "peers_ratios": 7.5,
}
MBS = "MB/s (uncompressed; 1 MB = 2²⁰ bytes)"
PALETTE = plt.get_cmap("tab10").colors
Results = dict[str, dict]
#: What this script reads of a result file (``timing.write_json`` writes it).
DOC_KEYS = ("schema", "benchmark", "settings", "machine", "results", "comparisons")
MACHINE_KEYS = ("cpu_count", "note")
RECORD_KEYS = ("dataset", "format", "contender", "operation", "seconds", "mb_per_s", "ratio")
COMPARISON_KEYS = ("dataset", "format", "operation", "ours", "peer", "kind")
SETTINGS_KEYS = {
    "blp": ("datasets", "size_mib", "codec", "clevel", "chunk_size", "nthreads"),
    "random_access": ("size_mib", "item_rounds"),
    "b2nd": ("size_mib", "repeat"),
    "peers": ("size_mib", "codecs", "clevel", "chunks", "nthreads", "repeat"),
}


class ResultsError(Exception):
    """A results directory or file that cannot be drawn (the message says why)."""


def load_results(directory: Path) -> Results:
    """benchmark name -> its JSON document, for every ``*.json`` in ``directory``."""
    docs: Results = {}
    for path in sorted(directory.glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except ValueError as exc:
            raise ResultsError(f"{path}: not JSON ({exc})") from None
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            raise ResultsError(f"{path}: not a benchmark result of schema {SCHEMA}")
        check_keys(path, doc)
        name = doc["benchmark"]
        if name in docs:
            raise ResultsError(f"{path}: a second result of benchmark {name!r}")
        docs[name] = doc
    if not docs:
        raise ResultsError(f"{directory}: no *.json benchmark results")
    return docs


def check_keys(path: Path, doc: dict) -> None:
    """Every key this script reads is there (else a ResultsError naming the first missing),
    and every comparison names two records."""
    wanted = [("", doc, DOC_KEYS)]
    if all(key in doc for key in DOC_KEYS):
        wanted += [("machine.", doc["machine"], MACHINE_KEYS)]
        wanted += [("settings.", doc["settings"], SETTINGS_KEYS.get(doc["benchmark"], ()))]
        wanted += [(f"results[{i}].", r, RECORD_KEYS) for i, r in enumerate(doc["results"])]
        wanted += [
            (f"comparisons[{i}].", c, COMPARISON_KEYS) for i, c in enumerate(doc["comparisons"])
        ]
    for where, part, keys in wanted:
        for key in keys:
            if key not in part:
                raise ResultsError(f"{path}: no {where}{key}")
    for i, c in enumerate(doc["comparisons"]):
        for who in (c["ours"], c["peer"]):
            if find(doc, c["dataset"], c["format"], who, c["operation"]) is None:
                raise ResultsError(
                    f"{path}: comparisons[{i}] names no record: {c['dataset']!r},"
                    f" {c['format']!r}, {who!r}, {c['operation']!r}"
                )


def find(doc: dict, dataset: str, fmt: str, contender: str, operation: str) -> dict | None:
    """The record of one measurement, or None."""
    for r in doc["results"]:
        if (r["dataset"], r["format"], r["contender"], r["operation"]) == (
            dataset,
            fmt,
            contender,
            operation,
        ):
            return r
    return None


def unique(values: Iterable[str]) -> list[str]:
    """``values`` without repeats, in first-seen order."""
    return list(dict.fromkeys(values))


def new_figure(name: str, rows: int = 1, cols: int = 1) -> tuple[Figure, list[Axes]]:
    fig, axes = plt.subplots(
        rows, cols, figsize=(WIDTH, HEIGHTS[name]), dpi=DPI, layout="constrained", squeeze=False
    )
    return fig, list(axes.flat)


def save(fig: Figure, out: Path, name: str) -> Path:
    path = out / f"{name}.png"
    # No "Software" (matplotlib's version) and no date: the bytes depend on the data only.
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    return path


def grouped_bars(
    ax: Axes,
    groups: list[str],
    series: dict[str, list[float | None]],
    colors: dict[str, tuple[float, float, float]],
    label_fmt: str | None = None,
) -> None:
    """One group of bars per entry of ``groups``, one bar per series (None: no bar)."""
    width = 0.8 / max(len(series), 1)
    for i, (name, values) in enumerate(series.items()):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        points = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
        if not points:
            continue
        bars = ax.bar(
            [x for x, _ in points], [v for _, v in points], width, label=name, color=colors[name]
        )
        if label_fmt:
            size = 7 if len(series) <= 4 else 6
            ax.bar_label(bars, [label_fmt.format(v) for _, v in points], fontsize=size, padding=1)
    ax.set_xticks(range(len(groups)), groups)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def color_map(names: list[str]) -> dict[str, tuple[float, float, float]]:
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def subtitle(doc: dict, what: str) -> str:
    m = doc["machine"]
    note = f"; {m['note']}" if m.get("note") else ""
    return textwrap.fill(f"{what}; {m['cpu_count']} CPUs{note}", 100)


# --- (a) .blp against its peers ----------------------------------------------------------


def blp_panels(docs: Results, name: str, out: Path, operations: list[str], rows: int) -> Path:
    doc = docs["blp"]
    datasets = list(doc["settings"]["datasets"])
    fig, axes = new_figure(name, rows, len(operations) // rows)
    records = [r for r in doc["results"] if r["dataset"] in datasets]
    contenders = unique(r["contender"] for r in records if r["operation"] in operations)
    colors = color_map(contenders)
    for ax, op in zip(axes, operations, strict=True):
        series = {}
        for who in contenders:
            found = [find(doc, d, fmt_of(doc, who), who, op) for d in datasets]
            series[who] = [r["mb_per_s"] if r else None for r in found]
        grouped_bars(ax, datasets, series, colors)
        ax.set_title(op)
        ax.set_ylabel(MBS, fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=8)
    settings = doc["settings"]
    fig.suptitle(
        ".blp throughput against its peers, higher is better\n"
        + subtitle(
            doc,
            f"{settings['size_mib']} MiB per dataset, {settings['codec']} {settings['clevel']},"
            f" {settings['chunk_size'] // 1024} KiB chunks, {settings['nthreads']} threads",
        ),
        fontsize=10,
    )
    return save(fig, out, name)


def fmt_of(doc: dict, contender: str) -> str:
    """The format a contender of ``doc`` writes."""
    return next(r["format"] for r in doc["results"] if r["contender"] == contender)


def blp_throughput(docs: Results, out: Path) -> Path:
    """(a) The Python API: pack/unpack to bytes and to a file, per dataset and contender."""
    ops = ["pack bytes", "unpack bytes", "pack file", "unpack file"]
    return blp_panels(docs, "blp_throughput", out, ops, rows=2)


def blp_cli_throughput(docs: Results, out: Path) -> Path:
    """(a) The command lines (file to file, start-up included), per dataset and command."""
    ops = ["compress (CLI)", "decompress (CLI)"]
    return blp_panels(docs, "blp_cli_throughput", out, ops, rows=1)


# --- (b) each format against its own library ---------------------------------------------


def pairs(docs: Results, kind: str) -> list[tuple[dict, dict, dict]]:
    """(comparison, bloscpack's record, the peer's record) for every comparison of ``kind``."""
    found = []
    for doc in docs.values():
        for c in doc["comparisons"]:
            if c["kind"] != kind:
                continue
            ours = find(doc, c["dataset"], c["format"], c["ours"], c["operation"])
            peer = find(doc, c["dataset"], c["format"], c["peer"], c["operation"])
            assert ours and peer, "checked by load_results"
            found.append((c, ours, peer))
    return found


def is_read(operation: str) -> bool:
    return operation.startswith(("read", "unpack", "load", "decompress"))


def formats_vs_own_library(docs: Results, out: Path) -> Path | None:
    """(b) bloscpack's throughput / the format's own library's, per format and operation."""
    found = pairs(docs, "throughput")
    if not found:
        return None
    name = "formats_vs_own_library"
    fig, (ax,) = new_figure(name)
    found.sort(key=lambda p: (is_read(p[0]["operation"]), p[0]["format"]))
    labels, ratios, colors = [], [], []
    for c, ours, peer in found:
        labels.append(
            f"{c['format']} {c['operation']} vs {c['peer']}\n{c['dataset']}:"
            f" {ours['mb_per_s']:,.0f} vs {peer['mb_per_s']:,.0f} MB/s"
        )
        ratios.append(peer["seconds"] / ours["seconds"])
        colors.append(PALETTE[1] if is_read(c["operation"]) else PALETTE[0])
    ys = list(range(len(found)))[::-1]
    bars = ax.barh(ys, [r - 1.0 for r in ratios], left=1.0, color=colors, height=0.7)
    ax.bar_label(bars, [f"{r:.2f}×" for r in ratios], fontsize=8, padding=2)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log", base=2)
    low, high = min(min(ratios), 1.0), max(max(ratios), 1.0)
    ax.set_xlim(low / 1.8, high * 1.8)
    ax.xaxis.set_major_formatter(lambda x, _: f"{x:g}×" if x >= 1 else f"1/{1 / x:g}×")
    ax.set_yticks(ys, labels, fontsize=7)
    ax.set_xlabel("speed of bloscpack / speed of the format's own library (log scale; > 1: faster)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    fig.legend(
        [Patch(color=PALETTE[0]), Patch(color=PALETTE[1])],
        ["write", "read"],
        loc="outside lower center",
        ncol=2,
        fontsize=8,
    )
    doc = next(iter(docs.values()))
    fig.suptitle(
        "Each format: bloscpack against the format's own library (same settings)\n"
        + subtitle(doc, "throughput ratio, best of several runs"),
        fontsize=10,
    )
    return save(fig, out, name)


# --- (c) random access -------------------------------------------------------------------


def random_access_latency(docs: Results, out: Path) -> Path | None:
    """(c) Milliseconds to read a few elements, one panel per operation: bloscpack (.blp,
    .b2nd) and python-blosc2."""
    ops = unique(c["operation"] for c, _, _ in pairs(docs, "latency"))
    if not ops:
        return None
    ops.sort(key=lambda op: op.startswith("read "))  # elements first, then regions
    name = "random_access_latency"
    records = [r for doc in docs.values() for r in doc["results"] if r["operation"] in ops]
    who = sorted(
        unique(f"{r['contender']} {r['format']}" for r in records),
        key=lambda k: (not k.startswith("bloscpack"), k),
    )
    colors = color_map(who)
    fig, axes = new_figure(name, 1, len(ops))
    for ax, op in zip(axes, ops, strict=True):
        mine = {f"{r['contender']} {r['format']}": r["seconds"] * 1e3 for r in records
                if r["operation"] == op}  # fmt: skip
        keys = [k for k in who if k in mine]
        bars = ax.bar(range(len(keys)), [mine[k] for k in keys], color=[colors[k] for k in keys])
        ax.bar_label(bars, [f"{mine[k]:.2f}" for k in keys], fontsize=8, padding=1)
        ax.set_xticks([])
        ax.set_title(("open + " + op[5:]) if op.startswith("read ") else op, fontsize=10)
        ax.set_ylim(0, max(mine.values()) * 1.15)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    axes[0].set_ylabel("milliseconds, lower is better")
    fig.legend(
        [Patch(color=colors[k]) for k in who], who, loc="outside lower center", ncol=3, fontsize=8
    )
    doc = docs.get("random_access") or docs["b2nd"]
    settings = doc["settings"]
    rounds = settings.get("item_rounds", settings["repeat"])
    fig.suptitle(
        "Random access: a few elements of a compressed array\n"
        + subtitle(doc, f"{settings['size_mib']} MiB float64 array, best of {rounds} rounds"),
        fontsize=10,
    )
    return save(fig, out, name)


# --- (d) compression ratios --------------------------------------------------------------


def compression_ratio(docs: Results, out: Path) -> Path | None:
    """(d) Uncompressed / stored size: .blp per dataset and writer; every other format."""
    name = "compression_ratio"
    blp = docs.get("blp")
    others = stored_ratios(doc for doc in docs.values() if doc["benchmark"] != "blp")
    if blp is None and not others:
        return None
    fig, axes = new_figure(name, 2 if blp and others else 1, 1)
    if blp:
        ax = axes[0]
        datasets = list(blp["settings"]["datasets"])
        ops = ("pack file", "compress (CLI)")
        records = [r for r in blp["results"] if r["dataset"] in datasets and r["operation"] in ops]
        # one bar per writer: a contender's API row, or a command line that is not bloscpack's
        writers = unique(
            r["contender"]
            for r in records
            if r["operation"] == "pack file" or not r["contender"].startswith("blpk")
        )
        series = {}
        for who in writers:
            by_dataset = {r["dataset"]: r["ratio"] for r in records if r["contender"] == who}
            series[who] = [by_dataset.get(d) for d in datasets]
        grouped_bars(ax, datasets, series, color_map(writers), label_fmt="{:.3g}")
        log_scale(ax)
        ax.set_ylabel("ratio (log scale)")
        settings = blp["settings"]
        ax.set_title(
            f".blp datasets ({settings['size_mib']} MiB each): {settings['codec']}"
            f" {settings['clevel']}, {settings['chunk_size'] // 1024} KiB chunks",
            fontsize=10,
        )
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if others:
        ax = axes[-1]
        ys = list(range(len(others)))[::-1]
        bars = ax.barh(ys, [v for _, v in others], color=PALETTE[2], height=0.6)
        ax.bar_label(bars, [f"{v:.2f}" for _, v in others], fontsize=8, padding=2)
        ax.set_yticks(ys, [label for label, _ in others], fontsize=8)
        ax.set_xlabel("ratio, higher is better")
        ax.set_xlim(0, max(v for _, v in others) * 1.15)
        ax.set_title("the other formats, with each benchmark's data and settings", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    fig.suptitle("Compression ratio: uncompressed size / stored size", fontsize=11)
    return save(fig, out, name)


def stored_ratios(docs: Iterable[dict]) -> list[tuple[str, float]]:
    """(label, ratio) per format and dataset; the writers are named where their ratios differ."""
    groups: dict[tuple[str, str], dict[float, list[str]]] = {}
    for doc in docs:
        for r in doc["results"]:
            if r["ratio"] is not None:
                by_ratio = groups.setdefault((r["format"], r["dataset"]), {})
                by_ratio.setdefault(round(r["ratio"], 2), []).append(r["contender"])
    found = []
    for (fmt, dataset), by_ratio in groups.items():
        for ratio, who in by_ratio.items():
            writers = f" ({', '.join(unique(who))})" if len(by_ratio) > 1 else ""
            found.append((f"{fmt}{writers}\n{dataset}", ratio))
    return found


def log_scale(ax: Axes) -> None:
    """A logarithmic y axis with plain numbers on its ticks."""
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(lambda y, _: f"{y:g}")
    ax.yaxis.set_minor_formatter(lambda y, _: "")


# --- (e) against the tools users pick instead ---------------------------------------------


def peers_ratios(docs: Results, out: Path) -> Path | None:
    """(e) Peer time / bloscpack time, one panel per operation: a point per dataset and codec,
    for each peer and each of bloscpack's formats; the line at 1.0 is parity."""
    doc = docs.get("peers")
    if doc is None:
        return None
    found = pairs({"peers": doc}, "throughput") + pairs({"peers": doc}, "latency")
    ops = unique(c["operation"] for c, _, _ in found)
    peers = unique(c["peer"] for c, _, _ in found)
    ours = unique(c["ours"] for c, _, _ in found)
    colors = color_map(ours)
    name = "peers_ratios"
    fig, axes = new_figure(name, 2, 3)
    for ax, op in zip(axes, ops, strict=False):
        for i, who in enumerate(ours):
            offset = (i - (len(ours) - 1) / 2) * 0.3
            xs, ys = [], []
            for c, mine, peer in found:
                if (c["operation"], c["ours"]) == (op, who):
                    xs.append(peers.index(c["peer"]) + offset)
                    ys.append(peer["seconds"] / mine["seconds"])
            ax.scatter(xs, ys, s=14, color=colors[who], label=who, alpha=0.8)
        ax.axhline(1.0, color="black", linewidth=1)
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(lambda y, _: f"{y:g}×" if y >= 1 else f"1/{1 / y:g}×")
        ax.set_xticks(range(len(peers)), peers, fontsize=7, rotation=30, ha="right")
        ax.set_title(op, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    for ax in axes[len(ops) :]:
        ax.set_axis_off()
    for ax in axes[::3]:  # the first of each row
        ax.set_ylabel("peer time / bloscpack time\n(log scale; > 1: bloscpack faster)")
    fig.legend(
        [Patch(color=colors[w]) for w in ours], ours, loc="outside lower center", ncol=2,
        fontsize=8,
    )  # fmt: skip
    settings = doc["settings"]
    fig.suptitle(
        "Against the tools users pick instead: each point a dataset and codec\n"
        + subtitle(doc, f"{settings['size_mib']} MiB arrays, {', '.join(settings['codecs'])}"
                   f" {settings['clevel']}, chunks {tuple(settings['chunks'])},"
                   f" {settings['nthreads']} threads, medians of {settings['repeat']}"),
        fontsize=10,
    )  # fmt: skip
    return save(fig, out, name)


def without_peers(draw: Callable[[Results, Path], Path | None]) -> Callable[..., Path | None]:
    """``draw`` over every result but ``bench_peers.py``'s (which has a figure of its own)."""
    return lambda docs, out: draw({k: v for k, v in docs.items() if k != "peers"}, out)


FIGURES: dict[str, Callable[[Results, Path], Path | None]] = {
    "blp_throughput": lambda docs, out: blp_throughput(docs, out) if "blp" in docs else None,
    "blp_cli_throughput": lambda docs, out: (
        blp_cli_throughput(docs, out) if "blp" in docs else None
    ),
    "formats_vs_own_library": without_peers(formats_vs_own_library),
    "random_access_latency": without_peers(random_access_latency),
    "compression_ratio": without_peers(compression_ratio),
    "peers_ratios": peers_ratios,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--results", type=Path, default=HERE / "results", help="the JSON files")
    parser.add_argument("--out", type=Path, default=HERE.parent / "docs" / "img")
    args = parser.parse_args(argv)
    try:
        docs = load_results(args.results)
        args.out.mkdir(parents=True, exist_ok=True)
        for name, draw in FIGURES.items():
            path = draw(docs, args.out)
            print(f"{name}: {path if path else 'no data, left out'}")
    except ResultsError as exc:
        print(f"plots.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
