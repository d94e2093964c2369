//! History JSONL (`agentsim detect FILE`): the reader never panics; what it accepts writes
//! back to text that reads and writes again to the same text (the interner may differ: a name
//! that only a dropped `null` read value used is not written); and on it the literal and the
//! fast detectors (SPEC §3, A1–A6 and A4) agree. Inputs are small, so the literal forms stay
//! cheap.
#![no_main]

use agentsim_models::detect::{a4, fast, spec};
use agentsim_models::jsonl::{parse_history, write_history};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(h) = parse_history(text, "fuzz.jsonl") else {
        return;
    };
    let written = write_history(&h);
    let again = parse_history(&written, "written.jsonl").expect("a written history reads back");
    assert_eq!(write_history(&again), written, "round trip");
    assert_eq!(again.records.len(), h.records.len());
    assert_eq!(
        spec::detect(&h),
        fast::detect(&h),
        "spec and fast detectors disagree"
    );
    assert_eq!(
        a4::spec(&h.records),
        a4::fast(&h.records),
        "A4 spec and fast disagree"
    );
});
