//! Shared by the targets of the trace readers: a reader never panics on text from a system we
//! do not control; what it accepts ingests the same way twice (same history, same report, same
//! written text: no order taken from a hash map or a clock); and the history it yields goes, as
//! `detect` takes it, through the JSON Lines reader (which may refuse it with a message, never
//! a panic) into the detectors.

use agentsim_ingest::{IngestError, Ingested};
use agentsim_jsonl::{parse_history, write_history};
use agentsim_models::detect::spec;
use agentsim_models::detect::witnesses::MAX_WITNESSES_DEFAULT;

/// Reads `data` (when it is UTF-8) with `parse` twice and holds both readings equal, then
/// detects on the written history.
pub fn check(data: &[u8], parse: impl Fn(&str) -> Result<Ingested, IngestError>) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (a, b) = match (parse(text), parse(text)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "the error differs on a rerun");
            return;
        }
        (a, b) => panic!("a rerun disagrees: {a:?} / {b:?}"),
    };
    assert_eq!(a.history, b.history, "the history differs on a rerun");
    assert_eq!(a.report, b.report, "the report differs on a rerun");
    let written = write_history(&a.history);
    assert_eq!(
        written,
        write_history(&b.history),
        "the written history differs"
    );
    assert_eq!(
        a.report.to_text(),
        b.report.to_text(),
        "the report text differs"
    );
    assert_eq!(
        a.report.to_json(),
        b.report.to_json(),
        "the report JSON differs"
    );
    // What `detect --from` does with it: write it, read it back, detect.
    if let Ok(h) = parse_history(&written, "ingested.jsonl") {
        spec::summary(&h, MAX_WITNESSES_DEFAULT, true);
    }
}
