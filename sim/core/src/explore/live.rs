//! Liveness of a scenario (`agentsim explore --liveness`): the state graph of the engine in
//! abstract time, explored breadth-first from the initial state, and three properties decided
//! on it with agent-level fairness (docs/liveness.md).
//!
//! A node is the engine at a step boundary, numbered by its state key; an edge is one enabled
//! agent's step with one combination of its data choices, computed from the source's snapshot
//! ([`Stepper`]). The graph, its strongly connected components, the fairness refinement and
//! the lassos are `agentsim_models::fair`'s, shared with `agentsim check --property`. An
//! edge is *progress* for its agent when an operation the agent had begun (its `read`, open
//! or being retried) ends on it, committed or given up.
//!
//! * *deadlock*: a reachable state where some agent has not finished and none can step (the
//!   agents left are parked in polling loops: each waits for a write no agent can make);
//! * *starvation* of `x`: a fair infinite run on which `x` has begun an operation that is
//!   never committed nor given up: a fair cycle, without a progress edge of `x`, through a
//!   state where `x` is busy (then `x` is busy at every state of it), or a fair stutter there;
//! * *termination* of `x` (not `serves = true`): a fair infinite run on which `x` never
//!   finishes: a fair cycle (or stutter) through states where `x` has not finished.
//!
//! Fairness (`weak`, `strong`, `none`) is `agentsim_models::fair`'s. A run may stutter
//! forever only where no agent is enabled (under `none`, anywhere).
//!
//! Verdicts: *violated* with the shortest stem (BFS parents) and a cycle of real transitions
//! inside the fair component, replayed before it is reported (stem, then the cycle twice,
//! the key repeating each time); *holds* only on a complete graph with no state at
//! `events_max`; *cannot tell* with the reason otherwise.

use super::ExploreError;
use crate::engine::{LiveState, LiveStep, Stepper};
use crate::replay_line::ReplayLine;
use crate::rng::trial_seed;
use crate::runner::generator;
use crate::scenario::{OnMissing, Scenario};
use agentsim_models::fair::{fair_lasso, Edge, Fairness, Goal, Graph, Lasso, AGENTS_MAX};
use agentsim_models::runtime::Stack;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};

/// The default ceiling on states.
pub const MAX_STATES_DEFAULT: u64 = 200_000;

/// How to search.
#[derive(Clone)]
pub struct LiveConfig<'a> {
    pub runtime: Stack,
    pub fairness: Fairness,
    /// Stop after numbering this many states (cannot tell).
    pub max_states: u64,
    /// Park polling loops (as `explore` does).
    pub park: bool,
    pub on_missing: Option<OnMissing>,
    /// Set (by a signal handler) to stop the search (cannot tell).
    pub cancel: Option<&'a AtomicBool>,
}

impl LiveConfig<'_> {
    /// Weak fairness, the default ceiling, parking on.
    pub fn new(runtime: Stack) -> Self {
        LiveConfig {
            runtime,
            fairness: Fairness::Weak,
            max_states: MAX_STATES_DEFAULT,
            park: true,
            on_missing: None,
            cancel: None,
        }
    }
}

/// A liveness verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiveVerdict {
    Holds,
    Violated,
    CannotTell(String),
}

impl LiveVerdict {
    /// `holds`, `violated`, `cannot_tell`.
    pub fn name(&self) -> &'static str {
        match self {
            LiveVerdict::Holds => "holds",
            LiveVerdict::Violated => "violated",
            LiveVerdict::CannotTell(_) => "cannot_tell",
        }
    }
}

/// A lasso of the scenario: the steps of the stem and of the cycle, and who steps and who is
/// enabled in the cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveLasso {
    pub stem: Vec<LiveStep>,
    pub cycle: Vec<LiveStep>,
    /// The stem and the cycle once, as a replay line whose schedule marks where the cycle
    /// starts (`cycle=<events>`).
    pub line: ReplayLine,
    /// The agents that step in the cycle.
    pub stepping: Vec<usize>,
    /// The agents enabled at every state of the cycle, and at some state of it.
    pub enabled_always: Vec<usize>,
    pub enabled_sometimes: Vec<usize>,
}

