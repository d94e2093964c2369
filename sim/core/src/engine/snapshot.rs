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
use crate::scenario::{Scenario, Step};
use agentsim_models::anomaly::Anomaly;
use agentsim_models::detect::stream::{Limits, Options, Stream};
use agentsim_models::names::{Agent, Cell, Value};
use agentsim_models::runtime::{Guarded, Runtime};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// How many keys the tests have checked against the whole log's facts.
#[cfg(test)]
pub static KEY_CHECKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What [`Engine::state_key`] knows of the path's detection state (its "what it holds",
/// third item, and the per-op flags of the second).
#[derive(Clone, Debug, PartialEq, Eq)]
struct KeyFacts {
    /// The lattice anomalies the log exhibits, and whether it exhibits the A3 residue.
    sticky: (Vec<Anomaly>, bool),
    /// The (cell, value) pairs live records have written, sorted.
    written: Vec<(Cell, Value)>,
    /// Each op in flight's `[newer, stale, dead, residue]`, in agent order.
    flags: Vec<(Agent, [bool; 4])>,
}

/// The detection state the key reads, kept up to date as the log grows (records are only
/// appended, and without retraction a record's status never changes: what was computed of
/// the records taken stays true). Part of a snapshot, so a resumed path goes on from it.
#[derive(Clone)]
pub(super) struct KeyState {
    /// Records taken so far (a prefix of the log).
    upto: usize,
    /// The streaming detector over them (counts only, no window: SPEC §3's verdicts).
    stream: Stream,
    /// Each (cell, value) a live record wrote, with the first such record.
    written: BTreeMap<(Cell, Value), usize>,
    /// Each op in flight's flags, by agent, as of record `upto` of it.
    ops: BTreeMap<Agent, OpFlags>,
}

impl Default for KeyState {
    fn default() -> Self {
        KeyState {
            upto: 0,
            stream: Stream::new(Options {
                limits: Limits::unbounded(0),
                residue: true,
                keep_agents: false,
            }),
            written: BTreeMap::new(),
            ops: BTreeMap::new(),
        }
    }
}

/// One op in flight's flags, with what identifies it (an op of the same agent with the same
/// read time and values read has the same flags) and the records they cover.
#[derive(Clone)]
struct OpFlags {
    read_time: u64,
    seen: Vec<(Cell, Value)>,
    upto: usize,
    /// `[newer, stale, dead, residue]` (see [`Engine::state_key`]).
    flags: [bool; 4],
}

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
    key: KeyState,
}

impl<R: Runtime> Snap<R> {
    /// The runtime (its store) as it was.
    pub(super) fn runtime(&self) -> &Guarded<R> {
        &self.rt
    }

