//! The walker: one path through the tree of choice points, and the backtracking that moves it
//! to the next path (depth-first search by re-execution, as shuttle and CHESS do: the engine
//! is run again over a prefix of choices, and no state is hashed). A path resumes from an
//! engine snapshot at the last choice point before it diverges where one was kept
//! (`engine::Snapshots`): the walker keeps its own state of the path there beside it (steps,
//! sleep set, copies started), and asks for one only where a later path is known to diverge.
//!
//! Without reduction every choice point explores every alternative. With it, an agent choice
//! point explores its backtrack set less its sleep set (source-DPOR with sleep sets, see
//! [`super::reduction`]): the first path through it takes the first enabled agent that is not
//! asleep, and after each path the races of the path add agents to the backtrack sets of the
//! choice points before them. A sleeping agent is not chosen; it wakes when a step dependent
//! with its next one runs. A path on which only sleeping agents are left is redundant (every
//! trace through it is explored elsewhere): the walker halts the trial there and the path is
//! neither recorded nor counted as a schedule. Data choice points keep every alternative.
//!
//! Frames of the fixed prefix (a task's share of the tree, see `split`) explore every
//! alternative that is not asleep, each in its own task: races pointing into them are
//! ignored, and a task starts with the sleep set the sequential search would have there (the
//! earlier alternatives at each fixed agent choice point), so the search is the same whatever
//! the threads.
//!
//! With symmetry ([`super::symmetry`]) an unstarted copy that has an interchangeable
//! lower-indexed copy unstarted is never taken at an agent choice point, a fixed prefix
//! frame's included (it counts as asleep there), and a race that asks for it asks for that
//! lower copy instead.

use super::reduction::{Event, Hb};
use super::seen::{Met, Seen};
use super::symmetry::Copies;
use crate::digest::Fnv1a;
use crate::scheduler::{Access, ChoiceKind, ChoicePoint, Chooser, Footprint, Scheduler, Use};
use std::sync::Arc;

/// An agent choice point under reduction.
#[derive(Clone, Debug)]
struct AgentFrame {
    enabled: Vec<usize>,
    access: Vec<Access>,
    /// Asleep on entry, or a copy folded by symmetry (never explored here).
    asleep: Vec<bool>,
    backtrack: Vec<bool>,
    done: Vec<bool>,
    cur: usize,
    /// The agents parked in a polling loop here (not enabled).
    parked: Vec<usize>,
}

/// The alternatives explored at one choice point and the one the current path takes.
#[derive(Clone, Debug)]
struct Frame {
    alts: Vec<u32>,
    next: usize,
    /// The number of alternatives the engine offered (0: a fixed prefix frame, unchecked).
    n: usize,
    /// Set for an agent choice point under reduction (then `alts` is unused).
    dpor: Option<Box<AgentFrame>>,
    /// An agent choice point (a fixed prefix frame: unknown, `false`).
    agent: bool,
}

impl Frame {
    fn choice(&self) -> u32 {
        match &self.dpor {
            Some(d) => d.cur as u32,
            None => self.alts[self.next],
        }
    }

    /// Whether a later path takes another alternative here, as far as is known now (with
    /// reduction, a race may still add one).
    fn pending(&self) -> bool {
        match &self.dpor {
            Some(d) => (0..d.enabled.len())
                .any(|k| k != d.cur && d.backtrack[k] && !d.done[k] && !d.asleep[k]),
            None => self.next + 1 < self.alts.len(),
        }
    }
}

/// The most snapshots one walker keeps (they are kept at distinct choice points of the
/// current path, so the path's depth bounds them too).
const SNAPSHOTS_MAX: usize = 256;

/// The walker's own state at a choice point where the engine kept a snapshot.
#[derive(Clone, Debug)]
struct Kept {
    point: usize,
    events: usize,
    sleep: Vec<(usize, Access)>,
    started: Vec<bool>,
    /// The path's keys before the one of this point (delivered again on resuming).
    keys: usize,
}

