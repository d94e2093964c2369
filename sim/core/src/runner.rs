//! The library entry point: run a scenario for N trials (on several threads) and get every
//! trial's metrics plus the aggregate. Commands (`simulate`, `bench sim`, the experiments)
//! call [`run`]; `replay` and `shrink` call [`run_one`].
//!
//! Trial k's seed is a fixed function of (run seed, k), so a trial is the same whether it
//! runs alone, first, last, or on another thread; results are collected in trial order. A
//! run proves nothing beyond the trials it ran.

use crate::engine::{run_trial, run_trial_in, Pool, SimError, TrialRun, TrialSetup};
use crate::generator::recorded::Recorded;
use crate::generator::stub::Stub;
use crate::generator::Generator;
use crate::metrics::{Aggregate, TrialMetrics};
use crate::scenario::{GeneratorSpec, OnMissing, Scenario};
use crate::schedule::Schedule;
use crate::scheduler::SchedulerSpec;
use agentsim_models::detect::{fast, Report};
use agentsim_models::history::History;
use agentsim_models::runtime::Stack;

/// How to run a scenario.
#[derive(Clone, Debug)]
pub struct RunConfig<'a> {
    pub scenario: &'a Scenario,
    pub runtime: Stack,
    pub seed: u64,
    pub trials: u64,
    pub scheduler: SchedulerSpec,
    pub threads: usize,
    /// Overrides the scenario's `on_missing` for a recorded generator.
    pub on_missing: Option<OnMissing>,
    /// Keep each trial's history (with names) in the result.
    pub keep_histories: bool,
    /// Collect recording lines of every generation.
    pub record: bool,
}

impl<'a> RunConfig<'a> {
    /// The scenario's own runtime, seed and trial count; the random scheduler; one thread.
    pub fn new(scenario: &'a Scenario) -> Self {
        RunConfig {
            scenario,
            runtime: scenario.runtime,
            seed: scenario.seed,
            trials: scenario.trials,
            scheduler: SchedulerSpec::Random,
            threads: 1,
            on_missing: None,
            keep_histories: false,
            record: false,
        }
    }
}

/// One trial's result.
#[derive(Clone, Debug)]
pub struct TrialResult {
    pub metrics: TrialMetrics,
    /// The history with the scenario's names, if kept.
    pub history: Option<History>,
    pub recorded: Vec<String>,
    /// Events with two or more enabled (the scheduler's real decisions); `None` when the
    /// trial came from a partial result, which does not carry it.
    pub choice_points: Option<u64>,
}

/// A run's results, in trial order, and their aggregate.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub trials: Vec<TrialResult>,
    pub aggregate: Aggregate,
}

pub use crate::rng::trial_seed;

/// Runs the detectors on a history (the near-linear forms, proven equal to the spec forms).
pub fn detect(h: &History) -> Report {
    fast::detect(h)
}

/// Runs every trial and aggregates.
pub fn run(cfg: &RunConfig<'_>) -> Result<RunResult, SimError> {
    run_trials(cfg, 0, cfg.trials)
}

/// Runs trials `lo..hi` of the run (a shard of it: trial k is the same trial it is in the
/// whole run) and aggregates them, on up to `cfg.threads` threads.
pub fn run_trials(cfg: &RunConfig<'_>, lo: u64, hi: u64) -> Result<RunResult, SimError> {
    assert!(lo <= hi, "trial range {lo}..{hi} is reversed");
    assert!(
        hi <= cfg.trials,
        "trial range {lo}..{hi} exceeds {} trials",
        cfg.trials
    );
    let n = hi - lo;
    let threads = cfg.threads.clamp(1, n.max(1) as usize);
    if threads == 1 {
        let trials = run_range(cfg, lo, hi)?;
        let metrics: Vec<&TrialMetrics> = trials.iter().map(|t| &t.metrics).collect();
        return Ok(RunResult {
            aggregate: Aggregate::of(&metrics),
            trials,
        });
    }
    let chunk = n.div_ceil(threads as u64).max(1);
    let parts: Vec<Result<Vec<TrialResult>, SimError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads as u64)
            .map(|t| {
                let a = lo + (t * chunk).min(n);
                let b = lo + ((t + 1) * chunk).min(n);
                s.spawn(move || run_range(cfg, a, b))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a simulation thread panicked"))
            .collect()
    });
    // Sized by what the threads returned, not by the number asked for.
    let mut trials = Vec::with_capacity(parts.iter().map(|p| p.as_ref().map_or(0, Vec::len)).sum());
    for p in parts {
        trials.extend(p?);
    }
    assert_eq!(trials.len() as u64, n, "every trial ran once");
    let metrics: Vec<&TrialMetrics> = trials.iter().map(|t| &t.metrics).collect();
    Ok(RunResult {
        aggregate: Aggregate::of(&metrics),
        trials,
    })
}

