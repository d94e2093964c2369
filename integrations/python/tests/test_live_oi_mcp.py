"""OpenAI Agents SDK runs (traced by OpenInference) exported live to ``agentsim serve`` with the
OpenTelemetry SDK's own ``OTLPSpanExporter``, over OTLP/HTTP (protobuf) and over OTLP/gRPC, each
plain and gzip-compressed, beside the file exporter on the same run; on SIGTERM each ``serve``
must report what ``detect --from otel --json`` reports on the run's file (``--from otel`` finds
the OpenInference spans, as ``test_corpus_oi_mcp.py`` checks).

Each run feeds four receivers at once, one per transport and compression; the HTTP ones listen
only over HTTP (``--grpc off``). The exporters sit behind the SDK's ``BatchSpanProcessor`` as an
application's would, and are flushed when the run's provider shuts down. Skipped without the
OpenInference and MCP venv (requirements-corpus-oi-mcp.txt, which pins both exporters).
"""

import contextlib

import pytest

pytest.importorskip("agents")
pytest.importorskip("mcp")
pytest.importorskip("openinference.instrumentation.openai_agents")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
pytest.importorskip("opentelemetry.exporter.otlp.proto.grpc")

import grpc  # noqa: E402
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import \
    OTLPSpanExporter as GrpcExporter  # noqa: E402
from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import \
    OTLPSpanExporter as HttpExporter  # noqa: E402

from agentsim_corpus import openai_agents_runs  # noqa: E402
from agentsim_corpus.cli import C, H, V, verdicts  # noqa: E402
from agentsim_corpus.live import Serve, assert_served_as_detected, detect_as_served  # noqa: E402
from agentsim_corpus.runs import write_mapping  # noqa: E402

# (expected verdicts on A1, A2, A3, A6, read with the profile tools' mapping). A6 from the spans
# alone and A1 with the mapping have a witness, so a report that lost spans on the way could not
# still agree with the file by saying "holds"; their fixed twins must say "holds" on the same
# anomaly; the MCP run carries the SDK's MCP spans (its A2 needs the MCP log, which `serve`
# does not take, so it is cannot tell on the spans, as offline).
RUNS = {
    "a6": ((C, C, C, V), False),
    "a6_fixed": ((C, C, C, H), False),
    "a1": ((V, C, C, H), True),
    "a1_fixed": ((H, C, C, H), True),
    "a2_mcp": ((C, C, C, H), False),
}
# receiver -> (transport, gzip)
RECEIVERS = {
    "http": ("http", False),
    "http_gzip": ("http", True),
    "grpc": ("grpc", False),
    "grpc_gzip": ("grpc", True),
}


def _exporter(serve: Serve, transport: str, gzip: bool):
    if transport == "http":
        return HttpExporter(endpoint=serve.traces_url, timeout=10,
                            compression=HttpCompression.Gzip if gzip else None)
    return GrpcExporter(endpoint=serve.grpc, insecure=True, timeout=10,
                        compression=grpc.Compression.Gzip if gzip else None)


@pytest.mark.parametrize("run", sorted(RUNS))
def test_openai_agents_export_live_over_http_and_grpc(run, tmp_path, agentsim_binary):
    expected, mapped = RUNS[run]
    more = ["--tool-memory", str(write_mapping(tmp_path))] if mapped else []
    with contextlib.ExitStack() as started:
        serves = {name: started.enter_context(
                      Serve(agentsim_binary, tmp_path / name, *more, grpc=transport == "grpc"))
                  for name, (transport, _) in RECEIVERS.items()}
        exporters = [_exporter(serves[name], transport, gzip)
                     for name, (transport, gzip) in RECEIVERS.items()]
        truth = openai_agents_runs.run(run, tmp_path / "run", also=lambda: exporters)
        reports = {name: s.stop() for name, s in serves.items()}
    # The expectation agrees with what the run did, where agentsim can tell.
    if "a6" in truth:
        assert (expected[3] == V) == truth["a6"], truth
    if "a1" in truth:
        assert (expected[0] == V) == truth["a1"], truth
    offline = detect_as_served(agentsim_binary, tmp_path / "run" / "spans.jsonl", *more)
    assert verdicts(offline) == expected, offline["verdicts"]
    assert offline["ingest"]["source"] == "openinference", offline["ingest"]
    for name, report in reports.items():
        assert_served_as_detected(name, serves[name], report, offline)
