//! Registry-snapshot isolation for the planned tool (SPEC §5.1; on top of `saga` it is
//! `registry-validate` / `registry-pin`, L4), in two mechanisms that exclude each other. Both
//! target A2.
//!
//! * `validate-tool` — commit: the op aborts (reason `ToolChanged`; compensated if the stack
//!   sequences its effects) when its planned tool's entry differs from the read-time one: the
//!   tool left the registry or its signature version changed. The record's `write_registry`
//!   is the live registry. (As a mechanism it is not called `registry-validate`: that name is
//!   the named runtime, saga + validate-tool, which outputs have always printed.)
//! * `pin` — commit: the call is resolved against the read-time snapshot, which the runtime
//!   keeps callable. Precisely: the record's `write_registry` is its `read_registry`, the whole
//!   read-time snapshot (tools and signature versions), i.e. the registry the call was
//!   actually resolved against, whatever the live registry became meanwhile. So A2 cannot
//!   occur. This is also the TLA twin's choice (`Pin` writes `read_registry`), which keeps
//!   the checker's state counts comparable with TLC's.
//!
//! Cost: `validate-tool` aborts; `pin` keeps retired tool versions alive until their pinned
//! ops finish. Invariants asserted on every new record: a pinned record's write registry is
//! its read registry; a validated live record's planned tool is live at its read version.

use super::catalogue::{ActsAt, Mechanism, Spec};
use super::{AbortReason, CommitRequest, Pending, Runtime, Stack, Store};
use crate::anomaly::Anomaly;
use crate::record::Registry;

const PIN_WHY: &str = "pin resolves the call against the read-time registry, so no change of \
                       the live one can make it phantom; validate-tool would abort the calls \
                       pin keeps callable: choose one";

/// `pin`, as data.
pub const SPEC_PIN: Spec = Spec {
    name: "pin",
    acts_at: &[ActsAt::Commit],
    targets: Anomaly::A2,
    provenance: false,
    needs: &[],
    excludes: &[(Mechanism::ValidateTool, PIN_WHY)],
    summary: "resolve the planned call against the read-time registry snapshot",
};

/// `validate-tool`, as data.
pub const SPEC_VALIDATE: Spec = Spec {
    name: "validate-tool",
    acts_at: &[ActsAt::Commit],
    targets: Anomaly::A2,
    provenance: false,
    needs: &[],
    excludes: &[(Mechanism::Pin, PIN_WHY)],
    summary: "abort a commit whose planned tool left the registry or changed its signature",
};

/// `pin`: the call resolves against the read-time snapshot.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Pin;

/// `validate-tool`: the planned tool's entry must be unchanged since the read.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct ValidateTool;

impl Runtime for Pin {
    fn stack(&self) -> Stack {
        Stack::of(&[Mechanism::Pin])
    }

    fn resolve<'a>(&self, op: &'a Pending) -> Option<&'a Registry> {
        Some(&op.snapshot.registry)
    }

    fn check(&self, store: &Store, from: usize) {
        for r in store.log().iter().skip(from) {
            assert_eq!(
                r.write_registry, r.read_registry,
                "a pinned call was re-resolved"
            );
        }
    }
}

impl Runtime for ValidateTool {
    fn stack(&self) -> Stack {
        Stack::of(&[Mechanism::ValidateTool])
    }

    /// A planned tool that is not live at commit cannot be dispatched, even if it was absent
    /// at read time too (the TLA twin's `ToolChanged`: `t ∉ registry ∨ version changed`).
    fn verdict(&self, store: &Store, op: &Pending, _req: &CommitRequest) -> Option<AbortReason> {
        let tool = op.request.planned_tool?;
        let seen = op.snapshot.registry.get(tool);
        let now = store.registry().get(tool);
        (now.is_none() || seen != now).then_some(AbortReason::ToolChanged { tool })
    }

    fn check(&self, store: &Store, from: usize) {
        for r in store.log().iter().skip(from).filter(|r| !r.aborted) {
            if let Some(tool) = r.planned_tool {
                let now = r.write_registry.get(tool);
                assert!(now.is_some(), "a live record called a tool that had left");
                assert_eq!(
                    now,
                    r.read_registry.get(tool),
                    "a live record called a changed tool"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{Agent, Cell, Tool, Value};
    use crate::runtime::{
        BeginRequest, CommitOutcome, Discipline, Guarded, Options, RegistryChange, RuntimeKind,
    };

    fn run(discipline: Discipline, change: RegistryChange) -> (CommitOutcome, Guarded<Stack>) {
        let stack = RuntimeKind::Registry(discipline).stack();
        let mut rt = Guarded::with(stack, Registry::all(2), Options::default());
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
        let live = rt.store().registry();
        assert_eq!(live.get(Tool(1)).map(|e| e.version), Some(1));
        let (_, rt) = run(Discipline::Pin, RegistryChange::Remove(Tool(1)));
        assert_eq!(rt.log()[0].write_registry, Registry::all(2));
        assert!(!rt.store().registry().contains(Tool(1)));
    }

    /// Alone, without the sequencer, an abort compensates nothing.
    #[test]
    fn validate_tool_alone_aborts_without_compensation() {
        let mut rt = Guarded::with(ValidateTool, Registry::all(1), Options::default());
        rt.begin(&BeginRequest::new(Agent(0), vec![], Some(Tool(0))));
        rt.change_registry(RegistryChange::Remove(Tool(0)));
        let out = rt.commit(&CommitRequest::new(Agent(0), &[(Cell(0), Value(1))]));
        let CommitOutcome::Aborted { compensate, .. } = out else {
            panic!("a removed tool cannot be called");
        };
        assert!(compensate.is_empty());
    }
}
