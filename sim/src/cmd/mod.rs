//! One file per subcommand. Each exposes `Args` (clap) and `run(args) -> Result<ExitCode>`.
//!
//! Exit codes (house style): 0 the run completed / every property holds; 1 a property was
//! violated or an anomaly named by `--fail-on` is present; 2 a usage or input error.

pub mod cpl;
pub mod lattice;

use clap::Subcommand;
use std::process::ExitCode;

/// The subcommands of `agentsim`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the lattice of consistency models, its cover edges and chains.
    Lattice(lattice::Args),
    /// Causal Past Logic guards: evaluate on an MSC, or benchmark the monitor.
    Cpl(cpl::Args),
}

impl Command {
    /// Runs the subcommand.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            Command::Lattice(args) => lattice::run(args),
            Command::Cpl(args) => cpl::run(args),
        }
    }
}
