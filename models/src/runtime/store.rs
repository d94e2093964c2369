//! The single store of SPEC §1: the log (whose length is the logical clock), the memory, the
//! registry, and each agent's in-flight operation. Runtimes wrap it and add their control.

use super::{BeginRequest, CommitRequest, Snapshot};
use crate::names::{Agent, Value};
use crate::record::{OpRecord, Registry, ValueMap};
use std::collections::BTreeMap;

/// An operation between its read and its commit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pending {
    pub request: BeginRequest,
    pub snapshot: Snapshot,
}

/// Log, memory, registry and in-flight operations.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Store {
    pub log: Vec<OpRecord>,
    pub memory: ValueMap,
    pub registry: Registry,
    /// In-flight operations by agent (at most one each).
    pub inflight: BTreeMap<Agent, Pending>,
}

impl Store {
    /// The model's Init: empty log, all-NULL memory, the given registry.
    pub fn new(registry: Registry) -> Self {
        Self {
            log: Vec::new(),
            memory: ValueMap::new(),
            registry,
            inflight: BTreeMap::new(),
        }
    }

    /// The logical clock, `len(log)`.
    pub fn clock(&self) -> u64 {
        self.log.len() as u64
    }

    /// A snapshot of the current memory and registry at `read_time = len(log)`, no preds.
    pub fn read(&self) -> Snapshot {
        Snapshot {
            read_time: self.clock(),
            read_values: self.memory.clone(),
            registry: self.registry.clone(),
            preds: Vec::new(),
        }
    }

    /// Provenance (extension 2): for each read cell, the latest non-aborted writer with
    /// `write_time ≤ read_time`, plus transitively their preds. Sorted, unique.
    pub fn provenance(&self, req: &BeginRequest) -> Vec<u32> {
        let mut preds = Vec::new();
        for &c in &req.read_set {
            if let Some(k) = self.log.iter().rposition(|r| !r.aborted && r.writes(c)) {
                preds.push(k as u32);
                preds.extend_from_slice(&self.log[k].preds);
            }
        }
        preds.sort_unstable();
        preds.dedup();
        preds
    }

    /// Records the agent's in-flight operation.
    pub fn start(&mut self, req: &BeginRequest, snapshot: Snapshot) {
        assert!(
            !self.inflight.contains_key(&req.agent),
            "agent already has an op in flight"
        );
        self.inflight.insert(
            req.agent,
            Pending {
                request: req.clone(),
                snapshot,
            },
        );
    }

    /// Appends the record of the agent's in-flight operation and, unless `aborted`, applies
    /// its writes to memory. `co` is the externalization order (indices into `req.issue`).
    /// Returns the new record's index.
    pub fn append(
        &mut self,
        req: &CommitRequest,
        co: &[usize],
        write_registry: Registry,
        aborted: bool,
    ) -> usize {
        let pending = self
            .inflight
            .remove(&req.agent)
            .expect("commit without an op in flight");
        assert_eq!(
            co.len(),
            req.issue.len(),
            "co must order every issued effect"
        );
        let io: Vec<_> = req
            .issue
            .iter()
            .map(|&c| (c, req.write_values.get(c)))
            .collect();
        let co: Vec<_> = co.iter().map(|&k| io[k]).collect();
        let mut write_set = req.issue.clone();
        write_set.sort_unstable();
        write_set.dedup();
        assert_eq!(
            write_set.len(),
            req.issue.len(),
            "a cell is issued at most once"
        );
        if !aborted {
            for &c in &write_set {
                self.memory.set(c, req.write_values.get(c));
            }
        }
        let write_time = self.clock() + 1;
        assert!(pending.snapshot.read_time < write_time);
        self.log.push(OpRecord {
            agent: req.agent,
            read_set: pending.request.read_set,
            read_values: pending.snapshot.read_values,
            read_registry: pending.snapshot.registry,
            planned_tool: pending.request.planned_tool,
            read_time: pending.snapshot.read_time,
            write_set,
            write_values: req.write_values.clone(),
            write_registry,
            write_time,
            io,
            co,
            aborted,
            preds: pending.snapshot.preds,
        });
        self.log.len() - 1
    }

    /// The current value of the memory at `c`.
    pub fn value(&self, c: crate::names::Cell) -> Value {
        self.memory.get(c)
    }
}
