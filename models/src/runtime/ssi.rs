//! `ssi` (L1, SPEC §5): as `si`, but **every** commit is validated, read-only ones included:
//! an op aborts when any cell it read has a committed version newer than its read time.
//!
//! Why it prevents A1: an A1 witness needs another agent's live write to a read cell strictly
//! inside the reader's window, i.e. a version newer than the reader's read time at the
//! reader's commit, which this check rejects. Cost: aborts (the caller may retry: re-read and
//! regenerate, paying the tokens again). A pass of its tests does not prove ¬A3 or ¬A6.

use super::{
    BeginRequest, CommitOutcome, CommitRequest, Externalization, Occ, Options, RegistryChange,
    Runtime, Store,
};
use crate::names::Agent;
use crate::record::Registry;

/// Serializable snapshot isolation (first committer wins on every commit).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Ssi {
    occ: Occ,
}

impl Ssi {
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

impl Runtime for Ssi {
    fn name(&self) -> &'static str {
        "ssi"
    }

    fn start(&mut self, req: &BeginRequest) -> Result<(), super::DropReason> {
        self.occ.start(req)
    }

    fn commit(&mut self, req: &CommitRequest) -> CommitOutcome {
        let verdict = self.occ.stale_read(req.agent);
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
    fn read_only_commit_is_validated() {
        let mut rt = Ssi::new(Registry::all(0), Options::default());
        let (a, w) = (Agent(0), Agent(1));
        rt.begin(&BeginRequest::new(a, vec![Cell(0)], None));
        rt.begin(&BeginRequest::new(w, vec![], None));
        rt.commit(&CommitRequest::new(w, &[(Cell(0), Value(1))]));
        let ro = rt.commit(&CommitRequest::new(a, &[]));
        assert!(matches!(
            ro,
            CommitOutcome::Aborted {
                reason: AbortReason::StaleRead { writer: 0, .. },
                ..
            }
        ));
        // A fresh read of the new version commits.
        rt.begin(&BeginRequest::new(a, vec![Cell(0)], None));
        let ok = rt.commit(&CommitRequest::new(a, &[]));
        assert!(matches!(ok, CommitOutcome::Committed { index: 2, .. }));
    }

    /// A newer version whose writer was retracted no longer conflicts (it is not live, and A1
    /// ignores it), as in the TLA twin's `StaleRead`.
    #[test]
    fn retracted_versions_do_not_conflict() {
        let mut rt = Ssi::new(Registry::all(0), Options::default());
        let (a, w) = (Agent(0), Agent(1));
        rt.begin(&BeginRequest::new(a, vec![Cell(0)], None));
        rt.begin(&BeginRequest::new(w, vec![], None));
        rt.commit(&CommitRequest::new(w, &[(Cell(0), Value(1))]));
        assert_eq!(rt.retract(0), [0]);
        assert_eq!(
            rt.store().value(Cell(0)),
            Value(1),
            "memory keeps retracted writes"
        );
        let out = rt.commit(&CommitRequest::new(a, &[(Cell(1), Value(2))]));
        assert!(matches!(out, CommitOutcome::Committed { index: 1, .. }));
    }
}
