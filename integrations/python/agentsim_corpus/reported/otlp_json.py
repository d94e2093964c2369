"""An OTLP/JSON file writer for frameworks pinned to an OpenTelemetry SDK older than the official
file exporter's (``opentelemetry-exporter-otlp-json-file`` needs the 1.45 SDK, which dropped the
``opentelemetry._events`` module that pydantic-ai 1.0 imports).

Spans are encoded with the SDK's own OTLP protobuf encoder
(``opentelemetry-exporter-otlp-proto-common``) and written one ``TracesData`` JSON document per
line, as the file exporter writes them: ids in hex and enums as integers, as the OTLP JSON
encoding requires (protobuf's JSON mapping would write ids in base64 and enums as names).
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

_IDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex() if k in _IDS and isinstance(v, str) else _hex_ids(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


class JsonLinesSpanExporter(SpanExporter):
    """Appends each exported batch to ``path`` as one OTLP ``TracesData`` JSON line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        request = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
        line = json.dumps(_hex_ids(request), separators=(",", ":"))
        with self.lock, self.path.open("a") as f:
            f.write(line + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass
