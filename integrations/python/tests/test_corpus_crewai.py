"""The CrewAI corpus: runs made by the real CrewAI (traced by OpenInference's CrewAI
instrumentor), each with the verdict agentsim must give on every lattice anomaly: ``violated``,
``holds``, or ``cannot_tell`` where the spans cannot show it.

Skipped when the corpus's packages are not installed (requirements-corpus-crewai.txt); CI
installs them. Each run is generated here, into the test's temporary folder, and checked against
what the run itself observed (``truth``), so an expectation cannot drift from the run; it is
also saved with ``agentsim ingest`` and read back, which must answer as ``detect --from`` does.
"""

import json

import pytest

pytest.importorskip("crewai")
pytest.importorskip("openinference.instrumentation.crewai")
pytest.importorskip("opentelemetry.exporter.otlp.json.file")

from agentsim_corpus import crewai_runs  # noqa: E402
from agentsim_corpus.cli import (C, H, OPENINFERENCE_NOTE, V, detect, ingested,  # noqa: E402
                                  same_answer, verdicts)
from agentsim_corpus.runs import write_mapping  # noqa: E402
from agentsim_corpus.testing import attrs, spans_of  # noqa: E402


# (run, expected verdicts on A1, A2, A3, A6) from the spans alone. Memory behind tools is
# ordinary TOOL spans (A1); CrewAI's LLM spans carry the tool list a plan was made from (one JSON
# array in `llm.tools`), but no span says which tools an agent had when a call ran (A2); no span
# says which step's output another read (A3).
CREWAI = {
    "a6": (C, C, C, V),
    "a6_fixed": (C, C, C, H),
    "a1": (C, C, C, H),
    "a1_fixed": (C, C, C, H),
}
# The A1 runs read with the profile tools' mapping (--tool-memory): the TOOL spans' tool.name,
# input.value and output.value name the cell and what was read and written.
CREWAI_MAPPED = {
    "a1": (V, C, C, H),
    "a1_fixed": (H, C, C, H),
}


