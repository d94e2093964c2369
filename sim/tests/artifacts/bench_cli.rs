//! `agentsim bench sim`: the benchmark counts what it ran, repeats on request and reports
//! the median and best of the repeats; nonsense arguments exit 2. (Its rates are machine
//! figures and are not pinned; docs/benchmarks.md records them with the command.)

use crate::util::agentsim;

#[test]
fn repeats_are_counted_and_summarised() {
    let out = agentsim(&[
        "bench",
        "sim",
        "--trials",
        "40",
        "--repeat",
        "3",
        "--engine-only",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let engine = &v["engine"];
    // edit-review: 9 operations and 39 events in every trial under vanilla.
    assert_eq!(engine["ops"], 40 * 9);
    assert_eq!(engine["events"], 40 * 39);
    let runs: Vec<f64> = engine["runs"]
        .as_array()
        .expect("one entry per repeat")
        .iter()
        .map(|r| r["ops_per_s"].as_f64().expect("a rate"))
        .collect();
    assert_eq!(runs.len(), 3);
    let mut sorted = runs.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(engine["median_ops_per_s"].as_f64(), Some(sorted[1]));
    assert_eq!(engine["best_ops_per_s"].as_f64(), Some(sorted[2]));
    assert!(
        v.get("engine_and_detect").is_none(),
        "--engine-only skips detection"
    );

    let text = agentsim(&["bench", "sim", "--trials", "20", "--repeat", "2"]);
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("2 runs: median"), "{text}");
    assert!(text.contains("engine + detectors 180 ops"), "{text}");
}

#[test]
fn zero_repeats_is_a_usage_error() {
    let out = agentsim(&["bench", "sim", "--repeat", "0"]);
    assert_eq!(out.status.code(), Some(2));
}
