"""The Google ADK and Agno corpus: runs made by the real frameworks, each traced by its own
instrumentation (ADK's native OpenTelemetry, GenAI spans; Agno through OpenInference's Agno
instrumentor), with the verdict agentsim must give on every lattice anomaly: ``violated``,
``holds``, or ``cannot_tell`` where the spans cannot show it.

Skipped when the corpus's packages are not installed (requirements-corpus-adk-agno.txt); CI
installs them in a venv of their own. Each run is generated here, into the test's temporary
folder, and checked against what the run itself observed (``truth``), so an expectation cannot
drift from the run; it is also saved with ``agentsim ingest`` and read back, which must answer
as ``detect --from`` does. Every run is read with the profile mapping (``runs.PROFILE_MAP``:
the profile tools, and one registry shared by the planner and the admin).

The A2 fixed twins refuse, at call time, a tool that has left the registry. A refused call ran
nothing and wrote nothing, so it is no A2 witness (SPEC, A2: a write that used a tool no longer
in the registry). Both frameworks' spans show the refusal: ADK's ``execute_tool`` span ends in
ERROR (``error.type`` TOOL_ERROR) with the refusal as ``gen_ai.tool.call.result``; Agno's
``TOOL`` span ends in ERROR with the refusal as its status message; the readers count it among
the refused calls (``test_a_refused_call_is_no_phantom``), and a phantom that ran is named by
the report's note on its record with the span that shows it ran.
"""

import json

import pytest

pytest.importorskip("google.adk")
pytest.importorskip("agno")
pytest.importorskip("openinference.instrumentation.agno")
pytest.importorskip("opentelemetry.exporter.otlp.json.file")

from agentsim_corpus import adk_runs, agno_runs  # noqa: E402
from agentsim_corpus.cli import (C, H, OPENINFERENCE_NOTE, V, detect, ingested,  # noqa: E402
                                  same_answer, verdicts)
from agentsim_corpus.races import REFUSAL  # noqa: E402
from agentsim_corpus.runs import write_mapping  # noqa: E402
from agentsim_corpus.testing import attrs, spans_of  # noqa: E402

# (run, expected verdicts on A1, A2, A3, A6), read with the mapping. A2 is a lower bound: the
# registry is seen at each generation's tool list, so a witness is real and no witness is
# cannot tell. No span says which step's output another read (A3).
ADK = {
    "a6": (C, C, C, V),
    "a6_fixed": (C, C, C, H),
    "a1": (V, C, C, H),
    "a1_fixed": (H, C, C, H),
    "a2": (C, V, C, H),
}
AGNO = dict(ADK)
FRAMEWORKS = {"adk": (adk_runs, "otel", ADK), "agno": (agno_runs, "openinference", AGNO)}
CASES = [(f, r) for f, (_, _, table) in FRAMEWORKS.items() for r in sorted(table)]


def tool_spans(framework: str, path) -> list[dict]:
    """The spans of tool calls as the framework wrote them (ADK's aggregate ``(merged tools)``
    span of a generation's parallel calls is not a call)."""
    if framework == "adk":
        return [s for s in spans_of(path)
                if attrs(s).get("gen_ai.operation.name") == "execute_tool"
                and attrs(s).get("gen_ai.tool.name") != "(merged tools)"]
    return [s for s in spans_of(path) if attrs(s).get("openinference.span.kind") == "TOOL"]


def tool_name(framework: str, span: dict) -> str:
    return attrs(span)["gen_ai.tool.name" if framework == "adk" else "tool.name"]


def called(order: list) -> list[str]:
    """The tools of an A6 witness's order (``tool:NAME:CALL``), the two calls the run made."""
    names = [effect.split(":")[1] for effect, _ in order]
    return [n for n in names if n in ("charge", "notify")]


