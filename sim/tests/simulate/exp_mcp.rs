//! The MCP stale-tool-list twin pinned: MCP clients that ignore `list_changed` plan and call
//! the withdrawn tool in every trial, clients that re-list and check before the call never do,
//! re-listing alone leaves the calls planned while the change was in flight; the stale
//! client's witness replays to A2 through the library and the binary; the key parses strictly.
//! A pass covers these seeds and timings, not every schedule.

use agentsim_models::detect::a2::{self, A2Reason};
use agentsim_models::runtime::{Discipline, RuntimeKind, Stack};
use agentsim_models::Anomaly;
use agentsim_sim::replay_line::ReplayLine;
use agentsim_sim::runner::{run, run_one, RunConfig, RunResult};
use agentsim_sim::Scenario;
use std::path::Path;

use crate::util::{agentsim, root};

const STALE: &str = "scenarios/twins/a2-mcp-stale.toml";
const REFRESH: &str = "scenarios/twins/a2-mcp-refresh.toml";

/// The stale file with the client's policy replaced by `policy`.
fn with_policy(policy: &str) -> Scenario {
    let text = std::fs::read_to_string(root().join(STALE)).expect("twin");
    let text = text.replace(
        "mcp_client = \"stale\"",
        &format!("mcp_client = \"{policy}\""),
    );
    Scenario::parse(Path::new(STALE), &text).expect("parses")
}

fn run_under(sc: &Scenario, runtime: Option<RuntimeKind>, keep: bool) -> RunResult {
    let mut cfg = RunConfig::new(sc);
    if let Some(r) = runtime {
        cfg.runtime = Stack::from(r);
    }
    cfg.threads = 2;
    cfg.keep_histories = keep;
    run(&cfg).expect("runs")
}

fn a2(r: &RunResult) -> (u64, u64) {
    let p = r.aggregate.anomalies[&Anomaly::A2];
    (p.k, p.n)
}

fn sum(r: &RunResult, f: impl Fn(&agentsim_sim::metrics::TrialMetrics) -> u64) -> u64 {
    r.trials.iter().map(|t| f(&t.metrics)).sum()
}

#[test]
fn stale_clients_always_call_the_withdrawn_tool_refreshing_ones_never() {
    let stale = run_under(&with_policy("stale"), None, false);
    assert_eq!(a2(&stale), (1000, 1000));
    assert_eq!(sum(&stale, |m| m.retries), 0);
    let fixed = Scenario::load(&root().join(REFRESH)).expect("fixed twin");
    let fixed = run_under(&fixed, None, false);
    assert_eq!(a2(&fixed), (0, 1000));
    // Every trial still answers (2 turns × 2 clients); the refusals are the calls planned
    // while the withdrawal was in flight, regenerated once each, their tokens wasted.
    assert_eq!(sum(&fixed, |m| m.commits), 4000);
    assert_eq!(sum(&fixed, |m| m.retries), 980);
    assert_eq!(sum(&fixed, |m| m.tokens_wasted), 980 * 500);
    // Re-listing without the check at dispatch misses exactly those in-flight plans.
    let relist = run_under(&with_policy("relist"), None, false);
    assert_eq!(a2(&relist), (490, 1000));
}

#[test]
fn a_runtime_stops_the_stale_client_only_at_a_cost() {
    let sc = with_policy("stale");
    let pin = run_under(&sc, Some(RuntimeKind::Registry(Discipline::Pin)), false);
    assert_eq!(a2(&pin), (0, 1000));
    assert_eq!(sum(&pin, |m| m.commits), 4000);
    // validate-tool aborts the call and the client regenerates it from the same stale list
    // until the retries (3) run out: turn 2 never answers.
    let validate = run_under(
        &sc,
        Some(RuntimeKind::Registry(Discipline::Validate)),
        false,
    );
    assert_eq!(a2(&validate), (0, 1000));
    assert_eq!(sum(&validate, |m| m.commits), 2000);
    assert_eq!(sum(&validate, |m| m.aborts), 8000);
}

#[test]
fn the_stale_clients_witness_replays_to_a2() {
    let sc = Scenario::load(&root().join(STALE)).expect("twin");
    let mut cfg = RunConfig::new(&sc);
    cfg.trials = 20;
    cfg.keep_histories = true;
    let res = run(&cfg).expect("runs");
    for t in &res.trials {
        let line = ReplayLine {
            scenario: STALE.into(),
            runtime: cfg.runtime,
            seed: cfg.seed,
            trial: t.metrics.trial,
            schedule: t.metrics.schedule.parse().expect("schedule"),
            on_missing: None,
            repeat_max: None,
        };
        let line = ReplayLine::parse(&line.command()).expect("parses");
        let again = run_one(
            &sc,
            line.runtime,
            line.seed,
            line.trial,
            &line.schedule,
            None,
        )
        .expect("replays");
        assert_eq!(Some(&again.history), t.history.as_ref());
        assert!(again.metrics.has(Anomaly::A2), "trial {}", line.trial);
        // The witnesses: each client's turn-2 call of `lookup`, planned from the cached list
        // that still had it, after the server removed it.
        let w = a2::spec(&again.history.records);
        assert_eq!(w.len(), 2, "trial {}", line.trial);
        for x in &w {
            assert_eq!(sc.names.tool_name(x.tool), "lookup");
            assert_eq!(x.reason, A2Reason::Removed);
            let r = &again.history.records[x.record];
            assert!(r.read_registry.contains(x.tool));
            assert!(!r.write_registry.contains(x.tool));
        }
    }
    let first = &res.trials[0].metrics;
    let line = format!(
        "scenario={STALE} runtime=vanilla seed=1 trial={} schedule={}",
        first.trial, first.schedule
    );
    let out = agentsim(&["replay", &line]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("anomalies: A2;"), "{stdout}");
    assert!(stdout.contains("registry Remove"), "{stdout}");
}

#[test]
fn the_key_is_parsed_strictly() {
    let text = std::fs::read_to_string(root().join(STALE)).expect("twin");
    let line = text
        .lines()
        .position(|l| l.starts_with("mcp_client"))
        .expect("key")
        + 1;
    let bad = text.replace("mcp_client = \"stale\"", "mcp_client = \"ignore\"");
    let e = Scenario::parse(Path::new("s.toml"), &bad)
        .expect_err("not a policy")
        .to_string();
    assert!(e.starts_with(&format!("s.toml:{line}:")), "{e}");
    assert!(
        e.contains("`mcp_client`") && e.contains("`ignore` is not stale, relist or refresh"),
        "{e}"
    );
    let none = text.replace("tools = [\"search\", \"lookup\"]", "tools = []");
    let none = none
        .replace(", tool = \"search\"", "")
        .replace(", tool = \"lookup\"", "");
    let none = none.replace(
        "\n  { do = \"registry\", change = \"remove\", tool = \"lookup\" },",
        "",
    );
    let e = Scenario::parse(Path::new("s.toml"), &none)
        .expect_err("nothing to list")
        .to_string();
    assert!(e.starts_with(&format!("s.toml:{line}:")), "{e}");
    assert!(e.contains("an MCP client needs tools to list"), "{e}");
    // The binary exits 2 on it.
    let dir = std::env::temp_dir().join(format!("agentsim-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let f = dir.join("bad.toml");
    std::fs::write(&f, &bad).expect("write");
    let out = agentsim(&["simulate", f.to_str().expect("utf-8"), "--trials", "1"]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}
