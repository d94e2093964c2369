"""strands-agents/harness-sdk #4112 (A2) reproduced on the strands-agents installed here: 1.54.0,
the affected release, or 1.55.0, the release with the maintainers' fix (``on_tools_changed``).
CI runs this file once with each (requirements-reported-strands-affected.txt, then -fixed.txt in
the same venv); skipped where another release is installed (the Strands corpus pins a later one).

The run's truth is the billing server's log (which version of ``refund`` served each call, the
cents refunded) and the scripted model's (which version each generation was offered). agentsim
must answer it from the MCP clients' JSON-RPC log; Strands' own spans, read with the mapping
that puts both agents on one registry, cannot tell (below); on the affected release `fit` must
give a scenario whose vanilla runs show A2 and `fix` a stack that prevents it.
"""

import json

import pytest

from agentsim_corpus.testing import release_or_skip

RELEASE = release_or_skip("strands-agents", "1.54.0", "1.55.0")
pytest.importorskip("mcp.server.fastmcp")
pytest.importorskip("opentelemetry.exporter.otlp.json.file")

from agentsim_corpus.cli import C, H, V, agentsim_json, detect  # noqa: E402
from agentsim_corpus.reported import strands_mcp_tools_changed as report  # noqa: E402


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    folder = tmp_path_factory.mktemp("strands")
    return report.run(folder), folder


def test_the_release_does_what_the_report_says(reproduced):
    truth, _ = reproduced
    assert truth["version"] == RELEASE, truth
    fixed = RELEASE == report.FIXED
    assert truth["fix_applied"] == fixed, truth
    # Order 7 before the upgrade, order 8 after: the server served the dollar tool, then the
    # cents tool. The affected client kept offering the dollar tool: the customer got 15 cents.
    assert truth["served"] == [1, 2], truth
    assert truth["offered"] == ([1, 2] if fixed else [1, 1]), truth
    assert truth["order_8_cents"] == (1500 if fixed else 15), truth
    assert truth["a2"] == (not fixed), truth


def test_detect_answers_the_truth_from_the_mcp_log(reproduced, agentsim_binary):
    truth, folder = reproduced
    out = detect(agentsim_binary, "mcp", folder / "mcp.jsonl")
    assert out["verdicts"]["A2"]["verdict"] == (V if truth["a2"] else H), out["verdicts"]
    assert out["ingest"]["decidable"]["A2"]["status"] == "decided", out["ingest"]
    witnesses = out["anomalies"].get("A2", [])
    assert len(witnesses) == (1 if truth["a2"] else 0), witnesses
    # The log shows why: support called refund from a list that list_changed had invalidated.
    assert out["ingest"]["counts"].get("stale_list_calls", 0) == (1 if truth["a2"] else 0), \
        out["ingest"]["counts"]


def test_the_spans_cannot_tell(reproduced, agentsim_binary):
    # Strands' spans show each invocation's offered tools (gen_ai.tool.definitions) and the
    # auditor's two views show the upgrade, but support's second invocation offers the dollar
    # tool again after the upgrade: a client that kept a stale list and a server that went
    # back look alike, so A2 is a lower bound with no witness on either release.
    _, folder = reproduced
    out = detect(agentsim_binary, "otel", folder / "spans.jsonl",
                 "--tool-memory", str(folder / "map.toml"))
    assert out["verdicts"]["A2"]["verdict"] == C, out["verdicts"]
    assert out["ingest"]["decidable"]["A2"]["status"] == "lower_bound", out["ingest"]


def test_fit_and_fix_on_the_affected_release(reproduced, agentsim_binary, tmp_path):
    truth, folder = reproduced
    if not truth["a2"]:
        pytest.skip("the fixed release shows no anomaly to fit or fix")
    log = str(folder / "mcp.jsonl")
    fitted = agentsim_json(agentsim_binary, "fit", "--from", "mcp", log,
                           "-o", str(tmp_path / "fit.toml"), "--trials", "200")
    assert fitted["exhibits"] == ["A2"], fitted
    assert fitted["rates"]["A2"]["k"] > 0, fitted["rates"]
    fix = agentsim_json(agentsim_binary, "fix", "--from", "mcp", log, "--trials", "200")
    chosen = next(c for c in fix["candidates"] if c["stack"] == fix["stack"])
    assert chosen["verified"] and chosen["sampled"]["A2"]["k"] == 0, chosen
    # An MCP client's idiom: refresh on list_changed and check the call before dispatch.
    assert any("list_changed" in i["idiom"] for i in fix["idioms"]), fix["idioms"]