/// A path through the choice tree, driving the engine as its [`Chooser`].
pub(super) struct Walker {
    frames: Vec<Frame>,
    /// The next frame the running trial reaches.
    cursor: usize,
    /// Frames below this index are the task's fixed prefix: never backtracked.
    fixed: usize,
    reduction: bool,
    steps_per_agent: u64,
    /// The steps of the path so far.
    events: Vec<Event>,
    /// The agent choice point the next step was chosen at.
    chosen_at: Option<usize>,
    /// The sleep set: agents not to run, with the access of their next step.
    sleep: Vec<(usize, Access)>,
    /// Only sleeping agents were left: the path is redundant and the trial stops.
    blocked: bool,
    /// Happens-before of the path just run, once computed.
    hb: Option<Hb>,
    /// The interchangeable copies (none: no symmetry).
    copies: Copies,
    /// Which agents have stepped on the path so far (with symmetry only).
    started: Vec<bool>,
    /// Park polling loops (see [`super::park`]).
    park: bool,
    /// Ask the engine for snapshots and resume from them (see `engine::Snapshots`).
    snapshots: bool,
    /// Where snapshots are kept on the current path (ascending), and whether the next path
    /// resumes at the last of them.
    kept: Vec<Kept>,
    resume: bool,
    /// Keep the states seen at agent choice points and end a path at one seen before (plain
    /// enumeration only; see [`super::Search`]).
    stateful: bool,
    /// The states met before agent steps, shared with the walkers of the other tasks
    /// ([`super::seen`]).
    seen: Arc<Seen>,
    /// The states this walker expands on the current path (met new, or open on another
    /// walker's path), with the choice point each was met before, ascending: each is done
    /// once the walker backtracks above that point.
    open: Vec<(u128, usize)>,
    /// The path just run reached a state seen before and ended there.
    merged: bool,
    /// … and that state was its own, earlier on it: the path closed a loop (a lasso).
    lasso: bool,
    /// The keys of the states the current path met, in order.
    path_keys: Vec<u128>,
}

impl Walker {
    /// A walker over the subtree below `prefix` (choices at the first choice points).
    pub(super) fn new(prefix: &[u32], reduction: bool, steps_per_agent: u64) -> Self {
        Walker {
            frames: prefix
                .iter()
                .map(|&c| Frame {
                    alts: vec![c],
                    next: 0,
                    n: 0,
                    dpor: None,
                    agent: false,
                })
                .collect(),
            cursor: 0,
            fixed: prefix.len(),
            reduction,
            steps_per_agent,
            events: Vec::new(),
            chosen_at: None,
            sleep: Vec::new(),
            blocked: false,
            hb: None,
            copies: Copies::none(),
            started: Vec::new(),
            park: false,
            snapshots: false,
            kept: Vec::new(),
            resume: false,
            stateful: false,
            seen: Arc::default(),
            open: Vec::new(),
            merged: false,
            lasso: false,
            path_keys: Vec::new(),
        }
    }

    /// The same walker, ending a path at a state seen before or not. Sound for the plain
    /// enumeration only: it is depth-first search with a seen set, which expands every
    /// reachable state once (a state met again, on an earlier path or on the current one,
    /// is being or has been expanded there), so every reachable state and every path end is
    /// met; the key carries the anomalies shown so far, so equal keys end with equal sets.
    /// The walker has a set of its own until [`Walker::with_seen`] shares one.
    pub(super) fn with_states(mut self, on: bool) -> Self {
        assert!(
            !(on && self.reduction),
            "a stateful walker enumerates plainly"
        );
        self.stateful = on;
        self
    }

    /// The same walker, meeting states in `seen`, which other walkers share
    /// ([`super::seen`]: a state another walker has done ends a path here).
    pub(super) fn with_seen(mut self, seen: Arc<Seen>) -> Self {
        self.seen = seen;
        self
    }

    /// Whether the path just run ended at a state seen before on another path (its futures
    /// were run there).
    pub(super) fn merged(&self) -> bool {
        self.merged && !self.lasso
    }

    /// Whether the path just run ended where it met a state of its own again: a loop
    /// closed, and the path stands for the infinite run around it, whose anomaly set is
    /// the one shown so far (the key, which carries it, repeats).
    pub(super) fn lasso(&self) -> bool {
        self.lasso
    }

    /// The states met in this walker's set (shared: by every walker that shares it).
    pub(super) fn states(&self) -> u64 {
        self.seen.len()
    }

    /// The same walker, resuming paths from engine snapshots or not.
    pub(super) fn with_snapshots(mut self, on: bool) -> Self {
        self.snapshots = on;
        self
    }

    /// Whether a snapshot before choice point `at` pays: a later path diverges at it or at
    /// one of the data choice points of the step it starts, as far as is known now (a new
    /// choice point: only without reduction, where every one is taken both ways).
    fn worth_keeping(&self, at: usize) -> bool {
        let Some(first) = self.frames.get(at) else {
            return !self.reduction;
        };
        first.pending()
            || self.frames[at + 1..]
                .iter()
                .take_while(|f| !f.agent)
                .any(Frame::pending)
    }

    /// The same walker, asking the engine to park polling loops or not.
    pub(super) fn with_park(mut self, park: bool) -> Self {
        self.park = park;
        self
    }

