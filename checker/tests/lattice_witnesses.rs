//! Witnesses for the 16 lattice points: every point is found,
//! each witness exhibits exactly its point under both detector forms, survives a JSON Lines
//! round trip (what `agentsim detect` reads), and has the pinned, provably shortest length.

use agentsim_checker::jobs::lattice_witnesses::{self, lower_bound, Order, Witness};
use agentsim_jsonl as jsonl;
use agentsim_models::detect::{fast, spec};
use agentsim_models::lattice::{self, Point};
use agentsim_models::Anomaly::{A1, A2, A3, A6};

const MAX: u64 = 1_000_000;

fn all() -> Vec<Witness> {
    lattice_witnesses::find_all(Order::Depth, MAX).expect("every point has a witness")
}

/// Shortest lengths, pinned: each equals the bound-independent lower bound.
const STEPS: [(&[agentsim_models::Anomaly], usize); 16] = [
    (&[], 0),
    (&[A1], 4),
    (&[A2], 3),
    (&[A3], 5),
    (&[A6], 2),
    (&[A1, A2], 5),
    (&[A1, A3], 7),
    (&[A2, A3], 6),
    (&[A1, A6], 4),
    (&[A2, A6], 3),
    (&[A3, A6], 5),
    (&[A1, A2, A3], 8),
    (&[A1, A2, A6], 5),
    (&[A1, A3, A6], 7),
    (&[A2, A3, A6], 6),
    (&[A1, A2, A3, A6], 8),
];

#[test]
fn every_point_has_an_exact_shortest_witness() {
    let ws = all();
    assert_eq!(ws.len(), 16);
    let points: Vec<Point> = ws.iter().map(|w| w.point).collect();
    assert_eq!(points, lattice::points());
    for (w, (members, steps)) in ws.iter().zip(STEPS) {
        assert_eq!(w.point, Point::of(members));
        assert_eq!(w.len(), steps, "{}", w.point.label());
        assert_eq!(lower_bound(w.point), steps, "{}", w.point.label());
        assert!(w.optimal());
        let reference = spec::detect(&w.history);
        assert_eq!(reference, fast::detect(&w.history), "{}", w.point.label());
        assert_eq!(Point::of(&reference.anomalies()), w.point);
    }
}

#[test]
fn empty_point_is_the_empty_history() {
    let w = lattice_witnesses::find(Point(0), Order::Depth, MAX).unwrap();
    assert!(w.is_empty());
    assert!(w.history.records.is_empty());
    assert_eq!(w.file_name(), "L0000-none.jsonl");
}

/// What `agentsim detect FILE` does: parse the JSON Lines, run the detectors.
#[test]
fn jsonl_round_trip_reports_exactly_the_point() {
    for w in all() {
        let text = jsonl::write_history(&w.history);
        let back = jsonl::parse_history(&text, &w.file_name()).expect("parses");
        assert_eq!(back.records.len(), w.history.records.len());
        for report in [fast::detect(&back), spec::detect(&back)] {
            assert_eq!(Point::of(&report.anomalies()), w.point, "{}", w.file_name());
        }
        assert_eq!(jsonl::write_history(&back), text, "stable bytes");
    }
}

/// Breadth-first order finds witnesses of the same lengths (checked where it is cheap: every
/// point but the two that need 2 agents, 2 cells and MaxOps 3).
#[test]
fn breadth_first_agrees_on_lengths() {
    for (members, steps) in STEPS {
        let p = Point::of(members);
        if p.contains(A1) && p.contains(A3) && p.contains(A6) {
            continue;
        }
        let w = lattice_witnesses::find(p, Order::Breadth, 2_000_000).unwrap();
        assert_eq!(w.len(), steps, "{}", p.label());
    }
}

/// The searches are deterministic: same witnesses, same replay lines.
#[test]
fn witnesses_are_deterministic() {
    let a: Vec<String> = all().iter().map(|w| w.path.clone()).collect();
    let b: Vec<String> = all().iter().map(|w| w.path.clone()).collect();
    assert_eq!(a, b);
}

#[test]
fn file_names_spell_the_point() {
    let ws = all();
    let top = ws.last().unwrap();
    assert_eq!(top.file_name(), "L1111-A1-A2-A3-A6.jsonl");
    let a1a6 = ws.iter().find(|w| w.point == Point::of(&[A1, A6])).unwrap();
    assert_eq!(a1a6.file_name(), "L1001-A1-A6.jsonl");
}
