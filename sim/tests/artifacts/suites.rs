//! `agentsim test`: the committed scenarios pass as a suite (the papers' claims, run by the
//! README's test command); a broken claim fails with exit 1, is counted, named in the JUnit
//! file with a replay line, and that line replays the witness; bad `[[expect]]` entries exit 2
//! at their file and line; outputs are the same bytes whatever the threads or the sharding.

use crate::util::{agentsim, root};
use std::path::{Path, PathBuf};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentsim-suites-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

#[test]
fn the_committed_scenarios_pass_as_a_suite() {
    let out = agentsim(&["test", "scenarios/", "--threads", "2"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let last = stdout.lines().last().expect("a closing line");
    let passed: u64 = last
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("N passed");
    assert!(passed >= 60, "{last}");
    assert!(last.ends_with(" passed, 0 failed, 8 skipped"), "{last}");
    assert!(stdout.contains("SKIP  scenarios/sweeps/contention.toml: a sweep file"));
    assert!(stdout.contains("SKIP  scenarios/traces/otel/profile_map.toml: a tool-memory mapping"));
    // The worked exploration examples: sampling misses what exploration finds.
    assert!(
        stdout.contains("PASS  scenarios/explore/stale-review.toml:49  some interleaving makes the review stale [explore]: A1 reachable"),
        "{stdout}"
    );
    assert!(
        stdout.contains("PASS  scenarios/split-view.toml:"),
        "{stdout}"
    );
    assert!(!stdout.contains("FAIL"), "{stdout}");
}

#[test]
fn same_bytes_whatever_the_threads_and_the_sharding() {
    let dir = temp_dir("shards");
    let (j1, j4) = (dir.join("one.xml"), dir.join("four.xml"));
    let one = agentsim(&[
        "test",
        "scenarios/",
        "--json",
        "--threads",
        "1",
        "--junit",
        s(&j1),
    ]);
    let four = agentsim(&[
        "test",
        "scenarios/",
        "--json",
        "--threads",
        "4",
        "--junit",
        s(&j4),
    ]);
    assert_eq!(one.status.code(), Some(0), "{}", text(&one.stderr));
    assert_eq!(one.stdout, four.stdout);
    let junit = std::fs::read(&j1).expect("junit");
    assert_eq!(junit, std::fs::read(&j4).expect("junit"));
    let mut parts = Vec::new();
    for i in 1..=3 {
        let p = dir.join(format!("p{i}.json"));
        let shard = format!("{i}/3");
        let out = agentsim(&[
            "test",
            "scenarios/",
            "--shard",
            &shard,
            "--partial-out",
            s(&p),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        parts.push(p);
    }
    let jm = dir.join("merged.xml");
    let (p1, p2, p3) = (s(&parts[0]), s(&parts[1]), s(&parts[2]));
    let merged = agentsim(&["merge", p3, p1, p2, "--json", "--junit", s(&jm)]);
    assert_eq!(merged.status.code(), Some(0), "{}", text(&merged.stderr));
    assert_eq!(text(&merged.stdout), text(&one.stdout));
    assert_eq!(std::fs::read(&jm).expect("merged junit"), junit);
    let plain = agentsim(&["test", "scenarios/"]);
    let merged_text = agentsim(&["merge", p1, p2, p3]);
    assert_eq!(merged_text.stdout, plain.stdout);
    let missing = agentsim(&["merge", p1, p2]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing.stderr).contains("shard 3/3 is missing"),
        "{}",
        text(&missing.stderr)
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// The A1 twin with one claim the paper denies: vanilla never shows A1.
fn broken_suite(dir: &Path) -> PathBuf {
    let a1 = std::fs::read_to_string(root().join("scenarios/twins/a1.toml")).expect("twin");
    let file = dir.join("broken.toml");
    let claim = "\n[[expect]]\nname = \"vanilla keeps doc fresh\"\nanomaly = \"A1\"\n\
                 runtime = \"vanilla\"\nnever = true\ntrials = 50\n";
    std::fs::write(&file, format!("{a1}{claim}")).expect("write");
    file
}

#[test]
fn a_broken_expectation_fails_and_its_replay_line_reproduces_the_witness() {
    let dir = temp_dir("broken");
    let file = broken_suite(&dir);
    let junit = dir.join("junit.xml");
    let out = agentsim(&["test", s(&dir), "--junit", s(&junit)]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert_eq!(
        stdout.lines().last(),
        Some("3 passed, 1 failed"),
        "{stdout}"
    );
    let fail = stdout
        .lines()
        .find(|l| l.starts_with("FAIL"))
        .expect("a FAIL line");
    assert!(fail.contains(&format!("{}:", file.display())), "{fail}");
    assert!(
        fail.contains("vanilla keeps doc fresh") && fail.contains("50/50"),
        "{fail}"
    );
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    assert!(xml.contains("failures=\"1\""), "{xml}");
    assert!(
        xml.contains("name=\"vanilla keeps doc fresh (line "),
        "{xml}"
    );
    let at = xml
        .find("replay: agentsim replay &apos;")
        .expect("a replay line in the failure");
    let rest = &xml[at + "replay: agentsim replay &apos;".len()..];
    let line = &rest[..rest.find("&apos;").expect("closing quote")];
    assert!(line.contains("runtime=vanilla"), "{line}");
    let replay = agentsim(&["replay", line]);
    let shown = text(&replay.stdout);
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay.stderr));
    assert!(shown.contains("anomalies: A1"), "{shown}");
    let printed = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay: agentsim replay '"))
        .expect("the text prints the replay line too");
    assert_eq!(printed.trim_end_matches('\''), line);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

fn bad(name: &str, claim: &str) -> (Option<i32>, String) {
    let dir = temp_dir(name);
    let a1 = std::fs::read_to_string(root().join("scenarios/examples/edit-review.toml"))
        .expect("example");
    let file = dir.join("bad.toml");
    std::fs::write(&file, format!("{a1}\n[[expect]]\n{claim}")).expect("write");
    let out = agentsim(&["test", s(&file)]);
    let err = text(&out.stderr);
    let sim = agentsim(&["simulate", s(&file), "--trials", "1"]);
    assert_eq!(sim.status.code(), Some(2), "simulate refuses it too: {err}");
    std::fs::remove_dir_all(&dir).expect("clean up");
    (out.status.code(), err)
}

#[test]
fn bad_expectations_exit_2_at_their_file_and_line() {
    let lines = std::fs::read_to_string(root().join("scenarios/examples/edit-review.toml"))
        .expect("example")
        .lines()
        .count();
    let header = lines + 2;
    let cases = [
        ("missing", "anomaly = \"A1\"\n", header, "no verdict"),
        (
            "doubled",
            "anomaly = \"A1\"\nnever = true\nrate = [0, 1]\n",
            header + 3,
            "second verdict",
        ),
        (
            "one-bound",
            "anomaly = \"A1\"\nrate = [0.5]\n",
            header + 2,
            "1 bounds",
        ),
        (
            "above-1",
            "anomaly = \"A1\"\nrate = [0.5, 2]\n",
            header + 2,
            "not in [0, 1]",
        ),
        (
            "lo-above-hi",
            "anomaly = \"A1\"\nrate = [0.5, 0.2]\n",
            header + 2,
            "above",
        ),
        (
            "anomaly",
            "anomaly = \"A7\"\nnever = true\n",
            header + 1,
            "unknown anomaly",
        ),
        (
            "runtime",
            "anomaly = \"A1\"\nruntime = \"snapshot\"\nnever = true\n",
            header + 2,
            "runtime",
        ),
        (
            "rate-explore",
            "anomaly = \"A1\"\nrate = [0, 1]\nby = \"explore\"\n",
            header + 3,
            "every interleaving",
        ),
    ];
    for (name, claim, line, says) in cases {
        let (code, err) = bad(name, claim);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(
            err.contains(&format!("bad.toml:{line}:")),
            "{name}: line {line}: {err}"
        );
        assert!(err.contains(says), "{name}: {err}");
    }
}

#[test]
fn explore_decides_over_every_interleaving_and_a_failure_replays() {
    let dir = temp_dir("explore");
    let a1 = std::fs::read_to_string(root().join("scenarios/twins/a1.toml")).expect("twin");
    let file = dir.join("explore.toml");
    let claims = "\n[[expect]]\nanomaly = \"A1\"\nruntime = \"ssi\"\nnever = true\nby = \"explore\"\n\
                  \n[[expect]]\nanomaly = \"A1\"\nruntime = \"vanilla\"\nnever = true\nby = \"explore\"\n";
    std::fs::write(&file, format!("{a1}{claims}")).expect("write");
    let out = agentsim(&["test", s(&file), "--filter", "by explore"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(
        stdout.lines().last(),
        Some("1 passed, 1 failed"),
        "{stdout}"
    );
    let pass = stdout
        .lines()
        .find(|l| l.starts_with("PASS"))
        .expect("the ssi case");
    assert!(pass.contains("A1 unreachable"), "{pass}");
    let fail = stdout
        .lines()
        .find(|l| l.starts_with("FAIL"))
        .expect("the vanilla case");
    assert!(fail.contains("A1 reachable"), "{fail}");
    // The failure's witness is the explorer's shortest schedule, and it replays to A1.
    let replay = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay: agentsim replay "))
        .expect("a replay line");
    let line = replay.trim_matches('\'');
    let out = agentsim(&["replay", line]);
    let said = text(&out.stdout);
    assert!(said.contains("anomalies: A1"), "{said}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn other_commands_run_files_that_state_expectations() {
    for args in [
        &["simulate", "scenarios/twins/a1.toml", "--trials", "5"][..],
        &["split-view", "scenarios/split-view.toml", "--trials", "5"][..],
    ] {
        let out = agentsim(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

/// A suite folder holding a FIFO named `x.toml` is refused at once (exit 2, naming it), where
/// reading it would wait forever; a symlink loop in the folder is walked once.
#[test]
fn the_suite_walk_refuses_a_fifo_and_ends_on_a_symlink_loop() {
    let dir = temp_dir("special");
    broken_suite(&dir);
    std::os::unix::fs::symlink(&dir, dir.join("loop")).expect("symlink");
    std::os::unix::fs::symlink(&dir, dir.join("again")).expect("symlink");
    let out = agentsim(&["test", s(&dir)]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert_eq!(
        stdout.lines().last(),
        Some("3 passed, 1 failed"),
        "{stdout}"
    );
    let fifo = dir.join("x.toml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let out = agentsim(&["test", s(&dir)]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("x.toml: not a regular file"), "{err}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// A suite file whose path holds a newline and spaces cannot plant a line of the report: the
/// path is escaped like a name, and the failure's replay line still replays that file.
#[test]
fn a_path_with_a_newline_is_escaped_and_its_replay_line_replays() {
    let dir = temp_dir("newline");
    let odd = dir.join("a b\nPASS  forged.toml:1  all good [explore]: held");
    std::fs::create_dir_all(&odd).expect("an odd folder");
    broken_suite(&odd);
    let out = agentsim(&["test", s(&dir)]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        !stdout.lines().any(|l| l.starts_with("PASS  forged")),
        "{stdout}"
    );
    assert!(stdout.contains("a b\\nPASS  forged"), "{stdout}");
    let line = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay: agentsim replay '"))
        .expect("a replay line")
        .trim_end_matches('\'');
    let replay = agentsim(&["replay", line]);
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay.stderr));
    assert!(text(&replay.stdout).contains("anomalies: A1"));
    std::fs::remove_dir_all(&dir).expect("clean up");
}
