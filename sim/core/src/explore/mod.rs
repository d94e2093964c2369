//! Exhaustive exploration of a scenario: every interleaving of its agents' scripts, with time
//! abstracted, on the engine `simulate` runs (like shuttle and loom for Rust code, or TLC for
//! a spec). The engine runs in abstract time under a [`walk::Walker`] that takes every choice
//! point (which enabled agent steps next, each `prob` both ways, every `pick`, every effect
//! completion order); a depth-first search re-executes the engine over each prefix of
//! choices, from a snapshot of the engine where the prefix was run before (see [`walk`]).
//! Partial-order reduction ([`reduction`]) skips interleavings that differ only in where an
//! agent's local steps fall. Each path's history goes through the detectors
//! `simulate` uses; an anomaly is *reachable* with the shortest path that exhibits it (as an
//! `X1` replay line that `agentsim replay` and `agentsim shrink` take), *unreachable* when the
//! search finished without one, or *cannot tell* when a budget or a signal stopped it.
//!
//! A polling loop is parked ([`park`]): an agent whose last iteration repeated the one before
//! it without effect waits for a write to what it read instead of spinning, so a scenario
//! whose only unbounded paths are polls completes with no path cut.
//!
//! A search is *complete* only when no path was cut by anything: the per-agent step budget,
//! the scenario's `events_max`, a repeat cap, a ceiling or a signal. An anomaly no path of a
//! cut search showed is *cannot tell* with a budget reason naming what cut it ([`Cut`]), never
//! unreachable; one the scenario cannot produce under the runtime at all is *cannot tell,
//! vacuous* ([`crate::vacuity`]). What a complete search does not prove: anything the abstraction changes (`timed` orders are a subset of these, so a
//! reachable verdict may need latencies the scenario's distributions never draw; a
//! generator's content is the stub's or the recording's), and `[cpl]` scenarios (messages are
//! not explored: refused). With [`Search::Timed`] the engine offers only the orders the
//! latency bounds allow ([`timed`]); the search is then the plain enumeration.

pub mod live;
mod park;
mod partial;
mod reduction;
mod seen;
mod symmetry;
mod timed;
mod walk;

pub use partial::SHARD_TASKS;
pub use partial::{explore_shard, merge_shards, JoinError, ShardRun, ShardSet, ShardStates};
pub use reduction::independent;
pub use symmetry::has_copies;

use crate::bounds::Quantiles;
use crate::engine::{run_trial_in, run_trial_resumable, Pool, SimError, Snapshots};
use crate::engine::{TrialRun, TrialSetup};
use crate::metrics::{exhibits, reported};
use crate::replay_line::ReplayLine;
use crate::runner::{detect, generator, trial_seed};
use crate::scenario::{OnMissing, Scenario};
use crate::schedule::Schedule;
use agentsim_models::history::History;
use agentsim_models::runtime::Stack;
use agentsim_models::{Anomaly, Reason, Verdict};
use park::{parking, parks};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use symmetry::Copies;
use walk::Walker;

/// The default per-agent step budget (steps = engine events; a `write` is two).
pub const STEPS_PER_AGENT_DEFAULT: u64 = 40;
/// The per-agent step budget that is no budget (`--steps-per-agent unbounded`): only a
/// stateful search takes it, whose paths end where a loop closes.
pub const STEPS_UNBOUNDED: u64 = u64::MAX;
/// The most levels of choice points the split goes down.
const SPLIT_DEPTH_MAX: usize = 64;
/// The live subtrees (first path not blocked) the tree is split into, at least, where it
/// has that many large ones, whatever the threads and shards: with reduction the split
/// decides which paths are run (each fixed prefix frame explores every alternative not
/// asleep), so it must not depend on them. Sleep sets keep every completed path a distinct
/// class, so a deeper split adds redundant (blocked) paths and the split's own probes, not
/// schedules.
pub(crate) const SPLIT_TASKS: usize = 1024;
/// A subtree whose estimate ([`Part::size`]) is at most this is not split further: the
/// split's probes go to the large subtrees, where the work is (on the examples, 2^16 gives
/// shards within 3 % of an even share, and a small tree is not cut into tasks of a path or
/// two each, which cost a probe and a redundant path apiece).
const SPLIT_SMALL: u64 = 1 << 16;
/// Bytes one class key costs in the set (key, hash-table slot and slack), for the memory
/// ceiling.
const KEY_BYTES: u64 = 40;

