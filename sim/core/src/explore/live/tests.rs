use super::*;
use std::path::Path;

fn scenario(text: &str) -> Scenario {
    Scenario::parse(Path::new("t.toml"), text).expect("a valid scenario")
}

fn run(sc: &Scenario, runtime: &str, f: Fairness) -> Liveness {
    let mut cfg = LiveConfig::new(Stack::parse(runtime).expect("a runtime"));
    cfg.fairness = f;
    liveness(sc, &cfg).expect("explores")
}

fn retry_server() -> Scenario {
    Scenario::load(Path::new("../../scenarios/liveness/retry-server.toml")).expect("shipped")
}

/// Each agent polls for the other's write before making its own: both park, and neither can
/// step again.
const WAIT_FOR_EACH_OTHER: &str = r#"
name = "wait-for-each-other"
runtime = "vanilla"
cells = ["x", "y"]

[[agents]]
name = "a"
script = [
  { do = "read", cells = ["y"], label = "poll" },
  { do = "write", cells = [] },
  { do = "branch", cell = "y", when = "null", goto = "poll" },
  { do = "read", cells = [] },
  { do = "write", cells = ["x"] },
]

[[agents]]
name = "b"
script = [
  { do = "read", cells = ["x"], label = "poll" },
  { do = "write", cells = [] },
  { do = "branch", cell = "x", when = "null", goto = "poll" },
  { do = "read", cells = [] },
  { do = "write", cells = ["y"] },
]
"#;

/// Two agents that each read and write one cell once: every run is finite.
const FINITE: &str = r#"
name = "finite"
runtime = "vanilla"
cells = ["x"]

[retry]
max = 2

[[agents]]
name = "a"
count = 2
script = [
  { do = "read", cells = ["x"] },
  { do = "generate", latency_ms = { fixed = 10 } },
  { do = "write", cells = ["x"] },
]
"#;

#[test]
fn finite_runs_hold_every_property_under_every_fairness_and_runtime() {
    let sc = scenario(FINITE);
    for rt in ["vanilla", "ssi", "pessimistic"] {
        for f in Fairness::ALL {
            let l = run(&sc, rt, f);
            assert!(l.complete, "{rt} {f:?}");
            assert_eq!(l.deadlock.verdict, LiveVerdict::Holds, "{rt} {f:?}");
            if f == Fairness::None {
                // Without fairness an agent may never be scheduled again mid-operation.
                assert_eq!(l.starvation.verdict, LiveVerdict::Violated, "{rt}");
                assert!(l.starvation.lasso.as_ref().unwrap().cycle.is_empty());
            } else {
                assert_eq!(l.starvation.verdict, LiveVerdict::Holds, "{rt} {f:?}");
                assert_eq!(l.termination.verdict, LiveVerdict::Holds, "{rt} {f:?}");
            }
        }
    }
}

#[test]
fn polls_waiting_for_each_other_deadlock_with_a_replayable_path() {
    let sc = scenario(WAIT_FOR_EACH_OTHER);
    let l = run(&sc, "vanilla", Fairness::Weak);
    assert!(l.complete && l.parked);
    assert_eq!(l.deadlock.verdict, LiveVerdict::Violated);
    let line = l.deadlock.replay.as_ref().expect("a path to the deadlock");
    assert_eq!(line.schedule.stop, Some(line.schedule.events));
    // Deadlocked: the agents never finish (a fair stutter where none is enabled), and
    // nobody is mid-operation there, so nobody starves.
    assert_eq!(l.termination.verdict, LiveVerdict::Violated);
    let lasso = l.termination.lasso.as_ref().unwrap();
    assert!(lasso.cycle.is_empty() && lasso.enabled_sometimes.is_empty());
    assert_eq!(l.starvation.verdict, LiveVerdict::Holds);
}

#[test]
fn the_retrying_client_starves_beside_the_server_under_validation_only() {
    let sc = retry_server();
    for (rt, starves) in [("ssi", true), ("pessimistic", false), ("vanilla", false)] {
        for f in [Fairness::Weak, Fairness::Strong] {
            let l = run(&sc, rt, f);
            assert!(l.complete, "{rt} {f:?}: the graph closes");
            assert_eq!(l.deadlock.verdict, LiveVerdict::Holds, "{rt} {f:?}");
            if !starves {
                assert_eq!(l.starvation.verdict, LiveVerdict::Holds, "{rt} {f:?}");
                // The server serves forever by design: not a termination violation.
                assert_eq!(l.termination.verdict, LiveVerdict::Holds, "{rt} {f:?}");
                continue;
            }
            assert_eq!(l.starvation.verdict, LiveVerdict::Violated, "{rt} {f:?}");
            assert_eq!(l.starvation.agent, Some(0), "the client");
            let lasso = l.starvation.lasso.as_ref().unwrap();
            // A real, fair cycle: both agents step in it (the server's writes abort the
            // client's commits), and the line carries it.
            assert_eq!(lasso.stepping, vec![0, 1]);
            assert!(!lasso.cycle.is_empty());
            assert_eq!(
                lasso.line.schedule.cycle,
                Some(lasso.cycle.len() as u64),
                "one event a step"
            );
            assert_eq!(l.termination.agent, Some(0));
        }
    }
}

#[test]
fn a_cut_graph_is_cannot_tell_never_holds() {
    let sc = retry_server();
    let mut cfg = LiveConfig::new(Stack::parse("pessimistic").unwrap());
    cfg.max_states = 20;
    let l = liveness(&sc, &cfg).unwrap();
    assert!(!l.complete);
    for f in [&l.deadlock, &l.starvation, &l.termination] {
        match &f.verdict {
            LiveVerdict::CannotTell(why) => assert!(why.contains("20 states"), "{why}"),
            // A violation found in the part explored is still one.
            LiveVerdict::Violated => {}
            LiveVerdict::Holds => panic!("holds on a cut graph"),
        }
    }
    // events_max cuts runs too.
    let text = std::fs::read_to_string("../../scenarios/liveness/retry-server.toml").unwrap();
    let text = text.replace("[retry]", "[schedule]\nevents_max = 6\n\n[retry]");
    let sc = scenario(&text);
    let l = run(&sc, "pessimistic", Fairness::Weak);
    assert!(l.cut > 0 && !l.complete);
    assert!(
        matches!(&l.starvation.verdict, LiveVerdict::CannotTell(w) if w.contains("events_max"))
    );
}
