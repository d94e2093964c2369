//! `agentsim sweep SWEEP.toml [--trials N] [--json]`: a contention grid (agents, hot cells,
//! overlap, generation latency) × runtimes → anomaly rate, abort/drop rate, token overhead
//! and makespan, each with a 95 % interval; the table goes under `--out` as
//! `tables/sweep_<name>.*`.
//!
//! Exit 0 when the run completed; 2 on a bad sweep file (the message names file and field).
//! A sweep shows trends of the synthetic model, not a deployment's rates.
//!
//! `--runtime S1,S2,…` replaces the file's `runtimes` (named runtimes or `+`-joined stacks;
//! every output names each by its canonical name; `vanilla` stays the token baseline).

use crate::artifacts::write_tables;
use crate::experiments::sweep;
use agentsim_sim::runtime_choice::RuntimeChoice;
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run a contention sweep file.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The sweep file (see scenarios/sweeps/).
    pub sweep: PathBuf,
    /// Trials per grid point and runtime (default: the file's `trials`).
    #[arg(long)]
    pub trials: Option<u64>,
    /// Runtimes instead of the file's: comma-separated named runtimes or `+`-joined stacks.
    #[arg(long, value_delimiter = ',', value_name = "STACK,...")]
    pub runtime: Vec<RuntimeChoice>,
    #[command(flatten)]
    pub run: crate::cmd::run_args::RunArgs,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut f = sweep::load(&args.sweep)?;
    if !args.runtime.is_empty() {
        f.runtimes = sweep::canonical_runtimes(&args.runtime)
            .map_err(|e| anyhow::anyhow!("--runtime: {e}"))?;
    }
    let trials = args.trials.unwrap_or(f.trials);
    anyhow::ensure!(trials >= 1, "--trials must be at least 1");
    let threads = args.run.threads();
    let out = args.run.tables_dir()?;
    let results = sweep::run(&f, &args.sweep, trials, threads)?;
    let table = sweep::table(&f, &results);
    if args.run.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        print!("{}", table.to_markdown());
    }
    if let Some(out) = out {
        for p in write_tables(out, &format!("sweep_{}", f.name), &table)? {
            eprintln!("sweep: wrote {}", p.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