/// Which search runs: the one choice that decides reduction, symmetry and time together, so
/// that no combination the explorer cannot run (a timed search with reduction) can be asked
/// for or written in a shard's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// The plain depth-first enumeration of every interleaving.
    Plain,
    /// Source-DPOR with sleep sets ([`reduction`]), folding `count` copies when `symmetry`
    /// ([`symmetry`]).
    Reduced { symmetry: bool },
    /// Only the orders the latency bounds allow, a `lognormal` kept between these quantiles
    /// ([`timed`]): the plain enumeration, since partial-order reduction is not sound with
    /// time.
    Timed(Quantiles),
}

impl Search {
    /// Whether partial-order reduction is on.
    pub fn reduction(self) -> bool {
        matches!(self, Search::Reduced { .. })
    }

    /// Whether copies are folded.
    pub fn symmetry(self) -> bool {
        matches!(self, Search::Reduced { symmetry: true })
    }

    /// The quantiles of a timed search (`None`: time abstracted).
    pub fn timed(self) -> Option<Quantiles> {
        match self {
            Search::Timed(q) => Some(q),
            _ => None,
        }
    }
}

/// How to explore.
#[derive(Clone)]
pub struct ExploreConfig<'a> {
    pub runtime: Stack,
    pub search: Search,
    /// Park polling loops ([`park`]; untimed only).
    pub park: bool,
    pub steps_per_agent: u64,
    /// Stop after this many schedules (cannot tell).
    pub max_schedules: Option<u64>,
    /// Stop when the class set would pass this many MiB (cannot tell).
    pub max_memory_mb: Option<u64>,
    pub threads: usize,
    pub on_missing: Option<OnMissing>,
    /// Set (by a signal handler) to stop the search (cannot tell).
    pub cancel: Option<&'a AtomicBool>,
    /// Called now and then with (schedules, classes) so far.
    pub progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
    /// Keep the digest of every final history (for tests that compare searches).
    pub keep_histories: bool,
    /// Resume each path from a snapshot of the engine where it diverges from the last one
    /// instead of re-running its prefix (untimed only; the search is the same either way).
    pub snapshots: bool,
    /// Keep the states seen and end a path at one seen before ([`Stateful`]; with
    /// [`Search::Plain`] only).
    pub stateful: bool,
}

/// What a stateful search kept: the states are keyed before every agent step by an
/// abstraction that keeps the futures and the anomaly sets and drops the log, times and
/// (without a step budget) the step counts (`Engine::state_key` in `engine::snapshot`; a
/// scenario that retracts keeps the concrete fingerprint). The tasks of the split share one
/// set ([`seen`]): a path that reaches a state done before ends there, unrecorded, and one
/// that reaches a state earlier on itself ends there recorded (a loop closed), so a state
/// is expanded once whatever the threads (a state open on another thread's path is expanded
/// again: see [`seen`] for why). The anomaly sets and the verdicts do not depend on the
/// threads; with more than one, which path reached a state first does, and with it the
/// witnesses, `schedules`, `merged` and (where the key merges states whose futures differ
/// in what it leaves out) `states`. Each shard of a sharded search keeps its
/// own set: a state two shards meet is expanded in both, and the merge adds their counts.
/// `--max-memory-mb` bounds the set: past it the search stops, *cannot tell*.
/// The anomaly sets and the verdicts are the stateless plain search's where that one
/// finishes (`stateful_and_stateless_agree`). Partial-order reduction is not combined with it:
/// source-DPOR finds its backtrack points from the races of complete paths, which a path
/// ended at a seen state does not have (the problem stateful DPOR, Yang, Chen, Gopalakrishnan
/// and Kirby, SPIN 2008, solves with a visible-operation graph this search does not keep).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stateful {
    /// States kept (summed over the shards of a merged search: a state two shards meet
    /// counts twice).
    pub states: u64,
    /// Paths that ended at a state seen before (on another path, or on themselves: a loop
    /// closed, and such a path is recorded as an end).
    pub merged: u64,
}

/// What a stateful search keeps across threads.
#[derive(Default)]
struct StateCounts {
    seen: Arc<seen::Seen>,
    merged: AtomicU64,
}

impl<'a> ExploreConfig<'a> {
    /// Reduction and symmetry on, the default budget, no ceilings, one thread.
    pub fn new(runtime: Stack) -> Self {
        ExploreConfig {
            runtime,
            search: Search::Reduced { symmetry: true },
            park: true,
            steps_per_agent: STEPS_PER_AGENT_DEFAULT,
            max_schedules: None,
            max_memory_mb: None,
            threads: 1,
            on_missing: None,
            cancel: None,
            progress: None,
            keep_histories: false,
            snapshots: true,
            stateful: false,
        }
    }
}

/// What stopped an incomplete search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    Schedules,
    Memory,
    Signal,
}

/// The verdict on one anomaly: *unreachable* only from a complete search of a scenario that
/// can produce the anomaly; *cannot tell* otherwise ([`Finding::why`] says why).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    Reachable,
    Unreachable,
    CannotTell,
}

