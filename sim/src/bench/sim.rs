//! The simulator benchmark (`agentsim bench sim [SCENARIO]`): simulated operations per second
//! on one core.
//!
//! Two figures on one thread: the engine alone (scripts, runtime, generator, scheduler:
//! `run_trial_in` in a loop over one buffer pool, as the runner does) and the full pipeline
//! (`sim::run`: engine, then the fast detectors and the metrics of every trial). An operation
//! is a record appended (committed or aborted) or an operation dropped before generation.
//! Wall-clock time is measured here, in the benchmark only; simulated time never reads a
//! clock. Besides wall time it reads the thread's CPU time (`/proc/thread-self/schedstat`,
//! Linux), which is the honest per-core figure on a shared machine. Figures depend on the
//! machine; record them in docs/benchmarks.md with the command.

use agentsim_models::runtime::Stack;
use agentsim_sim::engine::{run_trial_in, Pool, TrialSetup};
use agentsim_sim::runner::{self, generator, trial_seed, RunConfig};
use agentsim_sim::scenario::Scenario;
use agentsim_sim::scheduler::SchedulerSpec;
use anyhow::{anyhow, Result};
use std::fmt::Write as _;
use std::time::Instant;

/// What to measure.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Trials per measurement.
    pub trials: u64,
    /// The runtime (a scenario's own, or an override).
    pub runtime: Stack,
    /// Measure the engine alone and skip the full pipeline.
    pub engine_only: bool,
    /// Measure the engine this many times (each `trials` trials).
    pub repeat: u32,
}

/// One measurement of the engine alone.
#[derive(Clone, Copy, Debug)]
pub struct EngineRun {
    pub ops: u64,
    pub events: u64,
    pub seconds: f64,
    pub cpu_seconds: Option<f64>,
}

impl EngineRun {
    /// Operations per wall-clock second.
    pub fn rate(&self) -> f64 {
        self.ops as f64 / self.seconds.max(1e-9)
    }
}

/// The figures of one benchmark run.
#[derive(Clone, Debug)]
pub struct Figures {
    pub scenario: String,
    pub runtime: Stack,
    pub trials: u64,
    /// The engine-only runs, in run order (at least one).
    pub runs: Vec<EngineRun>,
    /// The full pipeline: ops, wall seconds, CPU seconds.
    pub full: Option<(u64, f64, Option<f64>)>,
}

/// Runs the benchmark on `sc`.
pub fn run(sc: &Scenario, cfg: &Config) -> Result<Figures> {
    let mut runs = Vec::new();
    for _ in 0..cfg.repeat.max(1) {
        let cpu0 = thread_cpu_s();
        let (ops, events, seconds) = engine_only(sc, cfg.runtime, cfg.trials)?;
        let cpu1 = thread_cpu_s();
        runs.push(EngineRun {
            ops,
            events,
            seconds,
            cpu_seconds: cpu0.zip(cpu1).map(|(a, b)| b - a),
        });
    }
    let full = if cfg.engine_only {
        None
    } else {
        let mut rc = RunConfig::new(sc);
        rc.runtime = cfg.runtime;
        rc.trials = cfg.trials;
        let cpu0 = thread_cpu_s();
        let t0 = Instant::now();
        let res = runner::run(&rc).map_err(|e| anyhow!("{e}"))?;
        let seconds = t0.elapsed().as_secs_f64();
        let cpu = thread_cpu_s().zip(cpu0).map(|(b, a)| b - a);
        Some((res.aggregate.ops_total, seconds, cpu))
    };
    Ok(Figures {
        scenario: sc.name.clone(),
        runtime: cfg.runtime,
        trials: cfg.trials,
        runs,
        full,
    })
}

fn rate(ops: u64, s: f64) -> f64 {
    ops as f64 / s.max(1e-9)
}

impl Figures {
    /// The engine runs' rates, sorted, and the median (the upper one of an even count) and the
    /// best: on a shared machine interference only ever slows a run down, so the best is the
    /// code's speed and the median what a user sees.
    fn rates(&self) -> (Vec<f64>, f64, f64) {
        let mut rates: Vec<f64> = self.runs.iter().map(EngineRun::rate).collect();
        rates.sort_by(f64::total_cmp);
        let (median, best) = (rates[rates.len() / 2], rates[rates.len() - 1]);
        (rates, median, best)
    }

