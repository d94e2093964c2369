//! `agentsim reproduce` end to end: it writes every file and the index, `--check` passes on
//! what it wrote and fails with exit 1 naming a changed, a missing and a stray file, `--only`
//! rejects an unknown step with exit 2, and the committed `results/` is current. A pass does
//! not prove the steps compute the right numbers; their own tests do.

use std::path::{Path, PathBuf};

use crate::util::agentsim;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentsim-test-{name}-{}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    dir
}

fn out_arg(dir: &Path) -> String {
    dir.to_str().expect("utf-8 temp path").to_string()
}

#[test]
fn writes_then_checks_clean() {
    let dir = scratch("clean");
    let out = out_arg(&dir);
    let first = agentsim(&["reproduce", "--quick", "--out", &out]);
    assert!(first.status.success(), "{first:?}");
    for f in [
        "README.md",
        "figures/lattice_hasse.svg",
        "tables/lattice.md",
    ] {
        assert!(dir.join(f).is_file(), "{f} not written");
    }
    assert!(dir.join("tables/lattice.csv").is_file());
    assert!(dir.join("tables/lattice.json").is_file());
    let check = agentsim(&["reproduce", "--quick", "--out", &out, "--check"]);
    assert_eq!(check.status.code(), Some(0), "{check:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_names_changed_missing_and_stray_files() {
    let dir = scratch("dirty");
    let out = out_arg(&dir);
    assert!(agentsim(&["reproduce", "--quick", "--out", &out])
        .status
        .success());
    std::fs::write(dir.join("tables/lattice.csv"), "edited\n").unwrap();
    std::fs::remove_file(dir.join("figures/lattice_hasse.svg")).unwrap();
    std::fs::write(dir.join("figures/renamed.svg"), "<svg/>\n").unwrap();
    let check = agentsim(&["reproduce", "--quick", "--out", &out, "--check"]);
    assert_eq!(check.status.code(), Some(1));
    let err = String::from_utf8_lossy(&check.stderr);
    assert!(
        err.contains("differs: ") && err.contains("tables/lattice.csv"),
        "{err}"
    );
    assert!(
        err.contains("missing: ") && err.contains("figures/lattice_hasse.svg"),
        "{err}"
    );
    assert!(
        err.contains("made by no step: ") && err.contains("renamed.svg"),
        "{err}"
    );
    // --check never writes into --out.
    assert_eq!(
        std::fs::read(dir.join("tables/lattice.csv")).unwrap(),
        b"edited\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn only_runs_one_step_and_rejects_unknown_names() {
    let dir = scratch("only");
    let out = out_arg(&dir);
    let one = agentsim(&["reproduce", "--out", &out, "--only", "lattice", "--json"]);
    assert!(one.status.success());
    let v: serde_json::Value = serde_json::from_slice(&one.stdout).expect("json summary");
    assert_eq!(v["steps"], serde_json::json!(["lattice"]));
    assert!(
        !dir.join("README.md").exists(),
        "--only must leave the index alone"
    );
    let bad = agentsim(&["reproduce", "--out", &out, "--only", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("--only nope: no such step; the steps are lattice"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn committed_results_are_current() {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results");
    let check = agentsim(&["reproduce", "--check", "--out", &out_arg(&results)]);
    let err = String::from_utf8_lossy(&check.stderr);
    assert_eq!(
        check.status.code(),
        Some(0),
        "run `agentsim reproduce` and commit: {err}"
    );
}
