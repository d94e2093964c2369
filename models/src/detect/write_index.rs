//! The per-cell write index behind the fast detectors.
//!
//! Every write of a non-aborted record to a cell, grouped by cell and sorted by
//! `(write_time, record)`, in one flat array: cell `c`'s writes occupy the *positions*
//! `start[c]..start[c + 1]`. A generation window, "the writes to `c` strictly between two
//! times", is then a position range found by two searches that gallop from a hint (the
//! detectors pass a per-cell cursor, so a search costs O(log window)). On a history in log
//! order (write_time ascending) the grouping is a counting sort and the per-cell sort a check.
//!
//! [`Counts`] adds position lists keyed by agent, by value and by both, so that the number of
//! writes in a range with `agent ≠ y ∧ value ≠ x` (A1's stale writers) is known in O(log n) by
//! inclusion–exclusion; the fast A1 bisects on it and so touches only ranges that hold output.
//! The index answers range queries; it does not decide any anomaly by itself.

use crate::names::{Cell, Value};
use crate::record::OpRecord;
use std::cell::OnceCell;
use std::ops::Range;

/// One write: by which record and agent, and the value written to the cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    pub record: u32,
    pub agent: u32,
    pub value: Value,
}

/// Non-aborted writes grouped by cell, each group sorted by `(time, record)`.
#[derive(Clone, Debug, Default)]
pub struct WriteIndex {
    /// `start[c]..start[c + 1]` are cell `c`'s positions; `len = cells + 1`.
    start: Vec<usize>,
    /// The write time of each position (kept apart from `writes` so searches stay in cache).
    pub times: Vec<u64>,
    pub writes: Vec<Write>,
    /// `(value << 32) | position`, sorted: the writes of each value, in position order.
    /// Built on first use: most reads are answered by the latest writer alone.
    by_value: OnceCell<Vec<u64>>,
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
        let total = start[cells];
        assert!(total < u32::MAX as usize, "positions must fit in u32");
        let empty = (
            0u64,
            Write {
                record: 0,
                agent: 0,
                value: Value::NULL,
            },
        );
        let mut timed = vec![empty; total];
        let mut next = start.clone();
        for (i, r) in records.iter().enumerate().filter(|(_, r)| !r.aborted) {
            for &c in &r.write_set {
                let value = r.write_values.get(c);
                let w = Write {
                    record: i as u32,
                    agent: r.agent.0,
                    value,
                };
                timed[next[c.index()]] = (r.write_time, w);
                next[c.index()] += 1;
            }
        }
        for c in 0..cells {
            let group = &mut timed[start[c]..start[c + 1]];
            if !group.is_sorted_by_key(|&(t, _)| t) {
                group.sort_by_key(|&(t, _)| t); // stable: record order breaks ties
            }
        }
        let (times, writes) = timed.into_iter().unzip();
        WriteIndex {
            start,
            times,
            writes,
            by_value: OnceCell::new(),
        }
    }

    /// Number of cells (one more than the highest cell written).
    pub fn cells(&self) -> usize {
        self.start.len() - 1
    }

    /// Cell `c`'s positions (empty for a cell nobody wrote).
    pub fn cell(&self, c: Cell) -> Range<usize> {
        match self.start.get(c.index() + 1) {
            Some(&end) => self.start[c.index()]..end,
            None => 0..0,
        }
    }

    /// The first position of cell `c` whose write time is *not* `≤ t` (`strict`: not `< t`),
    /// searched by galloping from the position `hint`: O(log distance) when the hint is close,
    /// correct for any hint.
    pub fn end_of(&self, c: Cell, t: u64, strict: bool, hint: usize) -> usize {
        let cell = self.cell(c);
        let times = &self.times[cell.clone()];
        let hint = hint.clamp(cell.start, cell.end) - cell.start;
        let before = |x: u64| if strict { x < t } else { x <= t };
        cell.start + gallop(times, hint, before)
    }

    /// Positions of writes to `c` with `after < time < before` (both strict).
    pub fn window(&self, c: Cell, after: u64, before: u64) -> Range<usize> {
        let lo = self.end_of(c, after, false, 0);
        let hi = self.end_of(c, before, true, lo).max(lo);
        lo..hi
    }

    /// Positions of writes to `c` with `time ≤ t`.
    pub fn at_or_before(&self, c: Cell, t: u64) -> Range<usize> {
        self.cell(c).start..self.end_of(c, t, false, 0)
    }

    fn by_value(&self) -> &[u64] {
        self.by_value.get_or_init(|| {
            let mut keys: Vec<u64> = self
                .writes
                .iter()
                .enumerate()
                .map(|(p, w)| (u64::from(w.value.0) << 32) | p as u64)
                .collect();
            keys.sort_unstable();
            keys
        })
    }

    /// The first two positions in `range` whose write has value `v`, in position order.
    pub fn first_two_of_value(&self, range: Range<usize>, v: Value) -> [Option<usize>; 2] {
        let key = |p: usize| (u64::from(v.0) << 32) | p as u64;
        let by_value = self.by_value();
        let from = by_value.partition_point(|&k| k < key(range.start));
        let mut found = [None, None];
        for (slot, &k) in found.iter_mut().zip(&by_value[from..]) {
            if k >= key(range.end) {
                break;
            }
            *slot = Some((k & u64::from(u32::MAX)) as usize);
        }
        found
    }
}

/// The partition point of `pred` over `xs` (true on a prefix), galloping from `hint`.
fn gallop(xs: &[u64], hint: usize, pred: impl Fn(u64) -> bool) -> usize {
    let n = xs.len();
    let hint = hint.min(n);
    let (mut lo, mut hi, mut step) = (0, n, 1);
    if hint < n && pred(xs[hint]) {
        lo = hint + 1; // the answer is after the hint
        while hint + step < n {
            if !pred(xs[hint + step]) {
                hi = hint + step;
                break;
            }
            lo = hint + step + 1;
            step *= 2;
        }
    } else {
        hi = hint; // the answer is at or before the hint
        while step <= hint {
            if pred(xs[hint - step]) {
                lo = hint - step + 1;
                break;
            }
            hi = hint - step;
            step *= 2;
        }
    }
    lo + xs[lo..hi].partition_point(|&x| pred(x))
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
        let same_value = count(index.by_value(), v | lo, v | hi);
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

    #[test]
    fn gallop_is_correct_from_any_hint() {
        let xs = [1, 1, 2, 3, 3, 3, 5, 8, 8, 9];
        for t in 0..11 {
            for hint in 0..=xs.len() + 1 {
                assert_eq!(
                    gallop(&xs, hint, |x| x <= t),
                    xs.partition_point(|&x| x <= t)
                );
                assert_eq!(gallop(&xs, hint, |x| x < t), xs.partition_point(|&x| x < t));
            }
        }
        assert_eq!(gallop(&[], 3, |x| x < 1), 0);
    }
}
