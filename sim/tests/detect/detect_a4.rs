//! `agentsim detect` on histories with replica metadata: the shortest split view of
//! SPEC §6 and its pinned twin, `--json`'s `A4` key, `--fail-on A4`, `--spec` agreement, and a
//! malformed `read_version` (exit 2 naming line and key). The detector itself is tested in
//! `models/tests/a4_agreement.rs`; this pins what a user sees.

use serde_json::{json, Value};
use std::path::PathBuf;

use crate::util::agentsim;

fn sample(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/histories")
        .join(name)
        .to_str()
        .expect("utf-8 path")
        .to_owned()
}

fn detect_json(path: &str, extra: &[&str]) -> Value {
    let mut args = vec!["detect", path, "--json"];
    args.extend_from_slice(extra);
    let out = agentsim(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn the_split_view_sample_names_both_reads() {
    let v = detect_json(&sample("a4_split_view.jsonl"), &[]);
    let expected = json!([{
        "cell": "c1", "version": 1,
        "first": { "record": 1, "agent": "a2", "replica": "s1", "value": null },
        "second": { "record": 2, "agent": "a1", "replica": "primary", "value": "v1" },
    }]);
    assert_eq!(v["anomalies"]["A4"], expected);
    // A4 is outside the lattice: the stale read is no A1, so the point stays empty.
    assert_eq!(v["exhibits"], json!([]));
    assert_eq!(v["level"], json!(4));
    let spec = detect_json(&sample("a4_split_view.jsonl"), &["--spec"]);
    assert_eq!(spec, v);
}

#[test]
fn pinned_twin_has_an_empty_a4_and_fail_on_tells_them_apart() {
    let pinned = sample("a4_pinned.jsonl");
    let v = detect_json(&pinned, &[]);
    assert_eq!(v["anomalies"]["A4"], json!([]));
    let split = sample("a4_split_view.jsonl");
    let code = |p: &str| agentsim(&["detect", p, "--fail-on", "A4"]).status.code();
    assert_eq!(code(&split), Some(1));
    assert_eq!(code(&pinned), Some(0));
}

#[test]
fn single_store_histories_have_no_a4_key() {
    let v = detect_json(&sample("clean.jsonl"), &[]);
    assert!(v["anomalies"].get("A4").is_none());
}

#[test]
fn text_output_has_an_a4_section() {
    let out = agentsim(&["detect", &sample("a4_split_view.jsonl")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "A4 split-view (replicated store, outside the lattice): violated, 1 witness\n  c1 at \
             committed version 1: record 1 (a2) got NULL from s1, but record 2 (a1) got v1 from primary\n"
        ),
        "{text}"
    );
}

#[test]
fn a_bad_read_version_names_line_and_key() {
    let dir = std::env::temp_dir().join(format!("agentsim-a4-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("bad.jsonl");
    let good = std::fs::read_to_string(sample("a4_split_view.jsonl")).expect("sample");
    std::fs::write(&path, good.replacen(r#""c1":1}"#, r#""c1":"one"}"#, 1)).expect("write");
    let out = agentsim(&["detect", path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    // FILE:LINE:COL: the column of the bad value.
    let line = good
        .lines()
        .nth(1)
        .expect("line 2")
        .replacen(r#""c1":1}"#, r#""c1":"one"}"#, 1);
    let col = line.find(r#""one""#).expect("the value") + 1;
    let want = format!("bad.jsonl:2:{col}: key `read_version.c1`");
    assert!(err.contains(&want), "{err}");
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

/// The split-view twin on `scenarios/split-view.toml`: k/N split views vs 0/N pinned, pinned.
#[test]
fn split_view_twin_pins_its_counts() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/split-view.toml");
    let out = agentsim(&["split-view", path.to_str().expect("utf-8"), "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let split: Vec<_> = (0..3).map(|i| v["rows"][i]["split"]["k"].clone()).collect();
    assert_eq!(split, [json!(698), json!(698), json!(0)]);
    assert_eq!(v["rows"][0]["first_split"], json!(2));
    let again = agentsim(&["split-view", path.to_str().expect("utf-8"), "--json"]);
    assert_eq!(again.stdout, out.stdout, "same seed, same bytes");
}
