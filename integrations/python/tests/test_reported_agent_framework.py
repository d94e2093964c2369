"""microsoft/agent-framework #7386 (A6) reproduced on the agent-framework-core installed here:
1.18.0, the affected release, or 1.19.0, the release with the maintainers' fix
(``allow_concurrent_invocation``). CI runs this file once with each
(requirements-reported-agent-framework-affected.txt, then -fixed.txt in the same venv); skipped
where another release is installed (the Agent Framework corpus pins a later one).

The run's truth is the file system's own log (the order the calls began and landed, what the
read found). agentsim must answer it, and on the affected release `fit` must give a scenario
whose vanilla runs show A6 and `fix` must propose a stack that orders the calls, the mechanism of
the maintainers' change.
"""

import json

import pytest

from agentsim_corpus.testing import release_or_skip

RELEASE = release_or_skip("agent-framework-core", "1.18.0", "1.19.0")
pytest.importorskip("agent_framework.openai")
pytest.importorskip("opentelemetry.exporter.otlp.json.file")

from agentsim_corpus.cli import H, V, agentsim_json, detect  # noqa: E402
from agentsim_corpus.reported import agent_framework_7386  # noqa: E402
from agentsim_corpus.testing import attrs, spans_of  # noqa: E402


@pytest.fixture
def reproduced(tmp_path):
    truth = agent_framework_7386.run(tmp_path)
    return truth, tmp_path / "spans.jsonl"


def test_the_release_does_what_the_report_says(reproduced):
    truth, spans = reproduced
    assert truth["version"] == RELEASE, truth
    fixed = RELEASE == agent_framework_7386.FIXED
    assert truth["fix_applied"] == fixed, truth
    # Both releases start the calls in the model's order; the affected one lets the read run
    # while the write still awaits the disk, so the read finds no file.
    assert truth["issue_order"] == truth["planned"], truth
    assert truth["a6"] == (not fixed) == truth["stale_read"], truth
    assert truth["reads"] == (["draft 1"] if fixed else [""]), truth
    # Agent Framework's own spans: one execute_tool per call, ending in the order they landed.
    tools = [s for s in spans_of(spans) if attrs(s).get("gen_ai.operation.name") == "execute_tool"]
    by_end = sorted(tools, key=lambda s: int(s["endTimeUnixNano"]))
    ended = [attrs(s)["gen_ai.tool.name"] for s in by_end]
    assert ended == truth["completion_order"], ended


def test_detect_answers_the_truth(reproduced, agentsim_binary):
    truth, spans = reproduced
    report = detect(agentsim_binary, "otel", spans)
    assert report["verdicts"]["A6"]["verdict"] == (V if truth["a6"] else H), report["verdicts"]
    a6 = report["ingest"]["decidable"]["A6"]
    assert a6["status"] == "decided" and "2 effects" in a6["why"], a6
    witnesses = report["anomalies"].get("A6", [])
    assert len(witnesses) == (1 if truth["a6"] else 0), witnesses
    if truth["a6"]:
        (witness,) = witnesses
        order = [[effect.split(":")[1] for effect, _ in witness[k]] for k in ("io", "co")]
        assert order == [truth["issue_order"], truth["completion_order"]], witness


def test_fit_and_fix_on_the_affected_release(reproduced, agentsim_binary, tmp_path):
    truth, spans = reproduced
    if not truth["a6"]:
        pytest.skip("the fixed release shows no anomaly to fit or fix")
    fitted = agentsim_json(agentsim_binary, "fit", "--from", "otel", str(spans),
                           "-o", str(tmp_path / "fit.toml"), "--trials", "200")
    assert fitted["exhibits"] == ["A6"], fitted
    # The fitted scenario's vanilla runs show the anomaly the run had, and exploring it finds
    # an interleaving that does ("A6 reachable" holds).
    assert fitted["rates"]["A6"]["k"] > 0, fitted["rates"]
    assert fitted["explore"]["A6"] == H, fitted["explore"]
    fix = agentsim_json(agentsim_binary, "fix", "--from", "otel", str(spans), "--trials", "200")
    # The cheapest verified stack orders each agent's effects: the maintainers' mechanism
    # (one message's calls run one at a time, in the model's order).
    assert fix["stack"] == "sequencer", fix["stack"]
    chosen = next(c for c in fix["candidates"] if c["stack"] == fix["stack"])
    assert chosen["verified"] and chosen["sampled"]["A6"]["k"] == 0, chosen
    assert any(i["mechanism"] == "sequencer" and "parallel tool calls off" in i["idiom"]
               for i in fix["idioms"]), fix["idioms"]


def test_fit_names_no_called_tool_as_never_called(reproduced, agentsim_binary, tmp_path):
    truth, spans = reproduced
    fitted = agentsim_json(agentsim_binary, "fit", "--from", "otel", str(spans),
                           "-o", str(tmp_path / "fit.toml"), "--trials", "50")
    never = [line for line in fitted["header"] if line.startswith("Tools never called")]
    called = set(truth["completion_order"])
    assert not any(name in line for line in never for name in called), never
