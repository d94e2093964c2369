//! `agentsim check --runtime STACK` end to end: a `+`-joined stack of mechanisms
//! runs like a named runtime, its name is canonical in the report, a stack equal to a named
//! runtime prints that name, and an invalid stack is exit 2 naming the mechanism and why.

use std::process::Output;

use crate::util::agentsim;

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

/// The matrix's A6 scenario: 1 agent, 2 cells, 1 value, no tools, MaxOps 1.
const A6: [&str; 14] = [
    "check",
    "--agents",
    "1",
    "--cells",
    "2",
    "--values",
    "1",
    "--tools",
    "0",
    "--max-ops",
    "1",
    "--canonical-writes",
    "--property",
    "A6",
];

#[test]
fn a_stack_runs_and_is_named_canonically() {
    let out = agentsim(&[&A6[..], &["--runtime", "sequencer+lock", "--json"]].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["model"], "runtime:lock+sequencer");
    assert_eq!(v["distinct_states"], 57, "the matrix's A6 prevention count");
    // lock alone is pessimistic, and it admits A6 with a 2-step witness.
    let out = agentsim(&[&A6[..], &["--runtime", "lock", "--json"]].concat());
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["model"], "runtime:pessimistic");
}

#[test]
fn invalid_stacks_exit_two_naming_the_mechanism() {
    let out = agentsim(&["check", "--runtime", "pin+validate-tool"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`pin` cannot be stacked with `validate-tool`"),
        "{err}"
    );
    let out = agentsim(&["check", "--runtime", "cascade"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`cascade` needs `validate-preds`"), "{err}");
    let out = agentsim(&["check", "--runtime", "lock++pin"]);
    assert_eq!(out.status.code(), Some(2));
}
