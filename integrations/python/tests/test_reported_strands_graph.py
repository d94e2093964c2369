"""strands-agents/harness-sdk #3028 (A3) reproduced on the strands-agents installed here: 1.45.0,
the affected release, or 1.46.0, the release with the maintainers' fix (a failed multi-agent node
is recorded failed). CI runs this file once with each (requirements-reported-strands-graph-*.txt,
in the venv of the #4112 reproduction); skipped where another release is installed.

The run's truth is the application's log: the failed drafter's write, the sender's read of it
and the refund it sent, and the graph's status. agentsim must find A3 from Strands' spans (the
failed invocation's span ends in ERROR, so its writes are retracted; the sender read one) on the
affected release; on the fixed one nothing read a retracted write, which a lower bound cannot
call *holds*.
"""

import json

import pytest

from agentsim_corpus.testing import release_or_skip

RELEASE = release_or_skip("strands-agents", "1.45.0", "1.46.0")
pytest.importorskip("opentelemetry.exporter.otlp.json.file")

from agentsim_corpus.cli import C, V, agentsim_json, detect  # noqa: E402
from agentsim_corpus.reported import strands_graph_failed_node as report  # noqa: E402


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    folder = tmp_path_factory.mktemp("graph")
    return report.run(folder), folder


def test_the_release_does_what_the_report_says(reproduced):
    truth, _ = reproduced
    assert truth["version"] == RELEASE, truth
    fixed = RELEASE == report.FIXED
    # The drafter's generation failed after its write on both; 1.45.0 called the graph
    # completed and sent the refund on the failed draft, 1.46.0 calls it failed and sends none.
    assert truth["log"][0] == {"op": "write", "key": "refund-9", "value": "500 dollars"}, truth
    assert truth["graph_status"] == ("failed" if fixed else "completed"), truth
    assert truth["sender_ran"] == truth["sent_on_failed_draft"] == (not fixed), truth
    assert truth["a3"] == (not fixed), truth


def test_detect_answers_the_truth(reproduced, agentsim_binary):
    truth, folder = reproduced
    out = detect(agentsim_binary, "otel", folder / "spans.jsonl",
                 "--tool-memory", str(folder / "map.toml"))
    assert out["verdicts"]["A3"]["verdict"] == (V if truth["a3"] else C), out["verdicts"]
    assert out["ingest"]["decidable"]["A3"]["status"] == "lower_bound", out["ingest"]
    witnesses = out["anomalies"].get("A3", [])
    assert len(witnesses) == (1 if truth["a3"] else 0), witnesses


def test_fix_on_the_affected_release(reproduced, agentsim_binary):
    truth, folder = reproduced
    if not truth["a3"]:
        pytest.skip("the fixed release shows no anomaly to fix")
    fix = agentsim_json(agentsim_binary, "fix", "--from", "otel", str(folder / "spans.jsonl"),
                        "--tool-memory", str(folder / "map.toml"), "--trials", "200")
    chosen = next(c for c in fix["candidates"] if c["stack"] == fix["stack"])
    assert chosen["verified"], chosen
    # Retracted outputs' consumers: validate-preds (and cascade), the mechanism the
    # maintainers' change lets a conditional edge realize.
    assert "validate-preds" in fix["stack"], fix["stack"]


def test_fit_shows_what_the_run_saw(reproduced, agentsim_binary):
    truth, folder = reproduced
    fit = agentsim_json(agentsim_binary, "fit", "--from", "otel", str(folder / "spans.jsonl"),
                        "--tool-memory", str(folder / "map.toml"),
                        "-o", str(folder / "fit.toml"), "--trials", "200")
    # The failed drafter's steps are retracted after the sender read its draft, so the
    # fitted scenario's vanilla runs and its replay of the observed order show the A3 the
    # affected run saw; the fixed run, where no one read the draft, fits none.
    assert fit["exhibits"] == (["A3"] if truth["a3"] else []), fit
    assert fit["replay_exhibits"] == fit["exhibits"], fit
    shown = fit["rates"].get("A3", {}).get("k", 0)
    assert (shown > 0) == truth["a3"], fit["rates"]
