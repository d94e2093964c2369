//! `agentsim-models`: the formal core of agentsim.
//!
//! Operation records and histories (SPEC §2), the anomaly detectors in spec and fast form
//! (SPEC §3) named by one catalogue ([`Anomaly`]), the lattice (SPEC §4), the runtimes (SPEC §5) and Causal Past Logic (CPL.md).
//! Everything here is deterministic and free of I/O except the explicit JSON Lines readers.

pub mod anomaly;
pub mod cpl;
pub mod detect;
pub mod history;
pub mod jsonl;
pub mod langgraph;
pub mod lattice;
pub mod mix;
pub mod monitor;
pub mod names;
pub mod record;
pub mod replica;
pub mod runtime;
pub mod value_key;

pub use anomaly::Anomaly;
pub use detect::Report;
pub use history::{History, HistoryError};
pub use names::{Agent, Cell, Names, Replica, Tool, Value};
pub use record::{OpRecord, ReadMeta, Registry, ToolEntry, ValueMap};
pub use value_key::ValueKey;
