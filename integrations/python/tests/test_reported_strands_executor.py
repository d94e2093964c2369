"""strands-agents/harness-sdk #614 (A6) reproduced on the strands-agents installed here: 1.5.0,
the affected release, or 1.6.0, the release with the maintainers' fix (tool executors:
``SequentialToolExecutor``). CI runs this file once with each
(requirements-reported-strands-executor-*.txt, in the venv of the #4112 reproduction); skipped
where another release is installed.

The run's truth is the file system's own log (the order the calls began and landed, what the
read found). Strands 1.5's event-loop cycle span carries no ``gen_ai.operation.name``; the OTel
reader reads it by its ``event_loop.cycle_id`` as the cycle, so the calls under it are the
agent's and A6 is decided.
"""

import json

import pytest

from agentsim_corpus.testing import release_or_skip

RELEASE = release_or_skip("strands-agents", "1.5.0", "1.6.0")
pytest.importorskip("opentelemetry.exporter.otlp.json.file")

from agentsim_corpus.cli import H, V, agentsim_json, detect  # noqa: E402
from agentsim_corpus.reported import strands_tool_executor as report  # noqa: E402


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    folder = tmp_path_factory.mktemp("executor")
    return report.run(folder), folder / "spans.jsonl"


def test_the_release_does_what_the_report_says(reproduced):
    truth, _ = reproduced
    assert truth["version"] == RELEASE, truth
    fixed = RELEASE == report.FIXED
    assert truth["fix_applied"] == fixed, truth
    # Both releases start the calls in the model's order; 1.5.0 lets the read run while the
    # query still runs, so the read finds no file.
    assert truth["issue_order"] == truth["planned"], truth
    assert truth["a6"] == (not fixed), truth
    assert truth["reads"] == (["3 rows for orders today"] if fixed else [""]), truth


def test_detect_answers_the_truth(reproduced, agentsim_binary):
    truth, spans = reproduced
    out = detect(agentsim_binary, "otel", spans)
    assert out["verdicts"]["A6"]["verdict"] == (V if truth["a6"] else H), out["verdicts"]
    assert out["ingest"]["decidable"]["A6"]["status"] == "decided", out["ingest"]
    witnesses = out["anomalies"].get("A6", [])
    assert len(witnesses) == (1 if truth["a6"] else 0), witnesses


def test_fix_on_the_affected_release(reproduced, agentsim_binary):
    truth, spans = reproduced
    if not truth["a6"]:
        pytest.skip("the fixed release shows no anomaly to fix")
    fix = agentsim_json(agentsim_binary, "fix", "--from", "otel", str(spans), "--trials", "200")
    # The maintainers' mechanism: a response's calls run one at a time, in order.
    assert fix["stack"] == "sequencer", fix["stack"]
