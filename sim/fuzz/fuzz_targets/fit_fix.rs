//! `agentsim fit` and `agentsim fix` on a JSON Lines history: whatever history the reader
//! accepts (`detect` takes it), fitting a scenario to it, finding the trial that reproduces
//! it and replaying that run under a stack with the cascade never panic; a fitted scenario
//! that does not load, or a found trial that does not replay, is a bug and fails here.
//! Histories are capped at 12 records so the reproducing search (up to 10,000 short trials)
//! stays within the time limit.
#![no_main]

use agentsim::experiments::fit_fix::{changes, contains, observe};
use agentsim_jsonl::parse_history;
use agentsim_models::runtime::Stack;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

/// The most records a fuzzed history may hold.
const RECORDS_MAX: usize = 12;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(h) = parse_history(text, "fuzz.jsonl") else {
        return;
    };
    if h.records.is_empty() || h.records.len() > RECORDS_MAX || h.validate().is_err() {
        return;
    }
    let file = Path::new("fuzz.jsonl");
    let obs = observe::observe(h, None, None, file, "fuzz.jsonl")
        .expect("a non-empty history is observed");
    let (fitted, sc) = match observe::fitted(&obs, "fuzz".to_owned(), Path::new("fuzz.toml"), 20, 1)
    {
        Ok(x) => x,
        Err(e) => {
            let e = e.to_string();
            assert!(!e.contains("a bug"), "{e}");
            return;
        }
    };
    let found = match contains::find(&sc, &fitted.expected) {
        Ok(f) => f,
        Err(e) => {
            let e = e.to_string();
            assert!(!e.contains("a bug"), "{e}");
            return;
        }
    };
    if let Some(o) = found {
        let causal = Stack::parse("causal").expect("a named runtime");
        let _ = changes::under(&sc, &o.line, causal);
    }
});
