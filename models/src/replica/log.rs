//! The primary's log (SPEC §6): per cell, an append-only sequence of committed versions.
//!
//! Version `n ≥ 1` of a cell is the `n`-th committed write to it; version 0 is the initial
//! NULL. Appending is the only mutation, and each append asserts the two invariants a
//! secondary relies on to replay the log: versions are consecutive (so a replica's state is
//! fully described by how many entries it applied) and commit times never go backwards. A
//! pass of these asserts says the log is well formed, not that reads of it are consistent.

use crate::names::{Agent, Cell, Value};
use std::collections::BTreeMap;

/// One committed version of a cell.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Entry {
    /// 1-based; the entry's position in its cell's log plus one.
    pub version: u64,
    pub value: Value,
    /// The agent whose operation committed it (for the session guarantees).
    pub writer: Agent,
    /// The writer's `write_time` (the single store's clock after the append).
    pub commit_time: u64,
}

/// Per-cell append-only logs of committed versions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct PrimaryLog {
    cells: BTreeMap<Cell, Vec<Entry>>,
}

impl PrimaryLog {
    /// Empty logs: every cell at version 0 (NULL).
    pub fn new() -> Self {
        Self::default()
    }

    /// The head (latest committed version) of `c`; 0 if never written.
    pub fn head(&self, c: Cell) -> u64 {
        self.entries(c).len() as u64
    }

    /// The value of `c` at `version` (NULL at version 0). Panics past the head: asking for a
    /// version that was never committed is a bug in the caller, not an input error.
    pub fn value_at(&self, c: Cell, version: u64) -> Value {
        if version == 0 {
            return Value::NULL;
        }
        let entries = self.entries(c);
        assert!(
            version <= entries.len() as u64,
            "version {version} of {c} is past the head {}",
            entries.len()
        );
        entries[(version - 1) as usize].value
    }

    /// Appends a committed write of `value` to `c`; returns its version.
    pub fn append(&mut self, c: Cell, value: Value, writer: Agent, commit_time: u64) -> u64 {
        let entries = self.cells.entry(c).or_default();
        let version = entries.len() as u64 + 1;
        if let Some(last) = entries.last() {
            assert_eq!(last.version + 1, version, "versions must be consecutive");
            assert!(
                last.commit_time <= commit_time,
                "commit times of a cell must not go backwards"
            );
        }
        entries.push(Entry {
            version,
            value,
            writer,
            commit_time,
        });
        version
    }

    /// The committed versions of `c`, oldest first.
    pub fn entries(&self, c: Cell) -> &[Entry] {
        self.cells.get(&c).map_or(&[], Vec::as_slice)
    }

    /// The cells written at least once, in cell order.
    pub fn cells(&self) -> impl Iterator<Item = Cell> + '_ {
        self.cells.keys().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_consecutive_from_one() {
        let mut log = PrimaryLog::new();
        assert_eq!(log.head(Cell(0)), 0);
        assert_eq!(log.value_at(Cell(0), 0), Value::NULL);
        assert_eq!(log.append(Cell(0), Value(1), Agent(0), 1), 1);
        assert_eq!(log.append(Cell(1), Value(2), Agent(1), 2), 1);
        assert_eq!(log.append(Cell(0), Value(2), Agent(1), 3), 2);
        assert_eq!(log.head(Cell(0)), 2);
        assert_eq!(log.value_at(Cell(0), 1), Value(1));
        assert_eq!(log.value_at(Cell(0), 2), Value(2));
        assert_eq!(log.cells().collect::<Vec<_>>(), vec![Cell(0), Cell(1)]);
    }

    #[test]
    #[should_panic(expected = "past the head")]
    fn reading_past_the_head_is_a_bug() {
        PrimaryLog::new().value_at(Cell(0), 1);
    }

    #[test]
    #[should_panic(expected = "must not go backwards")]
    fn commit_times_are_monotone() {
        let mut log = PrimaryLog::new();
        log.append(Cell(0), Value(1), Agent(0), 2);
        log.append(Cell(0), Value(1), Agent(0), 1);
    }
}