    /// One JSON object.
    pub fn json(&self) -> serde_json::Value {
        let (_, median, best) = self.rates();
        let first = &self.runs[0];
        let engine_runs: Vec<_> = self
            .runs
            .iter()
            .map(|r| {
                serde_json::json!({"seconds": r.seconds, "ops_per_s": r.rate(),
                    "cpu_seconds": r.cpu_seconds,
                    "ops_per_cpu_s": r.cpu_seconds.map(|c| rate(r.ops, c))})
            })
            .collect();
        let mut v = serde_json::json!({
            "scenario": self.scenario, "runtime": self.runtime.name(), "trials": self.trials,
            "engine": {"ops": first.ops, "events": first.events, "seconds": first.seconds,
                       "ops_per_s": first.rate(), "cpu_seconds": first.cpu_seconds,
                       "ops_per_cpu_s": first.cpu_seconds.map(|c| rate(first.ops, c)),
                       "runs": engine_runs, "median_ops_per_s": median,
                       "best_ops_per_s": best},
        });
        if let Some((ops, seconds, cpu)) = self.full {
            v["engine_and_detect"] = serde_json::json!({"ops": ops, "seconds": seconds,
                "ops_per_s": rate(ops, seconds), "cpu_seconds": cpu,
                "ops_per_cpu_s": cpu.map(|c| rate(ops, c))});
        }
        v
    }

    /// The figures as text.
    pub fn text(&self) -> String {
        let (rates, median, best) = self.rates();
        let first = &self.runs[0];
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scenario {} runtime {} trials {} (1 thread)",
            self.scenario,
            self.runtime.name(),
            self.trials
        );
        let per_cpu = |ops: u64, c: Option<f64>| match c {
            Some(c) => format!(", {:.0} ops per CPU-second ({c:.3} s CPU)", rate(ops, c)),
            None => String::new(),
        };
        if self.runs.len() == 1 {
            let _ = writeln!(
                s,
                "engine only        {} ops, {} events in {:.3} s: {:.0} ops/s{}",
                first.ops,
                first.events,
                first.seconds,
                first.rate(),
                per_cpu(first.ops, first.cpu_seconds)
            );
        } else {
            let all: Vec<String> = self
                .runs
                .iter()
                .map(|r| format!("{:.0}", r.rate()))
                .collect();
            let _ = writeln!(
                s,
                "engine only        {} ops, {} events per run, {} runs: median {median:.0} \
                 ops/s, best {best:.0}, worst {:.0} (in run order: {})",
                first.ops,
                first.events,
                self.runs.len(),
                rates[0],
                all.join(", ")
            );
        }
        if let Some((ops, seconds, cpu)) = self.full {
            let _ = writeln!(
                s,
                "engine + detectors {ops} ops in {seconds:.3} s: {:.0} ops/s{}",
                rate(ops, seconds),
                per_cpu(ops, cpu)
            );
        }
        s
    }
}

fn engine_only(sc: &Scenario, rt: Stack, trials: u64) -> Result<(u64, u64, f64)> {
    let generator = generator(sc, None);
    let mut sched = SchedulerSpec::Random.build();
    let (mut ops, mut events) = (0, 0);
    let mut pool = Pool::default();
    let t0 = Instant::now();
    for k in 0..trials {
        let setup = TrialSetup {
            scenario: sc,
            trial_seed: trial_seed(sc.seed, k),
            generator: generator.as_ref(),
            scheduler: sched.as_mut(),
            stop: None,
            trace: false,
            record: false,
        };
        let rt = rt.build(sc.registry(), sc.provenance);
        let run = run_trial_in(rt, setup, &mut pool).map_err(|e| anyhow!("{e}"))?;
        ops += run.records.len() as u64 + run.counters.drops;
        events += run.counters.events;
    }
    Ok((ops, events, t0.elapsed().as_secs_f64()))
}

/// This thread's CPU time in seconds (Linux `schedstat`: nanoseconds on CPU), if readable.
fn thread_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}
