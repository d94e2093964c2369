//! Output-sensitive witness lists: count every witness, keep at most N.
//!
//! A detector pushes witnesses in its anomaly's *completion order* ([`Summary`] says which
//! order that is for each anomaly); [`Witnesses`] counts all of them and keeps the first
//! `max` (the *kept prefix*), so memory is O(max) whatever the history. Two detectors agree
//! when their counts and kept prefixes are equal. Completion order is the order in which a
//! reader of the log in log order learns of a witness: for A1, A2, A3, A6, the A3 residue and
//! `L1_struct` it is the witness type's own `Ord` (the first field is the record whose line
//! completes the witness); for A4 it is (later record, earlier record, cell), see
//! [`a4_order`]. A kept prefix says nothing about the witnesses left out beyond their number.

use super::{
    A1Witness, A2Witness, A3ResidueWitness, A3Witness, A4Witness, A6Witness, Anomaly,
    L1StructViolation, Report,
};
use std::cmp::Ordering;

/// The default `max`: enough to read, small enough to print.
pub const MAX_WITNESSES_DEFAULT: usize = 1000;

/// Every witness counted, the first `max` kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witnesses<T> {
    /// The kept prefix, in completion order.
    pub kept: Vec<T>,
    /// How many witnesses were pushed (kept or not).
    pub total: u64,
    max: usize,
}

impl<T> Witnesses<T> {
    /// An empty list keeping at most `max`.
    pub fn new(max: usize) -> Self {
        Witnesses {
            kept: Vec::new(),
            total: 0,
            max,
        }
    }

    /// Counts `w` and keeps it if there is room; returns whether it was kept.
    #[inline]
    pub fn push(&mut self, w: T) -> bool {
        self.total += 1;
        if self.kept.len() < self.max {
            self.kept.push(w);
            return true;
        }
        false
    }

    /// Counts `n` witnesses that are not kept (the caller knows there is no room).
    #[inline]
    pub fn count_only(&mut self, n: u64) {
        assert!(self.is_full() || n == 0, "count_only with room left");
        self.total += n;
    }

    /// How many more would be kept.
    #[inline]
    pub fn room(&self) -> usize {
        self.max - self.kept.len()
    }

    /// Whether no more will be kept.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.kept.len() >= self.max
    }

    /// The most this list keeps.
    pub fn max(&self) -> usize {
        self.max
    }

    /// How many witnesses were counted but not kept.
    pub fn left_out(&self) -> u64 {
        self.total - self.kept.len() as u64
    }

    /// Whether any witness was counted.
    pub fn any(&self) -> bool {
        self.total > 0
    }

    /// The list of a complete, completion-ordered witness vector, cut at `max`.
    pub fn from_complete(all: Vec<T>, max: usize) -> Self {
        let total = all.len() as u64;
        let mut kept = all;
        kept.truncate(max);
        Witnesses { kept, total, max }
    }
}

/// A4's completion order: by the later record (whose line completes the split), then the
/// earlier one, then the cell (a pair of records splits on a cell at most once).
pub fn a4_order(a: &A4Witness, b: &A4Witness) -> Ordering {
    let key = |w: &A4Witness| (w.second.record, w.first.record, w.cell);
    key(a).cmp(&key(b))
}

/// Every detector's counts and kept prefixes for one history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub a1: Witnesses<A1Witness>,
    pub a2: Witnesses<A2Witness>,
    pub a3: Witnesses<A3Witness>,
    /// Empty unless the residue form was asked for.
    pub a3_residue: Witnesses<A3ResidueWitness>,
    pub a6: Witnesses<A6Witness>,
    pub l1_struct: Witnesses<L1StructViolation>,
    /// A4 split views (replicated store), in [`a4_order`]; empty without replica metadata.
    pub a4: Witnesses<A4Witness>,
    /// Whether some record carries replica metadata (so A4 is decidable).
    pub replica_meta: bool,
    /// Records read.
    pub records: u64,
}

impl Summary {
    /// An empty summary keeping at most `max` witnesses per anomaly.
    pub fn new(max: usize) -> Self {
        Summary {
            a1: Witnesses::new(max),
            a2: Witnesses::new(max),
            a3: Witnesses::new(max),
            a3_residue: Witnesses::new(max),
            a6: Witnesses::new(max),
            l1_struct: Witnesses::new(max),
            a4: Witnesses::new(max),
            replica_meta: false,
            records: 0,
        }
    }

    /// The summary of a complete report, cut at `max` (A4 re-ordered into completion order).
    pub fn of_report(r: &Report, records: u64, max: usize) -> Self {
        let mut a4 = r.a4.clone();
        a4.sort_by(a4_order);
        Summary {
            a1: Witnesses::from_complete(r.a1.clone(), max),
            a2: Witnesses::from_complete(r.a2.clone(), max),
            a3: Witnesses::from_complete(r.a3.clone(), max),
            a3_residue: Witnesses::from_complete(r.a3_residue.clone(), max),
            a6: Witnesses::from_complete(r.a6.clone(), max),
            l1_struct: Witnesses::from_complete(r.l1_struct.clone(), max),
            replica_meta: false,
            a4: Witnesses::from_complete(a4, max),
            records,
        }
    }

    /// How many witnesses of `a` were counted.
    pub fn count(&self, a: Anomaly) -> u64 {
        match a {
            Anomaly::A1 => self.a1.total,
            Anomaly::A2 => self.a2.total,
            Anomaly::A3 => self.a3.total,
            Anomaly::A3Residue => self.a3_residue.total,
            Anomaly::A4 => self.a4.total,
            Anomaly::A6 => self.a6.total,
        }
    }

    /// How many witnesses of `a` were counted but not kept.
    pub fn left_out(&self, a: Anomaly) -> u64 {
        match a {
            Anomaly::A1 => self.a1.left_out(),
            Anomaly::A2 => self.a2.left_out(),
            Anomaly::A3 => self.a3.left_out(),
            Anomaly::A3Residue => self.a3_residue.left_out(),
            Anomaly::A4 => self.a4.left_out(),
            Anomaly::A6 => self.a6.left_out(),
        }
    }

    /// Whether the history exhibits `a` (some witness was counted).
    pub fn has(&self, a: Anomaly) -> bool {
        self.count(a) > 0
    }

    /// The exact set of lattice anomalies exhibited, in lattice order.
    pub fn anomalies(&self) -> Vec<Anomaly> {
        Anomaly::LATTICE
            .into_iter()
            .filter(|&a| self.has(a))
            .collect()
    }

    /// Whether `L1_struct` holds.
    pub fn l1_struct_holds(&self) -> bool {
        !self.l1_struct.any()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_all_keeps_a_prefix() {
        let mut w = Witnesses::new(2);
        assert!(w.push(1));
        assert!(w.push(2));
        assert!(!w.push(3));
        w.count_only(4);
        assert_eq!(
            (w.kept.as_slice(), w.total, w.left_out()),
            (&[1, 2][..], 7, 5)
        );
        assert_eq!(Witnesses::from_complete(vec![1, 2, 3], 2), {
            let mut x = Witnesses::new(2);
            for i in 1..=3 {
                x.push(i);
            }
            x
        });
    }
}
