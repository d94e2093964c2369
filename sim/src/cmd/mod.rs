//! One file per subcommand. Each exposes `Args` (clap) and `run(args) -> Result<ExitCode>`.
//!
//! Exit codes (house style): 0 the run completed / every property holds; 1 a property was
//! violated or an anomaly named by `--fail-on` is present; 2 a usage or input error.

pub mod bench;
pub mod bench_sim;
pub mod cpl;
pub mod detect;
pub mod lattice;
pub mod replay;
pub mod reproduce;
pub mod shrink;
pub mod simulate;

use clap::Subcommand;
use std::process::ExitCode;

/// The subcommands of `agentsim`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the lattice of consistency models, its cover edges and chains.
    Lattice(lattice::Args),
    /// Regenerate every table and figure into results/, or check it is up to date.
    Reproduce(reproduce::Args),
    /// Run a scenario's seeded trials and summarise the anomalies found.
    Simulate(simulate::Args),
    /// Re-run one simulated trial from its replay line.
    Replay(replay::Args),
    /// Shrink a failing trial to a minimal schedule that keeps the anomaly.
    Shrink(shrink::Args),
    /// Benchmark the simulator (simulated operations per second on one core).
    BenchSim(bench_sim::Args),
    /// Detect anomalies (A1, A2, A3, A6) in a JSON Lines history.
    Detect(detect::Args),
    /// Run a benchmark (`agentsim bench detect`).
    Bench(bench::Args),
    /// Causal Past Logic guards: evaluate on an MSC, or benchmark the monitor.
    Cpl(cpl::Args),
}

impl Command {
    /// Runs the subcommand.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            Command::Lattice(args) => lattice::run(args),
            Command::Reproduce(args) => reproduce::run(args),
            Command::Simulate(args) => simulate::run(args),
            Command::Replay(args) => replay::run(args),
            Command::Shrink(args) => shrink::run(args),
            Command::BenchSim(args) => bench_sim::run(args),
            Command::Detect(args) => detect::run(args),
            Command::Bench(args) => bench::run(args),
            Command::Cpl(args) => cpl::run(args),
        }
    }
}
