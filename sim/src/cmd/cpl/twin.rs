//! `agentsim cpl twin SCENARIO [--trials N] [--seed S] [--threads T] [--json]`: the guard twin
//! of a scenario with `[cpl]` (issue 9 item 5): every `act` step guarded by the section's
//! `unguarded` guard, then by the guard as written, on the same trial seeds; per arm, k/N
//! trials with a stale action (Wilson 95 %), actions done and refused, waits, blocked trials.
//!
//! Exit 0 when the run completed, whatever the counts (the counts are the result; the
//! integration tests pin them); 2 on a bad scenario. A run shows the outcome on these seeds.

use crate::sim::cpl_twin;
use crate::sim::scenario::Scenario;
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::process::ExitCode;

/// `agentsim cpl twin`.
#[derive(Debug, ClapArgs)]
pub struct TwinArgs {
    /// A scenario file with a `[cpl]` section naming `unguarded` and `stale`.
    pub scenario: PathBuf,
    /// Trials per arm (default: the scenario's `trials`).
    #[arg(long)]
    pub trials: Option<u64>,
    /// The run seed (default: the scenario's `seed`); both arms use the same trial seeds.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads (results do not depend on it); default: all cores.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: TwinArgs) -> anyhow::Result<ExitCode> {
    let sc = Scenario::load(&args.scenario)?;
    let trials = args.trials.unwrap_or(sc.trials);
    anyhow::ensure!(trials >= 1, "--trials must be at least 1");
    let threads = args
        .threads
        .unwrap_or_else(crate::experiments::default_threads)
        .max(1);
    let twin = cpl_twin::run(&sc, trials, args.seed.unwrap_or(sc.seed), threads)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&twin)?);
    } else {
        print!("{}", twin.display());
    }
    Ok(ExitCode::SUCCESS)
}
