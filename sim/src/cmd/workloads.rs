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

use crate::cmd::run_args::RunArgs;
use crate::cmd::sharding::Seeded;
use crate::cmd::stacked;
use crate::experiments::workloads;
use agentsim_sim::digest::Fnv1a;
use agentsim_sim::shard::TrialSource;
use clap::Args as ClapArgs;
use serde::{Deserialize, Serialize};
use std::process::ExitCode;

/// Run the three workloads under vanilla, pessimistic, si and ssi (Table 4).
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Seeded sessions per workload and runtime (1..=1000000).
    #[arg(long, default_value_t = workloads::TRIALS_DEFAULT, value_parser = crate::limits::trials)]
    pub trials: u64,
    #[command(flatten)]
    pub common: crate::cmd::stacked::Args,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    stacked::run(args.trials, &args.common, Job)
}

/// The workloads' work: what a partial of `workloads` carries as its arguments (`runtime`
/// only when `--runtime` was given, so a plain run's arguments read as before).
#[derive(Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Job(pub stacked::Job);

/// What a workloads run yields: Table 4 and the L2 runs, or the given runtimes' columns.
pub enum Output {
    Table4(Vec<workloads::WorkloadResult>, Vec<workloads::L2Result>),
    Stacks(Vec<workloads::WorkloadResult>),
}

impl Seeded for Job {
    const COMMAND: &'static str = "workloads";
    type Output = Output;

    fn seed(&self) -> u64 {
        self.0.seed
    }

    fn trials_total(&self) -> Option<u64> {
        if !self.0.runtime.is_empty() {
            // `vanilla` runs once as the token baseline, given or not.
            let stacks = (self.0.runtime)
                .iter()
                .filter(|&&r| r != agentsim_models::runtime::Stack::VANILLA)
                .count() as u64;
            return (workloads::WORKLOADS.len() as u64 * (stacks + 1)).checked_mul(self.0.trials);
        }
        let runs = workloads::WORKLOADS.len() * workloads::RUNTIMES.len()
            + workloads::RETRACTION_RATES.len() * workloads::L2_RUNTIMES.len();
        (runs as u64).checked_mul(self.0.trials)
    }

    fn scenario_digest(&self) -> anyhow::Result<u64> {
        let mut h = Fnv1a::new();
        for w in &workloads::WORKLOADS {
            h.field(w.file).field(w.text);
        }
        Ok(h.finish())
    }

    fn compute(&self, src: &mut dyn TrialSource, threads: usize) -> anyhow::Result<Self::Output> {
        let (trials, seed) = (self.0.trials, self.0.seed);
        if !self.0.runtime.is_empty() {
            let rows = workloads::run_with(src, &self.0.runtime, trials, seed, threads)?;
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
    let (table, l2_table) = (workloads::table(rows), workloads::l2_table(l2));
    let text = format!("{}\n{}", table.to_markdown(), l2_table.to_markdown());
    let tables = [("workloads", &table), ("workloads_l2", &l2_table)];
    stacked::emit("workloads", rows, &text, &tables, run)
}

/// `--runtime`: Table 4's columns for the given runtimes (or `--json`), and
/// `tables/workloads_runtimes.*` under `--out`.
fn print_stacks(rows: &[workloads::WorkloadResult], run: &RunArgs) -> anyhow::Result<ExitCode> {
    let table = workloads::table(rows);
    let text = table.to_markdown();
    stacked::emit(
        "workloads",
        rows,
        &text,
        &[("workloads_runtimes", &table)],
        run,
    )
}