/// The shortest path found to one anomaly set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    pub anomalies: Vec<Anomaly>,
    pub events: u64,
    pub line: ReplayLine,
}

impl Witness {
    /// Shorter first: fewer events, then fewer non-default choices, then the schedule text.
    fn rank(&self) -> (u64, usize, String) {
        (
            self.events,
            self.line.schedule.deviations(),
            self.line.schedule.to_string(),
        )
    }

    /// `self.rank() < other.rank()`, rendering the schedules only on a tie of the rest (every
    /// path is offered as a witness: rendering two schedules a path was a tenth of its cost).
    fn shorter_than(&self, other: &Witness) -> bool {
        let key = |w: &Witness| (w.events, w.line.schedule.deviations());
        match key(self).cmp(&key(other)) {
            std::cmp::Ordering::Equal => self.rank() < other.rank(),
            o => o == std::cmp::Ordering::Less,
        }
    }
}

/// One anomaly's verdict and, when reachable, its shortest witness.
#[derive(Clone, Debug)]
pub struct Finding {
    pub anomaly: Anomaly,
    pub reach: Reach,
    pub witness: Option<Witness>,
    /// Why a *cannot tell*: `Vacuous` (the scenario cannot produce it under this runtime) or
    /// `Budget` (a bound cut the search before a path showed it); `None` otherwise.
    pub why: Option<Reason>,
}

impl Finding {
    /// The verdict on "the anomaly never happens": *holds* when unreachable, *violated* when
    /// reachable, else *cannot tell* with [`Finding::why`].
    pub fn never(&self) -> Verdict {
        match (self.reach, &self.why) {
            (Reach::Reachable, _) => Verdict::Violated,
            (Reach::Unreachable, _) => Verdict::Holds,
            (Reach::CannotTell, Some(r)) => Verdict::CannotTell(r.clone()),
            (Reach::CannotTell, None) => {
                Verdict::CannotTell(Reason::Budget("the search did not finish".to_owned()))
            }
        }
    }

    /// Whether the verdict is *cannot tell, vacuous*.
    pub fn vacuous(&self) -> bool {
        matches!(self.why, Some(Reason::Vacuous(_)))
    }
}

/// The paths a bound cut, by bound (a path may count under more than one). A search with any
/// of them, or stopped ([`Exploration::stopped`]), is not complete.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cut {
    /// Paths on which the per-agent step budget stopped an agent that had steps left.
    pub steps_per_agent: u64,
    /// Paths cut by the scenario's `events_max`.
    pub events_max: u64,
    /// Paths of a scenario whose `repeat` was capped ([`Scenario::with_repeat_cap`]): every
    /// path, since each is a prefix of a run at the scenario's own counts.
    pub repeat: u64,
}

impl Cut {
    /// Whether some path was cut.
    pub fn any(&self) -> bool {
        self.steps_per_agent + self.events_max + self.repeat > 0
    }
}

/// The result of an exploration.
#[derive(Clone, Debug)]
pub struct Exploration {
    pub runtime: Stack,
    /// The search run; `Reduced { symmetry: true }` only where copies were folded: counts
    /// are then up to renaming copies ([`symmetry`]).
    pub search: Search,
    /// Whether polling loops were parked, when the scenario has one (`None`: no loop).
    pub parking: Option<bool>,
    pub steps_per_agent: u64,
    /// What the stateful search kept (`None`: a stateless search).
    pub stateful: Option<Stateful>,
    /// Every path of the (reduced) tree was run to its end: nothing stopped the search and no
    /// bound cut a path ([`Exploration::cut`]). Only then is an anomaly no path showed
    /// unreachable.
    pub complete: bool,
    pub stopped: Option<Stopped>,
    /// Paths run.
    pub schedules: u64,
    /// Distinct equivalence classes among them (see [`reduction`]).
    pub classes: u64,
    /// Paths on which the step budget stopped an agent that had steps left.
    pub budget_cut: u64,
    /// Paths cut by the scenario's `events_max`.
    pub truncated: u64,
    /// The scenario's `events_max` (for the reason of a search it cut).
    pub events_max: u64,
    /// The repeat cap the scenario was explored at, when it lowered some agent's `repeat`.
    pub repeat_cap: Option<u32>,
    /// Paths that ended with an agent parked in a polling loop: it would poll forever, each
    /// iteration a repeat of the last (see [`park`]).
    pub spinning: u64,
    /// The anomaly sets of the paths on which every agent finished its script (none cut,
    /// truncated or spinning), kept with the histories (when asked for; not carried by
    /// shards).
    pub finished: std::collections::BTreeSet<Vec<Anomaly>>,
    /// Paths the reduction stopped as redundant (only agents in the sleep set were left to
    /// run): run in part, neither recorded nor counted in `schedules`.
    pub redundant: u64,
    /// The most choice points on one path.
    pub depth_max: u64,
    /// Every exhibited anomaly set (lattice point; the empty set included), with its
    /// shortest witness.
    pub sets: BTreeMap<Vec<Anomaly>, Witness>,
    /// One per reported anomaly (`metrics::reported`), in that order.
    pub findings: Vec<Finding>,
    /// Digests of the final histories when asked for: normalised (a read time counts only
    /// the records that write a cell, see [`reduction`]) and up to renaming copies (see
    /// [`symmetry`]).
    pub histories: Option<std::collections::BTreeSet<u64>>,
}

