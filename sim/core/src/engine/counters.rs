//! What the engine counts in one trial: the counts a trial's metrics carry ([`Counts`], the
//! one list of them) and what only the engine and the explorer look at besides
//! ([`Counters`]).
//!
//! The engine bumps these on its hot path, so both are plain fields: [`Counters`] reads and
//! writes its [`Counts`] through `Deref`, which compiles to the field itself.

use serde::Serialize;
use std::ops::{Deref, DerefMut};

/// The counts of one trial that its metrics keep (and a partial result carries).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub commits: u64,
    pub aborts: u64,
    pub drops: u64,
    pub retries: u64,
    /// Supervisor retractions that hit a live record.
    pub retractions: u64,
    /// Records aborted by those retractions, cascades included.
    pub retracted: u64,
    /// Completed effects undone by aborts (reverse issue order, saga and above).
    pub compensations: u64,
    pub generations: u64,
    pub tokens_total: u64,
    /// Tokens of generations whose operation ended aborted (at commit, retracted, cascaded)
    /// or never ended (a truncated trial).
    pub tokens_wasted: u64,
    pub makespan_ms: u64,
    pub events: u64,
    /// The trial hit `events_max` with agents still running.
    pub truncated: bool,
}

/// What the engine counts in one trial: the [`Counts`] its metrics keep, and the scheduler's
/// decisions and the exploration-only stops, which no metric carries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub counts: Counts,
    /// Events at which two or more events were enabled: the scheduler's only real
    /// decisions (at every other event it can take just the one).
    pub choice_points: u64,
    /// An agent with steps left was stopped by the chooser's per-agent step budget
    /// (abstract time only).
    pub budget_cut: bool,
    /// The trial ended with an agent parked in a polling loop (abstract time, parking on):
    /// it would poll forever, each iteration a repeat of the last.
    pub spinning: bool,
}

impl Deref for Counters {
    type Target = Counts;

    fn deref(&self) -> &Counts {
        &self.counts
    }
}

impl DerefMut for Counters {
    fn deref_mut(&mut self) -> &mut Counts {
        &mut self.counts
    }
}