    /// The same walker, taking only the canonical one of interchangeable copies (see
    /// [`super::symmetry`]); meant with reduction on.
    pub(super) fn with_copies(mut self, copies: Copies) -> Self {
        self.started = vec![false; copies.agents()];
        self.copies = copies;
        self
    }

    /// Whether agent `a` is the one of its interchangeable copies the search takes now.
    fn canonical(&self, a: usize) -> bool {
        let started = |b: usize| self.started.get(b).copied().unwrap_or(true);
        self.copies.canonical(a, started) == a
    }

    /// Whether the path just run was cut as redundant (sleep-set blocked).
    pub(super) fn blocked(&self) -> bool {
        self.blocked
    }

    /// The class key (Mazurkiewicz trace) of the path just run.
    pub(super) fn class_key(&mut self) -> u128 {
        let hb = self.hb.get_or_insert_with(|| Hb::new(&self.events));
        hb.class_key(&self.events)
    }

    /// Choice points on the path just run.
    pub(super) fn depth(&self) -> usize {
        self.cursor
    }

    /// The alternatives at frame `i` of the path just run, if it reached one: for a split,
    /// every alternative not asleep there.
    pub(super) fn alternatives_at(&self, i: usize) -> Option<Vec<u32>> {
        self.frames.get(i).map(|f| match &f.dpor {
            Some(d) => (0..d.enabled.len())
                .filter(|&k| !d.asleep[k])
                .map(|k| k as u32)
                .collect(),
            None => f.alts.clone(),
        })
    }

    /// Adds what the races of the path just run call for to the backtrack sets.
    fn add_backtracks(&mut self) {
        let hb = self.hb.take().unwrap_or_else(|| Hb::new(&self.events));
        for &(i, j) in &hb.races {
            let Some(fi) = self.events[i].frame else {
                // Every agent with a later step was enabled at step i, so a race has a
                // choice point before it; nothing to do where there is none.
                continue;
            };
            if fi < self.fixed {
                continue;
            }
            let Some(d) = self.frames[fi].dpor.as_deref_mut() else {
                continue;
            };
            let racer = self.events[j].agent;
            if d.parked.contains(&racer) {
                // The racing agent was parked at step i: its step can come first only after
                // a write that wakes it, between the two and not after step i; with none
                // the race is not reversible (a parked poll is not enabled before the write
                // that wakes it), so it asks for nothing.
                let writes =
                    |e: &Event| e.access.store == Use::Write || e.access.registry == Use::Write;
                let woken =
                    (i + 1..j).any(|k| !hb.before(&self.events, i, k) && writes(&self.events[k]));
                if !woken {
                    continue;
                }
            }
            // With symmetry, an unstarted copy stands for the lowest unstarted one of its class
            // (the agents that stepped before step i are those started at its choice point).
            let before = &self.events[..i];
            let canon = |a: usize| {
                let started = |b: usize| before.iter().any(|e| e.agent == b);
                self.copies.canonical(a, started)
            };
            let mut initials: Vec<usize> = Vec::new();
            for a in hb.initials(&self.events, i, j) {
                let c = canon(a);
                if !initials.contains(&c) {
                    initials.push(c);
                }
            }
            let pos = |a: usize| d.enabled.iter().position(|&e| e == a);
            if initials
                .iter()
                .any(|&a| pos(a).is_some_and(|k| d.backtrack[k]))
            {
                continue;
            }
            // The racing agent first, then any initial, each preferably awake here.
            let racer = canon(self.events[j].agent);
            let order = initials
                .iter()
                .filter(|&&a| a == racer)
                .chain(initials.iter().filter(|&&a| a != racer));
            let awake = order
                .clone()
                .find_map(|&a| pos(a).filter(|&k| !d.asleep[k]));
            let pick = awake.or_else(|| order.clone().find_map(|&a| pos(a)));
            match pick {
                Some(k) => d.backtrack[k] = true,
                // Not expected (every initial steps later, so was enabled here); explore
                // everything rather than miss a trace.
                None => d.backtrack.iter_mut().for_each(|b| *b = true),
            }
        }
    }

    /// Moves to the next path; `false` when the subtree is exhausted.
    pub(super) fn backtrack(&mut self) -> bool {
        assert!(
            self.cursor == self.frames.len(),
            "a path reaches every frame it fixed (the engine is deterministic)"
        );
        if self.reduction {
            self.add_backtracks();
        }
        let more = self.next_path();
        // Snapshots past the choice point the next path diverges at are of another path.
        let diverge = self.frames.len().saturating_sub(1);
        // The states met past it have had every path below them run (deepest first: a
        // state is done only after the states below it on the path).
        while let Some(&(key, at)) = self.open.last() {
            if more && at <= diverge {
                break;
            }
            self.seen.close(key);
            self.open.pop();
        }
        self.kept.retain(|k| more && k.point <= diverge);
        self.resume = !self.kept.is_empty();
        more
    }