impl Exploration {
    /// Whether partial-order reduction was on.
    pub fn reduction(&self) -> bool {
        self.search.reduction()
    }

    /// Whether copies were folded.
    pub fn symmetry(&self) -> bool {
        self.search.symmetry()
    }

    /// The quantiles of a timed exploration (`None`: time abstracted).
    pub fn timed(&self) -> Option<Quantiles> {
        self.search.timed()
    }

    /// The finding on `a`.
    pub fn finding(&self, a: Anomaly) -> Option<&Finding> {
        self.findings.iter().find(|f| f.anomaly == a)
    }

    /// What an *unreachable* verdict holds over: "over every interleaving", and for a timed
    /// search the bounds it holds under. (Only a complete search says unreachable.)
    pub fn bound_text(&self) -> String {
        let base = "over every interleaving".to_owned();
        match self.timed() {
            Some(q) => format!("{base} {}", timed::holds_under(q)),
            None => base,
        }
    }

    /// The paths each bound cut.
    pub fn cut(&self) -> Cut {
        Cut {
            steps_per_agent: self.budget_cut,
            events_max: self.truncated,
            repeat: if self.repeat_cap.is_some() {
                self.schedules
            } else {
                0
            },
        }
    }

    /// Why the search decides nothing it did not find: what stopped it and what cut how many
    /// paths, or `None` for a complete search.
    pub fn budget_reason(&self) -> Option<Reason> {
        let cut = self.cut();
        let mut parts: Vec<String> = Vec::new();
        match self.stopped {
            None => {}
            Some(Stopped::Schedules) => parts.push(format!(
                "the schedule ceiling stopped the search after {} schedules",
                self.schedules
            )),
            Some(Stopped::Memory) => parts.push(format!(
                "the memory ceiling stopped the search after {} schedules",
                self.schedules
            )),
            Some(Stopped::Signal) => parts.push(format!(
                "a signal stopped the search after {} schedules",
                self.schedules
            )),
        }
        let paths = |n: u64| {
            if n == 1 {
                "1 path".to_owned()
            } else {
                format!("{n} paths")
            }
        };
        if cut.steps_per_agent > 0 {
            parts.push(format!(
                "no witness within {} steps per agent: the step budget cut {}",
                self.steps_per_agent,
                paths(cut.steps_per_agent)
            ));
        }
        if cut.events_max > 0 {
            parts.push(format!(
                "events_max = {} cut {}",
                self.events_max,
                paths(cut.events_max)
            ));
        }
        if let Some(n) = self.repeat_cap.filter(|_| cut.repeat > 0) {
            parts.push(format!(
                "the repeat cap (repeat ≤ {n}) bounds every path, {}",
                paths(cut.repeat)
            ));
        }
        (!parts.is_empty()).then(|| Reason::Budget(parts.join("; ")))
    }

    /// The verdict on "`a` never happens" ([`Finding::never`]); *cannot tell* for an anomaly
    /// the explorer does not report.
    pub fn never(&self, a: Anomaly) -> Verdict {
        match self.finding(a) {
            Some(f) => f.never(),
            None => Verdict::CannotTell(Reason::Undecidable(format!(
                "the explorer does not report {a}"
            ))),
        }
    }
}

/// Why a scenario cannot be explored.
#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(
        "{0}: scenarios with [cpl] (messages between agents) are not explored; \
         use `agentsim simulate`"
    )]
    Cpl(String),
    #[error("--steps-per-agent must be at least 1")]
    Budget,
    #[error(
        "the stateful search is the plain enumeration (untimed, without partial-order \
         reduction: source-DPOR finds its backtrack points on complete paths, and a path \
         ended at a state seen before is not one)"
    )]
    StatefulSearch,
    #[error(
        "--steps-per-agent unbounded needs --stateful: a stateless search has no other end \
         for a path through a loop than the budget"
    )]
    Unbounded,
}

