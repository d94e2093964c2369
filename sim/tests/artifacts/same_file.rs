//! No output is an input, no two outputs are one file, and an output folder holds one run.
//!
//! Every command with an output flag, table-driven: the clash is found by any name of the file
//! (the same path, a `./` spelling, a hard link, a symbolic link), exits 2 naming the file and
//! both roles, and leaves the input as it was. `simulate --trace-out` refuses a folder used
//! before, and with `--force` clears only the files its manifest lists.

use std::fs;
use std::path::{Path, PathBuf};

use crate::util::{agentsim, root};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentsim-same-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Copies `rel` (under the repository) into `dir` as `name`.
fn copy(rel: &str, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    fs::copy(root().join(rel), &to).unwrap();
    to
}

/// The ways to name `file` again: the path itself, `./`, `sub/../`, a hard and a symbolic link.
fn aliases(file: &Path) -> Vec<PathBuf> {
    let dir = file.parent().unwrap();
    let name = file.file_name().unwrap().to_str().unwrap();
    fs::create_dir_all(dir.join("sub")).unwrap();
    let hard = dir.join(format!("hard-{name}"));
    let soft = dir.join(format!("soft-{name}"));
    let _ = fs::remove_file(&hard);
    let _ = fs::remove_file(&soft);
    fs::hard_link(file, &hard).unwrap();
    std::os::unix::fs::symlink(file, &soft).unwrap();
    vec![
        file.to_owned(),
        dir.join(".").join(name),
        dir.join("sub/..").join(name),
        hard,
        soft,
    ]
}

/// One clash: the command line with `{}` where the alias goes, the input it must keep, and
/// the words of the message.
struct Case {
    args: Vec<String>,
    input: PathBuf,
    says: &'static str,
}

fn run_case(case: &Case, alias: &Path) {
    let before = fs::read(&case.input).unwrap();
    let a = alias.to_str().unwrap();
    let args: Vec<String> = case.args.iter().map(|s| s.replace("{}", a)).collect();
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = agentsim(&argv);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{argv:?}: {err}");
    assert!(err.contains(case.says), "{argv:?}: {err}");
    assert!(
        err.contains(a),
        "{argv:?}: the message names the file: {err}"
    );
    assert!(out.stdout.is_empty(), "{argv:?} printed before refusing");
    assert_eq!(
        fs::read(&case.input).unwrap(),
        before,
        "{argv:?} changed the input"
    );
}

fn s(x: &Path) -> String {
    x.to_str().unwrap().to_owned()
}

#[test]
fn every_command_refuses_an_output_that_is_an_input() {
    let d = scratch("inputs");
    let trace = copy(
        "scenarios/traces/otel/memory_lost_update.json",
        &d,
        "t.json",
    );
    let db = copy(
        "scenarios/traces/langgraph/double_write.sqlite",
        &d,
        "g.sqlite",
    );
    let sc = copy("scenarios/examples/edit-review.toml", &d, "s.toml");
    let rec_sc = copy(
        "scenarios/recordings/edit-review-recorded.toml",
        &d,
        "r.toml",
    );
    let rec = copy(
        "scenarios/recordings/edit-review.jsonl",
        &d,
        "edit-review.jsonl",
    );
    let split = copy("scenarios/split-view.toml", &d, "v.toml");
    let sweep = copy("scenarios/sweeps/contention.toml", &d, "w.toml");
    let cpl_sc = copy("scenarios/cpl/stale-evidence.toml", &d, "c.toml");
    let guards = d.join(
        toml::from_str::<toml::Table>(&fs::read_to_string(&cpl_sc).unwrap()).unwrap()["cpl"]
            ["guards"]
            .as_str()
            .unwrap(),
    );
    fs::create_dir_all(guards.parent().unwrap()).unwrap();
    fs::copy(root().join("scenarios/cpl/code_review.cpl"), &guards).unwrap();
    let line = format!(
        "scenario={} runtime=vanilla seed=1 trial=0 schedule=S1:39:-",
        s(&sc)
    );
    let line_file = d.join("replay.txt");
    fs::write(&line_file, format!("{line}\n")).unwrap();
    let v = |xs: &[&str]| xs.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    let both = "is both an input";
    let cases = [
        Case {
            args: v(&["ingest", "otel", &s(&trace), "-o", "{}"]),
            input: trace.clone(),
            says: "is both an input (the trace) and the output of -o",
        },
        Case {
            args: v(&["ingest", "otel", &s(&trace), "--report", "{}"]),
            input: trace.clone(),
            says: "is both an input (the trace) and the output of --report",
        },
        Case {
            args: v(&["ingest", "langgraph", &s(&db), "-o", "{}"]),
            input: db.clone(),
            says: "is both an input (the database) and the output of -o",
        },
        Case {
            args: v(&["replay", &line, "--history-out", "{}"]),
            input: sc.clone(),
            says: "is both an input (the scenario) and the output of --history-out",
        },
        Case {
            args: v(&["view", &line, "-o", "{}"]),
            input: sc.clone(),
            says: "is both an input (the scenario) and the output of -o",
        },
        Case {
            args: v(&["replay", &s(&line_file), "--history-out", "{}"]),
            input: line_file.clone(),
            says: "is both an input (the replay line)",
        },
        Case {
            args: v(&["simulate", &s(&sc), "--record-out", "{}"]),
            input: sc.clone(),
            says: both,
        },
        Case {
            args: v(&["simulate", &s(&rec_sc), "--record-out", "{}"]),
            input: rec.clone(),
            says: "is both an input (the scenario's recording) and the output of --record-out",
        },
        Case {
            args: v(&["simulate", &s(&sc), "--shard", "1/2", "--partial-out", "{}"]),
            input: sc.clone(),
            says: both,
        },
        Case {
            args: v(&["sweep", &s(&sweep), "--shard", "1/2", "--partial-out", "{}"]),
            input: sweep.clone(),
            says: "is both an input (the sweep file) and the output of --partial-out",
        },
        Case {
            args: v(&[
                "split-view",
                &s(&split),
                "--shard",
                "1/2",
                "--partial-out",
                "{}",
            ]),
            input: split.clone(),
            says: both,
        },
        Case {
            args: v(&[
                "cpl",
                "twin",
                &s(&cpl_sc),
                "--shard",
                "1/2",
                "--partial-out",
                "{}",
            ]),
            input: guards.clone(),
            says: "is both an input (the scenario's guards)",
        },
    ];
    for case in &cases {
        for alias in aliases(&case.input) {
            run_case(case, &alias);
        }
    }
    // merge --out DIR writes into DIR/tables: a partial there is inside the output folder.
    fs::create_dir_all(d.join("m/tables")).unwrap();
    let part = copy(
        "scenarios/traces/otel/memory_lost_update.json",
        &d.join("m/tables"),
        "p.json",
    );
    run_case(
        &Case {
            args: v(&["merge", &s(&part), "--out", "{}"]),
            input: part.clone(),
            says: "is an input (a partial) inside the output folder",
        },
        &d.join("m"),
    );
    fs::remove_dir_all(&d).unwrap();
}

