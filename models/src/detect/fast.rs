//! Fast-form detectors: the witness sets of [`super::spec`], in near-linear time.
//!
//! Everything that relates two records (A1, A3-residue, `L1_struct`) goes through the per-cell
//! [`WriteIndex`]: a reader's generation window on a cell is a position range found by binary
//! search, never a scan over all records. A1 is *output-sensitive*: a window of at most
//! [`Tuning::scan_max`] writes is scanned; a longer one is bisected, and a half is entered only
//! when [`Counts`] says it holds a stale writer (another agent, another value), so the cost is
//! O((n + W + out) · log² n) for n records, W writes and out witnesses, whatever the history.
//! A2, A3 (preds form) and A6 are per-record and linear in the input size.
//!
//! The output is the *same complete, sorted* [`Report`] as the spec form, on every history that
//! passes [`History::validate`](crate::history::History::validate) (agreement is tested by
//! exhaustive enumeration and proptest). Aborted records are read as in [`crate::detect`].
//! Agreement with the spec form is what a pass proves; the spec form is what says what an
//! anomaly *is*.

use super::write_index::{Counts, WriteIndex};
use super::{
    A1Witness, A2Reason, A2Witness, A3ResidueWitness, A3Witness, A6Witness, L1StructViolation,
    Report,
};
use crate::history::History;
use crate::names::{Cell, Value};
use crate::record::OpRecord;
use std::cell::OnceCell;
use std::ops::Range;

/// Knobs that change speed, never results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// A1 windows of at most this many writes are scanned; longer ones are bisected by count.
    pub scan_max: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning { scan_max: 32 }
    }
}

/// Runs every fast-form detector.
pub fn detect(h: &History) -> Report {
    detect_with(h, Tuning::default())
}

/// Runs every fast-form detector with explicit tuning (tests force both A1 paths with it).
pub fn detect_with(h: &History, tuning: Tuning) -> Report {
    let r = &h.records;
    let index = WriteIndex::build(r);
    Report {
        a1: a1(r, &index, tuning),
        a2: a2(r),
        a3: a3(r),
        a3_residue: a3_residue(r, &index),
        a6: a6(r),
        l1_struct: l1_struct(r, &index),
    }
}

/// A1 stale-generation (SPEC §3): for each non-aborted reader i and cell c it read, the
/// non-aborted writers j of c with read_time(i) < write_time(j) < write_time(i), another agent
/// and another value than i read.
pub fn a1(r: &[OpRecord], index: &WriteIndex, tuning: Tuning) -> Vec<A1Witness> {
    let counts = OnceCell::new();
    let mut out = Vec::new();
    for (i, ri) in r.iter().enumerate() {
        if ri.aborted {
            continue;
        }
        let first = out.len();
        for &c in &ri.read_set {
            let window = index.window(c, ri.read_time, ri.write_time);
            if window.is_empty() {
                continue;
            }
            let query = StaleQuery {
                index,
                agent: ri.agent.0,
                value: ri.read_values.get(c),
                scan_max: tuning.scan_max.max(1),
            };
            let mut emit = |writer: usize| {
                out.push(A1Witness {
                    reader: i,
                    writer,
                    cell: c,
                })
            };
            if window.len() <= query.scan_max {
                query.scan(window, &mut emit);
            } else {
                let counts = counts.get_or_init(|| Counts::build(index));
                query.bisect(counts, window, &mut emit);
            }
        }
        out[first..].sort_unstable();
    }
    out
}

/// The stale writers of one reader on one cell: another agent, another value.
struct StaleQuery<'a> {
    index: &'a WriteIndex,
    agent: u32,
    value: Value,
    scan_max: usize,
}

impl StaleQuery<'_> {
    fn scan(&self, range: Range<usize>, emit: &mut impl FnMut(usize)) {
        for w in &self.index.writes[range] {
            if w.agent != self.agent && w.value != self.value {
                emit(w.record as usize);
            }
        }
    }

    /// Enters a half only if it holds a stale writer: O((out + 1) · log W) count queries.
    fn bisect(&self, counts: &Counts, range: Range<usize>, emit: &mut impl FnMut(usize)) {
        if counts.stale(self.index, &range, self.agent, self.value) == 0 {
            return;
        }
        if range.len() <= self.scan_max {
            self.scan(range, emit);
            return;
        }
        let mid = range.start + range.len() / 2;
        self.bisect(counts, range.start..mid, emit);
        self.bisect(counts, mid..range.end, emit);
    }
}

