//! `agentsim cpl eval` end to end on the code-review scenarios: the text and JSON outputs,
//! and exit 2 with file, line and key (or line and column) on bad input.
//! These pin the command's behaviour on three files, not the monitor's correctness in general.

use crate::util::agentsim;

const GUARDS: &str = "scenarios/cpl/code_review.cpl";

#[test]
fn eval_prints_every_guard_at_every_event() {
    let out = agentsim(&[
        "cpl",
        "eval",
        GUARDS,
        "scenarios/cpl/code_review_stale.jsonl",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 15 + 1);
    assert_eq!(
        lines[0],
        "event  lifeline  kind    review_ok  merge_ok  merge_rise  merge_naive"
    );
    assert_eq!(
        lines[15],
        "   14  Merger    choice  false      false     false       true"
    );
    assert_eq!(lines[16], "monitor and reference agree on 60 values");
}

#[test]
fn eval_json_lists_event_lifeline_guard_value() {
    let out = agentsim(&[
        "cpl",
        "eval",
        GUARDS,
        "scenarios/cpl/code_review_fresh.jsonl",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = v.as_array().unwrap();
    assert_eq!(items.len(), 15 * 4);
    let rise: Vec<u64> = items
        .iter()
        .filter(|i| i["guard"] == "merge_rise" && i["value"] == true)
        .map(|i| i["event"].as_u64().unwrap())
        .collect();
    assert_eq!(rise, vec![13]);
    assert_eq!(items[13 * 4 + 1]["lifeline"], "Merger");
}

#[test]
fn bad_input_exits_2_naming_file_line_and_key() {
    let dir = std::env::temp_dir().join(format!("agentsim-cpl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let msc = dir.join("bad.jsonl");
    std::fs::write(
        &msc,
        "{\"lifeline\":\"A\",\"kind\":\"act\"}\n{\"lifeline\":\"A\",\"kind\":\"recv\",\"msg\":9}\n",
    )
    .unwrap();
    let out = agentsim(&["cpl", "eval", GUARDS, msc.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    // One location format for every reader: FILE:LINE:COL: key `K`: message.
    assert!(err.contains("bad.jsonl:2:1: key `msg`: "), "{err}");
    let guards = dir.join("bad.cpl");
    std::fs::write(&guards, "let a = x == 1;\nlet b = a & (;\n").unwrap();
    let out = agentsim(&[
        "cpl",
        "eval",
        guards.to_str().unwrap(),
        msc.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("bad.cpl:2:14: expected"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bench_json_has_every_workload() {
    let args = [
        "cpl",
        "bench",
        "--json",
        "--batches",
        "1",
        "--batch",
        "5",
        "--warmup",
        "0",
    ];
    let out = agentsim(&args);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[0]["workload"], "code-review");
    assert_eq!(rows[0]["subformulas"], 16);
    assert_eq!(rows[0]["variables"], 1);
    for r in rows {
        let (bin, json) = (
            r["binary_bytes"].as_u64().unwrap(),
            r["json_bytes"].as_u64().unwrap(),
        );
        assert!(bin * 3 <= json, "{r}");
        assert!(r["recv_ns"].as_f64().unwrap() > 0.0);
    }
}
