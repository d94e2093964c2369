//! OpenTelemetry GenAI traces (OTLP/JSON) → agentsim history.
//!
//! Attribute and operation names are those of the OpenTelemetry GenAI semantic conventions
//! (`open-telemetry/semantic-conventions-genai`, `model/gen-ai/registry.yaml` and `spans.yaml`,
//! read at commit 002c8a6e; the conventions moved there from the main repository, whose
//! `docs/gen-ai/` now only points to it). A span is a GenAI span when it has
//! `gen_ai.operation.name`; every other span (HTTP, DB, …) is ignored and counted, but still
//! links its children to their agent. The mapping:
//!
//! * `invoke_agent` → an agent invocation; `agent` = `gen_ai.agent.name`, else
//!   `gen_ai.agent.id` (`#2`, `#3` … for invocations of one agent that overlap in time);
//! * `chat`, `generate_content`, `text_completion` → the generation of a step; a step is the
//!   memory reads before it, it, and the writes and tool calls after it (up to the next read
//!   or generation);
//! * `search_memory` → reads of `<gen_ai.memory.store.id>/<id>` for each record of
//!   `gen_ai.memory.records` (value: its `content`), or of `gen_ai.memory.record.id`;
//! * `retrieval` → reads of `<gen_ai.data_source.id>/<id>` for each of
//!   `gen_ai.retrieval.documents`;
//! * `create_memory`, `update_memory`, `upsert_memory` → writes of those cells (value: the
//!   record's `content`); `delete_memory` writes NULL;
//! * `execute_tool` → an effect `tool:<gen_ai.tool.name>:<gen_ai.tool.call.id>` (value:
//!   `gen_ai.tool.call.result`); the first is the step's `planned_tool`;
//! * the memory writes and tool calls of a step → `io` in start order, `co` in end order;
//! * `gen_ai.tool.definitions` of the generation → `read_registry`; `write_registry` = the
//!   agent's latest observed definitions when its first tool call starts; a definition that
//!   changed is a new signature version;
//! * the first read's start and the last write's end → log order and `read_time` (the
//!   builder);
//! * a step whose every memory write failed (`status` ERROR) → `aborted`;
//! * `gen_ai.tool.definitions` on `invoke_agent` (Agent Framework puts them only there), else
//!   `gen_ai.agent.tools` (Strands: names only) → the registry of its steps' plans; registry
//!   changes apply across the agents a mapping file groups ([`crate::registry`]);
//! * `execute_tool` with ERROR status → an effect that did not land (left out of `io`/`co`);
//! * `invoke_agent` with ERROR status → its steps retracted (committed, then aborted; `preds`
//!   derived, so a survivor that read their writes is an A3);
//! * Strands' `memory.search` / `memory.add` → reads / writes of one cell per store
//!   (`memory.store.names`), the contents from the span events `memory.results`; tool
//!   arguments and results from the events `gen_ai.tool.message` / `gen_ai.choice` when the
//!   attributes do not carry them;
//! * an `execute_tool` of a tool the [`mapping`] file names → a memory read or write of the
//!   cell it names from the call's arguments;
//! * pydantic-ai 1.0's spans, which carry no `gen_ai.operation.name`, by their attributes:
//!   `running tool` (`gen_ai.tool.name`) → `execute_tool`, arguments and result from
//!   `tool_arguments` / `tool_response`; `agent run` (`agent_name`) → `invoke_agent`; `running
//!   tools` → the aggregate of one generation's calls (a known parent, not a step); Google ADK's
//!   `execute_tool` named `(merged tools)` → an aggregate, not a call.
//!
//! `create_memory_store`, `delete_memory_store`, `embeddings`, `create_agent`, `plan`,
//! `invoke_workflow`, Strands' `execute_event_loop_cycle` and `memory.inject` spans are GenAI
//! spans that are not steps; they are counted. What the spans did not carry is derived by the
//! builder (versions of records whose contents were not captured) or reported as such
//! ([`crate::evidence`]: each verdict from what the trace showed, e.g. no memory operation
//! seen → A1 cannot be told).

mod export;
mod fast;
mod gaps;
mod index;
mod input;
pub mod invocation;
mod lean;
mod map;
pub mod mapping;
pub mod otlp;
mod pack;
mod span;

pub use lean::LeanSpan;
pub use map::{Mapper, Origin};

use crate::error::IngestError;
use crate::Ingested;
use input::Input;
use mapping::Mapping;
use std::path::Path;

/// Ingests an OTLP/JSON trace file (one document, or one per line). A file of one document per
/// line is read a line at a time and mapped a trace at a time.
pub fn read_otel(path: impl AsRef<Path>) -> Result<Ingested, IngestError> {
    read_otel_with(path, None)
}

/// [`read_otel`] with a mapping file ([`mapping`]): memory behind tools, shared registries.
pub fn read_otel_with(
    path: impl AsRef<Path>,
    mapping: Option<&Mapping>,
) -> Result<Ingested, IngestError> {
    let path = path.as_ref();
    export::ingest(Input::File(path), &path.display().to_string(), mapping)
}

/// Ingests OTLP/JSON text; `file` names it in errors and in the report. A leading UTF-8
/// byte-order mark (some exporters and editors write one) is skipped, not a JSON error.
pub fn parse_otel(text: &str, file: &str) -> Result<Ingested, IngestError> {
    parse_otel_with(text, file, None)
}

/// [`parse_otel`] with a mapping file.
pub fn parse_otel_with(
    text: &str,
    file: &str,
    mapping: Option<&Mapping>,
) -> Result<Ingested, IngestError> {
    export::ingest(Input::Text(text), file, mapping)
}

/// Maps spans already read (whole traces or not: they are grouped here), as the file readers
/// map the spans of an export.
pub fn map_spans(
    spans: Vec<otlp::Span>,
    file: &str,
    mapping: Option<&Mapping>,
) -> Result<Ingested, IngestError> {
    map::ingest(file, spans, mapping)
}
