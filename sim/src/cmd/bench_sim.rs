//! `agentsim bench sim [SCENARIO]`: simulated operations per second on one core.
//!
//! Two figures on one thread: the engine alone (scripts, runtime, generator, scheduler:
//! `run_trial_in` in a loop over one buffer pool, as the runner does) and the full pipeline
//! (`sim::run`: engine, then the fast detectors and the metrics of every trial). An operation
//! is a record appended (committed or aborted) or an operation dropped before generation.
//! Wall-clock time is measured here, in the benchmark only; simulated time never reads a
//! clock. Besides wall time it reads the thread's CPU time (`/proc/thread-self/schedstat`,
//! Linux), which is the honest per-core figure on a shared machine. Figures depend on the
//! machine; record them in results/BENCH.md with the command.

use crate::sim::engine::{run_trial_in, Pool, TrialSetup};
use crate::sim::runner::{self, generator, trial_seed, RunConfig};
use crate::sim::runtime_choice::RuntimeChoice;
use crate::sim::scenario::Scenario;
use crate::sim::scheduler::SchedulerSpec;
use anyhow::{anyhow, Result};
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Benchmark the simulator: simulated operations per second on one core.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The scenario (default: the edit-review workload with stub generation).
    #[arg(default_value = "scenarios/edit-review.toml")]
    pub scenario: PathBuf,
    /// Trials per measurement.
    #[arg(long, default_value_t = 20_000)]
    pub trials: u64,
    /// Runtime, overriding the scenario's.
    #[arg(long)]
    pub runtime: Option<String>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Measure the engine alone and skip the full pipeline (for profiling the engine).
    #[arg(long)]
    pub engine_only: bool,
    /// Measure the engine this many times (each `--trials` trials) and report the median and
    /// the best run as well as each; on a shared machine one run says little.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
}

/// One measurement of the engine alone.
struct EngineRun {
    ops: u64,
    events: u64,
    seconds: f64,
    cpu_seconds: Option<f64>,
}

impl EngineRun {
    fn rate(&self) -> f64 {
        self.ops as f64 / self.seconds.max(1e-9)
    }
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    let sc = Scenario::load(&args.scenario)?;
    let rt = match &args.runtime {
        Some(r) => RuntimeChoice::parse(r).map_err(|e| anyhow!("--runtime: {e}"))?,
        None => sc.runtime,
    };
    let mut runs = Vec::new();
    for _ in 0..args.repeat {
        let cpu0 = thread_cpu_s();
        let (ops, events, seconds) = engine_only(&sc, rt, args.trials)?;
        let cpu1 = thread_cpu_s();
        runs.push(EngineRun {
            ops,
            events,
            seconds,
            cpu_seconds: cpu0.zip(cpu1).map(|(a, b)| b - a),
        });
    }
    let mut rates: Vec<f64> = runs.iter().map(EngineRun::rate).collect();
    rates.sort_by(f64::total_cmp);
    // The median run (the upper one of an even count), and the best: on a shared machine
    // interference only ever slows a run down, so the best is the code's speed and the
    // median what a user sees.
    let median = rates[rates.len() / 2];
    let best = rates[rates.len() - 1];
    let first = &runs[0];
    let full = if args.engine_only {
        None
    } else {
        let mut cfg = RunConfig::new(&sc);
        cfg.runtime = rt;
        cfg.trials = args.trials;
        let cpu0 = thread_cpu_s();
        let t0 = Instant::now();
        let res = runner::run(&cfg).map_err(|e| anyhow!("{e}"))?;
        let seconds = t0.elapsed().as_secs_f64();
        let cpu = thread_cpu_s().zip(cpu0).map(|(b, a)| b - a);
        Some((res.aggregate.ops_total, seconds, cpu))
    };
    let rate = |ops: u64, s: f64| ops as f64 / s.max(1e-9);
    if args.json {
        let engine_runs: Vec<_> = runs
            .iter()
            .map(|r| {
                serde_json::json!({"seconds": r.seconds, "ops_per_s": r.rate(),
                    "cpu_seconds": r.cpu_seconds,
                    "ops_per_cpu_s": r.cpu_seconds.map(|c| rate(r.ops, c))})
            })
            .collect();
        let mut v = serde_json::json!({
            "scenario": sc.name, "runtime": rt.name(), "trials": args.trials,
            "engine": {"ops": first.ops, "events": first.events, "seconds": first.seconds,
                       "ops_per_s": first.rate(), "cpu_seconds": first.cpu_seconds,
                       "ops_per_cpu_s": first.cpu_seconds.map(|c| rate(first.ops, c)),
                       "runs": engine_runs, "median_ops_per_s": median,
                       "best_ops_per_s": best},
        });
        if let Some((ops, seconds, cpu)) = full {
            v["engine_and_detect"] = serde_json::json!({"ops": ops, "seconds": seconds,
                "ops_per_s": rate(ops, seconds), "cpu_seconds": cpu,
                "ops_per_cpu_s": cpu.map(|c| rate(ops, c))});
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "scenario {} runtime {} trials {} (1 thread)",
        sc.name,
        rt.name(),
        args.trials
    );
    let per_cpu = |ops: u64, c: Option<f64>| match c {
        Some(c) => format!(", {:.0} ops per CPU-second ({c:.3} s CPU)", rate(ops, c)),
        None => String::new(),
    };
    if runs.len() == 1 {
        println!(
            "engine only        {} ops, {} events in {:.3} s: {:.0} ops/s{}",
            first.ops,
            first.events,
            first.seconds,
            first.rate(),
            per_cpu(first.ops, first.cpu_seconds)
        );
    } else {
        let all: Vec<String> = runs.iter().map(|r| format!("{:.0}", r.rate())).collect();
        println!(
            "engine only        {} ops, {} events per run, {} runs: median {median:.0} ops/s, \
             best {best:.0}, worst {:.0} (in run order: {})",
            first.ops,
            first.events,
            runs.len(),
            rates[0],
            all.join(", ")
        );
    }
    if let Some((ops, seconds, cpu)) = full {
        println!(
            "engine + detectors {ops} ops in {seconds:.3} s: {:.0} ops/s{}",
            rate(ops, seconds),
            per_cpu(ops, cpu)
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn engine_only(sc: &Scenario, rt: RuntimeChoice, trials: u64) -> Result<(u64, u64, f64)> {
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
