//! One file per subcommand. Each exposes `Args` (clap) and `run(args) -> Result<ExitCode>`.
//!
//! Exit codes (house style): 0 the run completed / every property holds; 1 a property was
//! violated or an anomaly named by `--fail-on` is present; 2 a usage or input error.

pub mod lattice;
pub mod reproduce;

use clap::Subcommand;
use std::process::ExitCode;

/// The subcommands of `agentsim`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the lattice of consistency models, its cover edges and chains.
    Lattice(lattice::Args),
    /// Regenerate every table and figure into results/, or check it is up to date.
    Reproduce(reproduce::Args),
}

impl Command {
    /// Runs the subcommand.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            Command::Lattice(args) => lattice::run(args),
            Command::Reproduce(args) => reproduce::run(args),
        }
    }
}
