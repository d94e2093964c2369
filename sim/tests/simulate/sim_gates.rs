//! `simulate --fail-on` as a gate (exit 1 when a trial exhibits a listed anomaly, naming it
//! and replaying the first; 0 on the fixed twin; 2 when the run cannot tell, unless
//! `--allow-cannot-tell`) and the hint when a scheduler had no choice to make.

use crate::util::{agentsim, root};

const EDIT_REVIEW: &str = "scenarios/workloads/edit-review.toml";

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = agentsim(args);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// edit-review with `extra` appended (a `[schedule]` table), in a fresh file.
fn edit_review_with(name: &str, extra: &str) -> String {
    let dir = std::env::temp_dir().join(format!("agentsim-sim-gates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let text = std::fs::read_to_string(root().join(EDIT_REVIEW)).expect("scenario");
    let path = dir.join(name);
    std::fs::write(&path, format!("{text}\n{extra}\n")).expect("write scenario");
    path.to_str().expect("utf-8").to_owned()
}

#[test]
fn fail_on_exits_1_on_the_anomalous_run_and_0_on_its_fixed_twin() {
    let (c, out, err) = run(&["simulate", EDIT_REVIEW, "--trials", "40", "--fail-on", "A1"]);
    assert_eq!(c, Some(1), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("--fail-on A1: 40/40 trials exhibit A1; the first: "))
        .unwrap_or_else(|| panic!("{err}"));
    let replay = line.split_once("the first: ").expect("replay").1;
    assert!(replay.starts_with("agentsim replay 'scenario="), "{replay}");
    assert!(
        out.contains(&format!("replay: {replay}")),
        "the summary's own line\n{out}"
    );
    let fixed = [
        "simulate",
        EDIT_REVIEW,
        "--trials",
        "40",
        "--runtime",
        "ssi",
    ];
    let (c, _, err) = run(&[&fixed[..], &["--fail-on", "A1"]].concat());
    assert_eq!(c, Some(0), "{err}");
    // A3 and A6 cannot happen here (no provenance, one-cell writes): 0/40 of them says
    // nothing, so the gate cannot tell (exit 2) and says what would make them possible.
    let (c, _, err) = run(&[&fixed[..], &["--fail-on", "A1,A3"]].concat());
    assert_eq!(c, Some(2), "{err}");
    assert!(
        err.contains("--fail-on A3: cannot tell (vacuous: A3 needs provenance"),
        "{err}"
    );
    let (c, _, err) = run(&["simulate", EDIT_REVIEW, "--trials", "40", "--fail-on", "A6"]);
    assert_eq!(c, Some(2), "{err}");
    assert!(
        err.contains("vacuous: A6 needs a `write` of two or more cells"),
        "{err}"
    );
}

#[test]
fn a_run_that_cannot_tell_exits_2_unless_allowed() {
    // A4 needs replica metadata, which the single-store engine never records.
    let a4 = ["simulate", EDIT_REVIEW, "--trials", "5", "--fail-on", "A4"];
    let (c, _, err) = run(&a4);
    assert_eq!(c, Some(2), "{err}");
    assert!(
        err.contains("--fail-on A4: cannot tell (undecidable:"),
        "{err}"
    );
    let (c, _, err) = run(&[&a4[..], &["--allow-cannot-tell"]].concat());
    assert_eq!(c, Some(0), "{err}");
    // Trials cut at events_max before showing A6: their "none" is no answer (budget).
    let cut = edit_review_with("cut.toml", "[schedule]\nevents_max = 4");
    let (c, _, err) = run(&["simulate", &cut, "--trials", "5", "--fail-on", "A6"]);
    assert_eq!(c, Some(2), "{err}");
    assert!(
        err.contains("cannot tell (budget: 5 of 5 trials hit events_max"),
        "{err}"
    );
}

#[test]
fn fail_on_does_not_combine_with_a_partial() {
    let out = std::env::temp_dir().join(format!("agentsim-gate-part-{}.json", std::process::id()));
    let args = [
        "simulate",
        EDIT_REVIEW,
        "--fail-on",
        "A1",
        "--shard",
        "1/2",
        "--partial-out",
        out.to_str().expect("utf-8"),
    ];
    let (c, _, err) = run(&args);
    assert_eq!(c, Some(2), "{err}");
    assert!(err.contains("--fail-on gates the whole run"), "{err}");
}

#[test]
fn a_scheduler_with_no_choice_to_make_says_so() {
    let base = ["simulate", EDIT_REVIEW, "--trials", "20"];
    let (c, pct, err) = run(&[&base[..], &["--scheduler", "pct:3"]].concat());
    assert_eq!(c, Some(0), "{err}");
    assert!(
        err.contains(
            "hint: pct:3 had no choice to make: no two events were ever enabled together in \
             20 trials"
        ) && err.contains("window_ms = 0"),
        "{err}"
    );
    let (_, random, err) = run(&[&base[..], &["--scheduler", "random"]].concat());
    assert!(err.contains("hint: random had no choice to make"), "{err}");
    // The hint's claim: the numbers are the same whatever the scheduler.
    let strip = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(strip(&pct), strip(&random));
    // No scheduler chosen: nothing to hint about.
    let (_, _, err) = run(&base);
    assert!(!err.contains("hint:"), "{err}");
    // A window in which events tie: the scheduler has choices, and no hint.
    let wide = edit_review_with("wide.toml", "[schedule]\nwindow_ms = 2000");
    let (c, _, err) = run(&["simulate", &wide, "--trials", "20", "--scheduler", "pct:3"]);
    assert_eq!(c, Some(0), "{err}");
    assert!(!err.contains("hint:"), "{err}");
}

/// A retracted root whose readers record no preds (`provenance = false`, vanilla) shows the A3
/// residue in every trial and no lattice anomaly: the summary line counts it (a replay line,
/// not "no anomaly"), and `--fail-on A3_residue`, which `[[expect]]` also names, gates on it.
#[test]
fn the_a3_residue_is_counted_by_the_summary_and_gated_by_fail_on() {
    let dir = std::env::temp_dir().join(format!("agentsim-sim-residue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let text = std::fs::read_to_string(root().join("scenarios/twins/a3-depth2.toml"))
        .expect("scenario")
        .replace("provenance = true", "provenance = false")
        .replace("runtime = \"causal\"", "runtime = \"vanilla\"");
    let path = dir.join("residue.toml");
    std::fs::write(&path, text).expect("write scenario");
    let p = path.to_str().expect("utf-8");
    let (c, out, err) = run(&["simulate", p, "--trials", "50"]);
    assert_eq!(c, Some(0), "{err}");
    assert!(out.contains("A3_residue         50/50"), "{out}");
    let last = out.lines().last().expect("a summary line");
    assert!(last.starts_with("replay: agentsim replay '"), "{out}");
    let (c, _, err) = run(&["simulate", p, "--trials", "50", "--fail-on", "A3_residue"]);
    assert_eq!(c, Some(1), "{err}");
    assert!(err.contains("--fail-on A3_residue: 50/50 trials"), "{err}");
}
