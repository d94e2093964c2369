//! Sharded runs merge into the unsharded bytes: `twins` and `workloads` (plain and
//! with `--runtime` stacks), `sweep`, `simulate`, `split-view`, `cpl twin` and two sampling
//! `reproduce` steps as 1, 3 and 7 shards, merged in a shuffled order, print the single run's
//! text and `--json` and write its table and figure files byte for byte; partials that are malformed, from another run, of another
//! format version, overlapping or leaving trials out exit 2 naming the files, without a panic.
//! A pass covers these commands at these trial counts, not every shard layout.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::root;

fn agentsim(args: &[&str]) -> Output {
    let out = crate::util::agentsim(args);
    assert_ne!(out.status.code(), Some(101), "panicked: {args:?}");
    out
}

fn ok(args: &[&str]) -> Vec<u8> {
    let out = agentsim(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentsim-shard-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Every file under `dir`, by relative path, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .expect("under dir")
                    .display()
                    .to_string();
                out.push((rel, std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Writes the shards of `cmd` as partials under `dir`, in a shuffled order for the merge.
fn shards(cmd: &[&str], n: u32, dir: &Path) -> Vec<PathBuf> {
    let mut parts = Vec::new();
    for i in 1..=n {
        let file = dir.join(format!("part-{i}-of-{n}.json"));
        let shard = format!("{i}/{n}");
        let mut args = cmd.to_vec();
        args.extend(["--shard", &shard, "--partial-out", s(&file)]);
        let out = ok(&args);
        assert!(out.is_empty(), "a shard prints nothing on stdout");
        parts.push(file);
    }
    // Merge order must not matter: reverse, then rotate by one.
    parts.reverse();
    parts.rotate_left(1);
    parts
}

/// The single run's text, `--json` and table files equal the merge's for 1, 3 and 7 shards.
fn merges_to_the_single_run(name: &str, cmd: &[&str], writes_tables: bool) {
    let dir = tmp(name);
    let single_out = dir.join("single");
    let mut single = cmd.to_vec();
    single.extend(["--out", s(&single_out)]);
    let text = ok(&single);
    let mut single_json = cmd.to_vec();
    single_json.extend(["--json", "--no-write"]);
    let json = ok(&single_json);
    assert!(!text.is_empty() && !json.is_empty());
    let tables = if writes_tables {
        files(&single_out)
    } else {
        Vec::new()
    };
    assert_eq!(tables.is_empty(), !writes_tables, "{name}: table files");
    for n in [1, 3, 7] {
        let parts_dir = dir.join(format!("parts{n}"));
        std::fs::create_dir_all(&parts_dir).expect("dir");
        let parts = shards(cmd, n, &parts_dir);
        let merged_out = dir.join(format!("merged{n}"));
        let mut merge = vec!["merge"];
        merge.extend(parts.iter().map(|p| s(p)));
        let mut merge_text = merge.clone();
        merge_text.extend(["--out", s(&merged_out)]);
        assert_eq!(ok(&merge_text), text, "{name}: text, {n} shards");
        merge.push("--json");
        merge.push("--no-write");
        assert_eq!(ok(&merge), json, "{name}: --json, {n} shards");
        if writes_tables {
            assert_eq!(
                files(&merged_out),
                tables,
                "{name}: table files, {n} shards"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn twins_merge_to_the_single_run() {
    merges_to_the_single_run("twins", &["twins", "--trials", "20", "--seed", "3"], true);
}

#[test]
fn workloads_merge_to_the_single_run() {
    merges_to_the_single_run("workloads", &["workloads", "--trials", "15"], true);
}

#[test]
fn a_sweep_merges_to_the_single_run() {
    let cmd = ["sweep", "scenarios/sweeps/contention.toml", "--trials", "9"];
    merges_to_the_single_run("sweep", &cmd, true);
}

/// For a command that writes no table files and takes no `--out`: the single run's text and
/// `--json` equal the merge's for 1, 3 and 7 shards.
fn text_and_json_merge(name: &str, cmd: &[&str]) {
    let dir = tmp(name);
    let text = ok(cmd);
    let mut j = cmd.to_vec();
    j.push("--json");
    let json = ok(&j);
    assert!(!text.is_empty() && !json.is_empty());
    for n in [1, 3, 7] {
        let parts = shards(cmd, n, &dir);
        let mut merge = vec!["merge"];
        merge.extend(parts.iter().map(|p| s(p)));
        merge.push("--no-write");
        assert_eq!(ok(&merge), text, "{name}: text, {n} shards");
        merge.push("--json");
        assert_eq!(ok(&merge), json, "{name}: --json, {n} shards");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_simulation_merges_to_the_single_run() {
    let cmd = [
        "simulate",
        "scenarios/examples/plan-execute.toml",
        "--trials",
        "40",
        "--scheduler",
        "pct:2",
        "--threads",
        "2",
    ];
    text_and_json_merge("simulate", &cmd);
}

#[test]
fn the_split_view_twin_merges_to_the_single_run() {
    let cmd = ["split-view", "scenarios/split-view.toml", "--trials", "30"];
    text_and_json_merge("split-view", &cmd);
}

#[test]
fn the_guard_twin_merges_to_the_single_run() {
    let cmd = [
        "cpl",
        "twin",
        "scenarios/cpl/stale-evidence.toml",
        "--trials",
        "20",
        "--threads",
        "2",
    ];
    text_and_json_merge("cpl-twin", &cmd);
}

#[test]
fn stack_runs_merge_to_the_single_run() {
    let twins = [
        "twins",
        "--trials",
        "8",
        "--runtime",
        "lock,validate-preds+cascade",
    ];
    merges_to_the_single_run("twins-stacks", &twins, true);
    let workloads = ["workloads", "--trials", "5", "--runtime", "ssi"];
    merges_to_the_single_run("workloads-stacks", &workloads, true);
}

fn fails(args: &[&str], needles: &[&str]) {
    let mut args = args.to_vec();
    if !["simulate", "split-view", "cpl", "reproduce"].contains(&args[0]) {
        // Should a bad merge succeed, its tables must not land in the repository's results/.
        args.push("--no-write");
    }
    let args = &args[..];
    let out = agentsim(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in: {err}");
    }
}

#[test]
fn bad_partials_exit_2_naming_the_files() {
    let dir = tmp("bad");
    let twins = ["twins", "--trials", "6", "--no-write"];
    shards(&twins, 3, &dir);
    let part = |i: u32| dir.join(format!("part-{i}-of-3.json"));
    let p = |i: u32| s(&part(i)).to_owned();
    let (a, b, c) = (p(1), p(2), p(3));
    // Overlap: the same shard twice; missing: a shard left out.
    fails(&["merge", &a, &b, &c, &a], &["overlap", &a]);
    fails(&["merge", &a, &b], &["no partial holds trials"]);
    // Another run: a different seed does not belong with these.
    let other = dir.join("other-seed.json");
    ok(&[
        "twins",
        "--trials",
        "6",
        "--seed",
        "2",
        "--shard",
        "1/3",
        "--partial-out",
        s(&other),
    ]);
    fails(
        &["merge", &a, &b, s(&other)],
        &["do not belong together", s(&other)],
    );
    // Another command.
    let sim = dir.join("sim.json");
    let sim_args = [
        "simulate",
        "scenarios/examples/edit-review.toml",
        "--trials",
        "6",
    ];
    let mut sim_shard = sim_args.to_vec();
    sim_shard.extend(["--shard", "1/1", "--partial-out", s(&sim)]);
    ok(&sim_shard);
    fails(&["merge", &a, &b, &c, s(&sim)], &["`command`", s(&sim)]);
    // Malformed: truncated JSON, not a partial, a later version, a trial out of place.
    let text = std::fs::read_to_string(part(1)).expect("partial");
    let write = |name: &str, body: &str| {
        let f = dir.join(name);
        std::fs::write(&f, body).expect("write");
        s(&f).to_owned()
    };
    let cut = write("cut.json", &text[..text.len() / 2]);
    fails(&["merge", &cut, &b, &c], &[&cut, ":1:"]);
    let foreign = write("foreign.json", r#"{"hello": 1}"#);
    fails(&["merge", &foreign], &[&foreign, "not a partial"]);
    // Versions: a later one, and version 1 (metrics rows only, an older build's).
    for v in ["3", "1"] {
        let body = text.replacen(r#""version":2"#, &format!(r#""version":{v}"#), 1);
        let f = write(&format!("v{v}.json"), &body);
        fails(
            &["merge", &f],
            &[&f, &format!("`version`: {v}"), "version 2 only"],
        );
    }
    let moved = write(
        "moved.json",
        &text.replacen(r#""trials":[[0,"#, r#""trials":[[5,"#, 1),
    );
    fails(
        &["merge", &moved, &b, &c],
        &[&moved, "trial 5 where trial 0 belongs"],
    );
    let high = write(
        "level.json",
        &text.replacen(
            r#""trials":[[0,["A1"],false,0,"#,
            r#""trials":[[0,["A1"],false,9,"#,
            1,
        ),
    );
    fails(&["merge", &high, &b, &c], &[&high, "level 9"]);
    let bin = write("binary.json", "\u{0}\u{1}");
    fails(&["merge", &bin], &[&bin]);
    fails(&["merge", s(&dir.join("absent.json"))], &["absent.json"]);
    // Flags: a shard needs a file to go to; shard syntax is checked.
    let x = s(&dir.join("x.json")).to_owned();
    fails(
        &["twins", "--trials", "6", "--shard", "1/3"],
        &["--partial-out"],
    );
    fails(
        &["twins", "--shard", "4/3", "--partial-out", &x],
        &["--shard", "4/3"],
    );
    fails(
        &[
            "twins",
            "--trials-range",
            "5..9",
            "--trials",
            "6",
            "--partial-out",
            &x,
        ],
        &["5..9"],
    );
    fails(
        &[
            "simulate",
            "scenarios/examples/edit-review.toml",
            "--trace-out",
            "t",
            "--shard",
            "1/2",
            "--partial-out",
            &x,
        ],
        &["--trace-out"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_explicit_trial_range_and_empty_shards_merge_too() {
    let dir = tmp("ranges");
    let cmd = ["twins", "--trials", "5", "--no-write"];
    let single = ok(&cmd);
    let mut parts = Vec::new();
    for (k, r) in ["0..2", "2..2", "2..5"].iter().enumerate() {
        let f = dir.join(format!("r{k}.json"));
        let mut a = cmd.to_vec();
        a.extend(["--trials-range", r, "--partial-out", s(&f)]);
        ok(&a);
        parts.push(f);
    }
    let mut merge = vec!["merge", "--no-write"];
    merge.extend(parts.iter().map(|p| s(p)));
    assert_eq!(ok(&merge), single);
    // Seven shards of five trials: two are empty, and the merge still covers every trial.
    let seven = shards(&cmd, 7, &dir);
    let mut merge = vec!["merge", "--no-write"];
    merge.extend(seven.iter().map(|p| s(p)));
    assert_eq!(ok(&merge), single);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A sampling reproduce step, sharded and merged into DIR, writes the files and prints the
/// summary that `reproduce --only STEP --out DIR` does.
fn reproduce_step_merges(step: &str) {
    let dir = tmp(&format!("reproduce-{step}"));
    let out = dir.join("out");
    let cmd = ["reproduce", "--quick", "--only", step];
    let mut single = cmd.to_vec();
    single.extend(["--out", s(&out)]);
    let mut single_json = single.clone();
    single_json.push("--json");
    let text = ok(&single);
    let json = ok(&single_json);
    let written = files(&out);
    assert!(!written.is_empty(), "{step}: files");
    for n in [1, 3, 7] {
        std::fs::remove_dir_all(&out).expect("clear out");
        let parts_dir = dir.join(format!("parts{n}"));
        std::fs::create_dir_all(&parts_dir).expect("dir");
        let parts = shards(&cmd, n, &parts_dir);
        let mut merge = vec!["merge", "--out", s(&out)];
        merge.extend(parts.iter().map(|p| s(p)));
        assert_eq!(ok(&merge), text, "{step}: summary, {n} shards");
        assert_eq!(files(&out), written, "{step}: files, {n} shards");
        merge.push("--json");
        assert_eq!(ok(&merge), json, "{step}: --json summary, {n} shards");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sampling_reproduce_steps_merge_to_the_single_run() {
    reproduce_step_merges("split-view");
    reproduce_step_merges("cpl-guards");
}

#[test]
fn reproduce_shards_only_one_sampling_step() {
    let dir = tmp("reproduce-refusals");
    let x = dir.join("x.json");
    let x = s(&x);
    let shard = ["--shard", "1/1", "--partial-out", x];
    let with = |args: &[&'static str]| -> Vec<&str> {
        let mut a = vec!["reproduce", "--quick"];
        a.extend(args);
        a.extend(shard);
        a
    };
    fails(
        &with(&["--only", "states"]),
        &["--only states", "does not shard"],
    );
    fails(
        &with(&["--only", "costs"]),
        &["--only costs", "does not shard"],
    );
    fails(&with(&[]), &["exactly one --only"]);
    fails(
        &with(&["--only", "twins", "--only", "sweep"]),
        &["exactly one --only"],
    );
    fails(&with(&["--only", "twins", "--check"]), &["--check"]);
    ok(&with(&["--only", "split-view"]));
    let out = agentsim(&["merge", x]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("give --out DIR"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_fact_partials_exit_2_naming_the_files() {
    let dir = tmp("bad-facts");
    // A scenario copy, so that changing it does not touch the repository's.
    let scenario = dir.join("split-view.toml");
    std::fs::copy(root().join("scenarios/split-view.toml"), &scenario).expect("copy");
    let cmd = ["split-view", s(&scenario), "--trials", "9"];
    let parts = shards(&cmd, 3, &dir);
    let part = |i: u32| dir.join(format!("part-{i}-of-3.json"));
    let (pa, pb, pc) = (part(1), part(2), part(3));
    let (a, b, c) = (s(&pa), s(&pb), s(&pc));
    fails(&["merge", a, b, c, b], &["overlap", b]);
    fails(&["merge", a, c], &["no partial holds trials 3..6"]);
    let text = std::fs::read_to_string(part(1)).expect("partial");
    let write = |name: &str, body: String| {
        let f = dir.join(name);
        std::fs::write(&f, body).expect("write");
        s(&f).to_owned()
    };
    // A row with a fact too many, a row too many, and a run renamed.
    let wide = write(
        "wide.json",
        text.replacen(r#""rows":[["#, r#""rows":[[9,"#, 1),
    );
    fails(
        &["merge", &wide, b, c],
        &[&wide, "fact run 0: trial 0 has 3 facts, the columns name 2"],
    );
    let long = write(
        "long.json",
        text.replacen(r#""rows":[["#, r#""rows":[[0,0],["#, 1),
    );
    fails(
        &["merge", &long, b, c],
        &[&long, "fact run 0 holds 4 trials"],
    );
    let renamed = write(
        "renamed.json",
        text.replacen("split-view any-replica", "split-view any", 1),
    );
    fails(
        &["merge", &renamed, b, c],
        &["do not belong together", "`facts`"],
    );
    // Another command's partials, and another digest.
    let cpl = dir.join("cpl.json");
    ok(&[
        "cpl",
        "twin",
        "scenarios/cpl/stale-evidence.toml",
        "--trials",
        "9",
        "--shard",
        "2/3",
        "--partial-out",
        s(&cpl),
    ]);
    fails(&["merge", a, s(&cpl), c], &["`command`", s(&cpl)]);
    let digest = text.replacen(r#""scenario_digest":""#, r#""scenario_digest":"f"#, 1);
    let digest = write("digest.json", digest);
    fails(&["merge", &digest, b, c], &["`scenario_digest`", &digest]);
    // The scenario changed since the shards ran: the merge refuses to print.
    let mut changed = std::fs::read_to_string(&scenario).expect("scenario");
    changed.push_str("\n# edited\n");
    std::fs::write(&scenario, changed).expect("write");
    fails(
        &["merge", a, b, c],
        &["the scenario text now has digest", a],
    );
    // A replay of one trial is not a share of a run.
    fails(
        &[
            "split-view",
            s(&scenario),
            "--trial",
            "1",
            "--shard",
            "1/2",
            "--partial-out",
            a,
        ],
        &["--trial runs unsharded"],
    );
    drop(parts);
    let _ = std::fs::remove_dir_all(&dir);
}
