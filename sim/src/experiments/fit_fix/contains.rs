//! Whether a fitted scenario contains the observed run: the first trial (of the scenario's
//! seed, under `vanilla`) whose history has the observed records in the observed order (same
//! agent, cells read and written, read position and abort, record by record), its replay
//! line, and the rate of each observed anomaly over the scenario's trials.
//!
//! Finding such a trial shows the run is one the scenario can produce; not finding one in
//! [`SEARCH_TRIALS_MAX`] trials is *cannot tell*, not "impossible".

use agentsim_models::runtime::Stack;
use agentsim_models::verdict::{Reason, Verdict};
use agentsim_models::{Anomaly, History};
use agentsim_sim::fit::{op_keys, OpKey};
use agentsim_sim::replay_line::ReplayLine;
use agentsim_sim::runner::{run_one, run_trials, RunConfig};
use agentsim_sim::scenario::Scenario;
use agentsim_sim::schedule::Schedule;
use agentsim_sim::stats::Proportion;
use std::collections::BTreeMap;

/// The most trials searched for one that reproduces the observed order.
pub const SEARCH_TRIALS_MAX: u64 = 10_000;
/// Trials per batch of the search.
const BATCH: u64 = 200;

/// A trial that reproduced the observed run.
pub struct Reproduced {
    pub line: ReplayLine,
    pub history: History,
    pub exhibits: Vec<Anomaly>,
}

/// The `[[agents]]` name of each simulated agent.
pub fn group_of(sc: &Scenario) -> BTreeMap<String, String> {
    sc.agents
        .iter()
        .map(|a| (a.name.clone(), a.base.clone()))
        .collect()
}

/// The keys of a simulated history, agents named by their `[[agents]]` entry.
pub fn keys(sc: &Scenario, h: &History) -> Vec<OpKey> {
    let groups = group_of(sc);
    op_keys(h, &|a| {
        groups.get(a).cloned().unwrap_or_else(|| a.to_owned())
    })
}

/// The first trial of `sc` under vanilla whose history has `expected`'s order.
pub fn find(sc: &Scenario, expected: &[OpKey]) -> anyhow::Result<Option<Reproduced>> {
    let mut lo = 0;
    while lo < SEARCH_TRIALS_MAX {
        let hi = (lo + BATCH).min(SEARCH_TRIALS_MAX);
        // The search looks past the scenario's own `trials` (a small `--trials`): trial k is
        // the same trial whatever the run's length.
        let cfg = RunConfig {
            runtime: Stack::VANILLA,
            keep_histories: true,
            trials: SEARCH_TRIALS_MAX,
            ..RunConfig::new(sc)
        };
        let r = run_trials(&cfg, lo, hi)?;
        for t in &r.trials {
            let Some(h) = &t.history else { continue };
            if keys(sc, h) != expected {
                continue;
            }
            let schedule = Schedule::parse(&t.metrics.schedule)?;
            let line = ReplayLine {
                scenario: sc.file.clone(),
                runtime: Stack::VANILLA,
                seed: sc.seed,
                trial: t.metrics.trial,
                schedule,
                on_missing: None,
                repeat_max: None,
            };
            // The line must replay to the same history, as `agentsim replay` will run it.
            let one = run_one(
                sc,
                Stack::VANILLA,
                sc.seed,
                line.trial,
                &line.schedule,
                None,
            )?;
            anyhow::ensure!(
                keys(sc, &one.history) == expected,
                "trial {} does not replay to the history it ran (a bug in the replay)",
                line.trial
            );
            return Ok(Some(Reproduced {
                exhibits: one.report.anomalies(),
                history: one.history,
                line,
            }));
        }
        lo = hi;
    }
    Ok(None)
}

/// Each of `anomalies` as k/N over `sc`'s trials under `runtime` (seed `seed`).
pub fn rates(
    sc: &Scenario,
    runtime: Stack,
    anomalies: &[Anomaly],
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<(Vec<(Anomaly, Proportion)>, agentsim_sim::RunResult)> {
    let r = crate::experiments::run::run_under(sc, runtime, trials, seed, threads)?;
    let out = anomalies
        .iter()
        .map(|&a| {
            let k = r
                .trials
                .iter()
                .filter(|t| t.metrics.anomalies.contains(&a))
                .count() as u64;
            (a, Proportion::new(k, trials))
        })
        .collect();
    Ok((out, r))
}

/// Schedules one exploration of a fitted scenario may run before its answer is *cannot tell*:
/// a stack that retries (a lock, a tool validation) multiplies the interleavings of even a
/// two-record run, so the ceiling keeps `fit` and `fix` within seconds; such a candidate is
/// left unverified, never verified on a partial search.
pub const EXPLORE_SCHEDULES_MAX: u64 = 100_000;

/// Whether exhaustive exploration of `sc` under `runtime` (every interleaving, time
/// abstracted: [`agentsim_sim::explore`]) reaches each of `anomalies`: *holds* when some
/// interleaving shows it, *violated* when none does, *cannot tell* when the search stopped at
/// [`EXPLORE_SCHEDULES_MAX`] schedules or the scenario cannot be explored.
pub fn explore_reachable(
    sc: &Scenario,
    runtime: Stack,
    anomalies: &[Anomaly],
) -> Vec<(Anomaly, Verdict)> {
    use agentsim_sim::explore::{explore, ExploreConfig, Reach};
    let mut cfg = ExploreConfig::new(runtime);
    cfg.max_schedules = Some(EXPLORE_SCHEDULES_MAX);
    let x = explore(sc, &cfg);
    anomalies
        .iter()
        .map(|&a| {
            let v = match &x {
                Err(e) => Verdict::CannotTell(Reason::Undecidable(e.to_string())),
                Ok(x) => match x.finding(a).map(|f| f.reach) {
                    Some(Reach::Reachable) => Verdict::Holds,
                    Some(Reach::Unreachable) => Verdict::Violated,
                    Some(Reach::CannotTell) => Verdict::CannotTell(Reason::Budget(format!(
                        "the search stopped after {} schedules; run `agentsim explore` with a \
                         larger --max-schedules",
                        x.schedules
                    ))),
                    None => Verdict::CannotTell(Reason::Undecidable(format!(
                        "the explorer does not report {a}"
                    ))),
                },
            };
            (a, v)
        })
        .collect()
}
