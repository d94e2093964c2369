//! Parking polling loops in abstract time (the engine's half of `explore`'s parking; the
//! argument that it loses no anomaly set is in the `explore` module's "Polling loops").
//!
//! A *loop iteration* of an agent runs from one of its taken backward `branch` steps (or the
//! trial's start) to the next. Each cell has a version, bumped when a committed record writes
//! it; a global epoch is bumped by anything else that can change what a begin reads or what
//! a commit decides (a retraction, a registry change, an abort, a cascade, a compensation).
//! An iteration is *clean* when it had no effect (no step that writes the store or the
//! registry, no drop, abort or retry), took no data choice (`prob`, `pick`, effect order),
//! ended with no operation open, and nothing it read (its begins' cells, and the epoch) was
//! bumped since it started. At a backward branch, the agent is *parked* when the iteration
//! just finished is clean and the one before it was too, from the same local state (label,
//! repetition, retry count, last read values) over the same versions: the next iteration
//! would repeat it exactly. A parked agent is not enabled until one of those versions (or
//! the epoch) moves; its first step after that is taken as a read of the store and the
//! registry, so that the reduction orders it after the write that woke it.

use crate::scenario::{Scenario, Step};
use agentsim_models::names::{Cell, Value};

/// Whether `sc` has a polling loop (a `branch` back to its own step or an earlier one) and no
/// agent behind an MCP client (whose cached tool list is state this bookkeeping does not
/// follow): parking applies to it.
pub fn loops(sc: &Scenario) -> bool {
    let back = |steps: &[Step]| {
        steps
            .iter()
            .enumerate()
            .any(|(i, s)| matches!(s, Step::Branch { target, .. } if *target <= i))
    };
    sc.agents.iter().all(|a| a.mcp_client.is_none())
        && sc.agents.iter().any(|a| back(&a.script.steps))
}

/// Where an agent's last clean iteration ended: the state the next one starts from and the
/// versions it read.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Mark {
    head: usize,
    rep: u32,
    attempts: u32,
    last_read: Vec<(Cell, Value)>,
    reads: Vec<(Cell, u64)>,
    epoch: u64,
}

/// One agent's loop bookkeeping.
#[derive(Clone, Debug, Default, Hash)]
struct Loop {
    /// The current iteration's begins' cells with their versions then.
    reads: Vec<(Cell, u64)>,
    /// The epoch when the current iteration started.
    epoch: u64,
    /// The current iteration had an effect or took a data choice.
    spoiled: bool,
    /// The last iteration, if it was clean.
    mark: Option<Mark>,
    /// Parked on these versions and this epoch.
    parked: Option<(Vec<(Cell, u64)>, u64)>,
    /// Woken and not stepped since.
    woke: bool,
}

/// The versions and every agent's loop bookkeeping of one trial.
#[derive(Clone, Hash)]
pub(super) struct Spin {
    on: bool,
    versions: Vec<u64>,
    epoch: u64,
    agents: Vec<Loop>,
}

impl Spin {
    /// Off: nothing is tracked and no agent parks.
    pub(super) fn off() -> Spin {
        Spin {
            on: false,
            versions: Vec::new(),
            epoch: 0,
            agents: Vec::new(),
        }
    }

    /// On, for `agents` agents.
    pub(super) fn new(agents: usize) -> Spin {
        Spin {
            on: true,
            versions: Vec::new(),
            epoch: 0,
            agents: vec![Loop::default(); agents],
        }
    }

    pub(super) fn on(&self) -> bool {
        self.on
    }

    /// Agent `a`'s begin read `cells`.
    pub(super) fn read(&mut self, a: usize, cells: impl Iterator<Item = Cell>) {
        if !self.on {
            return;
        }
        let l = &mut self.agents[a];
        for c in cells {
            l.reads
                .push((c, self.versions.get(c.index()).copied().unwrap_or(0)));
        }
    }

    /// Agent `a`'s iteration had an effect or took a data choice.
    pub(super) fn spoil(&mut self, a: usize) {
        if let Some(l) = self.agents.get_mut(a) {
            l.spoiled = true;
        }
    }