/// One property's verdict, its agent and witness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveFinding {
    pub verdict: LiveVerdict,
    pub agent: Option<usize>,
    /// Starvation and termination: the lasso.
    pub lasso: Option<LiveLasso>,
    /// Deadlock: the path to the deadlocked state.
    pub replay: Option<ReplayLine>,
}

impl LiveFinding {
    fn cannot_tell(reason: String) -> LiveFinding {
        LiveFinding {
            verdict: LiveVerdict::CannotTell(reason),
            agent: None,
            lasso: None,
            replay: None,
        }
    }

    fn holds() -> LiveFinding {
        LiveFinding {
            verdict: LiveVerdict::Holds,
            agent: None,
            lasso: None,
            replay: None,
        }
    }
}

/// The result of a liveness search.
#[derive(Clone, Debug)]
pub struct Liveness {
    pub fairness: Fairness,
    /// States numbered, and transitions kept (one per successor and label).
    pub states: u64,
    pub edges: u64,
    /// Every reachable state was numbered and expanded.
    pub complete: bool,
    /// States at `events_max`.
    pub cut: u64,
    /// Whether polling loops were parked.
    pub parked: bool,
    pub deadlock: LiveFinding,
    pub starvation: LiveFinding,
    pub termination: LiveFinding,
}

/// The state graph and what the checks read besides it.
struct Explored {
    g: Graph,
    /// Per state: the agents not finished.
    pending: Vec<u8>,
    /// Per state: its key.
    keys: Vec<u128>,
    /// Per expanded state: the step of each action index.
    steps: Vec<Vec<LiveStep>>,
    /// Per state: the step from its BFS parent (`None` for the root).
    via: Vec<Option<LiveStep>>,
    stopped: Option<&'static str>,
}

fn mask(bits: impl Iterator<Item = bool>) -> u8 {
    bits.enumerate()
        .filter(|&(_, b)| b)
        .fold(0u8, |m, (i, _)| m | 1 << i)
}

/// Explores the state graph of `sc` under `cfg` and decides deadlock, starvation and
/// termination.
pub fn liveness(sc: &Scenario, cfg: &LiveConfig<'_>) -> Result<Liveness, ExploreError> {
    if sc.cpl.is_some() {
        return Err(ExploreError::Cpl(sc.file.display().to_string()));
    }
    let n = sc.agents.len();
    if n > AGENTS_MAX {
        let why = format!(
            "the liveness search labels at most {AGENTS_MAX} agents, and the scenario has {n}"
        );
        return Ok(Liveness {
            fairness: cfg.fairness,
            states: 0,
            edges: 0,
            complete: false,
            cut: 0,
            parked: false,
            deadlock: LiveFinding::cannot_tell(why.clone()),
            starvation: LiveFinding::cannot_tell(why.clone()),
            termination: LiveFinding::cannot_tell(why),
        });
    }
    let gen = generator(sc, cfg.on_missing);
    let mut stepper = Stepper::new(sc, gen.as_ref(), trial_seed(sc.seed, 0), cfg.park);
    let init = stepper.initial(cfg.runtime.build(sc.registry(), sc.provenance));
    let x = explore_graph(&mut stepper, init.clone(), cfg)?;
    let cut = x.g.cut.iter().filter(|&&c| c).count() as u64;
    let incomplete = if !x.g.complete || x.stopped.is_some() {
        let key = if crate::engine::abstracts(sc) {
            ""
        } else {
            "; the scenario retracts, so the state key is the concrete one (it holds the log: \
             a run that loops never returns to a state it was in)"
        };
        Some(format!(
            "{} stopped the search at {} states before the graph closed{key}",
            x.stopped.unwrap_or("the state ceiling (--max-states)"),
            x.g.len()
        ))
    } else if cut > 0 {
        Some(format!(
            "events_max = {} ends every path through {cut} states: a run cut there is not \
             infinite, so the cycles past it are not seen",
            sc.events_max
        ))
    } else {
        None
    };
    let ctx = Ctx {
        sc,
        cfg,
        init: &init,
        x: &x,
    };
    let deadlock = ctx.deadlock(&mut stepper, &incomplete)?;
    let starvation = ctx.fair_property(&mut stepper, &incomplete, Property::Starvation)?;
    let termination = ctx.fair_property(&mut stepper, &incomplete, Property::Termination)?;
    Ok(Liveness {
        fairness: cfg.fairness,
        states: x.g.len() as u64,
        edges: x.g.edges() as u64,
        complete: incomplete.is_none(),
        cut,
        parked: stepper.parks(),
        deadlock,
        starvation,
        termination,
    })
}

