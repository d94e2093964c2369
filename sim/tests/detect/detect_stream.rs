//! `agentsim detect --stream` and the bounded outputs of `detect`: a growing
//! file is followed and each witness printed when its record arrives, stdin works, the stream's
//! counts equal the batch run's, a read older than the window is exit 2 naming the line,
//! `--max-witnesses` bounds a quadratic witness list and says how much was left out, and a
//! closed stdout ends the run quietly. The detectors are tested in `models/tests/`.

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::agentsim;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_agentsim")
}

fn sample(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/histories")
        .join(name);
    p.to_str().expect("utf-8").to_owned()
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentsim-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// One record line: `agent` reads `c` at `read_time`, writes `c` = `value` at `write_time`.
fn rec(agent: u32, read_time: u64, write_time: u64, value: u64) -> String {
    rec_named(agent, read_time, write_time, &format!("v{value}"))
}

/// [`rec`] with the value's name given.
fn rec_named(agent: u32, read_time: u64, write_time: u64, value: &str) -> String {
    format!(
        "{{\"agent\":\"a{agent}\",\"read_set\":[\"c\"],\"read_values\":{{}},\
         \"read_time\":{read_time},\"write_set\":[\"c\"],\"write_values\":{{\"c\":\"{value}\"}},\
         \"write_time\":{write_time}}}"
    )
}

/// The stream's closing object (the last line of `--json` output).
fn end(stdout: &[u8]) -> Value {
    let text = String::from_utf8_lossy(stdout);
    let last = text.lines().last().expect("a last line");
    serde_json::from_str::<Value>(last).expect("JSON")["end"].clone()
}

#[test]
fn stream_counts_equal_the_batch_run_on_every_sample() {
    for name in [
        "a1_stale_generation.jsonl",
        "a2_phantom_tool.jsonl",
        "a3_causal_cascade.jsonl",
        "a4_split_view.jsonl",
        "a6_tool_reordering.jsonl",
        "clean.jsonl",
        "l1_struct_witness.jsonl",
    ] {
        let path = sample(name);
        let batch = agentsim(&["detect", &path, "--json", "--residue"]);
        assert_eq!(batch.status.code(), Some(0), "{name}");
        let b: Value = serde_json::from_slice(&batch.stdout).expect("JSON");
        let args = [
            "detect",
            "--stream",
            &path,
            "--json",
            "--residue",
            "--idle-ms",
            "0",
        ];
        let out = agentsim(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let e = end(&out.stdout);
        for (list, n) in b["anomalies"].as_object().expect("object") {
            let n = n.as_array().expect("array").len();
            assert_eq!(e["witnesses"][list], n, "{name} {list}");
        }
        let l1 = b["L1_struct"]["violations"]
            .as_array()
            .expect("array")
            .len();
        assert_eq!(e["witnesses"]["L1_struct"], l1, "{name}");
        assert_eq!(e["exhibits"], b["exhibits"], "{name}");
        assert_eq!(e["level"], b["level"], "{name}");
        // One line per witness, then the end.
        let lines = String::from_utf8_lossy(&out.stdout).lines().count() as u64;
        let total: u64 = e["witnesses"]
            .as_object()
            .expect("counts")
            .values()
            .map(|v| v.as_u64().expect("n"))
            .sum();
        assert_eq!(lines, total + 1, "{name}");
    }
}

#[test]
fn a_growing_file_is_followed_and_witnesses_come_as_records_arrive() {
    let dir = temp_dir("stream-follow");
    let path = dir.join("growing.jsonl");
    // Record 1 (a1) reads c at 0 and commits at 2; record 0 (a0) wrote v0 at 1: A1 on line 2.
    std::fs::write(&path, format!("{}\n{}\n", rec(0, 0, 1, 0), rec(1, 0, 2, 1))).expect("write");
    let mut child = Command::new(bin())
        .args([
            "detect",
            "--stream",
            path.to_str().expect("utf-8"),
            "--json",
            "--idle-ms",
            "3000",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first: Value =
        serde_json::from_str(&lines.next().expect("a line").expect("utf-8")).expect("JSON");
    assert_eq!(
        (first["anomaly"].as_str(), first["line"].as_u64()),
        (Some("A1"), Some(2))
    );
    // Now the file grows: a third record, half a line first, then the rest.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    let third = rec(0, 1, 3, 2);
    let (head, tail) = third.split_at(20);
    f.write_all(head.as_bytes()).expect("append");
    f.flush().expect("flush");
    std::thread::sleep(std::time::Duration::from_millis(200));
    writeln!(f, "{tail}").expect("append");
    drop(f);
    let next: Value =
        serde_json::from_str(&lines.next().expect("a line").expect("utf-8")).expect("JSON");
    assert_eq!(
        (next["anomaly"].as_str(), next["line"].as_u64()),
        (Some("A1"), Some(3))
    );
    let rest: Vec<String> = lines.map(|l| l.expect("utf-8")).collect();
    let e: Value = serde_json::from_str(rest.last().expect("the end")).expect("JSON");
    assert_eq!(e["end"]["records"], 3);
    assert_eq!(e["end"]["witnesses"]["A1"], 2);
    assert!(child.wait().expect("wait").success());
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn stdin_streams_and_a_read_beyond_the_window_is_exit_2_with_the_line() {
    let text = format!(
        "{}\n{}\n{}\n",
        rec(0, 0, 1, 0),
        rec(1, 0, 2, 1),
        rec(0, 0, 9, 2)
    );
    let run = |window: &str| {
        let mut child = Command::new(bin())
            .args(["detect", "--stream", "-", "--window-max", window])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("feed");
        child.wait_with_output().expect("wait")
    };
    let ok = run("100");
    assert_eq!(ok.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(
        stdout.starts_with("A1 line 2: record 1 (a1) read c = NULL at t=0"),
        "{stdout}"
    );
    assert!(
        stdout.contains("end of stream: 3 records\nA1: 2 witnesses"),
        "{stdout}"
    );
    let far = run("5");
    assert_eq!(far.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&far.stderr);
    assert!(
        stderr.contains("<stdin>:3: the stream detector cannot take this record"),
        "{stderr}"
    );
    assert!(
        stderr.contains("more than the 5 this detector keeps"),
        "{stderr}"
    );
}

/// 20,000 records, each reading `c` from time 0: reader k has a stale writer in every earlier
/// record of the other agent, ~10⁸ witnesses in all (a quadratic list: 2.4 GB before witness lists were bounded).
#[test]
fn a_quadratic_witness_list_is_counted_and_cut() {
    let dir = temp_dir("detect-quadratic");
    let path = dir.join("quadratic.jsonl");
    let n = 20_000u64;
    let text: String = (0..n)
        .map(|k| rec((k % 2) as u32, 0, k + 1, k) + "\n")
        .collect();
    std::fs::write(&path, text).expect("write");
    let total: u64 = (0..n).map(|k| k.div_ceil(2)).sum();
    let p = path.to_str().expect("utf-8");
    let out = agentsim(&["detect", p, "--json", "--max-witnesses", "3"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let kept: Vec<(u64, u64)> = v["anomalies"]["A1"]
        .as_array()
        .expect("array")
        .iter()
        .map(|w| {
            (
                w["reader"].as_u64().expect("n"),
                w["writer"].as_u64().expect("n"),
            )
        })
        .collect();
    // The first three in completion order: readers 1, 2 (writers 0, 1), then reader 3.
    assert_eq!(kept, [(1, 0), (2, 1), (3, 0)]);
    assert_eq!(v["left_out"]["A1"], total - 3);
    let text = agentsim(&["detect", p, "--max-witnesses", "1"]);
    let text = String::from_utf8_lossy(&text.stdout);
    let want = format!(
        "A1 stale-generation: violated, {total} witnesses (1 listed, {} left out",
        total - 1
    );
    assert!(text.contains(&want), "{text}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_closed_stdout_is_a_quiet_exit() {
    let dir = temp_dir("detect-pipe");
    let path = dir.join("h.jsonl");
    let gen = agentsim(&[
        "bench",
        "history",
        "--records",
        "3000",
        "-o",
        path.to_str().expect("utf-8"),
    ]);
    assert!(gen.status.success());
    for extra in [&[][..], &["--stream", "--idle-ms", "0"][..]] {
        let mut args = vec!["detect", path.to_str().expect("utf-8")];
        args.extend_from_slice(extra);
        let mut child = Command::new(bin())
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut first = String::new();
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        out.read_line(&mut first).expect("a line");
        drop(out); // the reader goes away, as `| head -1` does
        let done = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(0), "{extra:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// A stream of 300,000 fresh values prints the same lines with a window that drops almost
/// every write as with one that keeps them all, on one thread and on two, and its counts are
/// the batch run's: with short values (each its own key, no table) and with values too long
/// for that, which the stream interns and so must compact (past the size at which it compacts
/// rather than let the table grow; the small window makes compaction renumber the few live
/// values and drop the rest). A witness found after a compaction names its values by the
/// renumbered ids, so a wrong renumbering shows as a wrong value name.
#[test]
fn a_compacted_value_table_changes_no_line() {
    a_long_stream_of_fresh_values_is_the_same_in_any_window(|k| format!("v{k}"));
    a_long_stream_of_fresh_values_is_the_same_in_any_window(|k| format!("a-long-value-{k:08}"));
}

fn a_long_stream_of_fresh_values_is_the_same_in_any_window(name: fn(u64) -> String) {
    let dir = temp_dir(&format!("stream-compact-{}", name(0).len()));
    let path = dir.join("fresh.jsonl");
    let mut text = String::new();
    for k in 0..300_000u64 {
        // Every 997th record reads before the previous write: one A1 witness each.
        let read_time = if k % 997 == 996 { k - 1 } else { k + 1 };
        text.push_str(&rec_named((k % 5) as u32, read_time, k + 1, &name(k)));
        text.push('\n');
    }
    std::fs::write(&path, &text).expect("write history");
    let path = path.to_str().expect("utf-8");
    let run = |window: &str, threads: &str| {
        let args = [
            "detect",
            "--stream",
            path,
            "--json",
            "--idle-ms",
            "0",
            "--max-witnesses",
            "1000",
            "--window-max",
            window,
            "--threads",
            threads,
        ];
        let out = agentsim(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let all = run("1000000", "2");
    let e = end(&all);
    assert_eq!(e["records"], 300_000);
    assert_eq!(e["witnesses"]["A1"], 300_000 / 997);
    let late = format!("\"{}\"", name(997 * 300 - 2));
    assert!(String::from_utf8_lossy(&all).contains(&late), "{late}");
    assert!(all == run("4", "2"), "window 4, 2 threads");
    assert!(all == run("4", "1"), "window 4, 1 thread");
    let batch = agentsim(&["detect", path, "--json", "--max-witnesses", "1000"]);
    let b: Value = serde_json::from_slice(&batch.stdout).expect("JSON");
    let n = b["anomalies"]["A1"].as_array().expect("array").len();
    assert_eq!(e["witnesses"]["A1"], n);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// `--stream` reads a history as it grows; a mapping or an MCP log cannot apply to it, so each
/// is refused with exit 2 rather than silently ignored.
#[test]
fn stream_refuses_a_mapping_or_an_mcp_log() {
    let history = sample("a1_stale_generation.jsonl");
    for flag in ["--tool-memory", "--mcp-log"] {
        let out = agentsim(&["detect", &history, "--stream", flag, &history]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
        assert!(
            stderr.contains(flag) && stderr.contains("--stream"),
            "{flag}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
