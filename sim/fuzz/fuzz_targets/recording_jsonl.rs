//! Recording JSONL (`[generator] kind = "recorded"`): the reader never panics on a file
//! written for the edit-review scenario's cells and tools.
#![no_main]

mod common;

use agentsim_sim::generator::recorded::Recording;
use agentsim_sim::scenario::Scenario;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fuzz_target!(|data: &[u8]| {
    static SCENARIO: OnceLock<Scenario> = OnceLock::new();
    let sc = SCENARIO.get_or_init(|| {
        let path = common::root().join("scenarios/examples/edit-review.toml");
        Scenario::load(&path).expect("the edit-review scenario")
    });
    let path = common::write("recording.jsonl", data);
    let mut names = sc.names.clone();
    if let Ok(rec) = Recording::load(&path, &mut names) {
        assert!(rec.len() <= data.len(), "more generations than bytes");
    }
});
