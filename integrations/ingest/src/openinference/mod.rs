//! OpenInference traces (OTLP/JSON) → agentsim history.
//!
//! OpenInference is the span vocabulary of Arize's instrumentors (the OpenAI Agents SDK's,
//! CrewAI's, LlamaIndex's, …): a span's role is `openinference.span.kind`, and its data are
//! flattened attributes (`llm.tools.0.tool.json_schema`, not a JSON array; CrewAI's instrumentor
//! writes `llm.tools` as one JSON array, which is read too). Names are those of
//! `openinference-semantic-conventions` (Python package 0.1.42). The mapping:
//!
//! * `AGENT` with `agent.name` → an agent invocation (an `AGENT` span without it, such as the
//!   OpenAI Agents SDK's trace root, is a workflow; it names the agent only when no named
//!   agent is above a step: by its `graph.node.id`, which is CrewAI's role, else its span name
//!   without its method suffix, `ops.run` → `ops`);
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
//!   new version); `write_registry` = the agent's latest `llm.tools` at the first call (with
//!   a mapping's `[[registry]]` groups, and every change its group's `llm.tools` showed by
//!   then: `groups`);
//! * `CHAIN`, `GUARDRAIL`, `EMBEDDING`, … → not steps (counted); they still link their
//!   children to their agent.
//!
//! `--from otel` reads an export with this module when its step spans are OpenInference's
//! ([`read_detected`], the rule in `convention`); `--mcp-log` joins the tool spans with an MCP
//! JSON-RPC log of the same run (`join`), so the registries of the steps whose calls the log
//! holds come from the servers' timelines.
//!
//! With a mapping file (`--tool-memory`, [`crate::otel::mapping`], the one the GenAI reader
//! takes), a `TOOL` span of a tool it names is a memory access instead of an effect: a read of
//! the cell its arguments name (`input.value`, else `tool_call.function.arguments`; seen as
//! `output.value`), or a write of it (the mapping's `value`, else the arguments). A read starts
//! a step as a `RETRIEVER` span does; a write is one of the step's effects. The mapping and the
//! MCP join combine: a call is matched with the log by its name and times, and mapped by its
//! arguments; a write whose call the log says failed did not land. The mapping's
//! `[[registry]]` groups make the agents of a group share one registry (`groups`, over
//! [`crate::registry::SharedRegistry`], as the GenAI reader does): a tool that one agent's
//! later `LLM` span no longer lists is gone for another's call after it. Where `--mcp-log`
//! joins a step, the log's registries still take precedence; a note says how registries are
//! shared.
//!
//! What the spans cannot show is said, not defaulted: OpenInference has no span kind for memory
//! writes, so without a mapping A1 is never decided (memory behind tools is ordinary `TOOL`
//! spans); with one, A1 is decided from the mapped calls, or cannot be told when a mapped call
//! lacks the argument its cell needs or failed. The registry when a tool runs is not on any
//! span, so A2 is decided only when no tool was planned; with `[[registry]]` groups it is a
//! lower bound (a change is seen at the next `llm.tools` of the group that shows it, so a
//! witness is real and none is not an answer), else it cannot be told. Nothing records
//! provenance (A3).

mod convention;
mod groups;
mod join;
mod map;

pub use convention::{choose, classify, Conventions, Reader};

use crate::error::IngestError;
use crate::mcp::McpLog;
use crate::otel::mapping::Mapping;
use crate::Ingested;
use std::path::Path;

/// What is read beside the spans: an MCP log of the same run (`--mcp-log`) and a mapping of
/// the tools that are memory (`--tool-memory`); either, both or neither.
#[derive(Clone, Copy, Default)]
pub struct Beside<'a> {
    pub mcp: Option<&'a McpLog>,
    pub mapping: Option<&'a Mapping>,
}

impl<'a> Beside<'a> {
    /// An MCP log alone.
    pub fn mcp(log: &'a McpLog) -> Self {
        Beside {
            mcp: Some(log),
            mapping: None,
        }
    }
}

/// Ingests an OTLP/JSON file of OpenInference spans.
pub fn read_openinference(path: impl AsRef<Path>) -> Result<Ingested, IngestError> {
    read_openinference_with(path, Beside::default())
}

/// [`read_openinference`], the tool spans joined with an MCP log (`join`) and read through a
/// mapping file.
pub fn read_openinference_with(
    path: impl AsRef<Path>,
    beside: Beside<'_>,
) -> Result<Ingested, IngestError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let text = read(path)?;
    parse_openinference_with(&text, &file, beside)
}

/// Ingests OTLP/JSON text of OpenInference spans; `file` names it in errors and the report.
pub fn parse_openinference(text: &str, file: &str) -> Result<Ingested, IngestError> {
    parse_openinference_with(text, file, Beside::default())
}

