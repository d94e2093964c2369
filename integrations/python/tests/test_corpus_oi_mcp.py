"""The OpenInference and MCP corpus: runs made by the real OpenAI Agents SDK (traced by
OpenInference) and the official MCP SDK, each with the verdict agentsim must give on every
lattice anomaly: ``violated``, ``holds``, or ``cannot_tell`` where the trace cannot show it.

Skipped when the corpus's packages are not installed (requirements-corpus-oi-mcp.txt); CI
installs them. Each run is generated here, into the test's temporary folder, and also checked
against what the run itself observed (``truth``), so an expectation cannot drift from the run,
and saved with ``agentsim ingest`` and read back (``detect HISTORY --ingest-report REPORT``),
which must answer as ``detect --from`` does.
"""

import json
import subprocess

import pytest

pytest.importorskip("agents")
pytest.importorskip("mcp")
pytest.importorskip("openinference.instrumentation.openai_agents")
pytest.importorskip("opentelemetry.exporter.otlp.json.file")

from agentsim_corpus import mcp_runs, openai_agents_runs  # noqa: E402
from agentsim_corpus.cli import (C, H, OPENINFERENCE_NOTE, V, detect, ingested,  # noqa: E402
                                  same_answer, verdicts)
from agentsim_corpus.runs import write_mapping  # noqa: E402


# (run, expected verdicts on A1, A2, A3, A6). OpenInference: memory behind tools is invisible
# (A1), chat-completions LLM spans carry no tool definitions (A2), no span says which step's
# output another read (A3). The MCP log: no memory at all (A1), no provenance (A3).
OPENAI_AGENTS = {
    "a6": (C, C, C, V),
    "a6_fixed": (C, C, C, H),
    "a1": (C, C, C, H),
    "a1_fixed": (C, C, C, H),
    "a2_mcp": (C, C, C, H),
    "a2_mcp_fixed": (C, C, C, H),
}
# The same SDK runs' MCP JSON-RPC logs (the SDK's own MCP client, logged): the registry timeline
# of the shared server decides the A2 that the spans cannot show.
OPENAI_AGENTS_MCP_LOG = {
    "a2_mcp": (C, V, C, H),
    "a2_mcp_fixed": (C, H, C, H),
}
# The spans joined with that log (--mcp-log): each TOOL span matched to its tools/call, so the
# agents' plans are checked against the server's registry timeline; A1, A3, A6 stay the spans'.
OPENAI_AGENTS_JOINED = {
    "a2_mcp": (C, V, C, H),
    "a2_mcp_fixed": (C, H, C, H),
}
# The same runs read with the profile tools' mapping (--tool-memory, the Agent Framework corpus's
# file): the TOOL spans' tool.name, input.value and output.value name the cell and what was read
# and written, so A1 is decided; A2, A3, A6 stay the spans'.
OPENAI_AGENTS_MAPPED = {
    "a1": (V, C, C, H),
    "a1_fixed": (H, C, C, H),
}
MCP = {
    "ignore": (C, V, C, H),
    "refresh": (C, H, C, H),
    "ignore_unaffected": (C, H, C, H),
    "parallel": (C, H, C, V),
    "parallel_fixed": (C, H, C, H),
}


