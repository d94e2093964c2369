//! One expectation decided: its run (seeded trials of the file's engine, shared by every
//! expectation that asks for the same runtime, seed and trial count), its verdict and its
//! evidence — the count k/N with its Wilson 95 % interval and, for a failure that a trial
//! shows, the replay line of a witness shrunk to the fewest scheduling deviations.
//!
//! `never` by sampling is "no anomaly in these N trials", not "impossible": only exploration
//! (`by = "explore"`) decides every interleaving. A run cut at `events_max`, or an exploration
//! this build cannot do, is *cannot tell*, never a pass.

use super::collect::Loaded;
use crate::experiments::split_view;
use agentsim_models::runtime::Stack;
use agentsim_models::{Anomaly, Verdict};
use agentsim_sim::replay_line::ReplayLine;
use agentsim_sim::runner::{RunConfig, RunResult};
use agentsim_sim::scenario::expect::{
    By, Claim, ExpectRuntime, Expectation, Fairness, Live, Property,
};
use agentsim_sim::scenario::Scenario;
use agentsim_sim::shrink::{shrink, ShrinkInput};
use agentsim_sim::stats::Proportion;
use anyhow::{anyhow, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Bound on replays while shrinking one witness (a witness that needs more is printed with
/// what the budget reached, and says so).
pub const SHRINK_RUNS_MAX: u64 = 2_000;

/// How a case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    Fail,
    CannotTell,
}

impl Outcome {
    /// The word the text output starts the case's line with.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Fail => "FAIL",
            Outcome::CannotTell => "ERROR",
        }
    }
}

/// A decided case, as every output (text, JSON, JUnit, partials) carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseResult {
    /// Position among all the suite's cases (file order, then line order).
    pub index: u64,
    pub line: usize,
    pub name: String,
    pub anomaly: String,
    pub runtime: String,
    pub claim: String,
    pub by: String,
    pub seed: u64,
    pub trials: u64,
    pub outcome: Outcome,
    /// Trials exhibiting the anomaly, of `n` (absent when nothing ran).
    pub k: Option<u64>,
    pub n: Option<u64>,
    /// One line: the counts with their interval, or why it cannot be told.
    pub evidence: String,
    /// The replay line of a witness trial, for a failure that a trial shows.
    pub replay: Option<String>,
}

/// A case to run: the expectation, its name and its position.
pub struct Case<'a> {
    pub index: u64,
    pub file: &'a Path,
    pub loaded: &'a Loaded,
    pub exp: &'a Expectation,
}

impl Case<'_> {
    /// The case's name: the expectation's `name`, or what it claims.
    pub fn name(&self) -> String {
        if let Some(n) = &self.exp.name {
            return n.clone();
        }
        let by = match self.exp.by {
            By::Simulate => String::new(),
            By::Explore => " by explore".to_owned(),
        };
        format!(
            "{} {} under {}{by}",
            self.exp.property,
            self.exp.claim,
            self.runtime_name()
        )
    }

    fn runtime_name(&self) -> String {
        match (self.exp.runtime, self.loaded) {
            (Some(r), _) => r.name(),
            (None, Loaded::Scenario(sc)) => sc.runtime.name(),
            (None, Loaded::SplitView(_)) => "any-replica".to_owned(),
        }
    }

    fn seed_trials(&self) -> (u64, u64) {
        let (seed, trials) = match self.loaded {
            Loaded::Scenario(sc) => (sc.seed, sc.trials),
            Loaded::SplitView(s) => (s.seed, s.trials),
        };
        (
            self.exp.seed.unwrap_or(seed),
            self.exp.trials.unwrap_or(trials),
        )
    }
}

/// The runs already made, by file, runtime, seed and trials: expectations that ask for the
/// same run share it.
#[derive(Default)]
pub struct Runs {
    sim: BTreeMap<(u64, String, u64, u64), RunResult>,
    split: BTreeMap<(u64, u64, u64), Vec<split_view::Row>>,
}

