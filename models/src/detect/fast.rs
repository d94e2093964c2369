//! Fast-form detectors: the witness sets of [`super::spec`], in near-linear time.
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
    let mut reads = ReadPass::new(&index, tuning, Wanted::ALL);
    let mut out = Report::default();
    for (i, ri) in r.iter().enumerate() {
        out.a2.extend(a2_of(i, ri));
        a3_of(r, i, ri, &mut out.a3);
        out.a6.extend(a6_of(i, ri));
        reads.record(i, ri, &mut out);
    }
    out.a4 = super::a4::fast(r);
    out
}

/// A1 stale-generation (SPEC §3): for each non-aborted reader i and cell c it read, the
/// non-aborted writers j of c with read_time(i) < write_time(j) < write_time(i), another agent
/// and another value than i read.
pub fn a1(r: &[OpRecord], index: &WriteIndex, tuning: Tuning) -> Vec<A1Witness> {
    let wanted = Wanted {
        a1: true,
        ..Wanted::NONE
    };
    ReadPass::run(r, index, tuning, wanted).a1
}

/// A3 residue form: a read of a non-NULL value that no *other* non-aborted record wrote to that
/// cell at or before the read time.
pub fn a3_residue(r: &[OpRecord], index: &WriteIndex) -> Vec<A3ResidueWitness> {
    let wanted = Wanted {
        residue: true,
        ..Wanted::NONE
    };
    ReadPass::run(r, index, Tuning::default(), wanted).a3_residue
}

/// `L1_struct` violations: a read value that differs from the latest non-aborted write to the
/// cell at or before the read time (ties in write time: the later record), NULL if none.
pub fn l1_struct(r: &[OpRecord], index: &WriteIndex) -> Vec<L1StructViolation> {
    let wanted = Wanted {
        l1: true,
        ..Wanted::NONE
    };
    ReadPass::run(r, index, Tuning::default(), wanted).l1_struct
}

/// A2 phantom-tool: a non-aborted record whose planned tool was in its read registry and is
/// missing from, or at another version in, its write registry.
pub fn a2(r: &[OpRecord]) -> Vec<A2Witness> {
    r.iter()
        .enumerate()
        .filter_map(|(i, ri)| a2_of(i, ri))
        .collect()
}

/// A3 causal-cascade (preds form): a non-aborted record with an aborted pred.
pub fn a3(r: &[OpRecord]) -> Vec<A3Witness> {
    let mut out = Vec::new();
    for (j, rj) in r.iter().enumerate() {
        a3_of(r, j, rj, &mut out);
    }
    out
}

/// A6 tool-effect reordering: |io| ≥ 2, co ≠ io, co a permutation of io (equal as multisets).
pub fn a6(r: &[OpRecord]) -> Vec<A6Witness> {
    r.iter()
        .enumerate()
        .filter_map(|(i, ri)| a6_of(i, ri))
        .collect()
}

pub(crate) fn a2_of(i: usize, ri: &OpRecord) -> Option<A2Witness> {
    let tool = ri.planned_tool.filter(|_| !ri.aborted)?;
    let seen = ri.read_registry.get(tool)?;
    let reason = match ri.write_registry.get(tool) {
        None => A2Reason::Removed,
        Some(now) if now.version == seen.version => return None,
        Some(now) => A2Reason::VersionChanged {
            read: seen.version,
            write: now.version,
        },
    };
    Some(A2Witness {
        record: i,
        tool,
        reason,
    })
}

fn a3_of(r: &[OpRecord], j: usize, rj: &OpRecord, out: &mut Vec<A3Witness>) {
    if rj.aborted {
        return;
    }
    // preds are sorted (History::validate), so the witnesses come out sorted.
    for &p in &rj.preds {
        if r.get(p as usize).is_some_and(|rp| rp.aborted) {
            out.push(A3Witness {
                record: j,
                pred: p as usize,
            });
        }
    }
}

pub(crate) fn a6_of(i: usize, ri: &OpRecord) -> Option<A6Witness> {
    if ri.aborted || ri.io.len() < 2 || ri.io.len() != ri.co.len() || ri.co == ri.io {
        return None;
    }
    let (mut io, mut co) = (ri.io.clone(), ri.co.clone());
    io.sort_unstable();
    co.sort_unstable();
    (io == co).then_some(A6Witness { record: i })
}

/// Which read-side detectors a [`ReadPass`] computes.
#[derive(Clone, Copy, Debug)]
struct Wanted {
    a1: bool,
    residue: bool,
    l1: bool,
}

impl Wanted {
    const ALL: Wanted = Wanted {
        a1: true,
        residue: true,
        l1: true,
    };
    const NONE: Wanted = Wanted {
        a1: false,
        residue: false,
        l1: false,
    };
}

