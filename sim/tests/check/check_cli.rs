//! `agentsim check` and `agentsim matrix` end to end: TLC's pinned figures, exit codes, the
//! JSON keys, a counterexample's replay line, the ITF file, and Table 2.

use std::process::Output;

use crate::util::agentsim;

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

#[test]
fn paper_mode_reports_tlc_figures() {
    let args = [
        "check",
        "--paper",
        "--agents",
        "1",
        "--cells",
        "1",
        "--max-ops",
        "2",
    ];
    // One agent, one cell, no provenance or retraction: A1, A3 and A6 cannot occur, so each
    // is cannot tell (vacuous), which the gate accepts only with --allow-cannot-tell.
    let props = ["--property", "A1,A3,A6", "--json"];
    let out = agentsim(&[&args[..], &props[..]].concat());
    assert_eq!(out.status.code(), Some(2));
    let out = agentsim(&[&args[..], &props[..], &["--allow-cannot-tell"]].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["distinct_states"], 31_942);
    assert_eq!(v["generated_states"], 33_497);
    assert_eq!(v["depth"], 7);
    assert!(v["seconds"].is_number());
    assert_eq!(v["properties"]["A1"]["verdict"], "cannot_tell");
    let out = agentsim(&[
        "check",
        "--paper",
        "--agents",
        "1",
        "--cells",
        "2",
        "--max-ops",
        "1",
        "--property",
        "none",
        "--json",
    ]);
    let v = json(&out);
    assert_eq!(
        (
            v["distinct_states"].as_u64(),
            v["generated_states"].as_u64(),
            v["depth"].as_u64()
        ),
        (Some(10_168), Some(10_937), Some(5))
    );
}

#[test]
fn violation_exits_one_with_a_replayable_trace_and_itf() {
    let dir = std::env::temp_dir().join(format!("agentsim-check-{}", std::process::id()));
    let itf = dir.join("a1.itf.json");
    let base = [
        "check",
        "--paper",
        "--agents",
        "2",
        "--cells",
        "1",
        "--max-ops",
        "4",
    ];
    let trace_out = itf.to_str().unwrap();
    let out = agentsim(
        &[
            &base[..],
            &["--property", "A1", "--json", "--trace-out", trace_out],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    let a1 = &v["properties"]["A1"];
    assert_eq!(a1["holds"], false);
    assert_eq!(a1["trace"].as_array().unwrap().len(), 4);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&itf).unwrap()).expect("ITF is JSON");
    assert_eq!(doc["#meta"]["format"], "ITF");
    assert_eq!(doc["vars"].as_array().unwrap().len(), 4);
    assert_eq!(doc["states"].as_array().unwrap().len(), 5);
    // The replay line reproduces the same steps, then the verdict: it violates A1 (exit 1).
    let path = a1["path"].as_str().unwrap();
    let out = agentsim(&[&base[..], &["--replay", path]].concat());
    assert_eq!(out.status.code(), Some(1));
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let steps: Vec<String> = a1["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(lines.pop().as_deref(), Some("replay: VIOLATES A1"));
    assert_eq!(lines, steps);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_bounds_and_names_exit_two() {
    let out = agentsim(&["check", "--cells", "9"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cells 9"));
    let out = agentsim(&["check", "--runtime", "bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("registry-pin"));
    let out = agentsim(&["check", "--property", "A5"]);
    assert_eq!(out.status.code(), Some(2));
    let out = agentsim(&["check", "--paper", "--runtime", "ssi"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn matrix_matches_table_two() {
    let out = agentsim(&["matrix", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v = json(&out);
    let admitted = |rt: &str, a: &str| v[rt][a]["admitted"].as_bool().unwrap();
    assert!(admitted("vanilla", "A1") && admitted("si", "A1"));
    assert!(!admitted("ssi", "A1") && !admitted("si+all-writers", "A1"));
    assert!(admitted("causal-no-cascade", "A3") && !admitted("causal", "A3"));
    assert!(admitted("causal", "A6") && !admitted("saga", "A6"));
    assert!(admitted("saga", "A2") && !admitted("registry-pin", "A2"));
    assert_eq!(v["vanilla"]["A1"]["witness_steps"], 4);
    assert_eq!(v["vanilla"]["A6"]["witness_steps"], 2);
    assert!(v["registry-validate"]["A1"]["witness_steps"].is_null());
    assert!(v["registry-validate"]["A1"]["states"].as_u64().unwrap() > 0);
    // A4, the fifth column: every row has it; only pinned reads prevent it.
    for (label, row) in v.as_object().unwrap() {
        let prevents = ["vanilla+pinned-reads", "si+all-writers"].contains(&label.as_str());
        assert_eq!(row["A4"]["admitted"], !prevents, "{label}");
    }
    assert_eq!(v["vanilla"]["A4"]["witness_steps"], 6);
    assert_eq!(v["vanilla+session-reads"]["A4"]["witness_steps"], 6);
    assert_eq!(v["vanilla+pinned-reads"]["A4"]["states"], 39_469);
    assert!(v["vanilla+pinned-reads"].get("A1").is_none());
}

/// `--replay` takes the ITF file `--trace-out` wrote as well as its path: the same steps and
/// verdict; an ITF written under other flags (bounds, runtime) names the mismatch (exit 2),
/// and a file that is not an ITF trace says so.
#[test]
fn replay_takes_an_itf_file_and_names_a_mismatch() {
    let dir = std::env::temp_dir().join(format!("agentsim-itf-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let itf = dir.join("a1.itf.json");
    let f = itf.to_str().unwrap();
    let flags = [
        "check",
        "--agents",
        "2",
        "--cells",
        "1",
        "--max-ops",
        "4",
        "--property",
        "A1",
    ];
    let mut args = flags.to_vec();
    args.extend(["--trace-out", f]);
    assert_eq!(agentsim(&args).status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&itf).unwrap()).unwrap();
    let path = doc["#meta"]["path"].as_str().unwrap().to_owned();
    let by_path = agentsim(&[&flags[..], &["--replay", &path]].concat());
    let by_file = agentsim(&[&flags[..], &["--replay", f]].concat());
    assert_eq!(by_file.status.code(), Some(1));
    assert_eq!(by_file.stdout, by_path.stdout);
    let other = [
        "check",
        "--agents",
        "2",
        "--cells",
        "1",
        "--max-ops",
        "4",
        "--values",
        "1",
    ];
    let out = agentsim(&[&other[..], &["--replay", f]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("another model or bounds"), "{err}");
    let out = agentsim(&[&["check", "--runtime", "ssi"][..], &["--replay", f]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("another model or bounds"), "{err}");
    let not_itf = dir.join("x.json");
    std::fs::write(&not_itf, "{\"states\": []}").unwrap();
    let out = agentsim(&["check", "--replay", not_itf.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not an ITF trace"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
