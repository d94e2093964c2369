//! MCP JSON-RPC logs → agentsim history: a **registry timeline per server**, shared by every
//! client of that server.
//!
//! The input is JSON Lines, one message a client sent or received per line (the format the
//! corpus's logging client writes, `integrations/python/agentsim_corpus/mcp_client.py`):
//!
//! ```text
//! {"t": <ns>, "client": "planner", "server": "<url or name>", "session": "<id>" | null,
//!  "dir": "send" | "recv", "message": {<the JSON-RPC 2.0 message>}}
//! ```
//!
//! Messages are taken in `t` order (ties in line order). What is read (names from the MCP
//! specification, protocol 2025-06-18):
//!
//! * an `initialize` response's `capabilities.tools.listChanged`: whether the server promises
//!   to announce every change of its tool list;
//! * a `tools/list` response (pages joined through `nextCursor`): the server's list at that
//!   instant, and the client's view from then on; a tool's definition (its canonical JSON) is
//!   its signature, and a definition seen changed is a new version (SPEC §1 extension 4);
//! * `notifications/tools/list_changed` received by any client: the server's list changed; the
//!   receiving client's view is stale until it lists again;
//! * `tools/call` requests and their responses: the effects. The calls a client sends while
//!   another of its calls is unanswered form one step (one plan's batch): `io` = request order,
//!   `co` = response order, the first call's tool is the planned tool. A call answered with an
//!   error (`isError`, or a JSON-RPC error) is an effect that did not land: it stays the plan,
//!   it is not an effect.
//!
//! The registry of a step: `read_registry` = the calling client's view when it sent the first
//! call; `write_registry` = the server's list at that instant, from the timeline of every
//! client's messages: the latest list after the latest `list_changed` before the call, else the
//! first list after the call when no `list_changed` comes between. So a tool withdrawn through
//! one client while another client's plan is in flight is an A2 of the second client. A call
//! sent from a view that a received `list_changed` had invalidated is reported as a stale-list
//! call (counted and noted) whether or not its tool survived.
//!
//! [`McpLog`] is the same replay kept for a join with an OpenInference trace (its tool spans
//! matched to these calls; `crate::openinference`).
//!
//! What a log cannot show, the report says: there are no memory operations (A1), no
//! provenance (A3); the plan's generation is not in the log (the view at the first call stands
//! for what the plan was made from); a server that does not declare `tools.listChanged`, or a
//! call after a `list_changed` that no later `tools/list` resolves, leaves A2 untold.

mod join;
mod log;
mod map;
mod timeline;

pub use join::{LoggedCall, McpLog};
pub use log::{parse_log, Dir, Line};

use crate::error::IngestError;
use crate::Ingested;
use std::path::Path;

/// Ingests an MCP JSON-RPC log file.
pub fn read_mcp_log(path: impl AsRef<Path>) -> Result<Ingested, IngestError> {
    let (text, file) = read_text(path.as_ref())?;
    parse_mcp_log(&text, &file)
}

/// A log file's text and its name for messages.
fn read_text(path: &Path) -> Result<(String, String), IngestError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| IngestError::Io {
        file: file.clone(),
        source,
    })?;
    Ok((text, file))
}

/// Ingests MCP JSON-RPC log text; `file` names it in errors and in the report.
pub fn parse_mcp_log(text: &str, file: &str) -> Result<Ingested, IngestError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = parse_log(text, file)?;
    Ok(map::ingest(file, &lines))
}
