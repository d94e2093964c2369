"""Records a reproduction's run as the fixture `agentsim reproduce` reads (the `reported` step).

    python -m agentsim_corpus.reported.record REPORT

runs the reproduction of REPORT (one of ``REPORTS`` below) on the release of its framework
installed in this venv, and writes, under ``fixtures/`` beside this file,
``REPORT-RELEASE.spans.jsonl`` (the framework's own spans, OTLP/JSON lines), any other file the
run wrote (``.mcp.jsonl``: the MCP clients' JSON-RPC log; ``.map.toml``: the ``--tool-memory``
mapping its spans are read with) and ``REPORT-RELEASE.truth.json`` (what the run itself saw, and
whether the anomaly happened: ``"a6": true``). Run it once in the venv of the affected release
and once in that of the fixed one (docs/reported.md, "Regenerating the fixtures").
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

REPORTS = ("pydantic_ai_2628", "agent_framework_7386", "strands_mcp_tools_changed",
           "strands_graph_failed_node", "strands_tool_executor",
           "strands_concurrent_invocations")
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def record(name: str, out: Path = FIXTURES) -> list[Path]:
    """Runs reproduction ``name`` once and writes what it wrote (spans, an MCP log, a mapping)
    and its truth under ``out``."""
    if name not in REPORTS:
        raise SystemExit(f"unknown report {name!r}; one of: {', '.join(REPORTS)}")
    module = importlib.import_module(f"{__package__}.{name}")
    with tempfile.TemporaryDirectory() as scratch:
        truth = module.run(Path(scratch))
        truth["release"] = "fixed" if truth["version"] == module.FIXED else "affected"
        if truth["version"] not in (module.AFFECTED, module.FIXED):
            raise SystemExit(f"{name}: {truth['version']} is neither {module.AFFECTED} nor "
                             f"{module.FIXED}")
        out.mkdir(parents=True, exist_ok=True)
        stem = f"{name}-{truth['version']}"
        written = []
        for made in sorted(Path(scratch).iterdir()):
            written.append(out / f"{stem}.{made.name}")
            shutil.copyfile(made, written[-1])
    facts = out / f"{stem}.truth.json"
    facts.write_text(json.dumps(truth, indent=2, sort_keys=True) + "\n")
    return [*written, facts]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    for path in record(sys.argv[1]):
        print(path)