    /// The path to it: the non-zero choices by choice point, the events run, whether
    /// polling loops are parked, and the choice points met.
    pub(super) fn path(&self) -> (&BTreeMap<u64, u32>, u64, bool, u64) {
        (&self.picks, self.event, self.spin.on(), self.points)
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
            key: self.key.clone(),
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

    /// The key of the state now, at an agent choice point, for the stateful search: a
    /// 128-bit digest of an abstraction of the state that decides the same futures *and*
    /// the same anomalies, already shown or still to come, as the concrete state
    /// ([`Engine::fingerprint`]), without what grows along a path. Where [`abstracts`]
    /// refuses the scenario it is the fingerprint itself.
    ///
    /// What it holds:
    /// * Control: each agent's program counter, repetition, retry count, done flag, whether
    ///   its event is parked (`[cpl]`), its last read values (what `branch` tests), and its
    ///   operation when one is open (read step, planned tool, values read, generation output
    ///   and tool calls, the effects issued with their completion order) — not latencies,
    ///   tokens or due times, which abstract time never reads. The MCP clients as they are.
    ///   The steps each agent took only when a step budget is set (`None`: unbounded). Not
    ///   the event count: `events_max` still cuts a path that runs that long, and a cut
    ///   search is cannot tell; a complete one expanded every state it met, so what it finds
    ///   unreachable is unreachable at any length, and what it finds reachable has a
    ///   witness path the engine ran under every bound. The polling-loop bookkeeping with
    ///   versions relative to the current ones (`spin`).
    /// * The store (SPEC §1): memory, registry and stack as they are; each in-flight op's
    ///   request, read values and registry, and in place of its read time and preds the
    ///   facts the runtimes and detectors read from them (SPEC §5.2's retraction-free
    ///   summary): `newer` (a live record written since the read wrote a read cell:
    ///   `validate`'s verdict), `stale` (… by another agent with a value other than the one
    ///   read: A1 once the op commits), `dead` (a pred is aborted: `validate-preds`, A3) and
    ///   `residue` (a non-NULL value read that no earlier live record wrote: A3 residue).
    /// * The path's detection state: the anomalies the log exhibits so far (sticky bits:
    ///   without retraction a record's witnesses are complete when it is appended and a live
    ///   record stays live, so they never go away), and the (cell, value) pairs live records
    ///   have written (what a later read's residue check asks).
    ///
    /// Not in it: the log, absolute times and indices, the rng's position (abstract time
    /// draws from it only latencies, tokens and backoffs; every draw that changes the history
    /// is a choice), the counters. So two states with one key have the same futures from here
    /// and every path from either ends with the same anomaly set (but for a collision, as for
    /// the fingerprint); their histories differ.
    ///
    /// The detection facts (the sticky bits, the pairs written and the per-op flags) are
    /// kept up to date as records are appended ([`KeyState`]: the streaming detector of
    /// SPEC §3 takes each new record once, and each open op's flags look only at the records
    /// appended since they were last brought up to date), so a key costs the state's size,
    /// not the log's. [`Engine::key_facts_spec`] computes the same facts from the whole log
    /// (the definition above, read literally); the tests compare the two at every key.
    pub(super) fn state_key(&mut self) -> u128 {
        if !abstracts(self.sc) {
            return self.fingerprint();
        }
        let facts = self.key_facts();
        #[cfg(test)]
        {
            assert!(
                facts == self.key_facts_spec(),
                "the incremental key facts are the whole log's"
            );
            KEY_CHECKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.hash_key(&facts)
    }

    /// The key of the state now from `facts` (the detection facts of the path so far).
    fn hash_key(&self, facts: &KeyFacts) -> u128 {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let store = self.rt.store();
        let pending: Vec<_> = store
            .inflight()
            .iter()
            .zip(&facts.flags)
            .map(|((&agent, p), &(a, flags))| {
                debug_assert_eq!(agent, a, "one flag set an op in flight, in agent order");
                (
                    &p.request,
                    &p.snapshot.read_values,
                    &p.snapshot.registry,
                    flags,
                )
            })
            .collect();
        let budget = self
            .chooser
            .as_deref()
            .and_then(|c| c.steps_per_agent())
            .is_some();
        let mut halves = [DefaultHasher::new(), DefaultHasher::new()];
        halves[1].write_u64(0x9e37_79b9_7f4a_7c15);
        for h in &mut halves {
            self.rt.stack().hash(h);
            store.memory().hash(h);
            store.registry().hash(h);
            pending.hash(h);
            facts.sticky.hash(h);
            facts.written.hash(h);
            for a in &self.agents {
                (a.pc, a.rep, a.done, a.attempts, a.open).hash(h);
                (a.due_ms == super::messages::PARKED).hash(h);
                a.last_read.hash(h);
                if a.open {
                    let op = &a.op;
                    (op.read_pc, op.planned, &op.read, op.issued).hash(h);
                    op.output
                        .as_ref()
                        .map(|(step, _, g)| (step, &g.output, &g.tool_calls))
                        .hash(h);
                    if op.issued {
                        op.commit.hash(h);
                    }
                }
            }
            self.mcp.hash(h);
            if budget {
                self.steps.hash(h);
            }
            self.spin.hash_relative(h);
        }
        (u128::from(halves[0].finish()) << 64) | u128::from(halves[1].finish())
    }

    /// The detection facts of the state now, brought up to date from [`KeyState`]: the
    /// records appended since the last key go to the streaming detector and the written
    /// pairs, and each op in flight has its flags extended over them (or computed afresh
    /// for an op not seen before).
    fn key_facts(&mut self) -> KeyFacts {
        let store = self.rt.store();
        let log = store.log();
        let k = &mut self.key;
        for (i, r) in log.iter().enumerate().skip(k.upto) {
            k.stream
                .push(r, i as u64, &mut ())
                .expect("the engine's log is in order, with earlier preds");
            if !r.aborted {
                for &c in &r.write_set {
                    k.written.entry((c, r.write_values.get(c))).or_insert(i);
                }
            }
        }
        if k.upto < log.len() {
            // The engine's write times are distinct (one record a tick), so no read waits for
            // a record still to come: settling now gives the verdicts the whole log gives.
            k.stream.close(&mut ());
            k.upto = log.len();
        }
        let summary = k.stream.summary();
        let sticky = (summary.anomalies(), summary.has(Anomaly::A3Residue));
        let written: Vec<(Cell, Value)> = k.written.keys().copied().collect();
        let inflight = store.inflight();
        k.ops.retain(|a, _| inflight.contains_key(a));
        let mut flags = Vec::with_capacity(inflight.len());
        for (&agent, p) in inflight.iter() {
            let read = &p.request.read_set;
            let seen: Vec<(Cell, Value)> = read
                .iter()
                .map(|&c| (c, p.snapshot.read_values.get(c)))
                .collect();
            let from = (p.snapshot.read_time as usize).min(log.len());
            let same = k
                .ops
                .get(&agent)
                .is_some_and(|o| o.read_time == p.snapshot.read_time && o.seen == seen);
            if !same {
                let dead = p
                    .snapshot
                    .preds
                    .iter()
                    .any(|&q| log.get(q as usize).is_some_and(|r| r.aborted));
                let residue = seen.iter().any(|&(c, v)| {
                    !v.is_null() && k.written.get(&(c, v)).is_none_or(|&i| i >= from)
                });
                k.ops.insert(
                    agent,
                    OpFlags {
                        read_time: p.snapshot.read_time,
                        seen: seen.clone(),
                        upto: from,
                        flags: [false, false, dead, residue],
                    },
                );
            }
            let o = k.ops.get_mut(&agent).expect("inserted above");
            for r in &log[o.upto..] {
                if r.aborted {
                    continue;
                }
                for &(c, v) in &o.seen {
                    if r.writes(c) {
                        o.flags[0] = true;
                        if r.agent != agent && r.write_values.get(c) != v {
                            o.flags[1] = true;
                        }
                    }
                }
            }
            o.upto = log.len();
            flags.push((agent, o.flags));
        }
        KeyFacts {
            sticky,
            written,
            flags,
        }
    }

    /// The detection facts of the state now from the whole log, as [`Engine::state_key`]
    /// defines them: the fast detectors over the log for the sticky bits, every live
    /// record's writes, and each op's flags from the records before and since its read.
    #[cfg(test)]
    fn key_facts_spec(&self) -> KeyFacts {
        let store = self.rt.store();
        let log = store.log();
        let history = agentsim_models::history::History::from_records(log.to_vec());
        let report = crate::runner::detect(&history);
        let sticky = (report.anomalies(), !report.a3_residue.is_empty());
        let mut written: Vec<(Cell, Value)> = log
            .iter()
            .filter(|r| !r.aborted)
            .flat_map(|r| r.write_set.iter().map(|&c| (c, r.write_values.get(c))))
            .collect();
        written.sort_unstable();
        written.dedup();
        let flags = store
            .inflight()
            .iter()
            .map(|(&agent, p)| {
                let from = (p.snapshot.read_time as usize).min(log.len());
                let (before, since) = log.split_at(from);
                let read = &p.request.read_set;
                let seen = |c: Cell| p.snapshot.read_values.get(c);
                let newer = read
                    .iter()
                    .any(|&c| since.iter().any(|r| !r.aborted && r.writes(c)));
                let stale = read.iter().any(|&c| {
                    since.iter().any(|r| {
                        !r.aborted
                            && r.agent != agent
                            && r.writes(c)
                            && r.write_values.get(c) != seen(c)
                    })
                });
                let dead = p
                    .snapshot
                    .preds
                    .iter()
                    .any(|&q| log.get(q as usize).is_some_and(|r| r.aborted));
                let residue = read.iter().any(|&c| {
                    let v = seen(c);
                    !v.is_null()
                        && !before
                            .iter()
                            .any(|r| !r.aborted && r.writes(c) && r.write_values.get(c) == v)
                });
                (agent, [newer, stale, dead, residue])
            })
            .collect();
        KeyFacts {
            sticky,
            written,
            flags,
        }
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
            key,
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
        self.key.clone_from(key);
        self.parked.clear();
    }
}

/// Whether the stateful search keys `sc`'s states by [`Engine::state_key`]'s abstraction:
/// when no script retracts (a retraction aborts live records and, with `cascade`, their
/// dependents, so an anomaly shown may go away and a record's status is not final: the
/// sticky bits and the per-op flags above would not be the whole detection state) and there
/// are no `[cpl]` messages. Elsewhere the key is the concrete fingerprint, with the log.
pub fn abstracts(sc: &Scenario) -> bool {
    sc.cpl.is_none()
        && sc.agents.iter().all(|a| {
            a.script
                .steps
                .iter()
                .all(|s| !matches!(s, Step::Retract { .. }))
        })
}
