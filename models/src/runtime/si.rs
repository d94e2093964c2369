//! `si` (the paper's default snapshot isolation, SPEC §5): reads see the snapshot at
//! `read_time`; at commit, **if the write set is non-empty**, the op aborts when any read cell
//! has a committed version newer than its read time (first committer wins). Read-only commits
//! skip validation.
//!
//! That skip is exactly why `si` admits A1: a read-only op that read a cell another agent has
//! since rewritten commits anyway (the paper's 3 % triage gap). Its ¬A1 holds only under the
//! all-writers hypothesis (every op writes what it reads). Cost: aborts of stale writers.

use super::{
    BeginRequest, CommitOutcome, CommitRequest, Externalization, Occ, Options, RegistryChange,
    Runtime, Store,
};
use crate::names::Agent;
use crate::record::Registry;

/// Snapshot isolation with read-only commits unvalidated.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Si {
    occ: Occ,
}

impl Si {
    /// An empty store over `registry`.
    pub fn new(registry: Registry, opts: Options) -> Self {
        Self {
            occ: Occ::new(registry, opts),
        }
    }

    /// The multi-version core (store and versions).
    pub fn occ(&self) -> &Occ {
        &self.occ
    }
}

impl Runtime for Si {
    fn name(&self) -> &'static str {
        "si"
    }

    fn start(&mut self, req: &BeginRequest) -> Result<(), super::DropReason> {
        self.occ.start(req)
    }

    fn commit(&mut self, req: &CommitRequest) -> CommitOutcome {
        let verdict = if req.issue.is_empty() {
            None
        } else {
            self.occ.stale_read(req.agent)
        };
        let co = self.externalization().order_cow(&req.completion);
        let registry = self.occ.store.registry.clone();
        self.occ.settle(req, &co, registry, verdict, Vec::new())
    }

    fn abandon(&mut self, agent: Agent) {
        self.occ.store.abandon(agent);
    }

    /// Flags the record only, as vanilla does.
    fn retract(&mut self, index: usize) -> Vec<usize> {
        if self.occ.store.retract_one(index) {
            vec![index]
        } else {
            Vec::new()
        }
    }

    fn change_registry(&mut self, change: RegistryChange) {
        self.occ.store.change_registry(change);
    }

    fn externalization(&self) -> Externalization {
        Externalization::Immediate
    }

    fn store(&self) -> &Store {
        &self.occ.store
    }

    fn reserve(&mut self, records: usize) {
        self.occ.store.reserve(records);
    }

    fn into_store(self) -> Store {
        self.occ.store
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{Cell, Value};
    use crate::runtime::AbortReason;

    #[test]
    fn read_only_commit_skips_validation_but_a_writer_aborts() {
        let mut rt = Si::new(Registry::all(0), Options::default());
        let (a, b, w) = (Agent(0), Agent(1), Agent(2));
        rt.begin(&BeginRequest::new(a, vec![Cell(0)], None));
        rt.begin(&BeginRequest::new(b, vec![Cell(0)], None));
        rt.begin(&BeginRequest::new(w, vec![], None));
        rt.commit(&CommitRequest::new(w, &[(Cell(0), Value(1))]));
        let ro = rt.commit(&CommitRequest::new(a, &[]));
        assert!(matches!(ro, CommitOutcome::Committed { index: 1, .. }));
        let wr = rt.commit(&CommitRequest::new(b, &[(Cell(1), Value(2))]));
        assert_eq!(
            wr,
            CommitOutcome::Aborted {
                index: 2,
                reason: AbortReason::StaleRead {
                    cell: Cell(0),
                    writer: 0
                },
                compensate: Vec::new()
            }
        );
        assert_eq!(rt.store().value(Cell(1)), Value::NULL);
        assert_eq!(rt.occ().versions.of(Cell(1)), &[]);
    }
}
