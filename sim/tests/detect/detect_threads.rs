//! `agentsim detect --threads N`: the same bytes whatever the thread count.
//!
//! The reader parses blocks of lines on N threads and merges them in line order; this pins
//! that nothing of it shows: the report (`--json` and text), the stream's lines, and the
//! first error of a bad file (its line, column and key) are byte-identical for 1, 2, 3 and 7
//! threads, on a generated history of several blocks. A pass says the thread count does
//! not change these outputs; the reader's own agreement tests are `models/tests/jsonl_fast.rs`.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::agentsim;

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentsim-threads-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// 20,000 records of the benchmark workload (about 8 MB: several blocks).
fn history(dir: &Path) -> PathBuf {
    let path = dir.join("h.jsonl");
    let p = path.to_str().expect("utf-8 path");
    let out = agentsim(&["bench", "history", "--records", "20000", "-o", p]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

/// Stdout of `detect` with `args` and each thread count, checked equal; returns it.
fn same_for_all_threads(args: &[&str], code: i32) -> Output {
    let mut first: Option<Output> = None;
    for threads in ["1", "2", "3", "7"] {
        let mut a = args.to_vec();
        a.extend(["--threads", threads]);
        let out = agentsim(&a);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{threads}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        match &first {
            None => first = Some(out),
            Some(f) => {
                assert!(
                    f.stdout == out.stdout,
                    "stdout differs at {threads} threads"
                );
                assert_eq!(f.stderr, out.stderr, "stderr differs at {threads} threads");
            }
        }
    }
    first.expect("four runs")
}

#[test]
fn reports_streams_and_errors_are_the_same_bytes_for_every_thread_count() {
    let dir = temp_dir("same");
    let h = history(&dir);
    let p = h.to_str().expect("utf-8 path");
    let json = same_for_all_threads(&["detect", p, "--json"], 0);
    assert!(json.stdout.len() > 1000);
    same_for_all_threads(&["detect", p], 0);
    let stream = same_for_all_threads(&["detect", "--stream", p, "--idle-ms", "0", "--json"], 0);
    assert!(String::from_utf8_lossy(&stream.stdout).contains("\"end\""));

    // A bad line late in the file, and one early: the early one is reported, at its line.
    let text = std::fs::read_to_string(&h).expect("history");
    let mut lines: Vec<&str> = text.lines().collect();
    let late = lines[17_000].replacen("\"agent\"", "\"colour\":1,\"agent\"", 1);
    lines[17_000] = &late;
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, lines.join("\n") + "\n").expect("write");
    let b = bad.to_str().expect("utf-8 path");
    let err = same_for_all_threads(&["detect", b, "--json"], 2);
    let stderr = String::from_utf8_lossy(&err.stderr);
    assert!(
        stderr.contains("bad.jsonl:17001:2: key `colour`: unknown key"),
        "{stderr}"
    );
    let early = lines[9_000].replacen("\"read_time\":", "\"read_time\":-", 1);
    lines[9_000] = &early;
    std::fs::write(&bad, lines.join("\n") + "\n").expect("write");
    let err = same_for_all_threads(&["detect", b, "--json"], 2);
    let stderr = String::from_utf8_lossy(&err.stderr);
    assert!(stderr.contains("bad.jsonl:9001:"), "{stderr}");
    assert!(stderr.contains("key `read_time`"), "{stderr}");
    let err = same_for_all_threads(&["detect", "--stream", b, "--idle-ms", "0"], 2);
    assert!(String::from_utf8_lossy(&err.stderr).contains("bad.jsonl:9001:"));
    assert_eq!(
        agentsim(&["detect", p, "--threads", "0"]).status.code(),
        Some(2)
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}
