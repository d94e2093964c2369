//! The per-cell write index behind the fast detectors.
//!
//! Every write of a non-aborted record to a cell, grouped by cell and sorted by
//! `(write_time, record)`, in one flat array: cell `c`'s writes occupy the *positions*
//! `start[c]..start[c + 1]`. A generation window, "the writes to `c` strictly between two
//! times", is then a position range found by two binary searches. On a history in log order
//! (write_time ascending) the grouping is a counting sort and the per-cell sort is a no-op check.
//!
//! [`Counts`] adds position lists keyed by agent, by value and by both, so that the number of
//! writes in a range with `agent ≠ y ∧ value ≠ x` (A1's stale writers) is known in O(log n) by
//! inclusion–exclusion; the fast A1 bisects on it and so touches only ranges that hold output.
//! The index answers range queries; it does not decide any anomaly by itself.

use crate::names::{Cell, Value};
use crate::record::OpRecord;
use std::ops::Range;

/// One write: when, by which record and agent, and the value written to the cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    pub time: u64,
    pub record: u32,
    pub agent: u32,
    pub value: Value,
}

/// Non-aborted writes grouped by cell, each group sorted by `(time, record)`.
#[derive(Clone, Debug, Default)]
pub struct WriteIndex {
    /// `start[c]..start[c + 1]` are cell `c`'s positions; `len = cells + 1`.
    start: Vec<usize>,
    pub writes: Vec<Write>,
    /// `(value << 32) | position`, sorted: the writes of each value, in position order.
    by_value: Vec<u64>,
}

impl WriteIndex {
    /// Builds the index of `records` (any order; log order makes it linear).
    pub fn build(records: &[OpRecord]) -> WriteIndex {
        assert!(
            records.len() <= u32::MAX as usize,
            "record indices must fit in u32"
        );
        let cells = records
            .iter()
            .flat_map(|r| r.write_set.last())
            .map(|c| c.index() + 1)
            .max()
            .unwrap_or(0);
        let mut start = vec![0usize; cells + 1];
        for r in records.iter().filter(|r| !r.aborted) {
            for c in &r.write_set {
                start[c.index() + 1] += 1;
            }
        }
        for c in 0..cells {
            start[c + 1] += start[c];
        }
        let empty = Write {
            time: 0,
            record: 0,
            agent: 0,
            value: Value::NULL,
        };
        let mut writes = vec![empty; start[cells]];
        let mut next = start.clone();
        for (i, r) in records.iter().enumerate().filter(|(_, r)| !r.aborted) {
            for &c in &r.write_set {
                writes[next[c.index()]] = Write {
                    time: r.write_time,
                    record: i as u32,
                    agent: r.agent.0,
                    value: r.write_values.get(c),
                };
                next[c.index()] += 1;
            }
        }
        for c in 0..cells {
            let group = &mut writes[start[c]..start[c + 1]];
            if !group.is_sorted_by_key(|w| w.time) {
                group.sort_by_key(|w| w.time); // stable: record order breaks ties
            }
        }
        assert!(
            writes.len() < u32::MAX as usize,
            "positions must fit in u32"
        );
        let mut by_value: Vec<u64> = writes
            .iter()
            .enumerate()
            .map(|(p, w)| (u64::from(w.value.0) << 32) | p as u64)
            .collect();
        by_value.sort_unstable();
        WriteIndex {
            start,
            writes,
            by_value,
        }
    }

    /// Cell `c`'s positions (empty for a cell nobody wrote).
    pub fn cell(&self, c: Cell) -> Range<usize> {
        match self.start.get(c.index() + 1) {
            Some(&end) => self.start[c.index()]..end,
            None => 0..0,
        }
    }

    /// Positions of writes to `c` with `after < time < before` (both strict).
    pub fn window(&self, c: Cell, after: u64, before: u64) -> Range<usize> {
        let cell = self.cell(c);
        let group = &self.writes[cell.clone()];
        let lo = group.partition_point(|w| w.time <= after);
        let hi = group.partition_point(|w| w.time < before).max(lo);
        cell.start + lo..cell.start + hi
    }

    /// Positions of writes to `c` with `time ≤ t`.
    pub fn at_or_before(&self, c: Cell, t: u64) -> Range<usize> {
        let cell = self.cell(c);
        let hi = self.writes[cell.clone()].partition_point(|w| w.time <= t);
        cell.start..cell.start + hi
    }