/// The detectors that look at reads (A1, A3-residue, `L1_struct`), one record at a time in log
/// order, sharing each read's position in the index.
struct ReadPass<'a> {
    index: &'a WriteIndex,
    counts: OnceCell<Counts>,
    /// Per cell, where the writes of the records visited so far end. A reader's window edges
    /// lie a few positions behind it, so galloping from it costs O(log window), not
    /// O(log writes). Only a hint: any value gives the same answers.
    cursors: Vec<usize>,
    scan_max: usize,
    wanted: Wanted,
}

impl<'a> ReadPass<'a> {
    fn new(index: &'a WriteIndex, tuning: Tuning, wanted: Wanted) -> ReadPass<'a> {
        let cursors = (0..index.cells())
            .map(|c| index.cell(Cell(c as u32)).start)
            .collect();
        ReadPass {
            index,
            counts: OnceCell::new(),
            cursors,
            scan_max: tuning.scan_max.max(1),
            wanted,
        }
    }

    fn run(r: &[OpRecord], index: &WriteIndex, tuning: Tuning, wanted: Wanted) -> Report {
        let mut pass = ReadPass::new(index, tuning, wanted);
        let mut out = Report::default();
        for (i, ri) in r.iter().enumerate() {
            pass.record(i, ri, &mut out);
        }
        out
    }

    /// Every read of record `i`, then its writes move the cursors.
    fn record(&mut self, i: usize, ri: &OpRecord, out: &mut Report) {
        let first_a1 = out.a1.len();
        for &c in &ri.read_set {
            let hint = self.cursors.get(c.index()).copied().unwrap_or(0);
            let seen = self.index.end_of(c, ri.read_time, false, hint);
            let before = self.index.cell(c).start..seen;
            let latest = latest_other_writer(self.index, before.clone(), i);
            let read = ri.read_values.get(c);
            if self.wanted.l1 {
                self.l1(i, c, read, latest, out);
            }
            if self.wanted.residue && !read.is_null() {
                self.residue(i, c, read, before, latest, out);
            }
            if self.wanted.a1 && !ri.aborted {
                let end = self.index.end_of(c, ri.write_time, true, hint).max(seen);
                self.a1(i, ri, c, seen..end, out);
            }
        }
        out.a1[first_a1..].sort_unstable();
        if !ri.aborted {
            for &c in &ri.write_set {
                self.cursors[c.index()] += 1;
                // Each live write has one position, so a cursor never leaves its cell.
                assert!(self.cursors[c.index()] <= self.index.cell(c).end);
            }
        }
    }

    fn l1(&self, i: usize, c: Cell, read: Value, latest: Option<usize>, out: &mut Report) {
        let expected = latest.map_or(Value::NULL, |p| self.index.writes[p].value);
        if read != expected {
            out.l1_struct.push(L1StructViolation {
                record: i,
                cell: c,
                read,
                expected,
                writer: latest.map(|p| self.index.writes[p].record as usize),
            });
        }
    }

    /// Usually the latest writer wrote the value read (the read was fresh), which settles it;
    /// otherwise the two earliest writers of the value decide (if the earliest is the reader
    /// itself, the second).
    fn residue(
        &self,
        i: usize,
        c: Cell,
        value: Value,
        before: Range<usize>,
        latest: Option<usize>,
        out: &mut Report,
    ) {
        let w = &self.index.writes;
        let produced = latest.is_some_and(|p| w[p].value == value)
            || self
                .index
                .first_two_of_value(before, value)
                .into_iter()
                .flatten()
                .any(|p| w[p].record as usize != i);
        if !produced {
            out.a3_residue.push(A3ResidueWitness {
                record: i,
                cell: c,
                value,
            });
        }
    }

    fn a1(&self, i: usize, ri: &OpRecord, c: Cell, window: Range<usize>, out: &mut Report) {
        if window.is_empty() {
            return;
        }
        let query = StaleQuery {
            index: self.index,
            agent: ri.agent.0,
            value: ri.read_values.get(c),
            scan_max: self.scan_max,
        };
        let mut emit = |writer: usize| {
            out.a1.push(A1Witness {
                reader: i,
                writer,
                cell: c,
            })
        };
        if window.len() <= query.scan_max {
            query.scan(window, &mut emit);
        } else {
            let counts = self.counts.get_or_init(|| Counts::build(self.index));
            query.bisect(counts, window, &mut emit);
        }
    }
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

/// The last position in `range` (a prefix of one cell's writes) by a record other than `me`.
fn latest_other_writer(index: &WriteIndex, range: Range<usize>, me: usize) -> Option<usize> {
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