@pytest.mark.parametrize("run", sorted(OPENAI_AGENTS))
def test_openai_agents_openinference(run, tmp_path, agentsim_binary):
    truth = openai_agents_runs.run(run, tmp_path)
    expected = OPENAI_AGENTS[run]
    # The expectation agrees with what the run did, where agentsim can tell.
    if "a6" in truth:
        assert (expected[3] == V) == truth["a6"], truth
    if "a1" in truth:
        assert truth["a1"] == (run == "a1"), truth
    report = detect(agentsim_binary, "openinference", tmp_path / "spans.jsonl")
    assert verdicts(report) == expected, json.dumps(report["verdicts"], indent=1)
    same_answer(ingested(agentsim_binary, "openinference", tmp_path / "spans.jsonl", tmp_path),
                report)
    ingest = report["ingest"]["decidable"]
    # Every "cannot tell" says why, naming what the spans lacked.
    assert "tool" in ingest["A1"]["why"], ingest["A1"]
    if expected[1] == C:
        assert "llm.tools" in ingest["A2"]["why"], ingest["A2"]
    # --from otel finds the OpenInference spans, says so, and answers the same.
    auto = detect(agentsim_binary, "otel", tmp_path / "spans.jsonl")
    assert verdicts(auto) == expected, json.dumps(auto["verdicts"], indent=1)
    assert auto["ingest"]["source"] == "openinference", auto["ingest"]
    assert auto["ingest"]["notes"][0] == OPENINFERENCE_NOTE, auto["ingest"]["notes"]
    same_answer(ingested(agentsim_binary, "otel", tmp_path / "spans.jsonl", tmp_path), auto)
    if run in OPENAI_AGENTS_JOINED:
        joined = detect(agentsim_binary, "openinference", tmp_path / "spans.jsonl",
                        "--mcp-log", str(tmp_path / "mcp.jsonl"))
        expected_joined = OPENAI_AGENTS_JOINED[run]
        assert verdicts(joined) == expected_joined, json.dumps(joined["verdicts"], indent=1)
        # `ingest` saves the joined history and its report; both conventions' readers agree.
        for source in ("openinference", "otel"):
            saved = ingested(agentsim_binary, source, tmp_path / "spans.jsonl", tmp_path,
                             "--mcp-log", str(tmp_path / "mcp.jsonl"))
            same_answer(saved, detect(agentsim_binary, source, tmp_path / "spans.jsonl",
                                      "--mcp-log", str(tmp_path / "mcp.jsonl")))
        assert (expected_joined[1] == V) == truth["a2"], truth
        a2 = joined["ingest"]["decidable"]["A2"]
        assert "all 2 planned steps joined" in a2["why"], a2
        # Both agents' tool spans met their calls; the planner's `lookup` failed on the server
        # (the span says OK), so only the admin's call is an effect.
        counts = joined["ingest"]["counts"]
        assert counts["mcp_log_matched_tool_spans"] == 2, counts
        assert counts["mcp_log_failed_calls"] == (1 if run == "a2_mcp" else 0), counts
    if run in OPENAI_AGENTS_MCP_LOG:
        log = detect(agentsim_binary, "mcp", tmp_path / "mcp.jsonl")
        assert verdicts(log) == OPENAI_AGENTS_MCP_LOG[run], json.dumps(log["verdicts"], indent=1)
        assert (OPENAI_AGENTS_MCP_LOG[run][1] == V) == truth["a2"], truth
        # The SDK calls from the list it had, whatever list_changed said.
        assert log["ingest"]["counts"]["stale_list_calls"] == 1, log["ingest"]


@pytest.mark.parametrize("run", sorted(OPENAI_AGENTS_MAPPED))
def test_openai_agents_memory_behind_tools(run, tmp_path, agentsim_binary):
    truth = openai_agents_runs.run(run, tmp_path)
    expected = OPENAI_AGENTS_MAPPED[run]
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
    for named in ("TOOL read_profile", "TOOL write_profile", "tool.name", "input.value",
                  "output.value", "compared by content"):
        assert named in a1["why"], a1
    reads = [o for o in truth["ops"] if o[1] == "read"]
    writes = [o for o in truth["ops"] if o[1] == "write"]
    counts = report["ingest"]["counts"]
    assert counts["memory_cells"] == len({o[2] for o in truth["ops"]}), counts
    assert f"read_profile ({mapping}; tool.name, input.value, output.value) ×{len(reads)}" \
        in a1["why"], a1
    assert f"write_profile ({mapping}; tool.name, input.value) ×{len(writes)}" in a1["why"], a1
    witnesses = report["anomalies"].get("A1", [])
    assert len(witnesses) == (1 if truth["a1"] else 0), witnesses
    # The mapping's [[registry]] groups share the agents' llm.tools, and a note says so; these
    # chat-completions LLM spans carry no llm.tools, so A2 stays cannot tell (above).
    shared = f"registries are shared by the groups {mapping} declares"
    assert any(n.startswith(shared) for n in report["ingest"]["notes"]), report["ingest"]
    # A mapping whose cell needs an argument the calls do not pass: cannot tell, and why.
    wrong = tmp_path / "wrong_key.toml"
    wrong.write_text(mapping.read_text().replace("profile/{key}", "profile/{user}"))
    report = detect(agentsim_binary, "openinference", spans, "--tool-memory", str(wrong))
    assert report["verdicts"]["A1"]["verdict"] == C, report["verdicts"]["A1"]
    why = report["ingest"]["decidable"]["A1"]["why"]
    assert "TOOL read_profile: argument `user` missing" in why, why
    # Without the mapping the same spans are ordinary tool calls: cannot tell.
    alone = detect(agentsim_binary, "openinference", spans)
    assert alone["verdicts"]["A1"]["verdict"] == C, alone["verdicts"]["A1"]
    assert "--tool-memory" in alone["ingest"]["decidable"]["A1"]["why"]


