//! `L1_struct` (SPEC §3): the structural snapshot condition, in spec, fast and stream form,
//! with its violation type. It is not an anomaly of the catalogue but the property A1 is read
//! against (a snapshot-insufficiency witness is A1 with `L1_struct` holding), so it lives
//! beside them and is reported in every [`Report`] and [`Summary`](super::Summary).
//!
//! Definition: every read value (cells of the read set) equals the latest committed write to
//! that cell at or before the read time, or, if none, the cell's initial value (ties in write
//! time: the later record). A history the simulator or the checker makes starts empty: every
//! initial value is NULL. A trace that starts in the middle of a system's life starts in a
//! state the trace does not show; its reader supplies that state (SPEC §3, "Initial state").
//! Only non-aborted writers count as producers (see [`crate::detect`]). The fast form shares
//! the read pass of [`super::fast`]; the stream form decides a read when its write time
//! closes, beside the A3 residue ([`super::stream`]).

use super::read_pass::{ReadPass, Tuning, Wanted};
use super::stream::{Found, Sink, Stream, Waiting, Write};
use super::write_index::WriteIndex;
use super::Report;
use crate::names::{Cell, Value};
use crate::record::{OpRecord, ValueMap};

/// A violation of `L1_struct`: `record` read `read` from `cell` where the latest committed
/// write at or before its read time was `expected` (the initial value if none), by `writer`
/// if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct L1StructViolation {
    pub record: usize,
    pub cell: Cell,
    pub read: Value,
    pub expected: Value,
    pub writer: Option<usize>,
}

/// Spec form on a history that starts empty: every violation, sorted.
pub fn spec(r: &[OpRecord]) -> Vec<L1StructViolation> {
    super::collect(|f| spec_each(r, &ValueMap::new(), f))
}

/// The spec form's violations on a history that starts in state `initial`, in order, to
/// `out`.
pub fn spec_each(r: &[OpRecord], initial: &ValueMap, out: &mut dyn FnMut(L1StructViolation)) {
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
            let expected = latest.map_or(initial.get(c), |k| r[k].write_values.get(c));
            let read = rj.read_values.get(c);
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

/// Fast form on a history that starts empty: a read value that differs from the latest
/// non-aborted write to the cell at or before the read time (ties in write time: the later
/// record), NULL if none.
pub fn fast(r: &[OpRecord], index: &WriteIndex) -> Vec<L1StructViolation> {
    let wanted = Wanted {
        l1: true,
        ..Wanted::NONE
    };
    ReadPass::run(r, index, &ValueMap::new(), Tuning::default(), wanted).l1_struct
}

impl ReadPass<'_> {
    /// The fast form on one read; `latest` is the position of the latest other write.
    pub(super) fn l1(
        &self,
        i: usize,
        c: Cell,
        read: Value,
        latest: Option<usize>,
        out: &mut Report,
    ) {
        let expected = latest.map_or(self.initial.get(c), |p| self.index.writes[p].value);
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
    /// Stream form of one read, every write at or before its read time known; `latest` is
    /// the latest other writer of the cell by then.
    pub(super) fn settle_l1(&mut self, read: Waiting, latest: Option<Write>, sink: &mut impl Sink) {
        let expected = latest.map_or(self.initial(read.cell), |w| w.value);
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
