"""What the manual states about defaults and exit codes is checked against the software.

Defaults: the table "Defaults" of ``docs/reference.md`` (function, parameter, default) and
every signature quoted in ``docs/`` and README.md (a code span ``name(params)`` with the bare
name of a function of that table) are compared with ``inspect.signature``.  Exit codes: every
sentence that states one ("exit code 1", "exits with 130", "(exit 2)", ...) and every row of
the exit code table of ``docs/cli.md`` is run: each is claimed by one case below, which runs
``blpk`` (or the script the sentence names) and returns the exit code, which must be the one
the page states.  A new statement without a case fails, as does a case that claims nothing.
Examples that need an optional extra say so on their page."""

from __future__ import annotations

import ast
import inspect
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA
from test_cli import blpk

import bloscpack

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
FENCE = re.compile(r"^```.*?^```", re.S | re.M)

# --- defaults ---------------------------------------------------------------------------------

DEFAULTS_ROW = re.compile(r"^\| `([\w.]+)` \| `(\w+)` \| `([^`]+)`.*\|$", re.M)
SIGNATURE = re.compile(r"`(\w+)\(([^`]*)\)`")
#: Functions whose every parameter with a default the table must list.
MAIN_FUNCTIONS = (
    "save", "load", "open", "detect", "info", "verify", "convert", "dispatch.compress_file",
    "to_dask", "to_dask_dataframe", "read_table", "to_references", "verify_references",
)  # fmt: skip


def function(name: str) -> Callable:
    """``save`` -> ``bloscpack.save``; ``dispatch.compress_file`` -> its module's function."""
    found = bloscpack
    for part in name.split("."):
        found = getattr(found, part)
    return found  # type: ignore[return-value]


def defaults_table(text: str) -> dict[tuple[str, str], str]:
    """``{(function, parameter): default as written}`` of the table "Defaults"."""
    section = text.split("## Defaults", 1)[1].split("\n## ", 1)[0]
    return {(fn, param): value for fn, param, value in DEFAULTS_ROW.findall(section)}


def default_errors(table: dict[tuple[str, str], str]) -> list[str]:
    """The rows of ``table`` whose default is not the signature's."""
    errors = []
    for (name, param), written in table.items():
        params = inspect.signature(function(name)).parameters
        if param not in params or params[param].default is inspect.Parameter.empty:
            errors.append(f"{name}: no parameter {param} with a default")
        elif not _same(ast.literal_eval(written), params[param].default):
            errors.append(f"{name}({param}=...): the docs say {written}, the code "
                          f"{params[param].default!r}")  # fmt: skip
    return errors


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b


def signature_errors(text: str, page: str, functions: set[str]) -> list[str]:
    """The quoted signatures in ``text`` (bare names of ``functions``, outside code blocks)
    whose parameter names or literal defaults are not the function's.  A span whose names are
    not the function's parameters is a call, not a signature, and is left alone."""
    errors = []
    by_bare = {name.rsplit(".", 1)[-1]: name for name in functions}
    for match in SIGNATURE.finditer(FENCE.sub("", text)):
        bare, inner = match.groups()
        start = match.start()
        if bare not in by_bare or text[max(start - 1, 0) : start] == ".":
            continue
        if text[max(0, start - 10) : start].endswith("bloscpack."):
            continue
        try:
            args = ast.parse(f"def f({inner}): pass").body[0].args  # type: ignore[attr-defined]
        except SyntaxError:
            continue
        real = inspect.signature(function(by_bare[bare])).parameters
        named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        if not named or any(a.arg not in real for a in named):
            continue
        written = dict(zip([a.arg for a in args.args][::-1], args.defaults[::-1], strict=False))
        written |= {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d}
        for param, node in written.items():
            try:
                value = ast.literal_eval(node)
            except ValueError:
                continue  # `progress=callable`: not a stated value
            if value is not Ellipsis and not _same(value, real[param].default):
                errors.append(f"{page}: {match.group(0)}: {param}={ast.unparse(node)}, the code"
                              f" has {real[param].default!r}")  # fmt: skip
    return errors


