//! The explorer's storage (issue 5, item 7): the open-addressing seen set, the packed frontier
//! and spilling to disk give exactly the pinned TLC counts, whatever the memory budget, the
//! pre-sizing and the thread count. A budget of 0 bytes forces every block of every level
//! through the spill file. These tests show the storage changes no count at these bounds; they
//! say nothing about fingerprint collisions, which only larger runs could exhibit.

use agentsim_checker::explore::{explore, explore_with, ExploreOptions, Outcome};
use agentsim_checker::frontier::Storage;
use agentsim_checker::{Bounds, Extensions, PaperModel, PropSet, Property, RuntimeModel};
use agentsim_models::runtime::RuntimeKind;
use std::path::{Path, PathBuf};

fn opts(threads: usize, check: PropSet) -> ExploreOptions {
    ExploreOptions {
        threads,
        check,
        max_states: u64::MAX,
    }
}

/// A fresh spill directory for one test.
fn spill_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentsim-storage-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn spilling(dir: &Path, expect_states: u64) -> Storage {
    Storage {
        expect_states,
        frontier_mem_bytes: 0,
        spill_dir: dir.to_path_buf(),
        progress: false,
    }
}

fn counts(o: &Outcome) -> (u64, u64, u32) {
    (o.distinct, o.generated, o.depth)
}

fn paper(agents: u32, cells: u32, max_ops: u32, canonical: bool) -> PaperModel {
    let ext = Extensions {
        canonical_writes: canonical,
        ..Extensions::default()
    };
    PaperModel::new(Bounds::paper(agents, cells, max_ops), ext, false).unwrap()
}

/// Every level spilled, 1 and 2 threads, pre-sized or growing: TLC's counts.
#[test]
fn spilled_frontier_keeps_the_pinned_counts() {
    let dir = spill_dir("pinned");
    let pinned = [
        ((1, 1, 2, false), (31_942, 33_497, 7)),
        ((1, 2, 1, false), (10_168, 10_937, 5)),
        ((1, 1, 2, true), (14_974, 15_725, 7)),
        ((1, 2, 1, true), (6_968, 7_497, 5)),
    ];
    for ((a, c, k, canonical), want) in pinned {
        let m = paper(a, c, k, canonical);
        for threads in [1, 2] {
            for expect in [0, 40_000] {
                let o = explore_with(
                    &m,
                    &opts(threads, PropSet::default()),
                    &spilling(&dir, expect),
                );
                assert_eq!(counts(&o), want, "{a}a{c}c{k} canonical {canonical}");
                assert!(o.spilled_bytes > 0, "every level went through the file");
                assert_eq!(o.frontier_mem_peak, 0);
            }
        }
    }
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "spill files are removed: {left:?}");
    std::fs::remove_dir(&dir).unwrap();
}

/// The 2-agent paper configuration (2,063,972 states) spilled with 2 threads.
#[test]
fn two_agents_spilled_match_tlc() {
    let dir = spill_dir("2a");
    let m = paper(2, 1, 2, false);
    let o = explore_with(&m, &opts(2, PropSet::default()), &spilling(&dir, 0));
    assert_eq!(counts(&o), (2_063_972, 2_151_381, 8));
    assert!(o.complete);
    // Packed, a 2-agent state takes a few bytes, not a boxed slice of 16-byte words.
    assert!(
        o.spilled_bytes < 16 * 2_063_972,
        "{} bytes",
        o.spilled_bytes
    );
    std::fs::remove_dir(&dir).unwrap();
}

/// Verdicts are unchanged when the frontier is spilled, including the early stop.
#[test]
fn spilled_frontier_keeps_the_verdicts() {
    let dir = spill_dir("verdicts");
    let check = PropSet::of(&[Property::A1, Property::A2, Property::A6]);
    let m = paper(2, 1, 1, false);
    let mem = explore(&m, &opts(2, check));
    let disk = explore_with(&m, &opts(2, check), &spilling(&dir, 0));
    assert_eq!(mem.violated, disk.violated);
    assert_eq!(counts(&mem), counts(&disk));
    assert_eq!(mem.all_violated, disk.all_violated);
    assert!(!mem.violated.is_empty(), "some property is violated here");
    std::fs::remove_dir(&dir).unwrap();
}

/// A model without a byte encoding (the runtime model) keeps its frontier as states.
#[test]
fn models_without_an_encoding_stay_in_memory() {
    let dir = spill_dir("runtime");
    let b = Bounds::paper(1, 1, 2);
    let m = RuntimeModel::of_kind(b, Extensions::default(), RuntimeKind::Vanilla).unwrap();
    let o = explore_with(&m, &opts(2, PropSet::default()), &spilling(&dir, 0));
    assert_eq!(counts(&o), (31_942, 33_497, 7));
    assert_eq!(o.spilled_bytes, 0);
    std::fs::remove_dir(&dir).unwrap();
}