/// Decides one case; `file_id` keys the shared runs, `threads` runs the trials.
pub fn decide(
    case: &Case<'_>,
    file_id: u64,
    runs: &mut Runs,
    threads: usize,
) -> Result<CaseResult> {
    let (seed, trials) = case.seed_trials();
    let mut r = CaseResult {
        index: case.index,
        line: case.exp.line,
        name: case.name(),
        anomaly: case.exp.property.name().to_owned(),
        runtime: case.runtime_name(),
        claim: case.exp.claim.to_string(),
        by: case.exp.by.name().to_owned(),
        seed,
        trials,
        outcome: Outcome::CannotTell,
        k: None,
        n: None,
        evidence: String::new(),
        replay: None,
    };
    match case.loaded {
        Loaded::Scenario(sc) => {
            let runtime = match case.exp.runtime {
                Some(ExpectRuntime::Stack(s)) => s,
                _ => sc.runtime,
            };
            if let Property::Live(p, f) = case.exp.property {
                run_liveness(case, sc, runtime, p, f, &mut r);
                return Ok(r);
            }
            let Property::Anomaly(a) = case.exp.property else {
                return Err(anyhow!("the loader admits only catalogue anomalies here"));
            };
            if case.exp.by == By::Explore {
                run_by_explore(case, sc, runtime, &mut r);
                return Ok(r);
            }
            let key = (file_id, runtime.name(), seed, trials);
            if !runs.sim.contains_key(&key) {
                match simulate(sc, runtime, seed, trials, threads) {
                    Ok(run) => runs.sim.insert(key.clone(), run),
                    // A trial the engine cannot run (a recording without the generation
                    // this runtime asks for, …) leaves the claim untold, not the suite.
                    Err(e) => {
                        r.evidence = format!("cannot tell: the run failed: {e:#}");
                        return Ok(r);
                    }
                };
            }
            let run = &runs.sim[&key];
            by_simulation(sc, runtime, a, case.exp.claim, run, &mut r)?;
        }
        Loaded::SplitView(s) => {
            let key = (file_id, seed, trials);
            if let std::collections::btree_map::Entry::Vacant(slot) = runs.split.entry(key) {
                let s = s
                    .clone()
                    .with(Some(trials), Some(seed))
                    .map_err(|e| anyhow!("{}:{}: {e}", case.file.display(), case.exp.line))?;
                slot.insert(split_view::twin(&s));
            }
            split_view_case(case, &runs.split[&key], &mut r);
        }
    }
    Ok(r)
}

/// Schedules one `by = "explore"` case may run before it is *cannot tell* (a suite must end;
/// `agentsim explore --max-schedules` lifts the ceiling for a single scenario).
pub const EXPLORE_SCHEDULES_MAX: u64 = 1_000_000;

/// `by = "explore"`: every interleaving of the scenario under `runtime`
/// ([`agentsim_sim::explore`]): `never` passes when the anomaly is unreachable over every
/// interleaving (a complete search only), `reachable` when some path shows it; a search that
/// anything cut or stopped (the step budget, `events_max`, the ceiling) or a scenario that
/// cannot produce the anomaly (vacuous) is *cannot tell* (ERROR, exit 2), never a pass. A
/// failed `never` carries the shortest witness's replay line.
pub fn run_by_explore(case: &Case<'_>, sc: &Scenario, runtime: Stack, r: &mut CaseResult) {
    use agentsim_sim::explore::{explore, ExploreConfig, Reach};
    let Property::Anomaly(a) = case.exp.property else {
        r.outcome = Outcome::CannotTell;
        r.evidence = "cannot tell: only catalogue anomalies are explored".to_owned();
        return;
    };
    let mut cfg = ExploreConfig::new(runtime);
    cfg.max_schedules = Some(EXPLORE_SCHEDULES_MAX);
    let x = match explore(sc, &cfg) {
        Ok(x) => x,
        Err(e) => {
            r.outcome = Outcome::CannotTell;
            r.evidence = format!("cannot tell: {e}");
            return;
        }
    };
    let Some(f) = x.finding(a) else {
        r.outcome = Outcome::CannotTell;
        r.evidence = format!("cannot tell: the explorer does not report {a}");
        return;
    };
    let counts = format!(
        "{} schedules, {} classes{}",
        x.schedules,
        x.classes,
        if x.complete { ", complete" } else { "" }
    );
    let (outcome, said) = match (f.reach, case.exp.claim) {
        (Reach::CannotTell, _) => (
            Outcome::CannotTell,
            match f.never().reason() {
                Some(why) => format!("cannot tell: {a}: {why}"),
                None => format!("cannot tell: the search did not decide {a}"),
            },
        ),
        (Reach::Reachable, Claim::Never) => (Outcome::Fail, format!("{a} reachable")),
        (Reach::Reachable, _) => (Outcome::Pass, format!("{a} reachable")),
        (Reach::Unreachable, Claim::Never) => {
            (Outcome::Pass, format!("{a} unreachable {}", x.bound_text()))
        }
        (Reach::Unreachable, _) => (Outcome::Fail, format!("{a} unreachable {}", x.bound_text())),
    };
    r.outcome = outcome;
    r.evidence = format!("{said} ({counts})");
    if let Some(w) = &f.witness {
        r.evidence = format!("{}; shortest witness {} events", r.evidence, w.events);
        if outcome == Outcome::Fail {
            r.replay = Some(w.line.command());
        }
    }
}

