"""CrewAI runs exported live to ``agentsim serve`` with the OpenTelemetry SDK's own
``OTLPSpanExporter``, over OTLP/HTTP (protobuf) and over OTLP/gRPC, beside the file exporter on
the same run; on SIGTERM each ``serve`` must report what ``detect --from otel --json`` reports on
the run's file.

Each run feeds two receivers at once: one reached only over HTTP/protobuf (``--grpc off``),
one over gRPC (gzip-compressed, as a collector is often configured). The exporters sit behind
the SDK's ``BatchSpanProcessor`` as an application's would, and are flushed when the run's
provider shuts down. Skipped without CrewAI's venv (requirements-corpus-crewai.txt), which
already carries both exporters (CrewAI depends on them).
"""

import pytest

pytest.importorskip("crewai")
pytest.importorskip("openinference.instrumentation.crewai")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
pytest.importorskip("opentelemetry.exporter.otlp.proto.grpc")

import grpc  # noqa: E402
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import \
    OTLPSpanExporter as GrpcExporter  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import \
    OTLPSpanExporter as HttpExporter  # noqa: E402

from agentsim_corpus import crewai_runs  # noqa: E402
from agentsim_corpus.cli import C, H, V, verdicts  # noqa: E402
from agentsim_corpus.live import Serve, assert_served_as_detected, detect_as_served  # noqa: E402
from agentsim_corpus.runs import write_mapping  # noqa: E402

# The runs with a witness (A6 from the spans alone; A1 with the profile tools' mapping), so a
# report that lost spans on the way could not still agree with the file by saying "holds".
RUNS = {
    "a6": ((C, C, C, V), False),
    "a1": ((V, C, C, H), True),
}


@pytest.fixture(autouse=True)
def crewai_data(tmp_path, monkeypatch):
    """CrewAI's kickoff database goes to the test's folder, not the user's data directory."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


@pytest.mark.parametrize("run", sorted(RUNS))
def test_crewai_exports_live_over_http_and_grpc(run, tmp_path, agentsim_binary):
    expected, mapped = RUNS[run]
    more = ["--tool-memory", str(write_mapping(tmp_path))] if mapped else []
    serves: dict[str, Serve] = {}
    attempts = []

    def receivers():
        # A run made again (crewai_runs.ATTEMPTS) starts from fresh receivers.
        for s in serves.values():
            s.kill()
        attempts.append(len(attempts) + 1)
        n = len(attempts)
        serves["http"] = Serve(agentsim_binary, tmp_path / f"http{n}", *more, grpc=False)
        serves["grpc"] = Serve(agentsim_binary, tmp_path / f"grpc{n}", *more)
        return [HttpExporter(endpoint=serves["http"].traces_url, timeout=10),
                GrpcExporter(endpoint=serves["grpc"].grpc, insecure=True, timeout=10,
                             compression=grpc.Compression.Gzip)]

    try:
        truth = crewai_runs.run(run, tmp_path / "run", also=receivers)
        reports = {name: s.stop() for name, s in serves.items()}
    finally:
        for s in serves.values():
            s.kill()
    if "a6" in truth:
        assert truth["a6"], truth
    if "a1" in truth:
        assert truth["a1"], truth
    offline = detect_as_served(agentsim_binary, tmp_path / "run" / "spans.jsonl", *more)
    assert verdicts(offline) == expected, offline["verdicts"]
    for name, report in reports.items():
        assert_served_as_detected(name, serves[name], report, offline)
