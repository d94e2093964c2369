//! Runtimes (SPEC §5): deterministic policies between agents and the one store.
//!
//! A runtime is a stack of **mechanisms** (SPEC §5.1), each a small policy with one job that
//! acts at one or more points (begin, commit, retract, externalization): [`Lock`],
//! [`ValidateWriters`], [`Validate`], [`ValidatePreds`], [`Cascade`], [`Sequence`] (the
//! `sequencer`), [`Pin`], [`ValidateTool`]. Each implements [`Runtime`], whose hooks return
//! decisions as data: a begin is admitted or dropped ([`DropReason`]), a commit gets a verdict
//! ([`AbortReason`]) and a registry to resolve against, a retraction the records it aborts
//! with it, and effects an [`Externalization`] rule. A [`Stack`] of mechanisms is itself a
//! runtime (it consults its members in catalogue order), so mechanisms compose by stacking,
//! not by flags. [`Guarded`] wraps the [`Store`] with a runtime and is the only thing that
//! acts on the decisions; the caller (the simulator or the exhaustive checker) drives a
//! `Guarded`, so both run the very same code.
//!
//! The named runtimes of SPEC §5 are stacks ([`RuntimeKind::stack`]): `vanilla` = none,
//! `pessimistic` = lock, `si` = validate-writers, `ssi` = validate, `causal` =
//! validate + validate-preds + cascade (`causal-no-cascade` without cascade), `saga` =
//! causal + sequencer, `registry-pin` / `registry-validate` = saga + pin / validate-tool.
//!
//! Each agent has at most one operation in flight, as in the model's `inflight[a]`; requests
//! name the agent. Every runtime emits [`OpRecord`](crate::record::OpRecord)s into its log so that
//! the detectors classify what it did. A passing run of a runtime says its assertions held on that run;
//! the claims about which anomalies a stack prevents are checked by the property tests and
//! by the exhaustive checker, never assumed from the catalogue's `targets`.
//!
//! Files: [`store`] (the single store) and [`guarded`] (the store under a runtime); one file
//! per idea of control ([`lock`], [`validate`], [`causal`] (preds and cascade),
//! [`sequencer`], [`registry`] (pin and validate-tool)); [`mechanism`] (the catalogue, as
//! data), [`stack`] (compositions, their names and errors), [`kind`] (the named runtimes)
//! and [`any`] (the runtime object a choice becomes, `Guarded<Stack>`).
//!
//! Driver contract: begin only an agent with nothing in flight; commit or abandon only an
//! agent with an op in flight (a dropped op is not in flight); read sets sorted and unique;
//! a commit's `completion` a permutation of its issue indices. Breaking it panics (a driver
//! bug, never user input).

pub mod any;
pub mod catalogue;
pub mod causal;
pub mod guarded;
pub mod kind;
pub mod lock;
pub mod mechanism;
pub mod registry;
pub mod sequencer;
pub mod stack;
pub mod store;
pub mod validate;

pub use causal::{Cascade, ValidatePreds};
pub use guarded::Guarded;
pub use kind::{Discipline, Options, RuntimeKind};
pub use lock::Lock;
pub use mechanism::{ActsAt, Mechanism, Spec};
pub use registry::{Pin, ValidateTool};
pub use sequencer::{compensation_plan, Sequence, Sequencer};
pub use stack::{Stack, StackError};
pub use store::{Inflight, Pending, Store};
pub use validate::{Validate, ValidateWriters};

use crate::names::{Agent, Cell, Tool, Value};
use crate::record::{Registry, ValueMap};
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
    /// The tool list the agent actually planned against, when the caller models a client
    /// that caches it (an MCP client that ignores `notifications/tools/list_changed`):
    /// recorded as the snapshot's registry instead of the live one. `None` reads the live
    /// registry. Commit still resolves against the live registry unless a mechanism pins.
    /// (Always serialized, as `observed` is: the checker's state codec is postcard, which
    /// has no field names and cannot skip one.)
    pub observed_registry: Option<Registry>,
}

impl BeginRequest {
    /// A request that reads the store (no skew).
    pub fn new(agent: Agent, read_set: Vec<Cell>, planned_tool: Option<Tool>) -> Self {
        Self {
            agent,
            read_set,
            planned_tool,
            observed: None,
            observed_registry: None,
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
        /// undo them (reverse issue order): [`Externalization::compensation`]. Empty unless
        /// the stack sequences its effects (`sequencer`); without it aborted writes are simply
        /// never applied.
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
            // The sequencer's state machine, fed the completions one by one, releases them in
            // issue order (its asserts check it).
            Externalization::Sequenced => Cow::Owned(Sequencer::run(completion)),
        }
    }

    /// What an op aborted at commit must undo: under the sequencer every issued effect has
    /// completed and been externalized in issue order, so all of them, in reverse issue order
    /// (SPEC §5.1); immediate effects are not tracked, and the aborted writes are simply never
    /// applied to memory.
    pub fn compensation(self, req: &CommitRequest) -> Vec<(Cell, Value)> {
        match self {
            Externalization::Immediate => Vec::new(),
            Externalization::Sequenced => req
                .issue
                .iter()
                .rev()
                .map(|&c| (c, req.write_values.get(c)))
                .collect(),
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

/// A prevention policy over the store: one mechanism, or a [`Stack`] of them. Small on
/// purpose, like stateright's `Model`: one required method says what the runtime is, and each
/// hook is a point where it may act, returning its decision as data; a hook it does not act
/// at keeps the default (admit, commit, the live registry, immediate effects, no cascade).
/// A runtime holds no state of its own (everything it decides from is in the store), so the
/// checker's state is the store's and every runtime value is a constant. A state is a value
/// (the checker hashes and compares it, and encodes it with serde to keep its frontiers packed
/// or on disk), so a runtime is one too.
pub trait Runtime:
    Clone + Debug + Hash + Eq + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static
{
    /// The mechanisms this runtime is made of (its name, needs and provenance follow).
    fn stack(&self) -> Stack;

    /// Begin: whether `req` (of an agent with nothing in flight) may start, or is dropped
    /// before generation.
    fn admit(&self, store: &Store, req: &BeginRequest) -> Result<(), DropReason> {
        let _ = (store, req);
        Ok(())
    }

    /// Commit: why the in-flight `op` must abort, or `None` to commit it.
    fn verdict(&self, store: &Store, op: &Pending, req: &CommitRequest) -> Option<AbortReason> {
        let _ = (store, op, req);
        None
    }

    /// Commit: the registry the planned call resolves against (the record's
    /// `write_registry`), if not the live one.
    fn resolve<'a>(&self, op: &'a Pending) -> Option<&'a Registry> {
        let _ = op;
        None
    }

    /// Externalization: when a completed effect becomes visible.
    fn externalization(&self) -> Externalization {
        Externalization::Immediate
    }

    /// Retract: the live records after `root` that must abort because `root` was aborted,
    /// in log order (the store has flagged `root` already; nothing else is flagged yet).
    fn cascade(&self, store: &Store, root: usize) -> Vec<usize> {
        let _ = (store, root);
        Vec::new()
    }

    /// Asserts the runtime's invariant after a step; records before `from` are unchanged
    /// since the previous check (a commit passes the new record, a retraction its root).
    fn check(&self, store: &Store, from: usize) {
        let _ = (store, from);
    }
}
