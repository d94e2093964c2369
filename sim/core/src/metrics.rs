//! Per-trial metrics and their aggregate over a run.
//!
//! A trial's metrics are its detectors' verdicts (the anomaly set its history exhibits, and
//! its level), the engine's counters and the schedule string that replays it. The aggregate is computed
//! from the per-trial list in trial order only, so it is byte-identical whatever the number
//! of threads that produced the list. Rates come with Wilson 95 % intervals; means are plain
//! means (no interval: their spread is printed as min and max instead).

use crate::engine::{Counts, TrialRun};
use crate::stats::{mean, Proportion};
use agentsim_models::anomaly::Scope;
use agentsim_models::detect::{Anomaly, Report};
use agentsim_models::lattice::{level, Point};
use serde::Serialize;
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::ops::Deref;

/// The anomalies a simulated trial can exhibit, in the order summaries print them: the
/// lattice's four, then every other catalogue entry decidable on a single-store history (the
/// A3 residue form). A4 needs replica metadata, which the engine's single store never records.
pub fn reported() -> impl Iterator<Item = Anomaly> {
    let rest = Anomaly::ALL
        .into_iter()
        .filter(|a| a.lattice_bit().is_none() && a.scope() == Scope::Any);
    Anomaly::LATTICE.into_iter().chain(rest)
}

/// Whether a trial with these lattice anomalies (`Report::anomalies`) and this A3 residue
/// exhibits `a`: what [`TrialMetrics::has`] answers, for callers that need no metrics.
pub fn exhibits(lattice: &[Anomaly], a3_residue: bool, a: Anomaly) -> bool {
    match a {
        Anomaly::A1 | Anomaly::A2 | Anomaly::A3 | Anomaly::A6 => lattice.contains(&a),
        Anomaly::A3Residue => a3_residue,
        // The engine's single store records no replica metadata.
        Anomaly::A4 => false,
    }
}

/// What one trial produced (also the per-trial fact a partial result carries).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TrialMetrics {
    pub trial: u64,
    /// The exact set of anomalies exhibited, in lattice order.
    pub anomalies: Vec<Anomaly>,
    pub a3_residue: bool,
    /// The highest Lk the history satisfies (0–4).
    pub level: u8,
    pub records: u64,
    /// The engine's counts (read through `Deref`: `metrics.events`), serialised among the
    /// fields above and below as one flat object.
    #[serde(flatten)]
    pub counts: Counts,
    pub schedule: String,
}

impl TrialMetrics {
    /// The metrics of trial `trial` from its run and its detectors' report.
    pub fn new(trial: u64, run: &TrialRun, report: &Report) -> TrialMetrics {
        let found = report.anomalies();
        TrialMetrics {
            trial,
            anomalies: found.clone(),
            a3_residue: !report.a3_residue.is_empty(),
            level: level(Point::of(&found)),
            records: run.records.len() as u64,
            counts: run.counters.counts,
            schedule: run.schedule.to_string(),
        }
    }

    /// Whether the trial exhibits `a`.
    pub fn has(&self, a: Anomaly) -> bool {
        exhibits(&self.anomalies, self.a3_residue, a)
    }

    /// Simulated operations: records appended plus operations dropped before generation.
    pub fn ops(&self) -> u64 {
        self.records + self.drops
    }
}

impl Deref for TrialMetrics {
    type Target = Counts;

    fn deref(&self) -> &Counts {
        &self.counts
    }
}

/// Mean, min and max of one counter over the trials.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub mean: f64,
    pub min: u64,
    pub max: u64,
}

impl Spread {
    fn of(xs: impl Iterator<Item = u64> + Clone) -> Spread {
        Spread {
            mean: mean(xs.clone()),
            min: xs.clone().min().unwrap_or(0),
            max: xs.max().unwrap_or(0),
        }
    }
}