/// What the paths of one or more tasks found.
#[derive(Default)]
struct Found {
    sets: BTreeMap<Vec<Anomaly>, Witness>,
    finished: std::collections::BTreeSet<Vec<Anomaly>>,
    budget_cut: u64,
    truncated: u64,
    spinning: u64,
    depth_max: u64,
    histories: std::collections::BTreeSet<u64>,
}

impl Found {
    fn add_witness(&mut self, w: Witness) {
        match self.sets.get(&w.anomalies) {
            Some(old) if !w.shorter_than(old) => {}
            _ => {
                self.sets.insert(w.anomalies.clone(), w);
            }
        }
    }

    fn merge(&mut self, other: Found) {
        for (_, w) in other.sets {
            self.add_witness(w);
        }
        self.finished.extend(other.finished);
        self.budget_cut += other.budget_cut;
        self.truncated += other.truncated;
        self.spinning += other.spinning;
        self.depth_max = self.depth_max.max(other.depth_max);
        self.histories.extend(other.histories);
    }
}

/// State the threads share.
struct Shared<'c> {
    cfg: &'c ExploreConfig<'c>,
    schedules: AtomicU64,
    classes: Mutex<HashSet<u128>>,
    redundant: AtomicU64,
    stop: Mutex<Option<Stopped>>,
    halt: AtomicBool,
    states: StateCounts,
}

impl Shared<'_> {
    fn halt(&self, why: Stopped) {
        let mut s = self.stop.lock().expect("no thread panics holding it");
        s.get_or_insert(why);
        self.halt.store(true, Ordering::SeqCst);
    }

    fn halted(&self) -> bool {
        if self.cfg.cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
            self.halt(Stopped::Signal);
        }
        self.halt.load(Ordering::SeqCst)
    }
}

/// Explores `sc` under `cfg`: every path of the choice tree (reduced unless
/// `cfg.search` is plain or timed), or as many as the budgets allow.
pub fn explore(sc: &Scenario, cfg: &ExploreConfig<'_>) -> Result<Exploration, ExploreError> {
    let ran = run_tasks(sc, cfg, None)?;
    let classes = ran.classes.len() as u64;
    let mut ex = conclude(
        sc,
        parking(sc, cfg),
        cfg,
        ran.found,
        ran.stopped,
        ran.schedules,
        classes,
    );
    ex.redundant = ran.redundant;
    ex.stateful = ran.stateful;
    Ok(ex)
}

/// What a set of tasks ran: [`Found`], what stopped them, the paths run and their class keys.
struct Ran {
    found: Found,
    stopped: Option<Stopped>,
    schedules: u64,
    classes: HashSet<u128>,
    /// Paths the reduction cut as redundant.
    redundant: u64,
    /// Tasks the tree was split into.
    tasks: usize,
    /// The indices of the tasks run, ascending.
    ran: Vec<u64>,
    /// What a stateful search kept.
    stateful: Option<Stateful>,
}

/// Splits the tree into tasks ([`split`]) and runs them, or shard `I` of `N`'s share of them
/// ([`owners`]), on `cfg.threads` threads. One split for every run, sharded or not and
/// whatever the threads: with reduction the split decides which paths run.
fn run_tasks(
    sc: &Scenario,
    cfg: &ExploreConfig<'_>,
    shard: Option<(u64, u64)>,
) -> Result<Ran, ExploreError> {
    if sc.cpl.is_some() {
        return Err(ExploreError::Cpl(sc.file.display().to_string()));
    }
    if cfg.steps_per_agent == 0 {
        return Err(ExploreError::Budget);
    }
    if cfg.stateful && cfg.search != Search::Plain {
        return Err(ExploreError::StatefulSearch);
    }
    if cfg.steps_per_agent == STEPS_UNBOUNDED && !cfg.stateful {
        return Err(ExploreError::Unbounded);
    }
    let parts = split(sc, cfg, SPLIT_TASKS)?;
    let mine: Vec<bool> = match shard {
        None => vec![true; parts.len()],
        Some((index, count)) => owners(&parts, count)
            .into_iter()
            .map(|o| o == index - 1)
            .collect(),
    };
    let all: Vec<Vec<u32>> = parts.into_iter().map(|p| p.prefix).collect();
    run_list(sc, cfg, &all, |i| mine[i])
}

/// The shard (0-based, of `count`) that runs each task: the live tasks (first path not
/// blocked) dealt round in tree order from the first shard, the blocked ones (next to no
/// work each, but a path each) from the last. Neighbouring subtrees are alike, so dealing
/// them round spreads the work; a function of the split and the count alone.
pub(super) fn owners(parts: &[Part], count: u64) -> Vec<u64> {
    assert!(count >= 1, "at least one shard");
    let (mut live, mut blocked) = (0u64, 0u64);
    parts
        .iter()
        .map(|p| {
            if p.blocked {
                blocked += 1;
                count - 1 - (blocked - 1) % count
            } else {
                live += 1;
                (live - 1) % count
            }
        })
        .collect()
}

