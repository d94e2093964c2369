//! The commit orders a summary can be written in, and the few a canonical encoding compares.
//!
//! Nothing reads the commit order of two kept nodes except through a cell both write (the
//! order of a cell's writers), a pred edge, or an A1 pair: counts per cell, masks as sets, and
//! `doomed`'s "later than the root" (which under `cascade` only ever meets the root's
//! dependants, later by their pred edge, since no live node keeps a dead pred there). So any
//! order that keeps those edges ([`Summary::before`]) is the same summary, and an encoder that
//! wants one representative per summary must pick an order that depends on the summary only,
//! not on the order its nodes happen to be in.
//!
//! [`Summary::canonical_orders`] does that: it places, repeatedly, the ready node with the
//! least contents. When several ready nodes tie (equal contents and equal pred and A1 edges —
//! only nodes that write nothing can tie, since two writers of one cell are ordered) the choice
//! may still matter through the nodes and ops that point at them, so it branches, once per
//! tied node that is not a *twin* of one already tried (twins: pointed at by exactly the same
//! nodes and ops, so swapping them maps the summary onto itself and both branches give the
//! same result). The caller keeps the least encoding over the candidates. That least encoding
//! is a function of the summary up to reordering: an order-preserving renaming of the nodes
//! maps the search tree onto itself. A pass of this file's tests says the candidates are
//! orders that keep the edges and that the least encoding does not move under reordering, at
//! the summaries tried; the claim that such orders change nothing the model can observe is the
//! abstract model's, checked by its exploration tests.

use super::summary::{remap, Node, Summary, NODES_MAX};

/// A commit order: `order[new] = old` and `newpos[old] = new`, for the first `len` nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Order {
    pub order: [u8; NODES_MAX],
    pub newpos: [u8; NODES_MAX],
    pub len: usize,
}

/// Candidate orders a canonical search may visit (`n!` for `n` nodes that all tie and no two
/// of which are twins). The models keep at most `MaxOps` nodes, far below this; a summary that
/// needs more branches than this has a shape the search was not written for.
pub const CANDIDATES_MAX: usize = 40_320;

impl Order {
    /// The order the nodes are in.
    pub fn identity(len: usize) -> Order {
        assert!(len <= NODES_MAX, "at most {NODES_MAX} nodes");
        let mut o = Order {
            order: [0; NODES_MAX],
            newpos: [0; NODES_MAX],
            len,
        };
        for k in 0..len {
            (o.order[k], o.newpos[k]) = (k as u8, k as u8);
        }
        o
    }

    /// The order `order[new] = old`.
    pub fn from_old(old: &[u8]) -> Order {
        let mut o = Order::identity(old.len());
        for (new, &k) in old.iter().enumerate() {
            (o.order[new], o.newpos[usize::from(k)]) = (k, new as u8);
        }
        o
    }
}

/// Per node, who points at it: nodes by pred, nodes by A1 pair, in-flight ops by pred.
type Referrers = ([u16; NODES_MAX], [u16; NODES_MAX], [u16; NODES_MAX]);

struct Search<'a, T> {
    s: &'a Summary<T>,
    before: [u16; NODES_MAX],
    /// Computed at the first tie (most summaries have none).
    refs: Option<Referrers>,
    at: Order,
    placed: u16,
    visited: usize,
}

impl<T: Clone + Ord> Summary<T> {
    /// Per node, the nodes that must come before it in any order that keeps the summary:
    /// its preds, its A1 writers, and the earlier writers of a cell it writes.
    pub fn before(&self) -> [u16; NODES_MAX] {
        let mut before = [0u16; NODES_MAX];
        for (k, node) in self.nodes.iter().enumerate() {
            before[k] = node.preds | node.a1;
            for j in 0..k {
                if self.nodes[j].ws & node.ws != 0 {
                    before[k] |= 1 << j;
                }
            }
        }
        before
    }

    /// The same summary with its nodes in `order` (which must keep [`Summary::before`]).
    pub fn in_order(&self, order: &Order) -> Summary<T> {
        assert_eq!(order.len, self.nodes.len(), "an order of every node");
        let mut out = self.clone();
        for (new, &old) in order.order[..order.len].iter().enumerate() {
            let x = &self.nodes[usize::from(old)];
            out.nodes[new] = Node {
                preds: remap(x.preds, &order.newpos),
                a1: remap(x.a1, &order.newpos),
                ..x.clone()
            };
        }
        for p in out.pending.iter_mut().flatten() {
            p.preds = remap(p.preds, &order.newpos);
        }
        out
    }

    /// Calls `visit` with every candidate canonical order (module docs): one when no ready
    /// nodes tie, which is the common case.
    pub fn canonical_orders(&self, visit: &mut dyn FnMut(&Order)) {
        let n = self.nodes.len();
        if n < 2 {
            visit(&Order::identity(n));
            return;
        }
        let mut search = Search {
            s: self,
            before: self.before(),
            refs: None,
            at: Order::identity(n),
            placed: 0,
            visited: 0,
        };
        search.place(0, visit);
    }
}

