//! The history-free summary (SPEC §5.2): what the property monitors and the mechanisms need
//! to know about a log, kept without the log, without absolute times and without log indices.
//!
//! A driver feeds it the model's transitions — [`Summary::begin`], [`Summary::commit`],
//! [`Summary::kill`] (a retraction and its cascade), [`Summary::tool_changed`] — and reads
//! the verdicts ([`Summary::verdict`]) and the relative facts the mechanisms decide on
//! ([`Summary::newer`], [`Summary::dead_pred`], [`Summary::changed`], [`Summary::doomed`]).
//!
//! Two shapes, chosen by [`Need::retraction`]:
//! * **Without retraction** nothing committed ever becomes aborted, so every anomaly that a
//!   record exhibits stays exhibited: a violation is a sticky bit. A pending op carries flags
//!   in place of its read time — "a live commit wrote a cell I read since my read" (`newer`,
//!   for validation), "…with a value other than the one I read" (`stale`, A1), "my read
//!   already differs from the latest live write" (`l1_bad`), "…was produced by no live writer"
//!   (`residue_bad`). There are no records at all: the state is bounded by agents × cells.
//! * **With retraction** any live record may later be retracted, so each live record that can
//!   still change a verdict or a decision is kept as a [`Node`], in commit order, with no
//!   index and no time: its writes, its live preds as a bit mask of node positions and a
//!   dead-pred bit, the writers it is stale against (A1) as a mask, and its A2/A6 bits. A read
//!   remembers how many live writers of each read cell it saw (`depth`): that number is the
//!   relative form of its read time. `L1_struct` and the residue form of A3 read every record,
//!   aborted ones included, so each logged read of a cell is an [`Entry`] `(cell, value,
//!   depth)` until no live writer is left below it, when its status is final and folds into a
//!   sticky bit. The number of nodes grows with the history (every live writer is kept), so
//!   this shape is finite only under a bound on the log.
//!
//! Records that can no longer matter are dropped after every step (see `normalize`), so equal
//! futures give equal summaries: a summary is a *function* of the concrete state
//! ([`super::alpha`] computes it from a store), which is what the equivalence tests check.
//! Nothing here decides a runtime's rule; a pass of its tests says the summary tracks the log,
//! not that any runtime prevents anything.

use super::props::{Prop, Props};

/// Nodes a summary can hold (node sets are 16-bit masks).
pub const NODES_MAX: usize = 16;

/// What a summary must track: the watched properties and what the mechanisms read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Need {
    pub watch: Props,
    /// `Retract(i)` can happen (the second shape above).
    pub retraction: bool,
    /// Reads may deviate from the latest live write (SPEC §1 skew). Without it, the
    /// retraction-free shape asserts that every read equals the latest live write.
    pub skew: bool,
    /// A mechanism validates reads (`validate`, `validate-writers`).
    pub newer: bool,
    /// Reads record provenance `preds` (extension 2, forced on by `cascade`).
    pub provenance: bool,
    /// A mechanism reads "my planned tool changed" (`registry-validate`).
    pub tools: bool,
    /// Read sets steer the model (`lock`, the all-writers restriction).
    pub reads: bool,
}

impl Need {
    /// Writers' values matter (A1, `L1_struct`, residue).
    pub fn values(&self) -> bool {
        let w = self.watch;
        w.contains(Prop::A1) || w.contains(Prop::L1Struct) || w.contains(Prop::A3Residue)
    }

    /// Logged reads are kept as entries (retraction can change their status).
    pub fn entries(&self) -> bool {
        let w = self.watch;
        self.retraction && (w.contains(Prop::L1Struct) || w.contains(Prop::A3Residue))
    }

    /// Preds are tracked (only a retraction can kill one, so without it they never matter).
    pub fn preds(&self) -> bool {
        self.retraction && self.provenance
    }

    /// Every live writer is kept as a node.
    pub fn stack(&self) -> bool {
        self.retraction && (self.values() || self.newer || self.preds())
    }

    /// Pending read sets are kept.
    pub fn read_sets(&self) -> bool {
        self.reads || self.newer || self.values() || self.preds()
    }

