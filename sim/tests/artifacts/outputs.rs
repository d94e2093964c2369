//! The one output writer, seen from the command line: a directory target is refused before
//! any work, `-` and `/dev/stdout` are stdout, a symlink is written through, a closed stdout
//! is a quiet exit for every command, and an experiment command writes tables only under
//! `--out`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{agentsim, root};

const LINE: &str =
    "scenario=scenarios/examples/edit-review.toml runtime=vanilla seed=1 trial=0 schedule=S1:39:-";

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentsim-outputs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_directory_target_is_refused_before_any_work() {
    let d = scratch("dir");
    let ds = d.to_str().unwrap();
    for args in [
        vec!["replay", LINE, "--history-out", ds],
        vec!["check", "--property", "A1", "--trace-out", ds],
        vec![
            "simulate",
            "scenarios/examples/edit-review.toml",
            "--record-out",
            ds,
        ],
    ] {
        let out = agentsim(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: worked before refusing");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("is a directory"), "{args:?}: {err}");
        assert!(names(&d).is_empty(), "{args:?} left {:?}", names(&d));
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn stdout_and_links_are_written_through() {
    let dash = agentsim(&["replay", LINE, "--history-out", "-", "--json"]);
    let dev = agentsim(&["replay", LINE, "--history-out", "/dev/stdout", "--json"]);
    assert_eq!(dash.status.code(), Some(0));
    assert_eq!(dev.status.code(), Some(0));
    assert_eq!(dash.stdout, dev.stdout);
    assert!(String::from_utf8_lossy(&dash.stdout).contains("\"agent\":\"editor\""));

    let d = scratch("link");
    let real = d.join("real.jsonl");
    std::fs::write(&real, b"old").unwrap();
    let link = d.join("link.jsonl");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = agentsim(&["replay", LINE, "--history-out", link.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains("editor"));
    assert_eq!(names(&d), ["link.jsonl", "real.jsonl"]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_closed_stdout_is_a_quiet_exit() {
    for args in [
        vec!["lattice"],
        vec!["replay", LINE],
        vec!["twins", "--trials", "3"],
        vec!["check", "--property", "none"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentsim"))
            .args(&args)
            .current_dir(root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 1];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        // The reader is gone now (the pipe's read end was dropped).
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn experiment_commands_write_tables_only_under_out() {
    let d = scratch("tables");
    let run = |extra: &[&str]| {
        let mut args = vec!["twins", "--trials", "2", "--seed", "5"];
        args.extend_from_slice(extra);
        Command::new(env!("CARGO_BIN_EXE_agentsim"))
            .args(&args)
            .current_dir(&d)
            .output()
            .unwrap()
    };
    let plain = run(&[]);
    assert_eq!(plain.status.code(), Some(0));
    assert!(names(&d).is_empty(), "wrote {:?} without --out", names(&d));
    let out = run(&["--out", "here"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        names(&d.join("here/tables")),
        ["twins.csv", "twins.json", "twins.md"]
    );
    assert_eq!(plain.stdout, out.stdout);
    std::fs::write(d.join("file"), b"").unwrap();
    let bad = run(&["--out", "file"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(bad.stdout.is_empty());
    std::fs::remove_dir_all(&d).unwrap();
}

/// `view`'s page data escapes every name once, as the text reports do (a bidi control in an
/// agent's name is `\u{202e}` in the lanes' table and in the report alike), and an empty
/// history's page says *cannot tell* instead of listing no anomaly.
#[test]
fn view_escapes_names_once_and_shows_an_empty_history_undecided() {
    let d = scratch("view-text");
    let hist = d.join("bidi.jsonl");
    std::fs::write(
        &hist,
        concat!(
            r#"{"agent":"ed\u202eitor","read_set":["doc"],"read_values":{"doc":null},"#,
            r#""read_time":0,"write_set":["doc"],"write_values":{"doc":"v1"},"write_time":1}"#,
            "\n"
        ),
    )
    .unwrap();
    let page = d.join("bidi.html");
    let out = agentsim(&["view", hist.to_str().unwrap(), "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains('\u{202e}'), "a raw bidi control on the page");
    // JSON writes the escape's backslash doubled.
    assert!(
        html.contains(r#""agents":["ed\\u{202e}itor"]"#),
        "the lane's name"
    );
    let empty = d.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let page = d.join("empty.html");
    let out = agentsim(&[
        "view",
        empty.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(r#""undecided":"cannot tell: "#),
        "the page decides nothing"
    );
}