/// Runs the tasks of `all` whose index `keep` selects, on `cfg.threads` threads.
fn run_list(
    sc: &Scenario,
    cfg: &ExploreConfig<'_>,
    all: &[Vec<u32>],
    keep: impl Fn(usize) -> bool,
) -> Result<Ran, ExploreError> {
    let threads = cfg.threads.max(1);
    let count = all.len();
    let ran: Vec<u64> = (0..count).filter(|&i| keep(i)).map(|i| i as u64).collect();
    let tasks: Vec<&Vec<u32>> = ran.iter().map(|&i| &all[i as usize]).collect();
    let shared = Shared {
        cfg,
        schedules: AtomicU64::new(0),
        classes: Mutex::new(HashSet::new()),
        redundant: AtomicU64::new(0),
        stop: Mutex::new(None),
        halt: AtomicBool::new(false),
        states: StateCounts::default(),
    };
    let next = AtomicUsize::new(0);
    let work = || -> Result<Found, ExploreError> {
        let mut found = Found::default();
        loop {
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(prefix) = tasks.get(i) else {
                return Ok(found);
            };
            found.merge(task(sc, &shared, prefix)?);
        }
    };
    let parts: Vec<Result<Found, ExploreError>> = if threads == 1 {
        vec![work()]
    } else {
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads).map(|_| s.spawn(work)).collect();
            hs.into_iter()
                .map(|h| h.join().expect("an exploring thread panicked"))
                .collect()
        })
    };
    let mut found = Found::default();
    for p in parts {
        found.merge(p?);
    }
    let stopped = *shared.stop.lock().expect("threads are done");
    Ok(Ran {
        found,
        stopped,
        schedules: shared.schedules.load(Ordering::SeqCst),
        classes: shared.classes.into_inner().expect("threads are done"),
        redundant: shared.redundant.load(Ordering::SeqCst),
        tasks: count,
        ran,
        stateful: cfg.stateful.then(|| Stateful {
            states: shared.states.seen.len(),
            merged: shared.states.merged.load(Ordering::SeqCst),
        }),
    })
}

/// The verdicts from what the paths found: reachable with a witness; else *cannot tell,
/// vacuous* when the scenario cannot produce the anomaly under the runtime, *cannot tell*
/// with the budget reason when a bound cut the search, unreachable otherwise.
fn conclude(
    sc: &Scenario,
    parking: Option<bool>,
    cfg: &ExploreConfig<'_>,
    found: Found,
    stopped: Option<Stopped>,
    schedules: u64,
    classes: u64,
) -> Exploration {
    let mut ex = Exploration {
        runtime: cfg.runtime,
        search: match cfg.search {
            Search::Reduced { .. } => Search::Reduced {
                symmetry: symmetric(cfg),
            },
            s => s,
        },
        parking,
        steps_per_agent: cfg.steps_per_agent,
        stateful: None,
        complete: false,
        stopped,
        schedules,
        classes,
        budget_cut: found.budget_cut,
        truncated: found.truncated,
        events_max: sc.events_max,
        repeat_cap: sc.repeat_cap,
        spinning: found.spinning,
        finished: found.finished,
        redundant: 0,
        depth_max: found.depth_max,
        sets: found.sets,
        findings: Vec::new(),
        histories: cfg.keep_histories.then_some(found.histories),
    };
    let budget = ex.budget_reason();
    ex.complete = budget.is_none();
    ex.findings = reported()
        .map(|a| {
            let witness = ex
                .sets
                .values()
                .filter(|w| w.anomalies.contains(&a))
                .min_by_key(|w| w.rank())
                .cloned();
            let vacuous = crate::vacuity::vacuous(sc, cfg.runtime, a).map(Reason::Vacuous);
            let (reach, why) = match (&witness, vacuous, &budget) {
                (Some(_), _, _) => (Reach::Reachable, None),
                (None, Some(v), _) => (Reach::CannotTell, Some(v)),
                (None, None, Some(b)) => (Reach::CannotTell, Some(b.clone())),
                (None, None, None) => (Reach::Unreachable, None),
            };
            Finding {
                anomaly: a,
                reach,
                witness,
                why,
            }
        })
        .collect();
    ex
}

/// Whether `cfg` folds interchangeable copies: asked for (with reduction, untimed).
fn symmetric(cfg: &ExploreConfig<'_>) -> bool {
    cfg.search.symmetry()
}

/// The copies the walker folds under `cfg`.
fn copies(sc: &Scenario, cfg: &ExploreConfig<'_>) -> Copies {
    if symmetric(cfg) {
        Copies::of(sc)
    } else {
        Copies::none()
    }
}