    /// The first two positions in `range` whose write has value `v`, in position order.
    pub fn first_two_of_value(&self, range: Range<usize>, v: Value) -> [Option<usize>; 2] {
        let key = |p: usize| (u64::from(v.0) << 32) | p as u64;
        let from = self.by_value.partition_point(|&k| k < key(range.start));
        let mut found = [None, None];
        for (slot, &k) in found.iter_mut().zip(&self.by_value[from..]) {
            if k >= key(range.end) {
                break;
            }
            *slot = Some((k & u64::from(u32::MAX)) as usize);
        }
        found
    }
}

/// Position lists keyed by agent, and by agent and value, for counting stale writers.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    /// `(agent << 32) | position`, sorted.
    by_agent: Vec<u64>,
    /// `(agent << 64) | (value << 32) | position`, sorted.
    by_agent_value: Vec<u128>,
}

impl Counts {
    /// Builds the lists from the index (O(W log W)); built only when a long window needs it.
    pub fn build(index: &WriteIndex) -> Counts {
        let mut by_agent: Vec<u64> = index
            .writes
            .iter()
            .enumerate()
            .map(|(p, w)| (u64::from(w.agent) << 32) | p as u64)
            .collect();
        by_agent.sort_unstable();
        let mut by_agent_value: Vec<u128> = index
            .writes
            .iter()
            .enumerate()
            .map(|(p, w)| (u128::from(w.agent) << 64) | (u128::from(w.value.0) << 32) | p as u128)
            .collect();
        by_agent_value.sort_unstable();
        Counts {
            by_agent,
            by_agent_value,
        }
    }

    /// How many writes in positions `range` have `agent ≠ agent ∧ value ≠ value`.
    pub fn stale(
        &self,
        index: &WriteIndex,
        range: &Range<usize>,
        agent: u32,
        value: Value,
    ) -> usize {
        let a = u64::from(agent) << 32;
        let v = u64::from(value.0) << 32;
        let av = (u128::from(agent) << 64) | (u128::from(value.0) << 32);
        let (lo, hi) = (range.start as u64, range.end as u64);
        let same_agent = count(&self.by_agent, a | lo, a | hi);
        let same_value = count(&index.by_value, v | lo, v | hi);
        let same_both = count(
            &self.by_agent_value,
            av | u128::from(lo),
            av | u128::from(hi),
        );
        range.len() + same_both - same_agent - same_value
    }
}

/// Number of keys in `[lo, hi)` of a sorted slice.
fn count<K: Ord + Copy>(sorted: &[K], lo: K, hi: K) -> usize {
    sorted.partition_point(|&k| k < hi) - sorted.partition_point(|&k| k < lo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Agent;
    use crate::record::ValueMap;

    fn write(agent: u32, cell: u32, value: u32, time: u64) -> OpRecord {
        OpRecord {
            agent: Agent(agent),
            write_set: vec![Cell(cell)],
            write_values: ValueMap::from_pairs([(Cell(cell), Value(value))]),
            write_time: time,
            ..OpRecord::default()
        }
    }

    #[test]
    fn windows_counts_and_values() {
        let recs = vec![
            write(0, 1, 1, 1),
            write(1, 0, 2, 2),
            write(1, 1, 2, 3),
            write(0, 1, 2, 4),
            write(1, 1, 1, 5),
        ];
        let idx = WriteIndex::build(&recs);
        assert_eq!(idx.cell(Cell(0)), 0..1);
        assert_eq!(idx.cell(Cell(1)), 1..5);
        assert_eq!(idx.cell(Cell(7)), 0..0);
        assert_eq!(idx.window(Cell(1), 1, 5), 2..4);
        assert_eq!(idx.window(Cell(1), 4, 2), 4..4);
        assert_eq!(idx.at_or_before(Cell(1), 3), 1..3);
        assert_eq!(idx.first_two_of_value(1..5, Value(2)), [Some(2), Some(3)]);
        assert_eq!(idx.first_two_of_value(2..5, Value(1)), [Some(4), None]);
        let counts = Counts::build(&idx);
        // Positions 1..5 on cell 1: (a0,v1) (a1,v2) (a0,v2) (a1,v1); agent ≠ a0 ∧ value ≠ v1.
        assert_eq!(counts.stale(&idx, &(1..5), 0, Value(1)), 1);
        assert_eq!(counts.stale(&idx, &(1..5), 2, Value(3)), 4);
        assert_eq!(counts.stale(&idx, &(3..4), 0, Value(1)), 0);
    }
}