/// [`parse_openinference`], the tool spans joined with an MCP log and read through a mapping.
pub fn parse_openinference_with(
    text: &str,
    file: &str,
    beside: Beside<'_>,
) -> Result<Ingested, IngestError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let spans = crate::otel::otlp::parse(text, file)?;
    map::ingest_with(file, spans, beside)
}

/// An OTLP/JSON export: a file, or text already read (stdin).
#[derive(Clone, Copy, Debug)]
pub enum Export<'a> {
    File(&'a Path),
    Text(&'a str),
}

/// What `--from otel` reads: the export by the convention its spans follow (`convention`):
/// GenAI spans by [`crate::otel`], OpenInference spans here (the report's notes say so),
/// joined with the MCP log when given (OpenInference only), through the mapping when given
/// (both readers take it); a mixed export is refused, naming its counts. An export that never
/// mentions `"openinference.span.kind"` goes to the GenAI reader unparsed here.
pub fn read_detected(
    export: Export<'_>,
    file: &str,
    beside: Beside<'_>,
) -> Result<Ingested, IngestError> {
    let owned;
    let text = match export {
        Export::Text(t) if !convention::mentions_text(t) => return genai(export, file, beside),
        Export::Text(t) => t,
        Export::File(p) if !convention::mentions(p)? => return genai(export, file, beside),
        Export::File(p) => {
            owned = read(p)?;
            &owned
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let spans = crate::otel::otlp::parse(text, file)?;
    match choose(&classify(&spans)) {
        Reader::GenAi => genai(Export::Text(text), file, beside),
        _ => read_detected_spans(spans, file, beside),
    }
}

/// [`read_detected`] on spans already read (`agentsim serve`'s): the same choice of reader
/// by the spans' convention, the same mapping.
pub fn read_detected_spans(
    spans: Vec<crate::otel::otlp::Span>,
    file: &str,
    beside: Beside<'_>,
) -> Result<Ingested, IngestError> {
    let c = classify(&spans);
    match choose(&c) {
        Reader::GenAi => {
            if let Some(log) = beside.mcp {
                return Err(IngestError::Ambiguous {
                    file: file.to_owned(),
                    message: no_step_span(log),
                });
            }
            crate::otel::map_spans(spans, file, beside.mapping)
        }
        Reader::Mixed => Err(IngestError::Ambiguous {
            file: file.to_owned(),
            message: convention::mixed_message(&c),
        }),
        Reader::OpenInference => {
            let mut ing = map::ingest_with(file, spans, beside)?;
            let both = match c.both {
                0 => String::new(),
                n => format!(" ({n} of them also carry gen_ai.operation.name)"),
            };
            ing.report.notes.insert(
                0,
                format!(
                    "spans are OpenInference (openinference.span.kind){both}; read as \
                     --from openinference"
                ),
            );
            Ok(ing)
        }
    }
}

/// [`parse_openinference_with`] on spans already read.
pub fn map_openinference(
    spans: Vec<crate::otel::otlp::Span>,
    file: &str,
    beside: Beside<'_>,
) -> Result<Ingested, IngestError> {
    map::ingest_with(file, spans, beside)
}

fn no_step_span(log: &McpLog) -> String {
    format!(
        "--mcp-log {} joins OpenInference tool spans, and this export has no \
         OpenInference step span (openinference.span.kind AGENT/LLM/TOOL/RETRIEVER); \
         read the log alone with --from mcp",
        log.file
    )
}

/// The reader [`read_detected`] would choose for a file.
pub fn reader_for(path: &Path) -> Result<Reader, IngestError> {
    if !convention::mentions(path)? {
        return Ok(Reader::GenAi);
    }
    let text = read(path)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let spans = crate::otel::otlp::parse(text, &path.display().to_string())?;
    Ok(choose(&classify(&spans)))
}

/// The GenAI reader, which takes a mapping and no MCP log.
fn genai(export: Export<'_>, file: &str, beside: Beside<'_>) -> Result<Ingested, IngestError> {
    if let Some(log) = beside.mcp {
        return Err(IngestError::Ambiguous {
            file: file.to_owned(),
            message: no_step_span(log),
        });
    }
    match export {
        Export::File(p) => crate::otel::read_otel_with(p, beside.mapping),
        Export::Text(t) => crate::otel::parse_otel_with(t, file, beside.mapping),
    }
}

fn read(path: &Path) -> Result<String, IngestError> {
    std::fs::read_to_string(path).map_err(|source| IngestError::Io {
        file: path.display().to_string(),
        source,
    })
}

/// Whether a span is OpenInference's (`openinference.span.kind`): how `--from otel` can tell
/// a trace that should be read with this module.
pub fn is_openinference(span: &crate::otel::otlp::Span) -> bool {
    span.attrs.contains_key("openinference.span.kind")
}
