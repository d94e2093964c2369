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

use crate::artifacts::write_tables;
use crate::cmd::run_args::RunArgs;
use crate::cmd::sharding::{self, Seeded};
use crate::experiments::mechanism_twins;
use crate::experiments::twins;
use agentsim_models::runtime::Stack;
use agentsim_sim::digest::Fnv1a;
use agentsim_sim::shard::TrialSource;
use clap::Args as ClapArgs;
use serde::{Deserialize, Serialize};
use std::process::ExitCode;

/// Run the prevention twins: k/N without and with each mechanism.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Seeded trials per twin and side (1..=1000000).
    #[arg(long, default_value_t = twins::TRIALS_DEFAULT, value_parser = crate::cmd::limits::trials)]
    pub trials: u64,
    /// The run seed (trial k's seed derives from it; both sides use the same seeds).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Each of these runtimes over vanilla on every lattice anomaly's twin: comma-separated
    /// named runtimes or `+`-joined stacks of mechanisms.
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

/// The twins' work: what a partial of `twins` carries as its arguments (`runtime` only when
/// `--runtime` was given, so a plain run's arguments read as before).
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

/// What a twins run yields: the prevention twins, or the stacks over vanilla.
pub enum Output {
    Twins(Vec<twins::TwinResult>),
    Stacks(Vec<mechanism_twins::MechanismTwin>),
}

impl Seeded for Job {
    const COMMAND: &'static str = "twins";
    type Output = Output;

    fn seed(&self) -> u64 {
        self.seed
    }

    fn trials_total(&self) -> Option<u64> {
        if !self.runtime.is_empty() {
            return mechanism_twins::trials_total(self.runtime.len(), self.trials);
        }
        // Every twin runs both sides.
        (twins::TWINS.len() as u64 * 2).checked_mul(self.trials)
    }

    fn scenario_digest(&self) -> anyhow::Result<u64> {
        let mut h = Fnv1a::new();
        for t in &twins::TWINS {
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
        let (trials, seed) = (self.trials, self.seed);
        Ok(if self.runtime.is_empty() {
            Output::Twins(twins::run_from_source(src, trials, seed, threads)?)
        } else {
            let rts = &self.runtime;
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
    if run.json {
        println!("{}", serde_json::to_string_pretty(results)?);
    } else {
        for r in results {
            println!("{}", r.display());
        }
    }
    if let Some(out) = run.tables_dir()? {
        let table = twins::figure_data(results).table();
        for p in write_tables(out, "twins", &table)? {
            eprintln!("twins: wrote {}", p.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--runtime`: a line per stack × anomaly (or `--json`), and `tables/twins_runtimes.*`.
fn print_stacks(
    results: &[mechanism_twins::MechanismTwin],
    run: &RunArgs,
) -> anyhow::Result<ExitCode> {
    if run.json {
        println!("{}", serde_json::to_string_pretty(results)?);
    } else {
        for r in results {
            println!("{}", r.display());
        }
    }
    if let Some(out) = run.tables_dir()? {
        let table = mechanism_twins::table(results);
        for p in write_tables(out, "twins_runtimes", &table)? {
            eprintln!("twins: wrote {}", p.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
