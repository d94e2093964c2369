//! `agentsim-ingest`: agentsim histories from what agent systems already write.
//!
//! Four sources, one shape of result ([`Ingested`]: a history and a [`Report`] of what it can
//! decide):
//! * [`otel`]: OTLP/JSON traces (the Collector's file exporter) that follow the OpenTelemetry
//!   GenAI semantic conventions: one operation record per agent step (memory reads before the
//!   generation, memory writes and tool calls after it, tool definitions as the registry).
//! * [`openinference`]: OTLP/JSON traces of OpenInference spans (the OpenAI Agents SDK's and
//!   CrewAI's instrumentors): agents, LLM generations, tool and retriever spans.
//! * [`mcp`]: an MCP client's JSON-RPC log: a registry timeline per tool server, shared by all
//!   its clients, and the tool calls as effects.
//! * [`langgraph`]: a LangGraph SQLite checkpointer database: one record per task (its reads
//!   are the state it ran from, its writes the pending writes it stored), supersteps in order,
//!   a `Send` fan-out (to a ToolNode or a plain node) as one record whose effects complete in
//!   the order they were stored.
//!
//! Beside the reader, [`langgraph::model`] models LangGraph's execution semantics (channels,
//! supersteps, ToolNode), for the deployed reproductions of SPEC §7.
//!
//! All reduce their input to timed [`build::Step`]s; [`build::build`] alone turns times into
//! log positions and derives what the input did not carry (versions, provenance). A history
//! from here is exactly as trustworthy as its report says: read [`Report::verdicts`] before
//! reading a detector's "none".

pub mod build;
pub mod error;
pub mod evidence;
pub mod initial;
pub mod langgraph;
pub mod load;
pub mod mcp;
pub mod openinference;
pub mod otel;
pub mod registry;
pub mod report;
pub mod saved;
pub mod source;
pub mod value;

pub use error::IngestError;
pub use load::{load, with_initial_state, Options};
pub use report::{Judged, Report, RunError, Verdict};
pub use source::{Coverage, Source};

use agentsim_models::History;

/// A history and what can be decided from it.
#[derive(Clone, Debug)]
pub struct Ingested {
    pub history: History,
    pub report: Report,
}
