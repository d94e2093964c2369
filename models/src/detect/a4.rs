//! A4 split-view (SPEC §3, §6), in spec, fast and stream form, with its witness type.
//!
//! Definition: two reads of the same cell at the same committed version that observe
//! different values. A read here is an entry of a record's
//! [`read_meta`](crate::record::OpRecord::read_meta): the cell, the replica that served it and
//! the cell's committed version at the read; the value is the record's `read_values[cell]`.
//! Reads without metadata have no known version and take no part. As for A1, A2 and A6 (see
//! [`crate::detect`]), only non-aborted records exhibit A4: an aborted op's generation from a
//! split view left nothing behind. There is no different-agents clause: one agent that reads
//! a lagging secondary and then the primary at one committed version has seen a split too.
//!
//! Both forms return the complete witness set, one witness per unordered pair of reads,
//! sorted, so agreement is equality. The single-store detectors cannot see A4: a stale read
//! from a lagging secondary has no writer inside its generation window (no A1); it shows up
//! only as an `L1_struct` violation, which does not say that anyone else saw otherwise.
//! A clean result says no two recorded reads split; it says nothing about reads the history
//! did not record or recorded without a version.

use super::stream::{Found, Keys, Sink, Stream};
use super::witnesses::{a4_order, Witnesses};
use crate::history::History;
use crate::names::{Cell, Replica, Value};
use crate::record::OpRecord;

/// One side of a split view: record `record` read `value` from `replica`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct A4Read {
    pub record: usize,
    pub replica: Replica,
    pub value: Value,
}

/// A4: `first` and `second` (`first.record < second.record`) read `cell` at committed
/// `version` and observed different values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct A4Witness {
    pub first: A4Read,
    pub second: A4Read,
    pub cell: Cell,
    pub version: u64,
}

/// Whether any record carries replica metadata (A4 is meaningful only then).
pub fn has_replica_meta(h: &History) -> bool {
    h.records.iter().any(|r| !r.read_meta.is_empty())
}

/// Spec form: ∃ records i < j, both live, and reads m ∈ read_meta(i), n ∈ read_meta(j) with
/// cell(m) = cell(n), version(m) = version(n), read_values(i)[cell] ≠ read_values(j)[cell].
pub fn spec(r: &[OpRecord]) -> Vec<A4Witness> {
    let mut out = Vec::new();
    for (i, ri) in r.iter().enumerate() {
        for (j, rj) in r.iter().enumerate() {
            if i >= j || ri.aborted || rj.aborted {
                continue;
            }
            for m in &ri.read_meta {
                for n in &rj.read_meta {
                    let (vi, vj) = (ri.read_values.get(m.cell), rj.read_values.get(n.cell));
                    if m.cell == n.cell && m.version == n.version && vi != vj {
                        out.push(A4Witness {
                            first: read(i, m.replica, vi),
                            second: read(j, n.replica, vj),
                            cell: m.cell,
                            version: m.version,
                        });
                    }
                }
            }
        }
    }
    out.sort_unstable();
    out
}

/// The spec form in A4's completion order
/// ([`a4_order`](super::witnesses::a4_order)): the later record outer, the earlier
/// inner, each record's reads by cell; every witness is counted, the first `out.max()` kept.
pub fn spec_in_completion_order(r: &[OpRecord], out: &mut Witnesses<A4Witness>) {
    for (j, rj) in r.iter().enumerate() {
        for (i, ri) in r[..j].iter().enumerate() {
            if ri.aborted || rj.aborted {
                continue;
            }
            for m in &ri.read_meta {
                for n in &rj.read_meta {
                    let (vi, vj) = (ri.read_values.get(m.cell), rj.read_values.get(n.cell));
                    if m.cell == n.cell && m.version == n.version && vi != vj {
                        out.push(A4Witness {
                            first: read(i, m.replica, vi),
                            second: read(j, n.replica, vj),
                            cell: m.cell,
                            version: m.version,
                        });
                    }
                }
            }
        }
    }
}

/// Fast form: sort every live read by (cell, version, value, record) and pair each read with
/// the reads of *other* values in its (cell, version) group. O(n log n + out) for n reads and
/// out witnesses: every pair of value classes visited yields at least one witness.
pub fn fast(r: &[OpRecord]) -> Vec<A4Witness> {
    let mut reads: Vec<Key> = Vec::new();
    for (i, ri) in r.iter().enumerate().filter(|(_, ri)| !ri.aborted) {
        for m in &ri.read_meta {
            let value = ri.read_values.get(m.cell);
            reads.push((m.cell, m.version, value, i, m.replica));
        }
    }
    reads.sort_unstable();
    let mut out = Vec::new();
    for group in reads.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
        let classes: Vec<&[Key]> = group.chunk_by(|a, b| a.2 == b.2).collect();
        for (k, x) in classes.iter().enumerate() {
            for y in &classes[k + 1..] {
                pair_classes(x, y, &mut out);
            }
        }
    }
    out.sort_unstable();
    out
}

/// The default detector: the fast form over a history.
pub fn detect(h: &History) -> Vec<A4Witness> {
    fast(&h.records)
}

