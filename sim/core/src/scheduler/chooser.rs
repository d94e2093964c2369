//! The choice-point hook of abstract-time trials: exploration drives the engine through it.
//!
//! A [`Scheduler`](super::Scheduler) that offers a [`Chooser`] switches the engine to abstract
//! time for the trial: every agent with a pending event is enabled (ordered by agent, not by
//! due time), and every nondeterministic draw that can change the history becomes a choice
//! point the chooser takes: which enabled agent steps next, whether a `prob` of a branch,
//! retract or registry step fires, which cells a `pick` selects, the order a write's effects
//! complete in. Latencies, backoffs and token counts are still drawn from the trial's stream,
//! but nothing in the history depends on them in this mode (they set times and counters only).
//! The engine calls [`Chooser::pick`] only where there are two or more alternatives.
//!
//! Nothing here chooses well: a chooser is a path through the tree of choices, and the
//! explorer (`crate::explore`) is what walks every path.

/// What kind of decision a choice point is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChoiceKind {
    /// Which enabled agent runs its next step.
    Agent,
    /// Whether a `prob` (of a branch, retract or registry step) fires: 0 yes, 1 no.
    Prob,
    /// The next cell of a `pick` (cells in scenario order, each pick after the previous).
    Pick,
    /// The next effect to complete (Lehmer code: a position among the effects not yet placed).
    Order,
}

/// Which state the next step of an enabled agent touches (for partial-order reduction).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Footprint {
    /// Only the agent's own state: its program counter, its open operation's snapshot and
    /// generation, its latest read (`generate` inside an operation, `wait`, `branch`, the
    /// issue half of `write`). Such a step neither reads nor writes what another agent's step
    /// can change, and no other agent's step can disable it.
    Local,
    /// The runtime, the registry or the log (`read`, the commit half of `write`, `generate`
    /// outside an operation, `retract`, `registry`).
    Shared,
}

/// How a step uses one shared object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Use {
    #[default]
    None,
    Read,
    Write,
    /// Of the store only: appends a record that writes no cell (the commit of an operation
    /// that writes nothing, such as a poll's `write []`). Ordered against every write and
    /// append (the record's index), not against a read: all a begin's order against it moves
    /// is the begin's read time, by one, and no runtime or detector compares a read time
    /// with anything but the writers of a cell.
    Append,
}

impl Use {
    /// Whether two uses of one object conflict: a write against anything, an append
    /// against an append; two reads, a read and an append, or no use, commute.
    pub fn conflicts(self, other: Use) -> bool {
        match (self, other) {
            (Use::None, _) | (_, Use::None) => false,
            (Use::Write, _) | (_, Use::Write) => true,
            (Use::Append, Use::Append) => true,
            (Use::Read, _) | (_, Use::Read) => false,
        }
    }
}

/// What an agent's next step may read and write of the state that other agents' steps share
/// (for dynamic partial-order reduction; the relation it gives, per runtime, is stated in
/// `crate::explore`'s reduction module). An over-approximation of every way the step can go
/// from any global state, computed from the agent's own state alone, so that it stays the
/// same while other agents step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Access {
    /// The store: its log (records, their aborted flags, the commit clock a read time is
    /// taken from, provenance) and its memory.
    pub store: Use,
    /// The tool registry.
    pub registry: Use,
    /// The locks of the cells with bit `cell mod 64` set (written: acquired, released or
    /// tested), under a stack with `lock` only. Cells that share a bit share a lock here:
    /// more conflicts, never fewer.
    pub locks: u64,
}

impl Access {
    /// A step that touches only its own agent's state.
    pub const LOCAL: Access = Access {
        store: Use::None,
        registry: Use::None,
        locks: 0,
    };

    /// A step that may write everything shared.
    pub const ALL: Access = Access {
        store: Use::Write,
        registry: Use::Write,
        locks: u64::MAX,
    };