fn run_range(cfg: &RunConfig<'_>, lo: u64, hi: u64) -> Result<Vec<TrialResult>, SimError> {
    let generator = generator(cfg.scenario, cfg.on_missing);
    let mut sched = cfg.scheduler.build();
    // Grown as trials finish: a reservation from the user's trial count could fail up front.
    let mut out = Vec::new();
    let mut pool = Pool::default();
    for k in lo..hi {
        let setup = TrialSetup {
            scenario: cfg.scenario,
            trial_seed: trial_seed(cfg.seed, k),
            generator: generator.as_ref(),
            scheduler: sched.as_mut(),
            stop: None,
            trace: false,
            record: cfg.record,
        };
        let rt = cfg
            .runtime
            .build(cfg.scenario.registry(), cfg.scenario.provenance);
        let mut run = run_trial_in(rt, setup, &mut pool)?;
        // The records move into the history for detection and back: no copy per trial.
        let history = History::from_records(std::mem::take(&mut run.records));
        let report = detect(&history);
        run.records = history.records;
        let metrics = TrialMetrics::new(k, &run, &report);
        let history = cfg.keep_histories.then(|| History {
            records: std::mem::take(&mut run.records),
            names: cfg.scenario.names.clone(),
        });
        out.push(TrialResult {
            metrics,
            history,
            recorded: run.recorded,
            choice_points: Some(run.counters.choice_points),
        });
    }
    Ok(out)
}

/// The generator a scenario asks for, with an optional `on_missing` override.
pub fn generator(sc: &Scenario, on_missing: Option<OnMissing>) -> Box<dyn Generator + '_> {
    match &sc.generator {
        GeneratorSpec::Stub => Box::new(Stub),
        GeneratorSpec::Recorded {
            recording,
            on_missing: m,
        } => Box::new(Recorded {
            recording,
            fallback_to_stub: on_missing.unwrap_or(*m) == OnMissing::Stub,
        }),
    }
}

/// One trial replayed under a fixed schedule, traced: its run, history and report.
pub struct OneTrial {
    pub run: TrialRun,
    pub history: History,
    pub report: Report,
    pub metrics: TrialMetrics,
}

/// Replays trial `trial` of (`seed`, `runtime`) under `schedule`, with a trace.
pub fn run_one(
    sc: &Scenario,
    runtime: Stack,
    seed: u64,
    trial: u64,
    schedule: &Schedule,
    on_missing: Option<OnMissing>,
) -> Result<OneTrial, SimError> {
    let generator = generator(sc, on_missing);
    let mut sched = SchedulerSpec::Replay(schedule.clone()).build();
    let setup = TrialSetup {
        scenario: sc,
        trial_seed: trial_seed(seed, trial),
        generator: generator.as_ref(),
        scheduler: sched.as_mut(),
        stop: schedule.stop,
        trace: true,
        record: false,
    };
    let run = run_trial(runtime.build(sc.registry(), sc.provenance), setup)?;
    let history = History {
        records: run.records.clone(),
        names: sc.names.clone(),
    };
    let report = detect(&history);
    let metrics = TrialMetrics::new(trial, &run, &report);
    Ok(OneTrial {
        run,
        history,
        report,
        metrics,
    })
}
