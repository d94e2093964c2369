//! What the simulated experiments share: compiled-in scenarios, one run under a runtime, and the
//! default thread count.
//!
//! The twins and workloads are compiled in from `scenarios/` (`include_str!`), so the binary
//! needs no working directory; [`builtin`] names the file in errors and replay lines. A run
//! that hits a scenario's `events_max` is an error here: a truncated trial would count as
//! anomaly-free.

use crate::artifacts::tables::Cell;
use agentsim_models::runtime::Stack;
use agentsim_sim::scenario::Scenario;
use agentsim_sim::shard::{Local, TrialSource};
use agentsim_sim::stats::Proportion;
use agentsim_sim::{RunConfig, RunResult};
use std::path::Path;

/// The run seed of every simulated `reproduce` step.
pub const SEED: u64 = 1;

/// Parses a compiled-in scenario; `file` names it in errors and replay lines.
pub fn builtin(file: &str, text: &str) -> anyhow::Result<Scenario> {
    Scenario::parse(Path::new(file), text).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Runs `sc` under `runtime` for `trials` trials from `seed` on `threads` threads.
pub fn run_under(
    sc: &Scenario,
    runtime: Stack,
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<RunResult> {
    run_from(&mut Local, sc, runtime, trials, seed, threads)
}

/// [`run_under`] with the trials taken from `src` (all of them, a shard's, or merged ones).
pub fn run_from(
    src: &mut dyn TrialSource,
    sc: &Scenario,
    runtime: Stack,
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<RunResult> {
    let cfg = RunConfig {
        runtime,
        seed,
        trials,
        threads,
        ..RunConfig::new(sc)
    };
    let r = src
        .run(&cfg)
        .map_err(|e| anyhow::anyhow!("{}: {e}", sc.file.display()))?;
    anyhow::ensure!(
        r.aggregate.truncated == 0,
        "{} under {}: {} trials hit events_max; raise [schedule] events_max",
        sc.file.display(),
        runtime.name(),
        r.aggregate.truncated
    );
    Ok(r)
}

pub use crate::limits::{default_threads, THREADS_MAX};

/// The k, N, rate and interval cells of a proportion.
pub fn proportion_cells(p: &Proportion) -> [Cell; 5] {
    [
        Cell::Int(p.k as i64),
        Cell::Int(p.n as i64),
        Cell::float(p.rate, 4),
        Cell::float(p.lo, 4),
        Cell::float(p.hi, 4),
    ]
}
