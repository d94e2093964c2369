//! Runtimes (SPEC §5): deterministic state machines between agents and the store.
//!
//! A runtime owns the store (log, memory, registry) and decides, as data, what happens to
//! each request: [`BeginOutcome`] (begun with a snapshot, or dropped), [`CommitOutcome`]
//! (committed, or aborted with what to compensate), the set of records a retraction aborts,
//! and the [`Externalization`] rule for tool effects. The caller (the simulator or the
//! exhaustive checker) acts on the decision, so both drive the very same code.
//!
//! Each agent has at most one operation in flight, as in the model's `inflight[a]`; requests
//! name the agent. Every runtime emits [`OpRecord`]s into its log so that the detectors
//! classify what it did. A passing run of a runtime says its assertions held on that run;
//! the claims about which anomalies it prevents are checked by the property tests and by
//! the exhaustive checker, not by this trait.
//!
//! Files: [`store`] (the single store), [`versions`] (committed versions per cell) and [`occ`]
//! (the optimistic core they share); one file per runtime ([`vanilla`], [`pessimistic`],
//! [`si`], [`ssi`], [`causal`], [`saga`] with its [`sequencer`], [`registry`]); [`kind`] (CLI
//! names, levels, [`Options`]) and [`any`] (run-time selection by [`RuntimeKind`]).
//!
//! Driver contract: begin only an agent with nothing in flight; commit or abandon only an
//! agent with an op in flight (a dropped op is not in flight); read sets sorted and unique;
//! a commit's `completion` a permutation of its issue indices. Breaking it panics (a driver
//! bug, never user input).

pub mod any;
pub mod causal;
pub mod kind;
pub mod occ;
pub mod pessimistic;
pub mod registry;
pub mod saga;
pub mod sequencer;
pub mod si;
pub mod ssi;
pub mod store;
pub mod vanilla;
pub mod versions;

pub use any::AnyRuntime;
pub use causal::Causal;
pub use kind::{Discipline, Options, RuntimeKind};
pub use occ::Occ;
pub use pessimistic::Pessimistic;
pub use registry::RegistryIsolation;
pub use saga::{compensation_plan, Saga};
pub use sequencer::Sequencer;
pub use si::Si;
pub use ssi::Ssi;
pub use store::{Pending, Store};
pub use vanilla::Vanilla;
pub use versions::{Version, Versions};

use crate::names::{Agent, Cell, Tool, Value};
use crate::record::{OpRecord, Registry, ValueMap};
use std::borrow::Cow;
use std::fmt::Debug;
use std::hash::Hash;

/// A request to begin an operation: read `read_set` (and the registry), planning `planned_tool`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct BeginRequest {
    pub agent: Agent,
    /// Cells to read, sorted and unique.
    pub read_set: Vec<Cell>,
    pub planned_tool: Option<Tool>,
    /// The values actually observed, when the caller models skew (`AllowSkew` on an external
    /// cell, SPEC §1): recorded as `read_values` instead of the store's memory. `None` reads
    /// the store. Runtimes validate and compute provenance from the store either way.
    pub observed: Option<ValueMap>,
}

impl BeginRequest {
    /// A request that reads the store (no skew).
    pub fn new(agent: Agent, read_set: Vec<Cell>, planned_tool: Option<Tool>) -> Self {
        Self {
            agent,
            read_set,
            planned_tool,
            observed: None,
        }
    }
}

/// What a begun operation saw.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    /// `len(log)` at the read.
    pub read_time: u64,
    /// The values read (a total map; only `read_set` entries are meaningful).
    pub read_values: ValueMap,
    /// The registry seen.
    pub registry: Registry,
    /// Provenance (extension 2): log indices this op depends on, sorted; empty without it.
    pub preds: Vec<u32>,
}

/// Why an operation was dropped before generation (no tokens spent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// A read cell is locked by another agent's operation.
    LockConflict { cell: Cell, holder: Agent },
}

/// The decision on a [`BeginRequest`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BeginOutcome {
    Begun(Snapshot),
    Dropped(DropReason),
}

/// A request to commit the in-flight operation of `agent`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CommitRequest {
    pub agent: Agent,
    /// Written cells in **issue order** (each write is an external effect, extension 5).
    pub issue: Vec<Cell>,
    /// The written values, a total map (the paper's model leaves it free outside the write
    /// set; canonical writes make it NULL there).
    pub write_values: ValueMap,
    /// The order in which the effects completed in the outside world, as indices into
    /// `issue`; a permutation of `0..issue.len()`. Runtimes turn it into `co` through their
    /// [`Externalization`] rule.
    pub completion: Vec<usize>,
}

impl CommitRequest {
    /// A request whose effects complete in issue order; `writes` in issue order.
    pub fn new(agent: Agent, writes: &[(Cell, Value)]) -> Self {
        Self {
            agent,
            issue: writes.iter().map(|&(c, _)| c).collect(),
            write_values: ValueMap::from_pairs(writes.iter().copied()),
            completion: (0..writes.len()).collect(),
        }
    }

