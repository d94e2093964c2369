//! `lock` (SPEC §5.1; alone it is `pessimistic`, L1): two-phase locking without waiting. At
//! begin an op try-locks every read cell; on any conflict it is **dropped** before generation
//! (no record, no tokens). At commit it must also lock its write cells outside the read set,
//! or it aborts. Its locks are released at commit, abort or abandon.
//!
//! The lock table is not kept apart: a cell is locked exactly when it is in the read set of
//! an op in flight (an op holds its read locks from its begin until it leaves flight, and the
//! commit-time locks on other cells are taken and released in the one atomic commit, so they
//! amount to "no other op holds them"). Keeping a table would only add state that could
//! disagree; the invariant asserted after every step is what the table would guarantee: at
//! most one holder per cell, i.e. no two ops in flight read a common cell.
//!
//! Why it targets A1: while a reader generates it holds every cell it read, so no other agent
//! can commit a write to them (a writer that read the cell was dropped at its begin; one that
//! did not read it fails its commit-time lock). Its cost is drops (and commit-time aborts)
//! under contention. A pass of the asserts does not prove ¬A1; the checker does that.

use super::catalogue::{ActsAt, Mechanism, Spec};
use super::{AbortReason, BeginRequest, CommitRequest, DropReason, Pending, Runtime, Stack, Store};
use crate::anomaly::Anomaly;
use crate::names::{Agent, Cell};
use std::collections::BTreeMap;

/// `lock`, as data.
pub const SPEC: Spec = Spec {
    name: "lock",
    acts_at: &[ActsAt::Begin, ActsAt::Commit, ActsAt::Abort],
    targets: Anomaly::A1,
    provenance: false,
    needs: &[],
    excludes: &[],
    summary: "try-lock the read set at begin (drop on conflict), lock the other write cells \
              at commit (abort on conflict), release at commit or abort",
};

/// Read-set locking that drops before generation.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Lock;

impl Lock {
    /// The agent, other than `agent`, whose op in flight holds `cell`, if any.
    pub fn holder(store: &Store, agent: Agent, cell: Cell) -> Option<Agent> {
        store
            .inflight()
            .iter()
            .find(|&(&a, p)| a != agent && p.request.read_set.binary_search(&cell).is_ok())
            .map(|(&a, _)| a)
    }

    /// The first of `cells` held by an agent other than `agent`.
    fn conflict(store: &Store, agent: Agent, cells: &[Cell]) -> Option<(Cell, Agent)> {
        cells
            .iter()
            .find_map(|&c| Lock::holder(store, agent, c).map(|h| (c, h)))
    }

    /// The lock table: cell → its holder.
    pub fn table(store: &Store) -> BTreeMap<Cell, Agent> {
        let mut table = BTreeMap::new();
        for (&a, p) in store.inflight() {
            for &c in &p.request.read_set {
                // At most one holder per cell (the invariant below).
                assert!(table.insert(c, a).is_none(), "a cell has two lock holders");
            }
        }
        table
    }
}

/// Whether two sorted sets share no element.
fn disjoint(a: &[Cell], b: &[Cell]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return false,
        }
    }
    true
}

impl Runtime for Lock {
    fn stack(&self) -> Stack {
        Stack::of(&[Mechanism::Lock])
    }

    fn admit(&self, store: &Store, req: &BeginRequest) -> Result<(), DropReason> {
        match Lock::conflict(store, req.agent, &req.read_set) {
            Some((cell, holder)) => Err(DropReason::LockConflict { cell, holder }),
            None => Ok(()),
        }
    }

    fn verdict(&self, store: &Store, op: &Pending, req: &CommitRequest) -> Option<AbortReason> {
        let read_set = &op.request.read_set;
        req.issue
            .iter()
            .filter(|c| read_set.binary_search(c).is_err())
            .find_map(|&c| Lock::holder(store, req.agent, c).map(|h| (c, h)))
            .map(|(cell, holder)| AbortReason::LockConflict { cell, holder })
    }

    /// At most one holder per cell: no two ops in flight read a common cell (checked pairwise
    /// on the sorted read sets, so a step allocates nothing for it).
    fn check(&self, store: &Store, _from: usize) {
        let inflight = store.inflight();
        for (i, (_, a)) in inflight.iter().enumerate() {
            for (_, b) in inflight.iter().skip(i + 1) {
                assert!(
                    disjoint(&a.request.read_set, &b.request.read_set),
                    "a cell has two lock holders"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Value;
    use crate::record::Registry;
    use crate::runtime::{BeginOutcome, CommitOutcome, Guarded, Options};

    fn rt() -> Guarded<Lock> {
        Guarded::with(Lock, Registry::all(1), Options::default())
    }

    #[test]
    fn disjointness_of_sorted_sets() {
        let c = |v: &[u32]| v.iter().map(|&x| Cell(x)).collect::<Vec<_>>();
        assert!(disjoint(&c(&[0, 2]), &c(&[1, 3])));
        assert!(!disjoint(&c(&[0, 2]), &c(&[2])));
        assert!(!disjoint(&c(&[1, 3]), &c(&[0, 3])));
        assert!(disjoint(&c(&[]), &c(&[0])));
    }

    #[test]
    fn second_reader_of_a_locked_cell_is_dropped() {
        let mut rt = rt();
        let r = |a| BeginRequest::new(Agent(a), vec![Cell(0)], None);
        assert!(matches!(rt.begin(&r(0)), BeginOutcome::Begun(_)));
        assert_eq!(
            rt.begin(&r(1)),
            BeginOutcome::Dropped(DropReason::LockConflict {
                cell: Cell(0),
                holder: Agent(0)
            })
        );
        assert!(rt.log().is_empty());
        assert_eq!(Lock::table(rt.store()).len(), 1);
        rt.abandon(Agent(0));
        assert!(Lock::table(rt.store()).is_empty());
        assert!(matches!(rt.begin(&r(1)), BeginOutcome::Begun(_)));
    }

    #[test]
    fn blind_write_to_a_locked_cell_aborts_and_releases() {
        let mut rt = rt();
        rt.begin(&BeginRequest::new(Agent(0), vec![Cell(0)], None));
        rt.begin(&BeginRequest::new(Agent(1), vec![], None));
        let out = rt.commit(&CommitRequest::new(Agent(1), &[(Cell(0), Value(1))]));
        assert!(matches!(
            out,
            CommitOutcome::Aborted {
                reason: AbortReason::LockConflict { .. },
                ..
            }
        ));
        assert!(rt.log()[0].aborted);
        assert_eq!(rt.store().value(Cell(0)), Value::NULL);
        let out = rt.commit(&CommitRequest::new(Agent(0), &[(Cell(0), Value(2))]));
        assert!(matches!(out, CommitOutcome::Committed { index: 1, .. }));
        assert!(Lock::table(rt.store()).is_empty());
    }
}
