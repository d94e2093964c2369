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

    /// The per-agent step budget: the trial stops (as if at a `stop`) before an agent's step
    /// past it. `None`: no budget (the scenario's `events_max` still holds).
    fn steps_per_agent(&self) -> Option<u64> {
        None
    }
}
