//! `registry` (L4, SPEC §5): `saga` plus registry-snapshot isolation for the planned tool, in
//! one of two [`Discipline`]s.
//!
//! * `validate`: at commit, the op aborts (reason `ToolChanged`, with saga compensation) when
//!   its planned tool's entry differs from the read-time one: the tool left the registry or
//!   its signature version changed. The record's `write_registry` is the live registry.
//! * `pin`: the call is resolved against the read-time snapshot, which the runtime keeps
//!   callable. Precisely: the record's `write_registry` is its `read_registry`, the whole
//!   read-time snapshot (tools and signature versions), i.e. the registry the call was
//!   actually resolved against, whatever the live registry became meanwhile. So A2 cannot
//!   occur. This is also the TLA twin's choice (`Pin` writes `read_registry`), which keeps
//!   the checker's state counts comparable with TLC's.
//!
//! Cost: `validate` aborts (and compensates); `pin` keeps retired tool versions alive until
//! their pinned ops finish. A pass does not prove more than ¬A2 on top of saga's properties.

use super::{
    AbortReason, BeginRequest, CommitOutcome, CommitRequest, Discipline, Externalization, Options,
    Pending, RegistryChange, Runtime, Saga, Store,
};
use crate::names::Agent;
use crate::record::Registry;

/// Saga with registry-snapshot isolation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct RegistryIsolation {
    saga: Saga,
    discipline: Discipline,
}

impl RegistryIsolation {
    /// An empty store over `registry`; provenance forced on.
    pub fn new(registry: Registry, opts: Options, discipline: Discipline) -> Self {
        Self {
            saga: Saga::new(registry, opts),
            discipline,
        }
    }

    /// The discipline.
    pub fn discipline(&self) -> Discipline {
        self.discipline
    }

    /// The saga layer underneath.
    pub fn saga(&self) -> &Saga {
        &self.saga
    }

    /// `validate`: the planned tool's entry must be unchanged since the read.
    /// A planned tool that is not live at commit cannot be dispatched, even if it was absent
    /// at read time too (the TLA twin's `ToolChanged`: `t ∉ registry ∨ version changed`).
    fn tool_changed(&self, p: &Pending) -> Option<AbortReason> {
        let tool = p.request.planned_tool?;
        let seen = p.snapshot.registry.get(tool);
        let now = self.store().registry.get(tool);
        (now.is_none() || seen != now).then_some(AbortReason::ToolChanged { tool })
    }

    /// `pin`: the registry the call resolves against, the read-time snapshot.
    fn pinned(p: &Pending) -> Registry {
        p.snapshot.registry.clone()
    }
}

impl Runtime for RegistryIsolation {
    fn name(&self) -> &'static str {
        match self.discipline {
            Discipline::Validate => "registry-validate",
            Discipline::Pin => "registry-pin",
        }
    }

    fn start(&mut self, req: &BeginRequest) -> Result<(), super::DropReason> {
        self.saga.start(req)
    }

    fn commit(&mut self, req: &CommitRequest) -> CommitOutcome {
        let pending = self.store().pending(req.agent);
        let causal = self.saga.check(req.agent);
        let (verdict, registry) = match self.discipline {
            Discipline::Validate => (
                causal.or_else(|| self.tool_changed(pending)),
                self.store().registry.clone(),
            ),
            Discipline::Pin => (causal, Self::pinned(pending)),
        };
        self.saga.settle(req, registry, verdict)
    }

    fn abandon(&mut self, agent: Agent) {
        self.saga.abandon(agent);
    }

    fn retract(&mut self, index: usize) -> Vec<usize> {
        self.saga.retract(index)
    }

    fn change_registry(&mut self, change: RegistryChange) {
        self.saga.change_registry(change);
    }

    fn externalization(&self) -> Externalization {
        Externalization::Sequenced
    }

    fn store(&self) -> &Store {
        self.saga.store()
    }

    fn reserve(&mut self, records: usize) {
        self.saga.reserve(records);
    }

    fn into_store(self) -> Store {
        self.saga.into_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{Cell, Tool, Value};

    fn run(discipline: Discipline, change: RegistryChange) -> (CommitOutcome, RegistryIsolation) {
        let mut rt = RegistryIsolation::new(Registry::all(2), Options::default(), discipline);
        rt.begin(&BeginRequest::new(Agent(0), vec![], Some(Tool(1))));
        rt.change_registry(change);
        let out = rt.commit(&CommitRequest::new(Agent(0), &[(Cell(0), Value(1))]));
        (out, rt)
    }

    #[test]
    fn validate_aborts_on_a_signature_change_and_a_removal() {
        for change in [
            RegistryChange::ChangeSignature(Tool(1)),
            RegistryChange::Remove(Tool(1)),
        ] {
            let (out, rt) = run(Discipline::Validate, change);
            assert!(matches!(
                out,
                CommitOutcome::Aborted {
                    reason: AbortReason::ToolChanged { tool: Tool(1) },
                    ..
                }
            ));
            assert_eq!(rt.store().value(Cell(0)), Value::NULL);
        }
        let (out, _) = run(Discipline::Validate, RegistryChange::Remove(Tool(0)));
        assert!(matches!(out, CommitOutcome::Committed { .. }));
    }

    #[test]
    fn pin_resolves_against_the_read_snapshot() {
        let (out, rt) = run(Discipline::Pin, RegistryChange::ChangeSignature(Tool(1)));
        assert!(matches!(out, CommitOutcome::Committed { .. }));
        let r = &rt.log()[0];
        assert_eq!(r.write_registry.get(Tool(1)), r.read_registry.get(Tool(1)));
        assert_eq!(rt.store().registry.get(Tool(1)).map(|e| e.version), Some(1));
        let (_, rt) = run(Discipline::Pin, RegistryChange::Remove(Tool(1)));
        assert_eq!(rt.log()[0].write_registry, Registry::all(2));
        assert!(!rt.store().registry.contains(Tool(1)));
    }
}
