"""What the corpus and reported-bug tests share, whatever their venv: the spans of an OTLP JSON
file and their attributes, and the module-level skip of a reproduction pinned to two releases.
Imports only the standard library and pytest (every test venv has both)."""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest


def spans_of(path: Path) -> list[dict]:
    """Every span of an OTLP JSON file (one ``TracesData`` document a line), in file order."""
    out = []
    for line in path.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                out.extend(ss["spans"])
    return out


def attrs(span: dict) -> dict:
    """A span's attributes as a dict of plain values."""
    return {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}


def release_or_skip(package: str, affected: str, fixed: str) -> str:
    """The installed release of ``package``; skips the calling test module unless it is the
    affected or the fixed release (another venv may pin a later one)."""
    try:
        release = version(package)
    except PackageNotFoundError:
        release = None
    if release not in (affected, fixed):
        pytest.skip(f"{package} {release} is neither the affected nor the fixed release",
                    allow_module_level=True)
    return release
