//! The prevention twins pinned: every twin is N/N without its mechanism and 0/N with it
//! (SPEC §7), computed by the engine and the detectors; the same seed gives the same counts
//! on one thread and on several. A pass covers these seeds and timings, not every schedule.

use agentsim::experiments::twin_specs::{figure_data, KN, TWINS};
use agentsim::experiments::twins;

#[test]
fn every_twin_is_all_without_and_none_with() {
    let n = 200;
    let results = twins::run(n, 1, 2).expect("twins run");
    assert_eq!(results.len(), TWINS.len());
    for r in &results {
        assert_eq!(r.without, KN { k: n, n }, "{}", r.display());
        assert_eq!(r.with, KN { k: 0, n }, "{}", r.display());
    }
    let sizes: Vec<(&str, u32)> = results.iter().map(|r| (r.anomaly.name(), r.size)).collect();
    assert_eq!(
        sizes,
        [
            ("A1", 2),
            ("A1", 2),
            ("A3", 2),
            ("A3", 3),
            ("A3", 5),
            ("A6", 2),
            ("A6", 4),
            ("A6", 8),
            ("A6", 16),
            ("A2", 2),
            ("A2", 4),
            ("A2", 16),
            ("A2", 2)
        ]
    );
}

#[test]
fn twins_are_the_same_on_any_thread_count() {
    let one = twins::run(40, 9, 1).expect("one thread");
    let three = twins::run(40, 9, 3).expect("three threads");
    assert_eq!(one, three);
    let table = figure_data(&one).table().to_csv();
    assert_eq!(table, figure_data(&three).table().to_csv());
}
