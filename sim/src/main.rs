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