#[test]
fn two_outputs_may_not_be_one_file() {
    let d = scratch("outputs");
    let trace = root().join("scenarios/traces/otel/memory_lost_update.json");
    let new = d.join("h.jsonl");
    for second in [new.clone(), d.join("./h.jsonl"), d.join("sub/../h.jsonl")] {
        fs::create_dir_all(d.join("sub")).unwrap();
        let out = agentsim(&[
            "ingest",
            "otel",
            &s(&trace),
            "-o",
            &s(&new),
            "--report",
            &s(&second),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("is the output of both -o and --report"),
            "{err}"
        );
        assert!(!new.exists(), "written before refusing");
    }
    for args in [
        vec![
            "check",
            "--abstract",
            "--property",
            "A1",
            "--trace-out",
            "{}",
            "--history-out",
            "{}",
        ],
        vec![
            "simulate",
            "scenarios/examples/edit-review.toml",
            "--record-out",
            "{}",
            "--trace-out",
            "{}",
        ],
    ] {
        let args: Vec<String> = args.iter().map(|a| a.replace("{}", &s(&new))).collect();
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = agentsim(&argv);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {err}");
        assert!(err.contains("is the output of both"), "{argv:?}: {err}");
    }
    // Stdout and devices are written in place, as before.
    let out = agentsim(&[
        "ingest",
        "otel",
        &s(&trace),
        "-o",
        "/dev/null",
        "--report",
        "/dev/null",
    ]);
    assert_eq!(out.status.code(), Some(0));
    fs::remove_dir_all(&d).unwrap();
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn simulate(dir: &Path, trials: &str, force: bool) -> std::process::Output {
    let mut args = vec![
        "simulate",
        "scenarios/examples/edit-review.toml",
        "--trials",
        trials,
        "--threads",
        "1",
        "--trace-out",
        dir.to_str().unwrap(),
    ];
    if force {
        args.push("--force");
    }
    agentsim(&args)
}

#[test]
fn a_trace_folder_holds_one_run() {
    let d = scratch("traces");
    let dir = d.join("t");
    assert_eq!(simulate(&dir, "4", false).status.code(), Some(0));
    let first = listing(&dir);
    assert_eq!(first.len(), 6, "{first:?}");
    assert!(first.contains(&".agentsim-manifest".to_owned()));
    // Used before: refused without --force, nothing touched.
    let out = simulate(&dir, "2", false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is not empty") && err.contains("--force"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(listing(&dir), first);
    // With --force the old run's files go, the new run's alone are there.
    assert_eq!(simulate(&dir, "2", true).status.code(), Some(0));
    assert_eq!(
        listing(&dir),
        [
            ".agentsim-manifest",
            "replay.txt",
            "trial-00000.jsonl",
            "trial-00001.jsonl"
        ]
    );
    // A file agentsim did not write: --force refuses too, and removes nothing.
    fs::write(dir.join("notes.txt"), "mine").unwrap();
    let before = listing(&dir);
    let out = simulate(&dir, "3", true);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("notes.txt") && err.contains("did not write"),
        "{err}"
    );
    assert_eq!(listing(&dir), before);
    assert_eq!(fs::read_to_string(dir.join("notes.txt")).unwrap(), "mine");
    // A folder with no manifest at all is the user's: --force refuses it.
    let user = d.join("user");
    fs::create_dir_all(&user).unwrap();
    fs::write(user.join("trial-00000.jsonl"), "precious").unwrap();
    let out = simulate(&user, "1", true);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        fs::read_to_string(user.join("trial-00000.jsonl")).unwrap(),
        "precious"
    );
    // An empty folder is fine without --force.
    let empty = d.join("empty");
    fs::create_dir_all(&empty).unwrap();
    assert_eq!(simulate(&empty, "1", false).status.code(), Some(0));
    fs::remove_dir_all(&d).unwrap();
}