/// (cell, version, value, record, replica).
type Key = (Cell, u64, Value, usize, Replica);

fn pair_classes(x: &[Key], y: &[Key], out: &mut Vec<A4Witness>) {
    for a in x {
        for b in y {
            let (lo, hi) = if a.3 < b.3 { (a, b) } else { (b, a) };
            out.push(A4Witness {
                first: read(lo.3, lo.4, lo.2),
                second: read(hi.3, hi.4, hi.2),
                cell: a.0,
                version: a.1,
            });
        }
    }
}

pub(crate) fn read(record: usize, replica: Replica, value: Value) -> A4Read {
    A4Read {
        record,
        replica,
        value,
    }
}

impl Stream {
    /// Stream form: the reads of record `j` against every earlier read of the same (cell,
    /// version) with another value; each pair completes now, with the later read.
    pub(super) fn a4(
        &mut self,
        j: u64,
        r: &OpRecord,
        keys: Keys<'_>,
        line: u64,
        sink: &mut impl Sink,
    ) {
        let room = self.out.a4.room();
        let mut total = 0;
        self.a4_scratch.clear();
        for m in &r.read_meta {
            let value = keys.get(r.read_values.get(m.cell));
            let Some(group) = self.a4.get(&(m.cell, m.version)) else {
                continue;
            };
            let same = group.per_value.get(&value).copied().unwrap_or(0);
            total += group.reads.len() as u64 - same;
            let others = group.reads.iter().filter(|(_, _, k)| *k != value);
            for &(first, agent, first_key) in others.take(room) {
                let w = A4Witness {
                    first,
                    second: read(j as usize, m.replica, Value::NULL),
                    cell: m.cell,
                    version: m.version,
                };
                self.a4_scratch.push((w, agent, [first_key, value]));
            }
        }
        self.a4_scratch
            .sort_unstable_by(|a, b| a4_order(&a.0, &b.0));
        let kept = self.a4_scratch.len().min(room);
        let mut scratch = std::mem::take(&mut self.a4_scratch);
        for (w, agent, values) in &mut scratch[..kept] {
            (w.first.value, w.second.value) =
                (self.witness_value(values[0]), self.witness_value(values[1]));
            let pushed = self.out.a4.push(*w);
            assert!(pushed, "A4 keeps only what it has room for");
            sink.found(
                line,
                Found::A4 {
                    w: *w,
                    agents: [*agent, r.agent],
                    values: *values,
                },
            );
        }
        self.a4_scratch = scratch;
        self.out.a4.count_only(total - kept as u64);
        for m in &r.read_meta {
            let value = keys.get(r.read_values.get(m.cell));
            let group = self.a4.entry((m.cell, m.version)).or_default();
            let read = read(j as usize, m.replica, Value::NULL);
            group.reads.push((read, r.agent, value));
            *group.per_value.entry(value).or_default() += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Agent;
    use crate::record::{ReadMeta, ValueMap};

    fn reader(agent: u32, replica: u32, version: u64, value: u32) -> OpRecord {
        OpRecord {
            agent: Agent(agent),
            read_set: vec![Cell(0)],
            read_values: ValueMap::from_pairs([(Cell(0), Value(value))]),
            read_meta: vec![ReadMeta {
                cell: Cell(0),
                replica: Replica(replica),
                version,
            }],
            ..OpRecord::default()
        }
    }

    /// SPEC §6: a lagging secondary serves NULL while the primary serves v at version 1.
    #[test]
    fn the_shortest_split() {
        let r = [reader(1, 1, 1, 0), reader(0, 0, 1, 1)];
        let expected = vec![A4Witness {
            first: read(0, Replica(1), Value::NULL),
            second: read(1, Replica(0), Value(1)),
            cell: Cell(0),
            version: 1,
        }];
        assert_eq!(spec(&r), expected);
        assert_eq!(fast(&r), expected);
    }

    #[test]
    fn other_versions_and_aborted_reads_do_not_split() {
        let mut r = [reader(0, 1, 0, 0), reader(1, 0, 1, 1), reader(1, 1, 1, 0)];
        assert_eq!(spec(&r).len(), 1);
        r[2].aborted = true;
        assert!(spec(&r).is_empty());
        assert!(fast(&r).is_empty());
    }

    #[test]
    fn every_pair_of_values_is_a_witness() {
        let r = [
            reader(0, 0, 2, 1),
            reader(1, 1, 2, 2),
            reader(2, 2, 2, 0),
            reader(3, 1, 2, 2),
        ];
        let got = spec(&r);
        // Pairs with different values: (0,1) (0,2) (0,3) (1,2) (2,3).
        let pairs: Vec<_> = got
            .iter()
            .map(|w| (w.first.record, w.second.record))
            .collect();
        assert_eq!(pairs, vec![(0, 1), (0, 2), (0, 3), (1, 2), (2, 3)]);
        assert_eq!(fast(&r), got);
        let mut limited = Witnesses::new(3);
        spec_in_completion_order(&r, &mut limited);
        let mut ordered = got.clone();
        ordered.sort_by(a4_order);
        assert_eq!((limited.total, &limited.kept[..]), (5, &ordered[..3]));
    }
}
