//! `saga` (L3, SPEC §5): `causal` plus the commit-order [`Sequencer`] (so `co = io`, ¬A6) and
//! compensation: when an op aborts at commit, its completed effects are undone in reverse
//! issue order, returned as [`CommitOutcome::Aborted`]'s `compensate`. At commit every issued
//! effect has completed (the request's completion order is a permutation of them), so the
//! whole issue order is compensated.
//!
//! Retraction: [`Runtime::retract`] keeps the trait's shape and returns the aborted indices
//! (the retracted op and its cascade). The effects to undo for them are
//! [`compensation_plan`] of those indices over the log: later records first, each record's
//! effects in reverse issue order. As SPEC §1 (and the TLA twin) has it, the store keeps the
//! retracted values in memory; compensating them, in memory and in the outside world, is the
//! caller's, from that plan (a compensation is then an ordinary op the caller commits).
//! Cost: delayed externalization, and compensations. A pass does not prove ¬A2.

use super::{
    AbortReason, BeginRequest, Causal, CommitOutcome, CommitRequest, Externalization, Options,
    RegistryChange, Runtime, Sequencer, Store,
};
use crate::names::{Agent, Cell, Value};
use crate::record::{OpRecord, Registry};

/// Causal + sequenced externalization + compensation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Saga {
    causal: Causal,
}

impl Saga {
    /// An empty store over `registry`; provenance forced on, cascading aborts on.
    pub fn new(registry: Registry, opts: Options) -> Self {
        Self {
            causal: Causal::new(registry, opts, true),
        }
    }

    /// The causal layer underneath.
    pub fn causal(&self) -> &Causal {
        &self.causal
    }

    /// The causal commit rule (fresh reads, live preds).
    pub(crate) fn check(&self, agent: Agent) -> Option<AbortReason> {
        self.causal.check(agent)
    }

    /// Sequences the effects and appends the record under `verdict`, compensating on abort.
    pub(crate) fn settle(
        &mut self,
        req: &CommitRequest,
        write_registry: Registry,
        verdict: Option<AbortReason>,
    ) -> CommitOutcome {
        let co = Sequencer::run(&req.completion);
        assert_eq!(co, Externalization::Sequenced.order(&req.completion));
        let compensate = if verdict.is_some() {
            req.issue
                .iter()
                .rev()
                .map(|&c| (c, req.write_values.get(c)))
                .collect()
        } else {
            Vec::new()
        };
        self.causal
            .settle(req, &co, write_registry, verdict, compensate)
    }
}

/// The compensations for retracted or cascaded records `aborted`: later records first, each
/// record's effects `(index, cell, value written)` in reverse issue order.
pub fn compensation_plan(log: &[OpRecord], aborted: &[usize]) -> Vec<(usize, Cell, Value)> {
    let mut order = aborted.to_vec();
    order.sort_unstable_by(|a, b| b.cmp(a));
    order.dedup();
    order
        .into_iter()
        .flat_map(|k| log[k].io.iter().rev().map(move |&(c, v)| (k, c, v)))
        .collect()
}

impl Runtime for Saga {
    fn name(&self) -> &'static str {
        "saga"
    }

    fn start(&mut self, req: &BeginRequest) -> Result<(), super::DropReason> {
        self.causal.start(req)
    }

    fn commit(&mut self, req: &CommitRequest) -> CommitOutcome {
        let verdict = self.check(req.agent);
        let registry = self.store().registry.clone();
        self.settle(req, registry, verdict)
    }

    fn abandon(&mut self, agent: Agent) {
        self.causal.abandon(agent);
    }

    fn retract(&mut self, index: usize) -> Vec<usize> {
        self.causal.retract(index)
    }

    fn change_registry(&mut self, change: RegistryChange) {
        self.causal.change_registry(change);
    }

    fn externalization(&self) -> Externalization {
        Externalization::Sequenced
    }

    fn store(&self) -> &Store {
        self.causal.store()
    }

    fn reserve(&mut self, records: usize) {
        self.causal.reserve(records);
    }

    fn into_store(self) -> Store {
        self.causal.into_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_completion_is_externalized_in_issue_order() {
        let mut rt = Saga::new(Registry::all(0), Options::default());
        rt.begin(&BeginRequest::new(Agent(0), vec![], None));
        let writes = [
            (Cell(0), Value(1)),
            (Cell(1), Value(2)),
            (Cell(2), Value(1)),
        ];
        let req = CommitRequest::new(Agent(0), &writes).completing(vec![2, 0, 1]);
        assert!(matches!(rt.commit(&req), CommitOutcome::Committed { .. }));
        assert_eq!(rt.log()[0].co, rt.log()[0].io);
        assert_eq!(rt.log()[0].io, writes);
    }

    #[test]
    fn abort_compensates_in_reverse_issue_order() {
        let mut rt = Saga::new(Registry::all(0), Options::default());
        rt.begin(&BeginRequest::new(Agent(0), vec![Cell(0)], None));
        rt.begin(&BeginRequest::new(Agent(1), vec![], None));
        rt.commit(&CommitRequest::new(Agent(1), &[(Cell(0), Value(2))]));
        let writes = [(Cell(2), Value(1)), (Cell(1), Value(1))];
        let req = CommitRequest::new(Agent(0), &writes).completing(vec![1, 0]);
        let CommitOutcome::Aborted { compensate, .. } = rt.commit(&req) else {
            panic!("a stale op must abort");
        };
        assert_eq!(compensate, [(Cell(1), Value(1)), (Cell(2), Value(1))]);
    }

    #[test]
    fn retraction_plan_undoes_later_records_first() {
        let mut rt = Saga::new(Registry::all(0), Options::default());
        rt.begin(&BeginRequest::new(Agent(0), vec![], None));
        let root = [(Cell(0), Value(1)), (Cell(1), Value(1))];
        rt.commit(&CommitRequest::new(Agent(0), &root));
        rt.begin(&BeginRequest::new(Agent(1), vec![Cell(0)], None));
        rt.commit(&CommitRequest::new(Agent(1), &[(Cell(2), Value(2))]));
        let aborted = rt.retract(0);
        assert_eq!(aborted, [0, 1]);
        let plan = compensation_plan(rt.log(), &aborted);
        let want = [
            (1, Cell(2), Value(2)),
            (0, Cell(1), Value(1)),
            (0, Cell(0), Value(1)),
        ];
        assert_eq!(plan, want);
    }
}
