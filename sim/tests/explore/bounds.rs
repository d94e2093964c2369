//! A bound is not a proof: every way a search can be cut (the step budget, `events_max`,
//! `--max-repeat`) makes `explore` say *cannot tell* with a budget reason, never
//! "unreachable", in its text, its JSON and its exit code; a property the scenario cannot
//! produce is *cannot tell, vacuous* in `explore` and `simulate --fail-on`; and `test` turns
//! each into ERROR (a JUnit `<error>`), never PASS. The scenarios are in `scenarios/bounds/`.

use crate::util::{agentsim, root};
use serde_json::Value;
use std::process::Output;

const WAITS: &str = "scenarios/bounds/editor-45-waits.toml";
const EVENTS_MAX: &str = "scenarios/bounds/editor-45-waits-events-max.toml";
const NO_PROVENANCE: &str = "scenarios/bounds/retracted-plan-no-provenance.toml";
const PROVENANCE: &str = "scenarios/bounds/retracted-plan.toml";

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// Nothing in a cut search's output reads green: no "unreachable", no `"complete": true`, no
/// `"reachable": false`, and every anomaly no path showed is cannot tell with a reason.
fn not_green(v: &Value, what: &str) {
    assert_eq!(v["complete"], false, "{what}: {v}");
    for (a, f) in v["anomalies"].as_object().unwrap() {
        assert_ne!(f["reachable"], false, "{what}: {a}: {f}");
        let verdict = f["verdict"].as_str().unwrap();
        assert!(!verdict.contains("unreachable"), "{what}: {a}: {verdict}");
        if f["reachable"].is_null() {
            assert!(verdict.starts_with("cannot tell"), "{what}: {a}: {verdict}");
            let kind = f["reason"]["kind"].as_str().unwrap();
            assert!(kind == "budget" || kind == "vacuous", "{what}: {a}: {f}");
        }
    }
}

#[test]
fn a_step_budget_cut_is_cannot_tell_not_unreachable() {
    // Sampling shows A1 in every trial.
    let out = agentsim(&["simulate", WAITS, "--trials", "200", "--fail-on", "A1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // The default budget of 40 steps per agent cuts the editor before its write.
    let out = agentsim(&["explore", WAITS, "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v = json_of(&out);
    not_green(&v, "45 waits at 40 steps");
    assert!(v["cut"]["steps_per_agent"].as_u64().unwrap() >= 1, "{v}");
    assert_eq!(v["cut"]["events_max"], 0);
    assert_eq!(v["cut"]["repeat"], 0);
    let a1 = &v["anomalies"]["A1"];
    assert_eq!(a1["reason"]["kind"], "budget", "{a1}");
    let detail = a1["reason"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("no witness within 40 steps per agent"),
        "{detail}"
    );
    assert!(
        stderr(&out).contains("raise --steps-per-agent"),
        "{}",
        stderr(&out)
    );
    // The text says the same; `--allow-cannot-tell` changes the exit only.
    let out = agentsim(&["explore", WAITS, "--allow-cannot-tell"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(": cut, "), "{text}");
    assert!(!text.contains("unreachable"), "{text}");
    assert!(
        text.contains("A1          cannot tell (budget: no witness within 40 steps per agent"),
        "{text}"
    );
    // `--fail-on A1` gates on it: exit 2, not 0.
    let out = agentsim(&["explore", WAITS, "--fail-on", "A1"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // A budget past the waits decides it: reachable, complete, and `--fail-on` exits 1.
    let out = agentsim(&["explore", WAITS, "--steps-per-agent", "48", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_of(&out);
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(v["anomalies"]["A1"]["reachable"], true, "{v}");
    let out = agentsim(&[
        "explore",
        WAITS,
        "--steps-per-agent",
        "48",
        "--fail-on",
        "A1",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn an_events_max_cut_is_cannot_tell_not_every_interleaving() {
    let out = agentsim(&["explore", EVENTS_MAX, "--steps-per-agent", "100", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v = json_of(&out);
    not_green(&v, "events_max = 30");
    assert!(v["cut"]["events_max"].as_u64().unwrap() >= 1, "{v}");
    let detail = v["anomalies"]["A1"]["reason"]["detail"].as_str().unwrap();
    assert!(detail.contains("events_max = 30 cut"), "{detail}");
    let out = agentsim(&["simulate", EVENTS_MAX, "--trials", "50", "--fail-on", "A1"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn a_repeat_cap_is_cannot_tell_past_the_cap() {
    let out = agentsim(&[
        "explore",
        "scenarios/examples/edit-review.toml",
        "--runtime",
        "ssi",
        "--max-repeat",
        "1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let v = json_of(&out);
    not_green(&v, "--max-repeat 1");
    assert_eq!(v["cut"]["repeat"], v["schedules"], "{v}");
    assert!(stderr(&out).contains("--max-repeat"), "{}", stderr(&out));
}

#[test]
fn a_property_that_cannot_occur_is_vacuous_not_unreachable() {
    // With provenance, A3 shows in every trial.
    let out = agentsim(&["simulate", PROVENANCE, "--fail-on", "A3"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = agentsim(&["explore", PROVENANCE, "--json"]);
    assert_eq!(json_of(&out)["anomalies"]["A3"]["reachable"], true);
    // Without, no path or trial can: cannot tell, vacuous, naming what would make it possible.
    let out = agentsim(&["simulate", NO_PROVENANCE, "--fail-on", "A3"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("vacuous: A3 needs provenance"),
        "{}",
        stderr(&out)
    );
    let out = agentsim(&["explore", NO_PROVENANCE, "--json"]);
    // Not asked (no --fail-on), so the vacuous verdict does not gate; the search is complete.
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_of(&out);
    assert_eq!(v["complete"], true);
    let a3 = &v["anomalies"]["A3"];
    assert!(a3["reachable"].is_null(), "{a3}");
    assert_eq!(a3["reason"]["kind"], "vacuous", "{a3}");
    assert!(!a3["verdict"].as_str().unwrap().contains("unreachable"));
    let out = agentsim(&["explore", NO_PROVENANCE, "--fail-on", "A3"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("A3 under vanilla: cannot tell (vacuous: A3 needs provenance"),
        "{}",
        stderr(&out)
    );
}

/// A suite of `never` claims over the three scenarios: each is ERROR with its reason, the run
/// exits 2, and the JUnit report has an `<error>` per case, no pass.
#[test]
fn suites_never_pass_a_cut_or_vacuous_never() {
    let dir = std::env::temp_dir().join(format!("agentsim-bounds-suite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (WAITS, "A1", "explore", "budget"),
        (EVENTS_MAX, "A1", "explore", "budget"),
        (NO_PROVENANCE, "A3", "explore", "vacuous"),
        (NO_PROVENANCE, "A3", "simulate", "vacuous"),
    ];
    for (i, (file, a, by, _)) in cases.iter().enumerate() {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        let suite = format!(
            "{text}\n[[expect]]\nname = \"never {a}\"\nanomaly = \"{a}\"\nnever = true\n\
             by = \"{by}\"\ntrials = 50\n"
        );
        std::fs::write(dir.join(format!("case-{i}.toml")), suite).unwrap();
    }
    let junit = dir.join("junit.xml");
    let out = agentsim(&[
        "test",
        dir.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{text}\n{}", stderr(&out));
    assert!(!text.contains("PASS"), "{text}");
    assert_eq!(text.matches("ERROR").count(), cases.len(), "{text}");
    for (_, _, _, kind) in cases {
        assert!(text.contains(kind), "{text}");
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<error ").count(), cases.len(), "{xml}");
    assert!(
        xml.contains("budget: no witness within 40 steps per agent"),
        "{xml}"
    );
    assert!(xml.contains("vacuous: A3 needs provenance"), "{xml}");
    let _ = std::fs::remove_dir_all(&dir);
}
