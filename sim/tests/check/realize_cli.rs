//! `agentsim lattice --realize --json` against `agentsim check`: the
//! output lists the 16 points sorted by `excludes`, each with a stack whose verdicts match its
//! `excludes` exactly, and `agentsim check --runtime <stack> --property <A>` at the matrix's
//! bounds gives every one of those verdicts again, with the same states (prevented) or the same
//! shortest-witness length (admitted). A pass holds at the matrix's bounds only.

use serde_json::Value;
use std::process::Output;

use crate::util::agentsim;

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The matrix scenario of `a` as `check` flags (`checker::jobs::runtime_matrix::scenario`).
fn scenario(a: &str) -> &'static [&'static str] {
    match a {
        "A1" => &[
            "--agents",
            "2",
            "--cells",
            "1",
            "--tools",
            "0",
            "--max-ops",
            "2",
            "--canonical-writes",
        ],
        "A2" => &[
            "--agents",
            "1",
            "--cells",
            "1",
            "--tools",
            "1",
            "--max-ops",
            "1",
            "--canonical-writes",
            "--tool-versions",
        ],
        "A3" => &[
            "--agents",
            "1",
            "--cells",
            "1",
            "--tools",
            "0",
            "--max-ops",
            "2",
            "--canonical-writes",
            "--provenance",
            "--retraction",
        ],
        "A6" => &[
            "--agents",
            "1",
            "--cells",
            "2",
            "--tools",
            "0",
            "--max-ops",
            "1",
            "--canonical-writes",
        ],
        other => panic!("no matrix scenario for {other}"),
    }
}

const LATTICE: [&str; 4] = ["A1", "A2", "A3", "A6"];

#[test]
fn every_realized_point_is_confirmed_by_check() {
    let out = agentsim(&["lattice", "--realize", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let points = json(&out);
    let points = points.as_array().expect("an array");
    assert_eq!(points.len(), 16);
    let mut seen: Vec<Vec<String>> = Vec::new();
    for p in points {
        let excludes: Vec<String> = p["excludes"]
            .as_array()
            .expect("excludes")
            .iter()
            .map(|a| a.as_str().expect("a name").to_owned())
            .collect();
        seen.push(excludes.clone());
        let stack = p["runtime"].as_str().expect("runtime");
        for a in LATTICE {
            let v = &p["verdicts"][a];
            let admitted = v["admitted"].as_bool().expect("admitted");
            assert_eq!(
                admitted,
                !excludes.iter().any(|x| x == a),
                "{stack}: {a} against excludes {excludes:?}"
            );
            let mut args = vec![
                "check",
                "--runtime",
                stack,
                "--property",
                a,
                "--values",
                "1",
            ];
            args.extend_from_slice(scenario(a));
            args.extend_from_slice(&["--threads", "1", "--json"]);
            let out = agentsim(&args);
            // check exits 1 when a property is violated, 0 when every one holds.
            assert_eq!(
                out.status.code(),
                Some(if admitted { 1 } else { 0 }),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let c = json(&out);
            let verdict = &c["properties"][a];
            assert_eq!(verdict["holds"].as_bool(), Some(!admitted), "{args:?}");
            if admitted {
                assert_eq!(
                    verdict["trace"].as_array().map(Vec::len),
                    v["witness_steps"].as_u64().map(|n| n as usize),
                    "{args:?}: witness length"
                );
            } else {
                assert_eq!(verdict["states"], v["states"], "{args:?}: states");
                assert!(v["witness_steps"].is_null());
            }
        }
    }
    // Sorted by `excludes` (as lists of names: [], [A1], [A1, A2], ...), each subset once.
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, seen, "sorted by excludes, each subset once");
}
