//! The engine one step at a time, for the liveness search (`explore --liveness`): a state is
//! the engine at a step boundary in abstract time (a [`Snap`]), and its successors are the
//! states one enabled agent's step leads to, one per combination of the data choices the step
//! takes (`prob`, `pick`, effect order). Each successor is computed from a copy of its
//! source's snapshot by running that one step, not by re-running the path to it.
//!
//! The choice points are counted as a trial counts them (an agent choice where two or more
//! agents are enabled, then the step's data choices), so the choices a path made are an `X1`
//! schedule that `agentsim replay` runs ([`Stepper::schedule`]). There is no step budget;
//! the scenario's `events_max` still ends a path ([`Status::cut`]). Polling loops are parked
//! when the stepper is asked to (as `explore` parks them): a parked agent is not enabled
//! until a write could change what its next iteration does.

use super::snapshot::Snap;
use super::{messages, spin, start_agents, Counters, Engine, Pool, SimError};
use crate::generator::Generator;
use crate::scenario::Scenario;
use crate::schedule::{Schedule, Timing};
use crate::scheduler::{ChoiceKind, ChoicePoint, Chooser};
use agentsim_models::runtime::{Guarded, Mechanism, Runtime};
use std::collections::BTreeMap;

/// The engine's state at a step boundary.
#[derive(Clone)]
pub struct LiveState<R: Runtime> {
    snap: Snap<R>,
}

/// One transition: the agent that steps and the alternatives its step's data choice points
/// took, in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LiveStep {
    pub agent: usize,
    pub choices: Vec<u32>,
}

/// What the liveness checks read of a state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The agents that can step, ascending.
    pub enabled: Vec<usize>,
    /// The agents parked in a polling loop (waiting for a write).
    pub parked: Vec<usize>,
    /// Per agent: its script is finished.
    pub done: Vec<bool>,
    /// Per agent: an operation is begun and not ended (open, or being retried).
    pub busy: Vec<bool>,
    /// `events_max` ends every path through this state.
    pub cut: bool,
    /// The state's key ([`Stepper::key`]).
    pub key: u128,
}

/// A step's result: the state it leads to and the alternatives each data choice point
/// offered.
type Stepped<R> = (LiveState<R>, Vec<u32>);

/// Steps one scenario's engine in abstract time.
pub struct Stepper<'a> {
    sc: &'a Scenario,
    generator: &'a dyn Generator,
    seed: u64,
    park: bool,
    pool: Pool,
}

/// Takes agent `agent` at an agent choice and a step's data choices from a prefix (0 past
/// it), noting how many alternatives each offered.
struct StepChooser {
    agent: usize,
    prefix: Vec<u32>,
    met: Vec<u32>,
}

impl StepChooser {
    fn new(agent: usize, prefix: Vec<u32>) -> Self {
        StepChooser {
            agent,
            prefix,
            met: Vec::new(),
        }
    }
}

impl Chooser for StepChooser {
    fn start(&mut self) {}

    fn pick(&mut self, p: &ChoicePoint<'_>) -> usize {
        if p.kind == ChoiceKind::Agent {
            return p
                .enabled
                .iter()
                .position(|&a| a == self.agent)
                .expect("the stepped agent is enabled");
        }
        let k = self.prefix.get(self.met.len()).copied().unwrap_or(0);
        self.met.push(p.n as u32);
        (k as usize).min(p.n - 1)
    }
}

impl<'a> Stepper<'a> {
    /// A stepper of `sc` under `generator`, at trial seed `seed`, parking polling loops when
    /// `park` (and the scenario has one).
    pub fn new(sc: &'a Scenario, generator: &'a dyn Generator, seed: u64, park: bool) -> Self {
        Stepper {
            sc,
            generator,
            seed,
            park: park && spin::loops(sc),
            pool: Pool::default(),
        }
    }

    /// Whether polling loops are parked.
    pub fn parks(&self) -> bool {
        self.park
    }

    /// The initial state over runtime `rt` (fresh, over the scenario's registry).
    pub fn initial<R: Runtime>(&mut self, rt: Guarded<R>) -> LiveState<R> {
        let sc = self.sc;
        let mut rng = crate::rng::stream_rng(self.seed, crate::rng::stream::ENGINE);
        let mut agents = Vec::new();
        start_agents(sc, &mut agents, &mut rng);
        let mut ch = StepChooser::new(0, Vec::new());
        let mut e = self.engine(rt, &mut ch);
        e.rng = rng;
        e.agents = agents;
        e.steps = vec![0; sc.agents.len()];
        if self.park {
            e.spin = spin::Spin::new(sc.agents.len());
        }
        let snap = e.snapshot();
        self.pool = std::mem::take(&mut e.pool);
        LiveState { snap }
    }

