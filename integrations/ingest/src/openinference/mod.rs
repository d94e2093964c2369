//! OpenInference traces (OTLP/JSON) → agentsim history.
//!
//! OpenInference is the span vocabulary of Arize's instrumentors (the OpenAI Agents SDK's,
//! CrewAI's, LlamaIndex's, …): a span's role is `openinference.span.kind`, and its data are
//! flattened attributes (`llm.tools.0.tool.json_schema`, not a JSON array). Names are those of
//! `openinference-semantic-conventions` (Python package 0.1.42). The mapping:
//!
//! * `AGENT` with `agent.name` → an agent invocation (an `AGENT` span without it, such as the
//!   OpenAI Agents SDK's trace root, is a workflow; its span name names the agent only when no
//!   named agent is above a step);
//! * `LLM` → the generation of a step; a step is the reads before it, it, and the tool calls
//!   after it (up to the next read or generation), as in the GenAI mapping (`crate::otel`);
//! * `RETRIEVER` → reads of `retrieval/<id>` for each `retrieval.documents.<i>.document.id`
//!   (value: `document.content`, else derived);
//! * `TOOL` with `tool.name` → an effect `tool:<tool.name>:<span id>` (value: `output.value`);
//!   a `TOOL` span without `tool.name` (a handoff) is counted, not an effect; one with ERROR
//!   status did not land and is left out of the effects;
//! * an MCP span (`mcp.method.name` = `tools/call`; the OpenTelemetry MCP conventions,
//!   `open-telemetry/semantic-conventions-genai`, `docs/gen-ai/mcp.md`, name such a span
//!   `tools/call {gen_ai.tool.name}`) that is not below a `TOOL` span or another `tools/call`
//!   (the server's side of the same call) → an effect of `gen_ai.tool.name`;
//!   `notifications/tools/list_changed` spans are counted and noted (the conventions put no tool
//!   list on spans, so what changed is not in the trace);
//! * planned tool = the first `llm.output_messages.<i>.message.tool_calls.<j>.tool_call.
//!   function.name` of the generation, else the first tool span; `read_registry` = the
//!   generation's `llm.tools` (each `tool.json_schema`'s function name; a changed schema is a
//!   new version); `write_registry` = the agent's latest `llm.tools` at the first call;
//! * `CHAIN`, `GUARDRAIL`, `EMBEDDING`, … → not steps (counted); they still link their
//!   children to their agent.
//!
//! What the spans cannot show is said, not defaulted: OpenInference has no span kind for memory
//! writes, so A1 is never decided from it (memory behind tools is ordinary `TOOL` spans); the
//! registry when a tool runs is not on any span, so A2 is decided only when no tool was
//! planned; nothing records provenance (A3).

mod map;

use crate::error::IngestError;
use crate::Ingested;
use std::path::Path;

/// Ingests an OTLP/JSON file of OpenInference spans.
pub fn read_openinference(path: impl AsRef<Path>) -> Result<Ingested, IngestError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| IngestError::Io {
        file: file.clone(),
        source,
    })?;
    parse_openinference(&text, &file)
}

/// Ingests OTLP/JSON text of OpenInference spans; `file` names it in errors and the report.
pub fn parse_openinference(text: &str, file: &str) -> Result<Ingested, IngestError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let spans = crate::otel::otlp::parse(text, file)?;
    map::ingest(file, spans)
}

/// Whether a span is OpenInference's (`openinference.span.kind`): how `--from otel` can tell
/// a trace that should be read with this module.
pub fn is_openinference(span: &crate::otel::otlp::Span) -> bool {
    span.attrs.contains_key("openinference.span.kind")
}
