"""pydantic/pydantic-ai #2628 (A6) reproduced on the pydantic-ai installed here: 1.0.1, the
affected release, or 1.0.2, the release with the maintainers' fix (sequential tools). CI runs
this file once with each (requirements-reported-pydantic-ai-affected.txt, then -fixed.txt in the
same venv); skipped where pydantic-ai is not installed.

The run's truth is the repository's own log (what ran, in what order, and what the commit
held). What agentsim must answer is the truth: A6 violated on the affected release, holds on the
fixed one. pydantic-ai 1.0's spans carry no ``gen_ai.operation.name``: the OTel reader reads them
by their attributes (``running tool``: ``gen_ai.tool.name``, ``tool_arguments``,
``tool_response``; ``agent run``: ``agent_name``), so it decides A6 from the two calls.
"""

import pytest

pydantic_ai = pytest.importorskip("pydantic_ai")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common")
# Another venv's pydantic-ai (a later release, with a later OpenTelemetry SDK) is not this
# reproduction's: its pins are the two releases.
if pydantic_ai.__version__ not in ("1.0.1", "1.0.2"):
    pytest.skip(f"pydantic-ai {pydantic_ai.__version__} is neither the affected nor the fixed "
                "release", allow_module_level=True)

from agentsim_corpus.cli import H, V, detect  # noqa: E402
from agentsim_corpus.reported import pydantic_ai_2628  # noqa: E402
from agentsim_corpus.testing import attrs, spans_of  # noqa: E402


@pytest.fixture
def reproduced(tmp_path):
    truth = pydantic_ai_2628.run(tmp_path)
    return truth, tmp_path / "spans.jsonl"


def test_the_release_does_what_the_report_says(reproduced):
    truth, spans = reproduced
    assert truth["version"] in (pydantic_ai_2628.AFFECTED, pydantic_ai_2628.FIXED), truth
    fixed = truth["version"] == pydantic_ai_2628.FIXED
    assert truth["fix_applied"] == fixed, truth
    # Both releases issue the calls in the model's order; the affected one lets `commit` land
    # while `stage_file` still awaits the index, so the commit is empty.
    assert truth["issue_order"] == truth["planned"], truth
    assert truth["a6"] == (not fixed) == truth["empty_commit"], truth
    assert truth["commits"] == ([["notes.md"]] if fixed else [[]]), truth
    # pydantic-ai's own spans: one `running tool` per call, under one `running tools`, with the
    # call's arguments and result in its own attributes.
    tools = [attrs(s) for s in spans_of(spans) if s["name"] == "running tool"]
    assert sorted(t["gen_ai.tool.name"] for t in tools) == ["commit", "stage_file"], tools
    assert all("tool_arguments" in t and "tool_response" in t for t in tools), tools
    ended = sorted((int(s["endTimeUnixNano"]), attrs(s)["gen_ai.tool.name"])
                   for s in spans_of(spans) if s["name"] == "running tool")
    assert [name for _, name in ended] == truth["completion_order"], ended


def test_detect_answers_the_truth(reproduced, agentsim_binary):
    truth, spans = reproduced
    report = detect(agentsim_binary, "otel", spans)
    a6 = report["verdicts"]["A6"]["verdict"]
    assert a6 == (V if truth["a6"] else H), report["verdicts"]["A6"]
    assert "2 effects" in report["ingest"]["decidable"]["A6"]["why"], report["ingest"]
    witnesses = report["anomalies"].get("A6", [])
    assert len(witnesses) == (1 if truth["a6"] else 0), witnesses
