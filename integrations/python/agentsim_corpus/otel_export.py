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

Inside ``with live(open_exporters):`` each run's spans also go, live, to the exporters
``open_exporters(path)`` opens for it (a context manager giving a list of exporters: the live
tests' OTLP span exporters and the ``agentsim serve`` they reach), each behind its own
``BatchSpanProcessor`` as an application ships spans to a collector, flushed and shut down
before the run's block exits.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import ContextManager

from opentelemetry import trace
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (BatchSpanProcessor, SimpleSpanProcessor, SpanExporter,
                                            SpanExportResult)


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


class _Live(SpanProcessor):
    """Hands each ended span to the current run's batch processors (none outside ``live``)."""

    def __init__(self) -> None:
        self.current: list[BatchSpanProcessor] = []
        self.lock = threading.Lock()

    def on_end(self, span: ReadableSpan) -> None:
        with self.lock:
            processors = list(self.current)
        for p in processors:
            p.on_end(span)


OpenExporters = Callable[[Path], ContextManager[list[SpanExporter]]]
_ROUTER: _Router | None = None
_LIVE = _Live()
_OPEN_LIVE: OpenExporters | None = None


def install(service: str = "agentsim-corpus") -> None:
    """Sets the global tracer provider (once per process)."""
    global _ROUTER
    if _ROUTER is not None:
        return
    _ROUTER = _Router()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(_ROUTER))
    provider.add_span_processor(_LIVE)
    trace.set_tracer_provider(provider)


@contextlib.contextmanager
def live(open_exporters: OpenExporters) -> Iterator[None]:
    """Inside the block, each ``capture(path)`` also exports to ``open_exporters(path)``."""
    global _OPEN_LIVE
    _OPEN_LIVE = open_exporters
    try:
        yield
    finally:
        _OPEN_LIVE = None


@contextlib.contextmanager
def capture(path: Path) -> Iterator[None]:
    """Writes every span that ends inside the block to ``path`` (replacing it)."""
    install()
    assert _ROUTER is not None
    path.unlink(missing_ok=True)
    opened = _OPEN_LIVE(path) if _OPEN_LIVE is not None else contextlib.nullcontext([])
    with opened as exporters:
        exporter = FileSpanExporter(path)
        processors = [BatchSpanProcessor(e) for e in exporters]
        with _ROUTER.lock, _LIVE.lock:
            _ROUTER.current = exporter
            _LIVE.current = processors
        try:
            yield
        finally:
            with _ROUTER.lock, _LIVE.lock:
                _ROUTER.current = None
                _LIVE.current = []
            exporter.shutdown()
            for p in processors:
                p.shutdown()
