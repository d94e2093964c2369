//! The docs and the CLI agree: every `agentsim …` command in a code block of README.md and
//! docs/*.md runs and exits as documented (0 or 1, or 2 where the block shows the `error:`
//! it prints), never 2 for an unknown flag or value; and every name the docs list (reproduce
//! steps, schedulers, runtimes, properties, anomalies) is one the CLI accepts.
//!
//! Commands run in a temporary folder holding a link to `scenarios/`, so what they write
//! (`results/`, `h.jsonl`, partials) never touches the repository. A command with a
//! placeholder (`FILE`, `[--json]`, `…`) is a synopsis, not a command, and is skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::root;

/// Commands that take minutes as written, each with the reason; they get [`LONG_SECONDS`] and
/// are then stopped: by then the arguments were parsed (clap refuses in milliseconds), which
/// is what this test checks of them. Their results are pinned by `reproduce --check`.
const KNOWN_LONG: &[(&str, &str)] = &[
    (
        "agentsim reproduce",
        "every table and figure: about a minute on an idle machine",
    ),
    (
        "agentsim matrix",
        "exhaustive checks of every runtime: tens of seconds",
    ),
    ("agentsim bench", "benchmarks repeat on purpose"),
    ("agentsim serve", "a receiver: it runs until SIGTERM"),
    (
        "agentsim lattice",
        "exhaustive searches of the 16 lattice points",
    ),
    (
        "agentsim check --abstract",
        "the every-length abstract check",
    ),
    (
        "--trials 1000000",
        "the cluster example: a million trials per shard",
    ),
    (
        "agentsim twins --runtime",
        "1000 trials per side on every twin",
    ),
    (
        "agentsim check --runtime validate-preds+cascade",
        "4 agents of default bounds with retraction: 9.2 M states, 13 s",
    ),
];
const LONG_SECONDS: u64 = 3;
/// Commands that cannot run alone as written, by chapter and exact command line (not by line
/// number, which every edit of the chapter moves), each with the reason.
const SKIP: &[(&str, &str, &str)] = &[(
    "ingest.md",
    "agentsim detect h.jsonl",
    "reads the h.jsonl that a synopsis line above it writes (the worked LangGraph example \
     that also runs it is held by the ingest tests)",
)];

/// A command not known to be long gets this long before the test fails it.
const SECONDS: u64 = 60;

/// Smaller variants of sampling commands whose sample size is not what the example shows
/// (the flags are the same, so the CLI is exercised the same way).
const SMALLER: &[(&str, &str)] = &[
    ("--trials 30000", "--trials 300"),
    ("--trials 20000", "--trials 200"),
    ("trials 0..10000", "trials 0..100"),
];

/// One documented command: where, the command line, and whether the block shows it failing.
struct Doc {
    at: String,
    line: String,
    documented_error: bool,
}

fn documented_commands() -> Vec<Doc> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut in_block = false;
        for (i, l) in lines.iter().enumerate() {
            if l.starts_with("```") {
                in_block = !in_block;
                continue;
            }
            let Some(cmd) = command(l).filter(|_| in_block) else {
                continue;
            };
            // The block shows the command failing when its output, up to the next command or
            // the block's end, has an `error:` line (stderr comes after what stdout printed);
            // a line ending in `echo "exit $?"` shows its code itself, and `sh` exits 0.
            let documented_error = !cmd.contains("echo \"exit $?\"")
                && lines[i + 1..]
                    .iter()
                    .map(|n| n.trim())
                    .take_while(|n| !n.starts_with("```") && command(n).is_none())
                    .any(|n| n.starts_with("error:"));
            out.push(Doc {
                at: format!("{}:{}", f.file_name().unwrap().to_string_lossy(), i + 1),
                line: cmd,
                documented_error,
            });
        }
    }
    out
}

/// The command on a code-block line, as `agentsim …` with its comment dropped.
fn command(l: &str) -> Option<String> {
    let t = l.trim().trim_start_matches("$ ");
    let rest = [
        "agentsim ",
        "cargo run --release -- ",
        "./target/release/agentsim ",
    ]
    .iter()
    .find_map(|p| t.strip_prefix(p))?;
    // `agentsim serve: listening on …` is a message the program printed, not a command.
    if rest
        .split_whitespace()
        .next()
        .is_some_and(|w| w.ends_with(':'))
    {
        return None;
    }
    let cmd = format!("agentsim {}", rest.split(" # ").next().unwrap().trim());
    Some(cmd.trim_end_matches('&').trim().to_owned())
}

/// A synopsis rather than a command: placeholders, optional parts or continuation lines.
fn is_synopsis(cmd: &str) -> bool {
    cmd.contains('[')
        || cmd.contains('…')
        || cmd.ends_with('\\')
        || cmd
            .split_whitespace()
            .any(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase() || c == '.'))
        || ["TRACE.json", "CHECKPOINTS.sqlite", "FILE", "ID"]
            .iter()
            .any(|p| cmd.contains(p))
}

