//! `vanilla` (L0): no control; every operation begins and commits, last writer wins.
//! Both deployed failure modes (deer-flow, LangGraph across supersteps) live here.

use super::{
    BeginRequest, CommitOutcome, CommitRequest, Externalization, Options, RegistryChange, Runtime,
    Store,
};
use crate::names::Agent;
use crate::record::Registry;

/// The uncontrolled runtime.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Vanilla {
    store: Store,
}

impl Vanilla {
    /// A vanilla runtime over an initial registry.
    pub fn new(registry: Registry) -> Self {
        Self::with_options(registry, Options::default())
    }

    /// A vanilla runtime with options (provenance on or off).
    pub fn with_options(registry: Registry, opts: Options) -> Self {
        Self {
            store: Store::with_options(registry, opts),
        }
    }
}

impl Runtime for Vanilla {
    fn name(&self) -> &'static str {
        "vanilla"
    }

    #[inline]
    fn start(&mut self, req: &BeginRequest) -> Result<(), super::DropReason> {
        let snapshot = self.store.read(req);
        self.store.start(req, snapshot);
        Ok(())
    }

    #[inline]
    fn commit(&mut self, req: &CommitRequest) -> CommitOutcome {
        let co = self.externalization().order_cow(&req.completion);
        let registry = self.store.registry.clone();
        let index = self.store.append(req, &co, registry, false);
        CommitOutcome::Committed {
            index,
            write_time: self.store.log[index].write_time,
        }
    }

    fn abandon(&mut self, agent: Agent) {
        self.store.abandon(agent);
    }

    /// Flags the record only: memory keeps its writes (SPEC §1's `Retract(i)`).
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

    #[inline]
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
    use crate::detect::spec;
    use crate::history::History;
    use crate::names::{Cell, Value};
    use crate::record::ValueMap;
    use crate::runtime::BeginOutcome;

    /// Edit-review under vanilla: the reviewer reads `doc`, the editor rewrites it while the
    /// reviewer generates, the reviewer commits: A1.
    #[test]
    fn edit_review_is_stale() {
        let (editor, reviewer, doc, review) = (Agent(0), Agent(1), Cell(0), Cell(1));
        let mut rt = Vanilla::new(Registry::all(0));
        let read = |a, c| BeginRequest::new(a, vec![c], None);
        let write = |a, c, v| CommitRequest {
            agent: a,
            issue: vec![c],
            write_values: ValueMap::from_pairs([(c, Value(v))]),
            completion: vec![0],
        };
        assert!(matches!(
            rt.begin(&read(reviewer, doc)),
            BeginOutcome::Begun(_)
        ));
        assert!(matches!(
            rt.begin(&read(editor, doc)),
            BeginOutcome::Begun(_)
        ));
        rt.commit(&write(editor, doc, 1));
        rt.commit(&write(reviewer, review, 2));
        let h = History::from_records(rt.log().to_vec());
        assert_eq!(spec::a1(&h.records).len(), 1);
    }
}
