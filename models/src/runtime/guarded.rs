//! [`Guarded`]: the store of SPEC §1 wrapped by a runtime. This is what a driver (the
//! simulator, the exhaustive checker, a test) holds: it asks the runtime for a decision at
//! each point and carries it out on the store, the only place the log changes.
//!
//! Begin: the runtime admits or drops; an admitted op reads a snapshot and goes in flight.
//! Commit: the runtime's verdict, its externalization rule (which turns the completion order
//! into `co`) and the registry it resolves the call against make the record, appended
//! committed or aborted; an abort carries what to compensate. Retract: the store flags the
//! record, the runtime names what else aborts with it, and the store flags those. After every
//! step the runtime's invariant is asserted (on in release). A pass says the store and the
//! runtime's invariants held on that run, not that any anomaly is absent.

use super::{
    BeginOutcome, BeginRequest, CommitOutcome, CommitRequest, DropReason, Externalization, Options,
    RegistryChange, Runtime, Stack, Store,
};
use crate::names::Agent;
use crate::record::{OpRecord, Registry};

/// The store under runtime `R`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(bound = "")]
pub struct Guarded<R: Runtime> {
    store: Store,
    runtime: R,
}

impl<R: Runtime> Guarded<R> {
    /// A fresh store over `registry` under `runtime`; provenance is on if `opts` asks for it
    /// or the runtime reads `preds`.
    pub fn with(runtime: R, registry: Registry, opts: Options) -> Self {
        let opts = Options {
            provenance: opts.provenance || runtime.stack().provenance(),
        };
        Self {
            store: Store::with_options(registry, opts),
            runtime,
        }
    }

    /// The runtime.
    pub fn runtime(&self) -> &R {
        &self.runtime
    }

    /// The mechanisms of the runtime.
    pub fn stack(&self) -> Stack {
        self.runtime.stack()
    }

    /// The canonical name of the runtime's stack (`vanilla`, `ssi`, `lock+sequencer`, …).
    pub fn name(&self) -> String {
        self.stack().to_string()
    }

    /// The effect externalization rule.
    pub fn externalization(&self) -> Externalization {
        self.runtime.externalization()
    }

    /// The store (log, memory, registry, in-flight operations).
    #[inline]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The emitted records, in log order.
    #[inline]
    pub fn log(&self) -> &[OpRecord] {
        self.store.log()
    }

    /// Hands over the store (the log with it), for a driver done with the run.
    pub fn into_store(self) -> Store {
        self.store
    }

    /// Makes room for `records` more records in the log; a speed hint that changes no state.
    pub fn reserve(&mut self, records: usize) {
        self.store.reserve(records);
    }

    /// Begins an operation for an agent with nothing in flight, in place: once begun, what it
    /// read is the in-flight op's snapshot (`store().pending(agent).snapshot`). A driver that
    /// reads the store calls this and copies nothing; [`Guarded::begin`] returns a copy.
    #[inline]
    pub fn start(&mut self, req: &BeginRequest) -> Result<(), DropReason> {
        assert!(
            !self.store.inflight().contains_key(&req.agent),
            "agent already has an op in flight"
        );
        self.runtime.admit(&self.store, req)?;
        let snapshot = self.store.read(req);
        self.store.start(req, snapshot);
        self.runtime.check(&self.store, self.store.log().len());
        Ok(())
    }

    /// Begins an operation for an agent with nothing in flight; returns what it read.
    pub fn begin(&mut self, req: &BeginRequest) -> BeginOutcome {
        match self.start(req) {
            Ok(()) => BeginOutcome::Begun(self.store.pending(req.agent).snapshot.clone()),
            Err(reason) => BeginOutcome::Dropped(reason),
        }
    }

    /// Commits (or aborts) the agent's in-flight operation; appends its record either way.
    #[inline]
    pub fn commit(&mut self, req: &CommitRequest) -> CommitOutcome {
        let op = self.store.pending(req.agent);
        let verdict = self.runtime.verdict(&self.store, op, req);
        let registry = self
            .runtime
            .resolve(op)
            .unwrap_or(self.store.registry())
            .clone();
        let ext = self.runtime.externalization();
        let co = ext.order_cow(&req.completion);
        let before = self.store.log().len();
        let index = self.store.append(req, &co, registry, verdict.is_some());
        assert_eq!(index, before, "a commit appends exactly one record");
        assert!(!self.store.inflight().contains_key(&req.agent));
        self.runtime.check(&self.store, index);
        match verdict {
            None => CommitOutcome::Committed {
                index,
                write_time: self.store.log()[index].write_time,
            },
            Some(reason) => CommitOutcome::Aborted {
                index,
                reason,
                compensate: ext.compensation(req),
            },
        }
    }

    /// The agent gives up its in-flight operation (no record; what it held is released).
    pub fn abandon(&mut self, agent: Agent) {
        self.store.abandon(agent);
        self.runtime.check(&self.store, self.store.log().len());
    }

    /// A supervisor retracts committed record `index`; returns every index this aborts,
    /// sorted (the record itself first among them if it was live; empty if it was already
    /// aborted or does not exist). Memory keeps the retracted writes (SPEC §1). A runtime
    /// with `cascade` aborts the live records that depend on it too; one without leaves
    /// them, and (with `validate-preds`) an in-flight op that read from it aborts when it
    /// commits.
    pub fn retract(&mut self, index: usize) -> Vec<usize> {
        if !self.store.retract_one(index) {
            return Vec::new();
        }
        let mut aborted = vec![index];
        for k in self.runtime.cascade(&self.store, index) {
            assert!(k > index, "a record depends on earlier records only");
            assert!(self.store.retract_one(k), "a cascade aborts live records");
            aborted.push(k);
        }
        self.runtime.check(&self.store, index);
        aborted
    }

    /// Applies a registry change.
    pub fn change_registry(&mut self, change: RegistryChange) {
        self.store.change_registry(change);
    }
}
