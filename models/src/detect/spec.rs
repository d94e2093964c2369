//! Spec-form detectors: SPEC §3 transcribed literally, one loop per quantifier. Each lives in
//! its anomaly's file (re-exported here under the anomaly's name); this file runs them all.
//!
//! These are the reference the fast forms are tested against. They are quadratic or worse;
//! use them on small histories (the enumeration tests, proptest, the checker's tiny logs).
//! See the module docs of [`crate::detect`] for how aborted records are read.

use super::witnesses::Summary;
use super::{a1, a2, a3, a4, a6, l1_struct, Report};
use crate::history::History;
use crate::record::ValueMap;

pub use a1::{spec as a1, spec_each as a1_each};
pub use a2::{spec as a2, spec_each as a2_each};
pub use a3::{residue_spec as a3_residue, residue_spec_each as a3_residue_each};
pub use a3::{spec as a3, spec_each as a3_each};
pub use a6::{spec as a6, spec_each as a6_each};
pub use l1_struct::{spec as l1_struct, spec_each as l1_struct_each};

/// Runs every spec-form detector on a history that starts empty.
pub fn detect(h: &History) -> Report {
    detect_from(h, &ValueMap::new())
}

/// Runs every spec-form detector on a history that starts in state `initial` (only
/// `L1_struct` and the A3 residue read the state before the first record).
pub fn detect_from(h: &History, initial: &ValueMap) -> Report {
    let r = &h.records;
    Report {
        a1: a1(r),
        a2: a2(r),
        a3: a3(r),
        a3_residue: super::collect(|f| a3_residue_each(r, initial, f)),
        a6: a6(r),
        a4: a4::spec(r),
        l1_struct: super::collect(|f| l1_struct_each(r, initial, f)),
    }
}

/// Every spec-form detector, counting every witness and keeping the first `max` of each in
/// completion order (the loops below visit witnesses in exactly that order), A4 included when
/// some record has replica metadata. Memory is O(max) beyond the history. The history starts
/// empty.
pub fn summary(h: &History, max: usize, residue: bool) -> Summary {
    summary_from(h, &ValueMap::new(), max, residue)
}

/// [`summary`] of a history that starts in state `initial`.
pub fn summary_from(h: &History, initial: &ValueMap, max: usize, residue: bool) -> Summary {
    let r = &h.records;
    let mut s = Summary::new(max);
    a1_each(r, &mut |w| {
        s.a1.push(w);
    });
    a2_each(r, &mut |w| {
        s.a2.push(w);
    });
    a3_each(r, &mut |w| {
        s.a3.push(w);
    });
    if residue {
        a3_residue_each(r, initial, &mut |w| {
            s.a3_residue.push(w);
        });
    }
    a6_each(r, &mut |w| {
        s.a6.push(w);
    });
    l1_struct_each(r, initial, &mut |w| {
        s.l1_struct.push(w);
    });
    s.replica_meta = a4::has_replica_meta(h);
    a4::spec_in_completion_order(r, &mut s.a4);
    s.records = r.len() as u64;
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::A1Witness;
    use crate::names::{Agent, Cell, Value};
    use crate::record::{OpRecord, ValueMap};

    fn rec(agent: u32, rt: u64, wt: u64) -> OpRecord {
        OpRecord {
            agent: Agent(agent),
            read_time: rt,
            write_time: wt,
            ..OpRecord::default()
        }
    }

    /// SPEC §3: both agents read NULL at 0, a1 writes v1 at 1, a2 commits at 2.
    #[test]
    fn snapshot_insufficiency_witness() {
        let mut r1 = rec(0, 0, 1);
        r1.read_set = vec![Cell(0)];
        r1.write_set = vec![Cell(0)];
        r1.write_values = ValueMap::from_pairs([(Cell(0), Value(1))]);
        let mut r2 = rec(1, 0, 2);
        r2.read_set = vec![Cell(0)];
        let h = History::from_records(vec![r1, r2]);
        let rep = detect(&h);
        assert!(rep.l1_struct_holds());
        assert_eq!(
            rep.a1,
            vec![A1Witness {
                reader: 1,
                writer: 0,
                cell: Cell(0)
            }]
        );
    }

    /// A trace that starts mid-life: r0 reads v2 of c0 that no record wrote, r1 writes v1,
    /// r2 reads v2 again after it. From an empty start r0's read is an `L1_struct` violation
    /// and an A3 residue; from a start where c0 held v2 it is a read of that state, and only
    /// r2's read (v2 after v1 was committed) is stale.
    #[test]
    fn a_read_of_the_initial_state_is_not_a_violation() {
        let mut r0 = rec(0, 0, 1);
        r0.read_set = vec![Cell(0)];
        r0.read_values = ValueMap::from_pairs([(Cell(0), Value(2))]);
        let mut r1 = rec(1, 1, 2);
        r1.write_set = vec![Cell(0)];
        r1.write_values = ValueMap::from_pairs([(Cell(0), Value(1))]);
        let mut r2 = rec(0, 2, 3);
        r2.read_set = vec![Cell(0)];
        r2.read_values = ValueMap::from_pairs([(Cell(0), Value(2))]);
        let h = History::from_records(vec![r0, r1, r2]);
        let empty = detect(&h);
        assert_eq!(empty.l1_struct.len(), 2);
        assert_eq!(empty.a3_residue.len(), 2);
        let mid = detect_from(&h, &ValueMap::from_pairs([(Cell(0), Value(2))]));
        assert_eq!(mid.l1_struct.len(), 1);
        assert_eq!(
            (mid.l1_struct[0].record, mid.l1_struct[0].writer),
            (2, Some(1))
        );
        assert!(mid.a3_residue.is_empty(), "the initial state produced v2");
        assert_eq!(mid.a1, empty.a1, "A1 does not read the initial state");
    }
}