    /// Planned tools and their "changed since my read" flag are kept.
    pub fn tool_flags(&self) -> bool {
        self.tools || self.watch.contains(Prop::A2)
    }
}

/// A `StartRead`: read set (mask), values read (4 bits per cell), planned tool (0 = NULL,
/// else t + 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Read {
    pub rs: u8,
    pub rv: u32,
    pub tool: u8,
}

/// A `CompleteWrite` as the log records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    /// Committed (not aborted at commit).
    pub live: bool,
    pub ws: u8,
    /// Values written, 4 bits per cell.
    pub wv: u32,
    /// `|io| ≥ 2 ∧ co ≠ io` (A6's condition on the record).
    pub reordered: bool,
    /// The write registry is the read-time registry (`pin`), so the planned tool is as read.
    pub pinned: bool,
}

/// What a pending op carries instead of its read time and its log of reads.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct PendingSummary {
    pub rs: u8,
    /// Values read on `rs` (NULL elsewhere).
    pub rv: u32,
    pub tool: u8,
    /// The planned tool left the registry or changed its signature since the read.
    pub changed: bool,
    // Without retraction:
    pub newer: bool,
    pub stale: bool,
    pub l1_bad: bool,
    pub residue_bad: bool,
    // With retraction:
    /// Per read cell (4 bits each), how many live writers of it the read saw.
    pub depth: u32,
    /// Live preds, as node positions.
    pub preds: u16,
    /// Some pred has been aborted.
    pub dead_pred: bool,
}

/// A live record that can still matter (with retraction only). `tag` is the driver's
/// (a log index in the tests, `()` in the abstract model).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Node<T> {
    pub tag: T,
    pub ws: u8,
    pub wv: u32,
    pub preds: u16,
    pub dead_pred: bool,
    /// Live writers that committed a different value to a cell this record read, inside its
    /// generation window (A1 pairs).
    pub a1: u16,
    pub a2: bool,
    pub a6: bool,
}

/// A logged read of `cell` that saw `value` and had `depth` live writers of it below (with
/// retraction only; `depth ≥ 1`, a read with none below is final and folded).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Entry {
    pub cell: u8,
    pub value: u8,
    pub depth: u8,
}

/// The summary. Field meanings are in the module docs; the shape is set by a [`Need`] that
/// every method takes and that must not change over a run.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Summary<T> {
    /// Per agent.
    pub pending: Vec<Option<PendingSummary>>,
    pub nodes: Vec<Node<T>>,
    /// Sorted, unique.
    pub entries: Vec<Entry>,
    /// Without retraction: the latest live value of each cell (4 bits per cell).
    pub latest: u32,
    /// Without retraction, with skew: per cell (8 bits each) the values live writers wrote.
    pub produced: u64,
    /// Violations that no future step can undo.
    pub sticky: Props,
}

/// The value of cell `c` in a 4-bit-per-cell map.
pub fn val(map: u32, c: u32) -> u32 {
    (map >> (4 * c)) & 0xF
}

/// The cells of a mask.
pub fn cells(mask: u8) -> impl Iterator<Item = u32> {
    (0..8).filter(move |c| mask & (1 << c) != 0)
}

/// The 4-bit-per-cell mask selecting the cells of `mask`.
pub fn nibbles(mask: u8) -> u32 {
    cells(mask).fold(0, |m, c| m | (0xF << (4 * c)))
}

/// Mask `m` over old positions as a mask over new ones (`newpos[old] = new`).
pub fn remap(m: u16, newpos: &[u8; NODES_MAX]) -> u16 {
    let (mut out, mut rest) = (0u16, m);
    while rest != 0 {
        let j = rest.trailing_zeros() as usize;
        out |= 1 << newpos[j];
        rest &= rest - 1;
    }
    out
}

/// `m` with the positions in `removed` taken out and the rest shifted down.
fn compact(m: u16, removed: u16) -> u16 {
    let (mut out, mut rest) = (m, removed);
    // Highest removed position first, so lower ones keep their place meanwhile.
    while rest != 0 {
        let pos = 15 - rest.leading_zeros();
        let low = (1u16 << pos) - 1;
        out = (out & low) | ((out >> 1) & !low);
        rest &= !(1 << pos);
    }
    out
}

