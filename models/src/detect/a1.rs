//! A1 stale-generation (SPEC §3), in spec, fast and stream form, with its witness type.
//!
//! Definition: ∃ i ≠ j, agent(i) ≠ agent(j), c ∈ read_set(i) ∩ write_set(j),
//! read_time(i) < write_time(j) < write_time(i), read_values(i)[c] ≠ write_values(j)[c].
//! Only non-aborted records exhibit A1, and the intervening writer must not be aborted either
//! (an aborted op's writes never became visible; see [`crate::detect`]).
//!
//! * [`spec`] is the definition's loops; [`spec_each`] visits the same witnesses in order.
//! * [`fast`] scans or bisects each reader's window of the per-cell [`WriteIndex`]
//!   (output-sensitive: see [`super::fast`]), inside the fast form's shared read pass.
//! * The stream form counts the kept writes strictly inside each read's window, when the
//!   reader arrives (its writers all have earlier write times).

use super::read_pass::{ReadPass, Tuning, Wanted};
use super::stream::{partition_from_end, Found, Keys, Sink, Stream};
use super::write_index::{Counts, WriteIndex};
use super::Report;
use crate::names::{Cell, Value};
use crate::record::OpRecord;
use std::ops::Range;

/// A1: record `reader` read `cell`; `writer` (another agent) committed a different value to it
/// strictly inside `reader`'s generation window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct A1Witness {
    pub reader: usize,
    pub writer: usize,
    pub cell: Cell,
}

/// Spec form: every witness, sorted.
pub fn spec(r: &[OpRecord]) -> Vec<A1Witness> {
    super::collect(|f| spec_each(r, f))
}

/// [`spec`]'s witnesses, in order, to `out`.
pub fn spec_each(r: &[OpRecord], out: &mut dyn FnMut(A1Witness)) {
    for (i, ri) in r.iter().enumerate() {
        for (j, rj) in r.iter().enumerate() {
            if i == j || ri.agent == rj.agent || ri.aborted || rj.aborted {
                continue;
            }
            for &c in &ri.read_set {
                if rj.write_set.contains(&c)
                    && ri.read_time < rj.write_time
                    && rj.write_time < ri.write_time
                    && ri.read_values.get(c) != rj.write_values.get(c)
                {
                    out(A1Witness {
                        reader: i,
                        writer: j,
                        cell: c,
                    });
                }
            }
        }
    }
}

/// Fast form: for each non-aborted reader i and cell c it read, the non-aborted writers j of
/// c with read_time(i) < write_time(j) < write_time(i), another agent and another value than
/// i read.
pub fn fast(r: &[OpRecord], index: &WriteIndex, tuning: Tuning) -> Vec<A1Witness> {
    let wanted = Wanted {
        a1: true,
        ..Wanted::NONE
    };
    ReadPass::run(r, index, &crate::record::ValueMap::new(), tuning, wanted).a1
}

impl ReadPass<'_> {
    /// The fast form on one read: the stale writers in `window` (positions of `c`'s writes).
    pub(super) fn a1(
        &self,
        i: usize,
        ri: &OpRecord,
        c: Cell,
        window: Range<usize>,
        out: &mut Report,
    ) {
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

impl Stream {
    /// Stream form: the kept writes of each read cell strictly inside (read_time, write_time),
    /// by other agents, of other values. Every one is counted; the smallest (writer, cell)
    /// are kept.
    pub(super) fn a1(
        &mut self,
        j: u64,
        r: &OpRecord,
        keys: Keys<'_>,
        line: u64,
        sink: &mut impl Sink,
    ) {
        let room = self.out.a1.room();
        let mut total = 0u64;
        self.scratch.clear();
        for &c in &r.read_set {
            let Some(cw) = self.cells.get(c.index()) else {
                continue;
            };
            let ws = &cw.writes;
            let time = |k: usize| ws[k].time;
            let hi = partition_from_end(ws.len(), time, |t| t < r.write_time);
            let lo = partition_from_end(hi, time, |t| t <= r.read_time);
            let value = keys.get(r.read_values.get(c));
            let mut kept_here = 0;
            for w in ws.range(lo..hi) {
                if w.agent != r.agent && w.value != value {
                    total += 1;
                    if kept_here < room {
                        self.scratch.push((w.record, c, *w));
                        kept_here += 1;
                    }
                }
            }
        }
        if total == 0 {
            return;
        }
        self.scratch.sort_unstable_by_key(|&(k, c, _)| (k, c));
        let kept = self.scratch.len().min(room);
        for &(writer, cell, write) in &self.scratch[..kept] {
            let w = A1Witness {
                reader: j as usize,
                writer: writer as usize,
                cell,
            };
            let pushed = self.out.a1.push(w);
            assert!(pushed, "A1 keeps only what it has room for");
            sink.found(
                line,
                Found::A1 {
                    w,
                    agent: r.agent,
                    read: keys.get(r.read_values.get(cell)),
                    read_time: r.read_time,
                    write_time: r.write_time,
                    writer: write,
                },
            );
        }
        self.out.a1.count_only(total - kept as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Agent;
    use crate::record::ValueMap;

    #[test]
    fn a1_needs_different_agents() {
        let rec = |wt| OpRecord {
            agent: Agent(0),
            write_time: wt,
            ..OpRecord::default()
        };
        let mut r1 = rec(1);
        r1.write_set = vec![Cell(0)];
        r1.write_values = ValueMap::from_pairs([(Cell(0), Value(1))]);
        let mut r2 = rec(2);
        r2.read_set = vec![Cell(0)];
        assert!(spec(&[r1, r2]).is_empty());
    }
}