    /// The same request with effects completing in `completion` order (indices into issue).
    pub fn completing(mut self, completion: Vec<usize>) -> Self {
        self.completion = completion;
        self
    }
}

/// Why an operation was aborted at commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AbortReason {
    /// A read cell has a committed version newer than the read time.
    StaleRead { cell: Cell, writer: usize },
    /// A predecessor is aborted or retracted.
    DeadPred { pred: usize },
    /// A write cell outside the read set is locked by another operation.
    LockConflict { cell: Cell, holder: Agent },
    /// The planned tool left the registry or changed its signature.
    ToolChanged { tool: Tool },
}

/// The decision on a [`CommitRequest`]. Either way a record is appended to the log.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CommitOutcome {
    Committed {
        index: usize,
        write_time: u64,
    },
    Aborted {
        index: usize,
        reason: AbortReason,
        /// Completed effects to undo, as the `(cell, value written)` effects, in the order to
        /// undo them (reverse issue order). Empty for runtimes without compensation (every
        /// runtime below `saga`): their aborted writes are simply never applied.
        compensate: Vec<(Cell, Value)>,
    },
}

/// A change to the tool registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegistryChange {
    Remove(Tool),
    ChangeSignature(Tool),
    Add(Tool),
}

/// When a completed tool effect may be made visible to the outside world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Externalization {
    /// As soon as it completes (`co` = completion order).
    Immediate,
    /// Effect k only after effects 0..k−1 (`co` = `io`): the commit-order sequencer.
    Sequenced,
}

impl Externalization {
    /// The externalization order (indices into issue order) for a completion order.
    pub fn order(self, completion: &[usize]) -> Vec<usize> {
        self.order_cow(completion).into_owned()
    }

    /// [`Externalization::order`], borrowing `completion` when it is the order (no copy on
    /// a runtime's commit path).
    pub fn order_cow(self, completion: &[usize]) -> Cow<'_, [usize]> {
        match self {
            Externalization::Immediate => Cow::Borrowed(completion),
            Externalization::Sequenced => Cow::Owned((0..completion.len()).collect()),
        }
    }

    /// When each effect becomes visible, given when each completed (indexed by issue order).
    pub fn visible_at(self, completed_at: &[u64]) -> Vec<u64> {
        match self {
            Externalization::Immediate => completed_at.to_vec(),
            Externalization::Sequenced => {
                let mut out = Vec::with_capacity(completed_at.len());
                let mut gate = 0;
                for &t in completed_at {
                    gate = gate.max(t);
                    out.push(gate);
                }
                out
            }
        }
    }
}

/// A prevention mechanism. Small on purpose, like stateright's `Model`: every decision is
/// returned as data, every state is a value (so the checker can hash and compare it, and
/// encode it to bytes with serde to keep its frontiers packed or on disk).
pub trait Runtime:
    Clone + Debug + Hash + Eq + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static
{
    /// The CLI name (`vanilla`, `ssi`, …).
    fn name(&self) -> &'static str;

    /// Begins an operation for an agent with nothing in flight, in place: once begun, what it
    /// read is the in-flight op's snapshot (`store().pending(agent).snapshot`). A driver that
    /// reads the store calls this and copies nothing; [`Runtime::begin`] returns a copy.
    fn start(&mut self, req: &BeginRequest) -> Result<(), DropReason>;

    /// Begins an operation for an agent with nothing in flight; returns what it read.
    fn begin(&mut self, req: &BeginRequest) -> BeginOutcome {
        match self.start(req) {
            Ok(()) => BeginOutcome::Begun(self.store().pending(req.agent).snapshot.clone()),
            Err(reason) => BeginOutcome::Dropped(reason),
        }
    }

    /// Commits (or aborts) the agent's in-flight operation; appends its record.
    fn commit(&mut self, req: &CommitRequest) -> CommitOutcome;

    /// The agent gives up its in-flight operation (no record; locks released).
    fn abandon(&mut self, agent: Agent);

    /// A supervisor retracts committed record `index`; returns every index this aborts,
    /// sorted (the record itself first among them if it was live; empty if it was already
    /// aborted or does not exist). Memory keeps the retracted writes (SPEC §1). `causal` and
    /// above cascade (unless `causal-no-cascade`), and there in-flight ops that read from an
    /// aborted record abort when they commit.
    fn retract(&mut self, index: usize) -> Vec<usize>;

    /// Applies a registry change.
    fn change_registry(&mut self, change: RegistryChange);

    /// The effect externalization rule.
    fn externalization(&self) -> Externalization;

    /// The store this runtime keeps (log, memory, registry, in-flight operations).
    fn store(&self) -> &Store;

    /// Makes room for `records` more records in the log ([`Store::reserve`]); a speed hint
    /// that changes no state. The default does nothing.
    fn reserve(&mut self, records: usize) {
        let _ = records;
    }

    /// The emitted records, in log order.
    fn log(&self) -> &[OpRecord] {
        &self.store().log
    }

    /// Consumes the runtime and hands over its store (the log with it), for a driver done
    /// with the run. The default clones the store; runtimes that own one move it out.
    fn into_store(self) -> Store {
        self.store().clone()
    }
}
