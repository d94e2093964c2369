//! Snapshots of an abstract-time trial at agent choice points, so that a search by
//! re-execution can resume a path where it diverges instead of re-running its prefix.
//!
//! A snapshot is the whole mutable state of the engine (the runtime and its store, the rng,
//! the agents, the counters, the choices made, the MCP clients, the polling-loop state) at
//! an agent choice point, taken before anything of the point is counted or asked: resuming
//! re-enters the event loop's iteration from its top, which recomputes the same enabled set
//! (waking parked agents is idempotent) and asks the chooser at the same choice point. The
//! chooser decides where to keep one and where to resume ([`Chooser::checkpoint`],
//! [`Chooser::resume_at`]) and keeps its own state beside it; the engine keeps its part here.
//! A snapshot at choice point `k` stays valid for every later trial whose choices before `k`
//! are the same, so only those past the point a trial resumes at are dropped.
//!
//! Only abstract time without zones, tracing, recording, `[cpl]` messages or a `stop`
//! takes snapshots (the trace and the recording lines are not part of the state, and timed
//! exploration's zones are left to re-execution). What this does not prove: that the state
//! copied is the whole state; the explore tests compare every search with and without
//! snapshots, byte for byte.
//!
//! [`Chooser::checkpoint`]: crate::scheduler::Chooser::checkpoint
//! [`Chooser::resume_at`]: crate::scheduler::Chooser::resume_at

use super::{mcp, spin, AgentState, Counters, Engine};
use agentsim_models::runtime::{Guarded, Runtime};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// The engine's mutable state at one agent choice point.
#[derive(Clone)]
pub(super) struct Snap<R: Runtime> {
    rt: Guarded<R>,
    rng: ChaCha8Rng,
    agents: Vec<AgentState>,
    now_ms: u64,
    c: Counters,
    record_tokens: Vec<u64>,
    event: u64,
    cur: (usize, usize),
    mcp: mcp::Clients,
    picks: BTreeMap<u64, u32>,
    points: u64,
    steps: Vec<u64>,
    spin: spin::Spin,
}

impl<R: Runtime> Snap<R> {
    /// The runtime (its store) as it was.
    pub(super) fn runtime(&self) -> &Guarded<R> {
        &self.rt
    }

    /// The path to it: the non-zero choices by choice point, the events run, and whether
    /// polling loops are parked.
    pub(super) fn path(&self) -> (&BTreeMap<u64, u32>, u64, bool) {
        (&self.picks, self.event, self.spin.on())
    }
}

/// The snapshots one search keeps along its current path, by choice point (ascending).
pub struct Snapshots<R: Runtime> {
    kept: Vec<(u64, Snap<R>)>,
}

impl<R: Runtime> Default for Snapshots<R> {
    fn default() -> Self {
        Snapshots { kept: Vec::new() }
    }
}

impl<R: Runtime> Snapshots<R> {
    /// How many are kept.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Drops those past choice point `point` (all of them for `None`): the chooser resumes
    /// there, so the choices after it change.
    pub(super) fn keep_upto(&mut self, point: Option<u64>) {
        match point {
            Some(p) => self.kept.retain(|&(k, _)| k <= p),
            None => self.kept.clear(),
        }
    }

    /// The one at choice point `point`.
    pub(super) fn at(&self, point: u64) -> &Snap<R> {
        let last = self.kept.last().expect("a resume has a snapshot");
        assert_eq!(last.0, point, "a trial resumes at the last snapshot kept");
        &last.1
    }

    /// Keeps `snap`, taken at choice point `point`, past every one kept.
    pub(super) fn push(&mut self, point: u64, snap: Snap<R>) {
        assert!(
            self.kept.last().is_none_or(|&(k, _)| k < point),
            "snapshots are taken in path order, one a choice point"
        );
        self.kept.push((point, snap));
    }
}

impl<R: Runtime> Engine<'_, R> {
    /// The state now, at an agent choice point.
    pub(super) fn snapshot(&self) -> Snap<R> {
        Snap {
            rt: self.rt.clone(),
            rng: self.rng.clone(),
            agents: self.agents.clone(),
            now_ms: self.now_ms,
            c: self.c.clone(),
            record_tokens: self.record_tokens.clone(),
            event: self.event,
            cur: self.cur,
            mcp: self.mcp.clone(),
            picks: self.picks.clone(),
            points: self.points,
            steps: self.steps.clone(),
            spin: self.spin.clone(),
        }
    }

    /// A 128-bit fingerprint of the state now, at an agent choice point: of everything a
    /// snapshot holds that decides what happens next or what the history is (the runtime
    /// with its store and log, the rng's position, the agents, time, the event count that
    /// `events_max` reads, the records' tokens, the MCP clients, the steps each agent took,
    /// the polling-loop state), and not of what only records the path (the choices made, the
    /// choice point count, the counters but for events). Two states with one fingerprint
    /// (but for a collision, of probability at most n²/2¹²⁹ over n states) run the same
    /// futures from here and have the same log, so a search may follow one of them only.
    /// Two SipHash-1-3 digests with fixed keys (`DefaultHasher::new`), the second over a
    /// leading word: deterministic within a build, and no hash order is read.
    pub(super) fn fingerprint(&self) -> u128 {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let mut halves = [DefaultHasher::new(), DefaultHasher::new()];
        halves[1].write_u64(0x9e37_79b9_7f4a_7c15);
        for h in &mut halves {
            self.rt.hash(h);
            self.rng.get_word_pos().hash(h);
            self.rng.get_stream().hash(h);
            self.agents.hash(h);
            self.now_ms.hash(h);
            self.c.events.hash(h);
            self.record_tokens.hash(h);
            self.event.hash(h);
            self.mcp.hash(h);
            self.steps.hash(h);
            self.spin.hash(h);
        }
        (u128::from(halves[0].finish()) << 64) | u128::from(halves[1].finish())
    }

    /// At an agent choice point, before it is counted: keeps a snapshot here if the trial
    /// keeps them and the chooser asks for one.
    pub(super) fn checkpoint(&mut self) {
        if self.snaps.is_none() {
            return;
        }
        let point = self.points;
        if !self
            .chooser
            .as_deref_mut()
            .is_some_and(|c| c.checkpoint(point))
        {
            return;
        }
        let snap = self.snapshot();
        let snaps = self.snaps.as_deref_mut().expect("checked above");
        snaps.push(point, snap);
    }

    /// Puts the state of `s` back (reusing this engine's buffers where it can), but for the
    /// runtime, which the engine was built with (a copy of [`Snap::runtime`]).
    pub(super) fn restore(&mut self, s: &Snap<R>) {
        let Snap {
            rt: _,
            rng,
            agents,
            now_ms,
            c,
            record_tokens,
            event,
            cur,
            mcp,
            picks,
            points,
            steps,
            spin,
        } = s;
        self.rng.clone_from(rng);
        self.agents.clone_from(agents);
        self.now_ms = *now_ms;
        self.c.clone_from(c);
        self.record_tokens.clone_from(record_tokens);
        self.event = *event;
        self.cur = *cur;
        self.mcp.clone_from(mcp);
        self.picks.clone_from(picks);
        self.points = *points;
        self.steps.clone_from(steps);
        self.spin.clone_from(spin);
        self.parked.clear();
    }
}
