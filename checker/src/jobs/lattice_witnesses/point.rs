//! What a lattice point asks of a witness history: the point a log exhibits ([`point_of`]),
//! the fewest records a history with exactly that point needs ([`records_needed`]) and a
//! bound-independent lower bound on its steps ([`lower_bound`]). Shared by the witness search
//! ([`super::search`]) and its driver ([`super`]), below both. The bounds
//! are arguments about the vanilla model's actions; they prove nothing about other runtimes.

use agentsim_models::detect::write_index::WriteIndex;
use agentsim_models::detect::{fast, Anomaly};
use agentsim_models::lattice::Point;
use agentsim_models::record::OpRecord;

/// The lattice point of a log: the exact set of anomalies the fast detectors find in it.
pub fn point_of(log: &[OpRecord]) -> Point {
    let index = WriteIndex::build(log);
    let mut found = Vec::new();
    if !fast::a1(log, &index, fast::Tuning::default()).is_empty() {
        found.push(Anomaly::A1);
    }
    if !fast::a2(log).is_empty() {
        found.push(Anomaly::A2);
    }
    if !fast::a3(log).is_empty() {
        found.push(Anomaly::A3);
    }
    if !fast::a6(log).is_empty() {
        found.push(Anomaly::A6);
    }
    Point::of(&found)
}

/// The fewest records a history exhibiting exactly `p` needs. A1 needs a reader and a writer
/// (both live); A3 a live record and its aborted predecessor, which with A1 is a third record
/// (A1's two records must be live); A2 and A6 are each one record's property.
pub fn records_needed(p: Point) -> u32 {
    let (a1, a3) = (p.contains(Anomaly::A1), p.contains(Anomaly::A3));
    match (a1, a3) {
        (true, true) => 3,
        (true, false) | (false, true) => 2,
        _ => u32::from(!p.is_empty()),
    }
}

/// A bound-independent lower bound on a witness's steps: two per record, one registry change
/// for A2, one Retract for A3.
pub fn lower_bound(p: Point) -> usize {
    let extra = [Anomaly::A2, Anomaly::A3]
        .iter()
        .filter(|&&a| p.contains(a))
        .count();
    2 * records_needed(p) as usize + extra
}
