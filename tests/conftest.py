"""Shared fixtures: paths to the golden corpora and a bloscpack 0.16 oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def load_manifest(corpus: str) -> dict:
    """The MANIFEST.json of a golden corpus under tests/data."""
    return json.loads((DATA / corpus / "MANIFEST.json").read_text())


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA
