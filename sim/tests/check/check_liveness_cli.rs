//! `agentsim check --property starvation|livelock --fairness F` end to end: the verdicts and
//! exit codes (0 holds, 1 violated, 2 cannot tell or bad flags), the `--json` lasso, and the
//! refusals (mixed properties, a bounded model, symmetry).

use crate::util::agentsim;

const ABS: &[&str] = &[
    "check",
    "--abstract",
    "--agents",
    "2",
    "--cells",
    "1",
    "--values",
    "1",
    "--tools",
    "0",
    "--quiet",
    "--json",
];

fn run(extra: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let args: Vec<&str> = ABS.iter().chain(extra).copied().collect();
    let out = agentsim(&args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code(), doc, err)
}

#[test]
fn ssi_starves_an_agent_under_strong_fairness_with_a_real_lasso() {
    let (code, j, err) = run(&[
        "--runtime",
        "ssi",
        "--property",
        "starvation,livelock",
        "--fairness",
        "sf",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(j["fairness"], "sf");
    assert_eq!(j["all_lengths"], true);
    let s = &j["properties"]["starvation"];
    assert_eq!(s["verdict"], "violated");
    assert_eq!(s["agent"], "a1");
    let lasso = &s["lasso"];
    assert!(lasso["cycle"].as_u64().unwrap() > 0);
    let steps = lasso["cycle_steps"].as_array().unwrap();
    assert!(steps
        .iter()
        .any(|x| x.as_str().unwrap().ends_with("(aborted)")));
    assert!(!steps
        .iter()
        .any(|x| x.as_str().unwrap().starts_with("CompleteWrite(a1)")
            && x.as_str().unwrap().ends_with("(commits)")));
    assert_eq!(j["properties"]["livelock"]["verdict"], "holds");
}

#[test]
fn vanilla_is_live_under_weak_fairness_and_not_without() {
    let (code, j, err) = run(&["--runtime", "vanilla", "--property", "starvation"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(j["properties"]["starvation"]["verdict"], "holds");
    let (code, j, _) = run(&[
        "--runtime",
        "vanilla",
        "--property",
        "starvation",
        "--fairness",
        "none",
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(j["properties"]["starvation"]["verdict"], "violated");
}

#[test]
fn a_bounded_model_cannot_tell_and_the_gate_refuses_it() {
    let (code, j, err) = run(&[
        "--runtime",
        "ssi",
        "--max-ops",
        "3",
        "--property",
        "livelock",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(j["properties"]["livelock"]["verdict"], "cannot_tell");
    assert!(j["properties"]["livelock"]["reason"]
        .as_str()
        .unwrap()
        .contains("bound"));
}

#[test]
fn mixed_properties_symmetry_and_stray_fairness_are_refused() {
    let (code, _, err) = run(&["--property", "starvation,A1"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("separate runs"), "{err}");
    let (code, _, err) = run(&["--property", "starvation", "--symmetry"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("symmetry"), "{err}");
    let (code, _, err) = run(&["--property", "A1", "--fairness", "wf"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--fairness"), "{err}");
}
