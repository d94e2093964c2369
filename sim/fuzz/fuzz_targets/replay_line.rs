//! Replay lines (`agentsim replay LINE`): the parser never panics; what it accepts prints back
//! to a line that parses the same; and a line naming one of the repository's scenarios
//! replays its trial (any schedule: the replayer must refuse or follow it, never panic).
#![no_main]

mod common;

use agentsim_sim::replay_line::ReplayLine;
use agentsim_sim::runner::run_one;
use agentsim_sim::scenario::{OnMissing, Scenario};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The scenarios a fuzzed line may replay, loaded once.
const SCENARIOS: [&str; 5] = [
    "scenarios/examples/edit-review.toml",
    "scenarios/examples/triage.toml",
    "scenarios/examples/plan-execute.toml",
    "scenarios/twins/a1.toml",
    "scenarios/recordings/edit-review-recorded.toml",
];

fn scenarios() -> &'static BTreeMap<String, Scenario> {
    static ALL: OnceLock<BTreeMap<String, Scenario>> = OnceLock::new();
    ALL.get_or_init(|| {
        let load = |s: &str| Scenario::load(&common::root().join(s)).expect("a scenario");
        SCENARIOS.iter().map(|s| (s.to_string(), load(s))).collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(line) = ReplayLine::parse(text) else {
        return;
    };
    let printed = line.to_string();
    let mut again = ReplayLine::parse(&printed).expect("a printed line parses");
    // `on_missing=error` is the default and is not printed.
    if line.on_missing == Some(OnMissing::Error) {
        again.on_missing = Some(OnMissing::Error);
    }
    assert_eq!(again, line, "round trip through {printed}");
    let Some(sc) = scenarios().get(line.scenario.to_str().unwrap_or("")) else {
        return;
    };
    let _ = run_one(
        sc,
        line.runtime,
        line.seed,
        line.trial,
        &line.schedule,
        line.on_missing,
    );
});
