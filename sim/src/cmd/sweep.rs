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
use crate::cmd::run_args::RunArgs;
use crate::cmd::sharding::{self, Seeded};
use crate::experiments::sweep;
use agentsim_models::runtime::Stack;
use agentsim_sim::digest::fnv1a64;
use agentsim_sim::shard::TrialSource;
use clap::Args as ClapArgs;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::ExitCode;

/// Run a contention sweep file.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The sweep file (see scenarios/sweeps/).
    pub sweep: PathBuf,
    /// Trials per grid point and runtime, 1..=1000000 (default: the file's `trials`).
    #[arg(long, value_parser = crate::limits::trials)]
    pub trials: Option<u64>,
    /// The run seed, overriding the file's `seed` (every runtime uses the same trial seeds).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Runtimes instead of the file's: comma-separated named runtimes or `+`-joined stacks.
    #[arg(long, value_delimiter = ',', value_name = "STACK,...")]
    pub runtime: Vec<Stack>,
    #[command(flatten)]
    pub run: crate::cmd::run_args::RunArgs,
    #[command(flatten)]
    pub shard: sharding::ShardArgs,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let text = agentsim_sim::source::read_source(&args.sweep)?;
    // Every limit (trials, grid size, each axis value, the profile) is checked by the parser,
    // so a merge of shards or a reproduce step reading the same file is bounded too.
    let f = sweep::parse(&args.sweep, &text)?;
    let runtimes =
        sweep::canonical_runtimes(&args.runtime).map_err(|e| anyhow::anyhow!("--runtime: {e}"))?;
    let trials = args.trials.unwrap_or(f.trials);
    let job = Job {
        sweep: args.sweep,
        text,
        trials,
        seed: args.seed,
        runtimes,
    };
    sharding::run(&job, &args.shard, &args.run)
}

/// A sweep's work: the file (its name and text, so a merge needs no copy of it), the trials
/// per point and the seed if `--seed` overrode the file's.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub sweep: PathBuf,
    pub text: String,
    pub trials: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// `--runtime`'s choices in place of the file's `runtimes` (empty: the file's).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "agentsim_models::runtime::stack::by_names"
    )]
    pub runtimes: Vec<Stack>,
}

impl Job {
    /// The sweep file as this job runs it: parsed, with `--runtime` in place of its runtimes
    /// and `--seed` in place of its seed.
    fn file(&self) -> anyhow::Result<sweep::SweepFile> {
        let mut f = sweep::parse(&self.sweep, &self.text)?;
        if !self.runtimes.is_empty() {
            f.runtimes = self.runtimes.clone();
        }
        if let Some(seed) = self.seed {
            f.seed = seed;
        }
        Ok(f)
    }
}

impl Seeded for Job {
    const COMMAND: &'static str = "sweep";
    type Output = (sweep::SweepFile, Vec<sweep::SweepResult>);

    fn inputs(&self) -> Vec<(&'static str, std::path::PathBuf)> {
        vec![("the sweep file", self.sweep.clone())]
    }

    fn seed(&self) -> u64 {
        self.file().map_or(0, |f| f.seed)
    }

    fn trials_total(&self) -> Option<u64> {
        let f = self.file().ok()?;
        // `vanilla` is the baseline of every point, listed or not.
        let listed = f.runtimes.contains(&Stack::VANILLA);
        let runs = f.runtimes.len() + usize::from(!listed);
        (sweep::points(&f).len() as u64 * runs as u64).checked_mul(self.trials)
    }

    fn scenario_digest(&self) -> anyhow::Result<u64> {
        Ok(fnv1a64(self.text.as_bytes()))
    }

    fn compute(&self, src: &mut dyn TrialSource, threads: usize) -> anyhow::Result<Self::Output> {
        let f = self.file()?;
        let results = sweep::run_from_source(src, &f, &self.sweep, self.trials, threads)?;
        Ok((f, results))
    }

    fn print(&self, (f, results): &Self::Output, run: &RunArgs) -> anyhow::Result<ExitCode> {
        let table = sweep::table(f, results);
        if run.json {
            println!("{}", serde_json::to_string_pretty(results)?);
        } else {
            print!("{}", table.to_markdown());
        }
        if let Some(out) = run.tables_dir()? {
            for p in write_tables(out, &format!("sweep_{}", f.name), &table)? {
                eprintln!("sweep: wrote {}", p.display());
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}