@pytest.fixture(autouse=True)
def crewai_data(tmp_path, monkeypatch):
    """CrewAI's kickoff database goes to the test's folder, not the user's data directory."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


@pytest.mark.parametrize("run", sorted(CREWAI))
def test_crewai_openinference(run, tmp_path, agentsim_binary):
    truth = crewai_runs.run(run, tmp_path)
    expected = CREWAI[run]
    # The expectation agrees with what the run did, where agentsim can tell.
    if "a6" in truth:
        assert (expected[3] == V) == truth["a6"], truth
    if "a1" in truth:
        assert truth["a1"] == (run == "a1"), truth
    spans = tmp_path / "spans.jsonl"
    # What CrewAI's instrumentor wrote: a crew CHAIN, a task AGENT per agent, an LLM span per
    # generation (with its tool list as one JSON attribute) and a TOOL span per tool call.
    kinds = [attrs(s).get("openinference.span.kind") for s in spans_of(spans)]
    generations = 2 if run.startswith("a6") else 5
    tool_calls = 2 if run.startswith("a6") else 3
    crews = 1 if run.startswith("a6") else 2
    # Steps that planned a tool: the worker's one; the writer's write, the editor's read and write.
    tool_steps = 1 if run.startswith("a6") else 3
    assert sorted(kinds) == sorted(["CHAIN"] * crews + ["AGENT"] * crews + ["LLM"] * generations
                                   + ["TOOL"] * tool_calls), kinds
    llm_tools = [attrs(s)["llm.tools"] for s in spans_of(spans)
                 if attrs(s).get("openinference.span.kind") == "LLM"]
    assert all(isinstance(json.loads(t), list) for t in llm_tools), llm_tools
    report = detect(agentsim_binary, "openinference", spans)
    assert verdicts(report) == expected, json.dumps(report["verdicts"], indent=1)
    same_answer(ingested(agentsim_binary, "openinference", spans, tmp_path), report)
    ingest = report["ingest"]
    assert ingest["counts"]["invocations"] == crews, ingest["counts"]
    # The agents are named by their AGENT spans' graph.node.id, CrewAI's role.
    history = tmp_path / "openinference.history.jsonl"
    agents = {json.loads(line)["agent"] for line in history.read_text().splitlines()}
    assert agents == ({"worker"} if run.startswith("a6") else {"writer", "editor"}), agents
    # Every "cannot tell" says why, naming what the spans lacked.
    assert "--tool-memory" in ingest["decidable"]["A1"]["why"], ingest["decidable"]["A1"]
    # The plans' tool lists were read from `llm.tools`; the registry at each call is unseen.
    a2 = ingest["decidable"]["A2"]
    assert f"{tool_steps} steps planned tools from their llm.tools" in a2["why"], a2
    assert "the registry when a tool runs is on no span" in a2["why"], a2
    if run.startswith("a6"):
        a6 = ingest["decidable"]["A6"]
        assert a6["status"] == "decided" and "2 tool calls" in a6["why"], a6
    # --from otel finds the OpenInference spans, says so, and answers the same.
    auto = detect(agentsim_binary, "otel", spans)
    assert verdicts(auto) == expected, json.dumps(auto["verdicts"], indent=1)
    assert auto["ingest"]["source"] == "openinference", auto["ingest"]
    assert auto["ingest"]["notes"][0] == OPENINFERENCE_NOTE, auto["ingest"]["notes"]
    same_answer(ingested(agentsim_binary, "otel", spans, tmp_path), auto)


@pytest.mark.parametrize("run", ["a6", "a6_fixed"])
def test_crewai_default_mode(run, tmp_path, agentsim_binary):
    """The instrumentor's default mode (wrappers, no event listener): no LLM span, so a step is
    its tool calls alone, the planned tool is the first TOOL span, and A2 says both."""
    truth = crewai_runs.run(run, tmp_path, listener=False)
    expected = CREWAI[run]
    assert (expected[3] == V) == truth["a6"], truth
    spans = tmp_path / "spans.jsonl"
    kinds = sorted(attrs(s).get("openinference.span.kind") for s in spans_of(spans))
    assert kinds == ["AGENT", "CHAIN", "TOOL", "TOOL"], kinds
    for source in ("openinference", "otel"):
        report = detect(agentsim_binary, source, spans)
        assert verdicts(report) == expected, json.dumps(report["verdicts"], indent=1)
        same_answer(ingested(agentsim_binary, source, spans, tmp_path), report)
    a2 = report["ingest"]["decidable"]["A2"]
    assert "1 of 1 steps planned tools but their LLM span carries no llm.tools" in a2["why"], a2
    assert "1 of them have no LLM span" in a2["why"], a2


@pytest.mark.parametrize("run", sorted(CREWAI_MAPPED))
def test_crewai_memory_behind_tools(run, tmp_path, agentsim_binary):
    truth = crewai_runs.run(run, tmp_path)
    expected = CREWAI_MAPPED[run]
    # The verdict is the store's own account of the run (who read and wrote what, in order).
    assert (expected[0] == V) == truth["a1"], truth
    spans, mapping = tmp_path / "spans.jsonl", write_mapping(tmp_path)
    for source in ("openinference", "otel"):
        report = detect(agentsim_binary, source, spans, "--tool-memory", str(mapping))
        assert verdicts(report) == expected, json.dumps(report["verdicts"], indent=1)
        saved = ingested(agentsim_binary, source, spans, tmp_path, "--tool-memory", str(mapping))
        same_answer(saved, report)
    a1 = report["ingest"]["decidable"]["A1"]
    assert a1["status"] == "decided", a1
    reads = [o for o in truth["ops"] if o[1] == "read"]
    writes = [o for o in truth["ops"] if o[1] == "write"]
    assert f"read_profile ({mapping}; tool.name, input.value, output.value) ×{len(reads)}" \
        in a1["why"], a1
    assert f"write_profile ({mapping}; tool.name, input.value) ×{len(writes)}" in a1["why"], a1
    assert report["ingest"]["counts"]["memory_cells"] == len({o[2] for o in truth["ops"]})
    witnesses = report["anomalies"].get("A1", [])
    assert len(witnesses) == (1 if truth["a1"] else 0), witnesses
    # The witness names the two agents by their crews' task spans.
    if truth["a1"]:
        text = json.dumps(witnesses)
        assert "editor" in text and "writer" in text, text