    /// Moves the last frames to the next path's choices; `false` when none is left.
    fn next_path(&mut self) -> bool {
        while self.frames.len() > self.fixed {
            let f = self.frames.last_mut().expect("frames past the prefix");
            match f.dpor.as_deref_mut() {
                Some(d) => {
                    d.done[d.cur] = true;
                    if let Some(k) =
                        (0..d.enabled.len()).find(|&k| d.backtrack[k] && !d.done[k] && !d.asleep[k])
                    {
                        d.cur = k;
                        return true;
                    }
                }
                None => {
                    if f.next + 1 < f.alts.len() {
                        f.next += 1;
                        return true;
                    }
                }
            }
            self.frames.pop();
        }
        false
    }

    /// An agent choice point under reduction: the frame's choice, or a new frame's first
    /// agent not asleep; sets the sleep set the chosen step starts from.
    fn pick_agent(&mut self, p: &ChoicePoint<'_>) -> Option<usize> {
        assert_eq!(p.access.len(), p.n, "an access per enabled agent");
        let asleep = |a: usize, sleep: &[(usize, Access)]| sleep.iter().any(|&(s, _)| s == a);
        match self.frames.get(self.cursor) {
            Some(f) if f.dpor.is_none() => {
                // A fixed prefix frame: the alternatives before it run in other tasks.
                assert!(self.cursor < self.fixed, "an agent frame is an agent frame");
                let c = f.alts[f.next] as usize;
                assert!(
                    c >= p.n || self.canonical(p.enabled[c]),
                    "a split offers no folded copy"
                );
                // Folded copies were explored in no task: they do not go to sleep.
                for k in 0..c.min(p.n) {
                    if !asleep(p.enabled[k], &self.sleep) && self.canonical(p.enabled[k]) {
                        self.sleep.push((p.enabled[k], p.access[k]));
                    }
                }
                Some(c)
            }
            Some(f) => {
                let d = f.dpor.as_deref().expect("an agent frame");
                assert_eq!(
                    d.enabled, p.enabled,
                    "a replayed prefix meets the same agents"
                );
                for k in 0..d.enabled.len() {
                    if d.done[k] && k != d.cur && !asleep(d.enabled[k], &self.sleep) {
                        self.sleep.push((d.enabled[k], d.access[k]));
                    }
                }
                Some(d.cur)
            }
            None => {
                let asleep: Vec<bool> = p
                    .enabled
                    .iter()
                    .map(|&a| asleep(a, &self.sleep) || !self.canonical(a))
                    .collect();
                let cur = asleep.iter().position(|&s| !s)?;
                let mut backtrack = vec![false; p.n];
                backtrack[cur] = true;
                self.frames.push(Frame {
                    alts: Vec::new(),
                    next: 0,
                    n: p.n,
                    agent: true,
                    dpor: Some(Box::new(AgentFrame {
                        enabled: p.enabled.to_vec(),
                        access: p.access.to_vec(),
                        asleep,
                        backtrack,
                        done: vec![false; p.n],
                        cur,
                        parked: p.parked.to_vec(),
                    })),
                });
                Some(cur)
            }
        }
    }
}

impl Chooser for Walker {
    fn start(&mut self) {
        self.chosen_at = None;
        self.blocked = false;
        self.merged = false;
        self.lasso = false;
        self.hb = None;
        match self.kept.last().filter(|_| self.resume) {
            // The path so far is the last one's up to the snapshot (the choices before it
            // are the same), so its steps and sleep set are too.
            Some(k) => {
                self.cursor = k.point;
                self.events.truncate(k.events);
                self.path_keys.truncate(k.keys);
                self.sleep.clone_from(&k.sleep);
                self.started.clone_from(&k.started);
            }
            None => {
                self.cursor = 0;
                self.events.clear();
                self.path_keys.clear();
                self.sleep.clear();
                self.started.iter_mut().for_each(|s| *s = false);
            }
        }
    }

