//! `agentsim check --skew` is the paper's `AllowSkew` (every cell's read is free, whatever
//! `ExternalCells` is) and `--skew-external --external N` is extension 5 (only the first N
//! cells): TLC's counts for both (`tla/Memory_paper_skew_1a2c1ops.cfg`,
//! `tla/Memory_skewexternal_1a2c1ops.cfg`), and exit 2 for every combination in which a flag
//! would have no effect. A pass pins these bounds only.

use crate::util::agentsim;

const BOUNDS: [&str; 9] = [
    "check",
    "--agents",
    "1",
    "--cells",
    "2",
    "--max-ops",
    "1",
    "--property",
    "none",
];

fn counts(extra: &[&str]) -> (u64, u64, u64) {
    let out = agentsim(&[&BOUNDS[..], extra, &["--json"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{extra:?}: {stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let n = |k: &str| v[k].as_u64().expect(k);
    (n("distinct_states"), n("generated_states"), n("depth"))
}

#[test]
fn paper_skew_frees_every_cell_as_tlc_counts_it() {
    assert_eq!(counts(&["--paper"]), (10_168, 10_937, 5));
    assert_eq!(counts(&["--paper", "--skew"]), (91_480, 98_393, 5));
    assert_eq!(
        counts(&["--skew"]),
        (91_480, 98_393, 5),
        "the same without --paper"
    );
    let external = ["--skew-external", "--external", "1"];
    assert_eq!(counts(&external), (30_496, 32_801, 5));
    let both = ["--skew-external", "--external", "2"];
    assert_eq!(
        counts(&both),
        (91_480, 98_393, 5),
        "every cell external = the paper's"
    );
}

#[test]
fn a_skew_flag_without_effect_is_refused() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["--skew", "--external", "1"],
            "--skew frees every cell's reads",
        ),
        (
            &["--external", "1"],
            "--external is read only by --skew-external",
        ),
        (&["--skew-external"], "--skew-external needs --external N"),
        (
            &["--paper", "--skew-external", "--external", "1"],
            "--skew-external is extension 5",
        ),
        (
            &["--skew", "--skew-external", "--external", "1"],
            "cannot be used with",
        ),
    ];
    for (extra, needle) in cases {
        let out = agentsim(&[&BOUNDS[..], extra].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(needle), "{extra:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{extra:?}");
    }
}