    /// An engine over `rt` driven by `ch`, every other field empty (a restore fills them).
    fn engine<'x, R: Runtime>(&mut self, rt: Guarded<R>, ch: &'x mut StepChooser) -> Engine<'x, R>
    where
        'a: 'x,
    {
        let locking = rt.stack().contains(Mechanism::Lock);
        Engine {
            sc: self.sc,
            rt,
            rng: crate::rng::stream_rng(self.seed, crate::rng::stream::ENGINE),
            generator: self.generator,
            agents: Vec::new(),
            now_ms: 0,
            c: Counters::default(),
            record_tokens: Vec::new(),
            trace: None,
            recorded: None,
            event: 0,
            cur: (0, 1),
            cpl: None,
            mcp: super::mcp::Clients::new(self.sc),
            pool: std::mem::take(&mut self.pool),
            chooser: Some(ch),
            picks: BTreeMap::new(),
            points: 0,
            steps: Vec::new(),
            locking,
            zone: None,
            span: (0, 0),
            spin: spin::Spin::off(),
            parked: Vec::new(),
            snaps: None,
            key: super::snapshot::KeyState::default(),
        }
    }

    /// An engine at state `s`.
    fn at<'x, R: Runtime>(&mut self, s: &LiveState<R>, ch: &'x mut StepChooser) -> Engine<'x, R>
    where
        'a: 'x,
    {
        let mut e = self.engine(s.snap.runtime().clone(), ch);
        e.restore(&s.snap);
        e
    }

    /// What the checks read of `s`.
    pub fn status<R: Runtime>(&mut self, s: &LiveState<R>) -> Status {
        let mut ch = StepChooser::new(0, Vec::new());
        let mut e = self.at(s, &mut ch);
        let mut enabled = Vec::new();
        e.live_enabled(&mut enabled);
        let status = Status {
            parked: e.parked.clone(),
            done: e.agents.iter().map(|a| a.done).collect(),
            busy: e.agents.iter().map(|a| a.open || a.attempts > 0).collect(),
            cut: e.event >= self.sc.events_max,
            key: e.live_key(),
            enabled,
        };
        self.pool = std::mem::take(&mut e.pool);
        status
    }

    /// Runs agent `step.agent`'s step from `s` with the data choices `step.choices` (0 past
    /// them); returns the state it leads to and the alternatives each data choice point
    /// offered. `None` when the agent is not enabled at `s`.
    fn run<R: Runtime>(
        &mut self,
        s: &LiveState<R>,
        step: &LiveStep,
    ) -> Result<Option<Stepped<R>>, SimError> {
        let mut ch = StepChooser::new(step.agent, step.choices.clone());
        let mut enabled = Vec::new();
        let snap = {
            let mut e = self.at(s, &mut ch);
            e.live_enabled(&mut enabled);
            let Some(pos) = enabled.iter().position(|&a| a == step.agent) else {
                self.pool = std::mem::take(&mut e.pool);
                return Ok(None);
            };
            let r = e.live_step(&enabled, pos);
            self.pool = std::mem::take(&mut e.pool);
            r?;
            e.snapshot()
        };
        Ok(Some((LiveState { snap }, ch.met)))
    }

    /// Every transition out of `s`: for each enabled agent, each combination of its step's
    /// data choices (in lexicographic order), with the state it leads to.
    pub fn successors<R: Runtime>(
        &mut self,
        s: &LiveState<R>,
    ) -> Result<Vec<(LiveStep, LiveState<R>)>, SimError> {
        let enabled = self.status(s).enabled;
        let mut out = Vec::new();
        for a in enabled {
            let mut prefix: Vec<u32> = Vec::new();
            loop {
                let step = LiveStep {
                    agent: a,
                    choices: prefix.clone(),
                };
                let (next, met) = self
                    .run(s, &step)?
                    .expect("an agent the status enables steps");
                let mut taken = prefix.clone();
                taken.resize(met.len(), 0);
                out.push((
                    LiveStep {
                        agent: a,
                        choices: taken.clone(),
                    },
                    next,
                ));
                // The next combination: the last choice point with an alternative left.
                match (0..met.len()).rev().find(|&i| taken[i] + 1 < met[i]) {
                    Some(i) => {
                        taken.truncate(i + 1);
                        taken[i] += 1;
                        prefix = taken;
                    }
                    None => break,
                }
            }
        }
        Ok(out)
    }

    /// The state `step` leads to from `s` (`None`: the agent is not enabled there, or the
    /// choices are not the step's).
    pub fn apply<R: Runtime>(
        &mut self,
        s: &LiveState<R>,
        step: &LiveStep,
    ) -> Result<Option<LiveState<R>>, SimError> {
        Ok(self.run(s, step)?.and_then(|(next, met)| {
            let fits = met.len() == step.choices.len()
                && met.iter().zip(&step.choices).all(|(&n, &k)| k < n);
            fits.then_some(next)
        }))
    }

    /// The step an `X1` schedule's choices `picks` take from `s`, where the path so far
    /// made `shift` choice points more than the schedule counts (a cycle run again), with
    /// the state it leads to; `None` when no agent is enabled at `s`. A choice the schedule
    /// does not record is 0, as in a replay.
    pub fn follow<R: Runtime>(
        &mut self,
        s: &LiveState<R>,
        picks: &BTreeMap<u64, u32>,
        shift: u64,
    ) -> Result<Option<(LiveStep, LiveState<R>)>, SimError> {
        let enabled = self.status(s).enabled;
        let Some(&first) = enabled.first() else {
            return Ok(None);
        };
        let (_, _, _, points) = s.snap.path();
        let at = |k: u64| picks.get(&(k - shift)).copied().unwrap_or(0);
        let mut next = points;
        let agent = if enabled.len() > 1 {
            next += 1;
            match enabled.get(at(points) as usize) {
                Some(&a) => a,
                None => return Ok(None),
            }
        } else {
            first
        };
        // The data choices: as many as the step meets, each the schedule's.
        let mut choices: Vec<u32> = Vec::new();
        loop {
            let step = LiveStep {
                agent,
                choices: choices.clone(),
            };
            let (state, met) = self.run(s, &step)?.expect("an enabled agent steps");
            if met.len() <= choices.len() {
                let fits =
                    met.len() == choices.len() && met.iter().zip(&choices).all(|(&n, &k)| k < n);
                return Ok(fits.then_some((step, state)));
            }
            choices.push(at(next + choices.len() as u64));
        }
    }

    /// The events run and the choice points met on the path to `s`.
    pub fn counts<R: Runtime>(&self, s: &LiveState<R>) -> (u64, u64) {
        let (_, events, _, points) = s.snap.path();
        (events, points)
    }

    /// The `X1` schedule of the path from the initial state to `s`: its choices and its
    /// events, stopping there.
    pub fn schedule<R: Runtime>(&self, s: &LiveState<R>) -> Schedule {
        let (picks, events, park, _) = s.snap.path();
        Schedule {
            events,
            choices: picks.clone(),
            stop: Some(events),
            timing: Timing::Abstract,
            steps_per_agent: None,
            timed: None,
            park,
            cycle: None,
        }
    }
}

