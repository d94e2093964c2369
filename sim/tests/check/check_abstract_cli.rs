//! `agentsim check --abstract` end to end: the `--json` keys, and every admitted matrix cell's
//! abstract witness at 3 agents × 2 cells, concretized: `agentsim detect` finds the anomaly in
//! the `--history-out` history, and `check --replay PATH` without `--abstract` (at the printed
//! `replay_max_ops`) prints the same steps. Prevented cells are checked for the verdict only.

use std::process::Output;

use crate::util::agentsim;

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is one JSON object ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The matrix scenario's flags for an anomaly column (`checker::jobs::runtime_matrix::scenario`).
fn column_flags(a: &str) -> &'static [&'static str] {
    match a {
        "A1" | "A6" => &["--tools", "0", "--canonical-writes"],
        "A2" => &["--tools", "1", "--tool-versions", "--canonical-writes"],
        "A3" => &[
            "--tools",
            "0",
            "--provenance",
            "--retraction",
            "--canonical-writes",
        ],
        _ => unreachable!("a matrix column"),
    }
}

/// Table 2 (SPEC §5): whether `runtime` admits `a`.
fn admitted(runtime: &str, a: &str) -> bool {
    let level = match runtime {
        "vanilla" => 0,
        "pessimistic" | "ssi" | "si+all-writers" => 1,
        "causal" | "causal-no-cascade" => 2,
        "saga" => 3,
        "registry-validate" | "registry-pin" => 4,
        "si" => return true,
        _ => unreachable!(),
    };
    let needs = match a {
        "A1" => 1,
        "A3" => 2,
        "A6" => 3,
        "A2" => 4,
        _ => unreachable!(),
    };
    // causal without its cascade is the A3 counterexample of SPEC §5.
    level < needs || (runtime == "causal-no-cascade" && a == "A3")
}

fn base(runtime: &str, a: &str, max_ops: Option<&str>) -> Vec<String> {
    let (rt, extra): (&str, &[&str]) = match runtime {
        "si+all-writers" => ("si", &["--all-writers"]),
        r => (r, &[]),
    };
    let mut v: Vec<String> = [
        "check",
        "--runtime",
        rt,
        "--agents",
        "3",
        "--cells",
        "2",
        "--values",
        "1",
        "--property",
        a,
    ]
    .iter()
    .chain(extra)
    .chain(column_flags(a))
    .map(|s| s.to_string())
    .collect();
    if let Some(n) = max_ops {
        v.extend(["--max-ops".into(), n.into()]);
    }
    v
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

const RUNTIMES: [&str; 10] = [
    "vanilla",
    "pessimistic",
    "si",
    "si+all-writers",
    "ssi",
    "causal",
    "causal-no-cascade",
    "saga",
    "registry-validate",
    "registry-pin",
];

#[test]
fn every_admitted_cell_has_a_witness_detect_confirms_and_replay_replays() {
    let dir = std::env::temp_dir().join(format!("agentsim-abs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut witnessed = 0;
    for runtime in RUNTIMES {
        for a in ["A1", "A2", "A3", "A6"] {
            // A3 needs retraction, whose abstract state keeps every live writer: bounded.
            let ops = (a == "A3").then_some("4");
            let hist = dir.join(format!("{runtime}_{a}.jsonl"));
            let mut args = base(runtime, a, ops);
            args.extend(["--abstract", "--symmetry", "--json", "--history-out"].map(String::from));
            args.push(hist.to_str().unwrap().into());
            let out = agentsim(&strs(&args));
            let v = json(&out);
            let what = format!("{runtime} {a}");
            assert_eq!(v["abstract"], true, "{what}");
            assert_eq!(v["bounded"], ops.is_some(), "{what}");
            assert!(v["distinct_states"].as_u64().unwrap() > 0, "{what}");
            assert!(v["seconds"].is_number(), "{what}");
            let p = &v["properties"][a];
            assert_eq!(p["holds"], !admitted(runtime, a), "{what}: {v}");
            if p["holds"] == true {
                assert_eq!(out.status.code(), Some(0), "{what}");
                assert_eq!(v["all_lengths"], ops.is_none(), "{what}: closed, unbounded");
                continue;
            }
            assert_eq!(out.status.code(), Some(1), "{what}");
            witnessed += 1;
            let detect = agentsim(&["detect", "--json", hist.to_str().unwrap()]);
            let d = json(&detect);
            let found = d["anomalies"][a].as_array().expect("an anomaly list");
            assert!(!found.is_empty(), "{what}: detect finds no {a} in {d}");
            let replay_ops = v["replay_max_ops"].to_string();
            let mut args = base(runtime, a, Some(&replay_ops));
            args.extend(["--replay".into(), p["path"].as_str().unwrap().into()]);
            let out = agentsim(&strs(&args));
            assert_eq!(out.status.code(), Some(1), "{what}: replay violates {a}");
            let printed = String::from_utf8_lossy(&out.stdout);
            for step in p["trace"].as_array().unwrap() {
                let step = step.as_str().unwrap();
                assert!(
                    printed.contains(step),
                    "{what}: replay lacks `{step}`:\n{printed}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(witnessed >= 20, "{witnessed}");
}

#[test]
fn a_prevented_cell_holds_for_every_length() {
    let mut args = base("ssi", "A1", None);
    args.extend(["--abstract", "--symmetry", "--json"].map(String::from));
    let v = json(&agentsim(&strs(&args)));
    assert_eq!(v["properties"]["A1"]["holds"], true);
    assert_eq!(
        (v["bounded"].clone(), v["all_lengths"].clone()),
        (false.into(), true.into())
    );
    let mut args = base("ssi", "A1", Some("6"));
    args.extend(["--abstract", "--symmetry", "--json"].map(String::from));
    let v = json(&agentsim(&strs(&args)));
    assert_eq!(v["properties"]["A1"]["holds"], true);
    assert_eq!(
        (v["bounded"].clone(), v["all_lengths"].clone()),
        (true.into(), false.into())
    );
}

#[test]
fn history_out_needs_abstract() {
    let out = agentsim(&["check", "--history-out", "x.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A search the memory ceiling stops says so (exit 2, the ceiling named, partial counts on
/// stdout), not "raise --max-states".
#[test]
fn a_memory_stop_is_reported_as_one() {
    let mut args = vec![
        "check",
        "--abstract",
        "--runtime",
        "causal",
        "--agents",
        "3",
        "--cells",
        "2",
        "--values",
        "1",
        "--max-ops",
        "6",
        "--property",
        "A3",
        "--symmetry",
        "--json",
        "--max-memory-mb",
        "40",
    ];
    args.extend_from_slice(column_flags("A3"));
    let out = agentsim(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("memory ceiling"), "{err}");
    assert!(!err.contains("--max-states"), "{err}");
    let j = json(&out);
    assert_eq!(j["stopped"], "memory");
    assert_eq!(j["abstract"], true);
    assert_eq!(j["bounded"], true);
    assert!(
        j.get("all_lengths").is_none(),
        "a stopped run decides no length: {j}"
    );
    assert!(j["distinct_states"].as_u64().expect("partial counts") > 0);
}
