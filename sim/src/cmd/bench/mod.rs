//! `agentsim bench <what>`: benchmarks, one sub-subcommand per thing measured.
//!
//! Benchmarks time real work on generated inputs and print figures (text, or `--json` on
//! stdout); they assert nothing about speed. Figures and the command that made them go into
//! `results/BENCH.md` by hand, with the machine they ran on.

pub mod detect;
pub mod workload;

use clap::{Args as ClapArgs, Subcommand};
use std::process::ExitCode;

/// Run a benchmark.
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// What to benchmark.
#[derive(Debug, Subcommand)]
pub enum What {
    /// The fast detectors on a generated history (and the spec form at a small size).
    Detect(detect::Args),
    /// The simulator (the same benchmark as `agentsim bench-sim`).
    Sim(crate::cmd::bench_sim::Args),
}

/// Runs the benchmark.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Detect(a) => detect::run(a),
        What::Sim(a) => crate::cmd::bench_sim::run(a),
    }
}
