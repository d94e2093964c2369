//! `agentsim explore --shard I/N --partial-out` and `agentsim merge`: for 1, 2 and 3 shards
//! on the worked examples and a workload, the merged text and `--json` are the bytes one run
//! prints (the text's seconds aside) with its exit code; missing, doubled and mismatched
//! shards are refused with exit 2.

use crate::util::agentsim;
use std::path::{Path, PathBuf};
use std::process::Output;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "agentsim-explore-shard-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The text with each header line's wall time cut (`, 0.12 s`), the one volatile field.
fn no_seconds(out: &[u8]) -> String {
    let text = String::from_utf8(out.to_vec()).expect("UTF-8");
    text.lines()
        .map(|l| match (l.starts_with("explore "), l.rfind(", ")) {
            (true, Some(at)) if l.ends_with(" s") => &l[..at],
            _ => l,
        })
        .fold(String::new(), |s, l| s + l + "\n")
}

/// Writes shards `which` of `n` of `explore ARGS` into `dir`; their files.
fn shards(dir: &Path, args: &[&str], n: u64, which: &[u64]) -> Vec<String> {
    which
        .iter()
        .map(|i| {
            let f = dir.join(format!("part-{i}-of-{n}.json"));
            let f = f.to_str().unwrap().to_owned();
            let shard = format!("{i}/{n}");
            let mut a = vec!["explore"];
            a.extend_from_slice(args);
            a.extend_from_slice(&["--shard", &shard, "--partial-out", &f]);
            let out = agentsim(&a);
            assert!(out.status.success(), "{a:?}: {out:?}");
            assert!(out.stdout.is_empty(), "a shard prints nothing on stdout");
            f
        })
        .collect()
}

fn merge(files: &[String], json: bool) -> Output {
    let mut a: Vec<&str> = vec!["merge"];
    a.extend(files.iter().map(String::as_str));
    if json {
        a.push("--json");
    }
    agentsim(&a)
}

fn same_as_one_run(dir: &Path, args: &[&str]) {
    let mut one = vec!["explore"];
    one.extend_from_slice(args);
    let text = agentsim(&one);
    one.push("--json");
    let json = agentsim(&one);
    assert_eq!(text.status.code(), json.status.code(), "{args:?}");
    for n in 1..=3 {
        let files = shards(dir, args, n, &(1..=n).collect::<Vec<_>>());
        let m = merge(&files, true);
        assert_eq!(m.status.code(), json.status.code(), "{args:?} {n}: {m:?}");
        assert_eq!(
            String::from_utf8_lossy(&m.stdout),
            String::from_utf8_lossy(&json.stdout),
            "{args:?} on {n} shards, --json"
        );
        let m = merge(&files, false);
        assert_eq!(m.status.code(), text.status.code(), "{args:?} {n}");
        assert_eq!(
            no_seconds(&m.stdout),
            no_seconds(&text.stdout),
            "{args:?} on {n} shards"
        );
    }
}