impl<R: Runtime> Engine<'_, R> {
    /// The agents that can step now (abstract time, no step budget), after waking the parked
    /// loops a write moved; the parked ones are left in `self.parked`.
    fn live_enabled(&mut self, enabled: &mut Vec<usize>) {
        enabled.clear();
        self.spin.wake();
        self.parked.clear();
        for (i, a) in self.agents.iter().enumerate() {
            if a.done || a.due_ms == messages::PARKED {
                continue;
            }
            if self.spin.parked(i) {
                self.parked.push(i);
            } else {
                enabled.push(i);
            }
        }
    }

    /// The key the liveness search numbers states by: the stateful search's
    /// ([`Engine::state_key`]), under which a loop returns to a state it was in (no log,
    /// times, step counts or rng position). Two states with one key have the same futures,
    /// and the same liveness labels (program counters, done flags, open operations and retry
    /// flags, parked loops). Where the abstraction does not apply ([`super::abstracts`]) it
    /// is the concrete fingerprint, with the log: no loop closes, and only a scenario whose
    /// runs are all finite gets a complete graph.
    fn live_key(&mut self) -> u128 {
        self.state_key()
    }

    /// Runs the step of `enabled[pos]` as a trial's event loop runs it: an agent choice
    /// point (counted, and asked of the chooser) when two or more are enabled, then the step.
    fn live_step(&mut self, enabled: &[usize], pos: usize) -> Result<(), SimError> {
        if enabled.len() > 1 {
            self.c.choice_points += 1;
            let k = self.choose(ChoiceKind::Agent, enabled[0], enabled, &[], &[]);
            assert_eq!(k, pos, "the step chooser takes the agent it was told");
        }
        let a = enabled[pos];
        self.steps[a] += 1;
        self.now_ms = self.now_ms.max(self.agents[a].due_ms);
        self.cur = (pos, enabled.len());
        self.step(a)?;
        self.event += 1;
        Ok(())
    }
}
