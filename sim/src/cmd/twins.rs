//! `agentsim twins [--trials 1000] [--seed S] [--json]`: the prevention twins of SPEC §7, per
//! anomaly and size k/N without the mechanism and with it, with Wilson 95 % intervals; with
//! `--out DIR` the table is also written as `DIR/tables/twins.{md,csv,json}`.
//!
//! `--runtime S1,S2,…` runs each given runtime (a named one or a `+`-joined stack) over
//! `vanilla` on the smallest twin of each lattice anomaly instead (see
//! `experiments::mechanism_twins`), with the claim of what its mechanisms compose to, and
//! with `--out DIR` writes `DIR/tables/twins_runtimes.*`.
//!
//! Exit 0 when the run completed, whatever the counts (the counts are the result; the
//! integration tests pin them). A run proves the twins' outcome on these seeds only.

use crate::artifacts::write_tables;
use crate::experiments::mechanism_twins;
use crate::experiments::twins;
use agentsim_sim::runtime_choice::RuntimeChoice;
use clap::Args as ClapArgs;
use std::process::ExitCode;

/// Run the prevention twins: k/N without and with each mechanism.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Seeded trials per twin and side.
    #[arg(long, default_value_t = twins::TRIALS_DEFAULT)]
    pub trials: u64,
    /// The run seed (trial k's seed derives from it; both sides use the same seeds).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Each of these runtimes over vanilla on every lattice anomaly's twin: comma-separated
    /// named runtimes or `+`-joined stacks of mechanisms.
    #[arg(long, value_delimiter = ',', value_name = "STACK,...")]
    pub runtime: Vec<RuntimeChoice>,
    #[command(flatten)]
    pub run: crate::cmd::run_args::RunArgs,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.trials >= 1, "--trials must be at least 1");
    let threads = args.run.threads();
    let out = args.run.tables_dir()?;
    if !args.runtime.is_empty() {
        return run_stacks(&args, threads, out);
    }
    let results = twins::run(args.trials, args.seed, threads)?;
    if args.run.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        for r in &results {
            println!("{}", r.display());
        }
    }
    if let Some(out) = out {
        let table = twins::figure_data(&results).table();
        for p in write_tables(out, "twins", &table)? {
            eprintln!("twins: wrote {}", p.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--runtime`: each runtime over vanilla on each lattice anomaly's twin.
fn run_stacks(
    args: &Args,
    threads: usize,
    out: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    let mut results = Vec::new();
    for &rt in &args.runtime {
        results.extend(mechanism_twins::run_stack(
            rt,
            args.trials,
            args.seed,
            threads,
        )?);
    }
    if args.run.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        for r in &results {
            println!("{}", r.display());
        }
    }
    if let Some(out) = out {
        let table = mechanism_twins::table(&results);
        for p in write_tables(out, "twins_runtimes", &table)? {
            eprintln!("twins: wrote {}", p.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
