//! History JSONL (`agentsim detect FILE`): the reader never panics; what it accepts writes
//! back to text that reads and writes again to the same text (the interner may differ: a name
//! that only a dropped `null` read value used is not written); and on it the literal and the
//! fast detectors (SPEC §3, A1–A6 and A4) agree. Inputs are small, so the literal forms stay
//! cheap.
#![no_main]

use agentsim_models::detect::{a4, fast, spec};
use agentsim_jsonl::{parse_block, parse_history, write_history, Merger, Parsed};
use agentsim_models::{Cell, OpRecord, Value, ValueKey};
use libfuzzer_sys::fuzz_target;

/// A record's values by name, field by field (cells by id: both readers number them alike).
fn named(r: &OpRecord, name: impl Fn(Value) -> Option<String>) -> Vec<(Cell, Option<String>)> {
    let maps = r
        .read_values
        .entries()
        .iter()
        .chain(r.write_values.entries());
    maps.chain(r.io.iter())
        .chain(r.co.iter())
        .map(|&(c, v)| (c, name(v)))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let read = parse_history(text, "fuzz.jsonl");
    // The literal merger (what `detect --stream` and `detect FILE` read through: value ids
    // block-local, standing for keys) accepts what the reader accepts, with the same error,
    // and names every value as the reader does.
    let (mut parsed, mut merger) = (Parsed::literal(), Merger::literal("fuzz.jsonl"));
    parse_block(data, &mut parsed);
    let literal = merger.merge(data, &mut parsed);
    match (&read, &literal) {
        (Ok(h), Ok(())) => {
            assert_eq!(
                parsed.records().len(),
                h.records.len(),
                "literal record count"
            );
            let keys = &parsed.keys;
            for ((r, _), want) in parsed.records().iter().zip(&h.records) {
                let got = named(r, |v| merger.names.key_name(ValueKey::listed(keys, v.0)));
                assert_eq!(got, named(want, |v| h.names.value_name(v)), "literal names");
            }
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "literal error"),
        _ => panic!("the literal merger and the reader disagree: {read:?} / {literal:?}"),
    }
    let Ok(h) = read else {
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
