//! `agentsim check` on properties no history can violate at the given bounds and extensions:
//! the verdict is *cannot tell, vacuous* with what would make the property possible, the gate
//! exits 2 unless `--allow-cannot-tell`, and `--json` says `"verdict": "cannot_tell"` with a
//! `"reason"`. One case per class of vacuity: a missing extension, a bound too small, the
//! abstract model, the replicated store (a feature it never has, a constant at zero), and a
//! mix with violated properties under `--property all`.

use std::process::Output;

use crate::util::agentsim;

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn check(args: &[&str]) -> Output {
    agentsim(&[&["check", "--threads", "1", "--quiet"][..], args].concat())
}

#[test]
fn a_missing_extension_is_cannot_tell_and_exits_two() {
    let args = ["--property", "A3", "--agents", "2", "--max-ops", "2"];
    let out = check(&args);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "A3: cannot tell, vacuous: A3 needs provenance and retraction \
             (add --provenance --retraction)\n"
        ),
        "{text}"
    );
    assert!(!text.contains("holds"), "{text}");
    assert!(
        stderr(&out).contains("--allow-cannot-tell"),
        "{}",
        stderr(&out)
    );
    let ok = check(&[&args[..], &["--allow-cannot-tell"]].concat());
    assert_eq!(ok.status.code(), Some(0));
    let verdicts = |t: &str| {
        t.lines()
            .filter(|l| l.starts_with("A3:"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        verdicts(&stdout(&ok)),
        verdicts(&text),
        "the opt-in changes the exit only"
    );
    let json = check(&[&args[..], &["--json"]].concat());
    assert_eq!(json.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let a3 = &v["properties"]["A3"];
    assert_eq!(a3["verdict"], "cannot_tell");
    assert_eq!(
        a3["reason"],
        "vacuous: A3 needs provenance and retraction (add --provenance --retraction)"
    );
    assert!(a3.get("holds").is_none(), "{a3}");
    // With the extensions the same property is decided (here violated).
    let full = check(&[&args[..], &["--provenance", "--retraction"]].concat());
    assert_eq!(full.status.code(), Some(1), "{}", stdout(&full));
}

#[test]
fn a_bound_too_small_names_the_flag() {
    let out = check(&["--property", "A1,A6", "--agents", "1", "--max-ops", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(
        text.contains("A1: cannot tell, vacuous: A1 needs 2 agents and 2 records (add --agents 2 --max-ops 2)"),
        "{text}"
    );
    assert!(text.contains("(add --cells 2)"), "{text}");
}

#[test]
fn all_reports_each_and_a_violation_still_exits_one() {
    let out = check(&["--agents", "2", "--cells", "1", "--max-ops", "2"]);
    assert_eq!(out.status.code(), Some(1), "violated dominates cannot tell");
    let text = stdout(&out);
    assert!(text.contains("A1: VIOLATED"), "{text}");
    assert!(text.contains("A2: VIOLATED"), "{text}");
    assert!(text.contains("A3: cannot tell, vacuous"), "{text}");
    assert!(text.contains("A6: cannot tell, vacuous"), "{text}");
    // A runtime preventing what is possible, beside what is not: still cannot tell.
    let out = check(&["--runtime", "ssi", "--property", "A1,A6", "--max-ops", "2"]);
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(text.contains("A1: holds (exhaustively, "), "{text}");
    assert!(text.contains("A6: cannot tell, vacuous"), "{text}");
}

#[test]
fn the_abstract_model_judges_vacuity_too() {
    let out = check(&["--abstract", "--property", "A6,A1", "--agents", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("A6: cannot tell, vacuous"),
        "{}",
        stdout(&out)
    );
    let out = check(&["--abstract", "--property", "A6", "--agents", "2", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["properties"]["A6"]["verdict"], "cannot_tell");
    // Without --max-ops the abstract model has no bound on records: A1 needs only agents.
    let out = check(&["--abstract", "--property", "A1", "--agents", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains("A1 needs 2 agents (add --agents 2)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_replicated_store_says_what_it_cannot_produce() {
    let base = [
        "--replicas",
        "1",
        "--agents",
        "2",
        "--max-ops",
        "3",
        "--values",
        "1",
    ];
    let small = [
        "--replicas",
        "1",
        "--agents",
        "1",
        "--max-ops",
        "1",
        "--values",
        "1",
    ];
    let out = check(&[&small[..], &["--property", "A6", "--cells", "2"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains(
            "A6 needs a write of two cells completing out of issue order, which this model \
             cannot produce"
        ),
        "{}",
        stdout(&out)
    );
    let out = check(&[&base[..], &["--property", "A4", "--max-lag", "0"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains("A4 needs a read from a lagging replica (add --max-lag 1)"),
        "{}",
        stdout(&out)
    );
    // Pinned reads are a guard, not a missing feature: A4 holds, exit 0.
    let out = check(
        &[
            &base[..],
            &["--property", "A4", "--read-discipline", "pinned"],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}