    /// Feeds `h` this bookkeeping with every stored version and epoch replaced by whether it
    /// is behind the current one (the state key's form, `engine::snapshot`): the bookkeeping
    /// only ever asks whether a stored version is the current one (`current`: a clean
    /// iteration, a wake), or whether a new mark equals the last, and a new mark is clean, so
    /// all its versions are current: a last mark equals it only if its own are current too.
    /// So "behind or not" keeps every answer, while the absolute counters grow on every
    /// commit, and even the distances grow without bound when an agent that does not loop
    /// (or loops slowly) keeps an old read beside a writer that does. The reads are fed as a
    /// set.
    pub(super) fn hash_relative<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        self.on.hash(h);
        let behind = |c: Cell, v: u64| {
            let now = self.versions.get(c.index()).copied().unwrap_or(0);
            (c, now != v)
        };
        // As a set: `looped` sorts and dedups an iteration's reads before it reads them, and
        // an iteration that never ends (an agent without a loop retrying) keeps adding one.
        let rel = |reads: &[(Cell, u64)]| -> Vec<(Cell, bool)> {
            let mut r: Vec<(Cell, bool)> = reads.iter().map(|&(c, v)| behind(c, v)).collect();
            r.sort_unstable();
            r.dedup();
            r
        };
        for l in &self.agents {
            rel(&l.reads).hash(h);
            (self.epoch != l.epoch).hash(h);
            l.spoiled.hash(h);
            l.mark
                .as_ref()
                .map(|m| {
                    (
                        m.head,
                        m.rep,
                        m.attempts,
                        &m.last_read,
                        rel(&m.reads),
                        self.epoch != m.epoch,
                    )
                })
                .hash(h);
            l.parked
                .as_ref()
                .map(|(r, e)| (rel(r), self.epoch != *e))
                .hash(h);
            l.woke.hash(h);
        }
    }

    /// A committed record wrote `c`.
    pub(super) fn bump(&mut self, c: Cell) {
        if self.versions.len() <= c.index() {
            self.versions.resize(c.index() + 1, 0);
        }
        self.versions[c.index()] += 1;
    }

    /// Something that may change any read happened.
    pub(super) fn bump_all(&mut self) {
        self.epoch += 1;
    }

    fn current(&self, reads: &[(Cell, u64)], epoch: u64) -> bool {
        epoch == self.epoch
            && reads
                .iter()
                .all(|&(c, v)| self.versions.get(c.index()).copied().unwrap_or(0) == v)
    }

    /// Agent `a` took a backward branch to `head` and is now in the given state: ends its
    /// iteration, parking it if the iteration repeats the last one cleanly.
    pub(super) fn looped(
        &mut self,
        a: usize,
        head: usize,
        rep: u32,
        attempts: u32,
        open: bool,
        last_read: &[(Cell, Value)],
    ) {
        if !self.on {
            return;
        }
        let mut reads = std::mem::take(&mut self.agents[a].reads);
        reads.sort_unstable();
        reads.dedup();
        let l = &self.agents[a];
        let clean = !l.spoiled && !open && self.current(&reads, l.epoch);
        let mark = clean.then(|| Mark {
            head,
            rep,
            attempts,
            last_read: last_read.to_vec(),
            reads,
            epoch: l.epoch,
        });
        let epoch = self.epoch;
        let l = &mut self.agents[a];
        if let Some(m) = mark.as_ref().filter(|&m| l.mark.as_ref() == Some(m)) {
            l.parked = Some((m.reads.clone(), m.epoch));
        }
        l.mark = mark;
        l.spoiled = false;
        l.epoch = epoch;
    }

    /// Wakes every parked agent whose versions moved.
    pub(super) fn wake(&mut self) {
        if !self.on {
            return;
        }
        for a in 0..self.agents.len() {
            if let Some((reads, epoch)) = &self.agents[a].parked {
                if !self.current(reads, *epoch) {
                    let l = &mut self.agents[a];
                    l.parked = None;
                    l.woke = true;
                }
            }
        }
    }

    /// Whether agent `a` is parked.
    pub(super) fn parked(&self, a: usize) -> bool {
        self.agents.get(a).is_some_and(|l| l.parked.is_some())
    }

    /// Whether agent `a`'s next step is its first since it was woken.
    pub(super) fn woke(&self, a: usize) -> bool {
        self.agents.get(a).is_some_and(|l| l.woke)
    }

    /// Agent `a` steps.
    pub(super) fn stepped(&mut self, a: usize) {
        if let Some(l) = self.agents.get_mut(a) {
            l.woke = false;
        }
    }
}
