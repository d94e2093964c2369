//! Scenario TOML (`agentsim simulate FILE` and every command that takes a scenario): the
//! resolver never panics, including the `[cpl]` guards and the recordings a file names (the
//! scratch directory holds `code_review.cpl` and `edit-review.jsonl` beside the input), and
//! the sizes the engine derives from an accepted file do not overflow (the targets build
//! with overflow checks).
#![no_main]

mod common;

use agentsim_sim::scenario::Scenario;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = common::scratch("scenario.toml");
    if let Ok(sc) = Scenario::parse(&path, text) {
        std::hint::black_box((sc.ops_hint(), sc.steps_hint()));
    }
});
