//! `agentsim-models`: the formal core of agentsim.
//!
//! Operation records and histories (SPEC §2), the anomaly detectors in spec and fast form
//! (SPEC §3) named by one catalogue ([`Anomaly`]), the lattice (SPEC §4), the runtimes and
//! their mechanisms (SPEC §5), the replicated store (SPEC §6) and the online monitors.
//! Everything here is deterministic and free of I/O.
//!
//! Built on this crate, and not visible from it: the JSON Lines history reader and writer
//! (`agentsim-jsonl`, `models/jsonl`) and the LangGraph model (`agentsim-ingest`,
//! `agentsim_ingest::langgraph::model`). Causal Past Logic (CPL.md) stands apart, depending
//! on nothing here (`agentsim-cpl`, `models/cpl`).

pub mod anomaly;
pub mod detect;
pub mod fair;
pub mod history;
pub mod lattice;
pub mod mix;
pub mod monitor;
pub mod names;
pub mod record;
pub mod replica;
pub mod runtime;
pub mod text;
pub mod value_key;
pub mod verdict;

pub use anomaly::Anomaly;
pub use detect::Report;
pub use history::{History, HistoryError};
pub use names::{Agent, Cell, Names, Replica, Tool, Value};
pub use record::{OpRecord, ReadMeta, Registry, ToolEntry, ValueMap};
pub use text::escape_text;
pub use value_key::ValueKey;
pub use verdict::{Reason, Verdict};
