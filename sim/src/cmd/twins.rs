//! `agentsim twins [--trials 1000] [--seed S] [--json]`: the prevention twins of SPEC §7, per
//! anomaly and size k/N without the mechanism and with it, with Wilson 95 % intervals; with
//! `--out DIR` the table is also written as `DIR/tables/twins.{md,csv,json}`.
//!
//! `--runtime S1,S2,…` runs each given runtime (a named one or a `+`-joined stack) over
//! `vanilla` on the smallest twin of each lattice anomaly instead (see
//! `experiments::mechanism_twins`), with the claim of what its mechanisms compose to, and
//! with `--out DIR` writes `DIR/tables/twins_runtimes.*`. Both forms shard (`--shard I/N
//! --partial-out FILE`, then `agentsim merge`); the stacks ride in the partial's arguments.
//!
//! Exit 0 when the run completed, whatever the counts (the counts are the result; the
//! integration tests pin them). A run proves the twins' outcome on these seeds only.

use crate::cmd::run_args::RunArgs;
use crate::cmd::sharding::Seeded;
use crate::cmd::stacked;
use crate::experiments::mechanism_twins;
use crate::experiments::twin_specs;
use crate::experiments::twins;
use agentsim_sim::digest::Fnv1a;
use agentsim_sim::shard::TrialSource;
use clap::Args as ClapArgs;
use serde::{Deserialize, Serialize};
use std::process::ExitCode;

/// Run the prevention twins: k/N without and with each mechanism.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Seeded trials per twin and side (1..=1000000).
    #[arg(long, default_value_t = twin_specs::TRIALS_DEFAULT, value_parser = crate::limits::trials)]
    pub trials: u64,
    #[command(flatten)]
    pub common: crate::cmd::stacked::Args,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    stacked::run(args.trials, &args.common, Job)
}

/// The twins' work: what a partial of `twins` carries as its arguments (`runtime` only when
/// `--runtime` was given, so a plain run's arguments read as before).
#[derive(Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Job(pub stacked::Job);

/// What a twins run yields: the prevention twins, or the stacks over vanilla.
pub enum Output {
    Twins(Vec<twins::TwinResult>),
    Stacks(Vec<mechanism_twins::MechanismTwin>),
}

impl Seeded for Job {
    const COMMAND: &'static str = "twins";
    type Output = Output;

    fn seed(&self) -> u64 {
        self.0.seed
    }

    fn trials_total(&self) -> Option<u64> {
        if !self.0.runtime.is_empty() {
            return mechanism_twins::trials_total(self.0.runtime.len(), self.0.trials);
        }
        // Every twin runs both sides.
        (twin_specs::TWINS.len() as u64 * 2).checked_mul(self.0.trials)
    }

    fn scenario_digest(&self) -> anyhow::Result<u64> {
        let mut h = Fnv1a::new();
        for t in &twin_specs::TWINS {
            h.field(t.file)
                .field(t.text)
                .field(t.without.name())
                .field(t.with.name());
            if let Some(c) = t.client {
                h.field(c.file).field(c.text);
            }
        }
        Ok(h.finish())
    }

    fn compute(&self, src: &mut dyn TrialSource, threads: usize) -> anyhow::Result<Self::Output> {
        let (trials, seed) = (self.0.trials, self.0.seed);
        Ok(if self.0.runtime.is_empty() {
            Output::Twins(twins::run_from_source(src, trials, seed, threads)?)
        } else {
            let rts = &self.0.runtime;
            Output::Stacks(mechanism_twins::run_stacks_from(
                src, rts, trials, seed, threads,
            )?)
        })
    }

    fn print(&self, out: &Self::Output, run: &RunArgs) -> anyhow::Result<ExitCode> {
        match out {
            Output::Twins(results) => print_twins(results, run),
            Output::Stacks(results) => print_stacks(results, run),
        }
    }
}

/// The prevention twins: a line each (or `--json`), and `tables/twins.*` under `--out`.
fn print_twins(results: &[twins::TwinResult], run: &RunArgs) -> anyhow::Result<ExitCode> {
    let text = stacked::lines(results, twins::TwinResult::display);
    let table = twin_specs::figure_data(results).table();
    stacked::emit("twins", results, &text, &[("twins", &table)], run)
}

/// `--runtime`: a line per stack × anomaly (or `--json`), and `tables/twins_runtimes.*`.
fn print_stacks(
    results: &[mechanism_twins::MechanismTwin],
    run: &RunArgs,
) -> anyhow::Result<ExitCode> {
    let text = stacked::lines(results, mechanism_twins::MechanismTwin::display);
    let table = mechanism_twins::table(results);
    stacked::emit("twins", results, &text, &[("twins_runtimes", &table)], run)
}