/// Runs `line` with `sh -c` in `dir`, `agentsim` on the PATH, stopped after `secs` seconds.
fn run(dir: &Path, line: &str, secs: u64) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_agentsim"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("timeout")
        .args(["-s", "KILL", &secs.to_string(), "sh", "-c", line])
        .env("PATH", path)
        .current_dir(dir)
        .output()
        .expect("run sh")
}

fn usage_error(err: &str) -> bool {
    [
        "unexpected argument",
        "invalid value",
        "unrecognized subcommand",
        "no such step",
    ]
    .iter()
    .any(|n| err.contains(n))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentsim-docs-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let link = d.join("scenarios");
    if !link.exists() {
        std::os::unix::fs::symlink(root().join("scenarios"), link).unwrap();
    }
    d
}

#[test]
fn every_documented_command_runs_as_documented() {
    let dir = scratch("commands");
    let docs = documented_commands();
    assert!(docs.len() > 30, "found only {} commands", docs.len());
    let mut failures = Vec::new();
    let skipped = |d: &&Doc| {
        let chapter = d.at.split(':').next().unwrap_or_default();
        SKIP.iter()
            .any(|(file, line, _)| *file == chapter && d.line == *line)
    };
    for d in docs.iter().filter(|d| !is_synopsis(&d.line) && !skipped(d)) {
        let mut line = d.line.clone();
        for (from, to) in SMALLER {
            line = line.replace(from, to);
        }
        let long = KNOWN_LONG.iter().any(|(p, _)| line.contains(p));
        let out = run(&dir, &line, if long { LONG_SECONDS } else { SECONDS });
        let err = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        let fine = match code {
            _ if usage_error(&err) => false,
            Some(2) => d.documented_error,
            Some(0 | 1) => !d.documented_error,
            // Killed by `timeout`: only a known-long command may still be running.
            None | Some(124 | 137) => long,
            Some(_) => false,
        };
        if !fine {
            failures.push(format!("{}: `{line}` exited {code:?}: {err}", d.at));
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every step the docs name (the step table, the sharding chapter) is a step `--only`
/// accepts: the bogus step after it is the one refused.
#[test]
fn every_documented_step_is_accepted() {
    let text = std::fs::read_to_string(root().join("docs/experiments.md")).unwrap();
    let table = text.split("| step | what it writes |").nth(1).unwrap();
    let mut steps: Vec<String> = table
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect();
    steps.extend(["abstract_matrix", "witnesses", "mechanism_twins"].map(String::from));
    assert!(steps.len() >= 14 + 3, "{steps:?}");
    for s in &steps {
        let out = crate::util::agentsim(&["reproduce", "--only", s, "--only", "bogus"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--only bogus: no such step"), "{s}: {err}");
    }
}

/// Every scheduler, runtime, property and anomaly the docs list is accepted where it is used.
#[test]
fn every_documented_name_is_accepted() {
    let sc = "scenarios/examples/edit-review.toml";
    let ok = |args: &[&str]| {
        let out = crate::util::agentsim(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}: {err}");
    };
    for s in ["random", "pct:3"] {
        ok(&["simulate", sc, "--trials", "2", "--scheduler", s]);
    }
    // The runtime table of SPEC §5: the first column's names, and the twin it names.
    let spec = std::fs::read_to_string(root().join("docs/SPEC.md")).unwrap();
    let runtimes: Vec<&str> = spec
        .lines()
        .filter(|l| {
            l.split('|')
                .nth(2)
                .is_some_and(|c| c.trim().starts_with('L'))
        })
        .filter_map(|l| l.split('|').nth(1))
        .flat_map(|c| c.split(','))
        .map(|n| n.trim().trim_matches('`'))
        .filter(|n| !n.is_empty() && !n.contains(' '))
        .chain([
            "causal-no-cascade",
            "lock+sequencer",
            "validate-preds+cascade",
        ])
        .collect();
    assert!(runtimes.len() >= 11, "{runtimes:?}");
    for rt in &runtimes {
        ok(&["simulate", sc, "--trials", "2", "--runtime", rt]);
    }
    for p in [
        "A1",
        "A2",
        "A3",
        "A6",
        "A3_residue",
        "L1_struct",
        "A1_snapshot",
        "all",
        "none",
    ] {
        ok(&[
            "check",
            "--agents",
            "1",
            "--max-ops",
            "1",
            "--allow-cannot-tell",
            "--property",
            p,
        ]);
    }
    ok(&[
        "check",
        "--replicas",
        "1",
        "--max-ops",
        "1",
        "--values",
        "1",
        "--allow-cannot-tell",
        "--property",
        "A4",
    ]);
    for a in ["A1", "A2", "A3", "A6"] {
        ok(&["detect", "scenarios/histories/clean.jsonl", "--fail-on", a]);
    }
    ok(&[
        "detect",
        "scenarios/histories/a4_split_view.jsonl",
        "--fail-on",
        "A4",
    ]);
}
