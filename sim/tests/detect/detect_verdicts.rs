//! `detect`'s three-valued verdicts and its `--fail-on` gate: every anomaly is *holds*,
//! *violated* or *cannot tell* (with its reason), in the text report and in `--json`; the
//! level is a range when some anomaly cannot be told; a gate exits 2 on a *cannot tell*
//! (undecidable, upper bound that found something, empty input) unless
//! `--allow-cannot-tell`, and a violation still exits 1.

use serde_json::{json, Value as Json};
use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::util::{agentsim, root};

const OTEL_SEQUENCED: &str = "scenarios/traces/otel/tool_sequenced.json";

fn code(args: &[&str]) -> (Option<i32>, String) {
    let out = agentsim(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `agentsim detect - ARGS` with `input` on stdin.
fn detect_stdin(input: &[u8], args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentsim"))
        .current_dir(root())
        .args(["detect", "-"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run agentsim");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}

#[test]
fn an_undecidable_gate_exits_2_with_the_reason() {
    let (c, err) = code(&[
        "detect",
        OTEL_SEQUENCED,
        "--from",
        "otel",
        "--fail-on",
        "A3",
    ]);
    assert_eq!(c, Some(2), "{err}");
    assert!(
        err.contains("--fail-on A3: cannot tell (undecidable: nothing retracted that the spans"),
        "{err}"
    );
    let lg = "scenarios/traces/langgraph/deerflow_3123.sqlite";
    let (c, err) = code(&["detect", lg, "--from", "langgraph", "--fail-on", "A2"]);
    assert_eq!(c, Some(2), "{err}");
    assert!(err.contains("checkpoints carry no tool registry"), "{err}");
    // A decided anomaly of the same trace still gates normally.
    let (c, err) = code(&[
        "detect",
        OTEL_SEQUENCED,
        "--from",
        "otel",
        "--fail-on",
        "A6",
    ]);
    assert_eq!(c, Some(0), "{err}");
    // Its A1 is not "none": the trace shows no memory operation at all.
    let (c, err) = code(&[
        "detect",
        OTEL_SEQUENCED,
        "--from",
        "otel",
        "--fail-on",
        "A1",
    ]);
    assert_eq!(c, Some(2), "{err}");
    assert!(err.contains("no memory operation seen"), "{err}");
    // A trace whose memory contents were captured decides A1.
    let occ = "scenarios/traces/otel/memory_occ.json";
    let (c, err) = code(&["detect", occ, "--from", "otel", "--fail-on", "A1,A6"]);
    assert_eq!(c, Some(0), "{err}");
}

#[test]
fn allow_cannot_tell_lets_it_pass_and_says_so() {
    let args = [
        "detect",
        OTEL_SEQUENCED,
        "--from",
        "otel",
        "--fail-on",
        "A3",
    ];
    let mut lax = args.to_vec();
    lax.push("--allow-cannot-tell");
    let (c, err) = code(&lax);
    assert_eq!(c, Some(0), "{err}");
    assert!(err.contains("warning: --fail-on A3: cannot tell"), "{err}");
    // A violation is never let through: it exits 1 whatever else cannot be told.
    let reorder = "scenarios/traces/otel/tool_reordering.json";
    for extra in [&[][..], &["--allow-cannot-tell"][..]] {
        let mut a = vec!["detect", reorder, "--from", "otel", "--fail-on", "A3,A6"];
        a.extend_from_slice(extra);
        assert_eq!(code(&a).0, Some(1), "{extra:?}");
    }
}

#[test]
fn an_upper_bound_holds_when_empty_and_cannot_tell_what_it_found() {
    let found = "scenarios/traces/langgraph/stale_read.sqlite";
    let (c, err) = code(&["detect", found, "--from", "langgraph", "--fail-on", "A1"]);
    assert_eq!(c, Some(2), "{err}");
    assert!(
        err.contains("cannot tell (upper bound: reads are every state key"),
        "{err}"
    );
    let clean = "scenarios/traces/langgraph/stale_read_fixed.sqlite";
    let (c, err) = code(&["detect", clean, "--from", "langgraph", "--fail-on", "A1"]);
    assert_eq!(c, Some(0), "{err}");
}

#[test]
fn an_empty_history_cannot_tell_anything() {
    let out = detect_stdin(b"", &["--fail-on", "A1"]);
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(text.contains("-: 0 records"), "{text}");
    assert!(
        text.contains("A1 stale-generation: cannot tell (empty input), none found"),
        "{text}"
    );
    assert!(
        text.contains("L1_struct: cannot tell (empty input)"),
        "{text}"
    );
    assert!(
        text.contains("level: L0..L4 (cannot tell A1, A2, A3, A6)"),
        "{text}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--fail-on A1: cannot tell (empty input)"),
        "{err}"
    );
    // Without a gate the report is all there is: exit 0.
    let out = detect_stdin(b"", &["--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    let empty = json!({ "verdict": "cannot_tell", "reason": { "kind": "empty_input" } });
    for a in ["A1", "A2", "A3", "A4", "A6"] {
        assert_eq!(v["verdicts"][a], empty, "{a}");
    }
    assert_eq!(v["level_range"], json!({ "low": 0, "high": 4 }));
    // The stream says the same.
    let out = detect_stdin(b"", &["--stream", "--fail-on", "A2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).contains("level: L0..L4"), "{}", stdout(&out));
}

#[test]
fn the_text_report_gives_each_verdict_and_a_level_range() {
    let out = agentsim(&["detect", OTEL_SEQUENCED, "--from", "otel"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for line in [
        "A1 stale-generation: cannot tell (undecidable: no memory operation seen",
        "A6 tool-effect reordering: holds\n",
        "A3 causal-cascade: cannot tell (undecidable: nothing retracted that the spans show: \
         a run whose results a workflow discards without an ERROR span leaves no trace), none \
         found\n",
        "exhibits: {}\nlevel: L0..L4 (cannot tell A1, A2, A3)\n",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    let out = agentsim(&["detect", "scenarios/histories/a6_tool_reordering.jsonl"]);
    let text = stdout(&out);
    assert!(
        text.contains("A6 tool-effect reordering: violated, 1 witness\n"),
        "{text}"
    );
    assert!(
        text.contains("level: L2 (no A1, A3; exhibits A6)\n"),
        "{text}"
    );
}

#[test]
fn json_carries_the_three_values_as_data() {
    let out = agentsim(&["detect", OTEL_SEQUENCED, "--from", "otel", "--json"]);
    let v: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["verdicts"]["A6"], json!({ "verdict": "holds" }));
    assert_eq!(v["verdicts"]["A3"]["verdict"], "cannot_tell");
    assert_eq!(v["verdicts"]["A3"]["reason"]["kind"], "undecidable");
    assert_eq!(
        v["verdicts"]["A3"]["reason"]["detail"],
        "nothing retracted that the spans show: a run whose results a workflow discards \
         without an ERROR span leaves no trace"
    );
    assert_eq!(v["level_range"], json!({ "low": 0, "high": 4 }));
    // The keys that were there stay, with their meaning: what the detector found.
    assert_eq!(v["level"], json!(4));
    assert_eq!(v["exhibits"], json!([]));
    let out = agentsim(&[
        "detect",
        "scenarios/histories/a6_tool_reordering.jsonl",
        "--json",
    ]);
    let v: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["verdicts"]["A6"], json!({ "verdict": "violated" }));
    assert_eq!(v["verdicts"]["A4"]["reason"]["kind"], "undecidable");
    assert_eq!(v["level_range"], json!({ "low": 2, "high": 2 }));
}

/// The verdict table fails closed: a saved report that leaves an anomaly out (here the
/// recorder's report without its A3 and A6 entries) makes that anomaly *cannot tell*, naming
/// the reader that gave no verdict, instead of reading the detector's "none" as a verdict.
#[test]
fn a_report_that_leaves_an_anomaly_out_cannot_tell_it() {
    let dir = std::env::temp_dir().join(format!("agentsim-table-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let h = "scenarios/traces/recorder/stale_read.jsonl";
    let full = root().join("scenarios/traces/recorder/stale_read.report.json");
    let mut report: Json = serde_json::from_str(&std::fs::read_to_string(full).unwrap()).unwrap();
    let decidable = report["decidable"].as_object_mut().unwrap();
    decidable.remove("A3");
    decidable.remove("A6");
    let r = dir.join("partial.report.json");
    std::fs::write(&r, serde_json::to_string(&report).unwrap()).unwrap();
    let out = agentsim(&[
        "detect",
        h,
        "--ingest-report",
        r.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let v: Json = serde_json::from_str(&stdout(&out)).unwrap();
    for a in ["A3", "A6"] {
        assert_eq!(v["verdicts"][a]["verdict"], "cannot_tell", "{a}: {v}");
        let why = v["verdicts"][a]["reason"].to_string();
        assert!(
            why.contains("the recorder reader gave no verdict on"),
            "{a}: {why}"
        );
    }
    assert_eq!(v["verdicts"]["A1"]["verdict"], "violated", "{v}");
    std::fs::remove_dir_all(&dir).unwrap();
}
