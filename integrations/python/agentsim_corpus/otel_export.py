"""One OpenTelemetry tracer provider for the corpus runs, exporting each run's spans to its own
OTLP/JSON file with the official file exporter (``opentelemetry-exporter-otlp-json-file``,
``FileSpanExporter``: one ``TracesData`` JSON document per line, ids in hex as the OTLP JSON
encoding requires).

Both frameworks instrument themselves through the global provider: Agent Framework's
``agent_framework.observability`` (``enable_instrumentation``: its spans follow the GenAI
conventions; ``enable_sensitive_data`` adds tool arguments and results), Strands'
``strands.telemetry`` tracer (spans under ``strands.telemetry.tracer``; its ``StrandsTelemetry``
helper also just installs a provider). A provider is global and set once per process, so the
one here routes every ended span to the exporter of the run in progress::

    with capture(path):
        ...   # run the agents; on exit every span has been written to path

Spans are exported as they end (``SimpleSpanProcessor``), so a run's file is complete when the
block exits, with nothing left in a batch queue.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from opentelemetry import trace
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class _Router(SpanExporter):
    """Sends spans to the current run's file exporter; spans outside a run are dropped."""

    def __init__(self) -> None:
        self.current: FileSpanExporter | None = None
        self.lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self.lock:
            if self.current is None:
                return SpanExportResult.SUCCESS
            return self.current.export(spans)

    def shutdown(self) -> None:
        pass


_ROUTER: _Router | None = None


def install(service: str = "agentsim-corpus") -> None:
    """Sets the global tracer provider (once per process)."""
    global _ROUTER
    if _ROUTER is not None:
        return
    _ROUTER = _Router()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(_ROUTER))
    trace.set_tracer_provider(provider)


@contextlib.contextmanager
def capture(path: Path) -> Iterator[None]:
    """Writes every span that ends inside the block to ``path`` (replacing it)."""
    install()
    assert _ROUTER is not None
    path.unlink(missing_ok=True)
    exporter = FileSpanExporter(path)
    with _ROUTER.lock:
        _ROUTER.current = exporter
    try:
        yield
    finally:
        with _ROUTER.lock:
            _ROUTER.current = None
        exporter.shutdown()
