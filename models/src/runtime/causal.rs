//! `causal` (L2, SPEC §5): `ssi` plus provenance. Every read records `preds` (the latest live
//! writer of each read cell and, transitively, its preds: [`Store::provenance`]). A commit is
//! accepted only if its reads are fresh (the `ssi` check) and every pred is committed and not
//! aborted. Retracting an op aborts, transitively, every record whose preds contain an aborted
//! one (cascading abort); an in-flight op with a dead pred is aborted when it tries to commit.
//! With `cascade: false` (the `causal-no-cascade` twin) a retraction aborts only its record.
//!
//! As SPEC §1 says of `Retract(i)` (and as the TLA twin does), retraction only flags records:
//! memory keeps their values (a withdrawn plan's effects are not undone by the store; `saga`
//! says who undoes them). A later read of such a value gets no pred for it (provenance skips
//! aborted writers), so it shows only in A3's residue form, not in the preds form prevented
//! here. Invariant asserted after every commit and cascade: no live record has a dead pred.
//! Cost: aborts (stale reads, dead preds) and the cascaded work. A pass does not prove ¬A6.

use super::{
    AbortReason, BeginRequest, CommitOutcome, CommitRequest, Externalization, Occ, Options,
    RegistryChange, Runtime, Store,
};
use crate::names::{Agent, Cell, Value};
use crate::record::Registry;

/// Provenance-checked snapshot isolation with (optionally) cascading aborts.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Causal {
    occ: Occ,
    cascade: bool,
}

impl Causal {
    /// An empty store over `registry`; provenance is forced on whatever `opts` says.
    pub fn new(registry: Registry, opts: Options, cascade: bool) -> Self {
        // Forced on: the commit rule and the cascade read preds.
        let mut opts = opts;
        opts.provenance = true;
        Self {
            occ: Occ::new(registry, opts),
            cascade,
        }
    }

    /// Whether retractions cascade.
    pub fn cascade(&self) -> bool {
        self.cascade
    }

    /// The multi-version core (store and versions).
    pub fn occ(&self) -> &Occ {
        &self.occ
    }

    /// The commit rule: fresh reads, then every pred alive.
    pub(crate) fn check(&self, agent: Agent) -> Option<AbortReason> {
        self.occ.stale_read(agent).or_else(|| {
            let log = &self.occ.store.log;
            let preds = &self.occ.store.pending(agent).snapshot.preds;
            preds
                .iter()
                .map(|&p| p as usize)
                .find(|&p| log[p].aborted)
                .map(|pred| AbortReason::DeadPred { pred })
        })
    }

    /// Appends the record under `verdict` (see [`Occ::settle`]) and re-checks the invariant.
    pub(crate) fn settle(
        &mut self,
        req: &CommitRequest,
        co: &[usize],
        write_registry: Registry,
        verdict: Option<AbortReason>,
        compensate: Vec<(Cell, Value)>,
    ) -> CommitOutcome {
        let out = self
            .occ
            .settle(req, co, write_registry, verdict, compensate);
        // Only the new record can break the invariant on a commit (older ones are unchanged).
        self.check_invariants(self.occ.store.log.len() - 1);
        out
    }

    /// With cascade on: no live record from `from` on has an aborted pred. Checked from the
    /// new record after a commit and from the root after a retraction (earlier records cannot
    /// depend on the root), so a long run costs linear, not quadratic, time.
    fn check_invariants(&self, from: usize) {
        if !self.cascade {
            return;
        }
        let log = &self.occ.store.log;
        for r in log[from..].iter().filter(|r| !r.aborted) {
            for &p in &r.preds {
                assert!(!log[p as usize].aborted, "a live record has a dead pred");
            }
        }
    }

    /// Aborts every live record after `root` with an aborted pred; returns them in order.
    /// One forward pass suffices: preds are transitively closed and point backwards.
    fn cascade_from(&mut self, root: usize) -> Vec<usize> {
        let log = &mut self.occ.store.log;
        let mut dead = Vec::new();
        for k in root + 1..log.len() {
            let doomed = !log[k].aborted && log[k].preds.iter().any(|&p| log[p as usize].aborted);
            if doomed {
                log[k].aborted = true;
                dead.push(k);
            }
        }
        dead
    }
}

impl Runtime for Causal {
    fn name(&self) -> &'static str {
        if self.cascade {
            "causal"
        } else {
            "causal-no-cascade"
        }
    }

    fn start(&mut self, req: &BeginRequest) -> Result<(), super::DropReason> {
        self.occ.start(req)
    }

    fn commit(&mut self, req: &CommitRequest) -> CommitOutcome {
        let verdict = self.check(req.agent);
        let co = self.externalization().order_cow(&req.completion);
        let registry = self.occ.store.registry.clone();
        self.settle(req, &co, registry, verdict, Vec::new())
    }

    fn abandon(&mut self, agent: Agent) {
        self.occ.store.abandon(agent);
    }

    fn retract(&mut self, index: usize) -> Vec<usize> {
        if !self.occ.store.retract_one(index) {
            return Vec::new();
        }
        let mut aborted = vec![index];
        if self.cascade {
            aborted.extend(self.cascade_from(index));
        }
        self.check_invariants(index);
        aborted
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

    fn chain(cascade: bool) -> Causal {
        // root writes c0; reader k reads c_k and writes c_{k+1}.
        let mut rt = Causal::new(Registry::all(0), Options::default(), cascade);
        for k in 0..3u32 {
            let read = if k == 0 { vec![] } else { vec![Cell(k - 1)] };
            rt.begin(&BeginRequest::new(Agent(k), read, None));
            let out = rt.commit(&CommitRequest::new(Agent(k), &[(Cell(k), Value(1))]));
            assert!(matches!(out, CommitOutcome::Committed { .. }));
        }
        rt
    }

    #[test]
    fn preds_are_transitive() {
        let rt = chain(true);
        let preds: Vec<_> = rt.log().iter().map(|r| r.preds.clone()).collect();
        assert_eq!(preds, [vec![], vec![0], vec![0, 1]]);
    }

    #[test]
    fn retraction_cascades_and_keeps_memory() {
        let mut rt = chain(true);
        let memory = rt.store().memory.clone();
        assert_eq!(rt.retract(0), [0, 1, 2]);
        assert!(rt.log().iter().all(|r| r.aborted));
        assert_eq!(rt.store().memory, memory);
        assert_eq!(rt.retract(0), Vec::<usize>::new());
    }

    #[test]
    fn no_cascade_aborts_only_the_root() {
        let mut rt = chain(false);
        assert_eq!(rt.retract(0), [0]);
        let aborted: Vec<_> = rt.log().iter().map(|r| r.aborted).collect();
        assert_eq!(aborted, [true, false, false]);
    }

    #[test]
    fn inflight_reader_of_a_retracted_op_aborts_at_commit() {
        let mut rt = Causal::new(Registry::all(0), Options::default(), true);
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
