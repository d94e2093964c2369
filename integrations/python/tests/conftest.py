"""Shared fixtures: the example apps, and the agentsim binary the histories are checked with."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
# After site-packages: an installed agentsim wheel is the one tested, the sources otherwise.
sys.path.append(str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "examples"))


def _binary() -> str:
    for candidate in (os.environ.get("AGENTSIM"), str(ROOT / "target" / "release" / "agentsim"),
                      shutil.which("agentsim")):
        if candidate and os.path.exists(candidate):
            return candidate
    raise RuntimeError(
        "no agentsim binary: build it (cargo build --release) or set AGENTSIM=/path/to/agentsim"
    )


@pytest.fixture(scope="session")
def agentsim():
    binary = _binary()

    def run(*args: str) -> dict:
        out = subprocess.run([binary, *args, "--json"], capture_output=True, text=True)
        assert out.returncode == 0, f"agentsim {' '.join(args)}: {out.stderr}"
        return json.loads(out.stdout)

    return run


@pytest.fixture(scope="session")
def agentsim_binary() -> str:
    """The agentsim binary's path (AGENTSIM, target/release, or PATH)."""
    return _binary()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (where scenario paths resolve)."""
    return ROOT
