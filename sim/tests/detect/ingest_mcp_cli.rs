//! `agentsim detect --from mcp` and `--from openinference` end to end: on a log of the MCP
//! corpus (the planner called a tool another client had withdrawn, ignoring `list_changed`:
//! A2, decided from the server's registry timeline), and on bad input (exit 2 at file:line).

use serde_json::Value as Json;
use std::io::Write;
use std::process::{Command, Stdio};

/// A log of the corpus's `ignore` run (official MCP SDK, compacted; also a fuzz seed).
const IGNORE: &str = include_str!("../../fuzz/seeds/mcp_log/ignore.jsonl");

fn detect_stdin(from: &str, input: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentsim"))
        .args(["detect", "-", "--from", from, "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn a_tool_withdrawn_under_a_stale_client_is_a2_from_the_mcp_log() {
    let out = detect_stdin("mcp", IGNORE);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Json = serde_json::from_slice(&out.stdout).unwrap();
    let verdict = |a: &str| v["verdicts"][a]["verdict"].as_str().unwrap().to_owned();
    assert_eq!(verdict("A2"), "violated");
    assert_eq!(verdict("A6"), "holds");
    assert_eq!(verdict("A1"), "cannot_tell");
    assert_eq!(verdict("A3"), "cannot_tell");
    assert_eq!(v["ingest"]["counts"]["stale_list_calls"], 1);
    let why = v["ingest"]["decidable"]["A2"]["why"].as_str().unwrap();
    assert!(why.contains("notifications/tools/list_changed"), "{why}");
}

#[test]
fn bad_logs_and_traces_exit_2_at_file_and_line() {
    let bad = IGNORE.replacen("\"dir\":\"send\"", "\"dir\":\"sent\"", 1);
    let out = detect_stdin("mcp", &bad);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("<stdin>:1: dir: expected \"send\" or \"recv\", found \"sent\""),
        "{err}"
    );
    let out = detect_stdin(
        "openinference",
        "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{}]}]}]}",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("<stdin>:1: resourceSpans[0].scopeSpans[0].spans[0]"),
        "{err}"
    );
}
