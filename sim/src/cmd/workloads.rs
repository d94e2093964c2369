//! `agentsim workloads [--trials N] [--seed S] [--json]`: the paper's Table 4 in simulation
//! (edit-review, plan-execute, triage × vanilla, pessimistic, si, ssi) and the L2 retraction
//! runs; tables under `--out` as `tables/workloads.*` and `tables/workloads_l2.*`.
//!
//! `--runtime S1,S2,…` runs the three workloads under those runtimes instead (named runtimes
//! or `+`-joined stacks, printed by canonical name; `vanilla` is always run first as the
//! token baseline), without the L2 runs, and with `--out DIR` writes
//! `DIR/tables/workloads_runtimes.*`. Both forms shard (`--shard I/N --partial-out FILE`,
//! then `agentsim merge`); the runtimes ride in the partial's arguments.
//!
//! Exit 0 when the run completed. The rates are estimates under the scenario files' modelled
//! timings (their comments say how each parameter was chosen), not measurements of models.

use crate::artifacts::write_tables;
use crate::cmd::run_args::RunArgs;
use crate::cmd::sharding::{self, Seeded};
use crate::experiments::workloads;
use agentsim_models::runtime::Stack;
use agentsim_sim::digest::Fnv1a;
use agentsim_sim::shard::TrialSource;
use clap::Args as ClapArgs;
use serde::{Deserialize, Serialize};
use std::process::ExitCode;

/// Run the three workloads under vanilla, pessimistic, si and ssi (Table 4).
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Seeded sessions per workload and runtime (1..=1000000).
    #[arg(long, default_value_t = workloads::TRIALS_DEFAULT, value_parser = crate::cmd::limits::trials)]
    pub trials: u64,
    /// The run seed (every runtime uses the same trial seeds: pairing).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runtimes instead of pessimistic/si/ssi: comma-separated named runtimes or `+`-joined
    /// stacks of mechanisms.
    #[arg(long, value_delimiter = ',', value_name = "STACK,...")]
    pub runtime: Vec<Stack>,
    #[command(flatten)]
    pub run: crate::cmd::run_args::RunArgs,
    #[command(flatten)]
    pub shard: sharding::ShardArgs,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let job = Job {
        trials: args.trials,
        seed: args.seed,
        runtime: args.runtime,
    };
    sharding::run(&job, &args.shard, &args.run)
}

/// The workloads' work: what a partial of `workloads` carries as its arguments (`runtime`
/// only when `--runtime` was given, so a plain run's arguments read as before).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub trials: u64,
    pub seed: u64,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "agentsim_models::runtime::stack::by_names"
    )]
    pub runtime: Vec<Stack>,
}

/// What a workloads run yields: Table 4 and the L2 runs, or the given runtimes' columns.
pub enum Output {
    Table4(Vec<workloads::WorkloadResult>, Vec<workloads::L2Result>),
    Stacks(Vec<workloads::WorkloadResult>),
}

impl Seeded for Job {
    const COMMAND: &'static str = "workloads";
    type Output = Output;

    fn seed(&self) -> u64 {
        self.seed
    }

    fn trials_total(&self) -> Option<u64> {
        if !self.runtime.is_empty() {
            // `vanilla` runs once as the token baseline, given or not.
            let stacks = self
                .runtime
                .iter()
                .filter(|&&r| r != agentsim_models::runtime::Stack::VANILLA)
                .count() as u64;
            return (workloads::WORKLOADS.len() as u64 * (stacks + 1)).checked_mul(self.trials);
        }
        let runs = workloads::WORKLOADS.len() * workloads::RUNTIMES.len()
            + workloads::RETRACTION_RATES.len() * workloads::L2_RUNTIMES.len();
        (runs as u64).checked_mul(self.trials)
    }

    fn scenario_digest(&self) -> anyhow::Result<u64> {
        let mut h = Fnv1a::new();
        for w in &workloads::WORKLOADS {
            h.field(w.file).field(w.text);
        }
        Ok(h.finish())
    }

    fn compute(&self, src: &mut dyn TrialSource, threads: usize) -> anyhow::Result<Self::Output> {
        let (trials, seed) = (self.trials, self.seed);
        if !self.runtime.is_empty() {
            let rows = workloads::run_with(src, &self.runtime, trials, seed, threads)?;
            return Ok(Output::Stacks(rows));
        }
        let rows = workloads::run_from_source(src, trials, seed, threads)?;
        let l2 = workloads::run_l2_from_source(src, trials, seed, threads)?;
        Ok(Output::Table4(rows, l2))
    }

    fn print(&self, out: &Self::Output, run: &RunArgs) -> anyhow::Result<ExitCode> {
        match out {
            Output::Table4(rows, l2) => print_table4(rows, l2, run),
            Output::Stacks(rows) => print_stacks(rows, run),
        }
    }
}

/// Table 4 and the L2 table (or `--json`), and their table files under `--out`.
fn print_table4(
    rows: &[workloads::WorkloadResult],
    l2: &[workloads::L2Result],
    run: &RunArgs,
) -> anyhow::Result<ExitCode> {
    if run.json {
        println!("{}", serde_json::to_string_pretty(rows)?);
    } else {
        print!("{}", workloads::table(rows).to_markdown());
        println!();
        print!("{}", workloads::l2_table(l2).to_markdown());
    }
    if let Some(out) = run.tables_dir()? {
        let mut written = write_tables(out, "workloads", &workloads::table(rows))?;
        written.extend(write_tables(out, "workloads_l2", &workloads::l2_table(l2))?);
        for p in written {
            eprintln!("workloads: wrote {}", p.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--runtime`: Table 4's columns for the given runtimes (or `--json`), and
/// `tables/workloads_runtimes.*` under `--out`.
fn print_stacks(rows: &[workloads::WorkloadResult], run: &RunArgs) -> anyhow::Result<ExitCode> {
    let table = workloads::table(rows);
    if run.json {
        println!("{}", serde_json::to_string_pretty(rows)?);
    } else {
        print!("{}", table.to_markdown());
    }
    if let Some(out) = run.tables_dir()? {
        for p in write_tables(out, "workloads_runtimes", &table)? {
            eprintln!("workloads: wrote {}", p.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