def check_truth(run: str, truth: dict, expected: tuple) -> None:
    """The expectation agrees with what the run did."""
    if "a6" in truth:
        assert truth["a6"] == (expected[3] == V) == (run == "a6"), truth
    if "a1" in truth:
        assert truth["a1"] == (expected[0] == V) == (run == "a1"), truth
    if "a2" in truth:
        assert truth["a2"] == (run == "a2"), truth
        assert truth["refused"] == ([] if run == "a2" else ["lookup"]), truth


@pytest.mark.parametrize("framework,run", CASES)
def test_run_gives_its_verdicts(framework, run, tmp_path, agentsim_binary):
    module, source, table = FRAMEWORKS[framework]
    truth = module.run(run, tmp_path)
    expected = table[run]
    check_truth(run, truth, expected)
    spans, mapping = tmp_path / "spans.jsonl", write_mapping(tmp_path)
    # One span per tool call that the run made, named by its tool.
    calls = [tool_name(framework, s) for s in tool_spans(framework, spans)]
    if run.startswith("a6"):
        assert sorted(calls) == ["charge", "notify"], calls
    elif run.startswith("a1"):
        assert sorted(calls) == sorted(f"{op}_profile" for _, op, _, _ in truth["ops"]), calls
    report = detect(agentsim_binary, source, spans, "--tool-memory", str(mapping))
    assert verdicts(report) == expected, json.dumps(report["verdicts"], indent=1)
    same_answer(ingested(agentsim_binary, source, spans, tmp_path, "--tool-memory",
                         str(mapping)), report)
    if source == "openinference":
        # --from otel finds Agno's OpenInference spans, says so, and answers the same.
        auto = detect(agentsim_binary, "otel", spans, "--tool-memory", str(mapping))
        assert verdicts(auto) == expected, json.dumps(auto["verdicts"], indent=1)
        assert auto["ingest"]["source"] == "openinference", auto["ingest"]
        assert auto["ingest"]["notes"][0] == OPENINFERENCE_NOTE, auto["ingest"]["notes"]
    ingest = report["ingest"]
    # The agents are named as the frameworks named them.
    history = tmp_path / f"{source}.history.jsonl"
    agents = {json.loads(line)["agent"] for line in history.read_text().splitlines()}
    named = {"a6": {"clerk"}, "a1": {"writer", "editor"}, "a2": {"planner", "admin"}}
    assert agents == named[run.split("_")[0]], agents
    witnesses = report["anomalies"]
    if run.startswith("a6"):
        a6 = ingest["decidable"]["A6"]
        assert a6["status"] == "decided", a6
        assert len(witnesses.get("A6", [])) == (1 if truth["a6"] else 0), witnesses
        if truth["a6"]:
            # The witness's issue and completion orders are the run's.
            (witness,) = witnesses["A6"]
            assert witness["agent"] == "clerk", witness
            assert called(witness["io"]) == truth["issue_order"], witness
            assert called(witness["co"]) == truth["completion_order"], witness
    if run.startswith("a1"):
        a1 = ingest["decidable"]["A1"]
        assert a1["status"] == "decided", a1
        assert ingest["counts"]["memory_cells"] == 1, ingest["counts"]
        assert len(witnesses.get("A1", [])) == (1 if truth["a1"] else 0), witnesses
        if truth["a1"]:
            text = json.dumps(witnesses["A1"])
            assert "editor" in text and "writer" in text, text
        # Without the mapping the profile is ordinary tool calls: A1 cannot be told.
        alone = detect(agentsim_binary, source, spans)
        assert alone["verdicts"]["A1"]["verdict"] == C, alone["verdicts"]["A1"]
        assert "--tool-memory" in alone["ingest"]["decidable"]["A1"]["why"], alone["ingest"]
    if run == "a2":
        # The phantom ran (its span is there, OK) after the admin's retirement showed in the
        # admin's own next generation's tool list.
        assert calls.count("lookup") == 1 and calls.count("retire_tool") == 1, calls
        text = json.dumps(witnesses["A2"])
        assert "planner" in text and "lookup" in text, text


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_the_refusing_twin_refuses(framework, tmp_path, agentsim_binary):
    """The A2 fixed twin: the same race, the planned call refused at call time. What the run did
    and what its spans show; A1, A3, A6 as on the unfixed run."""
    module, source, table = FRAMEWORKS[framework]
    truth = module.run("a2_fixed", tmp_path)
    check_truth("a2_fixed", truth, table["a2"])
    spans, mapping = tmp_path / "spans.jsonl", write_mapping(tmp_path)
    lookup = [s for s in tool_spans(framework, spans) if tool_name(framework, s) == "lookup"]
    # The refused call has a span of its own, ended in ERROR, carrying the refusal.
    assert len(lookup) == 1, lookup
    status = lookup[0].get("status", {})
    assert status.get("code") == 2, status  # STATUS_CODE_ERROR
    refusal = REFUSAL.format(name="lookup")
    carried = json.dumps(attrs(lookup[0])) + status.get("message", "")
    assert refusal in carried, (attrs(lookup[0]), status)
    report = detect(agentsim_binary, source, spans, "--tool-memory", str(mapping))
    got = verdicts(report)
    assert (got[0], got[2], got[3]) == (C, C, H), json.dumps(report["verdicts"], indent=1)
    # The refused call is not an effect that landed.
    assert report["ingest"]["counts"]["failed_tool_calls"] == 1, report["ingest"]["counts"]


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_a_refused_call_is_no_phantom(framework, tmp_path, agentsim_binary):
    """A call refused at call time ran nothing: no A2 witness on the fixed twin, and A2 is not
    violated (cannot tell: a lower bound with no witness)."""
    module, source, _ = FRAMEWORKS[framework]
    truth = module.run("a2_fixed", tmp_path)
    assert truth["refused"] == ["lookup"] and "lookup" not in truth["ran"], truth
    spans, mapping = tmp_path / "spans.jsonl", write_mapping(tmp_path)
    report = detect(agentsim_binary, source, spans, "--tool-memory", str(mapping))
    assert report["anomalies"].get("A2", []) == [], report["anomalies"]
    assert report["verdicts"]["A2"]["verdict"] == C, report["verdicts"]["A2"]


