"""agentsim from Python: the binary this wheel installs, and a thin API over it.

    import agentsim
    report = agentsim.detect("trace.json", source="otel")   # `agentsim detect --json`
    report["exhibits"]                                      # e.g. ["A1"]
    passed, failed = agentsim.check_suite("scenarios/")     # `agentsim test --json`

Every call runs the binary (`find_agentsim_bin()`) and returns its `--json` object; bad input
raises `AgentsimError` with the binary's message and exit code. The LangGraph recorder is
`agentsim.record` (the wheel's `[langgraph]` extra), the Dask shard driver `agentsim.shard`
(its `[dask]` extra); `python -m agentsim ARGS` runs the binary.
See docs/python.md.
"""

from importlib.metadata import PackageNotFoundError, version

from ._bin import find_agentsim_bin
from .api import AgentsimError, Case, check_suite, detect, explore, run_json

try:
    __version__ = version("agentsim")  # the wheel's, which is the workspace's (Cargo.toml)
except PackageNotFoundError:  # the sources, not installed
    __version__ = "unknown"

__all__ = [
    "AgentsimError",
    "Case",
    "check_suite",
    "detect",
    "explore",
    "find_agentsim_bin",
    "run_json",
]
