//! The pass over reads that the read-side fast forms share (A1, A3-residue, `L1_struct`): each
//! read's position in the per-cell [`WriteIndex`], found once per record in log order. The
//! detectors themselves are `impl ReadPass` blocks in their anomaly's file; [`super::fast`]
//! runs them all.

use super::write_index::{Counts, WriteIndex};
use super::Report;
use crate::names::Cell;
use crate::record::{OpRecord, ValueMap};
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

/// Which read-side detectors a [`ReadPass`] computes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Wanted {
    pub(super) a1: bool,
    pub(super) residue: bool,
    pub(super) l1: bool,
}

impl Wanted {
    pub(super) const ALL: Wanted = Wanted {
        a1: true,
        residue: true,
        l1: true,
    };
    pub(super) const NONE: Wanted = Wanted {
        a1: false,
        residue: false,
        l1: false,
    };
}

/// The detectors that look at reads (A1, A3-residue, `L1_struct`), one record at a time in log
/// order, sharing each read's position in the index.
pub(super) struct ReadPass<'a> {
    pub(super) index: &'a WriteIndex,
    /// The state the history starts in (all-NULL for one that starts empty).
    pub(super) initial: &'a ValueMap,
    pub(super) counts: OnceCell<Counts>,
    /// Per cell, where the writes of the records visited so far end. A reader's window edges
    /// lie a few positions behind it, so galloping from it costs O(log window), not
    /// O(log writes). Only a hint: any value gives the same answers.
    cursors: Vec<usize>,
    pub(super) scan_max: usize,
    wanted: Wanted,
}

impl<'a> ReadPass<'a> {
    pub(super) fn new(
        index: &'a WriteIndex,
        initial: &'a ValueMap,
        tuning: Tuning,
        wanted: Wanted,
    ) -> ReadPass<'a> {
        let cursors = (0..index.cells())
            .map(|c| index.cell(Cell(c as u32)).start)
            .collect();
        ReadPass {
            index,
            initial,
            counts: OnceCell::new(),
            cursors,
            scan_max: tuning.scan_max.max(1),
            wanted,
        }
    }

    pub(super) fn run(
        r: &[OpRecord],
        index: &WriteIndex,
        initial: &ValueMap,
        tuning: Tuning,
        wanted: Wanted,
    ) -> Report {
        let mut pass = ReadPass::new(index, initial, tuning, wanted);
        let mut out = Report::default();
        for (i, ri) in r.iter().enumerate() {
            pass.record(i, ri, &mut out);
        }
        out
    }

    /// Every read of record `i`, then its writes move the cursors.
    pub(super) fn record(&mut self, i: usize, ri: &OpRecord, out: &mut Report) {
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
}

/// The last position in `range` (a prefix of one cell's writes) by a record other than `me`.
fn latest_other_writer(index: &WriteIndex, range: Range<usize>, me: usize) -> Option<usize> {
    // A record appears at most once per cell, so skipping `me` needs at most one step back.
    range
        .rev()
        .take(2)
        .find(|&p| index.writes[p].record as usize != me)
}
