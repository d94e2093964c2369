//! The optimistic core shared by `si`, `ssi`, `causal`, `saga` and `registry`: the store plus
//! its multi-version view, a begin that reads a snapshot, a freshness check, and a settle step
//! that appends the record (committed or aborted) and installs committed versions.
//!
//! The runtimes differ only in *when* they call [`Occ::stale_read`] and what else they check;
//! this file holds what they share so that each runtime file states just its own rule.
//! A pass says the store and versions stayed consistent, not that any anomaly is absent.

use super::{AbortReason, BeginRequest, CommitOutcome, CommitRequest, Options};
use super::{Store, Versions};
use crate::names::{Agent, Cell, Value};
use crate::record::Registry;

/// Store + committed versions.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Occ {
    pub store: Store,
    pub versions: Versions,
}

impl Occ {
    /// An empty store over `registry`.
    pub fn new(registry: Registry, opts: Options) -> Self {
        Self {
            store: Store::with_options(registry, opts),
            versions: Versions::new(),
        }
    }

    /// Reads a snapshot at `len(log)` and records the op in flight. Never drops.
    pub fn start(&mut self, req: &BeginRequest) -> Result<(), super::DropReason> {
        let snapshot = self.store.read(req);
        self.store.start(req, snapshot);
        Ok(())
    }

    /// First-committer-wins validation: the first read cell of the agent's in-flight op that
    /// has a live (not since aborted) committed version newer than its read time. A1 counts
    /// only live writers, so skipping retracted ones loses nothing; it is also the TLA twin's
    /// `StaleRead`, which the checker's state counts are compared with.
    pub fn stale_read(&self, agent: Agent) -> Option<AbortReason> {
        let p = self.store.pending(agent);
        let log = &self.store.log;
        p.request.read_set.iter().find_map(|&cell| {
            self.versions
                .all_newer_than(cell, p.snapshot.read_time)
                .iter()
                .find(|v| !log[v.index].aborted)
                .map(|v| AbortReason::StaleRead {
                    cell,
                    writer: v.index,
                })
        })
    }

    /// Appends the record: committed (writes applied, versions installed) when `verdict` is
    /// `None`, aborted with that reason otherwise. `co` indexes into `req.issue`.
    pub fn settle(
        &mut self,
        req: &CommitRequest,
        co: &[usize],
        write_registry: Registry,
        verdict: Option<AbortReason>,
        compensate: Vec<(Cell, Value)>,
    ) -> CommitOutcome {
        let aborted = verdict.is_some();
        let index = self.store.append(req, co, write_registry, aborted);
        let record = &self.store.log[index];
        match verdict {
            None => {
                assert!(compensate.is_empty(), "nothing to compensate on commit");
                self.versions.install(index, record);
                CommitOutcome::Committed {
                    index,
                    write_time: record.write_time,
                }
            }
            Some(reason) => CommitOutcome::Aborted {
                index,
                reason,
                compensate,
            },
        }
    }
}