impl<T: Clone + Ord> Search<'_, T> {
    /// The contents a ready node is ranked by (its edges point at placed nodes only).
    #[allow(clippy::type_complexity)]
    fn key(&self, k: usize) -> (u8, u32, bool, bool, bool, u16, u16, &T) {
        let x = &self.s.nodes[k];
        let newpos = &self.at.newpos;
        (
            x.ws,
            x.wv,
            x.dead_pred,
            x.a2,
            x.a6,
            remap(x.preds, newpos),
            remap(x.a1, newpos),
            &x.tag,
        )
    }

    fn referrers(&self) -> Referrers {
        let (s, n) = (self.s, self.s.nodes.len());
        let mut refs: Referrers = ([0; NODES_MAX], [0; NODES_MAX], [0; NODES_MAX]);
        for (z, node) in s.nodes.iter().enumerate() {
            for x in (0..n).filter(|&x| node.preds & (1 << x) != 0) {
                refs.0[x] |= 1 << z;
            }
            for x in (0..n).filter(|&x| node.a1 & (1 << x) != 0) {
                refs.1[x] |= 1 << z;
            }
        }
        for (slot, p) in s.pending.iter().enumerate() {
            let Some(p) = p else { continue };
            for x in (0..n).filter(|&x| p.preds & (1 << x) != 0) {
                refs.2[x] |= 1 << slot;
            }
        }
        refs
    }

    fn twins(&mut self, x: usize, y: usize) -> bool {
        if self.refs.is_none() {
            self.refs = Some(self.referrers());
        }
        let r = self.refs.expect("just computed");
        r.0[x] == r.0[y] && r.1[x] == r.1[y] && r.2[x] == r.2[y]
    }

    fn place(&mut self, slot: usize, visit: &mut dyn FnMut(&Order)) {
        let n = self.s.nodes.len();
        if slot == n {
            self.visited += 1;
            assert!(
                self.visited <= CANDIDATES_MAX,
                "more than {CANDIDATES_MAX} canonical candidates"
            );
            visit(&self.at);
            return;
        }
        let (placed, before) = (self.placed, &self.before);
        let ready = (0..n).filter(|&k| placed & (1 << k) == 0 && before[k] & !placed == 0);
        let mut ties = 0u16;
        let mut best = None;
        for k in ready {
            let key = self.key(k);
            match best.as_ref().map(|b| key.cmp(b)) {
                Some(std::cmp::Ordering::Greater) => {}
                Some(std::cmp::Ordering::Equal) => ties |= 1 << k,
                _ => (best, ties) = (Some(key), 1 << k),
            }
        }
        assert_ne!(ties, 0, "commit order is acyclic");
        let mut tried = 0u16;
        for k in (0..n).filter(|&k| ties & (1 << k) != 0) {
            if tried != 0 && (0..n).any(|j| tried & (1 << j) != 0 && self.twins(j, k)) {
                continue;
            }
            tried |= 1 << k;
            (self.at.order[slot], self.at.newpos[k]) = (k as u8, slot as u8);
            self.placed |= 1 << k;
            self.place(slot + 1, visit);
            self.placed &= !(1 << k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::summary::PendingSummary;

    fn node(preds: u16) -> Node<()> {
        Node {
            tag: (),
            ws: 0,
            wv: 0,
            preds,
            dead_pred: false,
            a1: 0,
            a2: false,
            a6: false,
        }
    }

    fn candidates(s: &Summary<()>) -> Vec<Order> {
        let mut out = Vec::new();
        s.canonical_orders(&mut |o| out.push(*o));
        out
    }

    /// Two read-only dependants of one root, one of them also the pred of an op in flight:
    /// they tie and are not twins, so both orders are candidates; without the op they are
    /// twins and one candidate is enough.
    #[test]
    fn ties_branch_unless_twins() {
        let mut s = Summary::<()>::new(1);
        s.nodes = vec![node(0), node(1), node(1)];
        let twins = candidates(&s);
        assert_eq!(twins.len(), 1, "{twins:?}");
        s.pending[0] = Some(PendingSummary {
            preds: 0b101,
            ..PendingSummary::default()
        });
        let both = candidates(&s);
        assert_eq!(both.len(), 2, "{both:?}");
        for o in &both {
            assert_eq!(o.order[0], 0, "the root first");
        }
        assert_ne!(both[0].order[..3], both[1].order[..3]);
    }

    /// Every candidate keeps the edges, and reordering by a candidate then recomputing gives
    /// the reordered summary back among its own candidates' images.
    #[test]
    fn candidates_keep_the_edges() {
        let mut s = Summary::<()>::new(2);
        s.nodes = vec![node(0), node(0), node(0b01), node(0b10), node(0b11)];
        s.nodes[1].ws = 1;
        s.nodes[0].ws = 1;
        s.pending[1] = Some(PendingSummary {
            preds: 0b1000,
            ..PendingSummary::default()
        });
        let before = s.before();
        for o in candidates(&s) {
            for (new, &old) in o.order[..o.len].iter().enumerate() {
                let need = before[usize::from(old)];
                let earlier = o.order[..new].iter().fold(0u16, |m, &k| m | 1 << k);
                assert_eq!(need & !earlier, 0, "{o:?}");
            }
        }
        let images = |t: &Summary<()>| {
            let mut v: Vec<_> = candidates(t).iter().map(|o| t.in_order(o)).collect();
            v.sort();
            v
        };
        let swapped = s.in_order(&Order::from_old(&[0, 1, 3, 2, 4]));
        assert_eq!(images(&s)[0], images(&swapped)[0]);
    }
}