def test_tool_memory_combines_with_the_mcp_log(tmp_path, agentsim_binary):
    """The MCP run's `lookup` mapped as a read of `kv/{key}`, with the log joined: the join still
    matches every TOOL span to its call (A2 from the server's timeline), and the mapping reads
    the same spans' arguments. The planner's lookup failed on the server (the span says OK), so
    what it read is unknown: A1 cannot tell, saying so."""
    for run, a1 in (("a2_mcp", C), ("a2_mcp_fixed", H)):
        folder = tmp_path / run
        truth = openai_agents_runs.run(run, folder)
        mapping = folder / "kv.toml"
        mapping.write_text('[[tool]]\nname = "lookup"\nreads = "kv/{key}"\n')
        more = ("--mcp-log", str(folder / "mcp.jsonl"), "--tool-memory", str(mapping))
        for source in ("openinference", "otel"):
            both = detect(agentsim_binary, source, folder / "spans.jsonl", *more)
            expected = (a1,) + OPENAI_AGENTS_JOINED[run][1:]
            assert verdicts(both) == expected, json.dumps(both["verdicts"], indent=1)
            assert (expected[1] == V) == truth["a2"], truth
            saved = ingested(agentsim_binary, source, folder / "spans.jsonl", folder, *more)
            same_answer(saved, both)
        counts = both["ingest"]["counts"]
        assert counts["mcp_log_matched_tool_spans"] == 2, counts
        why = both["ingest"]["decidable"]["A1"]["why"]
        if a1 == C:
            assert "TOOL lookup: the call failed, so what it read is unknown" in why, why
        else:
            assert "TOOL lookup" in why and "input.value" in why, why


@pytest.mark.parametrize("run", sorted(MCP))
def test_mcp_clients(run, tmp_path, agentsim_binary):
    truth = mcp_runs.run(run, tmp_path)
    expected = MCP[run]
    if "a2" in truth:
        assert (expected[1] == V) == truth["a2"], truth
    if "a6" in truth:
        assert (expected[3] == V) == truth["a6"], truth
    report = detect(agentsim_binary, "mcp", tmp_path / "mcp.jsonl")
    assert verdicts(report) == expected, json.dumps(report["verdicts"], indent=1)
    same_answer(ingested(agentsim_binary, "mcp", tmp_path / "mcp.jsonl", tmp_path), report)
    ingest = report["ingest"]
    assert ingest["counts"].get("stale_list_calls", 0) == truth.get("stale_calls", 0), ingest
    assert "tools/list" in ingest["decidable"]["A2"]["why"], ingest["decidable"]["A2"]


def test_a_mixed_export_is_refused_by_otel_and_counted_by_openinference(tmp_path, agentsim_binary,
                                                                        repo_root):
    """OpenInference spans of the SDK and GenAI spans of another instrumentor in one export:
    --from otel reads neither half silently (exit 2, the counts); --from openinference reads its
    spans and counts the others."""
    openai_agents_runs.run("a6", tmp_path)
    genai = json.loads((repo_root / "scenarios/traces/otel/tool_reordering.json").read_text())
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text((tmp_path / "spans.jsonl").read_text() + json.dumps(genai) + "\n")
    out = subprocess.run([agentsim_binary, "detect", str(mixed), "--from", "otel"],
                         capture_output=True, text=True)
    assert out.returncode == 2, out
    assert "the export mixes span conventions" in out.stderr, out.stderr
    report = detect(agentsim_binary, "openinference", mixed)
    ingest = report["ingest"]
    assert ingest["counts"]["genai_spans_not_read"] > 0, ingest["counts"]
    assert any("GenAI spans" in n for n in ingest["notes"]), ingest["notes"]
    assert verdicts(report) == OPENAI_AGENTS["a6"], json.dumps(report["verdicts"], indent=1)
    genai_only = detect(agentsim_binary, "genai", mixed)
    assert genai_only["ingest"]["source"] == "otel", genai_only["ingest"]
