"""strands-agents/harness-sdk #1176 (A1) reproduced on the strands-agents installed here: 1.21.0,
the affected release, or 1.22.0, the release with the maintainers' fix (pull request #1453: an
invocation that overlaps another raises ``ConcurrencyException``). CI runs this file once with
each (requirements-reported-strands-concurrent-*.txt, in the venv of the #4112 reproduction);
skipped where another release is installed.

The run's truth is the agent's message history and the requests the scripted server received.
Strands does not trace the history; the reproduction's hooks add a ``search_memory`` span per
generation and an ``update_memory`` span per appended message, and its mapping declares the two
invocations separate callers (``[invocations] separate``).
"""

import json

import pytest

from agentsim_corpus.testing import release_or_skip

RELEASE = release_or_skip("strands-agents", "1.21.0", "1.22.0")
pytest.importorskip("opentelemetry.exporter.otlp.json.file")

from agentsim_corpus.cli import H, V, agentsim_json, detect  # noqa: E402
from agentsim_corpus.reported import strands_concurrent_invocations as report  # noqa: E402


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    folder = tmp_path_factory.mktemp("concurrent")
    return report.run(folder), folder / "spans.jsonl", folder / "map.toml"


def test_the_release_does_what_the_report_says(reproduced):
    truth, _, _ = reproduced
    assert truth["version"] == RELEASE, truth
    fixed = RELEASE == report.FIXED
    assert truth["fix_applied"] == fixed, truth
    # 1.21.0 lets the retry append its question while the first generation is in flight: the
    # first answer, generated from one question, lands after two, and the history has two user
    # turns in a row. 1.22.0 refuses the retry; retried after the first, it alternates.
    assert truth["a1"] == (not fixed), truth
    assert truth["alternates"] == fixed, truth
    assert truth["first_generation_saw"] == 1, truth
    assert truth["first_answer_written_after"] == (1 if fixed else 3), truth
    assert truth["retry"].startswith("raised ConcurrencyException" if fixed else "ran"), truth


def test_detect_answers_the_truth(reproduced, agentsim_binary):
    truth, spans, mapping = reproduced
    out = detect(agentsim_binary, "otel", spans, "--tool-memory", str(mapping))
    a1 = out["verdicts"]["A1"]
    if truth["a1"]:
        assert a1["verdict"] == V, out["verdicts"]
        # Each witness found is one (a lower bound, where the trace lacks writes, still is).
        status = out["ingest"]["decidable"]["A1"]["status"]
        assert status in ("decided", "lower_bound"), out["ingest"]
    else:
        # The history spans of the fixed run show the second invocation reading a history
        # no traced write made (the hook's spans do not cover every append), so the trace
        # began in a state it cannot name: A1 is not violated, and not told either.
        assert a1["verdict"] in (H, "cannot_tell"), out["verdicts"]
        if a1["verdict"] == "cannot_tell":
            assert "missing from the trace" in json.dumps(a1), a1
    witnesses = out["anomalies"].get("A1", [])
    assert len(witnesses) == (1 if truth["a1"] else 0), witnesses


def test_without_the_mapping_the_overlap_is_an_upper_bound(reproduced, agentsim_binary):
    truth, spans, _ = reproduced
    if not truth["a1"]:
        pytest.skip("the fixed release runs no two invocations at once")
    out = detect(agentsim_binary, "otel", spans)
    assert out["verdicts"]["A1"]["verdict"] not in (V, H), out["verdicts"]
    assert len(out["anomalies"].get("A1", [])) == 1, out["anomalies"]


def test_fix_on_the_affected_release(reproduced, agentsim_binary):
    truth, spans, mapping = reproduced
    if not truth["a1"]:
        pytest.skip("the fixed release shows no anomaly to fix")
    fix = agentsim_json(agentsim_binary, "fix", "--from", "otel", str(spans), "--tool-memory",
                        str(mapping), "--trials", "200")
    assert fix["stack"], fix
