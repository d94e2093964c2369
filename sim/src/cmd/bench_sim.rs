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
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    let sc = Scenario::load(&args.scenario)?;
    let rt = match &args.runtime {
        Some(r) => RuntimeChoice::parse(r).map_err(|e| anyhow!("--runtime: {e}"))?,
        None => sc.runtime,
    };
    let cpu0 = thread_cpu_s();
    let (engine_ops, engine_events, engine_s) = engine_only(&sc, rt, args.trials)?;
    let cpu1 = thread_cpu_s();
    if args.engine_only {
        let cpu = cpu0.zip(cpu1).map(|(a, b)| b - a);
        let rate = |s: f64| engine_ops as f64 / s.max(1e-9);
        if args.json {
            let v = serde_json::json!({
                "scenario": sc.name, "runtime": rt.name(), "trials": args.trials,
                "engine": {"ops": engine_ops, "events": engine_events, "seconds": engine_s,
                           "ops_per_s": rate(engine_s), "cpu_seconds": cpu,
                           "ops_per_cpu_s": cpu.map(rate)},
            });
            println!("{}", serde_json::to_string_pretty(&v)?);
        } else {
            println!(
                "engine only        {engine_ops} ops, {engine_events} events in {engine_s:.3} s: \
                 {:.0} ops/s",
                rate(engine_s)
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut cfg = RunConfig::new(&sc);
    cfg.runtime = rt;
    cfg.trials = args.trials;
    let t0 = Instant::now();
    let res = runner::run(&cfg).map_err(|e| anyhow!("{e}"))?;
    let full_s = t0.elapsed().as_secs_f64();
    let cpu2 = thread_cpu_s();
    let cpu = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| b - a);
    let (engine_cpu, full_cpu) = (cpu(cpu0, cpu1), cpu(cpu1, cpu2));
    let full_ops = res.aggregate.ops_total;
    let rate = |ops: u64, s: f64| ops as f64 / s.max(1e-9);
    if args.json {
        let v = serde_json::json!({
            "scenario": sc.name, "runtime": rt.name(), "trials": args.trials,
            "engine": {"ops": engine_ops, "events": engine_events, "seconds": engine_s,
                       "ops_per_s": rate(engine_ops, engine_s), "cpu_seconds": engine_cpu,
                       "ops_per_cpu_s": engine_cpu.map(|c| rate(engine_ops, c))},
            "engine_and_detect": {"ops": full_ops, "seconds": full_s,
                                  "ops_per_s": rate(full_ops, full_s), "cpu_seconds": full_cpu,
                                  "ops_per_cpu_s": full_cpu.map(|c| rate(full_ops, c))},
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
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
        println!(
            "engine only        {engine_ops} ops, {engine_events} events in {engine_s:.3} s: \
             {:.0} ops/s{}",
            rate(engine_ops, engine_s),
            per_cpu(engine_ops, engine_cpu)
        );
        println!(
            "engine + detectors {full_ops} ops in {full_s:.3} s: {:.0} ops/s{}",
            rate(full_ops, full_s),
            per_cpu(full_ops, full_cpu)
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
