//! The `agentsim` binary: parse the command line, run one subcommand, map errors to exit 2.

use clap::Parser;
use std::process::ExitCode;

/// Finds, explains and prevents concurrency anomalies in multi-agent LLM systems.
#[derive(Debug, Parser)]
#[command(name = "agentsim", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: agentsim::cmd::Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command.run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// mimalloc instead of the system allocator: the simulator allocates per operation (each
/// record's maps), and under glibc malloc/free took ~19 % of `bench sim`'s profile. Measured
/// A/B in `results/BENCH.md` ("Simulator"). Output bytes do not depend on the allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