/// Breadth-first from `init`: every state numbered by its key, expanded in id order.
fn explore_graph(
    stepper: &mut Stepper<'_>,
    init: LiveState<Stack>,
    cfg: &LiveConfig<'_>,
) -> Result<Explored, ExploreError> {
    let n = stepper_agents(stepper, &init);
    let mut x = Explored {
        g: Graph::new(n),
        pending: Vec::new(),
        keys: Vec::new(),
        steps: Vec::new(),
        via: Vec::new(),
        stopped: None,
    };
    let mut ids: HashMap<u128, u32> = HashMap::new();
    let status = stepper.status(&init);
    ids.insert(status.key, x.g.add_state(None));
    x.keys.push(status.key);
    x.via.push(None);
    x.pending.push(mask(status.done.iter().map(|d| !d)));
    let mut queue = VecDeque::from([(init, status)]);
    while let Some((st, status)) = queue.pop_front() {
        let id = x.g.expanded() as u32;
        if cfg.cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
            x.stopped = Some("a signal");
        }
        let enabled = mask((0..n).map(|a| status.enabled.contains(&a)));
        let busy = mask(status.busy.iter().copied());
        if status.cut || x.stopped.is_some() {
            x.g.expand(enabled, busy, status.cut, []);
            x.steps.push(Vec::new());
            continue;
        }
        let succ = stepper.successors(&st)?;
        x.g.generated += succ.len() as u64;
        let mut edges = Vec::with_capacity(succ.len());
        let mut steps = Vec::with_capacity(succ.len());
        for (k, (step, next)) in succ.into_iter().enumerate() {
            let ns = stepper.status(&next);
            let progress = status.busy[step.agent] && !ns.busy[step.agent];
            let to = match ids.get(&ns.key) {
                Some(&to) => to,
                None if ids.len() as u64 >= cfg.max_states => {
                    x.g.complete = false;
                    steps.push(step);
                    continue;
                }
                None => {
                    let to = x.g.add_state(Some((id, k as u32)));
                    ids.insert(ns.key, to);
                    x.keys.push(ns.key);
                    x.via.push(Some(step.clone()));
                    x.pending.push(mask(ns.done.iter().map(|d| !d)));
                    queue.push_back((next, ns));
                    to
                }
            };
            edges.push((to, Some(step.agent as u8), progress, k as u32));
            steps.push(step);
        }
        x.g.expand(enabled, busy, false, edges);
        x.steps.push(steps);
    }
    Ok(x)
}

fn stepper_agents(stepper: &mut Stepper<'_>, s: &LiveState<Stack>) -> usize {
    stepper.status(s).done.len()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Property {
    Starvation,
    Termination,
}

struct Ctx<'c> {
    sc: &'c Scenario,
    cfg: &'c LiveConfig<'c>,
    init: &'c LiveState<Stack>,
    x: &'c Explored,
}

