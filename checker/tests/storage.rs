//! The explorer's storage: the open-addressing seen set, the packed frontier
//! and spilling to disk give exactly the pinned TLC counts, whatever the memory budget, the
//! pre-sizing and the thread count. A budget of 0 bytes forces every block of every level
//! through the spill file; every model spills (the generic codec), and a cancel flag or a
//! memory ceiling stops a search cleanly. These tests show the storage changes no count at these bounds; they
//! say nothing about fingerprint collisions, which only larger runs could exhibit.

use agentsim_checker::engine::control::{Progress, Reporter, Stopped};
use agentsim_checker::engine::explore::{explore, explore_with, ExploreOptions, Outcome};
use agentsim_checker::engine::frontier::Storage;
use agentsim_checker::jobs::run::{self, CheckConfig};
use agentsim_checker::{
    Bounds, Extensions, PaperModel, PropSet, Property, ReplicatedModel, Replication, RuntimeModel,
};
use agentsim_models::replica::ReadDiscipline;
use agentsim_models::runtime::RuntimeKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
        ..Storage::default()
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

/// Every model spills through the generic codec: the runtime models and the replicated one
/// give the in-memory counts with every level on disk, and leave no file behind.
#[test]
fn every_model_spills_with_unchanged_counts() {
    let dir = spill_dir("every-model");
    let none = PropSet::default();
    let b = Bounds::paper(1, 1, 2);
    let vanilla = RuntimeModel::of_kind(b, Extensions::default(), RuntimeKind::Vanilla).unwrap();
    let o = explore_with(&vanilla, &opts(2, none), &spilling(&dir, 0));
    assert_eq!(counts(&o), (31_942, 33_497, 7));
    assert!(o.spilled_bytes > 0);
    let mut two = Bounds::paper(2, 1, 1);
    two.values = 1;
    for kind in RuntimeKind::ALL {
        let m = RuntimeModel::of_kind(two, Extensions::default(), kind).unwrap();
        let mem = explore(&m, &opts(2, none));
        let disk = explore_with(&m, &opts(2, none), &spilling(&dir, 0));
        assert_eq!(counts(&mem), counts(&disk), "{}", kind.name());
        assert!(disk.spilled_bytes > 0, "{}", kind.name());
    }
    let rep = Replication {
        secondaries: 1,
        max_lag: 1,
        discipline: ReadDiscipline::AnyReplica,
    };
    let mut rb = Bounds::paper(2, 1, 2);
    (rb.values, rb.tools) = (1, 0);
    let m = ReplicatedModel::of_kind(rb, Extensions::default(), rep, RuntimeKind::Vanilla).unwrap();
    let mem = explore(&m, &opts(2, none));
    let disk = explore_with(&m, &opts(2, none), &spilling(&dir, 0));
    assert_eq!(counts(&mem), counts(&disk));
    assert!(disk.spilled_bytes > 0);
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "spill files are removed: {left:?}");
    std::fs::remove_dir(&dir).unwrap();
}

/// The shortest counterexamples do not depend on where the frontier is kept: the trace
/// search spills too and finds the same paths.
#[test]
fn spilled_trace_search_finds_the_same_counterexamples() {
    let dir = spill_dir("traces");
    let mut b = Bounds::paper(2, 1, 2);
    (b.values, b.tools) = (1, 1);
    let cfg = CheckConfig {
        bounds: b,
        ext: Extensions::default(),
        runtime: RuntimeKind::Si.into(),
        symmetry: false,
        properties: vec![Property::A1, Property::A2, Property::A6],
        threads: 2,
        max_states: u64::MAX,
    };
    let paths = |storage: &Storage| {
        let r = run::check_with(&cfg, storage).unwrap();
        let p: Vec<_> = r
            .verdicts
            .iter()
            .map(|v| v.counterexample.as_ref().map(|c| c.path.clone()))
            .collect();
        (p, counts(&r.outcome))
    };
    let mem = paths(&Storage::default());
    assert!(
        mem.0.iter().any(Option::is_some),
        "something is violated: {mem:?}"
    );
    assert_eq!(paths(&spilling(&dir, 0)), mem);
    std::fs::remove_dir(&dir).unwrap();
}

/// A raised cancel flag stops the search between blocks: partial counts, the reason, and no
/// spill file left; a memory ceiling below the current resident set stops it the same way.
#[test]
fn cancel_and_memory_ceiling_stop_cleanly() {
    let dir = spill_dir("stop");
    let m = paper(2, 1, 2, false);
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let mut storage = spilling(&dir, 0);
    storage.limits.cancel = Some(cancel);
    // Raise the flag at the end of the fourth level, as a signal handler would.
    storage.progress = Some(Reporter(Arc::new(move |p: &Progress| {
        if p.level_end && p.depth == 4 {
            flag.store(true, Ordering::Relaxed);
        }
    })));
    let o = explore_with(&m, &opts(2, PropSet::default()), &storage);
    assert_eq!(o.stopped, Some(Stopped::Cancelled));
    assert!(!o.complete);
    assert_eq!(o.depth, 4, "stopped before expanding the fifth level");
    assert!(o.distinct < 2_063_972);
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "spill files are removed: {left:?}");

    if agentsim_checker::engine::control::rss_bytes().is_some() {
        let mut tight = spilling(&dir, 0);
        tight.limits.max_memory_bytes = 1 << 20;
        let o = explore_with(&m, &opts(2, PropSet::default()), &tight);
        assert!(
            matches!(o.stopped, Some(Stopped::Memory { limit_bytes, .. }) if limit_bytes == 1 << 20)
        );
        assert!(!o.complete);
    }
    std::fs::remove_dir(&dir).unwrap();
}
