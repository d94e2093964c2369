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
        // The search may pass the scenario's own `trials`; trial k is the same trial whatever
        // the run's length, so the line replays it.
        let cfg = RunConfig {
            runtime: Stack::VANILLA,
            trials: SEARCH_TRIALS_MAX,
            keep_histories: true,
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
/// interleaving shows it, *violated* when a complete search shows none, *cannot tell* with
/// the explorer's reason when anything cut the search (the step budget, `events_max`,
/// [`EXPLORE_SCHEDULES_MAX`] schedules), when the scenario cannot produce the anomaly
/// (vacuous), or when it cannot be explored.
pub fn explore_reachable(
    sc: &Scenario,
    runtime: Stack,
    anomalies: &[Anomaly],
) -> Vec<(Anomaly, Verdict)> {
    use agentsim_sim::explore::{explore, ExploreConfig};
    let mut cfg = ExploreConfig::new(runtime);
    cfg.max_schedules = Some(EXPLORE_SCHEDULES_MAX);
    let x = explore(sc, &cfg);
    anomalies
        .iter()
        .map(|&a| {
            let v = match &x {
                Err(e) => Verdict::CannotTell(Reason::Undecidable(e.to_string())),
                // "reachable" is the claim: the verdict on "never" turned over.
                Ok(x) => match x.never(a) {
                    Verdict::Violated => Verdict::Holds,
                    Verdict::Holds => Verdict::Violated,
                    untold => untold,
                },
            };
            (a, v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(name: &str) -> Scenario {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios/bounds")
            .join(name);
        Scenario::load(&p).expect("shipped scenario")
    }

    /// What `fit`'s explore line and `fix`'s "explored" evidence read: a search the step
    /// budget or `events_max` cut is *cannot tell (budget)*, never "A1 reachable: violated"
    /// (unreachable); a vacuous anomaly is *cannot tell (vacuous)*; a complete search decides.
    #[test]
    fn a_cut_search_is_no_evidence_for_fit_or_fix() {
        for name in ["editor-45-waits.toml", "editor-45-waits-events-max.toml"] {
            let sc = bounds(name);
            let v = explore_reachable(&sc, sc.runtime, &[Anomaly::A1, Anomaly::A3]);
            assert!(
                matches!(&v[0].1, Verdict::CannotTell(Reason::Budget(_))),
                "{name}: {:?}",
                v[0]
            );
            assert!(
                matches!(&v[1].1, Verdict::CannotTell(Reason::Vacuous(_))),
                "{name}: {:?}",
                v[1]
            );
        }
        let sc = bounds("retracted-plan.toml");
        let v = explore_reachable(&sc, sc.runtime, &[Anomaly::A3]);
        assert_eq!(v[0].1, Verdict::Holds, "A3 reachable");
        let causal = Stack::parse("causal").unwrap();
        let v = explore_reachable(&sc, causal, &[Anomaly::A3]);
        assert_eq!(
            v[0].1,
            Verdict::Violated,
            "A3 unreachable under causal: {v:?}"
        );
    }
}