/// Whether `cfg`'s walkers resume paths from engine snapshots: asked for, untimed (zones
/// are left to re-execution).
fn snapshots(cfg: &ExploreConfig<'_>) -> bool {
    cfg.snapshots && cfg.search.timed().is_none()
}

/// Runs the engine once along `w`'s path, keeping snapshots in `snaps` and resuming from
/// them when given.
fn run_path(
    sc: &Scenario,
    cfg: &ExploreConfig<'_>,
    w: &mut Walker,
    pool: &mut Pool,
    snaps: Option<&mut Snapshots<Stack>>,
) -> Result<TrialRun, SimError> {
    let generator = generator(sc, cfg.on_missing);
    let mut timed;
    let scheduler: &mut dyn crate::scheduler::Scheduler = match cfg.search.timed() {
        Some(q) => {
            timed = timed::Timed::new(w, q);
            &mut timed
        }
        None => w,
    };
    let setup = TrialSetup {
        scenario: sc,
        trial_seed: trial_seed(sc.seed, 0),
        generator: generator.as_ref(),
        scheduler,
        stop: None,
        trace: false,
        record: false,
    };
    let build = || cfg.runtime.build(sc.registry(), sc.provenance);
    match snaps {
        Some(s) => run_trial_resumable(build, setup, pool, s),
        None => run_trial_in(build(), setup, pool),
    }
}

/// One task of the split: a prefix of choices and what the first path below it showed.
#[derive(Clone, Debug)]
pub(super) struct Part {
    pub prefix: Vec<u32>,
    /// The alternatives at the first choice point past the prefix (`None`: a leaf).
    alts: Option<Vec<u32>>,
    /// The first path was cut as redundant (its sleep set blocks it): the subtree is not
    /// split further, and shards share such tasks apart from the live ones.
    pub blocked: bool,
    /// The product of the alternatives at the choice points of the first path past the
    /// prefix, saturating (Knuth's estimate of the subtree along one path; with reduction an
    /// overestimate, since it counts alternatives the backtrack sets may never take).
    pub size: u64,
}

/// Runs the first path below `prefix`.
fn probe(
    sc: &Scenario,
    cfg: &ExploreConfig<'_>,
    prefix: Vec<u32>,
    pool: &mut Pool,
) -> Result<Part, ExploreError> {
    // A stateful probe ends its path where the path meets a state of its own again (a loop
    // closed), as the task's search will: without it a path through a loop runs to
    // `events_max` when there is no step budget.
    let mut w = Walker::new(&prefix, cfg.search.reduction(), cfg.steps_per_agent)
        .with_copies(copies(sc, cfg))
        .with_park(parks(cfg))
        .with_states(cfg.stateful);
    run_path(sc, cfg, &mut w, pool, None)?;
    let alts = w.alternatives_at(prefix.len());
    let mut size = 1u64;
    let mut i = prefix.len();
    while let Some(a) = w.alternatives_at(i) {
        size = size.saturating_mul(a.len().max(1) as u64);
        i += 1;
    }
    Ok(Part {
        prefix,
        alts,
        blocked: w.blocked(),
        size,
    })
}

/// Splits the tree by prefix, breadth first, until it has `want` live subtrees or none is
/// left to cut, cutting only the subtrees whose first path is not blocked (a blocked first
/// path is, in practice, a subtree of redundant paths) and whose estimate is above
/// [`SPLIT_SMALL`]: the list is in tree order and depends on the scenario and `cfg` alone.
fn split(sc: &Scenario, cfg: &ExploreConfig<'_>, want: usize) -> Result<Vec<Part>, ExploreError> {
    let mut pool = Pool::default();
    let mut parts = vec![probe(sc, cfg, Vec::new(), &mut pool)?];
    for _ in 0..SPLIT_DEPTH_MAX {
        let live = parts.iter().filter(|p| !p.blocked).count();
        if live >= want {
            break;
        }
        let mut next = Vec::with_capacity(parts.len() * 2);
        let mut grew = false;
        for p in parts {
            match (&p.alts, p.blocked) {
                (Some(alts), false) if !alts.is_empty() && p.size > SPLIT_SMALL => {
                    grew |= alts.len() > 1;
                    for &a in alts {
                        let mut q = p.prefix.clone();
                        q.push(a);
                        next.push(probe(sc, cfg, q, &mut pool)?);
                    }
                }
                _ => next.push(p),
            }
        }
        parts = next;
        if !grew {
            break;
        }
    }
    Ok(parts)
}

