//! `agentsim bench <what>`: benchmarks, one sub-subcommand per thing measured.
//!
//! Benchmarks time real work on generated inputs and print figures (text, or `--json` on
//! stdout); they assert nothing about speed. Figures and the command that made them go into
//! `results/BENCH.md` by hand, with the machine they ran on.

pub mod detect;
pub mod history;
pub mod stream;
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
    /// The simulator: simulated operations per second on one core.
    Sim(crate::cmd::bench_sim::Args),
    /// Write the detector benchmarks' history as JSON Lines (for `agentsim detect`).
    History(history::Args),
    /// The stream detector alone, on generated records, in a bounded window.
    Stream(stream::Args),
}

/// Runs the benchmark.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Detect(a) => detect::run(a),
        What::Sim(a) => crate::cmd::bench_sim::run(a),
        What::History(a) => history::run(a),
        What::Stream(a) => stream::run(a),
    }
}
