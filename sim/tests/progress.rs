//! Progress on stderr for the seeded commands (issue 20): `--progress` prints lines with the
//! trials done of the total, the rate and the time left, and a closing line; stdout is the
//! same bytes with and without it (the trials run in chunks, aggregated in trial order); a
//! non-terminal stderr without `--progress` gets nothing.

use std::process::{Command, Output};

fn agentsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentsim"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("run agentsim")
}

#[test]
fn progress_lines_go_to_stderr_and_leave_stdout_alone() {
    let base = [
        "simulate",
        "scenarios/edit-review.toml",
        "--trials",
        "300",
        "--threads",
        "2",
        "--json",
    ];
    let plain = agentsim(&base);
    assert_eq!(plain.status.code(), Some(0));
    // Not a terminal, no --progress: silent.
    assert!(
        plain.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let watched = agentsim(&[&base[..], &["--progress"]].concat());
    assert_eq!(watched.status.code(), Some(0));
    assert_eq!(
        watched.stdout, plain.stdout,
        "progress changes no byte of stdout"
    );
    let err = String::from_utf8_lossy(&watched.stderr);
    let first = err.lines().next().unwrap_or("");
    assert!(first.starts_with("simulate: "), "{err}");
    assert!(
        first.contains("/300 trials (") && first.contains("trials/s, about"),
        "{err}"
    );
    assert!(err.contains("simulate: done, 300 trials in "), "{err}");
    let quiet = agentsim(&[&base[..], &["--quiet"]].concat());
    assert!(quiet.stderr.is_empty());
    assert_eq!(quiet.stdout, plain.stdout);
    let both = agentsim(&[&base[..], &["--quiet", "--progress"]].concat());
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn seeded_experiments_report_against_their_total() {
    let args = ["twins", "--trials", "20", "--progress", "--json"];
    let out = agentsim(&args);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    // Every twin runs both sides: the total is twins × 2 × trials.
    let line = err.lines().next().unwrap_or("");
    assert!(
        line.starts_with("twins: ") && line.contains(" trials ("),
        "{err}"
    );
    let plain = agentsim(&["twins", "--trials", "20", "--json"]);
    assert_eq!(out.stdout, plain.stdout);
}

#[test]
fn stack_runs_report_progress_against_their_total() {
    // Two stacks over vanilla on the four lattice twins: 4 × (2 + 1) × 20 trials.
    let base = [
        "twins",
        "--runtime",
        "lock,sequencer",
        "--trials",
        "20",
        "--json",
    ];
    let out = agentsim(&[&base[..], &["--progress"]].concat());
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("twins: done, 240 trials"), "{err}");
    assert_eq!(out.stdout, agentsim(&base).stdout);
    // Two non-vanilla stacks and the baseline on the three workloads: 3 × 3 × 20.
    let base = [
        "workloads",
        "--runtime",
        "vanilla,lock,ssi",
        "--trials",
        "20",
        "--json",
    ];
    let out = agentsim(&[&base[..], &["--progress"]].concat());
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("workloads: done, 180 trials"), "{err}");
    assert_eq!(out.stdout, agentsim(&base).stdout);
}