impl Ctx<'_> {
    fn line(&self, schedule: crate::schedule::Schedule) -> ReplayLine {
        ReplayLine {
            scenario: self.sc.file.clone(),
            runtime: self.cfg.runtime,
            seed: self.sc.seed,
            trial: 0,
            schedule,
            on_missing: self.cfg.on_missing,
            repeat_max: self.sc.repeat_cap,
        }
    }

    /// The steps from the root to state `s` (BFS parents).
    fn stem(&self, s: u32) -> Vec<LiveStep> {
        let mut out = Vec::new();
        let mut at = s;
        while let Some(step) = &self.x.via[at as usize] {
            out.push(step.clone());
            at = self.x.g.parent[at as usize].0;
        }
        out.reverse();
        out
    }

    /// Runs `steps` from the initial state.
    fn reach(
        &self,
        stepper: &mut Stepper<'_>,
        steps: &[LiveStep],
    ) -> Result<Option<LiveState<Stack>>, ExploreError> {
        let mut at = self.init.clone();
        for s in steps {
            match stepper.apply(&at, s)? {
                Some(next) => at = next,
                None => return Ok(None),
            }
        }
        Ok(Some(at))
    }

    fn deadlock(
        &self,
        stepper: &mut Stepper<'_>,
        incomplete: &Option<String>,
    ) -> Result<LiveFinding, ExploreError> {
        let g = &self.x.g;
        let found = (0..g.expanded() as u32).find(|&s| {
            !g.cut[s as usize] && g.enabled[s as usize] == 0 && self.x.pending[s as usize] != 0
        });
        let Some(s) = found else {
            return Ok(match incomplete {
                Some(why) => LiveFinding::cannot_tell(why.clone()),
                None => LiveFinding::holds(),
            });
        };
        let stem = self.stem(s);
        let Some(end) = self.reach(stepper, &stem)? else {
            return Ok(LiveFinding::cannot_tell(
                "the path to the deadlocked state did not replay (a bug: please report it)"
                    .to_owned(),
            ));
        };
        let agent = (0..g.agents).find(|&a| self.x.pending[s as usize] & (1 << a) != 0);
        Ok(LiveFinding {
            verdict: LiveVerdict::Violated,
            agent,
            lasso: None,
            replay: Some(self.line(stepper.schedule(&end))),
        })
    }

    fn fair_property(
        &self,
        stepper: &mut Stepper<'_>,
        incomplete: &Option<String>,
        p: Property,
    ) -> Result<LiveFinding, ExploreError> {
        let g = &self.x.g;
        let f = self.cfg.fairness;
        for a in 0..g.agents {
            let x = a as u8;
            let found = match p {
                Property::Starvation => {
                    let keep = |e: &Edge| !(e.progress && e.agent == Some(x));
                    fair_lasso(g, f, &keep, Goal::Marked(&g.busy, x))
                }
                Property::Termination if self.sc.agents[a].serves => None,
                Property::Termination => {
                    fair_lasso(g, f, &|_: &Edge| true, Goal::Marked(&self.x.pending, x))
                }
            };
            if let Some(l) = found {
                return Ok(match self.lasso(stepper, &l)? {
                    Ok(lasso) => LiveFinding {
                        verdict: LiveVerdict::Violated,
                        agent: Some(a),
                        lasso: Some(lasso),
                        replay: None,
                    },
                    Err(why) => LiveFinding::cannot_tell(why),
                });
            }
        }
        Ok(match incomplete {
            Some(why) => LiveFinding::cannot_tell(why.clone()),
            None => LiveFinding::holds(),
        })
    }

    /// The scenario's lasso for graph lasso `l`, replayed: the stem reaches the entry's key,
    /// and the cycle, run twice, returns to it each time.
    fn lasso(
        &self,
        stepper: &mut Stepper<'_>,
        l: &Lasso,
    ) -> Result<Result<LiveLasso, String>, ExploreError> {
        let stem = self.stem(l.entry);
        let cycle: Vec<LiveStep> = l
            .cycle
            .iter()
            .map(|(s, e)| self.x.steps[*s as usize][e.action as usize].clone())
            .collect();
        let bug = |what: &str| {
            Err(format!(
                "the lasso found did not replay ({what}; a bug: please report it)"
            ))
        };
        let Some(entry) = self.reach(stepper, &stem)? else {
            return Ok(bug("the stem"));
        };
        let key = self.x.keys[l.entry as usize];
        if stepper.status(&entry).key != key {
            return Ok(bug("the stem's end"));
        }
        let mut at = entry.clone();
        let mut once = None;
        for round in 0..2 {
            for s in &cycle {
                match stepper.apply(&at, s)? {
                    Some(next) => at = next,
                    None => return Ok(bug("a step of the cycle")),
                }
            }
            if stepper.status(&at).key != key {
                return Ok(bug("the cycle's end"));
            }
            if round == 0 {
                once = Some(at.clone());
            }
        }
        let once = once.expect("the first round ran");
        let mut schedule = stepper.schedule(&once);
        let stem_events = stepper.schedule(&entry).events;
        schedule.cycle = Some(schedule.events - stem_events);
        let line = self.line(schedule);
        // What is reported is what `agentsim replay` takes: the line itself must replay.
        if let Err(why) = replay_lasso(self.sc, self.cfg.runtime, &line) {
            return Ok(bug(&format!("its line: {why}")));
        }
        let list = |m: u8| (0..g_agents(self)).filter(|&a| m & (1 << a) != 0).collect();
        Ok(Ok(LiveLasso {
            stem,
            cycle,
            line,
            stepping: list(l.stepping),
            enabled_always: list(l.enabled_always),
            enabled_sometimes: list(l.enabled_sometimes),
        }))
    }
}

