//! The engine acts on runtime decisions: drops cost no tokens, aborts waste
//! the operation's tokens and are retried within the bound, retractions abort records, and
//! effect completion order reaches `co` only where the runtime's externalization allows.
//! Numbers are pinned for seed 1 of the shipped edit-review scenario.

use agentsim_models::runtime::Stack;
use agentsim_models::Anomaly;
use agentsim_sim::runner::{run, run_one, RunConfig};
use agentsim_sim::schedule::Schedule;
use agentsim_sim::Scenario;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn edit_review() -> Scenario {
    Scenario::load(&root().join("scenarios/examples/edit-review.toml")).unwrap()
}

fn with(sc: &Scenario, runtime: &str, trials: u64) -> agentsim_sim::RunResult {
    let mut cfg = RunConfig::new(sc);
    cfg.runtime = Stack::parse(runtime).unwrap();
    cfg.trials = trials;
    run(&cfg).unwrap()
}

#[test]
fn edit_review_is_stale_in_every_vanilla_session() {
    let res = with(&edit_review(), "vanilla", 1000);
    let a1 = &res.aggregate.anomalies[&Anomaly::A1];
    assert_eq!((a1.k, a1.n), (1000, 1000));
    assert_eq!(res.aggregate.tokens_wasted.max, 0);
    assert_eq!(
        res.aggregate.commits.mean, 9.0,
        "6 edits and 3 reviews commit"
    );
}

#[test]
fn pessimistic_drops_cost_nothing_and_prevent_a1() {
    let sc = edit_review();
    let res = with(&sc, "pessimistic", 200);
    assert_eq!(res.aggregate.anomalies[&Anomaly::A1].k, 0);
    assert!(res.aggregate.drops.mean > 0.0);
    for t in &res.trials {
        assert!(t.metrics.retries <= t.metrics.drops + t.metrics.aborts);
        // Every generation belongs to an operation that began; drops happen before one.
        assert_eq!(
            t.metrics.generations, t.metrics.records,
            "trial {}",
            t.metrics.trial
        );
    }
}

#[test]
fn ssi_aborts_waste_tokens_and_retries_stay_bounded() {
    let sc = edit_review();
    let res = with(&sc, "ssi", 200);
    assert_eq!(res.aggregate.anomalies[&Anomaly::A1].k, 0);
    assert!(res.aggregate.aborts.mean > 0.0);
    assert!(res.aggregate.tokens_wasted.mean > 0.0);
    for t in &res.trials {
        assert!(t.metrics.tokens_wasted < t.metrics.tokens_total);
        // 9 operations, each retried at most `retry.max` = 3 times.
        assert!(t.metrics.retries <= 9 * 3);
        assert_eq!(t.metrics.commits + t.metrics.aborts, t.metrics.records);
    }
}

const EFFECTS: &str = r#"
name = "effects"
runtime = "vanilla"
trials = 50
cells = ["a", "b", "c", "d"]
[[agents]]
name = "op"
script = [
  { do = "read", cells = [] },
  { do = "write", cells = ["a", "b", "c", "d"], effect_ms = { uniform = [10, 200] } },
]
"#;

#[test]
fn effects_reorder_unless_the_runtime_sequences_them() {
    let sc = Scenario::parse(Path::new("effects.toml"), EFFECTS).unwrap();
    let vanilla = with(&sc, "vanilla", 200);
    let a6 = &vanilla.aggregate.anomalies[&Anomaly::A6];
    // 4 effects with distinct random latencies are in issue order with probability 1/24.
    assert!(a6.k > 170 && a6.k < 200, "{a6:?}");
    let saga = with(&sc, "saga", 200);
    assert_eq!(saga.aggregate.anomalies[&Anomaly::A6].k, 0);
}

const RETRACT: &str = r#"
name = "retract"
runtime = "vanilla"
provenance = true
cells = ["plan", "result"]
[tokens]
prompt_base = 10
completion = { fixed = 5 }
[[agents]]
name = "planner"
script = [
  { do = "read", cells = [] },
  { do = "generate", latency_ms = { fixed = 100 } },
  { do = "write", cells = ["plan"] },
]
[[agents]]
name = "executor"
start_ms = { fixed = 200 }
script = [
  { do = "read", cells = ["plan"] },
  { do = "generate", latency_ms = { fixed = 100 } },
  { do = "write", cells = ["result"] },
]
[[agents]]
name = "supervisor"
start_ms = { fixed = 1000 }
script = [{ do = "retract", agent = "planner" }]
"#;

#[test]
fn retraction_leaves_a3_unless_the_runtime_cascades() {
    let sc = Scenario::parse(Path::new("retract.toml"), RETRACT).unwrap();
    let rt = |n| Stack::parse(n).unwrap();
    let s = Schedule::default();
    let van = run_one(&sc, rt("vanilla"), 0, 0, &s, None).unwrap();
    assert_eq!(van.metrics.anomalies, vec![Anomaly::A3]);
    assert_eq!((van.metrics.retractions, van.metrics.retracted), (1, 1));
    let nc = run_one(&sc, rt("causal-no-cascade"), 0, 0, &s, None).unwrap();
    assert_eq!(nc.metrics.anomalies, vec![Anomaly::A3]);
    let causal = run_one(&sc, rt("causal"), 0, 0, &s, None).unwrap();
    assert!(causal.metrics.anomalies.is_empty());
    assert_eq!(
        causal.metrics.retracted, 2,
        "the executor's record is cascaded"
    );
    assert_eq!(causal.metrics.tokens_total, 30, "two generations of 10 + 5");
    assert_eq!(causal.metrics.tokens_wasted, 30, "both records end aborted");
    assert_eq!(
        van.metrics.tokens_wasted, 15,
        "only the retracted plan is wasted"
    );
}
