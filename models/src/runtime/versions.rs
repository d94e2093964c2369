//! The multi-version view of the store that snapshot runtimes (`si`, `ssi`, `causal` and
//! above) validate against: for each cell, the committed versions in commit order.
//!
//! A version is installed when a record commits (never when it is aborted at commit); a
//! later retraction leaves it installed, and the validating runtime skips versions whose
//! writer is aborted by then (as the TLA twin's `StaleRead` does). The invariant, asserted on every
//! install, is that each cell's versions are in strictly increasing commit (write-time) order.
//! A pass of these asserts says nothing about which anomalies a runtime prevents.

use crate::names::Cell;
use crate::record::OpRecord;
use std::collections::BTreeMap;

/// One committed version of a cell: the writer's log index and its write time.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Version {
    pub write_time: u64,
    pub index: usize,
}

/// Committed versions per cell, in commit order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Versions {
    cells: BTreeMap<Cell, Vec<Version>>,
}

impl Versions {
    /// No versions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Installs the writes of committed record `index`.
    pub fn install(&mut self, index: usize, record: &OpRecord) {
        assert!(!record.aborted, "aborted writes are never installed");
        for &c in &record.write_set {
            let versions = self.cells.entry(c).or_default();
            if let Some(last) = versions.last() {
                assert!(
                    last.write_time < record.write_time,
                    "versions of a cell must be in commit order"
                );
                assert!(
                    last.index < index,
                    "versions of a cell must be in log order"
                );
            }
            versions.push(Version {
                write_time: record.write_time,
                index,
            });
        }
    }

    /// The first committed version of `c` newer than `read_time`, if any.
    pub fn newer_than(&self, c: Cell, read_time: u64) -> Option<Version> {
        self.all_newer_than(c, read_time).first().copied()
    }

    /// Every committed version of `c` newer than `read_time`, in commit order.
    pub fn all_newer_than(&self, c: Cell, read_time: u64) -> &[Version] {
        let versions = self.of(c);
        &versions[versions.partition_point(|v| v.write_time <= read_time)..]
    }

    /// The versions of `c`, in commit order.
    pub fn of(&self, c: Cell) -> &[Version] {
        self.cells.get(&c).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(write_time: u64, cells: &[u32]) -> OpRecord {
        OpRecord {
            write_time,
            write_set: cells.iter().map(|&c| Cell(c)).collect(),
            ..OpRecord::default()
        }
    }

    #[test]
    fn newer_than_is_strict() {
        let mut v = Versions::new();
        v.install(0, &rec(1, &[0]));
        v.install(2, &rec(3, &[0, 1]));
        assert_eq!(v.newer_than(Cell(0), 0).map(|x| x.index), Some(0));
        assert_eq!(v.newer_than(Cell(0), 1).map(|x| x.index), Some(2));
        assert_eq!(v.newer_than(Cell(0), 3), None);
        assert_eq!(v.newer_than(Cell(2), 0), None);
        assert_eq!(v.of(Cell(1)).len(), 1);
    }

    #[test]
    #[should_panic(expected = "commit order")]
    fn out_of_order_install_is_caught() {
        let mut v = Versions::new();
        v.install(1, &rec(2, &[0]));
        v.install(2, &rec(2, &[0]));
    }
}
