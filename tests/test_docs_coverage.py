"""The manual covers what the software offers: every ``blpk`` subcommand and option, every
public Python name, every format and every error class has its place in ``docs/``."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

import bloscpack
from bloscpack import errors
from bloscpack.cli.options import build_parser
from bloscpack.containers import registry

DOCS = Path(__file__).resolve().parents[1] / "docs"
CLI_PAGES = ("cli.md", "guide/convert.md", "guide/remote.md")


def text(*pages: str) -> str:
    return "\n".join((DOCS / page).read_text() for page in pages)


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]  # noqa: SLF001
    return {name: sub for name, sub in actions[0].choices.items()}


def options() -> list[tuple[str, str]]:
    found = {("blpk", o) for a in build_parser()._actions for o in a.option_strings}  # noqa: SLF001
    for name, sub in subcommands().items():
        found |= {(name, o) for a in sub._actions for o in a.option_strings}  # noqa: SLF001
    return sorted((cmd, o) for cmd, o in found if o not in {"-h", "--help"})


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_subcommand_is_documented(name: str):
    assert re.search(rf"`{re.escape(name)}`", text(*CLI_PAGES)), name


@pytest.mark.parametrize(("command", "option"), options())
def test_every_option_is_documented(command: str, option: str):
    assert f"`{option}" in text(*CLI_PAGES), f"blpk {command} {option}"


@pytest.mark.parametrize("name", sorted(n for n in bloscpack.__all__ if n != "errors"))
def test_every_public_name_is_documented(name: str):
    pages = "\n".join(p.read_text() for p in DOCS.rglob("*.md"))
    assert re.search(rf"\b{re.escape(name)}\b", pages), name


@pytest.mark.parametrize("fmt", sorted(registry.FORMATS))
def test_every_format_is_in_the_format_table(fmt: str):
    table = text("guide/saving-and-loading.md")
    assert f"| `{fmt}` |" in table and registry.FORMATS[fmt].extension in table


def test_every_error_class_is_in_the_errors_page():
    classes = [name for name, value in vars(errors).items()
               if isinstance(value, type) and issubclass(value, errors.BloscpackError)]  # fmt: skip
    missing = [name for name in classes if f"`{name}`" not in text("errors.md")]
    assert not missing
