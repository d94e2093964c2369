//! The discrete-event engine: one trial of a scenario on virtual time (milliseconds).
//!
//! Each agent has one pending event: run the script step at its program counter when its due
//! time comes. At every event the agents due within `window_ms` of the earliest are enabled,
//! ordered by (due, agent); the scheduler picks one; time advances to its due time (never
//! backwards) and the step runs. `read` begins an operation at the runtime, `generate` calls
//! the generator (latency, tokens), `write` issues the effects (each with a completion
//! latency) and commits when the last completes; the runtime's decision (begun/dropped,
//! committed/aborted) is acted on here: drops cost nothing, aborts waste the operation's
//! tokens, and either is retried (re-read, regenerate) up to the scenario's retry bound.
//! All randomness is the trial's ChaCha8 stream 0; the scheduler has its own stream.
//!
//! Abstract time (exploration): when the scheduler offers a [`Chooser`], every agent with a
//! pending event is enabled and every draw that can change the history is the chooser's
//! choice instead (see [`crate::scheduler::chooser`]); the schedule it records is an `X1`
//! string. The timed path is untouched by this: its draws and outputs are the same bytes.
//!
//! A trial that runs says the runtime's assertions held on this schedule and this seed;
//! whether an anomaly *can* happen is for many trials (or the exhaustive checker) to say.

/// Adds a trace line, formatting it only when tracing is on.
macro_rules! note {
    ($self:ident, $a:expr, $($fmt:tt)*) => {
        if $self.trace.is_some() {
            let text = format!($($fmt)*);
            $self.note($a, text);
        }
    };
}

mod counters;
mod live;
mod mcp;
mod messages;
mod ops;
mod pool;
mod snapshot;
mod spin;
mod zone;

pub use counters::{Counters, Counts};
pub use live::{LiveState, LiveStep, Stepper};
pub use pool::Pool;
#[cfg(test)]
pub(crate) use snapshot::KEY_CHECKS;
pub use snapshot::{abstracts, Snapshots};
pub use spin::loops as polling_loops;
pub use zone::{Dbm, ZONES_MAX};

pub use messages::CplTrial;

use crate::dist::{below, chance};
use crate::generator::{GenError, Generation, Generator};
use crate::scenario::{Cond, EffectOrder, Scenario, Script, Step};
use crate::schedule::{Schedule, Timing};
use crate::scheduler::{Access, ChoiceKind, ChoicePoint, Chooser, Footprint, Scheduler, Use};
use agentsim_models::names::{Agent, Cell, Tool, Value};
use agentsim_models::record::OpRecord;
use agentsim_models::runtime::{CommitRequest, Guarded, Mechanism, Runtime};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// One executed event, for readable traces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    pub event: u64,
    pub time_ms: u64,
    pub agent: Agent,
    /// The position the scheduler chose among `enabled` enabled events.
    pub choice: usize,
    pub enabled: usize,
    pub text: String,
}

/// The result of one trial.
#[derive(Clone, Debug)]
pub struct TrialRun {
    pub records: Vec<OpRecord>,
    pub counters: Counters,
    pub schedule: Schedule,
    /// Filled only when tracing.
    pub trace: Vec<TraceEvent>,
    /// Recording lines of every generation (only when recording).
    pub recorded: Vec<String>,
    /// What the guarded agents did (scenarios with `[cpl]` only).
    pub cpl: Option<CplTrial>,
}

/// How to run one trial.
pub struct TrialSetup<'a> {
    pub scenario: &'a Scenario,
    pub trial_seed: u64,
    pub generator: &'a dyn Generator,
    pub scheduler: &'a mut dyn Scheduler,
    /// Stop after this many events (shrinking), instead of `events_max`.
    pub stop: Option<u64>,
    pub trace: bool,
    pub record: bool,
}

/// A trial that could not run (a recorded generation is missing).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Generation(#[from] GenError),
    #[error(
        "timed exploration kept more than {0} zones on one path (a window_ms this wide splits \
         the order too often for an exact search)"
    )]
    Zones(usize),
}

/// An agent's operation between its read and its commit. Each agent keeps one for the whole
/// run (and the pool keeps it across trials), so the read list and the commit request reuse
/// their buffers; `AgentState::open` says whether it holds a live operation.
#[derive(Clone, Hash)]
struct Op {
    read_pc: usize,
    planned: Option<Tool>,
    read: Vec<(Cell, Value)>,
    tokens: u64,
    /// The generate step, its input digest (computed only when recording: only a recording
    /// line reads it) and the generation.
    output: Option<(usize, Option<u64>, Generation)>,
    /// The effects issued, once the write step has issued them (`issued`).
    commit: CommitRequest,
    issued: bool,
}