def test_the_defaults_table_matches_the_signatures():
    table = defaults_table((DOCS / "reference.md").read_text())
    assert default_errors(table) == []


@pytest.mark.parametrize("name", MAIN_FUNCTIONS)
def test_the_defaults_table_lists_every_default(name: str):
    table = defaults_table((DOCS / "reference.md").read_text())
    params = inspect.signature(function(name)).parameters.values()
    with_default = [p.name for p in params if p.default is not inspect.Parameter.empty]
    assert [p for p in with_default if (name, p) not in table] == []


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_quoted_signatures_state_the_real_defaults(page: Path):
    functions = {fn for fn, _ in defaults_table((DOCS / "reference.md").read_text())}
    assert signature_errors(page.read_text(), page.name, functions) == []


def test_a_wrong_default_is_found():
    table = defaults_table((DOCS / "reference.md").read_text())
    assert table[("convert", "overwrite")].startswith("True")
    table[("convert", "overwrite")] = "False"
    assert default_errors(table) == ["convert(overwrite=...): the docs say False, the code True"]
    text = "`convert(src, dst, format=None, *, overwrite=False, copy_chunks=True, **options)`"
    assert signature_errors(text, "p.md", {"convert"}) == [
        f"p.md: {text}: overwrite=False, the code has True"
    ]
    assert signature_errors(text.replace("False", "True"), "p.md", {"convert"}) == []
    call = '`bloscpack.convert(src, dst, format="b2nd")` and `convert(a, "x.blp")`'
    assert signature_errors(call, "p.md", {"convert"}) == []


# --- exit codes -------------------------------------------------------------------------------

EXIT_SENTENCE = re.compile(r"\bexit(?:s)?(?: code| status)?(?: is)?(?: with)? (\d{1,3})\b", re.I)
CLAUSE_ENDS = (". ", "; ", " | ")  # a sentence, a clause, a table cell
EXIT_TABLE = re.compile(r"^\| exit code \| meaning \|\n\|[-|]+\|\n((?:\|.*\|\n)+)", re.M)


@dataclass
class Statement:
    page: str
    code: int
    text: str  # the sentence around it (a table row: the row)


