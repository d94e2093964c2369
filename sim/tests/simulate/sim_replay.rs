//! Replay and shrinking: the replay line of a trial reproduces its
//! history exactly, through the library and through the binary; shrinking keeps the anomaly
//! and removes every scheduling deviation the anomaly does not need.

use agentsim_models::Anomaly;
use agentsim_sim::replay_line::ReplayLine;
use agentsim_sim::runner::{run, run_one, RunConfig};
use agentsim_sim::scheduler::SchedulerSpec;
use agentsim_sim::shrink::{shrink, ShrinkInput, RUNS_MAX};
use agentsim_sim::Scenario;
use std::path::Path;

use crate::util::{agentsim, root};

/// A reader that starts after the writer committed: in time order there is no A1; only a
/// scheduling deviation inside the 500 ms window (the reader's read run before the writer's
/// commit) makes the reader generate from a stale `doc`.
const RACE: &str = r#"
name = "race"
runtime = "vanilla"
trials = 200
cells = ["doc", "out"]
[schedule]
window_ms = 500
[[agents]]
name = "writer"
script = [
  { do = "read", cells = [] },
  { do = "generate", latency_ms = { fixed = 100 } },
  { do = "write", cells = ["doc"] },
]
[[agents]]
name = "reader"
start_ms = { fixed = 200 }
script = [
  { do = "read", cells = ["doc"] },
  { do = "generate", latency_ms = { fixed = 1000 } },
  { do = "write", cells = ["out"] },
  { do = "wait", latency_ms = { uniform = [0, 300] } },
  { do = "wait", latency_ms = { uniform = [0, 300] } },
]
"#;

fn race() -> Scenario {
    Scenario::parse(Path::new("race.toml"), RACE).unwrap()
}

#[test]
fn replay_reproduces_every_anomalous_history() {
    for (file, sched) in [
        (
            "scenarios/examples/plan-execute.toml",
            SchedulerSpec::Random,
        ),
        (
            "scenarios/examples/triage.toml",
            SchedulerSpec::Pct { depth: 2 },
        ),
    ] {
        let sc = Scenario::load(&root().join(file)).unwrap();
        let mut cfg = RunConfig::new(&sc);
        cfg.trials = 60;
        cfg.scheduler = sched;
        cfg.keep_histories = true;
        let res = run(&cfg).unwrap();
        let mut replayed = 0;
        for t in res
            .trials
            .iter()
            .filter(|t| !t.metrics.anomalies.is_empty())
        {
            let line = ReplayLine {
                scenario: file.into(),
                runtime: cfg.runtime,
                seed: cfg.seed,
                trial: t.metrics.trial,
                schedule: t.metrics.schedule.parse().unwrap(),
                on_missing: None,
                repeat_max: None,
            };
            let line = ReplayLine::parse(&line.command()).unwrap();
            let again = run_one(
                &sc,
                cfg.runtime,
                line.seed,
                line.trial,
                &line.schedule,
                None,
            );
            let again = again.unwrap();
            assert_eq!(
                Some(&again.history),
                t.history.as_ref(),
                "{file} trial {}",
                line.trial
            );
            assert_eq!(again.metrics, t.metrics);
            replayed += 1;
        }
        assert!(replayed > 0, "{file}: some trial is anomalous");
    }
}

#[test]
fn the_race_needs_a_deviation_and_shrinks_to_exactly_one() {
    let sc = race();
    let mut cfg = RunConfig::new(&sc);
    cfg.scheduler = SchedulerSpec::Random;
    let res = run(&cfg).unwrap();
    let a1 = &res.aggregate.anomalies[&Anomaly::A1];
    assert!(
        a1.k > 0 && a1.k < a1.n,
        "the random scheduler sometimes finds it: {a1:?}"
    );
    for t in &res.trials {
        let deviated = !t.metrics.schedule.ends_with(":-");
        assert!(
            deviated || t.metrics.anomalies.is_empty(),
            "time order has no A1"
        );
    }
    let bad = res
        .trials
        .iter()
        .find(|t| !t.metrics.anomalies.is_empty())
        .unwrap();
    let input = ShrinkInput {
        scenario: &sc,
        runtime: cfg.runtime,
        seed: cfg.seed,
        trial: bad.metrics.trial,
        schedule: bad.metrics.schedule.parse().unwrap(),
        on_missing: None,
        target: Some(Anomaly::A1),
        runs_max: RUNS_MAX,
    };
    let out = shrink(&input).unwrap();
    assert_eq!(out.schedule.deviations(), 1, "{}", out.schedule);
    assert!(out.shrunk.metrics.has(Anomaly::A1));
    assert!(out.shrunk.metrics.events <= out.original.metrics.events);
    // All four events of each operation are needed (read, generate, issue, commit); the
    // reader's two trailing waits are not.
    assert_eq!(out.original.metrics.events, 10);
    assert_eq!(out.shrunk.metrics.events, 8, "{}", out.schedule);
    assert!(!out.exhausted);
}

#[test]
fn pct_finds_the_race() {
    let sc = race();
    let mut cfg = RunConfig::new(&sc);
    cfg.scheduler = SchedulerSpec::Pct { depth: 2 };
    let res = run(&cfg).unwrap();
    assert!(res.aggregate.anomalies[&Anomaly::A1].k > 0);
}

#[test]
fn the_printed_replay_line_replays_the_written_history() {
    let dir = std::env::temp_dir().join(format!("agentsim-replay-{}", std::process::id()));
    let dir_s = dir.to_str().unwrap();
    let out = agentsim(&[
        "simulate",
        "scenarios/examples/edit-review.toml",
        "--trials",
        "5",
        "--trace-out",
        dir_s,
    ]);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("replay: "))
        .expect("a replay line");
    let parsed = ReplayLine::parse(line).unwrap();
    let hist = dir.join("replayed.jsonl");
    let arg = line
        .trim_start_matches("agentsim replay ")
        .trim_matches('\'');
    let out = agentsim(&["replay", arg, "--history-out", hist.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let original = dir.join(format!("trial-{:05}.jsonl", parsed.trial));
    assert_eq!(
        std::fs::read(&hist).unwrap(),
        std::fs::read(&original).unwrap()
    );
    // The replay file written by --trace-out replays too, and `detect` reads the history.
    let out = agentsim(&["replay", dir.join("replay.txt").to_str().unwrap()]);
    assert!(out.status.success());
    let h = agentsim_jsonl::read_history(&original).unwrap();
    let report = agentsim_models::detect::fast::detect(&h);
    assert!(
        report.has(agentsim_models::Anomaly::A1),
        "edit-review under vanilla is stale"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A replay line with a key given twice names the key and exits 2, rather than replaying
/// the last value and reporting a divergence that blames the scenario file or the build.
#[test]
fn a_duplicated_replay_key_is_named_not_blamed_on_the_build() {
    for dup in ["seed=3", "trial=0", "runtime=vanilla", "schedule=S1:0:-"] {
        let line = format!(
            "scenario=scenarios/examples/edit-review.toml runtime=vanilla seed=1 trial=0 \
             schedule=S1:0:- {dup}"
        );
        let out = agentsim(&["replay", &line]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        let key = dup.split('=').next().unwrap();
        assert!(err.contains(&format!("`{key}=` appears twice")), "{err}");
        assert!(!err.contains("diverged"), "{err}");
    }
}