/// A liveness claim: `explore --liveness` on the scenario under `runtime` and fairness `f`
/// ([`agentsim_sim::explore::live`]): `never` passes when the property holds (a complete
/// graph only), `reachable` when it is violated; a cut graph is *cannot tell* (ERROR), never
/// a pass. A failed `never` carries the path or lasso's replay line.
pub fn run_liveness(
    case: &Case<'_>,
    sc: &Scenario,
    runtime: Stack,
    p: Live,
    f: Fairness,
    r: &mut CaseResult,
) {
    use agentsim_sim::explore::live::{liveness, LiveConfig, LiveVerdict};
    let cfg = LiveConfig {
        fairness: f,
        ..LiveConfig::new(runtime)
    };
    let l = match liveness(sc, &cfg) {
        Ok(l) => l,
        Err(e) => {
            r.outcome = Outcome::CannotTell;
            r.evidence = format!("cannot tell: {e}");
            return;
        }
    };
    let found = match p {
        Live::Deadlock => &l.deadlock,
        Live::Starvation => &l.starvation,
        Live::Termination => &l.termination,
    };
    let counts = format!(
        "{} states, {} transitions{}",
        l.states,
        l.edges,
        if l.complete { ", complete" } else { "" }
    );
    let who = found
        .agent
        .map_or(String::new(), |a| format!(" ({})", sc.agents[a].name));
    let name = p.name();
    let (outcome, said) = match (&found.verdict, case.exp.claim) {
        (LiveVerdict::CannotTell(why), _) => (Outcome::CannotTell, format!("cannot tell: {why}")),
        (LiveVerdict::Violated, Claim::Never) => (Outcome::Fail, format!("{name} violated{who}")),
        (LiveVerdict::Violated, _) => (Outcome::Pass, format!("{name} violated{who}")),
        (LiveVerdict::Holds, Claim::Never) => (Outcome::Pass, format!("{name} holds")),
        (LiveVerdict::Holds, _) => (Outcome::Fail, format!("{name} holds")),
    };
    r.outcome = outcome;
    r.evidence = format!("{said} ({counts})");
    if outcome == Outcome::Fail {
        r.replay = found
            .lasso
            .as_ref()
            .map(|l| l.line.command())
            .or_else(|| found.replay.as_ref().map(|l| l.command()));
    }
}

fn simulate(
    sc: &Scenario,
    runtime: Stack,
    seed: u64,
    trials: u64,
    threads: usize,
) -> Result<RunResult> {
    let mut cfg = RunConfig::new(sc);
    cfg.runtime = runtime;
    cfg.seed = seed;
    cfg.trials = trials;
    cfg.threads = threads.max(1);
    agentsim_sim::runner::run(&cfg).map_err(|e| anyhow!("{}: {e}", sc.file.display()))
}

/// `k/N (rate) [lo, hi] 95% Wilson`.
fn counts(p: &Proportion) -> String {
    use agentsim_sim::stats::percent;
    format!(
        "{}/{} ({}%, 95% Wilson [{}%, {}%])",
        p.k,
        p.n,
        percent(p.rate),
        percent(p.lo),
        percent(p.hi)
    )
}