def test_adk_merged_tools_span_is_no_call(tmp_path, agentsim_binary):
    """ADK writes one ``execute_tool`` span named ``(merged tools)`` after the calls of one
    generation that ran in parallel; it runs no tool. The A6 witness holds the two calls."""
    truth = adk_runs.run("a6", tmp_path)
    assert truth["a6"], truth
    spans = tmp_path / "spans.jsonl"
    merged = [s for s in spans_of(spans) if attrs(s).get("gen_ai.tool.name") == "(merged tools)"]
    assert len(merged) == 1, merged
    report = detect(agentsim_binary, "otel", spans)
    (witness,) = report["anomalies"]["A6"]
    effects = [effect for effect, _ in witness["io"]]
    assert len(effects) == 2, effects
    assert "2 effects" in report["ingest"]["decidable"]["A6"]["why"], report["ingest"]


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_a_phantom_names_the_span_that_ran_it(framework, tmp_path, agentsim_binary):
    """The phantom's witness rests on the tool span of the call that ran: it names that span."""
    module, source, _ = FRAMEWORKS[framework]
    truth = module.run("a2", tmp_path)
    assert truth["a2"], truth
    spans, mapping = tmp_path / "spans.jsonl", write_mapping(tmp_path)
    (lookup,) = [s for s in tool_spans(framework, spans) if tool_name(framework, s) == "lookup"]
    report = detect(agentsim_binary, source, spans, "--tool-memory", str(mapping))
    (witness,) = report["anomalies"]["A2"]
    # The witness names its record; the report's note on that record names the span.
    notes = [n for n in report["ingest"]["notes"] if f"record {witness['record']} " in n]
    assert any(lookup["spanId"] in n for n in notes), (lookup["spanId"], witness, notes)
