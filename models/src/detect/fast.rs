//! Fast-form detectors: the witness sets of [`super::spec`], in near-linear time. Each lives in
//! its anomaly's file (re-exported here under the anomaly's name); this file holds the pass
//! they share over the reads, and runs them all.
//!
//! Everything that relates two records (A1, A3-residue, `L1_struct`) goes through the per-cell
//! [`WriteIndex`]: a reader's generation window on a cell is a position range found by
//! galloping from a per-cell cursor (records are visited in log order), never a scan over all
//! records. A1 is *output-sensitive*: a window of at most [`Tuning::scan_max`] writes is
//! scanned; a longer one is bisected, and a half is entered only when [`Counts`] says it holds
//! a stale writer (another agent, another value), so the cost is O((n + W + out) · log² n) for
//! n records, W writes and out witnesses, whatever the history.
//! A2, A3 (preds form) and A6 are per-record and linear in the input size. [`detect`] visits
//! the records once for all detectors (the records, not the index, dominate memory traffic);
//! the per-detector functions run the same code on their own, for benchmarks and tests.
//!
//! The output is the *same complete, sorted* [`Report`] as the spec form, on every history that
//! passes [`History::validate`](crate::history::History::validate) (agreement is tested by
//! exhaustive enumeration and proptest). Aborted records are read as in [`crate::detect`].
//! Agreement with the spec form is what a pass proves; the spec form is what says what an
//! anomaly *is*.

use super::read_pass::ReadPass;
pub use super::read_pass::Tuning;
use super::read_pass::Wanted;
use super::write_index::WriteIndex;
use super::{a1, a2, a3, a4, a6, Report};
use crate::history::History;
use crate::record::ValueMap;

pub use super::l1_struct::fast as l1_struct;
pub use a1::fast as a1;
pub use a2::fast as a2;
pub use a3::{fast as a3, residue_fast as a3_residue};
pub use a6::fast as a6;

/// Runs every fast-form detector on a history that starts empty.
pub fn detect(h: &History) -> Report {
    detect_with(h, Tuning::default())
}

/// Runs every fast-form detector with explicit tuning (tests force both A1 paths with it).
pub fn detect_with(h: &History, tuning: Tuning) -> Report {
    detect_from(h, &ValueMap::new(), tuning)
}

/// Runs every fast-form detector on a history that starts in state `initial` (see
/// [`super::spec::detect_from`]).
pub fn detect_from(h: &History, initial: &ValueMap, tuning: Tuning) -> Report {
    let r = &h.records;
    let index = WriteIndex::build(r);
    let mut reads = ReadPass::new(&index, initial, tuning, Wanted::ALL);
    let mut out = Report::default();
    for (i, ri) in r.iter().enumerate() {
        out.a2.extend(a2::of(i, ri));
        a3::of(r, i, ri, &mut out.a3);
        out.a6.extend(a6::of(i, ri));
        reads.record(i, ri, &mut out);
    }
    out.a4 = a4::fast(r);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::spec;
    use crate::names::{Agent, Cell, Value};
    use crate::record::OpRecord;
    use crate::record::ValueMap;

    /// One long reader and many writers: both A1 paths give the spec's witnesses.
    #[test]
    fn long_window_bisection_matches_scan_and_spec() {
        let mut records = vec![OpRecord {
            agent: Agent(0),
            read_set: vec![Cell(0)],
            read_values: ValueMap::from_pairs([(Cell(0), Value(1))]),
            write_time: 1,
            ..OpRecord::default()
        }];
        for k in 0..100u32 {
            records.push(OpRecord {
                agent: Agent(k % 3),
                write_set: vec![Cell(0)],
                write_values: ValueMap::from_pairs([(Cell(0), Value(1 + k % 4 / 3))]),
                write_time: u64::from(k) + 2,
                ..OpRecord::default()
            });
        }
        records[0].write_time = 200;
        records.rotate_left(1);
        for (i, r) in records.iter_mut().enumerate() {
            r.write_time = i as u64 + 1;
        }
        records[100].read_time = 0;
        let h = History::from_records(records);
        assert_eq!(h.validate(), Ok(()));
        let expected = spec::detect(&h);
        assert!(!expected.a1.is_empty());
        for scan_max in [0, 1, 5, usize::MAX] {
            assert_eq!(detect_with(&h, Tuning { scan_max }), expected, "{scan_max}");
        }
    }
}