/// A2 phantom-tool: a non-aborted record whose planned tool was in its read registry and is
/// missing from, or at another version in, its write registry.
pub fn a2(r: &[OpRecord]) -> Vec<A2Witness> {
    let mut out = Vec::new();
    for (i, ri) in r.iter().enumerate().filter(|(_, ri)| !ri.aborted) {
        let Some(tool) = ri.planned_tool else {
            continue;
        };
        let Some(seen) = ri.read_registry.get(tool) else {
            continue;
        };
        let reason = match ri.write_registry.get(tool) {
            None => A2Reason::Removed,
            Some(now) if now.version == seen.version => continue,
            Some(now) => A2Reason::VersionChanged {
                read: seen.version,
                write: now.version,
            },
        };
        out.push(A2Witness {
            record: i,
            tool,
            reason,
        });
    }
    out
}

/// A3 causal-cascade (preds form): a non-aborted record with an aborted pred.
pub fn a3(r: &[OpRecord]) -> Vec<A3Witness> {
    let aborted = |p: u32| r.get(p as usize).is_some_and(|rp| rp.aborted);
    let mut out = Vec::new();
    for (j, rj) in r.iter().enumerate().filter(|(_, rj)| !rj.aborted) {
        // preds are sorted (History::validate), so the witnesses come out sorted.
        out.extend(
            rj.preds
                .iter()
                .filter(|&&p| aborted(p))
                .map(|&p| A3Witness {
                    record: j,
                    pred: p as usize,
                }),
        );
    }
    out
}

/// A3 residue form: a read of a non-NULL value that no *other* non-aborted record wrote to that
/// cell at or before the read time. The two earliest writers of the value suffice: if the
/// earliest is the reader itself, the second decides.
pub fn a3_residue(r: &[OpRecord], index: &WriteIndex) -> Vec<A3ResidueWitness> {
    let mut out = Vec::new();
    for (j, rj) in r.iter().enumerate() {
        for &cell in &rj.read_set {
            let value = rj.read_values.get(cell);
            if value.is_null() {
                continue;
            }
            let before = index.at_or_before(cell, rj.read_time);
            let produced = index
                .first_two_of_value(before, value)
                .into_iter()
                .flatten()
                .any(|p| index.writes[p].record as usize != j);
            if !produced {
                out.push(A3ResidueWitness {
                    record: j,
                    cell,
                    value,
                });
            }
        }
    }
    out
}

/// A6 tool-effect reordering: |io| ≥ 2, co ≠ io, co a permutation of io (equal as multisets).
pub fn a6(r: &[OpRecord]) -> Vec<A6Witness> {
    let mut out = Vec::new();
    for (i, ri) in r.iter().enumerate() {
        if ri.aborted || ri.io.len() < 2 || ri.io.len() != ri.co.len() || ri.co == ri.io {
            continue;
        }
        let (mut io, mut co) = (ri.io.clone(), ri.co.clone());
        io.sort_unstable();
        co.sort_unstable();
        if io == co {
            out.push(A6Witness { record: i });
        }
    }
    out
}

/// `L1_struct` violations: a read value that differs from the latest non-aborted write to the
/// cell at or before the read time (ties in write time: the later record), NULL if none.
pub fn l1_struct(r: &[OpRecord], index: &WriteIndex) -> Vec<L1StructViolation> {
    let mut out = Vec::new();
    for (j, rj) in r.iter().enumerate() {
        for &cell in &rj.read_set {
            let latest = latest_other_writer(index, cell, rj.read_time, j);
            let expected = latest.map_or(Value::NULL, |p| index.writes[p].value);
            let read = rj.read_values.get(cell);
            if read != expected {
                out.push(L1StructViolation {
                    record: j,
                    cell,
                    read,
                    expected,
                    writer: latest.map(|p| index.writes[p].record as usize),
                });
            }
        }
    }
    out
}

/// The position of the latest write to `cell` at or before `t` by a record other than `me`.
fn latest_other_writer(index: &WriteIndex, cell: Cell, t: u64, me: usize) -> Option<usize> {
    let range = index.at_or_before(cell, t);
    // A record appears at most once per cell, so skipping `me` needs at most one step back.
    range
        .rev()
        .take(2)
        .find(|&p| index.writes[p].record as usize != me)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::spec;
    use crate::names::Agent;
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
