//! What the trace tests share: where their traces are, reading one, and a report's verdict.
#![allow(dead_code)] // each test binary uses a different part

use agentsim_ingest::otel::read_otel;
use agentsim_ingest::Ingested;
use agentsim_models::Anomaly;
use std::path::PathBuf;

/// The corpus runs' exports (integrations/python).
pub const DATA: &str = "tests/data";
/// The example traces and gap fixtures (`make_traces.py`).
pub const EXAMPLES: &str = "../../scenarios/traces/otel";

/// `name` in `dir` (relative to this crate).
pub fn path(dir: &str, name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(dir)
        .join(name)
}

/// The GenAI reader's ingestion of `name` in `dir`.
pub fn ingest(dir: &str, name: &str) -> Ingested {
    read_otel(path(dir, name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The status of the reader's verdict on `a` (`missing` if it gave none).
pub fn status(i: &Ingested, a: Anomaly) -> &'static str {
    i.report.verdict(a).map(|v| v.status()).unwrap_or("missing")
}

/// The basis or reason of the reader's verdict on `a`.
pub fn why(i: &Ingested, a: Anomaly) -> String {
    i.report.verdict(a).unwrap().why().to_owned()
}
