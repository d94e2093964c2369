//! `pessimistic` (L1, SPEC §5): two-phase locking without waiting. At begin the op try-locks
//! every read cell; on any conflict it is **dropped** before generation (no record, no tokens).
//! At commit it must also lock its write cells outside the read set, or it aborts. Its locks
//! are released at commit, abort or abandon.
//!
//! Why it prevents A1: while a reader generates it holds every cell it read, so no other
//! agent can commit a write to them (a writer that read the cell was dropped at its begin; one
//! that did not read it fails its commit-time lock). The invariant asserted after every step:
//! at most one holder per cell, every holder has an op in flight and holds exactly its read
//! set. Its cost is drops (and commit-time aborts) under contention. A pass of the asserts
//! does not prove ¬A1; the property tests and the checker do that.

use super::{
    AbortReason, BeginRequest, CommitOutcome, CommitRequest, DropReason, Externalization, Options,
    RegistryChange, Runtime, Store,
};
use crate::names::{Agent, Cell};
use crate::record::Registry;
use std::collections::BTreeMap;

/// Non-blocking lock-based runtime.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Pessimistic {
    store: Store,
    /// Lock table: cell → its single holder.
    locks: BTreeMap<Cell, Agent>,
}

impl Pessimistic {
    /// An empty store over `registry`.
    pub fn new(registry: Registry, opts: Options) -> Self {
        Self {
            store: Store::with_options(registry, opts),
            locks: BTreeMap::new(),
        }
    }

    /// The current lock table (cell → holder).
    pub fn locks(&self) -> &BTreeMap<Cell, Agent> {
        &self.locks
    }

    fn release(&mut self, agent: Agent) {
        self.locks.retain(|_, holder| *holder != agent);
    }

    /// The first cell of `cells` held by an agent other than `agent`.
    fn conflict(&self, agent: Agent, cells: &[Cell]) -> Option<(Cell, Agent)> {
        cells.iter().find_map(|&c| match self.locks.get(&c) {
            Some(&holder) if holder != agent => Some((c, holder)),
            _ => None,
        })
    }

    /// Every lock is held by an agent with an op in flight, on a cell of its read set, and
    /// every in-flight op holds its whole read set.
    fn check_invariants(&self) {
        for (&cell, holder) in &self.locks {
            let pending = self.store.inflight.get(holder);
            assert!(pending.is_some(), "a lock holder has no op in flight");
            let read_set = pending.map_or(&[][..], |p| &p.request.read_set[..]);
            assert!(read_set.contains(&cell), "a lock outside the read set");
        }
        for (agent, p) in &self.store.inflight {
            for cell in &p.request.read_set {
                assert_eq!(self.locks.get(cell), Some(agent), "a read cell not locked");
            }
        }
    }
}

impl Runtime for Pessimistic {
    fn name(&self) -> &'static str {
        "pessimistic"
    }

    fn start(&mut self, req: &BeginRequest) -> Result<(), DropReason> {
        assert!(
            !self.store.inflight.contains_key(&req.agent),
            "agent already has an op in flight"
        );
        if let Some((cell, holder)) = self.conflict(req.agent, &req.read_set) {
            return Err(DropReason::LockConflict { cell, holder });
        }
        for &c in &req.read_set {
            // At most one holder per cell: the cell was free (checked just above).
            assert!(self.locks.insert(c, req.agent).is_none(), "double lock");
        }
        let snapshot = self.store.read(req);
        self.store.start(req, snapshot);
        self.check_invariants();
        Ok(())
    }

    fn commit(&mut self, req: &CommitRequest) -> CommitOutcome {
        let read_set = &self.store.pending(req.agent).request.read_set;
        let extra: Vec<Cell> = req
            .issue
            .iter()
            .copied()
            .filter(|c| !read_set.contains(c))
            .collect();
        // Commit is atomic, so locking the extra write cells and releasing them at once
        // amounts to requiring that no other agent holds them.
        let verdict = self
            .conflict(req.agent, &extra)
            .map(|(cell, holder)| AbortReason::LockConflict { cell, holder });
        self.release(req.agent);
        let co = self.externalization().order_cow(&req.completion);
        let registry = self.store.registry.clone();
        let index = self.store.append(req, &co, registry, verdict.is_some());
        self.check_invariants();
        match verdict {
            None => CommitOutcome::Committed {
                index,
                write_time: self.store.log[index].write_time,
            },
            Some(reason) => CommitOutcome::Aborted {
                index,
                reason,
                compensate: Vec::new(),
            },
        }
    }

    fn abandon(&mut self, agent: Agent) {
        self.release(agent);
        self.store.abandon(agent);
        self.check_invariants();
    }

    /// Flags the record only, as vanilla does.
    fn retract(&mut self, index: usize) -> Vec<usize> {
        if self.store.retract_one(index) {
            vec![index]
        } else {
            Vec::new()
        }
    }

    fn change_registry(&mut self, change: RegistryChange) {
        self.store.change_registry(change);
    }

    fn externalization(&self) -> Externalization {
        Externalization::Immediate
    }

    fn store(&self) -> &Store {
        &self.store
    }

    fn reserve(&mut self, records: usize) {
        self.store.reserve(records);
    }

    fn into_store(self) -> Store {
        self.store
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Value;
    use crate::runtime::BeginOutcome;

    fn rt() -> Pessimistic {
        Pessimistic::new(Registry::all(1), Options::default())
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
        rt.abandon(Agent(0));
        assert!(rt.locks().is_empty());
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
        assert!(rt.locks().is_empty());
    }
}