impl Op {
    fn new() -> Self {
        Op {
            read_pc: 0,
            planned: None,
            read: Vec::new(),
            tokens: 0,
            output: None,
            commit: CommitRequest::new(Agent(0), &[]),
            issued: false,
        }
    }
}

#[derive(Clone, Hash)]
struct AgentState {
    pc: usize,
    rep: u32,
    due_ms: u64,
    done: bool,
    attempts: u32,
    /// Whether `op` holds an open operation.
    open: bool,
    op: Op,
    last_read: Vec<(Cell, Value)>,
}

struct Engine<'a, R: Runtime> {
    sc: &'a Scenario,
    rt: Guarded<R>,
    rng: ChaCha8Rng,
    generator: &'a dyn Generator,
    agents: Vec<AgentState>,
    now_ms: u64,
    c: Counters,
    record_tokens: Vec<u64>,
    trace: Option<Vec<TraceEvent>>,
    recorded: Option<Vec<String>>,
    event: u64,
    /// The scheduler's choice for the current event: (position, enabled count).
    cur: (usize, usize),
    /// Messages and monitors (scenarios with `[cpl]` only).
    cpl: Option<messages::CplRun<'a>>,
    /// MCP clients' tool lists (agents with `mcp_client` only).
    mcp: mcp::Clients,
    pool: Pool,
    /// Abstract time: the chooser, the non-zero choices it made by choice-point index, the
    /// next choice point's index and each agent's executed steps.
    chooser: Option<&'a mut dyn Chooser>,
    picks: BTreeMap<u64, u32>,
    points: u64,
    steps: Vec<u64>,
    /// The stack locks cells (so a step's [`Access`] names the locks it takes).
    locking: bool,
    /// Timed exploration: the zones of the pending events' times (see [`zone`]), and the
    /// bounds of the delay the current step drew.
    zone: Option<zone::Zones>,
    span: (u64, u64),
    /// Polling loops parked (abstract time, when the chooser asks; see [`spin`]), and the
    /// agents parked at the current choice point.
    spin: spin::Spin,
    parked: Vec<usize>,
    /// Snapshots at agent choice points, when the trial keeps them (see [`snapshot`]).
    snaps: Option<&'a mut Snapshots<R>>,
    /// The detection state the stateful search's key reads (see [`snapshot::KeyState`]).
    key: snapshot::KeyState,
}

/// Runs one trial of `setup.scenario` on runtime `rt` (fresh, over the scenario's registry).
pub fn run_trial<R: Runtime>(rt: Guarded<R>, setup: TrialSetup<'_>) -> Result<TrialRun, SimError> {
    run_trial_in(rt, setup, &mut Pool::default())
}

/// [`run_trial`] reusing `pool`'s buffers (a loop over trials passes the same pool to each;
/// the result is identical to [`run_trial`]'s).
pub fn run_trial_in<R: Runtime>(
    rt: Guarded<R>,
    setup: TrialSetup<'_>,
    buffers: &mut Pool,
) -> Result<TrialRun, SimError> {
    run_trial_with(rt, setup, buffers, None)
}

/// [`run_trial_in`] keeping snapshots in `snaps` where the chooser asks for them, and
/// resuming at the one it names (see [`snapshot`]); `runtime` builds the fresh runtime when
/// the trial starts from the beginning. The result is identical to [`run_trial_in`]'s.
pub fn run_trial_resumable<'s, R: Runtime>(
    runtime: impl FnOnce() -> Guarded<R>,
    setup: TrialSetup<'s>,
    buffers: &mut Pool,
    snaps: &'s mut Snapshots<R>,
) -> Result<TrialRun, SimError> {
    let resume = setup.scheduler.chooser().and_then(|c| c.resume_at());
    snaps.keep_upto(resume);
    let rt = match resume {
        Some(k) => snaps.at(k).runtime().clone(),
        None => runtime(),
    };
    run_trial_with(rt, setup, buffers, Some(snaps))
}

