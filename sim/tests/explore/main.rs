//! The `explore` test binary: `agentsim explore` on the worked examples end to end (verdicts
//! in `--json`, a witness that `replay` reproduces and `detect` confirms, exit codes), and
//! the cross-check that every anomaly set `simulate` samples is among those explored.

#[path = "../util/mod.rs"]
mod util;

mod bounds;
mod crosscheck;
mod liveness;
mod shard_cli;

use agentsim_models::Anomaly;
use agentsim_sim::explore::{explore, ExploreConfig};
use agentsim_sim::scenario::Scenario;
use agentsim_sim::scheduler::SchedulerSpec;
use agentsim_sim::RunConfig;
use serde_json::Value;
use util::{agentsim, root};

fn json(args: &[&str]) -> Value {
    let out = agentsim(args);
    assert!(out.status.success(), "{args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// Each worked example's anomaly is reachable under vanilla; its witness line replays to a
/// history that `detect` finds it in; its fixed twin makes it unreachable.
#[test]
fn worked_examples_end_to_end() {
    let dir = std::env::temp_dir().join(format!("agentsim-explore-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (file, twin, a) in [
        ("stale-review", "stale-review-ssi", "A1"),
        ("retired-tool", "retired-tool-pin", "A2"),
        ("effect-order", "effect-order-saga", "A6"),
    ] {
        let path = format!("scenarios/explore/{file}.toml");
        let v = json(&["explore", &path, "--json"]);
        assert_eq!(v["complete"], true, "{file}");
        assert!(v["schedules"].as_u64().unwrap() >= 1);
        assert!(v["classes"].as_u64().unwrap() >= 1);
        assert_eq!(v["anomalies"][a]["reachable"], true, "{file}");
        let line = v["anomalies"][a]["replay"].as_str().unwrap();
        let h = dir.join(format!("{file}.jsonl"));
        let out = agentsim(&["replay", line, "--history-out", h.to_str().unwrap()]);
        assert!(out.status.success(), "{file}: {out:?}");
        let out = agentsim(&["detect", h.to_str().unwrap(), "--fail-on", a]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{file}: detect finds {a}: {out:?}"
        );
        let out = agentsim(&["shrink", line]);
        assert!(
            out.status.success(),
            "{file}: shrink takes the line: {out:?}"
        );
        let v = json(&[
            "explore",
            &format!("scenarios/explore/{twin}.toml"),
            "--json",
        ]);
        assert_eq!(v["complete"], true, "{twin}");
        assert_eq!(v["anomalies"][a]["reachable"], false, "{twin}");
        assert_eq!(v["anomalies"][a]["replay"], Value::Null, "{twin}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A budget that stops the search: cannot tell, exit 2, partial counts on stdout; and the
/// `--json` of a complete search is the same bytes whatever `--threads`, with snapshots or
/// `--no-snapshots`.
#[test]
fn budgets_exit_2_and_threads_change_no_byte() {
    let out = agentsim(&[
        "explore",
        "scenarios/explore/stale-review-ssi.toml",
        "--max-schedules",
        "1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["complete"], false);
    assert_eq!(v["anomalies"]["A1"]["reachable"], Value::Null);
    let path = "scenarios/examples/edit-review.toml";
    let one = agentsim(&["explore", path, "--json", "--quiet"]);
    let two = agentsim(&["explore", path, "--json", "--quiet", "--threads", "2"]);
    assert!(one.status.success());
    assert_eq!(one.stdout, two.stdout);
    // Resuming paths from snapshots or re-running them from the start: the same search.
    let rerun = agentsim(&["explore", path, "--json", "--quiet", "--no-snapshots"]);
    assert_eq!(one.stdout, rerun.stdout);
}

/// `--stateful` on the worked examples: the verdicts and anomaly sets of `--no-reduction`,
/// the states it kept in the JSON (none where one agent runs alone), the same bytes on two threads; with `--timed` or
/// `--shard` it is refused with exit 2.
#[test]
fn stateful_explore_end_to_end() {
    let verdicts = |v: &Value| {
        let sets: Vec<Value> = v["sets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["anomalies"].clone())
            .collect();
        let reach: Vec<(String, Value)> = v["anomalies"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, a)| (k.clone(), a["reachable"].clone()))
            .collect();
        (
            sets,
            reach,
            v["complete"].clone(),
            v["budget_cut"].as_u64() > Some(0),
        )
    };
    for file in [
        "stale-review",
        "retired-tool",
        "effect-order",
        "effect-order-saga",
    ] {
        let path = format!("scenarios/explore/{file}.toml");
        let plain = json(&["explore", &path, "--no-reduction", "--json"]);
        let stateful = json(&["explore", &path, "--stateful", "--json"]);
        assert_eq!(verdicts(&plain), verdicts(&stateful), "{file}");
        assert_eq!(stateful["reduction"], false, "{file}");
        // States are kept at agent choice points: effect-order's one agent has none.
        assert!(stateful["stateful"]["states"].is_u64(), "{file}");
        assert_eq!(
            plain.get("stateful"),
            None,
            "{file}: stateless output unchanged"
        );
        let two = json(&["explore", &path, "--stateful", "--json", "--threads", "2"]);
        assert_eq!(stateful, two, "{file}");
    }
    // Time is not abstracted away with `--timed`: refused (sharding is not; see
    // `shard_cli::stateful_shards_merge_into_one_runs_verdicts`).
    let args = [
        "explore",
        "scenarios/explore/stale-review.toml",
        "--stateful",
        "--timed",
    ];
    let out = agentsim(&args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
}

/// Every anomaly set that sampling finds (random and PCT, 2,000 trials each) is among the
/// sets exploring reaches, on scenarios whose search finishes in seconds and no step budget
/// cuts (edit-review only under vanilla: its ssi tree is past the default budgets).
#[test]
fn sampled_sets_are_among_explored_sets() {
    let all = ["vanilla", "ssi", "saga"];
    for (file, runtimes) in [
        ("scenarios/examples/edit-review.toml", &all[..1]),
        ("scenarios/explore/stale-review.toml", &all[..]),
        ("scenarios/explore/retired-tool.toml", &all[..]),
        ("scenarios/explore/effect-order.toml", &all[..]),
        ("scenarios/twins/a1.toml", &all[..]),
    ] {
        let sc = Scenario::load(&root().join(file)).unwrap();
        for &rt in runtimes {
            let rt = rt.parse().unwrap();
            let ex = explore(&sc, &ExploreConfig::new(rt)).unwrap();
            assert!(ex.complete, "{file}");
            assert_eq!(ex.budget_cut, 0, "{file}: no path cut");
            for sched in [SchedulerSpec::Random, SchedulerSpec::Pct { depth: 3 }] {
                let mut cfg = RunConfig::new(&sc);
                cfg.runtime = rt;
                cfg.trials = 2000;
                cfg.scheduler = sched;
                for t in agentsim_sim::run(&cfg).unwrap().trials {
                    let set: Vec<Anomaly> = agentsim_sim::metrics::reported()
                        .filter(|&a| t.metrics.has(a))
                        .collect();
                    assert!(
                        ex.sets.contains_key(&set),
                        "{file} under {rt}: sampled {set:?} not explored"
                    );
                }
            }
        }
    }
}
