//! Every number a user gives has a documented limit: the commands
//! of the "Found" list that panicked, aborted or reserved gigabytes now exit 2 naming
//! the flag or the file:line:col and key, before any work; values at the limits run in
//! bounded memory; token tallies saturate instead of wrapping. Each case runs under
//! `prlimit --as` (4 GB of address space) where `prlimit` exists, so a regression that
//! reserves memory up front fails here instead of taking the machine.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// 4 GB of address space for every run.
const AS_LIMIT: &str = "--as=4000000000";

fn agentsim(args: &[&str]) -> Output {
    let bin = env!("CARGO_BIN_EXE_agentsim");
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let limited = Command::new("prlimit")
        .arg(AS_LIMIT)
        .arg("--")
        .arg(bin)
        .args(args)
        .current_dir(root)
        .output();
    match limited {
        Ok(out) => out,
        // No prlimit on this machine: run unlimited (the exit codes are still checked).
        Err(_) => Command::new(bin)
            .args(args)
            .current_dir(root)
            .output()
            .expect("run agentsim"),
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 2, nothing on stdout, and every needle on stderr; never a panic.
fn refused(args: &[&str], needles: &[&str]) {
    let out = agentsim(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in {err}");
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentsim-limits-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A one-agent scenario whose parts are spliced in: `top` after the header, `agent` inside
/// the `[[agents]]` entry, `gen` as the generation's latency.
fn scenario(dir: &Path, name: &str, top: &str, agent: &str, gen: &str) -> String {
    let text = format!(
        "name = \"{name}\"\nruntime = \"vanilla\"\ntrials = 2\nseed = 1\ncells = [\"c\"]\n\
         {top}\n[[agents]]\nname = \"a\"\n{agent}\nscript = [\n  {{ do = \"read\", cells = \
         [\"c\"] }},\n  {{ do = \"generate\", latency_ms = {gen} }},\n  {{ do = \"write\", \
         cells = [\"c\"] }},\n]\n"
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

const SC: &str = "scenarios/examples/edit-review.toml";
const HUGE: &str = "18446744073709551615";

#[test]
fn trial_counts_past_the_limit_exit_two_naming_the_flag() {
    let range = "expected 1..=1000000";
    for n in [HUGE, "100000000", "0"] {
        refused(&["simulate", SC, "--trials", n], &["--trials", range]);
    }
    refused(&["twins", "--trials", HUGE], &["--trials", range]);
    refused(&["workloads", "--trials", HUGE], &["--trials", range]);
    let sweep = "scenarios/sweeps/contention.toml";
    refused(&["sweep", sweep, "--trials", HUGE], &["--trials", range]);
    let cpl = "scenarios/cpl/stale-evidence.toml";
    refused(
        &["cpl", "twin", cpl, "--trials", HUGE],
        &["--trials", range],
    );
    refused(
        &["split-view", "scenarios/split-view.toml", "--trials", HUGE],
        &["--trials", range],
    );
    refused(&["bench", "sim", "--trials", HUGE], &["--trials", range]);
}

#[test]
fn thread_counts_past_the_limit_exit_two_on_every_command() {
    let range = "expected 1..=256";
    let cases: [&[&str]; 7] = [
        &["check", "--threads", "100000"],
        &["matrix", "--threads", "100000"],
        &["simulate", SC, "--threads", "100000"],
        &["twins", "--threads", HUGE],
        &["workloads", "--threads", "0"],
        &[
            "sweep",
            "scenarios/sweeps/contention.toml",
            "--threads",
            "100000",
        ],
        &[
            "cpl",
            "twin",
            "scenarios/cpl/stale-evidence.toml",
            "--threads",
            "100000",
        ],
    ];
    for args in cases {
        refused(args, &["--threads", range]);
    }
}

/// The subcommands `agentsim ARGS --help` lists, as paths from the top.
fn subcommands(prefix: &[String]) -> Vec<Vec<String>> {
    let mut args: Vec<&str> = prefix.iter().map(String::as_str).collect();
    args.push("--help");
    let help = String::from_utf8_lossy(&agentsim(&args).stdout).into_owned();
    let mut out = Vec::new();
    let mut listing = false;
    for line in help.lines() {
        if line.starts_with("Commands:") {
            listing = true;
            continue;
        }
        if listing && !line.starts_with("  ") {
            break;
        }
        if let Some(name) = line.split_whitespace().next().filter(|_| listing) {
            if name != "help" {
                let mut path = prefix.to_vec();
                path.push(name.to_owned());
                out.push(path);
            }
        }
    }
    out
}

/// Every command and subcommand that takes `--threads`, found from the help text so a new
/// one is covered without a list to keep, refuses 0 and 1000 before any work.
#[test]
fn every_command_with_threads_range_checks_it() {
    let mut queue = subcommands(&[]);
    let mut checked = Vec::new();
    while let Some(path) = queue.pop() {
        queue.extend(subcommands(&path));
        let mut help: Vec<&str> = path.iter().map(String::as_str).collect();
        help.push("--help");
        if !String::from_utf8_lossy(&agentsim(&help).stdout).contains("--threads") {
            continue;
        }
        for bad in ["0", "1000"] {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.extend(["--threads", bad]);
            refused(&args, &["--threads", "expected 1..=256"]);
        }
        checked.push(path.join(" "));
    }
    for c in [
        "explore",
        "lattice",
        "bench explore",
        "simulate",
        "detect",
        "test",
    ] {
        assert!(checked.iter().any(|x| x == c), "{c} in {checked:?}");
    }
}

#[test]
fn scenario_numbers_past_their_limits_name_file_line_and_key() {
    let d = temp_dir("scenario");
    let fixed = "{ fixed = 10 }";
    let cases = [
        (
            scenario(&d, "repeat", "", "repeat = 100000000", fixed),
            "repeat",
            "100000000 is out of range: expected 1..=1000000",
        ),
        (
            scenario(&d, "repeat0", "", "repeat = 0", fixed),
            "repeat",
            "0 is out of range",
        ),
        (
            scenario(&d, "count", "", "count = 16000", fixed),
            "count",
            "more than the 1024",
        ),
        (
            scenario(
                &d,
                "tokens",
                "[tokens]\nprompt_base = 2000000000000000000\ncompletion = { fixed = 1 }\n",
                "",
                fixed,
            ),
            "prompt_base",
            "expected 0..=1000000000",
        ),
        (
            scenario(&d, "fixed", "", "", "{ fixed = 1e19 }"),
            "latency_ms",
            "fixed value 10000000000000000000 must be finite and in 0..=1e15",
        ),
        (
            scenario(&d, "negative", "", "", "{ fixed = -1 }"),
            "latency_ms",
            "must be finite",
        ),
        (
            scenario(&d, "nan", "", "", "{ fixed = nan }"),
            "latency_ms",
            "must be finite",
        ),
        (
            scenario(
                &d,
                "sigma",
                "",
                "",
                "{ lognormal = { median = 10, sigma = 50 } }",
            ),
            "latency_ms",
            "sigma 50 in 0..=10",
        ),
        (
            scenario(
                &d,
                "events",
                "[schedule]\nevents_max = 1000000000000\n",
                "",
                fixed,
            ),
            "events_max",
            "expected 1..=100000000",
        ),
    ];
    for (file, key, msg) in cases {
        let out = agentsim(&["simulate", &file]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        // FILE:LINE:COL: ... key `K`: message
        let located = format!("{file}:");
        assert!(err.contains(&located), "{file}: {err}");
        assert!(err.contains(&format!("`{key}`")), "{key}: {err}");
        assert!(err.contains(msg), "{key}: `{msg}` not in {err}");
    }
    // The file's own trial count has the flag's limit.
    let big = std::fs::read_to_string(scenario(&d, "t", "", "", fixed))
        .unwrap()
        .replace("trials = 2", "trials = 100000000");
    let file = d.join("big-trials.toml");
    std::fs::write(&file, big).unwrap();
    let out = agentsim(&["simulate", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`trials`: 100000000 is out of range"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn values_at_the_limits_run_in_bounded_memory() {
    let d = temp_dir("bounded");
    // A million repetitions that events_max cuts at 2000 events: no reservation for the rest.
    let file = scenario(
        &d,
        "many-reps",
        "[schedule]\nevents_max = 2000\n",
        "repeat = 1000000",
        "{ fixed = 10 }",
    );
    let out = agentsim(&["simulate", &file, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("hit events_max"), "{}", stderr(&out));
    // The most agents a scenario may have.
    let file = scenario(&d, "many-agents", "", "count = 1024", "{ fixed = 10 }");
    let out = agentsim(&["simulate", &file, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn token_tallies_saturate_instead_of_wrapping() {
    let d = temp_dir("tokens");
    // The largest prompt and completion a scenario may give, over a million repetitions cut
    // at 100,000 events: the tallies stop at u64::MAX and never report more waste than work
    // (the engine asserts it).
    let file = scenario(
        &d,
        "max-tokens",
        "[schedule]\nevents_max = 100000\n[tokens]\nprompt_base = 1000000000\n\
         prompt_per_cell = 1000000000\ncompletion = { fixed = 1e15 }\n",
        "count = 2\nrepeat = 1000000",
        "{ fixed = 10 }",
    );
    let out = agentsim(&["simulate", &file, "--json", "--runtime", "ssi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let total = v["aggregate"]["tokens_total"]["mean"].as_f64().unwrap();
    let wasted = v["aggregate"]["tokens_wasted"]["mean"].as_f64().unwrap();
    // About 33,000 generations of 10^15 tokens each pass u64::MAX: both trials saturate
    // (a wrapping sum would be some smaller number).
    assert_eq!(total, u64::MAX as f64);
    assert!(wasted <= total, "{wasted} > {total}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn check_numbers_past_their_limits_exit_two() {
    refused(
        &["check", "--expect-states", HUGE],
        &["--expect-states", "raise --max-memory-mb"],
    );
    refused(
        &["check", "--replicas", "1", "--max-lag", HUGE],
        &["--max-lag", HUGE],
    );
    refused(&["bench", "detect", "--records", HUGE], &["--records"]);
}

#[test]
fn sweep_files_past_their_limits_name_the_field() {
    let d = temp_dir("sweep");
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/sweeps/contention.toml"
    ))
    .unwrap();
    let big = regex_replace_trials(&text, "trials = 100000000");
    let file = d.join("big.toml");
    std::fs::write(&file, big).unwrap();
    refused(
        &["sweep", file.to_str().unwrap()],
        &["big.toml", "`trials`", "expected 1..=1000000"],
    );
    std::fs::remove_dir_all(&d).ok();
}

/// Every number of a sweep file that sizes memory (each grid axis value, the grid's size, the
/// profile's counts, tokens and times) is refused at its key before a grid point is built:
/// `cells = [2, 2147483648]` once aborted allocating 48 GiB for the hot-cell names.
#[test]
fn sweep_grid_values_past_their_limits_name_the_key() {
    let d = temp_dir("sweep-grid");
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/sweeps/contention.toml"
    ))
    .unwrap();
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "cells = [2, 8]",
            "cells = [2, 2147483648]",
            "`grid.cells`",
            "at most 4096",
        ),
        (
            "agents = [2, 4, 8, 16]",
            "agents = [2, 4294967295]",
            "`grid.agents`",
            "at most 1024",
        ),
        (
            "ops = 3",
            "ops = 4000000000",
            "`profile.ops`",
            "at most 1000000",
        ),
        (
            "prompt_base = 300",
            &format!("prompt_base = {HUGE}"),
            "`profile.prompt_base`",
            "",
        ),
        (
            "generation_ms = [2000]",
            &format!("generation_ms = [{HUGE}]"),
            "`grid.generation_ms`",
            "",
        ),
        (
            "sigma = 0.4",
            "sigma = 1e300",
            "`profile.sigma`",
            "expected 0..=10",
        ),
        (
            "overlap = [0.5, 1.0]",
            &format!("overlap = [{}]", vec!["0.5"; 5000].join(", ")),
            "`grid`",
            "more than the 10000 allowed",
        ),
    ];
    for (i, (from, to, key, range)) in cases.iter().enumerate() {
        assert!(text.contains(from), "{from}");
        let file = d.join(format!("s{i}.toml"));
        std::fs::write(&file, text.replacen(from, to, 1)).unwrap();
        let name = format!("s{i}.toml:");
        refused(&["sweep", file.to_str().unwrap()], &[&name, key, range]);
    }
    std::fs::remove_dir_all(&d).ok();
}

/// `text` with its top-level `trials = N` line replaced by `line`.
fn regex_replace_trials(text: &str, line: &str) -> String {
    text.lines()
        .map(|l| if l.starts_with("trials =") { line } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}