/// The aggregate of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Aggregate {
    pub trials: u64,
    /// Per anomaly of [`reported`]: trials exhibiting it.
    pub anomalies: BTreeMap<Anomaly, Proportion>,
    /// Trials exhibiting at least one of A1, A2, A3, A6.
    pub any: Proportion,
    /// Trials with at least one abort, and with at least one drop.
    pub aborted_trials: Proportion,
    pub dropped_trials: Proportion,
    /// Trials per level, index = level 0–4.
    pub levels: [u64; 5],
    pub tokens_total: Spread,
    pub tokens_wasted: Spread,
    pub commits: Spread,
    pub aborts: Spread,
    pub drops: Spread,
    pub retries: Spread,
    pub retractions: Spread,
    pub makespan_ms: Spread,
    pub ops_total: u64,
    pub events_total: u64,
    pub truncated: u64,
}

impl Aggregate {
    /// Aggregates trials (in trial order).
    pub fn of<T: Borrow<TrialMetrics>>(trials: &[T]) -> Aggregate {
        let trials: Vec<&TrialMetrics> = trials.iter().map(Borrow::borrow).collect();
        let trials = &trials[..];
        let n = trials.len() as u64;
        let count =
            |f: &dyn Fn(&TrialMetrics) -> bool| trials.iter().filter(|t| f(t)).count() as u64;
        let anomalies = reported()
            .map(|a| (a, Proportion::new(count(&|t| t.has(a)), n)))
            .collect();
        let mut levels = [0; 5];
        for t in trials {
            levels[usize::from(t.level)] += 1;
        }
        let it = |f: fn(&TrialMetrics) -> u64| trials.iter().map(move |t| f(t));
        Aggregate {
            trials: n,
            anomalies,
            any: Proportion::new(count(&|t| !t.anomalies.is_empty()), n),
            aborted_trials: Proportion::new(count(&|t| t.aborts > 0), n),
            dropped_trials: Proportion::new(count(&|t| t.drops > 0), n),
            levels,
            tokens_total: Spread::of(it(|t| t.tokens_total)),
            tokens_wasted: Spread::of(it(|t| t.tokens_wasted)),
            commits: Spread::of(it(|t| t.commits)),
            aborts: Spread::of(it(|t| t.aborts)),
            drops: Spread::of(it(|t| t.drops)),
            retries: Spread::of(it(|t| t.retries)),
            retractions: Spread::of(it(|t| t.retractions)),
            makespan_ms: Spread::of(it(|t| t.makespan_ms)),
            ops_total: trials.iter().map(|t| t.ops()).sum(),
            events_total: trials.iter().map(|t| t.events).sum(),
            truncated: count(&|t| t.truncated),
        }
    }

    /// The proportion of trials exhibiting `a` (`None` for an anomaly not [`reported`]).
    pub fn rate(&self, a: Anomaly) -> Option<&Proportion> {
        self.anomalies.get(&a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(k: u64, anomalies: Vec<Anomaly>, tokens: u64) -> TrialMetrics {
        TrialMetrics {
            trial: k,
            level: if anomalies.contains(&Anomaly::A1) {
                0
            } else {
                4
            },
            anomalies,
            a3_residue: false,
            records: 2,
            counts: Counts {
                commits: 2,
                aborts: k % 2,
                generations: 2,
                tokens_total: tokens,
                makespan_ms: 10,
                events: 6,
                ..Counts::default()
            },
            schedule: "S1:6:-".into(),
        }
    }

    #[test]
    fn counts_rates_and_levels() {
        let ts = vec![
            trial(0, vec![Anomaly::A1], 10),
            trial(1, vec![], 20),
            trial(2, vec![Anomaly::A1], 30),
        ];
        let a = Aggregate::of(&ts);
        assert_eq!(a.anomalies[&Anomaly::A1].k, 2);
        assert_eq!(a.anomalies[&Anomaly::A6].k, 0);
        assert_eq!(a.levels, [2, 0, 0, 0, 1]);
        assert_eq!(
            a.tokens_total,
            Spread {
                mean: 20.0,
                min: 10,
                max: 30
            }
        );
        assert_eq!(a.aborted_trials.k, 1);
        assert_eq!(a.ops_total, 6);
        let names: Vec<&str> = reported().map(Anomaly::name).collect();
        assert_eq!(names, ["A1", "A2", "A3", "A6", "A3_residue"]);
        assert!(a.rate(Anomaly::A4).is_none());
    }
}