/// Runs one trial, taking and resuming from snapshots when `snaps` is given and the trial
/// can (abstract time without zones, tracing, recording, messages or a stop).
fn run_trial_with<'s, R: Runtime>(
    mut rt: Guarded<R>,
    setup: TrialSetup<'s>,
    buffers: &mut Pool,
    snaps: Option<&'s mut Snapshots<R>>,
) -> Result<TrialRun, SimError> {
    let sc = setup.scenario;
    rt.reserve(sc.ops_hint());
    let locking = rt.stack().contains(Mechanism::Lock);
    let mut pool = std::mem::take(buffers);
    let mut rng = crate::rng::stream_rng(setup.trial_seed, crate::rng::stream::ENGINE);
    // Agent states come from the pool with their buffers (a previous trial's, or new ones);
    // every field is reset here before anything reads it (`read` resets the operation's).
    let mut agents = std::mem::take(&mut pool.agents);
    start_agents(sc, &mut agents, &mut rng);
    let mut record_tokens = std::mem::take(&mut pool.record_tokens);
    record_tokens.clear();
    let abstract_time = setup.scheduler.chooser().is_some();
    let zone = setup.scheduler.timed().filter(|_| abstract_time).map(|q| {
        let starts: Vec<(u64, u64)> = sc.agents.iter().map(|s| q.bounds(s.start_ms)).collect();
        let running: Vec<bool> = agents.iter().map(|a| !a.done).collect();
        zone::Zones::new(q, sc.window_ms, &starts, &running)
    });
    let park = abstract_time
        && zone.is_none()
        && spin::loops(sc)
        && setup.scheduler.chooser().is_some_and(|c| c.parks());
    let sched = setup.scheduler;
    let (chooser, timed) = if abstract_time {
        (sched.chooser(), None)
    } else {
        (None, Some(sched))
    };
    let mut e = Engine {
        sc,
        rt,
        rng,
        generator: setup.generator,
        agents,
        now_ms: 0,
        c: Counters::default(),
        record_tokens,
        trace: setup.trace.then(Vec::new),
        recorded: setup.record.then(Vec::new),
        event: 0,
        cur: (0, 1),
        cpl: sc
            .cpl
            .as_deref()
            .map(|c| messages::CplRun::new(c, sc.agents.len())),
        mcp: mcp::Clients::new(sc),
        pool,
        chooser,
        picks: BTreeMap::new(),
        points: 0,
        steps: if abstract_time {
            vec![0; sc.agents.len()]
        } else {
            Vec::new()
        },
        locking,
        zone,
        span: (0, 0),
        spin: if park {
            spin::Spin::new(sc.agents.len())
        } else {
            spin::Spin::off()
        },
        parked: Vec::new(),
        snaps: None,
        key: snapshot::KeyState::default(),
    };
    let resumable = abstract_time
        && e.zone.is_none()
        && !setup.trace
        && !setup.record
        && e.cpl.is_none()
        && setup.stop.is_none();
    let resume = e.chooser.as_deref().and_then(|c| c.resume_at());
    assert!(
        resume.is_none() || (resumable && snaps.is_some()),
        "a chooser resumes only a trial that keeps snapshots"
    );
    if let Some(s) = snaps.filter(|_| resumable) {
        if let Some(k) = resume {
            e.restore(s.at(k));
        }
        e.snaps = Some(s);
    }
    let schedule = e.run(timed, setup.trial_seed, setup.stop)?;
    Ok(e.finish(schedule, buffers))
}

/// Puts `agents` (reusing their buffers) at the start of `sc`'s scripts, drawing their start
/// times from `rng`.
fn start_agents(sc: &Scenario, agents: &mut Vec<AgentState>, rng: &mut ChaCha8Rng) {
    agents.truncate(sc.agents.len());
    while agents.len() < sc.agents.len() {
        agents.push(AgentState {
            pc: 0,
            rep: 0,
            due_ms: 0,
            done: false,
            attempts: 0,
            open: false,
            op: Op::new(),
            last_read: Vec::new(),
        });
    }
    for (st, spec) in agents.iter_mut().zip(&sc.agents) {
        st.pc = 0;
        st.rep = 0;
        st.due_ms = spec.start_ms.sample(rng);
        st.done = false;
        st.attempts = 0;
        st.open = false;
        st.last_read.clear();
        normalize(st, &spec.script, spec.repeat);
    }
}

/// Moves past the end of the script: the next repetition, or done.
fn normalize(st: &mut AgentState, script: &Script, repeat: u32) {
    while !st.done && st.pc >= script.steps.len() {
        st.rep += 1;
        st.pc = 0;
        if st.rep >= repeat.max(1) || script.steps.is_empty() {
            st.done = true;
        }
    }
}