def exit_statements(page: str, text: str) -> list[Statement]:
    """The exit codes ``text`` (a page, outside its code blocks) states, with their context."""
    prose = FENCE.sub("", text)
    found = []
    for rows in EXIT_TABLE.findall(prose):
        for row in rows.splitlines():
            code, meaning = row.strip("|").split("|", 1)
            found.append(Statement(page, int(code), meaning.strip()))
    flat = " ".join(EXIT_TABLE.sub("", prose).split())
    for match in EXIT_SENTENCE.finditer(flat):
        starts = [s + len(b) for b in CLAUSE_ENDS if (s := flat.rfind(b, 0, match.start())) >= 0]
        begin = max([0, match.start() - 300, *starts])
        ends = [e for b in CLAUSE_ENDS if (e := flat.find(b, match.end())) >= 0]
        found.append(Statement(page, int(match.group(1)), flat[begin : min(ends, default=None)]))
    return found


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """Inputs for the cases: raw data, a container of each kind, damaged ones."""
    work = tmp_path_factory.mktemp("facts")
    np.arange(500_000, dtype=np.float64).tofile(work / "in.raw")
    bloscpack.save(np.linspace(0, 1, 50_000).reshape(500, 100), work / "grid.b2nd")
    bloscpack.save(np.arange(400_000, dtype=np.float64), work / "a.blp", chunk_size="256K")
    (work / "bad.blp").write_bytes((DATA / "bloscpack" / "bad_chunk_digest.blp").read_bytes())
    whole = (work / "a.blp").read_bytes()
    (work / "cut.blp").write_bytes(whole[: len(whole) // 2])
    (work / "exists.blp").write_bytes(whole)
    (work / "noise").write_bytes(b"no container here" * 100)
    return work


def code(*args: str | Path, cwd: Path, **kwargs) -> int:
    return blpk(*args, cwd=cwd, **kwargs).returncode


def shell(command: str, cwd: Path) -> int:
    """``command`` in bash with blpk on the PATH (``python -m bloscpack``)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    blpk_cmd = f"{sys.executable} -m bloscpack"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command.replace("blpk", blpk_cmd)],
                          cwd=cwd, env=env, capture_output=True, timeout=300)  # fmt: skip
    return done.returncode


def signalled(signum: int, cwd: Path) -> int:
    """blpk compressing an endless stream, sent ``signum`` once it runs."""
    proc = subprocess.Popen([sys.executable, "-m", "bloscpack", "c", "/dev/zero", "z.blp"],
                            cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(3)
    proc.send_signal(signum)
    proc.wait(timeout=60)
    assert not (cwd / "z.blp").exists()
    return proc.returncode


def no_range_info(cwd: Path) -> int:
    from remote_servers import http_server

    with http_server(str(cwd), ranges=False) as server:
        return code("info", f"{server.url}/grid.b2nd", cwd=cwd)


def same_codes(*codes: int) -> int:
    """The one exit code all of ``codes`` are (else a list, which no page states)."""
    return codes[0] if len(set(codes)) == 1 else list(codes)  # type: ignore[return-value]


def compress_objects(cwd: Path) -> int:
    """``blpk c`` of a ``.npy`` of Python objects."""
    np.save(cwd / "obj.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
    return code("c", "-f", "obj.npy", cwd=cwd)


def convert_no_suffix(cwd: Path) -> int:
    result = code("convert", "-f", "grid.b2nd", "converted", cwd=cwd)
    assert bloscpack.detect(cwd / "converted") == "blp"
    return result


def usage_examples(statement: Statement, cwd: Path) -> int:
    """Each option example the row gives (`-n 0`, `-l 10`, ...) given to ``blpk c``, plus an
    unknown option and no subcommand."""
    examples = re.findall(r"`(-[^`]+)`", statement.text)
    assert len(examples) >= 3, statement.text
    return same_codes(*(code("c", *ex.split(), "in.raw", "out.blp", cwd=cwd) for ex in examples),
                      code("c", "--no-such-option", "in.raw", cwd=cwd), code(cwd=cwd))  # fmt: skip


def refs_verify(statement: Statement, cwd: Path) -> int:
    """``blpk refs --verify`` of fresh references (a statement of exit 0), or of references
    whose container was appended to since (any other)."""
    bloscpack.save(np.arange(1000.0), cwd / "v.blp", overwrite=True)
    assert code("refs", "-f", "v.blp", "-o", "v.json", cwd=cwd) == 0
    if statement.code:
        bloscpack.append(cwd / "v.blp", np.arange(10.0))
    return code("refs", "--verify", "v.json", cwd=cwd)


def lazy_expression_codes(cwd: Path) -> int:
    """``blpk d``, ``info``, ``verify`` and ``convert`` of a lazy expression python-blosc2
    saved (refused by name)."""
    import blosc2

    operand = blosc2.asarray(np.arange(10.0), urlpath=str(cwd / "op.b2nd"), mode="w")
    (operand + operand).save(str(cwd / "lazy.b2nd"))
    return same_codes(code("d", "lazy.b2nd", "lazy.npy", cwd=cwd),
                      code("info", "lazy.b2nd", cwd=cwd), code("verify", "lazy.b2nd", cwd=cwd),
                      code("convert", "lazy.b2nd", "lazy.blp", cwd=cwd))  # fmt: skip


#: (page, words of the statement, how to run it -> exit code)
CASES: list[tuple[str, str, Callable[..., int]]] = [
    # docs/cli.md: the exit code table
    ("cli.md", "success", lambda s, w: code("c", "-f", "in.raw", "out.blp", cwd=w)),
    ("cli.md", "error: bad or missing input", lambda s, w: same_codes(
        code("d", "missing.blp", cwd=w), code("d", "-f", "bad.blp", "x.raw", cwd=w),
        code("c", "in.raw", "exists.blp", cwd=w), code("d", "-f", "a.blp", "/dev/full", cwd=w),
        code("t", "bad.blp", cwd=w))),
    ("cli.md", "usage error: unknown option", usage_examples),
    ("cli.md", "interrupted (Ctrl-C, SIGINT)", lambda s, w: signalled(signal.SIGINT, w)),
    ("cli.md", "terminated (SIGTERM)", lambda s, w: signalled(signal.SIGTERM, w)),
    # docs/cli.md: sentences
    ("cli.md", "the others are shown", lambda s, w: no_range_info(w)),
    ("cli.md", "cannot be read whole", lambda s, w: code("i", "cut.blp", cwd=w)),
    ("cli.md", "if any file failed", lambda s, w: code("t", "a.blp", "missing.blp", cwd=w)),
    ("cli.md", "if any file is not ok", lambda s, w: code("t", "--json", "bad.blp", cwd=w)),
    ("cli.md", "`--strict` fails", lambda s, w: code("t", "--strict", "grid.b2nd", cwd=w)),
    ("cli.md", "Errors on stdin", lambda s, w: shell("blpk d - out.raw < noise", w)),
    ("cli.md", "ends `blpk` quietly", lambda s, w: shell("blpk d a.blp - | head -c 10", w)),
    ("cli.md", "invalid option values exit", lambda s, w: code("c", "-z", "x", "in.raw", cwd=w)),
    ("cli.md", "SIGINT (Ctrl-C) exits", lambda s, w: signalled(signal.SIGINT, w)),
    ("cli.md", "invalid choice: 'unpack'", lambda s, w: code("unpack", "a.blp", cwd=w)),
    ("cli.md", "given to `compress`/`c`", lambda s, w: same_codes(
        code("c", "-9", "in.raw", cwd=w), code("convert", "-1", "a.blp", "b.b2nd", cwd=w))),
    ("cli.md", "these formats are directories",
     lambda s, w: code("c", "--format", "bcolz", "in.raw", "-", cwd=w)),
    # docs/errors.md
    ("cli.md", "one line `ok`", refs_verify),
    ("cli.md", "do not go with it", lambda s, w: code("refs", "--verify", "a.blp", "-o", "x",
                                                     cwd=w)),
    ("zarr-references.md", "one line, `ok`", refs_verify),
    ("errors.md", "The CLI prints that line", lambda s, w: code("d", "-f", "cut.blp", "x", cwd=w)),
    ("errors.md", "`blpk verify --strict` fail such files",
     lambda s, w: code("t", "--strict", "grid.b2nd", cwd=w)),
    ("errors.md", "refuses such a `.npy` input", lambda s, w: compress_objects(w)),
    # docs/formats/frames.md
    ("frames.md", "given one print the", lambda s, w: lazy_expression_codes(w)),
    # docs/guide/saving-and-loading.md
    ("saving-and-loading.md", "refuses the same `.npy` inputs", lambda s, w: compress_objects(w)),
    # docs/guide/convert.md
    ("convert.md", "without a suffix", lambda s, w: convert_no_suffix(w)),
    ("convert.md", "is refused (exit code",
     lambda s, w: code("convert", "grid.b2nd", "exists.blp", cwd=w)),
    ("convert.md", "errors are one line on stderr",
     lambda s, w: code("convert", "-f", "bad.blp", "x.b2nd", cwd=w)),
    ("convert.md", "bad option value", lambda s, w: same_codes(
        code("convert", "--codec", "zip", "a.blp", "y.b2nd", cwd=w),
        code("convert", "--clevel", "10", "a.blp", "y.b2nd", cwd=w))),
    # docs/benchmarks.md
    ("benchmarks.md", "`plots.py` refuses", lambda s, w: shell(
        f"mkdir -p empty && {sys.executable} {ROOT / 'bench' / 'plots.py'} --results empty"
        " --out figures", w)),
]  # fmt: skip


def all_statements() -> list[Statement]:
    return [s for page in PAGES for s in exit_statements(page.name, page.read_text())]


def claimed(statement: Statement) -> list[int]:
    """The indexes of the cases that claim ``statement``."""
    return [i for i, (page, words, _) in enumerate(CASES)
            if page == statement.page and words in statement.text]  # fmt: skip


def check_exit_codes(statements: list[Statement], cwd: Path) -> list[str]:
    """What is wrong with ``statements``: unclaimed ones, and those whose case exits with
    another code than the page states."""
    errors = []
    for statement in statements:
        cases = claimed(statement)
        if len(cases) != 1:
            errors.append(f"{statement.page}: {len(cases)} cases for: {statement.text}")
            continue
        got = CASES[cases[0]][2](statement, cwd)
        if got != statement.code:
            errors.append(f"{statement.page}: says {statement.code}, exits {got}: "
                          f"{statement.text}")  # fmt: skip
    return errors


STATEMENTS = all_statements()


@pytest.mark.parametrize(
    "statement", STATEMENTS, ids=[f"{s.page}-{s.code}-{i}" for i, s in enumerate(STATEMENTS)]
)
def test_stated_exit_codes_are_the_real_ones(statement: Statement, work: Path):
    assert check_exit_codes([statement], work) == []


def test_every_case_claims_a_statement():
    assert [words for i, (_, words, _) in enumerate(CASES)
            if not any(i in claimed(s) for s in STATEMENTS)] == []  # fmt: skip


def test_the_exit_code_table_is_found():
    table = [
        s for s in STATEMENTS if s.page == "cli.md" and s.text.startswith(("success", "error"))
    ]
    assert [s.code for s in table] == [0, 1]


def test_a_wrong_exit_code_is_found(work: Path):
    text = (DOCS / "guide" / "convert.md").read_text()
    stated = "a suffix gets a `.blp` container under its own name (exit code 0)"
    assert stated in text
    wrong = text.replace(stated, stated.replace("exit code 0", "exit code 2"))
    statements = [s for s in exit_statements("convert.md", wrong) if "without a suffix" in s.text]
    errors = check_exit_codes(statements, work)
    assert len(errors) == 1 and errors[0].startswith("convert.md: says 2, exits 0: ")
    new = exit_statements("convert.md", "It exits with 3 when the moon is full.")
    assert check_exit_codes(new, work) == [
        "convert.md: 0 cases for: It exits with 3 when the moon is full."
    ]


# --- optional extras --------------------------------------------------------------------------

RUNNABLE = re.compile(r"^```(python|bash|console|pycon)[^\n]*\n(.*?)^```", re.S | re.M)
#: What an example uses that only an optional extra installs.
EXTRA_USES = {
    "dask": re.compile(r"\bimport dask\b|\bfrom dask\b|\bdask\.|\bto_dask(_dataframe)?\(|"
                       r"\bdistributed\b"),
    "pandas": re.compile(r"\bimport pandas\b|\bread_table\("),
    "xarray": re.compile(r"\bimport xarray\b|engine=\"bloscpack\""),
    "remote": re.compile(r"\b(s3|https?|memory)://"),
    "virtual": re.compile(r"\bimport zarr\b|\bimport numcodecs\b|\bimagecodecs\b"),
}  # fmt: skip


INSTALLED = re.compile(r"(?:\.|bloscpack)\[([\w,-]+)\]")


def missing_extras(text: str) -> list[str]:
    """The extras the runnable examples of ``text`` need that the page does not name as
    ``pip install '.[extra]'`` (or ``bloscpack[extra]``)."""
    code = "\n".join(body for _, body in RUNNABLE.findall(text))
    named = {e for group in INSTALLED.findall(text) for e in group.split(",")}
    return [extra for extra, uses in EXTRA_USES.items() if uses.search(code) and extra not in named]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_examples_say_which_extra_they_need(page: Path):
    assert missing_extras(page.read_text()) == []


def test_an_unnamed_extra_is_found():
    page = "Sum it:\n\n```python\nimport dask.array as da\nda.ones(3).sum()\n```\n"
    assert missing_extras(page) == ["dask"]
    assert missing_extras("Needs `pip install '.[dask]'`.\n\n" + page) == []
    assert missing_extras("Needs `pip install '.[remote,dask]'`.\n\n" + page) == []
    assert missing_extras("Needs `pip install '.[pandas]'`.\n\n" + page) == ["dask"]
