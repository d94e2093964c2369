//! Progress on stderr for the seeded commands: `--progress` prints lines with the
//! trials done of the total, the rate and the time left, and a closing line; stdout is the
//! same bytes with and without it (the trials run in chunks, aggregated in trial order); a
//! non-terminal stderr without `--progress` gets nothing.

use crate::util::agentsim;

/// Runs `base` plain, with `--progress` and with `--quiet`: all succeed with the same stdout,
/// and only `--progress` writes to the (non-terminal) stderr. Returns that stderr.
fn progress_of(base: &[&str]) -> String {
    let plain = agentsim(base);
    assert_eq!(plain.status.code(), Some(0));
    // Not a terminal, no --progress: silent.
    assert!(
        plain.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let watched = agentsim(&[base, &["--progress"]].concat());
    assert_eq!(watched.status.code(), Some(0));
    assert_eq!(
        watched.stdout, plain.stdout,
        "progress changes no byte of stdout"
    );
    let quiet = agentsim(&[base, &["--quiet"]].concat());
    assert!(quiet.stderr.is_empty());
    assert_eq!(quiet.stdout, plain.stdout);
    String::from_utf8_lossy(&watched.stderr).into_owned()
}

#[test]
fn progress_lines_go_to_stderr_and_leave_stdout_alone() {
    let base = [
        "simulate",
        "scenarios/examples/edit-review.toml",
        "--trials",
        "300",
        "--threads",
        "2",
        "--json",
    ];
    let err = progress_of(&base);
    let first = err.lines().next().unwrap_or("");
    assert!(first.starts_with("simulate: "), "{err}");
    assert!(
        first.contains("/300 trials (") && first.contains("trials/s, about"),
        "{err}"
    );
    assert!(err.contains("simulate: done, 300 trials in "), "{err}");
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

/// `detect FILE` reports the bytes and records done while it reads:
/// stdout is the same bytes with and without it, a non-terminal stderr gets nothing unless
/// asked, and `--stream` (which prints as it reads) refuses it.
#[test]
fn detect_reports_bytes_and_records_read() {
    let dir = std::env::temp_dir().join(format!("agentsim-progress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("h.jsonl");
    let path = file.to_str().expect("utf-8 path");
    let made = agentsim(&["bench", "history", "--records", "5000", "-o", path]);
    assert_eq!(made.status.code(), Some(0));
    let size = std::fs::metadata(&file).expect("written").len();
    let err = progress_of(&["detect", path, "--json"]);
    let first = err.lines().next().unwrap_or("");
    let total = format!("/{:.0} MB (", size as f64 / 1e6);
    assert!(first.starts_with(&format!("detect {path}: ")), "{err}");
    assert!(
        first.contains(&total) && first.contains(" records/s, about "),
        "{err}"
    );
    assert!(
        err.contains(&format!("detect {path}: done, 5000 records in ")),
        "{err}"
    );
    let stream = agentsim(&["detect", "--stream", path, "--idle-ms", "0", "--progress"]);
    assert_eq!(stream.status.code(), Some(2));
    let err = String::from_utf8_lossy(&stream.stderr);
    assert!(
        err.contains("--progress applies to a history read whole"),
        "{err}"
    );
    assert!(stream.stdout.is_empty());
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// The checking commands report per check: `matrix` (each cell, of the total), `matrix
/// --abstract` likewise, `lattice --realize` (each stack checked, with the points realized),
/// and `reproduce` (each step's start and end); stdout is the same bytes with and without.
#[test]
fn matrix_reports_checks_done_of_the_total() {
    let err = progress_of(&["matrix", "--runtime", "vanilla,lock", "--json"]);
    // Two stacks × five columns.
    let first = err.lines().next().unwrap_or("");
    assert!(
        first.starts_with("matrix: ") && first.contains("/10 checks, "),
        "{err}"
    );
    assert!(err.contains("matrix: done, 10 checks in "), "{err}");
    // `--abstract` prints each cell's wall seconds, so only its stderr is compared.
    let out = agentsim(&["matrix", "--abstract", "--agents", "2", "--progress"]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("matrix --abstract: 1/40 checks, "), "{err}");
    assert!(err.contains("matrix --abstract: done, "), "{err}");
}

#[test]
fn lattice_realize_reports_points_realized() {
    let base = ["lattice", "--realize", "--json"];
    let plain = agentsim(&base);
    assert_eq!(plain.status.code(), Some(0));
    // Its one summary line is printed either way; progress lines only when asked.
    let plain_err = String::from_utf8_lossy(&plain.stderr).into_owned();
    assert!(!plain_err.contains("points realized"), "{plain_err}");
    let watched = agentsim(&[&base[..], &["--progress"]].concat());
    assert_eq!(watched.status.code(), Some(0));
    assert_eq!(
        watched.stdout, plain.stdout,
        "progress changes no byte of stdout"
    );
    let err = String::from_utf8_lossy(&watched.stderr);
    let first = err.lines().next().unwrap_or("");
    assert!(
        first.starts_with("lattice --realize: ") && first.contains("/16 points realized, "),
        "{err}"
    );
}

#[test]
fn reproduce_reports_each_step_start_and_end() {
    let base = ["reproduce", "--only", "lattice", "--check"];
    let plain = agentsim(&base);
    assert_eq!(plain.status.code(), Some(0));
    // A fast step gets no line unless asked (the closing file count is printed either way).
    let plain_err = String::from_utf8_lossy(&plain.stderr).into_owned();
    assert!(!plain_err.contains("reproduce: step "), "{plain_err}");
    let watched = agentsim(&[&base[..], &["--progress"]].concat());
    assert_eq!(watched.status.code(), Some(0));
    assert_eq!(
        watched.stdout, plain.stdout,
        "progress changes no byte of stdout"
    );
    let err = String::from_utf8_lossy(&watched.stderr);
    assert!(
        err.starts_with("reproduce: step lattice (1/1) started\n"),
        "{err}"
    );
    assert!(
        err.contains("reproduce: step lattice (1/1) done in "),
        "{err}"
    );
    let quiet = agentsim(&[&base[..], &["--quiet"]].concat());
    assert_eq!(quiet.stdout, plain.stdout);
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("reproduce: step "));
}