    fn pick(&mut self, p: &ChoicePoint<'_>) -> usize {
        assert!(p.n >= 2, "a choice point has two alternatives or more");
        if self.blocked {
            // The trial stops before its next step; this one's choices are not explored.
            return 0;
        }
        let at = self.cursor;
        let k = if self.reduction && p.kind == ChoiceKind::Agent {
            match self.pick_agent(p) {
                Some(k) => k,
                None => {
                    self.blocked = true;
                    return 0;
                }
            }
        } else {
            match self.frames.get(self.cursor) {
                Some(f) => {
                    assert!(
                        f.n == 0 || f.n == p.n,
                        "a replayed prefix meets the same choice points (determinism)"
                    );
                    f.choice() as usize
                }
                None => {
                    self.frames.push(Frame {
                        alts: (0..p.n as u32).collect(),
                        next: 0,
                        n: p.n,
                        dpor: None,
                        agent: p.kind == ChoiceKind::Agent,
                    });
                    0
                }
            }
        };
        assert!(k < p.n, "the alternative is offered");
        self.cursor += 1;
        match p.kind {
            ChoiceKind::Agent => self.chosen_at = Some(at),
            kind => {
                if let Some(e) = self.events.last_mut() {
                    let mut h = Fnv1a::new();
                    h.word(e.label);
                    h.word(kind as u64);
                    h.word(k as u64);
                    e.label = h.finish();
                }
            }
        }
        k
    }

    fn stepped(&mut self, _agent: usize, _footprint: Footprint) {}

    fn accessed(&mut self, agent: usize, access: Access) {
        if self.blocked {
            return;
        }
        if self.sleep.iter().any(|&(s, _)| s == agent) {
            // The only agent left to run is asleep.
            self.blocked = true;
            return;
        }
        if let Some(s) = self.started.get_mut(agent) {
            *s = true;
        }
        self.sleep.retain(|(_, a)| !a.conflicts(&access));
        self.events.push(Event {
            agent,
            access,
            frame: self.chosen_at.take(),
            label: 0,
        });
    }

    fn halted(&self) -> bool {
        self.blocked
    }

    fn steps_per_agent(&self) -> Option<u64> {
        (self.steps_per_agent != super::STEPS_UNBOUNDED).then_some(self.steps_per_agent)
    }

    fn parks(&self) -> bool {
        self.park
    }

    fn stateful(&self) -> bool {
        self.stateful
    }

    fn state(&mut self, key: u128) {
        // Past the frames of the path so far, a state on the path ends it (a loop closed),
        // and so does one another walker has done; one open on another walker's path is
        // expanded again ([`super::seen`]). At or before them, the state is this path's
        // own, met when the prefix first ran; a state of the task's fixed prefix is put in
        // the set (open: this walker runs only part of what is below it), so that the
        // states met are every state reached, whichever walker reached it first.
        if self.blocked {
            return;
        }
        if self.cursor >= self.frames.len() {
            if self.path_keys.contains(&key) {
                self.merged = true;
                self.lasso = true;
                self.blocked = true;
            } else {
                match self.seen.meet(key) {
                    Met::Done => {
                        self.merged = true;
                        self.blocked = true;
                    }
                    Met::New | Met::Open => self.open.push((key, self.cursor)),
                }
            }
        } else if self.cursor < self.fixed {
            self.seen.meet(key);
        }
        self.path_keys.push(key);
    }

    fn checkpoint(&mut self, point: u64) -> bool {
        if !self.snapshots || self.blocked {
            return false;
        }
        let at = point as usize;
        assert_eq!(
            at, self.cursor,
            "the engine counts the choice points the walker sees"
        );
        let fresh = self.kept.last().is_none_or(|k| k.point < at);
        if at < self.fixed || !fresh || self.kept.len() >= SNAPSHOTS_MAX {
            return false;
        }
        if !self.worth_keeping(at) {
            return false;
        }
        assert!(self.chosen_at.is_none(), "between two steps");
        self.kept.push(Kept {
            point: at,
            events: self.events.len(),
            sleep: self.sleep.clone(),
            started: self.started.clone(),
            // The engine gave this point's key just before (a stateful trial gives one before
            // every step) and gives it again on resuming here.
            keys: self
                .path_keys
                .len()
                .saturating_sub(usize::from(self.stateful)),
        });
        true
    }

    fn resume_at(&self) -> Option<u64> {
        self.kept
            .last()
            .filter(|_| self.resume)
            .map(|k| k.point as u64)
    }
}

impl Scheduler for Walker {
    fn start_trial(&mut self, _trial_seed: u64, _agents: usize, _steps_hint: usize) {}

    fn choose(&mut self, _event: u64, _enabled: &[usize]) -> usize {
        unreachable!("a walker drives abstract-time trials only, through its chooser")
    }

    fn chooser(&mut self) -> Option<&mut dyn Chooser> {
        Some(self)
    }
}