impl<R: Runtime> Engine<'_, R> {
    /// Runs the trial: timed under `sched`, or in abstract time under the chooser (`None`).
    fn run(
        &mut self,
        mut sched: Option<&mut dyn Scheduler>,
        seed: u64,
        stop: Option<u64>,
    ) -> Result<Schedule, SimError> {
        match sched.as_deref_mut() {
            Some(s) => s.start_trial(seed, self.agents.len(), self.sc.steps_hint()),
            None => self
                .chooser
                .as_deref_mut()
                .expect("an abstract-time trial has a chooser")
                .start(),
        }
        let limit = stop.unwrap_or(self.sc.events_max).min(self.sc.events_max);
        let mut schedule = Schedule {
            stop,
            ..Schedule::default()
        };
        let mut enabled = std::mem::take(&mut self.pool.enabled);
        while let Some(min) = self.earliest_due() {
            if self.event >= limit {
                self.c.truncated = stop.is_none();
                break;
            }
            let pos = match sched.as_deref_mut() {
                Some(s) => self.next_timed(s, min, &mut enabled, &mut schedule),
                None => match self.next_abstract(&mut enabled) {
                    Some(pos) => pos,
                    None => break,
                },
            };
            let a = enabled[pos];
            self.now_ms = self.now_ms.max(self.agents[a].due_ms);
            self.cur = (pos, enabled.len());
            self.step(a)?;
            self.event += 1;
        }
        schedule.events = self.event;
        self.pool.enabled = enabled;
        if let Some(c) = self.chooser.as_deref() {
            schedule.timing = Timing::Abstract;
            schedule.steps_per_agent = c.steps_per_agent();
            schedule.choices = std::mem::take(&mut self.picks);
            schedule.timed = self.zone.as_ref().map(|z| z.quantiles());
            schedule.park = self.spin.on();
        }
        Ok(schedule)
    }

    /// The scheduler's pick among the events due within the window of the earliest (`min`).
    fn next_timed(
        &mut self,
        sched: &mut dyn Scheduler,
        min: u64,
        enabled: &mut Vec<usize>,
        schedule: &mut Schedule,
    ) -> usize {
        enabled.clear();
        let horizon = min.saturating_add(self.sc.window_ms);
        enabled.extend((0..self.agents.len()).filter(|&i| {
            let a = &self.agents[i];
            !a.done && a.due_ms <= horizon
        }));
        if enabled.len() > 1 {
            enabled.sort_by_key(|&i| (self.agents[i].due_ms, i));
            self.c.choice_points += 1;
        }
        let pos = sched.choose(self.event, enabled);
        assert!(
            pos < enabled.len(),
            "scheduler chose outside the enabled set"
        );
        if pos != 0 {
            schedule.choices.insert(self.event, pos as u32);
        }
        pos
    }

    /// The chooser's pick among every agent with a pending event and steps left in its budget
    /// (abstract time); `None` when the budget leaves none.
    fn next_abstract(&mut self, enabled: &mut Vec<usize>) -> Option<usize> {
        let budget = self.chooser.as_deref().and_then(|c| c.steps_per_agent());
        enabled.clear();
        if self.chooser.as_deref().is_some_and(|c| c.halted()) {
            return None;
        }
        let mut cut = false;
        self.spin.wake();
        self.parked.clear();
        for (i, a) in self.agents.iter().enumerate() {
            if a.done || a.due_ms == messages::PARKED {
                continue;
            }
            if self.spin.parked(i) {
                self.parked.push(i);
                continue;
            }
            if budget.is_some_and(|b| self.steps[i] >= b) {
                cut = true;
            } else {
                enabled.push(i);
            }
        }
        self.c.budget_cut |= cut;
        self.timed_filter(enabled);
        if enabled.is_empty() {
            self.c.spinning |= !self.parked.is_empty();
            return None;
        }
        if self.chooser.as_deref().is_some_and(|c| c.stateful()) {
            // Before every agent step, not only at choice points: a loop that one agent runs
            // alone closes too.
            let key = self.state_key();
            if let Some(c) = self.chooser.as_deref_mut() {
                c.state(key);
                if c.halted() {
                    return None;
                }
            }
        }
        let pos = if enabled.len() > 1 {
            // Before anything of the point is counted: a resume re-enters this iteration of
            // the event loop from its top (waking parked agents again is idempotent).
            self.checkpoint();
            self.c.choice_points += 1;
            let next: Vec<Footprint> = enabled.iter().map(|&a| self.footprint(a)).collect();
            let access: Vec<Access> = enabled.iter().map(|&a| self.access(a)).collect();
            self.choose(ChoiceKind::Agent, enabled[0], enabled, &next, &access)
        } else {
            0
        };
        let a = enabled[pos];
        self.steps[a] += 1;
        let fp = self.footprint(a);
        let access = self.access(a);
        if let Some(c) = self.chooser.as_deref_mut() {
            c.stepped(a, fp);
            c.accessed(a, access);
        }
        Some(pos)
    }

    /// What agent `a`'s next step touches (see [`Footprint`]).
    fn footprint(&self, a: usize) -> Footprint {
        let st = &self.agents[a];
        match &self.sc.agents[a].script.steps[st.pc] {
            Step::Generate { .. } if st.open => Footprint::Local,
            _ if self.spin.woke(a) => Footprint::Shared,
            Step::Wait { .. } | Step::Branch { .. } => Footprint::Local,
            Step::Write { .. } if st.open && !st.op.issued && !self.mcp_checks(a) => {
                Footprint::Local
            }
            _ => Footprint::Shared,
        }
    }

    /// What agent `a`'s next step may touch of the shared state (see [`Access`]), from the
    /// agent's own state alone: a `read` begins at the runtime (reads the store's clock,
    /// memory and provenance and the registry; takes the read cells' locks), the commit half
    /// of a `write` appends a record (writes the store; reads the registry it resolves
    /// against; releases and tests the locks of the read and written cells; a `refresh` MCP
    /// client's issue half likewise), `retract` writes
    /// the store (aborted flags, cascades), `registry` writes the registry, a `generate`
    /// outside an operation reads the live registry. Steps on messages write everything.
    fn access(&self, a: usize) -> Access {
        let mut access = self.step_access(a);
        if self.spin.woke(a) {
            // The first step after a wake: it runs only after the write that woke it, which
            // the reduction learns from this read (see `spin`).
            for u in [&mut access.store, &mut access.registry] {
                if *u == Use::None {
                    *u = Use::Read;
                }
            }
        }
        access
    }

    /// [`Engine::access`] of the step itself.
    fn step_access(&self, a: usize) -> Access {
        let st = &self.agents[a];
        let locks = |cells: &mut dyn Iterator<Item = Cell>| -> u64 {
            if self.locking {
                cells.fold(0, |m, c| m | Access::lock_bit(c.index()))
            } else {
                0
            }
        };
        match &self.sc.agents[a].script.steps[st.pc] {
            Step::Generate { .. } if st.open => Access::LOCAL,
            Step::Generate { .. } => Access {
                registry: Use::Read,
                ..Access::LOCAL
            },
            Step::Wait { .. } | Step::Branch { .. } => Access::LOCAL,
            Step::Write { .. } if st.open && !st.op.issued && !self.mcp_checks(a) => Access::LOCAL,
            // A commit, or the issue half of a `refresh` client's write: its check reads the
            // client's list (which a `registry` step changes) and a refusal abandons the
            // operation at the runtime (locks, pending state), so it is taken as a commit.
            Step::Write { .. } if st.open => Access {
                store: if st.op.issued && st.op.commit.issue.is_empty() {
                    Use::Append
                } else {
                    Use::Write
                },
                registry: Use::Read,
                locks: locks(
                    &mut st
                        .op
                        .read
                        .iter()
                        .map(|&(c, _)| c)
                        .chain(st.op.commit.issue.iter().copied()),
                ),
            },
            Step::Read { cells, .. } => Access {
                store: Use::Read,
                registry: Use::Read,
                locks: locks(&mut cells.iter().copied()),
            },
            Step::Retract { .. } => Access {
                store: Use::Write,
                ..Access::LOCAL
            },
            Step::Registry { .. } => Access {
                registry: Use::Write,
                ..Access::LOCAL
            },
            _ => Access::ALL,
        }
    }

    /// Asks the chooser at a choice point of `n` ≥ 2 alternatives (`enabled` and `next` for
    /// an agent choice) and records a non-zero answer under the point's index.
    fn choose_among(
        &mut self,
        kind: ChoiceKind,
        n: usize,
        agent: usize,
        enabled: &[usize],
        next: &[Footprint],
        access: &[Access],
    ) -> usize {
        assert!(n >= 2, "a choice point has two alternatives or more");
        if kind != ChoiceKind::Agent {
            self.spin.spoil(agent);
        }
        let point = ChoicePoint {
            kind,
            n,
            agent,
            enabled,
            next,
            access,
            parked: if kind == ChoiceKind::Agent {
                &self.parked
            } else {
                &[]
            },
        };
        let ch = self
            .chooser
            .as_deref_mut()
            .expect("choice points arise in abstract time only");
        let k = ch.pick(&point);
        assert!(k < n, "the chooser picked outside the alternatives");
        if k != 0 {
            self.picks.insert(self.points, k as u32);
        }
        self.points += 1;
        k
    }

    /// An agent choice among `enabled` (abstract time).
    fn choose(
        &mut self,
        kind: ChoiceKind,
        agent: usize,
        enabled: &[usize],
        next: &[Footprint],
        access: &[Access],
    ) -> usize {
        self.choose_among(kind, enabled.len(), agent, enabled, next, access)
    }

    /// Whether a step's `prob` fires: a draw on the trial's stream, or in abstract time both
    /// ways as a choice point (0 fires) unless `prob` is 0 or 1.
    fn decide(&mut self, a: usize, prob: f64) -> bool {
        if self.chooser.is_none() {
            return chance(&mut self.rng, prob);
        }
        if prob >= 1.0 {
            return true;
        }
        if prob.is_nan() || prob <= 0.0 {
            return false;
        }
        self.choose_among(ChoiceKind::Prob, 2, a, &[], &[], &[]) == 0
    }

    /// A completion order of `w` effects chosen in abstract time: any permutation (time is
    /// abstracted, so any latency order), or any but the identity for `non-identity`. One
    /// choice point per effect placed (Lehmer code), none where only one order is left.
    fn abstract_order(&mut self, a: usize, w: usize, order: EffectOrder) -> Vec<usize> {
        let mut rest: Vec<usize> = (0..w).collect();
        let mut out = Vec::with_capacity(w);
        let mut identity = true;
        while rest.len() > 1 {
            let n = rest.len();
            let i = if order == EffectOrder::NonIdentity && identity && n == 2 {
                1
            } else {
                self.choose_among(ChoiceKind::Order, n, a, &[], &[], &[])
            };
            identity &= i == 0;
            out.push(rest.remove(i));
        }
        out.extend(rest);
        out
    }

    /// The earliest due time among running agents, if any runs.
    fn earliest_due(&self) -> Option<u64> {
        self.agents
            .iter()
            .filter(|a| !a.done && a.due_ms != messages::PARKED)
            .map(|a| a.due_ms)
            .min()
    }

    /// The trial's result; the buffers go back to `pool`.
    fn finish(mut self, schedule: Schedule, pool: &mut Pool) -> TrialRun {
        // The runtime is done: its log moves out as the trial's records, with no copy.
        let log = self.rt.into_store().into_log();
        assert_eq!(
            log.len(),
            self.record_tokens.len(),
            "one token tally per record"
        );
        // Saturating sums of a part of what `tokens_total` saturated over: never above it.
        let wasted: u64 = log
            .iter()
            .zip(&self.record_tokens)
            .filter(|(r, _)| r.aborted)
            .map(|(_, &t)| t)
            .fold(0, u64::saturating_add);
        let open: u64 = self
            .agents
            .iter()
            .filter(|a| a.open)
            .map(|a| a.op.tokens)
            .fold(0, u64::saturating_add);
        // Plus what refused MCP calls wasted (already counted: they leave no record).
        self.c.tokens_wasted = self
            .c
            .tokens_wasted
            .saturating_add(wasted)
            .saturating_add(open);
        self.c.makespan_ms = self.now_ms;
        self.c.events = self.event;
        assert!(
            self.c.tokens_wasted <= self.c.tokens_total,
            "wasted tokens exceed the total"
        );
        let parked = |a: &&AgentState| !a.done && a.due_ms == messages::PARKED;
        let blocked = self.agents.iter().filter(parked).count() as u64;
        let cpl = self.cpl.take().map(|c| c.finish(blocked));
        self.pool.agents = self.agents;
        self.pool.record_tokens = self.record_tokens;
        *pool = self.pool;
        TrialRun {
            cpl,
            records: log,
            counters: self.c,
            schedule,
            trace: self.trace.unwrap_or_default(),
            recorded: self.recorded.unwrap_or_default(),
        }
    }

    fn note(&mut self, a: usize, text: String) {
        let (choice, enabled) = self.cur;
        let (event, time_ms) = (self.event, self.now_ms);
        if let Some(t) = self.trace.as_mut() {
            t.push(TraceEvent {
                event,
                time_ms,
                agent: Agent(a as u32),
                choice,
                enabled,
                text,
            });
        }
    }

    /// Runs the step at agent `a`'s program counter.
    fn step(&mut self, a: usize) -> Result<(), SimError> {
        let sc = self.sc;
        let spec = &sc.agents[a];
        let script: &Script = &spec.script;
        let pc = self.agents[a].pc;
        assert!(!self.agents[a].done, "a finished agent has no event");
        assert!(
            pc < script.steps.len(),
            "the program counter is inside the script"
        );
        let mut next = Some(pc + 1);
        let mut delay = 0;
        let watch = self.spin.on().then(|| self.spin_watch(a));
        self.spin.stepped(a);
        self.timed_fire(a)?;
        let text: String = match &script.steps[pc] {
            Step::Read { cells, pick, tool } => {
                let cells = self.select(a, cells, *pick, &[]);
                next = self.read(a, pc, cells, *tool, script, &mut delay);
                String::new()
            }
            Step::Generate {
                latency_ms,
                completion,
            } => {
                delay = self.generate(a, pc, *latency_ms, *completion)?;
                String::new()
            }
            Step::Write {
                cells,
                pick,
                include_read,
                effect_ms,
                order,
            } => {
                if self.agents[a].open && self.agents[a].op.issued {
                    next = self.commit(a, &mut delay);
                } else if let Some(refused) = self.mcp_refuse(a, &mut delay) {
                    next = refused;
                } else {
                    let mut read = std::mem::take(&mut self.pool.extra);
                    read.clear();
                    if *include_read {
                        self.op_cells(a, &mut read);
                    }
                    let ws = self.select(a, cells, *pick, &read);
                    self.pool.extra = read;
                    delay = self.issue(a, pc, ws, *effect_ms, *order)?;
                    next = Some(pc);
                }
                String::new()
            }
            Step::Wait { latency_ms, prob } => {
                if self.wait_fires(a, *prob) {
                    delay = latency_ms.sample(&mut self.rng);
                    self.drew(*latency_ms);
                }
                self.traced(|| format!("wait {delay} ms"))
            }
            Step::Retract { targets, prob } => {
                if self.decide(a, *prob) {
                    self.retract(targets)
                } else {
                    self.traced(|| "retract skipped".into())
                }
            }
            Step::Registry { change, prob } => {
                if self.decide(a, *prob) {
                    self.rt.change_registry(*change);
                    self.mcp.list_changed();
                    self.traced(|| format!("registry {change:?}"))
                } else {
                    self.traced(|| "registry change skipped".into())
                }
            }
            Step::Branch {
                cell,
                when,
                target,
                prob,
            } => {
                let v = lookup(&self.agents[a].last_read, *cell);
                let holds = match when {
                    Cond::Null => v.is_null(),
                    Cond::NotNull => !v.is_null(),
                };
                if holds && self.decide(a, *prob) {
                    next = Some(*target);
                }
                let taken = if next == Some(pc + 1) {
                    "not taken"
                } else {
                    "taken"
                };
                self.traced(|| {
                    format!(
                        "branch on {}={}: {taken}",
                        sc.names.cell_name(*cell),
                        sc.names.value_display(v)
                    )
                })
            }
            Step::Send { .. } | Step::Recv { .. } | Step::Set { .. } | Step::Act { .. } => {
                self.cpl_step(a, pc, &script.steps[pc], &mut next, &mut delay)
            }
        };
        if !text.is_empty() {
            self.note(a, text);
        }
        let st = &mut self.agents[a];
        st.due_ms = self.now_ms.saturating_add(delay);
        if let Some(n) = next {
            st.pc = n;
        }
        normalize(st, script, spec.repeat);
        if let Some(w) = watch {
            self.spin_after(a, pc, next, w);
        }
        self.timed_schedule(a);
        Ok(())
    }

    /// What [`Engine::spin_after`] compares: the step's access, the log's length and the
    /// counters of drops, aborts, retries, retractions and compensations before it.
    fn spin_watch(&self, a: usize) -> (Access, usize, [u64; 5]) {
        let c = &self.c;
        (
            self.step_access(a),
            self.rt.log().len(),
            [c.drops, c.aborts, c.retries, c.retracted, c.compensations],
        )
    }

    /// After agent `a`'s step at `pc` with parking on: bumps what it wrote, spoils its
    /// iteration if it had an effect, notes a begin's cells, and ends the iteration at a
    /// taken backward branch.
    fn spin_after(
        &mut self,
        a: usize,
        pc: usize,
        next: Option<usize>,
        (access, len, counts): (Access, usize, [u64; 5]),
    ) {
        let c = &self.c;
        let now = [c.drops, c.aborts, c.retries, c.retracted, c.compensations];
        if now != counts {
            self.spin.spoil(a);
            self.spin.bump_all();
        }
        if access.registry == Use::Write || access.store == Use::Write {
            self.spin.spoil(a);
            if access.registry == Use::Write {
                self.spin.bump_all();
            }
            let log = self.rt.log();
            if log.len() < len {
                self.spin.bump_all();
            }
            let written: Vec<Cell> = log
                .get(len..)
                .unwrap_or(&[])
                .iter()
                .flat_map(|r| r.write_set.iter().copied())
                .collect();
            if access.store == Use::Write && written.is_empty() {
                // A retraction, or a commit that left no cell written: anything may move.
                self.spin.bump_all();
            }
            written.into_iter().for_each(|c| self.spin.bump(c));
        }
        let st = &self.agents[a];
        match &self.sc.agents[a].script.steps[pc] {
            Step::Read { .. } if st.open && st.op.read_pc == pc => {
                let cells = st.op.read.iter().map(|&(c, _)| c);
                let cells: Vec<Cell> = cells.collect();
                self.spin.read(a, cells.into_iter());
            }
            Step::Branch { target, .. } if *target <= pc && next == Some(*target) => {
                let (pc, rep, attempts, open) = (st.pc, st.rep, st.attempts, st.open);
                let last_read = std::mem::take(&mut self.agents[a].last_read);
                self.spin.looped(a, pc, rep, attempts, open, &last_read);
                self.agents[a].last_read = last_read;
            }
            _ => {}
        }
    }

    /// The cells agent `a`'s step touches: all of `cells`, or `pick` of them at random (in
    /// abstract time, chosen: each pick a choice among the cells after the previous pick);
    /// plus `extra`. Sorted and unique, in the pool's `cells` buffer (hand it back when done).
    fn select(&mut self, a: usize, cells: &[Cell], pick: Option<u32>, extra: &[Cell]) -> Vec<Cell> {
        let mut out = std::mem::take(&mut self.pool.cells);
        out.clear();
        match pick {
            None => out.extend_from_slice(cells),
            Some(k) if self.chooser.is_some() => {
                let k = (k as usize).min(cells.len());
                let mut from = 0;
                for j in 0..k {
                    let last = cells.len() - (k - j);
                    let n = last - from + 1;
                    let i = if n >= 2 {
                        from + self.choose_among(ChoiceKind::Pick, n, a, &[], &[], &[])
                    } else {
                        from
                    };
                    out.push(cells[i]);
                    from = i + 1;
                }
            }
            Some(k) => {
                let pool = &mut self.pool.pick;
                pool.clear();
                pool.extend_from_slice(cells);
                for _ in 0..k.min(pool.len() as u32) {
                    out.push(pool.swap_remove(below(&mut self.rng, pool.len())));
                }
            }
        }
        out.extend_from_slice(extra);
        if out.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
        out
    }

    /// Appends the cells agent `a`'s open operation read to `out`.
    fn op_cells(&self, a: usize, out: &mut Vec<Cell>) {
        let op = self.op(a).expect("a write is inside an operation");
        out.extend(op.read.iter().map(|&(c, _)| c));
    }

    /// Agent `a`'s open operation, if one is open.
    fn op(&self, a: usize) -> Option<&Op> {
        let st = &self.agents[a];
        st.open.then_some(&st.op)
    }

    /// A trace line's text, built only when tracing (no formatting on the untraced path).
    fn traced(&self, text: impl FnOnce() -> String) -> String {
        if self.trace.is_some() {
            text()
        } else {
            String::new()
        }
    }
}

/// The value of `c` in a sorted read list (NULL if not read).
fn lookup(read: &[(Cell, Value)], c: Cell) -> Value {
    read.iter()
        .find(|&&(k, _)| k == c)
        .map_or(Value::NULL, |&(_, v)| v)
}
