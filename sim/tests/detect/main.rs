//! The `detect` test binary: `agentsim detect` (batch, `--stream`, `--threads`, replica
//! metadata), `ingest` and `cpl eval` end to end, one module per subject.

#[path = "../util/mod.rs"]
mod util;

mod cpl_cli;
mod cpl_hostile_cli;
mod detect_a4;
mod detect_cli;
mod detect_stream;
mod detect_threads;
mod detect_verdicts;
mod escape_cli;
mod ingest_cli;
mod ingest_mcp_cli;
mod openinference_cli;