fn depth_of(depth: u32, c: u32) -> u32 {
    (depth >> (4 * c)) & 0xF
}

impl<T: Clone> Summary<T> {
    /// The summary of the empty log with `agents` idle agents.
    pub fn new(agents: usize) -> Self {
        Summary {
            pending: vec![None; agents],
            nodes: Vec::new(),
            entries: Vec::new(),
            latest: 0,
            produced: 0,
            sticky: Props::default(),
        }
    }

    /// The positions of the live writers of `c`, in commit order.
    pub fn writers(&self, c: u32) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes.len()).filter(move |&k| self.nodes[k].ws & (1 << c) != 0)
    }

    /// The `d`-th live writer of `c` (1-based), if there are that many.
    fn writer_at(&self, c: u32, d: u32) -> Option<usize> {
        d.checked_sub(1)
            .and_then(|i| self.writers(c).nth(i as usize))
    }

    /// Begins `slot`'s op.
    pub fn begin(&mut self, need: &Need, slot: usize, read: Read) {
        assert!(self.pending[slot].is_none(), "begin with an op in flight");
        let rs = if need.read_sets() { read.rs } else { 0 };
        let mut p = PendingSummary {
            rs,
            rv: if need.values() {
                read.rv & nibbles(rs)
            } else {
                0
            },
            tool: if need.tool_flags() { read.tool } else { 0 },
            ..PendingSummary::default()
        };
        if need.retraction {
            self.begin_nodes(need, &mut p);
        } else {
            self.begin_flags(need, &mut p, read);
        }
        self.pending[slot] = Some(p);
    }

    fn begin_flags(&self, need: &Need, p: &mut PendingSummary, read: Read) {
        let w = need.watch;
        if !need.values() {
            return;
        }
        for c in cells(read.rs) {
            let v = val(read.rv, c);
            if !need.skew {
                assert_eq!(
                    v,
                    val(self.latest, c),
                    "without skew a read is the latest write"
                );
            }
            p.l1_bad |= w.contains(Prop::L1Struct) && v != val(self.latest, c);
            let produced = (self.produced >> (8 * c)) & (1 << v) != 0;
            p.residue_bad |= w.contains(Prop::A3Residue) && need.skew && v != 0 && !produced;
        }
    }

    fn begin_nodes(&self, need: &Need, p: &mut PendingSummary) {
        for c in cells(p.rs) {
            if need.stack() {
                p.depth |= (self.writers(c).count() as u32) << (4 * c);
            }
            if need.preds() {
                if let Some(top) = self.writers(c).last() {
                    let n = &self.nodes[top];
                    p.preds |= (1 << top) | n.preds;
                    p.dead_pred |= n.dead_pred;
                }
            }
        }
    }

    /// Whether `slot`'s op has a live commit to a cell it read since its read.
    pub fn newer(&self, need: &Need, slot: usize) -> bool {
        assert!(
            need.newer,
            "newer is tracked only when a mechanism validates"
        );
        let p = self.pending[slot].as_ref().expect("an op in flight");
        if !need.retraction {
            return p.newer;
        }
        cells(p.rs).any(|c| self.writers(c).count() as u32 > depth_of(p.depth, c))
    }

    /// The live writers a read `(rs, rv, depth)` is stale against (with retraction).
    fn stale_mask(&self, p: &PendingSummary) -> u16 {
        let mut m = 0;
        for c in cells(p.rs) {
            for k in self.writers(c).skip(depth_of(p.depth, c) as usize) {
                if val(self.nodes[k].wv, c) != val(p.rv, c) {
                    m |= 1 << k;
                }
            }
        }
        m
    }

    /// Whether `slot`'s op has an aborted pred.
    pub fn dead_pred(&self, slot: usize) -> bool {
        self.pending[slot]
            .as_ref()
            .expect("an op in flight")
            .dead_pred
    }

    /// Whether `slot`'s planned tool changed since its read.
    pub fn changed(&self, slot: usize) -> bool {
        let p = self.pending[slot].as_ref().expect("an op in flight");
        p.tool != 0 && p.changed
    }

    /// The registry entry of tool `t` changed (removed or new signature).
    pub fn tool_changed(&mut self, t: u8) {
        for p in self.pending.iter_mut().flatten() {
            if p.tool == t + 1 {
                p.changed = true;
            }
        }
    }

    /// Commits (or records the abort of) `slot`'s op.
    pub fn commit(&mut self, need: &Need, slot: usize, w: &Write, tag: T) {
        let p = self.pending[slot]
            .take()
            .expect("commit with an op in flight");
        if need.retraction {
            self.commit_nodes(need, &p, w, tag);
        } else {
            self.commit_flags(need, &p, w);
        }
    }

    fn commit_flags(&mut self, need: &Need, p: &PendingSummary, w: &Write) {
        let watch = need.watch;
        let mut found = Props::default()
            .with_if(Prop::L1Struct, p.l1_bad)
            .with_if(Prop::A3Residue, p.residue_bad);
        if w.live {
            found = found
                .with_if(Prop::A1, p.stale)
                .with_if(Prop::A2, p.tool != 0 && p.changed && !w.pinned)
                .with_if(Prop::A6, w.reordered);
            for q in self.pending.iter_mut().flatten() {
                for c in cells(w.ws & q.rs) {
                    q.newer |= need.newer;
                    q.stale |= watch.contains(Prop::A1) && val(w.wv, c) != val(q.rv, c);
                }
            }
            for c in cells(w.ws) {
                let v = val(w.wv, c);
                if need.values() {
                    self.latest = (self.latest & !(0xF << (4 * c))) | (v << (4 * c));
                }
                if watch.contains(Prop::A3Residue) && need.skew {
                    self.produced |= 1 << (8 * c + v);
                }
            }
        }
        self.sticky = self.sticky.union(found.intersect(watch));
    }

    fn commit_nodes(&mut self, need: &Need, p: &PendingSummary, w: &Write, tag: T) {
        let watch = need.watch;
        if need.entries() {
            for c in cells(p.rs) {
                self.entries.push(Entry {
                    cell: c as u8,
                    value: val(p.rv, c) as u8,
                    depth: depth_of(p.depth, c) as u8,
                });
            }
        }
        if w.live {
            let ws = if need.stack() { w.ws } else { 0 };
            let node = Node {
                tag,
                ws,
                wv: if need.values() { w.wv & nibbles(ws) } else { 0 },
                preds: p.preds,
                dead_pred: p.dead_pred,
                a1: if watch.contains(Prop::A1) {
                    self.stale_mask(p)
                } else {
                    0
                },
                a2: watch.contains(Prop::A2) && p.tool != 0 && p.changed && !w.pinned,
                a6: watch.contains(Prop::A6) && w.reordered,
            };
            // Nothing points at a new node yet: it is kept only if it matters by itself.
            if self.own_relevance(need, &node) {
                assert!(
                    self.nodes.len() < NODES_MAX,
                    "more than {NODES_MAX} live nodes"
                );
                self.nodes.push(node);
            }
        }
        self.tidy_entries(need);
    }

    /// The records a retraction of node `root` aborts under a cascade: the root, then every
    /// later live node with an aborted pred (one pass: preds are closed and point back).
    pub fn doomed(&self, root: usize) -> u16 {
        let mut dead = 1u16 << root;
        for k in root + 1..self.nodes.len() {
            let n = &self.nodes[k];
            if n.dead_pred || n.preds & dead != 0 {
                dead |= 1 << k;
            }
        }
        dead
    }

    /// Nodes `dead` became aborted (a retraction and whatever it cascaded to).
    pub fn kill(&mut self, need: &Need, dead: u16) {
        assert!(
            need.retraction,
            "only a retraction kills a committed record"
        );
        let lost = |s: &Self, depth: u32, c: u32| -> u32 {
            let below = s.writers(c).take(depth_of(depth, c) as usize);
            below.filter(|&k| dead & (1 << k) != 0).count() as u32
        };
        let mut pending = std::mem::take(&mut self.pending);
        for p in pending.iter_mut().flatten() {
            p.dead_pred |= p.preds & dead != 0;
            p.preds &= !dead;
            for c in cells(p.rs) {
                p.depth -= lost(self, p.depth, c) << (4 * c);
            }
        }
        self.pending = pending;
        let mut entries = std::mem::take(&mut self.entries);
        for e in &mut entries {
            let c = u32::from(e.cell);
            e.depth -= lost(self, u32::from(e.depth) << (4 * c), c) as u8;
        }
        self.entries = entries;
        for n in &mut self.nodes {
            n.dead_pred |= n.preds & dead != 0;
            n.preds &= !dead;
            n.a1 &= !dead;
        }
        self.remove(dead);
        self.normalize(need);
    }

    /// Whether a live node can change a verdict or a decision by itself (the nodes it
    /// points at then matter too).
    fn own_relevance(&self, need: &Need, n: &Node<T>) -> bool {
        (need.stack() && n.ws != 0)
            || n.a1 != 0
            || n.a2
            || n.a6
            || (need.watch.contains(Prop::A3) && (n.preds != 0 || n.dead_pred))
    }

    /// Drops nodes that cannot matter, folds final entries into sticky bits, sorts entries.
    /// A node matters by itself or because a node that matters points at it (masks point
    /// back in commit order, so one backward pass finds them).
    fn normalize(&mut self, need: &Need) {
        let mut keep = 0u16;
        for k in (0..self.nodes.len()).rev() {
            let n = &self.nodes[k];
            if keep & (1 << k) != 0 || self.own_relevance(need, n) {
                keep |= (1 << k) | n.preds | n.a1;
            }
        }
        let drop = ((1u32 << self.nodes.len()) - 1) as u16 & !keep;
        if drop != 0 {
            self.remove(drop);
        }
        self.tidy_entries(need);
    }

    /// Folds final entries (no live writer below) into sticky bits; sorts the rest.
    fn tidy_entries(&mut self, need: &Need) {
        if self.entries.is_empty() {
            return;
        }
        let mut found = Props::default();
        self.entries.retain(|e| {
            if e.depth > 0 {
                return true;
            }
            found = found
                .with_if(Prop::L1Struct, e.value != 0)
                .with_if(Prop::A3Residue, e.value != 0);
            false
        });
        self.sticky = self.sticky.union(found.intersect(need.watch));
        self.entries.sort_unstable();
        self.entries.dedup();
    }

    /// The log is full: no op will begin or commit again, only retractions and registry
    /// changes remain. What only a future read or commit could use is forgotten: the ops in
    /// flight, the latest values and, unless logged reads still need them, the writes of
    /// the kept records (which then matter only through their bits and who points at them).
    pub fn seal(&mut self, need: &Need) {
        self.pending.iter_mut().for_each(|p| *p = None);
        (self.latest, self.produced) = (0, 0);
        if !need.entries() {
            for n in &mut self.nodes {
                (n.ws, n.wv) = (0, 0);
            }
        }
        if need.retraction {
            self.normalize(need);
        }
    }

    /// Removes the nodes in `gone` and renumbers every mask.
    fn remove(&mut self, gone: u16) {
        let mut k = 0;
        self.nodes.retain(|_| {
            k += 1;
            gone & (1 << (k - 1)) == 0
        });
        for n in &mut self.nodes {
            assert_eq!(n.preds & gone, 0, "a removed node is still a pred");
            assert_eq!(n.a1 & gone, 0, "a removed node is still an A1 writer");
            (n.preds, n.a1) = (compact(n.preds, gone), compact(n.a1, gone));
        }
        for p in self.pending.iter_mut().flatten() {
            assert_eq!(p.preds & gone, 0, "a removed node is still a pending pred");
            p.preds = compact(p.preds, gone);
        }
    }

    /// The properties of `need.watch` the summarized log violates now.
    pub fn verdict(&self, need: &Need) -> Props {
        let mut v = self.sticky;
        let nodes = &self.nodes;
        v = v
            .with_if(Prop::A1, nodes.iter().any(|n| n.a1 != 0))
            .with_if(Prop::A2, nodes.iter().any(|n| n.a2))
            .with_if(Prop::A3, nodes.iter().any(|n| n.dead_pred))
            .with_if(Prop::A6, nodes.iter().any(|n| n.a6));
        for e in &self.entries {
            let c = u32::from(e.cell);
            let top = self
                .writer_at(c, u32::from(e.depth))
                .expect("an entry has a writer");
            let value = u32::from(e.value);
            v = v.with_if(Prop::L1Struct, val(nodes[top].wv, c) != value);
            let produced = self
                .writers(c)
                .take(usize::from(e.depth))
                .any(|k| val(nodes[k].wv, c) == value);
            v = v.with_if(Prop::A3Residue, value != 0 && !produced);
        }
        v.intersect(need.watch)
    }

    /// The position of the node tagged `tag`, if it is kept.
    pub fn position(&self, tag: &T) -> Option<usize>
    where
        T: PartialEq,
    {
        self.nodes.iter().position(|n| &n.tag == tag)
    }

    /// The same summary with the tags dropped.
    pub fn untagged(&self) -> Summary<()> {
        Summary {
            pending: self.pending.clone(),
            nodes: self
                .nodes
                .iter()
                .map(|n| Node {
                    tag: (),
                    ws: n.ws,
                    wv: n.wv,
                    preds: n.preds,
                    dead_pred: n.dead_pred,
                    a1: n.a1,
                    a2: n.a2,
                    a6: n.a6,
                })
                .collect(),
            entries: self.entries.clone(),
            latest: self.latest,
            produced: self.produced,
            sticky: self.sticky,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need(watch: &[Prop], retraction: bool) -> Need {
        Need {
            watch: Props::of(watch),
            retraction,
            ..Need::default()
        }
    }

    fn write(ws: u8, wv: u32) -> Write {
        Write {
            live: true,
            ws,
            wv,
            reordered: false,
            pinned: false,
        }
    }

    /// SPEC §3's snapshot-insufficiency witness, both shapes: both read NULL, a1 writes v1,
    /// a2 commits: A1, and `L1_struct` holds.
    #[test]
    fn snapshot_witness_in_both_shapes() {
        for retraction in [false, true] {
            let n = need(&[Prop::A1, Prop::L1Struct], retraction);
            let mut s = Summary::<u32>::new(2);
            let read = Read {
                rs: 1,
                rv: 0,
                tool: 0,
            };
            s.begin(&n, 0, read);
            s.begin(&n, 1, read);
            s.commit(&n, 0, &write(1, 1), 0);
            assert!(s.verdict(&n).is_empty());
            s.commit(&n, 1, &write(0, 0), 1);
            assert_eq!(s.verdict(&n), Props::of(&[Prop::A1]));
            if retraction {
                // Retracting the writer undoes A1 and leaves both reads consistent.
                s.kill(&n, 1 << s.position(&0).unwrap());
                assert!(s.verdict(&n).is_empty(), "{s:?}");
                assert!(s.nodes.is_empty(), "nothing left can matter: {s:?}");
            }
        }
    }

    /// A retracted writer whose value stays in memory: the next read of it breaks
    /// `L1_struct` and the residue form, and preds record nothing for it.
    #[test]
    fn retraction_leaves_residue() {
        let n = Need {
            skew: false,
            provenance: true,
            ..need(&[Prop::L1Struct, Prop::A3Residue, Prop::A3], true)
        };
        let mut s = Summary::<u32>::new(1);
        s.begin(
            &n,
            0,
            Read {
                rs: 0,
                rv: 0,
                tool: 0,
            },
        );
        s.commit(&n, 0, &write(1, 1), 0);
        s.begin(
            &n,
            0,
            Read {
                rs: 1,
                rv: 1,
                tool: 0,
            },
        );
        s.kill(&n, s.doomed(0));
        assert!(s.pending[0].unwrap().dead_pred);
        s.commit(&n, 0, &write(0, 0), 1);
        let v = s.verdict(&n);
        assert_eq!(v, Props::of(&[Prop::L1Struct, Prop::A3Residue, Prop::A3]));
    }

    #[test]
    fn compact_shifts_down() {
        assert_eq!(compact(0b1011, 0b0010), 0b101);
        assert_eq!(compact(0b1000, 0b0111), 0b1);
    }
}