    /// Whether steps of two different agents with these accesses are dependent: a common
    /// object that one writes and the other reads or writes.
    pub fn conflicts(&self, other: &Access) -> bool {
        self.store.conflicts(other.store)
            || self.registry.conflicts(other.registry)
            || self.locks & other.locks != 0
    }

    /// The lock bit of a cell.
    pub fn lock_bit(cell: usize) -> u64 {
        1 << (cell % 64)
    }
}

/// One choice point.
#[derive(Clone, Copy, Debug)]
pub struct ChoicePoint<'a> {
    pub kind: ChoiceKind,
    /// The number of alternatives (≥ 2).
    pub n: usize,
    /// The agent that decides (for [`ChoiceKind::Agent`], the agent of alternative 0).
    pub agent: usize,
    /// For [`ChoiceKind::Agent`]: the enabled agents, ascending (alternative i runs
    /// `enabled[i]`), and the footprint of each one's next step. Empty otherwise.
    pub enabled: &'a [usize],
    pub next: &'a [Footprint],
    /// For [`ChoiceKind::Agent`]: what each enabled agent's next step may touch. Empty
    /// otherwise.
    pub access: &'a [Access],
    /// For an agent choice, the agents parked in a polling loop (not enabled until a write
    /// wakes them; see [`Chooser::parks`]); empty otherwise.
    pub parked: &'a [usize],
}

/// Takes every choice of an abstract-time trial.
pub trait Chooser {
    /// Resets for a new trial.
    fn start(&mut self);

    /// An alternative in `0..point.n`.
    fn pick(&mut self, point: &ChoicePoint<'_>) -> usize;

    /// Agent `agent` is about to run a step touching `footprint` (every step of the trial,
    /// chosen or the only one enabled).
    fn stepped(&mut self, _agent: usize, _footprint: Footprint) {}

    /// Agent `agent` is about to run a step that may touch `access` (called right after
    /// [`Chooser::stepped`], for every step).
    fn accessed(&mut self, _agent: usize, _access: Access) {}

    /// Whether the trial should stop before its next step (a path the chooser knows to be
    /// redundant). The engine ends the trial there, as when no agent is left.
    fn halted(&self) -> bool {
        false
    }

    /// The per-agent step budget: the trial stops (as if at a `stop`) before an agent's step
    /// past it. `None`: no budget (the scenario's `events_max` still holds).
    fn steps_per_agent(&self) -> Option<u64> {
        None
    }

    /// Whether the chooser keeps the states it has seen: the engine then gives it, before
    /// each agent step (a choice point or not), the key of its state there
    /// ([`Chooser::state`]).
    fn stateful(&self) -> bool {
        false
    }

    /// The key of the engine's state before the agent step about to be taken (only for a
    /// [`Chooser::stateful`] chooser): two states with one key have the same futures and
    /// reach the same anomaly sets (see `engine::snapshot`). The chooser may halt the trial
    /// here ([`Chooser::halted`]), before the step.
    fn state(&mut self, _key: u128) {}

    /// Whether to park polling loops: an agent back at a loop's label after an iteration
    /// that had no effect, took no data choice and saw nothing it read written since (and
    /// that was the same as the iteration before it) is not enabled until a write could
    /// change what the next iteration does (see `explore` and `engine::spin`).
    fn parks(&self) -> bool {
        false
    }

    /// Whether to keep a snapshot of the trial at choice point `point`, an agent choice the
    /// engine is about to ask (asked only by a trial that keeps snapshots: see
    /// `engine::run_trial_resumable`). A chooser that answers `true` keeps its own state
    /// beside it, to resume there.
    fn checkpoint(&mut self, _point: u64) -> bool {
        false
    }

    /// The choice point the next trial resumes at: one this chooser kept a snapshot at on an
    /// earlier trial whose choices before it were the same (`None`: from the start). The
    /// engine asks before [`Chooser::start`], which then puts the chooser's own state back.
    fn resume_at(&self) -> Option<u64> {
        None
    }
}
