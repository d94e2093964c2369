//! Choices are parsed once, into types, at the command line: a bad value is exit 2 with a
//! message naming the flag and the valid values, before anything runs; library errors reach
//! the user in the words of the flags they typed.

use crate::util::agentsim;

#[test]
fn bad_choices_exit_two_naming_flag_and_valid_values() {
    let scenario = "scenarios/examples/edit-review.toml";
    let cases: [(&[&str], &[&str]); 8] = [
        (
            &["check", "--property", ""],
            &["--property", "empty property list"],
        ),
        (
            &["check", "--property", "A9"],
            &["--property", "`A9`", "A1, A2"],
        ),
        (
            &["simulate", scenario, "--scheduler", "fifo"],
            &["--scheduler", "`fifo`", "pct:D"],
        ),
        (
            &["simulate", scenario, "--scheduler", "pct:0"],
            &["--scheduler", "PCT depth"],
        ),
        (
            &["simulate", scenario, "--on-missing", "skip"],
            &["--on-missing", "`skip`", "`stub`"],
        ),
        (
            &["simulate", scenario, "--runtime", "fast"],
            &["--runtime", "`fast`"],
        ),
        (&["check", "--cells", "9"], &["--cells 9 is out of range"]),
        (
            &["check", "--replicas", "1", "--max-lag", "99999999999"],
            &["--max-lag 99999999999 is out of range"],
        ),
    ];
    for (args, needles) in cases {
        let out = agentsim(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        for n in needles {
            assert!(err.contains(n), "{args:?}: `{n}` not in {err}");
        }
    }
}

#[test]
fn a_replay_line_with_an_unknown_runtime_is_refused_at_parse() {
    let out = agentsim(&[
        "replay",
        "scenario=scenarios/examples/edit-review.toml runtime=fast seed=1 trial=0 schedule=S1:0:-",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown mechanism or runtime `fast`"), "{err}");
}

#[test]
fn replay_lines_that_do_not_describe_the_trial_exit_two_naming_the_part() {
    let line = |s: &str| {
        format!("scenario=scenarios/examples/edit-review.toml runtime=vanilla seed=1 trial=0 schedule={s}")
    };
    let cases = [
        ("S1:39:5=99999", "choice 5=99999 names no enabled event"),
        ("S1:59:0=5", "choice 0=5 names no enabled event"),
        ("S1:39:0=1,0=2", "event 0 has two choices"),
        ("S1:39:100=1", "choice 100=1 is past the end"),
        ("S2:39:-", "expected version tag `S1`"),
    ];
    for (s, needle) in cases {
        let out = agentsim(&["replay", &line(s)]);
        assert_eq!(out.status.code(), Some(2), "{s}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{s}: {err}");
    }
    assert_eq!(
        agentsim(&["replay", &line("S1:39:-")]).status.code(),
        Some(0)
    );
}

#[test]
fn a_shrunk_line_replays() {
    let l = "scenario=scenarios/examples/plan-execute.toml runtime=vanilla seed=3 trial=0 \
             schedule=S1:54:0=1,1=1";
    assert_eq!(agentsim(&["replay", l]).status.code(), Some(0));
    let out = agentsim(&["shrink", l, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let shrunk = v["line"].as_str().unwrap();
    let again = agentsim(&["replay", shrunk]);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{shrunk}: {}",
        String::from_utf8_lossy(&again.stderr)
    );
}
