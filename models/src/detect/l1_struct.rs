//! `L1_struct` (SPEC §3): the structural snapshot condition, in spec, fast and stream form,
//! with its violation type. It is not an anomaly of the catalogue but the property A1 is read
//! against (a snapshot-insufficiency witness is A1 with `L1_struct` holding), so it lives
//! beside them and is reported in every [`Report`] and [`Summary`](super::Summary).
//!
//! Definition: every read value (cells of the read set) equals the latest committed write to
//! that cell at or before the read time (ties in write time: the later record). A read with no
//! such write reads the initial state, which a history does not record (a trace starts in the
//! middle of a system's life): it is a violation only when it saw a non-NULL value that another
//! record, aborted, wrote at or before the read (then the value came from that write, not from
//! before the history), reported with NULL expected and no writer (SPEC §3).
//! Only non-aborted writers count as producers (see [`crate::detect`]). The fast form shares
//! the read pass of [`super::fast`]; the stream form decides a read when its write time
//! closes, beside the A3 residue ([`super::stream`]).

use super::read_pass::{ReadPass, Tuning, Wanted};
use super::stream::{Found, Sink, Stream, Waiting, Write};
use super::write_index::WriteIndex;
use super::Report;
use crate::names::{Cell, Value};
use crate::record::OpRecord;
use crate::value_key::ValueKey;

/// A violation of `L1_struct`: `record` read `read` from `cell` where the latest committed
/// write at or before its read time, by `writer`, wrote `expected`; or, with no such write
/// (`writer` none, `expected` NULL), where an aborted record wrote the value read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct L1StructViolation {
    pub record: usize,
    pub cell: Cell,
    pub read: Value,
    pub expected: Value,
    pub writer: Option<usize>,
}

/// Spec form: every violation, sorted.
pub fn spec(r: &[OpRecord]) -> Vec<L1StructViolation> {
    super::collect(|f| spec_each(r, f))
}

/// [`spec`]'s violations, in order, to `out`.
pub fn spec_each(r: &[OpRecord], out: &mut dyn FnMut(L1StructViolation)) {
    for (j, rj) in r.iter().enumerate() {
        for &c in &rj.read_set {
            let mut latest: Option<usize> = None;
            for (k, rk) in r.iter().enumerate() {
                if k != j
                    && !rk.aborted
                    && rk.write_set.contains(&c)
                    && rk.write_time <= rj.read_time
                {
                    // Log order breaks ties between equal write times: the later record wins.
                    if latest.is_none_or(|l| r[l].write_time <= rk.write_time) {
                        latest = Some(k);
                    }
                }
            }
            let read = rj.read_values.get(c);
            let expected = match latest {
                Some(k) => r[k].write_values.get(c),
                // No earlier committed write: the initial state, unless an aborted write
                // produced the value.
                None if !read.is_null() && aborted_wrote(r, j, c, read) => Value::NULL,
                None => continue,
            };
            if read != expected {
                out(L1StructViolation {
                    record: j,
                    cell: c,
                    read,
                    expected,
                    writer: latest,
                });
            }
        }
    }
}

/// Whether a record other than `j`, aborted, wrote `value` to `c` at or before `j`'s read time.
fn aborted_wrote(r: &[OpRecord], j: usize, c: Cell, value: Value) -> bool {
    r.iter().enumerate().any(|(k, rk)| {
        k != j
            && rk.aborted
            && rk.write_set.contains(&c)
            && rk.write_values.get(c) == value
            && rk.write_time <= r[j].read_time
    })
}

/// Fast form: a read value that differs from the latest non-aborted write to the cell at or
/// before the read time (ties in write time: the later record); with none, a non-NULL value an
/// aborted record wrote by then.
pub fn fast(r: &[OpRecord], index: &WriteIndex) -> Vec<L1StructViolation> {
    let wanted = Wanted {
        l1: true,
        ..Wanted::NONE
    };
    ReadPass::run(r, index, Tuning::default(), wanted).l1_struct
}

impl ReadPass<'_> {
    /// The fast form on one read; `latest` is the position of the latest other write.
    pub(super) fn l1(
        &self,
        i: usize,
        ri: &OpRecord,
        c: Cell,
        read: Value,
        latest: Option<usize>,
        out: &mut Report,
    ) {
        let expected = match latest {
            Some(p) => self.index.writes[p].value,
            None if !read.is_null() && self.index.aborted_wrote(c, read, ri.read_time, i) => {
                Value::NULL
            }
            None => return,
        };
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
}

impl Stream {
    /// Whether a record other than the reader, aborted, wrote the value read at or before the
    /// read time (its two earliest aborted writers tell, as the residue's do).
    fn aborted_wrote(&self, read: &Waiting) -> bool {
        (self
            .aborted_first_two
            .get(&(read.cell, read.value))
            .into_iter())
        .flatten()
        .flatten()
        .any(|&(k, t)| t <= read.read_time && k != read.record)
    }

    /// Stream form of one read, every write at or before its read time known; `latest` is
    /// the latest other writer of the cell by then.
    pub(super) fn settle_l1(&mut self, read: Waiting, latest: Option<Write>, sink: &mut impl Sink) {
        let expected = match latest {
            Some(w) => w.value,
            None if !read.value.is_null() && self.aborted_wrote(&read) => ValueKey::NULL,
            None => return,
        };
        if read.value == expected {
            return;
        }
        if self.out.l1_struct.is_full() {
            self.out.l1_struct.count_only(1);
            return;
        }
        let w = L1StructViolation {
            record: read.record as usize,
            cell: read.cell,
            read: self.witness_value(read.value),
            expected: self.witness_value(expected),
            writer: latest.map(|w| w.record as usize),
        };
        let pushed = self.out.l1_struct.push(w);
        assert!(pushed, "L1_struct had room");
        sink.found(
            read.line,
            Found::L1 {
                w,
                agent: read.agent,
                read: read.value,
                expected,
            },
        );
    }
}
