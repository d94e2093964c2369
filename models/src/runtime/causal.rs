//! Causal control (SPEC §5.1), over provenance: every read records `preds` (the latest live
//! writer of each read cell and, transitively, its preds: [`Store::provenance`]), so both
//! mechanisms here make the stack turn provenance on.
//!
//! * `validate-preds` — commit: abort unless every pred is committed and not aborted.
//! * `cascade` — abort/retract: every live record whose preds contain an aborted one aborts
//!   too, transitively. It needs `validate-preds`: a cascade aborts the committed dependents
//!   only, and an op in flight that read from the aborted record would otherwise commit with
//!   a dead pred — exactly A3.
//!
//! Together (with `validate`: `causal`, L2) they target A3: no live record has a dead pred.
//! `validate-preds` alone is the `causal-no-cascade` twin (with `validate`): a retraction
//! aborts only its record, and its committed readers stay live (A3). As SPEC §1 says of
//! `Retract(i)` (and as the TLA twin does), retraction only flags records: memory keeps their
//! values (a withdrawn plan's effects are not undone by the store; the sequencer's
//! compensation plan says who undoes them). A later read of such a value gets no pred for it
//! (provenance skips aborted writers), so it shows only in A3's residue form, not in the
//! preds form targeted here. Invariant asserted with `cascade` after every commit and
//! cascade: no live record has a dead pred. Cost: aborts (dead preds) and the cascaded work.
//!
//! [`Store::provenance`]: super::Store::provenance

use super::catalogue::{ActsAt, Mechanism, Spec};
use super::{AbortReason, CommitRequest, Pending, Runtime, Stack, Store};
use crate::anomaly::Anomaly;

/// `validate-preds`, as data.
pub const SPEC_PREDS: Spec = Spec {
    name: "validate-preds",
    acts_at: &[ActsAt::Commit],
    targets: Anomaly::A3,
    provenance: true,
    needs: &[],
    excludes: &[],
    summary: "abort a commit with an aborted or retracted pred",
};

/// `cascade`, as data.
pub const SPEC_CASCADE: Spec = Spec {
    name: "cascade",
    acts_at: &[ActsAt::Abort],
    targets: Anomaly::A3,
    provenance: true,
    needs: &[(
        Mechanism::ValidatePreds,
        "a cascade aborts committed dependents only; an op in flight that read from the \
         aborted record would commit with a dead pred",
    )],
    excludes: &[],
    summary: "on an abort or retraction, abort every live record that depends on it",
};

/// `validate-preds`: commit only with live preds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct ValidatePreds;

/// `cascade`: aborting a record aborts its live dependents.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Cascade;

impl Runtime for ValidatePreds {
    fn stack(&self) -> Stack {
        Stack::of(&[Mechanism::ValidatePreds])
    }

    fn verdict(&self, store: &Store, op: &Pending, _req: &CommitRequest) -> Option<AbortReason> {
        let log = store.log();
        op.snapshot
            .preds
            .iter()
            .map(|&p| p as usize)
            .find(|&p| log[p].aborted)
            .map(|pred| AbortReason::DeadPred { pred })
    }
}

impl Runtime for Cascade {
    fn stack(&self) -> Stack {
        Stack::of(&[Mechanism::Cascade])
    }

    /// The live records after `root` with an aborted pred, counting those this cascade
    /// dooms as aborted. One forward pass suffices: preds point backwards.
    fn cascade(&self, store: &Store, root: usize) -> Vec<usize> {
        let log = store.log();
        assert!(log[root].aborted, "the root is flagged before it cascades");
        let mut doomed = Vec::new();
        for (k, r) in log.iter().enumerate().skip(root + 1) {
            let dead =
                |p: u32| log[p as usize].aborted || doomed.binary_search(&(p as usize)).is_ok();
            if !r.aborted && r.preds.iter().any(|&p| dead(p)) {
                doomed.push(k);
            }
        }
        doomed
    }

    /// No live record from `from` on has an aborted pred. Checked from the new record after
    /// a commit and from the root after a retraction (earlier records cannot depend on the
    /// root), so a long run costs linear, not quadratic, time.
    fn check(&self, store: &Store, from: usize) {
        let log = store.log();
        for r in log.iter().skip(from).filter(|r| !r.aborted) {
            for &p in &r.preds {
                assert!(!log[p as usize].aborted, "a live record has a dead pred");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{Agent, Cell, Value};
    use crate::record::Registry;
    use crate::runtime::{BeginRequest, CommitOutcome, Guarded, Options, RuntimeKind, Stack as S};

    fn chain(kind: RuntimeKind) -> Guarded<S> {
        // root writes c0; reader k reads c_k and writes c_{k+1}.
        let mut rt = Guarded::with(kind.stack(), Registry::all(0), Options::default());
        for k in 0..3u32 {
            let read = if k == 0 { vec![] } else { vec![Cell(k - 1)] };
            rt.begin(&BeginRequest::new(Agent(k), read, None));
            let out = rt.commit(&CommitRequest::new(Agent(k), &[(Cell(k), Value(1))]));
            assert!(matches!(out, CommitOutcome::Committed { .. }));
        }
        rt
    }

    const CAUSAL: RuntimeKind = RuntimeKind::Causal { cascade: true };
    const NO_CASCADE: RuntimeKind = RuntimeKind::Causal { cascade: false };

    #[test]
    fn preds_are_transitive() {
        let rt = chain(CAUSAL);
        let preds: Vec<_> = rt.log().iter().map(|r| r.preds.clone()).collect();
        assert_eq!(preds, [vec![], vec![0], vec![0, 1]]);
    }

    #[test]
    fn retraction_cascades_and_keeps_memory() {
        let mut rt = chain(CAUSAL);
        let memory = rt.store().memory().clone();
        assert_eq!(rt.retract(0), [0, 1, 2]);
        assert!(rt.log().iter().all(|r| r.aborted));
        assert_eq!(rt.store().memory(), &memory);
        assert_eq!(rt.retract(0), Vec::<usize>::new());
    }

    #[test]
    fn no_cascade_aborts_only_the_root() {
        let mut rt = chain(NO_CASCADE);
        assert_eq!(rt.retract(0), [0]);
        let aborted: Vec<_> = rt.log().iter().map(|r| r.aborted).collect();
        assert_eq!(aborted, [true, false, false]);
    }

    #[test]
    fn a_middle_retraction_cascades_forward_only() {
        let mut rt = chain(CAUSAL);
        assert_eq!(rt.retract(1), [1, 2]);
        assert!(!rt.log()[0].aborted);
    }

    #[test]
    fn inflight_reader_of_a_retracted_op_aborts_at_commit() {
        let mut rt = Guarded::with(CAUSAL.stack(), Registry::all(0), Options::default());
        rt.begin(&BeginRequest::new(Agent(0), vec![], None));
        rt.commit(&CommitRequest::new(Agent(0), &[(Cell(0), Value(1))]));
        rt.begin(&BeginRequest::new(Agent(1), vec![Cell(0)], None));
        assert_eq!(rt.retract(0), [0]);
        let out = rt.commit(&CommitRequest::new(Agent(1), &[(Cell(1), Value(2))]));
        assert!(matches!(
            out,
            CommitOutcome::Aborted {
                reason: AbortReason::DeadPred { pred: 0 },
                ..
            }
        ));
    }
}
