//! One file per subcommand. Each exposes `Args` (clap) and `run(args) -> Result<ExitCode>`.
//!
//! Exit codes (house style): 0 the run completed / every property holds; 1 a property was
//! violated or an anomaly named by `--fail-on` is present; 2 a usage or input error.

pub mod check;
pub mod lattice;
pub mod matrix;

use clap::Subcommand;
use std::process::ExitCode;

/// The subcommands of `agentsim`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the lattice of consistency models, its cover edges and chains.
    Lattice(lattice::Args),
    /// Exhaustively check the model at small bounds, like TLC (SPEC §1, §3, §5).
    Check(check::Args),
    /// Runtime × anomaly matrix: admitted with a shortest witness, or prevented (SPEC §5).
    Matrix(matrix::Args),
}

impl Command {
    /// Runs the subcommand.
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            Command::Lattice(args) => lattice::run(args),
            Command::Check(args) => check::run(args),
            Command::Matrix(args) => matrix::run(args),
        }
    }
}
