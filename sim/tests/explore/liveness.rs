//! `agentsim explore --liveness` end to end: the worked example's verdicts in `--json`, its
//! lasso replayed by `agentsim replay`, the safety verdicts unchanged by the flag, and the
//! scenario keys it reads (`serves`, `[retry] max = "unbounded"`) parsed strictly.

use crate::util::{agentsim, root};
use agentsim_sim::scenario::Scenario;
use serde_json::Value;
use std::path::Path;

const EXAMPLE: &str = "scenarios/liveness/retry-server.toml";

fn explore_json(args: &[&str]) -> Value {
    let mut all = vec!["explore", EXAMPLE, "--json", "--allow-cannot-tell"];
    all.extend_from_slice(args);
    let out = agentsim(&all);
    assert!(out.status.success(), "{all:?}: {out:?}");
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn the_client_starves_under_ssi_and_its_lasso_replays() {
    let v = explore_json(&["--liveness", "--runtime", "ssi"]);
    let l = &v["liveness"];
    assert_eq!(l["fairness"], "weak");
    assert_eq!(l["deadlock"]["verdict"], "holds");
    assert_eq!(l["deadlock"]["replay"], Value::Null);
    for p in ["starvation", "termination"] {
        assert_eq!(l[p]["verdict"], "violated", "{p}");
        assert_eq!(l[p]["agent"], "client", "{p}: the server serves by design");
        assert_eq!(l[p]["reason"], Value::Null);
        let lasso = &l[p]["lasso"];
        assert!(lasso["cycle"].as_u64().unwrap() >= 1, "{p}: a real cycle");
        let line = lasso["replay"].as_str().unwrap();
        assert!(line.contains(":cycle="), "{line}");
        let out = agentsim(&["replay", line]);
        assert!(out.status.success(), "{p}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("the cycle returned to its first state"),
            "{text}"
        );
        assert!(text.contains('↻'), "the cycle's events are marked: {text}");
    }
}

#[test]
fn pessimistic_and_vanilla_are_live_under_weak_and_strong_fairness() {
    for rt in ["pessimistic", "vanilla"] {
        for f in ["weak", "strong"] {
            let v = explore_json(&["--liveness", "--runtime", rt, "--fairness", f]);
            let l = &v["liveness"];
            assert_eq!(l["fairness"], f);
            for p in ["deadlock", "starvation", "termination"] {
                assert_eq!(l[p]["verdict"], "holds", "{rt} {f} {p}");
            }
        }
    }
    // Without fairness the client may never be scheduled again after its read.
    let v = explore_json(&[
        "--liveness",
        "--runtime",
        "pessimistic",
        "--fairness",
        "none",
    ]);
    assert_eq!(v["liveness"]["starvation"]["verdict"], "violated");
    assert_eq!(v["liveness"]["starvation"]["lasso"]["cycle"], 0);
}

#[test]
fn safety_verdicts_do_not_change_with_liveness() {
    let scenario = "scenarios/explore/stale-review.toml";
    let run = |extra: &[&str]| {
        let mut args = vec!["explore", scenario, "--json"];
        args.extend_from_slice(extra);
        let out = agentsim(&args);
        assert!(out.status.success(), "{out:?}");
        let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let live = v.as_object_mut().unwrap().remove("liveness");
        (v, live)
    };
    let (plain, none) = run(&[]);
    let (with, live) = run(&["--liveness"]);
    assert!(none.is_none());
    assert_eq!(plain, with);
    let live = live.expect("the liveness object");
    // Finite scripts without fairness-sensitive loops: every property is decided.
    for p in ["deadlock", "starvation", "termination"] {
        assert_ne!(live[p]["verdict"], "cannot_tell", "{p}: {live}");
    }
}

#[test]
fn a_cut_graph_cannot_tell_and_the_gate_does_not_pass_on_it() {
    let out = agentsim(&[
        "explore",
        EXAMPLE,
        "--runtime",
        "pessimistic",
        "--liveness",
        "--max-states",
        "10",
        "--steps-per-agent",
        "200",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("cannot tell (the state ceiling (--max-states) stopped"),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn liveness_flags_are_checked() {
    let out = agentsim(&["explore", EXAMPLE, "--liveness", "--fairness", "fair"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("weak, strong or none"));
    let out = agentsim(&["explore", EXAMPLE, "--fairness", "strong"]);
    assert_eq!(out.status.code(), Some(2), "--fairness needs --liveness");
}

#[test]
fn a_lasso_line_whose_cycle_does_not_close_is_refused() {
    let v = explore_json(&["--liveness", "--runtime", "ssi"]);
    let line = v["liveness"]["starvation"]["replay"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| {
            v["liveness"]["starvation"]["lasso"]["replay"]
                .as_str()
                .unwrap()
                .to_owned()
        });
    // The cycle moved one event into the stem: it no longer starts where it ends.
    let cycle: u64 = line.rsplit("cycle=").next().unwrap().parse().unwrap();
    let bad = line.replace(&format!("cycle={cycle}"), &format!("cycle={}", cycle - 1));
    let out = agentsim(&["replay", &bad]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("does not return"),
        "{out:?}"
    );
}

#[test]
fn the_liveness_keys_parse_strictly_with_their_line() {
    let text = std::fs::read_to_string(root().join(EXAMPLE)).unwrap();
    let sc = Scenario::parse(Path::new("s.toml"), &text).unwrap();
    assert!(sc.retry.unbounded && sc.retry.max == u32::MAX);
    let serves: Vec<(&str, bool)> = sc
        .agents
        .iter()
        .map(|a| (a.name.as_str(), a.serves))
        .collect();
    assert_eq!(serves, [("client", false), ("server", true)]);
    let line_of = |needle: &str| text.lines().position(|l| l.starts_with(needle)).unwrap() + 1;
    let bad = text.replace("max = \"unbounded\"", "max = \"forever\"");
    let e = Scenario::parse(Path::new("s.toml"), &bad)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("s.toml:{}:", line_of("max ="))),
        "{e}"
    );
    assert!(
        e.contains("`max`") && e.contains("`forever` is not a count or \"unbounded\""),
        "{e}"
    );
    // A server without a loop.
    let bad = text.replace(
        "  { do = \"branch\", cell = \"stop\", when = \"null\", goto = \"top\" },\n",
        "",
    );
    let e = Scenario::parse(Path::new("s.toml"), &bad)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("s.toml:{}:", line_of("serves ="))),
        "{e}"
    );
    assert!(
        e.contains("`serves`") && e.contains("no backward `branch`"),
        "{e}"
    );
    // A count still parses, and `serves = false` is allowed anywhere.
    let ok = text
        .replace("max = \"unbounded\"", "max = 3")
        .replace("serves = true", "serves = false");
    let sc = Scenario::parse(Path::new("s.toml"), &ok).unwrap();
    assert!(!sc.retry.unbounded && sc.retry.max == 3);
    assert!(sc.agents.iter().all(|a| !a.serves));
}

#[test]
fn view_marks_the_cycle_of_a_lasso() {
    let v = explore_json(&["--liveness", "--runtime", "ssi"]);
    let line = v["liveness"]["starvation"]["lasso"]["replay"]
        .as_str()
        .unwrap()
        .to_owned();
    let dir = std::env::temp_dir().join(format!("agentsim-live-view-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("lasso.html");
    let out = agentsim(&["view", &line, "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains('↻') && html.contains("cycle (from event"),
        "the cycle is marked"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
