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
    quiet_on_closed_stdout();
    let cli = Cli::parse();
    match cli.command.run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// A reader of stdout that goes away (`agentsim … | head`) ends the run quietly with exit 0,
/// for every command: `print!` panics on a closed pipe (Rust ignores SIGPIPE), and this hook
/// turns exactly that panic into a quiet exit. Every other panic keeps the default report.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// mimalloc instead of the system allocator: the simulator allocates per operation (each
/// record's maps), and under glibc malloc/free took ~19 % of `bench sim`'s profile. Measured
/// A/B in `docs/benchmarks.md` ("Simulator"). Output bytes do not depend on the allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
