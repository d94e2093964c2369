//! A history-free monitor of A4 (split view, SPEC §3 and §6) for the replicated store.
//!
//! A4: two live records read one cell at one committed version and saw different values. The
//! replicated store records every read at the primary's head version of the cell at that
//! moment (a lagging secondary serves an older *value*, not an older version), so the reads
//! of one version are those taken while it was the head. The monitor keeps, per cell, a few
//! **groups**: the head version's, and the older ones that an op in flight still read at.
//! A group holds the set of values live records have read at it. A pending op holds, per read
//! cell, the value it saw and its group's position (0 = the head's, 1 the next older still
//! kept, …): no version numbers. At a live commit each read is compared with its group and
//! added to it; a new committed version of a cell opens a new head group and drops old groups
//! nobody reads at any more. A violation is a sticky bit: the replicated model has no
//! retraction, so an exhibited A4 stays exhibited. The state is bounded by
//! cells × (agents + 1) groups. Equality with the spec detector is tested on every reachable state of the
//! checker's replicated model (`agentsim_checker`'s abstract-model tests), at small bounds.

use super::summary::{cells, val};

/// An op in flight: per cell (4 bits each) the value read and its group's position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PendingRead {
    pub rs: u8,
    pub values: u32,
    pub groups: u32,
}

/// The A4 monitor.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SplitView {
    /// Per cell, the groups' value sets (bit v), head first.
    pub groups: Vec<Vec<u16>>,
    pub pending: Vec<Option<PendingRead>>,
    pub violated: bool,
}

impl SplitView {
    /// No reads yet, over `cells` cells and `agents` agents.
    pub fn new(cells: usize, agents: usize) -> Self {
        SplitView {
            groups: vec![vec![0]; cells],
            pending: vec![None; agents],
            violated: false,
        }
    }

    /// Agent `slot` read the cells of `rs` (at their head versions) and saw `values`.
    pub fn read(&mut self, slot: usize, rs: u8, values: u32) {
        assert!(self.pending[slot].is_none(), "read with an op in flight");
        self.pending[slot] = Some(PendingRead {
            rs,
            values: values & cells(rs).fold(0, |m, c| m | 0xF << (4 * c)),
            groups: 0,
        });
    }

    /// Agent `slot`'s op was appended: `live` unless aborted; a live one committed a new
    /// version of every cell of `ws`.
    pub fn commit(&mut self, slot: usize, live: bool, ws: u8) {
        let p = self.pending[slot]
            .take()
            .expect("commit with an op in flight");
        if live {
            for c in cells(p.rs) {
                let g = &mut self.groups[c as usize][val(p.groups, c) as usize];
                let v = val(p.values, c);
                self.violated |= *g & !(1 << v) != 0;
                *g |= 1 << v;
            }
            for c in cells(ws) {
                self.new_version(c);
            }
        }
        for c in 0..self.groups.len() as u32 {
            self.drop_unread(c);
        }
    }

    /// A new committed version of `c`: every group moves one position older.
    fn new_version(&mut self, c: u32) {
        self.groups[c as usize].insert(0, 0);
        for p in self.pending.iter_mut().flatten() {
            if p.rs & (1 << c) != 0 {
                p.groups += 1 << (4 * c);
            }
        }
    }

    /// Drops the older groups of `c` that no op in flight reads at, renumbering the rest.
    fn drop_unread(&mut self, c: u32) {
        let n = self.groups[c as usize].len();
        let used = |g: usize, pending: &[Option<PendingRead>]| {
            g == 0
                || pending
                    .iter()
                    .flatten()
                    .any(|p| p.rs & (1 << c) != 0 && val(p.groups, c) as usize == g)
        };
        let keep: Vec<bool> = (0..n).map(|g| used(g, &self.pending)).collect();
        let mut newpos = vec![0u32; n];
        let mut k = 0;
        for g in 0..n {
            newpos[g] = k;
            k += u32::from(keep[g]);
        }
        for p in self.pending.iter_mut().flatten() {
            if p.rs & (1 << c) != 0 {
                let g = val(p.groups, c) as usize;
                p.groups = (p.groups & !(0xF << (4 * c))) | newpos[g] << (4 * c);
            }
        }
        let mut g = 0;
        self.groups[c as usize].retain(|_| {
            g += 1;
            keep[g - 1]
        });
    }

    /// Whether the log has a split view.
    pub fn verdict(&self) -> bool {
        self.violated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPEC §6's witness: a secondary serves NULL at version 0 while the primary serves v at
    /// version 1 … here both at one version: one reader sees NULL (lagging), one v.
    #[test]
    fn two_values_at_one_version_split() {
        let mut m = SplitView::new(1, 3);
        m.read(0, 1, 0);
        m.commit(0, true, 1);
        m.read(1, 1, 1);
        m.read(2, 1, 0);
        m.commit(1, true, 0);
        assert!(!m.verdict());
        m.commit(2, true, 0);
        assert!(m.verdict());
    }

    #[test]
    fn a_new_version_separates_reads_and_old_groups_go() {
        let mut m = SplitView::new(1, 2);
        m.read(0, 1, 0);
        m.read(1, 0, 0);
        m.commit(1, true, 1);
        assert_eq!(m.groups[0].len(), 2, "the old group is still read at");
        m.commit(0, true, 0);
        assert_eq!(m.groups[0].len(), 1);
        m.read(1, 1, 1);
        m.commit(1, true, 0);
        assert!(
            !m.verdict(),
            "NULL at version 0 and v1 at version 1 do not split"
        );
    }
}
