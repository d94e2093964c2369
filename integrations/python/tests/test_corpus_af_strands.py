"""The real-framework corpus: Microsoft Agent Framework and Strands Agents, driven by the real
``openai`` client against the scripted server, traced by their own instrumentation to OTLP/JSON
files, and read back with ``agentsim detect --from otel`` (and saved with ``agentsim ingest otel``
and read back with its report, which must answer the same).

Each run declares the verdict agentsim must give on every lattice anomaly (violated, holds,
or cannot tell); a run passes only with exactly that set. The traces are made here, by the
frameworks, in a temporary folder (``AGENTSIM_CORPUS_OUT`` keeps them, and the table of
answers, for a report).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

agent_framework = pytest.importorskip("agent_framework")
strands = pytest.importorskip("strands")

from agentsim_corpus import agent_framework_runs, otel_export, strands_runs  # noqa: E402
from agentsim_corpus.live import Serve, detect_as_served  # noqa: E402
from agentsim_corpus.runs import Run, write_mapping  # noqa: E402

LATTICE = ("A1", "A2", "A3", "A6")


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


try:
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import \
        OTLPSpanExporter as GrpcExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import \
        OTLPSpanExporter as HttpExporter
except ImportError:  # the live test below says why it is skipped
    GrpcExporter = HttpExporter = None

# trace file -> {"http": report, "grpc": report} from the serves its run exported to live.
SERVED: dict[Path, dict[str, dict]] = {}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, agentsim_binary) -> list[Run]:
    keep = os.environ.get("AGENTSIM_CORPUS_OUT")
    out = Path(keep) if keep else tmp_path_factory.mktemp("corpus")
    out.mkdir(parents=True, exist_ok=True)
    SERVED.clear()
    if HttpExporter is None:
        return agent_framework_runs.generate(out) + strands_runs.generate(out)
    # Each run also exports live, with the SDK's OTLP exporters, to two `agentsim serve`s
    # (one over HTTP/protobuf, one over gRPC), read with the mapping every run's file is.
    mapping = write_mapping(out)

    @contextlib.contextmanager
    def serves(trace: Path):
        folder = out / "live" / trace.stem
        more = ("--tool-memory", str(mapping))
        with Serve(agentsim_binary, folder / "http", *more, grpc=False) as http, \
                Serve(agentsim_binary, folder / "grpc", *more) as grpc_:
            yield [HttpExporter(endpoint=http.traces_url, timeout=10),
                   GrpcExporter(endpoint=grpc_.grpc, insecure=True, timeout=10)]
            SERVED[trace] = {"http": http.stop(), "grpc": grpc_.stop()}

    with otel_export.live(serves):
        return agent_framework_runs.generate(out) + strands_runs.generate(out)


def _detect(binary: str, run: Run, mapping: bool = True) -> dict:
    args = [binary, "detect", "--from", "otel", str(run.trace), "--json"]
    if mapping and run.mapping is not None:
        args += ["--tool-memory", str(run.mapping)]
    out = subprocess.run(args, capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(args)}: {out.stderr}"
    return json.loads(out.stdout)


def _saved(binary: str, run: Run, folder: Path) -> dict:
    """The same run through ``agentsim ingest otel`` (with the same mapping) to a history and a
    report, read back with ``detect HISTORY --ingest-report`` (A4's reason names the history,
    so it is renamed to the trace for comparison)."""
    history, report = folder / f"{run.name}.history.jsonl", folder / f"{run.name}.report.json"
    args = [binary, "ingest", "otel", str(run.trace), "-o", str(history), "--report", str(report)]
    if run.mapping is not None:
        args += ["--tool-memory", str(run.mapping)]
    out = subprocess.run(args, capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(args)}: {out.stderr}"
    args = [binary, "detect", str(history), "--ingest-report", str(report), "--json"]
    out = subprocess.run(args, capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(args)}: {out.stderr}"
    return json.loads(out.stdout.replace(str(history), str(run.trace)))


def _verdicts(report: dict) -> dict[str, str]:
    return {a: report["verdicts"][a]["verdict"].replace("_", " ") for a in LATTICE}


def test_every_run_gives_its_anomaly_set(corpus, agentsim_binary, tmp_path):
    rows, wrong = [], []
    for run in corpus:
        report = _detect(agentsim_binary, run)
        got = _verdicts(report)
        saved = _saved(agentsim_binary, run, tmp_path)
        for key in ("exhibits", "verdicts", "ingest"):
            assert saved[key] == report[key], (run.name, key, saved[key], report[key])
        found = {a: len(report["anomalies"].get(a, [])) for a in LATTICE}
        decidable = {a: report["ingest"]["decidable"][a]["status"] for a in LATTICE}
        kinds = {a: report["verdicts"][a].get("reason", {}).get("kind") for a in LATTICE}
        rows.append({
            "framework": f"{run.framework} {_version(run.framework)}",
            "run": run.name, "expected": run.expect, "verdicts": got, "found": found,
            "decidable": decidable, "cannot_tell_kind": kinds,
        })
        if got != run.expect:
            wrong.append(f"{run.framework} {run.name}: expected {run.expect}, got {got}; "
                         f"ingest: {json.dumps(report['ingest']['decidable'])}")
    keep = os.environ.get("AGENTSIM_CORPUS_OUT")
    if keep:
        (Path(keep) / "table.json").write_text(json.dumps(rows, indent=1) + "\n")
    assert not wrong, "\n".join(wrong)
    assert len(corpus) == 16


def test_a_memory_tool_without_the_mapping_is_cannot_tell(corpus, agentsim_binary):
    # Agent Framework emits no memory span: without --tool-memory, A1 is not "none".
    run = next(r for r in corpus if r.framework == "agent-framework-core"
               and r.name == "a1_lost_update")
    report = _detect(agentsim_binary, run, mapping=False)
    a1 = report["verdicts"]["A1"]
    assert a1["verdict"] == "cannot_tell", a1
    assert "no memory operation seen" in report["ingest"]["decidable"]["A1"]["why"]


def test_a_cross_agent_retirement_needs_the_shared_registry(corpus, agentsim_binary):
    # Per agent, the planner's own views never change: the witness needs the declared group.
    for run in corpus:
        if run.name != "a2_retired":
            continue
        alone = _detect(agentsim_binary, run, mapping=False)
        assert alone["verdicts"]["A2"]["verdict"] == "cannot_tell", (run.framework, alone)
        shared = _detect(agentsim_binary, run)
        assert shared["verdicts"]["A2"]["verdict"] == "violated", (run.framework, shared)
        why = shared["ingest"]["decidable"]["A2"]["why"]
        attr = ("gen_ai.agent.tools" if run.framework == "strands-agents"
                else "gen_ai.tool.definitions")
        assert f"{attr} on invoke_agent" in why, why


def test_the_mapping_file_is_validated_at_file_and_line(tmp_path, agentsim_binary, corpus):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[tool]]\nname = "read_profile"\nreads = "profile/{key"\n')
    out = subprocess.run([agentsim_binary, "detect", "--from", "otel", str(corpus[0].trace),
                          "--tool-memory", str(bad)], capture_output=True, text=True)
    assert out.returncode == 2, out
    assert f"{bad}:3: `reads`: unclosed `{{`" in out.stderr, out.stderr


def test_every_run_exported_live_gives_detects_report(corpus, agentsim_binary):
    """The same runs, exported as they ran with the SDK's OTLPSpanExporter over HTTP/protobuf
    and over gRPC to `agentsim serve`: on SIGTERM each serve's report is `detect --json` on the
    run's file."""
    if HttpExporter is None:
        pytest.skip("opentelemetry-exporter-otlp-proto-http/-grpc not installed")
    assert sorted(SERVED) == sorted(r.trace for r in corpus)
    mapping = corpus[0].trace.parent / "profile_map.toml"
    violated = 0
    for run in corpus:
        offline = detect_as_served(agentsim_binary, run.trace, "--tool-memory", str(mapping))
        for transport, report in SERVED[run.trace].items():
            assert report == offline, (run.framework, run.name, transport,
                                       report["verdicts"], offline["verdicts"])
        violated += sum(v["verdict"] == "violated" for v in offline["verdicts"].values())
    # Every witness the runs were made to show is there, so a serve that lost spans could not
    # have agreed with the file by saying "holds".
    assert violated == sum(list(r.expect.values()).count("violated") for r in corpus), violated