/// The worked examples, a fixed twin, several runtimes with coverage, plain enumeration and
/// a workload: merged bytes are one run's bytes.
#[test]
fn merged_shards_print_one_runs_bytes() {
    let dir = scratch("same");
    for args in [
        &["scenarios/explore/stale-review.toml"][..],
        &["scenarios/explore/retired-tool.toml"],
        &["scenarios/explore/effect-order.toml", "--no-reduction"],
        &["scenarios/explore/effect-order-saga.toml"],
        &[
            "scenarios/explore/stale-review.toml",
            "--coverage",
            "--runtime",
            "vanilla,ssi",
        ],
        &["scenarios/examples/triage.toml", "--steps-per-agent", "6"],
    ] {
        same_as_one_run(&dir, args);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A timed run is the plain enumeration: its partials say so in their header (`"search":
/// {"timed": …}`), and the merge reports `reduction off` and the timed bounds, as one run does.
#[test]
fn merged_timed_shards_say_reduction_off() {
    let dir = scratch("timed");
    let args = ["scenarios/timed/stale-review-overlap.toml", "--timed"];
    same_as_one_run(&dir, &args);
    let files = shards(&dir, &args, 2, &[1, 2]);
    let head: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(
        head["config"]["search"],
        serde_json::json!({"timed": {"quantiles": "0.001,0.999"}}),
        "{head}"
    );
    let m = merge(&files, false);
    let text = String::from_utf8_lossy(&m.stdout);
    assert!(text.contains("reduction off"), "{text}");
    let m = merge(&files, true);
    let v: serde_json::Value = serde_json::from_slice(&m.stdout).unwrap();
    assert_eq!(v["reduction"], false, "{v}");
    assert_eq!(v["timed"]["search"], "plain enumeration", "{v}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A budget that stops a shard makes the merge cannot tell with exit 2, as one stopped run.
#[test]
fn a_stopped_shard_makes_the_merge_cannot_tell() {
    let dir = scratch("stopped");
    let args = [
        "scenarios/explore/stale-review-ssi.toml",
        "--max-schedules",
        "1",
    ];
    let files = shards(&dir, &args, 2, &[1, 2]);
    let m = merge(&files, true);
    assert_eq!(m.status.code(), Some(2), "{m:?}");
    let v: serde_json::Value = serde_json::from_slice(&m.stdout).unwrap();
    assert_eq!(v["complete"], false);
    assert_eq!(v["anomalies"]["A1"]["reachable"], serde_json::Value::Null);
    assert!(String::from_utf8_lossy(&m.stderr).contains("cannot tell"));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn refused(files: &[String], says: &str) {
    let m = merge(files, false);
    let err = String::from_utf8_lossy(&m.stderr);
    assert_eq!(m.status.code(), Some(2), "{files:?}: {m:?}");
    assert!(m.stdout.is_empty(), "{files:?}: nothing printed");
    assert!(err.contains(says), "{files:?}: wanted `{says}` in {err}");
}

/// Missing, doubled and mismatched shards, and a bad shard flag, exit 2 with a message.
#[test]
fn bad_shard_sets_are_refused() {
    let dir = scratch("refused");
    let sc = "scenarios/explore/stale-review.toml";
    let two = shards(&dir, &[sc], 2, &[1, 2]);
    refused(&two[..1], "shard 2/2 is missing");
    refused(&[two[0].clone(), two[0].clone()], "given twice");
    let three = shards(&dir, &[sc], 3, &[3]);
    refused(
        &[two[0].clone(), two[1].clone(), three[0].clone()],
        "shard.count",
    );
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let budget = shards(&other, &[sc, "--steps-per-agent", "9"], 2, &[2]);
    refused(&[two[0].clone(), budget[0].clone()], "field `config`");
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"command\": \"explore\", \"format\": 1}").unwrap();
    refused(
        &[bad.to_str().unwrap().to_owned()],
        "not an explore partial",
    );
    let f = dir.join("x.json");
    let out = agentsim(&[
        "explore",
        sc,
        "--shard",
        "3/2",
        "--partial-out",
        f.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!f.exists(), "no partial for a bad flag");
    let out = agentsim(&["explore", sc, "--shard", "1/2"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What a stateful search decides whatever its threads or shards: completeness, each
/// anomaly's verdict and reason, and the anomaly sets (witnesses and counts depend on which
/// path met a state first, and each shard keeps its own set of states).
fn decided(v: &serde_json::Value) -> serde_json::Value {
    let anomalies: serde_json::Map<String, serde_json::Value> = v["anomalies"]
        .as_object()
        .expect("anomalies")
        .iter()
        .map(|(k, a)| {
            let kept = serde_json::json!({
                "reachable": a["reachable"],
                "reason": a["reason"],
            });
            (k.clone(), kept)
        })
        .collect();
    let sets: Vec<serde_json::Value> = v["sets"]
        .as_array()
        .expect("sets")
        .iter()
        .map(|s| s["anomalies"].clone())
        .collect();
    serde_json::json!({"complete": v["complete"], "anomalies": anomalies, "sets": sets})
}

/// A stateful search without a step budget is sharded: its partials say so in their header,
/// and the merge of 1, 2 or 3 shards decides what one run decides, with a stateful count.
#[test]
fn stateful_shards_merge_into_one_runs_verdicts() {
    let dir = scratch("stateful");
    for scenario in [
        "scenarios/bounds/retry-beside-server.toml",
        "scenarios/examples/triage.toml",
    ] {
        for runtime in ["vanilla", "ssi"] {
            let args = [
                scenario,
                "--stateful",
                "--steps-per-agent",
                "unbounded",
                "--runtime",
                runtime,
            ];
            let mut one = vec!["explore"];
            one.extend_from_slice(&args);
            one.push("--json");
            let out = agentsim(&one);
            let whole: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(whole["complete"], true, "{args:?}: {whole}");
            for n in 1..=3 {
                let files = shards(&dir, &args, n, &(1..=n).collect::<Vec<_>>());
                let head: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
                assert_eq!(head["config"]["stateful"], true, "{head}");
                let m = merge(&files, true);
                assert_eq!(m.status.code(), out.status.code(), "{args:?} {n}: {m:?}");
                let merged: serde_json::Value = serde_json::from_slice(&m.stdout).unwrap();
                assert_eq!(decided(&merged), decided(&whole), "{args:?} on {n} shards");
                let states = |v: &serde_json::Value| v["stateful"]["states"].as_u64();
                assert!(states(&merged) >= states(&whole), "{args:?} on {n} shards");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