/// What replaying a lasso's line showed: its stem and cycle lengths in events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LassoReplay {
    pub stem_events: u64,
    pub cycle_events: u64,
    /// For `cycle=0`: the agents enabled at the stem's end (a stutter there is fair only
    /// when none is, or without fairness).
    pub enabled_at_end: usize,
}

/// Replays a lasso line (a schedule with `cycle=<n>`) on `runtime`: the stem, then the cycle
/// twice, the state key at the cycle's first state repeating after each round (for
/// `cycle=0`, the stutter, it says how many agents are enabled at the stem's end). The
/// error says where it did not.
pub fn replay_lasso(
    sc: &Scenario,
    runtime: Stack,
    line: &ReplayLine,
) -> Result<LassoReplay, String> {
    let schedule = &line.schedule;
    let (Some(stop), Some(cycle)) = (schedule.stop, schedule.cycle) else {
        return Err("the schedule has no cycle=<events> part: not a lasso".to_owned());
    };
    let gen = generator(sc, line.on_missing);
    let mut stepper = Stepper::new(
        sc,
        gen.as_ref(),
        trial_seed(line.seed, line.trial),
        schedule.park,
    );
    let mut at = stepper.initial(runtime.build(sc.registry(), sc.provenance));
    let stem = stop - cycle;
    run_to(&mut stepper, &mut at, &schedule.choices, stem, 0)?;
    let key = stepper.status(&at).key;
    if cycle == 0 {
        return Ok(LassoReplay {
            stem_events: stem,
            cycle_events: 0,
            enabled_at_end: stepper.status(&at).enabled.len(),
        });
    }
    let start = stepper.counts(&at).1;
    run_to(&mut stepper, &mut at, &schedule.choices, stop, 0)?;
    if stepper.status(&at).key != key {
        return Err(format!(
            "the cycle (events {stem}..{stop}) does not return to the state it starts from"
        ));
    }
    let shift = stepper.counts(&at).1 - start;
    run_to(
        &mut stepper,
        &mut at,
        &schedule.choices,
        stop + cycle,
        shift,
    )?;
    if stepper.status(&at).key != key {
        return Err("the cycle, run a second time, does not return to its first state".to_owned());
    }
    Ok(LassoReplay {
        stem_events: stem,
        cycle_events: cycle,
        enabled_at_end: 0,
    })
}

/// Follows `picks` from `at` until `events` events have run.
fn run_to(
    stepper: &mut Stepper<'_>,
    at: &mut LiveState<Stack>,
    picks: &std::collections::BTreeMap<u64, u32>,
    events: u64,
    shift: u64,
) -> Result<(), String> {
    while stepper.counts(at).0 < events {
        let ran = stepper.counts(at).0;
        match stepper
            .follow(at, picks, shift)
            .map_err(|e| e.to_string())?
        {
            Some((_, next)) => *at = next,
            None => {
                return Err(format!(
                    "the schedule's choices describe no step at event {ran} (no agent \
                     enabled, or a choice past the alternatives offered)"
                ))
            }
        }
    }
    Ok(())
}

fn g_agents(c: &Ctx<'_>) -> usize {
    c.x.g.agents
}

#[cfg(test)]
mod tests;
