//! A3 causal-cascade (SPEC §3) in its two forms, each in spec, fast and stream form, with
//! their witness types.
//!
//! * The preds form: some record j is not aborted and some p ∈ preds(j) is aborted. A3 is
//!   *about* aborted records. Per record: the stream keeps one bit per record read (its
//!   `aborted` flag), since a pred may name any earlier record.
//! * The residue form: some j read a non-NULL value v of c ∈ read_set(j) that no other
//!   non-aborted k wrote (c ∈ write_set(k), write_values(k)[c] = v) with
//!   write_time(k) ≤ read_time(j), and that is not c's initial value (NULL in a history that
//!   starts empty; see [`super::l1_struct`]). It is decidable on a flat trace without `preds`,
//!   over-approximates A3 and is named apart ([`crate::anomaly::Anomaly::A3Residue`]). The
//!   fast form shares the read pass of [`super::fast`]; the stream form keeps the two
//!   earliest writers of every (cell, value) and decides a read when its write time closes,
//!   beside `L1_struct` ([`super::stream`]).

use super::read_pass::{ReadPass, Tuning, Wanted};
use super::stream::{Found, Sink, Stream, Waiting, Write};
use super::write_index::WriteIndex;
use super::Report;
use crate::names::{Cell, Value};
use crate::record::{OpRecord, ValueMap};
use std::ops::Range;

/// A3 (preds form): `record` survives while its predecessor `pred` is aborted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct A3Witness {
    pub record: usize,
    pub pred: usize,
}

/// A3 residue form: `record` read non-NULL `value` of `cell` that no other non-aborted record
/// wrote at or before its read time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct A3ResidueWitness {
    pub record: usize,
    pub cell: Cell,
    pub value: Value,
}

/// Spec form (preds): every witness, sorted.
pub fn spec(r: &[OpRecord]) -> Vec<A3Witness> {
    super::collect(|f| spec_each(r, f))
}

/// [`spec`]'s witnesses, in order, to `out`.
pub fn spec_each(r: &[OpRecord], out: &mut dyn FnMut(A3Witness)) {
    for (j, rj) in r.iter().enumerate() {
        if rj.aborted {
            continue;
        }
        for &p in &rj.preds {
            if r.get(p as usize).is_some_and(|rp| rp.aborted) {
                out(A3Witness {
                    record: j,
                    pred: p as usize,
                });
            }
        }
    }
}

/// Spec form (residue) on a history that starts empty: every witness, sorted.
pub fn residue_spec(r: &[OpRecord]) -> Vec<A3ResidueWitness> {
    super::collect(|f| residue_spec_each(r, &ValueMap::new(), f))
}

/// The residue spec form's witnesses on a history that starts in state `initial`, in order,
/// to `out`.
pub fn residue_spec_each(
    r: &[OpRecord],
    initial: &ValueMap,
    out: &mut dyn FnMut(A3ResidueWitness),
) {
    for (j, rj) in r.iter().enumerate() {
        for &c in &rj.read_set {
            let v = rj.read_values.get(c);
            if v.is_null() || v == initial.get(c) {
                continue;
            }
            let produced = r.iter().enumerate().any(|(k, rk)| {
                k != j
                    && !rk.aborted
                    && rk.write_set.contains(&c)
                    && rk.write_values.get(c) == v
                    && rk.write_time <= rj.read_time
            });
            if !produced {
                out(A3ResidueWitness {
                    record: j,
                    cell: c,
                    value: v,
                });
            }
        }
    }
}

/// Fast form (preds): a non-aborted record with an aborted pred.
pub fn fast(r: &[OpRecord]) -> Vec<A3Witness> {
    let mut out = Vec::new();
    for (j, rj) in r.iter().enumerate() {
        of(r, j, rj, &mut out);
    }
    out
}

/// Record `j`'s witnesses (preds form), to `out`.
pub(super) fn of(r: &[OpRecord], j: usize, rj: &OpRecord, out: &mut Vec<A3Witness>) {
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

/// Fast form (residue) on a history that starts empty: a read of a non-NULL value that no
/// *other* non-aborted record wrote to that cell at or before the read time.
pub fn residue_fast(r: &[OpRecord], index: &WriteIndex) -> Vec<A3ResidueWitness> {
    let wanted = Wanted {
        residue: true,
        ..Wanted::NONE
    };
    ReadPass::run(r, index, &ValueMap::new(), Tuning::default(), wanted).a3_residue
}

impl ReadPass<'_> {
    /// The residue form on one read. Usually the latest writer wrote the value read (the
    /// read was fresh), which settles it; otherwise the two earliest writers of the value
    /// decide (if the earliest is the reader itself, the second).
    pub(super) fn residue(
        &self,
        i: usize,
        c: Cell,
        value: Value,
        before: Range<usize>,
        latest: Option<usize>,
        out: &mut Report,
    ) {
        let w = &self.index.writes;
        let produced = value == self.initial.get(c)
            || latest.is_some_and(|p| w[p].value == value)
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
}

impl Stream {
    /// Stream form (preds): preds are sorted, so witnesses come in order.
    pub(super) fn a3(&mut self, j: u64, r: &OpRecord, line: u64, sink: &mut impl Sink) {
        for &p in &r.preds {
            if self.is_aborted(u64::from(p)) {
                let w = A3Witness {
                    record: j as usize,
                    pred: p as usize,
                };
                if self.out.a3.push(w) {
                    let pred_agent = self.agents.get(p as usize).copied();
                    sink.found(
                        line,
                        Found::A3 {
                            w,
                            agent: r.agent,
                            pred_agent,
                        },
                    );
                }
            }
        }
    }

    /// Stream form (residue) of one read, every write at or before its read time known;
    /// `latest` is the latest other writer of the cell by then.
    pub(super) fn settle_residue(
        &mut self,
        read: Waiting,
        latest: Option<Write>,
        sink: &mut impl Sink,
    ) {
        if !self.opts.residue || read.value.is_null() || read.value == self.initial(read.cell) {
            return;
        }
        let produced = latest.is_some_and(|w| w.value == read.value)
            || self
                .first_two
                .get(&(read.cell, read.value))
                .into_iter()
                .flatten()
                .flatten()
                .any(|&(k, t)| t <= read.read_time && k != read.record);
        if !produced && self.out.a3_residue.is_full() {
            self.out.a3_residue.count_only(1);
        } else if !produced {
            let w = A3ResidueWitness {
                record: read.record as usize,
                cell: read.cell,
                value: self.witness_value(read.value),
            };
            let pushed = self.out.a3_residue.push(w);
            assert!(pushed, "the residue had room");
            sink.found(
                read.line,
                Found::Residue {
                    w,
                    agent: read.agent,
                    value: read.value,
                },
            );
        }
    }
}
