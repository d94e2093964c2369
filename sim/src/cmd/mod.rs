//! One file per subcommand. Each exposes `Args` (clap) and `run(args) -> Result<ExitCode>`.
//!
//! Exit codes (house style): 0 the run completed / every property holds; 1 a property was
//! violated or an anomaly named by `--fail-on` is present; 2 a usage or input error.

pub mod bench;
pub mod detect;
pub mod lattice;

use clap::Subcommand;
use std::process::ExitCode;

/// The subcommands of `agentsim`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the lattice of consistency models, its cover edges and chains.
    Lattice(lattice::Args),
    /// Detect anomalies (A1, A2, A3, A6) in a JSON Lines history.
    Detect(detect::Args),
    /// Run a benchmark (`agentsim bench detect`).
    Bench(bench::Args),
}

impl Command {
    /// Runs the subcommand.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            Command::Lattice(args) => lattice::run(args),
            Command::Detect(args) => detect::run(args),
            Command::Bench(args) => bench::run(args),
        }
    }
}