/// Explores the subtree below `prefix`.
fn task(sc: &Scenario, shared: &Shared<'_>, prefix: &[u32]) -> Result<Found, ExploreError> {
    let cfg = shared.cfg;
    let mut w = Walker::new(prefix, cfg.search.reduction(), cfg.steps_per_agent)
        .with_copies(copies(sc, cfg))
        .with_park(parks(cfg))
        .with_snapshots(snapshots(cfg))
        .with_states(cfg.stateful)
        .with_seen(Arc::clone(&shared.states.seen));
    walk_task(sc, shared, &mut w)
}

/// Runs `w`'s paths until its subtree is done or the search halts.
fn walk_task(sc: &Scenario, shared: &Shared<'_>, w: &mut Walker) -> Result<Found, ExploreError> {
    let cfg = shared.cfg;
    let mut found = Found::default();
    let mut pool = Pool::default();
    let mut snaps = Snapshots::default();
    loop {
        if shared.halted() {
            return Ok(found);
        }
        let keep = snapshots(cfg).then_some(&mut snaps);
        let run = run_path(sc, cfg, w, &mut pool, keep)?;
        if cfg.stateful && over_memory(cfg, w.states(), 0) {
            // The set of states passed the ceiling: what this path found is not recorded,
            // and the search is cannot tell.
            shared.halt(Stopped::Memory);
            return Ok(found);
        }
        // A path that closed a loop is recorded as a path end (the infinite run around the
        // loop); one that met another path's state is not: that state's ends were recorded.
        if w.merged() {
            shared.states.merged.fetch_add(1, Ordering::SeqCst);
            if !w.backtrack() {
                return Ok(found);
            }
            continue;
        }
        if w.lasso() {
            shared.states.merged.fetch_add(1, Ordering::SeqCst);
        }
        if w.blocked() && !w.lasso() {
            shared.redundant.fetch_add(1, Ordering::SeqCst);
            if !w.backtrack() {
                return Ok(found);
            }
            continue;
        }
        record(sc, cfg, run, w, &mut found);
        let n = shared.schedules.fetch_add(1, Ordering::SeqCst) + 1;
        let classes = {
            let mut set = shared.classes.lock().expect("no thread panics holding it");
            set.insert(w.class_key());
            set.len() as u64
        };
        if let Some(p) = cfg.progress.filter(|_| n.is_multiple_of(4096)) {
            p(n, classes);
        }
        if cfg.max_schedules.is_some_and(|m| n >= m) {
            shared.halt(Stopped::Schedules);
        }
        if over_memory(cfg, if cfg.stateful { w.states() } else { 0 }, classes) {
            shared.halt(Stopped::Memory);
        }
        if !w.backtrack() {
            return Ok(found);
        }
    }
}

/// Whether `states` states of a stateful search and `classes` class keys pass the memory
/// ceiling.
fn over_memory(cfg: &ExploreConfig<'_>, states: u64, classes: u64) -> bool {
    let bytes = states
        .saturating_mul(seen::STATE_BYTES)
        .saturating_add(classes.saturating_mul(KEY_BYTES));
    cfg.max_memory_mb
        .is_some_and(|mb| bytes > mb.saturating_mul(1 << 20))
}

/// Detects the anomalies of one path's history and keeps its witness if it is the shortest.
fn record(sc: &Scenario, cfg: &ExploreConfig<'_>, run: TrialRun, w: &Walker, found: &mut Found) {
    // The path's records move into its history: nothing else reads them.
    let history = History::from_records(run.records);
    let report = detect(&history);
    let (lattice, residue) = (report.anomalies(), !report.a3_residue.is_empty());
    let anomalies: Vec<Anomaly> = reported()
        .filter(|&a| exhibits(&lattice, residue, a))
        .collect();
    found.budget_cut += u64::from(run.counters.budget_cut);
    found.truncated += u64::from(run.counters.truncated);
    found.spinning += u64::from(run.counters.spinning);
    let ended = !(run.counters.budget_cut || run.counters.truncated || run.counters.spinning);
    if cfg.keep_histories && ended {
        found.finished.insert(anomalies.clone());
    }
    found.depth_max = found.depth_max.max(w.depth() as u64);
    if cfg.keep_histories {
        // Normalised and up to renaming copies, so that searches with and without the
        // reduction or symmetry compare.
        found
            .histories
            .insert(Copies::of(sc).history_digest(&reduction::normalised(&history.records)));
    }
    let schedule: Schedule = run.schedule;
    found.add_witness(Witness {
        anomalies,
        events: run.counters.events,
        line: ReplayLine {
            scenario: sc.file.clone(),
            runtime: cfg.runtime,
            seed: sc.seed,
            trial: 0,
            schedule,
            on_missing: cfg.on_missing,
            repeat_max: sc.repeat_cap,
        },
    });
}

#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod stateful_tests;
#[cfg(test)]
pub(crate) mod tests;
