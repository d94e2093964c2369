//! A history: the log of operation records in log order, with the names they use.
//!
//! Log order is `write_time` ascending (SPEC §2). `preds` point at earlier indices.
//! [`History::validate`] checks the structural well-formedness that every detector assumes;
//! it says nothing about anomalies.

use crate::names::{Cell, Names};
use crate::record::OpRecord;

/// A structural defect of a history, with the 0-based record index.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    #[error("record {index}: write_time {write_time} is before the previous record's {previous}")]
    WriteTimeOrder {
        index: usize,
        write_time: u64,
        previous: u64,
    },
    #[error("record {index}: read_time {read_time} is after write_time {write_time}")]
    ReadAfterWrite {
        index: usize,
        read_time: u64,
        write_time: u64,
    },
    #[error("record {index}: pred {pred} is not an earlier record")]
    PredNotEarlier { index: usize, pred: u32 },
    #[error("record {index}: {field} is not sorted and duplicate-free")]
    UnsortedSet { index: usize, field: &'static str },
    #[error("record {index}: read_meta names cell {cell}, which is not in read_set")]
    MetaOutsideReadSet { index: usize, cell: Cell },
    #[error(
        "record {index}: the completion order ({co} effects) is not a permutation of `io` \
         ({io} effects): every issued effect completes exactly once"
    )]
    CoNotPermutation { index: usize, io: usize, co: usize },
}

/// A sequence of records in log order, and the names they use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    pub records: Vec<OpRecord>,
    pub names: Names,
}

impl History {
    /// A history over the given names.
    pub fn new(names: Names) -> Self {
        Self {
            records: Vec::new(),
            names,
        }
    }

    /// A history with synthetic names and the given records.
    pub fn from_records(records: Vec<OpRecord>) -> Self {
        Self {
            records,
            names: Names::new(),
        }
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Checks ordering of write times, read ≤ write, preds earlier, sets sorted, and that
    /// replica metadata is sorted by cell and only about cells read.
    pub fn validate(&self) -> Result<(), HistoryError> {
        let mut previous = 0;
        for (index, r) in self.records.iter().enumerate() {
            if r.write_time < previous {
                return Err(HistoryError::WriteTimeOrder {
                    index,
                    write_time: r.write_time,
                    previous,
                });
            }
            previous = r.write_time;
            if r.read_time > r.write_time {
                return Err(HistoryError::ReadAfterWrite {
                    index,
                    read_time: r.read_time,
                    write_time: r.write_time,
                });
            }
            for &p in &r.preds {
                if p as usize >= index {
                    return Err(HistoryError::PredNotEarlier { index, pred: p });
                }
            }
            for (field, ok) in [
                ("read_set", strictly_sorted(&r.read_set)),
                ("write_set", strictly_sorted(&r.write_set)),
                ("preds", strictly_sorted(&r.preds)),
            ] {
                if !ok {
                    return Err(HistoryError::UnsortedSet { index, field });
                }
            }
            let meta_cells: Vec<Cell> = r.read_meta.iter().map(|m| m.cell).collect();
            if !strictly_sorted(&meta_cells) {
                let field = "read_meta";
                return Err(HistoryError::UnsortedSet { index, field });
            }
            if let Some(&cell) = meta_cells.iter().find(|&&c| !r.reads(c)) {
                return Err(HistoryError::MetaOutsideReadSet { index, cell });
            }
        }
        Ok(())
    }
}

impl History {
    /// Checks that every record's `co` is a permutation of its `io`, as the history format
    /// requires of a file (SPEC §2: every issued effect completes exactly once). The detectors
    /// do not assume it (A6's definition tests it), so [`History::validate`] does not check
    /// it; a reader of another format that hands `detect` a history checks both.
    pub fn validate_effects(&self) -> Result<(), HistoryError> {
        for (index, r) in self.records.iter().enumerate() {
            if !same_multiset(&r.io, &r.co) {
                let (io, co) = (r.io.len(), r.co.len());
                return Err(HistoryError::CoNotPermutation { index, io, co });
            }
        }
        Ok(())
    }
}

/// Whether `a` and `b` hold the same items, counted with multiplicity.
fn same_multiset<T: Ord + Clone>(a: &[T], b: &[T]) -> bool {
    if a == b {
        return true;
    }
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

fn strictly_sorted<T: Ord>(v: &[T]) -> bool {
    v.windows(2).all(|w| w[0] < w[1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Value;

    #[test]
    fn a_completion_order_must_be_a_permutation_of_the_issue_order() {
        let mut r = OpRecord {
            write_time: 1,
            ..OpRecord::default()
        };
        let (a, b) = ((Cell(0), Value(1)), (Cell(1), Value(2)));
        r.io = vec![a, b];
        r.co = vec![b, a];
        let mut h = History::from_records(vec![r.clone()]);
        assert_eq!(h.validate_effects(), Ok(()));
        for co in [vec![], vec![a], vec![a, a], vec![a, b, b]] {
            h.records[0].co = co.clone();
            assert_eq!(h.validate(), Ok(()), "the detectors take it");
            assert_eq!(
                h.validate_effects(),
                Err(HistoryError::CoNotPermutation {
                    index: 0,
                    io: 2,
                    co: co.len()
                }),
                "{co:?}"
            );
        }
    }
}
