//! `agentsim workloads [--trials N] [--seed S] [--json]`: the paper's Table 4 in simulation
//! (edit-review, plan-execute, triage × vanilla, pessimistic, si, ssi) and the L2 retraction
//! runs; tables under `--out` as `tables/workloads.*` and `tables/workloads_l2.*`.
//!
//! Exit 0 when the run completed. The rates are estimates under the scenario files' modelled
//! timings (their comments say how each parameter was chosen), not measurements of models.

use crate::artifacts::write_tables;
use crate::experiments::workloads;
use clap::Args as ClapArgs;
use std::process::ExitCode;

/// Run the three workloads under vanilla, pessimistic, si and ssi (Table 4).
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Seeded sessions per workload and runtime.
    #[arg(long, default_value_t = workloads::TRIALS_DEFAULT)]
    pub trials: u64,
    /// The run seed (every runtime uses the same trial seeds: pairing).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub run: crate::cmd::run_args::RunArgs,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.trials >= 1, "--trials must be at least 1");
    let threads = args.run.threads();
    let rows = workloads::run(args.trials, args.seed, threads)?;
    let l2 = workloads::run_l2(args.trials, args.seed, threads)?;
    if args.run.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", workloads::table(&rows).to_markdown());
        println!();
        print!("{}", workloads::l2_table(&l2).to_markdown());
    }
    if !args.run.no_write {
        let mut written = write_tables(&args.run.out, "workloads", &workloads::table(&rows))?;
        written.extend(write_tables(
            &args.run.out,
            "workloads_l2",
            &workloads::l2_table(&l2),
        )?);
        for p in written {
            eprintln!("workloads: wrote {}", p.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