fn by_simulation(
    sc: &Scenario,
    runtime: Stack,
    a: Anomaly,
    claim: Claim,
    run: &RunResult,
    r: &mut CaseResult,
) -> Result<()> {
    let agg = &run.aggregate;
    let p = *agg
        .rate(a)
        .ok_or_else(|| anyhow!("{a} is not recorded by the simulator"))?;
    (r.k, r.n) = (Some(p.k), Some(p.n));
    r.evidence = counts(&p);
    let verdict = crate::cmd::simulate::verdict_in(sc, runtime, agg, a);
    let (outcome, witness) = match (claim, &verdict) {
        (_, Verdict::CannotTell(why)) if p.k == 0 => (Outcome::CannotTell, Some(why.to_string())),
        (Claim::Never, _) => match p.k {
            0 => (Outcome::Pass, None),
            _ => (Outcome::Fail, None),
        },
        (Claim::Reachable, _) => match p.k {
            0 => (Outcome::Fail, None),
            _ => (Outcome::Pass, None),
        },
        (Claim::Rate { lo, hi }, _) => {
            let inside = lo <= p.rate && p.rate <= hi;
            match (inside, agg.truncated) {
                (true, _) => (Outcome::Pass, None),
                (false, 0) => (Outcome::Fail, None),
                (false, cut) => (
                    Outcome::CannotTell,
                    Some(format!(
                        "{cut} of {} trials hit events_max; raise [schedule] events_max",
                        agg.trials
                    )),
                ),
            }
        }
    };
    r.outcome = outcome;
    if let Some(why) = witness {
        r.evidence = format!("{}; cannot tell: {why}", r.evidence);
        return Ok(());
    }
    let too_many = match claim {
        Claim::Never => p.k > 0,
        Claim::Rate { hi, .. } => p.rate > hi,
        Claim::Reachable => false,
    };
    if outcome == Outcome::Fail && too_many {
        let (line, note) = witness_line(sc, runtime, r.seed, a, run)?;
        r.evidence = format!("{}; witness {note}", r.evidence);
        r.replay = Some(line.command());
    }
    if outcome == Outcome::Fail && !too_many {
        r.evidence = format!(
            "{}; too few trials exhibit {a}, so no witness trial",
            r.evidence
        );
    }
    Ok(())
}

/// The first trial that exhibits `a`, shrunk to the fewest scheduling deviations.
fn witness_line(
    sc: &Scenario,
    runtime: Stack,
    seed: u64,
    a: Anomaly,
    run: &RunResult,
) -> Result<(ReplayLine, String)> {
    let first = run
        .trials
        .iter()
        .find(|t| t.metrics.has(a))
        .ok_or_else(|| anyhow!("a failed claim with k > 0 has a trial that exhibits {a}"))?;
    let schedule = agentsim_sim::schedule::Schedule::parse(&first.metrics.schedule)?;
    let input = ShrinkInput {
        scenario: sc,
        runtime,
        seed,
        trial: first.metrics.trial,
        schedule,
        on_missing: None,
        target: Some(a),
        runs_max: SHRINK_RUNS_MAX,
    };
    let out = shrink(&input).map_err(|e| anyhow!("{}: shrinking: {e}", sc.file.display()))?;
    let note = format!(
        "trial {}, shrunk to {} events and {} scheduling deviations{}",
        first.metrics.trial,
        out.shrunk.metrics.events,
        out.schedule.deviations(),
        if out.exhausted {
            format!(" (the budget of {SHRINK_RUNS_MAX} replays ran out)")
        } else {
            String::new()
        }
    );
    let line = ReplayLine {
        scenario: sc.file.clone(),
        runtime,
        seed,
        trial: first.metrics.trial,
        schedule: out.schedule,
        on_missing: None,
        repeat_max: None,
    };
    Ok((line, note))
}

/// A4 under one read discipline of the split-view twin.
fn split_view_case(case: &Case<'_>, rows: &[split_view::Row], r: &mut CaseResult) {
    let d = match case.exp.runtime {
        Some(ExpectRuntime::Discipline(d)) => d,
        _ => agentsim_models::replica::ReadDiscipline::AnyReplica,
    };
    let Some(row) = rows.iter().find(|row| row.discipline == d) else {
        r.evidence = format!("the twin has no row for {}", d.name());
        return;
    };
    let p = row.split;
    (r.k, r.n) = (Some(p.k), Some(p.n));
    r.evidence = counts(&p);
    let pass = match case.exp.claim {
        Claim::Never => p.k == 0,
        Claim::Reachable => p.k > 0,
        Claim::Rate { lo, hi } => lo <= p.rate && p.rate <= hi,
    };
    r.outcome = if pass { Outcome::Pass } else { Outcome::Fail };
    if let (false, Some(t)) = (pass, row.first_split) {
        r.evidence = format!(
            "{}; witness trial {t} (a fixed script: nothing to shrink)",
            r.evidence
        );
        r.replay = Some(format!(
            "agentsim split-view {} --seed {} --trials {} --trial {t} --read-discipline {}",
            case.file.display(),
            r.seed,
            r.trials,
            d.name()
        ));
    }
}
