//! `sequencer` (SPEC §5.1; with `causal` it is `saga`, L3): the commit-order sequencer. An
//! op's effects complete in the outside world in any order, but effect k is externalized (made
//! visible) only once effects 0..k−1 have been, so the externalization order `co` equals the
//! issue order `io`; an op aborted at commit has its completed effects compensated in reverse
//! issue order ([`Externalization::compensation`]). It targets A6.
//!
//! [`Sequencer`] is the state machine that does it, fed one completion at a time; each
//! completion releases the longest completed prefix not yet released. Invariant asserted on
//! every release: the effect released is exactly the next in issue order and every earlier one
//! was released before it. [`Sequence`] is the mechanism: its externalization rule runs the
//! state machine on each commit's completion order ([`Externalization::order_cow`]).
//!
//! Retraction: a retracted op (and its cascade) has its effects undone by the caller from
//! [`compensation_plan`] over the log: later records first, each record's effects in reverse
//! issue order. As SPEC §1 (and the TLA twin) has it, the store keeps the retracted values in
//! memory; compensating them, in memory and in the outside world, is the caller's, from that
//! plan (a compensation is then an ordinary op the caller commits). Cost: a delay (an effect
//! that completes early waits for its predecessors), and compensations; never an abort.

use super::catalogue::{ActsAt, Mechanism, Spec};
use super::{Externalization, Runtime, Stack, Store};
use crate::anomaly::Anomaly;
use crate::names::{Cell, Value};
use crate::record::OpRecord;

/// `sequencer`, as data.
pub const SPEC: Spec = Spec {
    name: "sequencer",
    acts_at: &[ActsAt::Externalization],
    targets: Anomaly::A6,
    provenance: false,
    needs: &[],
    excludes: &[],
    summary: "externalize effect k only after effects 0..k-1 (co = io); compensate an \
              aborted op's completed effects in reverse issue order",
};

/// The `sequencer` mechanism.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Sequence;

impl Runtime for Sequence {
    fn stack(&self) -> Stack {
        Stack::of(&[Mechanism::Sequencer])
    }

    fn externalization(&self) -> Externalization {
        Externalization::Sequenced
    }

    /// Every record from `from` on externalized its effects in issue order.
    fn check(&self, store: &Store, from: usize) {
        for r in store.log().iter().skip(from) {
            assert_eq!(r.co, r.io, "a sequenced record's effects left issue order");
        }
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

/// Releases completed effects in issue order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Sequencer {
    completed: Vec<bool>,
    released: Vec<usize>,
}

impl Sequencer {
    /// A sequencer for `n` issued effects, none completed.
    pub fn new(n: usize) -> Self {
        Self {
            completed: vec![false; n],
            released: Vec::with_capacity(n),
        }
    }

    /// Effect `k` (an index into issue order) completed; returns the effects this makes
    /// visible, in the order they become visible (possibly none).
    pub fn complete(&mut self, k: usize) -> Vec<usize> {
        assert!(k < self.completed.len(), "effect index out of range");
        assert!(!self.completed[k], "an effect completes at most once");
        self.completed[k] = true;
        let mut out = Vec::new();
        while let Some(&true) = self.completed.get(self.released.len()) {
            let next = self.released.len();
            assert!(
                self.released.iter().enumerate().all(|(i, &e)| i == e),
                "effect released before its predecessors"
            );
            assert!(
                self.completed[..=next].iter().all(|&c| c),
                "releasing an effect whose predecessors have not completed"
            );
            self.released.push(next);
            out.push(next);
        }
        out
    }

    /// The effects externalized so far, in externalization order.
    pub fn released(&self) -> &[usize] {
        &self.released
    }

    /// Whether every effect has been externalized.
    pub fn is_done(&self) -> bool {
        self.released.len() == self.completed.len()
    }

    /// The externalization order for a whole completion order (a permutation of issue
    /// indices): always `0..n`, which the asserts inside [`Sequencer::complete`] guarantee.
    pub fn run(completion: &[usize]) -> Vec<usize> {
        let mut s = Sequencer::new(completion.len());
        for &k in completion {
            s.complete(k);
        }
        assert!(
            s.is_done(),
            "completion must be a permutation of the issued effects"
        );
        s.released
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Agent;
    use crate::record::Registry;
    use crate::runtime::{
        BeginRequest, CommitOutcome, CommitRequest, Guarded, Options, RuntimeKind,
    };

    fn saga() -> Guarded<Stack> {
        Guarded::with(
            RuntimeKind::Saga.stack(),
            Registry::all(0),
            Options::default(),
        )
    }

    #[test]
    fn out_of_order_completion_is_externalized_in_issue_order() {
        let mut rt = Guarded::with(Sequence, Registry::all(0), Options::default());
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
        let mut rt = saga();
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
        let mut rt = saga();
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

    #[test]
    fn releases_the_completed_prefix() {
        let mut s = Sequencer::new(3);
        assert_eq!(s.complete(2), Vec::<usize>::new());
        assert_eq!(s.complete(0), [0]);
        assert_eq!(s.complete(1), [1, 2]);
        assert!(s.is_done());
    }

    #[test]
    #[should_panic(expected = "at most once")]
    fn double_completion_is_caught() {
        let mut s = Sequencer::new(2);
        s.complete(1);
        s.complete(1);
    }
}
