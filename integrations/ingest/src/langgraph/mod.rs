//! LangGraph SQLite checkpointer databases (`langgraph-checkpoint-sqlite`) → agentsim history.
//!
//! A LangGraph run is a chain of checkpoints, one per superstep; the `writes` rows attached to
//! a checkpoint are the pending writes of the tasks that ran *from* it, and the next checkpoint
//! holds the channel values after they were applied. We map (the model of SPEC §7 in
//! [`model`]):
//!
//! * a task (a node's run in a superstep) → one operation record, `agent` = the node;
//! * the channel values of the checkpoint it ran from → `read_set` / `read_values`: every
//!   state key (LangGraph hands a node the whole state);
//! * its pending writes to state keys → `write_set`; the value is the key's value in the next
//!   checkpoint for the task that applied last (task order), else the value written;
//! * superstep order, then task order (`task_path`, as `apply_writes` sorts) → log order,
//!   `read_time` = the records before the superstep;
//! * the `ToolMessage`s a task wrote → effects `tool:<name>:<tool_call_id>`;
//! * a `Send` fan-out (the push tasks of one superstep addressed to one node, a ToolNode or a
//!   plain node) → one record, `io` = Send order (task path), `co` = the order their writes
//!   were stored (rowid); see `fanout.rs`;
//! * the writes of a superstep no checkpoint followed → records with `aborted = true`; a key
//!   two of them wrote is reported as LangGraph's `InvalidUpdateError`;
//! * the versions of the checkpoint a task read → `preds` (producers of what it read, derived
//!   by the builder).
//!
//! Only the root namespace is read (subgraph checkpoints are counted and skipped), and only
//! the latest branch of a forked thread (the chain of parents from the newest checkpoint).
//! What this cannot decide is in the [`Report`](crate::Report): which keys a node *used*
//! (reads are an upper bound), tool registries (A2), the completion order of tool calls made
//! inside one task, and of a `Send` task that stored no writes.

mod db;
pub mod decode;
mod fanout;
mod map;
pub mod model;

use crate::error::IngestError;
use crate::Ingested;
use std::path::Path;

/// Ingests one thread of a checkpointer database: `thread`, or the only one it holds.
pub fn read_langgraph(
    path: impl AsRef<Path>,
    thread: Option<&str>,
) -> Result<Ingested, IngestError> {
    let path = path.as_ref();
    let rows = db::read(path, thread)?;
    map::ingest(&path.display().to_string(), rows)
}
